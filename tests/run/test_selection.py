"""Which cases a run counts (`harness.run.selection`): the shard a case falls in, the subset a choice of categories
and tags makes, its own digest, and --limit, each held to values worked out here by hand (or by a brute-force
loop over sha256 written in the test)."""

from __future__ import annotations

import hashlib

import pytest

from harness.cases.reader import Scan
from harness.errors import RunError
from harness.run.selection import in_scope, in_shard, select, shard_filter, subset_choice, subset_digest
from harness.run.settings import EvalSettings
from harness.spec import parse_spec
from harness.types import CATEGORIES, CaseLabels


def _lab(
    case_id: str, category: str = "echo_cascade", tags: tuple[str, ...] = (), content_hash: str = ""
) -> CaseLabels:
    return CaseLabels(
        line=1,
        case_id=case_id,
        content_hash=content_hash or f"h-{case_id}",
        category=category,
        expected_risk="high",
        majority_correct=False,
        n_answers=3,
        has_evidence=False,
        families=(),
        families_complete=False,
        any_saw_other_answers=False,
        any_shared_context=False,
        tags=tags,
        source_dataset="original",
        source_item=case_id,
    )


def _settings(**kwargs: object) -> EvalSettings:
    return EvalSettings(cases="cases.jsonl", detector=parse_spec("builtin:agreement"), **kwargs)  # type: ignore[arg-type]


def _bucket(case_id: str, n: int) -> int:
    """The shard (1..n) of a case by hand: the first 12 hex digits of sha256(id) as a number, mod n, plus one."""
    return int(hashlib.sha256(case_id.encode()).hexdigest()[:12], 16) % n + 1


# --- in_shard ---------------------------------------------------------------------------------------------------


def test_no_shard_takes_every_case() -> None:
    assert in_shard("anything", None) is True


def test_each_case_is_in_exactly_the_shard_its_hash_names() -> None:
    """For N = 2, 3, 5 and 40 ids, a case is in shard K exactly when K = (hash mod N) + 1: one shard each."""
    ids = [f"FCB-{i:04d}" for i in range(40)]
    for n in (2, 3, 5):
        for case_id in ids:
            found = [k for k in range(1, n + 1) if in_shard(case_id, (k, n))]
            assert found == [_bucket(case_id, n)], (case_id, n)


def test_a_worked_shard_number() -> None:
    """sha256("a") starts ca978112ca1b; 0xca978112ca1b = 222752054364699 = 7 * 31821722052099 + 6, so "a" is
    shard 6 + 1 = 7 of 7 and no other; of 2 shards: the number is odd, remainder 1, shard 2."""
    assert hashlib.sha256(b"a").hexdigest()[:12] == "ca978112ca1b"
    assert 0xCA978112CA1B == 222752054364699 == 7 * 31821722052099 + 6
    assert [k for k in range(1, 8) if in_shard("a", (k, 7))] == [7]
    assert [k for k in range(1, 3) if in_shard("a", (k, 2))] == [2]


def test_only_the_first_twelve_hex_digits_decide() -> None:
    """With N = 2**48 + 1 > 16**12 the remainder is the 12-digit number itself: a 13-digit prefix would differ."""
    n = 2**48 + 1
    value = int(hashlib.sha256(b"a").hexdigest()[:12], 16)
    assert in_shard("a", (value + 1, n))
    assert not in_shard("a", (value, n)) and not in_shard("a", (value + 2, n))


def test_one_shard_of_one_takes_everything() -> None:
    assert all(in_shard(f"c{i}", (1, 1)) for i in range(10))


# --- select -----------------------------------------------------------------------------------------------------


def test_an_empty_choice_selects_everything_in_order() -> None:
    labs = [_lab("a"), _lab("b", "genuine_disagreement"), _lab("c", tags=("x",))]
    assert select(labs, (), ()) == labs


def test_categories_and_tags_each_any_of_and_both_together() -> None:
    """a: echo/[x]; b: genuine_disagreement/[y]; c: echo/[]; d: genuine_disagreement/[x, y].
    categories (echo) -> a, c; tags (x) -> a, d; tags (x, y) -> a, b, d; echo and x -> a;
    two categories -> all four; echo with tag z -> none."""
    a = _lab("a", "echo_cascade", ("x",))
    b = _lab("b", "genuine_disagreement", ("y",))
    c = _lab("c", "echo_cascade")
    d = _lab("d", "genuine_disagreement", ("x", "y"))
    labs = [a, b, c, d]
    assert select(labs, ("echo_cascade",), ()) == [a, c]
    assert select(labs, (), ("x",)) == [a, d]
    assert select(labs, (), ("x", "y")) == [a, b, d]
    assert select(labs, ("echo_cascade",), ("x",)) == [a]
    assert select(labs, ("echo_cascade", "genuine_disagreement"), ()) == labs
    assert select(labs, ("echo_cascade",), ("z",)) == []


