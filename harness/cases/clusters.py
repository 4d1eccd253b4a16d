"""Which cases share a cluster (``fcb eval --cluster-by``); what clustering does to a run's intervals is
`harness.design_effect`'s.

Cases that come from one source question (several panels, paraphrases, or one item rewritten) are not independent:
when one is hard, so are the others. Every interval of a run therefore resamples *clusters*, a drawn cluster
bringing all its cases (`harness.metrics.resample_counts`). The cluster of a case is, by ``--cluster-by``:

- ``source.item`` (the default): the public item it was built from (``dataset:item``); an original case stands alone;
- ``source.dataset``: its public data set (a coarse choice: few clusters make wide intervals);
- ``tag:PREFIX``: its first tag that starts with PREFIX (``tag:group=`` puts the cases tagged ``group=7``
  together); a case without such a tag stands alone;
- ``none``: every case alone (the case bootstrap).

A run's journal keeps each case's key (``cluster``, absent for a case alone), so that ``fcb compare`` and the
leaderboards resample as the runs did.
"""

from __future__ import annotations

from harness.errors import UsageError
from harness.types import CaseLabels

DEFAULT_CLUSTER_BY = "source.item"
FIXED = ("source.item", "source.dataset", "none")
TAG = "tag:"


def check_cluster_by(by: str) -> str:
    """``by`` if it names a way to cluster; a `UsageError` saying what does otherwise."""
    if by in FIXED or (by.startswith(TAG) and len(by) > len(TAG)):
        return by
    raise UsageError(f"--cluster-by {by!r}: expected one of {', '.join(FIXED)} or tag:PREFIX (e.g. tag:group=)")


def cluster_key(lab: CaseLabels, by: str) -> str | None:
    """The key that names a case's cluster under ``by``; two cases share a cluster when their keys are equal. None
    for a case that stands alone."""
    if by == "source.item":
        return lab.source_item if lab.source_dataset != "original" else None
    if by == "source.dataset":
        return f"dataset:{lab.source_dataset}" if lab.source_dataset != "original" else None
    if by.startswith(TAG):
        prefix = by[len(TAG) :]
        return next((f"tag:{t}" for t in lab.tags if t.startswith(prefix)), None)
    if by == "none":
        return None
    raise ValueError(f"unchecked --cluster-by {by!r}")  # a bug: every entry point checks it first
