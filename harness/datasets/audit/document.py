"""The audit's document: the shape of what ``fcb audit-dataset`` writes (``harness/data/audit.schema.json``)."""

from __future__ import annotations

from typing import Any, TypedDict


class Baseline(TypedDict):
    name: str
    description: str
    params: dict[str, Any]
    cv_macro_f1: float | None
    macro_f1: float
    ci: list[float]
    risk_macro_f1: float
    risk_ci: list[float]
    per_category: dict[str, float]


class Rule(TypedDict):
    kind: str
    text: str
    longest_equivalent: str
    equivalent_features: int
    target: list[str]
    in_target: int
    with_feature: int
    target_size: int
    precision: float
    recall: float


class Finding(TypedDict):
    kind: str
    message: str


class AuditDocument(TypedDict):
    audit_version: int
    files: dict[str, Any]
    settings: dict[str, Any]
    categories: list[str]
    surface: dict[str, Any]
    rules: dict[str, Any]
    count_leakage: dict[str, Any]
    shape: dict[str, Any]
    overlap: dict[str, Any]
    composition: dict[str, Any]
    verdict: dict[str, Any]
