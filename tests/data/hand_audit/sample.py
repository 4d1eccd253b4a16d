"""The seeded sample of a hand-audit round: `python tests/data/hand_audit/sample.py BUILD_DIR BATCHES OUT_DIR`, or
`... BUILD_DIR BATCHES OUT_DIR natural N` for N natural cases of any source, spread over the categories (the v4 round:
60 cases, seed "hand-audit-v4", from the build with test sha256 4d99dfac845a).

Cases of the new sources (DyLAN, MMLU-Pro, ZeroEval) from both splits of a build, none of whose source items any
earlier round read (the v3-labels*.csv files beside this one): 35 per category, 40 echo cascades, one case per item
and category (the items first in a seeded hash order), shuffled and dealt to BATCHES files for reviewers, who follow
BRIEF.md. Round 5 was drawn with
seed "hand-audit-v3-round5" from the build with test sha256 2910d58d1b98; round 6 with seed "hand-audit-v3-round6"
from the shipped build (`make dataset`).
"""

import csv
import hashlib
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).parent
NEW = {"dylan", "dylan_round1", "mmlu_pro"}
SEED = "hand-audit-v3-round6"


def main(build: Path, batches: int, out: Path, natural: int = 0) -> None:
    seen: set[str] = set()
    for path in HERE.glob("v*-labels*.csv"):
        with open(path, newline="") as f:
            seen |= {r["item"] for r in csv.DictReader(f)}
    by: dict[str, list[dict]] = defaultdict(list)
    for split in ("dev", "test"):
        for line in (build / f"{split}.jsonl").read_text().splitlines():
            case = json.loads(line)
            source = case["tags"][0]
            new = source in NEW or source.startswith("zeroeval")
            wanted = "origin_natural" in case["tags"] if natural else new
            if wanted and case["source"]["item"] not in seen:
                by[case["category"]].append({**case, "split": split})
    seed = "hand-audit-v4" if natural else SEED
    rng = random.Random(seed)
    chosen: list[dict] = []
    for category in sorted(by):
        # ranked by a seeded hash of the item: a rebuild that changes a few cases keeps the rest of the sample
        pool = sorted(by[category], key=lambda c: hashlib.sha256(f"{seed}:{c['source']['item']}".encode()).digest())
        want = -(-natural // len(by)) if natural else (40 if category == "echo_cascade" else 35)
        items: set[str] = set()
        for case in pool:
            if len(items) >= want:
                break
            if case["source"]["item"] not in items:
                items.add(case["source"]["item"])
                chosen.append(case)
    if natural:
        chosen = rng.sample(chosen, natural)
    for case in chosen:  # what the verdicts file keys a case by, beside its item
        case["answers_sha256"] = hashlib.sha256("\n".join(a["text"] for a in case["answers"]).encode()).hexdigest()[:16]
    rng.shuffle(chosen)
    out.mkdir(parents=True, exist_ok=True)
    for k in range(batches):
        with open(out / f"batch{k + 1}.jsonl", "w") as f:
            f.writelines(json.dumps(c, ensure_ascii=False) + "\n" for c in chosen[k::batches])
    print(len(chosen), Counter(c["category"] for c in chosen), Counter(c["tags"][0] for c in chosen))


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[5]) if len(sys.argv) > 5 else 0)
