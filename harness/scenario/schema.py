"""The scenario schema shipped in the package, checked fast and explained in full.

jsonschema-rs (compiled once, as for cases) decides whether a document is valid; only a document it rejects goes
through jsonschema's Draft 2020-12 validator, which lists every error with its JSON pointer. Two kinds of schema
error are reported in other words, because the bare schema message would mislead:

- the operator-only fields ``canary_string`` and ``is_held_out`` (the schema's description: "server-assigned ...
  never published" and "operator flag") get "operator field: remove before publishing" instead of an
  additional-property error;
- a string that breaks the printable-ASCII pattern is reported by `harness.scenario.ascii`, character by
  character, so its pattern error is dropped here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import jsonschema_rs
import orjson

from harness.jsoncheck import too_deep
from harness.scenario.problems import Finding, join, pointer
from harness.schema_messages import preview, schema_message, shorten

OPERATOR_FIELDS = ("canary_string", "is_held_out")
OPERATOR_MESSAGE = "operator field: remove before publishing"
ASCII_PATTERNS = frozenset({"^[\\x20-\\x7E]+$", "^[\\x20-\\x7E]*$"})
CONDITIONAL_REQUIRED = {  # the resource's allOf if/then rules, in the schema's words
    "unit_label": "unit 'other' needs a unit_label (\"Use 'other' only with 'unit_label'\")",
    "held_by": "a latent resource needs held_by (\"When 'latent', 'held_by' is required\")",
    "shared_mode": "divisibility 'shared' needs a shared_mode: both_benefit or joint_obligation",
}


@cache
def scenario_schema() -> dict[str, Any]:
    """The schema shipped in the package (a byte-identical copy of ``shared/schemas/hai-scenario.schema.json``)."""
    schema: dict[str, Any] = orjson.loads(
        (resources.files("harness") / "data" / "hai-scenario.schema.json").read_bytes()
    )
    return schema


@cache
def _fast_validator() -> Any:
    return jsonschema_rs.validator_for(scenario_schema())


@cache
def _full_validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(scenario_schema())


@dataclass(slots=True)
class SchemaReport:
    """Schema findings, and whether the document's shape can be trusted by the cross-field rules.

    ``shape_ok`` is true when the only schema errors are ASCII-pattern errors (reported by the ASCII check) and
    operator fields: neither changes the document's shape.
    """

    findings: list[Finding] = field(default_factory=list)
    shape_ok: bool = True


def check_schema(doc: Any) -> SchemaReport:
    """Every way ``doc`` breaks the schema, as findings with JSON pointers."""
    report = SchemaReport()
    try:
        if _fast_validator().is_valid(doc):
            return report
        fast_errors = list(_fast_validator().iter_errors(doc))
    except ValueError:  # jsonschema-rs stops at its recursion limit: a value nested far too deep, named by its field
        top = too_deep(doc)
        report.findings.append(Finding(pointer(top) if top else "", "value nested too deeply to validate"))
        report.shape_ok = False
        return report
    first = fast_errors[0]
    fallback = Finding(pointer(*first.instance_path), shorten(first.message))
    try:
        errors = list(_full_validator().iter_errors(doc))
    except RecursionError:
        report.findings.append(Finding(fallback.pointer, "value nested too deeply to validate"))
        report.shape_ok = False
        return report
    for err in errors:
        _add(report, err, doc)
    if not errors and not all(map(_fast_ascii_error, fast_errors)):  # they disagree; trust the one that found something
        report.findings.append(fallback)
        report.shape_ok = False
    report.findings = sorted(set(report.findings), key=lambda f: (f.pointer, f.message))
    return report


def _add(report: SchemaReport, err: Any, doc: Any) -> None:
    where = pointer(*err.absolute_path)
    if _ascii_pattern_error(err):
        return
    if err.validator == "additionalProperties" and err.validator_value is False:
        _add_unknown_fields(report, err, where)
        return
    report.shape_ok = False
    if err.validator == "required":
        _add_missing(report, err, where)
    elif err.validator == "minItems" and where == "/resources" and _lone_divisible(doc):
        report.findings.append(
            Finding(where, "a lone divisible resource is a fixed pie and cannot be integrative; supply >= 2 resources")
        )
    else:
        report.findings.append(Finding(where, schema_message(err)))


def _fast_ascii_error(err: Any) -> bool:
    """True when the fast validator's error is the ASCII pattern on a string with a non-printable character.

    Python's ``$`` also matches before a final newline, so jsonschema accepts ``"text\\n"`` where the fast validator
    (JSON Schema's ``$``) does not; the ASCII check reports that newline either way.
    """
    kind, value = err.kind, err.instance
    return (
        isinstance(kind, jsonschema_rs.ValidationErrorKind.Pattern)
        and kind.pattern in ASCII_PATTERNS
        and isinstance(value, str)
        and not _printable(value)
    )


def _printable(text: str) -> bool:
    return all(0x20 <= ord(c) <= 0x7E for c in text)


def _ascii_pattern_error(err: Any) -> bool:
    """True for a printable-ASCII pattern error on a string that has a character outside printable ASCII."""
    if err.validator != "pattern" or err.validator_value not in ASCII_PATTERNS or not isinstance(err.instance, str):
        return False
    return not _printable(err.instance)


def _add_unknown_fields(report: SchemaReport, err: Any, where: str) -> None:
    known = set(err.schema.get("properties", {}))
    for name in sorted(set(err.instance) - known):
        if where == "" and name in OPERATOR_FIELDS:
            report.findings.append(Finding(join(where, name), OPERATOR_MESSAGE))
        else:
            report.shape_ok = False
            report.findings.append(Finding(join(where, name), f"unknown field {preview(name)}"))


def _add_missing(report: SchemaReport, err: Any, where: str) -> None:
    conditional = "then" in err.schema_path
    for name in err.validator_value:
        if name in err.instance:
            continue
        message = CONDITIONAL_REQUIRED.get(name) if conditional else None
        report.findings.append(Finding(join(where, name), message or "required field is missing"))


def _lone_divisible(doc: Any) -> bool:
    items = doc.get("resources") if isinstance(doc, dict) else None
    return isinstance(items, list) and len(items) == 1 and (items[0] or {}).get("divisibility") == "divisible"
