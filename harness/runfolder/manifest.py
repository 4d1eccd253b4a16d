"""``run.json``, the manifest: what identifies a run (data set, detector and its fingerprint), its settings and its
sessions. Written when a run starts and after each session; a resumed run must match the identity it holds."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from harness.errors import RunError, RunLoadError, RunMismatchError
from harness.files import atomic_write
from harness.runfolder.names import MANIFEST
from harness.schema_messages import schema_message


def now() -> str:
    """The current UTC time as the run folder's files write it."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_manifest(identity: dict[str, Any], cases: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The manifest of a new run, with no session yet; ``cases`` the cases file's absolute path."""
    return {"identity": identity, "cases": cases, "settings": settings, "created": now(), "sessions": []}


def add_session(run_dir: str | Path, manifest: dict[str, Any], *, started: str, wall_s: float, cases: int) -> float:
    """Record a finished session (``cases`` sent in ``wall_s`` seconds) and write the manifest; returns the wall
    time of every session together."""
    manifest["sessions"].append({"started": started, "wall_s": wall_s, "cases": cases})
    write_manifest(run_dir, manifest)
    return float(sum(s["wall_s"] for s in manifest["sessions"]))


def write_manifest(run_dir: str | Path, manifest: dict[str, Any]) -> None:
    atomic_write(Path(run_dir) / MANIFEST, orjson.dumps(manifest, option=orjson.OPT_INDENT_2))


@cache
def _manifest_validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(orjson.loads((resources.files("harness") / "data" / "run.schema.json").read_bytes()))


def manifest_problems(manifest: Any) -> list[str]:
    """``field: message`` for every field of a ``run.json`` whose type or range is wrong (run.schema.json)."""
    found = []
    for err in _manifest_validator().iter_errors(manifest):
        where = ".".join(str(p) for p in err.absolute_path) or "(file)"
        if err.validator == "required":
            missing = [k for k in err.validator_value if isinstance(err.instance, dict) and k not in err.instance]
            found += [f"{where + '.' if err.absolute_path else ''}{k}: required field is missing" for k in missing]
        else:
            found.append(f"{where}: {schema_message(err)}")
    return sorted(found)


def read_manifest(run_dir: str | Path) -> dict[str, Any] | None:
    """A run folder's ``run.json``, its fields checked; None when there is none. `RunLoadError` names the file and the
    first wrong field."""
    path = Path(run_dir) / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise RunLoadError(f"{path}: (file): not JSON: {exc}") from None
    if problems := manifest_problems(manifest):
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RunLoadError(f"{path}: {problems[0]}{more}")
    return manifest


def resumable_manifest(run_dir: str | Path) -> dict[str, Any]:
    """The manifest of a run to resume; `RunError` when the folder holds none."""
    manifest = read_manifest(run_dir)
    if manifest is None:
        raise RunError(f"{run_dir}: not a run folder (no run.json); nothing to resume")
    return manifest


def check_resume(run_dir: str | Path, identity: dict[str, Any]) -> dict[str, Any]:
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
