"""The real model behind every answer: one stable ``model_family`` label per model, whatever source file it is in.

A label names the weights, not the file or the service: ``llama-3.1-405b-instruct`` is ZeroEval's
``Llama-3.1-405B-Inst@sambanova``, ``Meta-Llama-3.1-405B-Instruct@hyperbolic`` and ``Llama-3.1-405B-Instruct-Turbo``
(one model at three providers; "Turbo" is Together's FP8 serving of it), and ``gpt-4o-2024-05-13`` is the same label in
MMLU-Pro and in ZeroEval. A quantized copy of a model keeps the model's label (``Meta-Llama-3-8B-Instruct-quantized``),
so answers with one label share a model's blind spots. Names follow the file stems, normalised (`label_of`); the few
that normalising cannot join are in `RENAMED`. The card lists every label with the files and providers behind it.
"""

from __future__ import annotations

import re

RENAMED: dict[str, str] = {
    "llama-3.1-405b-inst": "llama-3.1-405b-instruct",
    "llama-3.1-405b-instruct-turbo": "llama-3.1-405b-instruct",
    "llama-3-8b-instruct-quantized": "llama-3-8b-instruct",
    "c4ai-command-r-v01": "command-r-v01",
    "deepseek-chat-v2-2024-05": "deepseek-v2-chat-2024-05",
}
"""Normalised stems that name the same model as another, or whose normal form reads badly."""

GSM8K_MODELS = {"6b": "cobbe-gpt3-6b", "175b": "cobbe-gpt3-175b"}
"""The two model sizes of the GSM8K solutions file (Cobbe et al. 2021 fine-tuned GPT-3 models of 6B and 175B
parameters; the ``_verification`` entries are the same models' samples chosen by a verifier)."""
DYLAN_MODEL = "gpt-3.5-turbo-0301"
"""Every DyLAN agent (the upstream scripts name the engine ``chatgpt0301``)."""


def label_of(stem: str) -> str:
    """The model_family label of a source file stem: lower case, the ``@provider`` and ``-hf`` dropped, ``Meta-``
    dropped from Llama names, ``3_1`` read as ``3.1``, then `RENAMED`."""
    name = stem.split("@")[0].lower()
    name = re.sub(r"^meta-llama", "llama", name).removesuffix("-hf")
    name = re.sub(r"(\d)_(\d)", r"\1.\2", name)
    return RENAMED.get(name, name)


def provider_of(stem: str, engine: str | None = None) -> str:
    """Where the answers were served: the stem's ``@provider``, else the engine the source names, else ``unknown``."""
    if "@" in stem:
        return stem.split("@", 1)[1]
    if stem.endswith("-Turbo"):
        return "together"
    return engine or "unknown"
