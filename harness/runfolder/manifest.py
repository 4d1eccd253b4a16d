"""``run.json``, the manifest: what identifies a run (data set, detector and its fingerprint), its settings and its
sessions. Written when a run starts and after each session; a resumed run must match the identity it holds."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from harness.documents import Identity, RunManifest, Session, Settings
from harness.errors import RunError, RunMismatchError
from harness.files import atomic_write
from harness.runfolder.checked import read_document
from harness.runfolder.names import MANIFEST


def now() -> str:
    """The current UTC time as the run folder's files write it."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_manifest(identity: Identity, cases: str, settings: Settings) -> RunManifest:
    """The manifest of a new run, with no session yet; ``cases`` the cases file's absolute path."""
    return {"identity": identity, "cases": cases, "settings": settings, "created": now(), "sessions": []}


def add_session(
    run_dir: str | Path,
    manifest: RunManifest,
    *,
    started: str,
    wall_s: float,
    cases: int,
    spent: tuple[int, float] | None = None,
    changed: dict[str, Any] | None = None,
) -> float:
    """Record a finished session (``cases`` sent in ``wall_s`` seconds; ``spent``: the requests it sent and their
    cost at most, for a detector that sends requests; ``changed``: its settings that differ from the first
    session's) and write the manifest; returns the wall time of every session together."""
    session: Session = {"started": started, "wall_s": wall_s, "cases": cases}
    if spent is not None:
        session["requests"], session["cost_usd"] = spent
    if changed:
        session["settings"] = changed
    manifest["sessions"].append(session)
    write_manifest(run_dir, manifest)
    return float(sum(s["wall_s"] for s in manifest["sessions"]))


def write_manifest(run_dir: str | Path, manifest: RunManifest) -> None:
    atomic_write(Path(run_dir) / MANIFEST, orjson.dumps(manifest, option=orjson.OPT_INDENT_2))


def read_manifest(run_dir: str | Path) -> RunManifest | None:
    """A run folder's ``run.json``, checked against its definition; None when there is none. `RunLoadError` names
    the file and the first wrong field."""
    path = Path(run_dir) / MANIFEST
    if not path.exists():
        return None
    manifest: RunManifest = read_document(path, "run")
    return manifest


def resumable_manifest(run_dir: str | Path) -> RunManifest:
    """The manifest of a run to resume; `RunError` when the folder holds none."""
    manifest = read_manifest(run_dir)
    if manifest is None:
        raise RunError(f"{run_dir}: not a run folder (no run.json); nothing to resume")
    return manifest


def check_resume(run_dir: str | Path, identity: Identity) -> RunManifest:
    """The manifest of the run in ``run_dir``, once its identity matches ``identity``; `RunMismatchError` names
    every difference (a changed detector fingerprint field by field)."""
    manifest = resumable_manifest(run_dir)
    old = manifest["identity"]
    # runs written before fingerprints were kept have none to compare
    keys = [k for k in dict.fromkeys([*identity, *old]) if not (k == "fingerprint" and k not in old)]
    changed = [k for k in keys if old.get(k) != identity.get(k)]
    if changed:
        detail = "; ".join(_change(k, old.get(k), identity.get(k)) for k in changed)
        raise RunMismatchError(f"{run_dir}: refusing to resume, the run changed: {detail}")
    return manifest


def _change(key: str, was: Any, now: Any) -> str:
    if key == "fingerprint" and isinstance(was, dict) and isinstance(now, dict):
        what = now.get("source") or now.get("kind")
        keys = sorted(set(was) | set(now))
        parts = [f"{k} was {was.get(k)!r}, now {now.get(k)!r}" for k in keys if was.get(k) != now.get(k)]
        return f"the detector's fingerprint changed ({what}: {'; '.join(parts)})"
    return f"{key} was {was!r}, now {now!r}"
