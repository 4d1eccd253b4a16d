"""harness.cases.clusters: the key that names each case's cluster under every --cluster-by, and the refusal of a
way to cluster that does not exist."""

from __future__ import annotations

import pytest

from harness.cases.clusters import DEFAULT_CLUSTER_BY, check_cluster_by, cluster_key
from harness.errors import UsageError
from harness.types import CaseLabels


def lab(case_id: str, dataset: str = "original", item: str = "", tags: tuple[str, ...] = ()) -> CaseLabels:
    return CaseLabels(
        line=1, case_id=case_id, content_hash="h", category="genuine_agreement_correct", expected_risk="low",
        majority_correct=True, n_answers=3, has_evidence=False, families=(), families_complete=True,
        any_saw_other_answers=False, any_shared_context=False, tags=tags, source_dataset=dataset,
        source_item=case_id if dataset == "original" else f"{dataset}:{item}",
    )  # fmt: skip


def test_each_way_to_cluster_names_its_key() -> None:
    public, original = lab("a", "gsm8k", "17", ("grp=2", "grp=9")), lab("b", tags=("x",))
    assert DEFAULT_CLUSTER_BY == "source.item"
    assert [cluster_key(public, by) for by in ("source.item", "source.dataset", "tag:grp=", "tag:x", "none")] == [
        "gsm8k:17", "dataset:gsm8k", "tag:grp=2", None, None]  # fmt: skip
    assert [cluster_key(original, by) for by in ("source.item", "source.dataset", "tag:grp=", "tag:x")] == [
        None, None, None, "tag:x"]  # fmt: skip
    # an original case whose id reads like a source item still stands alone
    assert cluster_key(lab("gsm8k:17"), "source.item") is None


@pytest.mark.parametrize("by", ["source.item", "source.dataset", "none", "tag:g", "tag::"])
def test_the_ways_to_cluster_pass(by: str) -> None:
    assert check_cluster_by(by) == by


@pytest.mark.parametrize("by", ["tag:", "question", "", "source", "Source.item"])
def test_anything_else_is_refused_with_the_choices(by: str) -> None:
    with pytest.raises(UsageError, match=r"expected one of source.item, source.dataset, none or tag:PREFIX"):
        check_cluster_by(by)
    if not by.startswith("tag:"):  # a bug past the check is loud too
        with pytest.raises(ValueError, match="unchecked"):
            cluster_key(lab("a"), by)