def test_an_unknown_category_is_refused_naming_the_first_unknown_and_the_choices() -> None:
    with pytest.raises(RunError) as err:
        select([_lab("a")], ("zz_bad", "echo_cascade", "aa_bad"), ())
    assert str(err.value) == f"--category 'aa_bad': not a category; choose from {', '.join(CATEGORIES)}"


# --- subset_digest, subset_choice -------------------------------------------------------------------------------


def test_subset_digest_is_the_hash_of_the_sorted_content_hashes() -> None:
    """Hashes h2, h1 -> "h1\\nh2" -> sha256 of that, whatever the order the cases came in."""
    labs = [_lab("b", content_hash="h2"), _lab("a", content_hash="h1")]
    expected = hashlib.sha256(b"h1\nh2").hexdigest()
    assert subset_digest(labs) == expected == subset_digest(list(reversed(labs)))
    assert subset_digest([]) == hashlib.sha256(b"").hexdigest()


def test_subset_choice_none_without_a_filter_else_both_lists_sorted() -> None:
    assert subset_choice(_settings()) is None
    assert subset_choice(_settings(tags=("z", "a"))) == {"categories": [], "tags": ["a", "z"]}
    got = subset_choice(_settings(categories=("genuine_disagreement", "echo_cascade")))
    assert got == {"categories": ["echo_cascade", "genuine_disagreement"], "tags": []}


# --- in_scope -----------------------------------------------------------------------------------------------------


def _scan(labs: list[CaseLabels]) -> Scan:
    return Scan(path="cases.jsonl", sha256="file-digest", lines=len(labs), labels=labs)


IDS = [f"FCB-{i:04d}" for i in range(12)]


def test_in_scope_without_anything_is_every_case_and_the_file_digest() -> None:
    labs = [_lab(i) for i in IDS]
    scope, labels, digest = in_scope(_settings(), _scan(labs))
    assert scope == labs and labels == labs and digest == "file-digest"


def test_a_limit_cuts_the_cases_to_run_not_the_scope() -> None:
    """12 cases, --limit 5: the scope is all 12, the first 5 run; --limit 0 runs none; --limit 12 and 13 run all."""
    labs = [_lab(i) for i in IDS]
    for limit, n in ((5, 5), (0, 0), (11, 11), (12, 12), (13, 12)):
        scope, labels, _ = in_scope(_settings(limit=limit), _scan(labs))
        assert scope == labs and labels == labs[:n], limit


def test_a_shard_scope_is_its_own_cases_then_the_limit() -> None:
    """Shard 2 of 3 holds exactly the ids whose bucket is 2 (worked out with sha256 here); --limit 1 runs the first."""
    labs = [_lab(i) for i in IDS]
    mine = [lab for lab in labs if _bucket(lab.case_id, 3) == 2]
    assert 0 < len(mine) < len(labs)
    scope, labels, digest = in_scope(_settings(shard=(2, 3)), _scan(labs))
    assert scope == mine and labels == mine and digest == "file-digest"
    scope, labels, _ = in_scope(_settings(shard=(2, 3), limit=1), _scan(labs))
    assert scope == mine and labels == mine[:1]


def test_a_subset_has_its_own_digest_of_the_whole_subset_not_the_shard() -> None:
    """Tag x on cases 0, 3, 6, 9: the digest hashes those four cases' hashes, even in shard 1 of 2."""
    labs = [_lab(i, tags=("x",) if n % 3 == 0 else ()) for n, i in enumerate(IDS)]
    chosen = [labs[0], labs[3], labs[6], labs[9]]
    expected = hashlib.sha256("\n".join(sorted(lab.content_hash for lab in chosen)).encode()).hexdigest()
    scope, labels, digest = in_scope(_settings(tags=("x",), shard=(1, 2)), _scan(labs))
    assert digest == expected
    assert scope == [lab for lab in chosen if _bucket(lab.case_id, 2) == 1] == labels


# --- shard_filter -------------------------------------------------------------------------------------------------


def test_shard_filter_none_without_a_shard_or_with_a_subset() -> None:
    assert shard_filter(_settings()) is None
    assert shard_filter(_settings(shard=(1, 2), tags=("x",))) is None
    assert shard_filter(_settings(shard=(1, 2), categories=("echo_cascade",))) is None


def test_shard_filter_keeps_the_shards_own_ids() -> None:
    keep = shard_filter(_settings(shard=(2, 3)))
    assert keep is not None
    assert [i for i in IDS if keep(i)] == [i for i in IDS if _bucket(i, 3) == 2]
