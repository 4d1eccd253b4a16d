"""Two-party mediation scenarios (``hai-scenario.schema.json``): lint them, analyse their negotiation space, score
an agreed allocation.

One module per step, data flowing one way:

| module | step |
| --- | --- |
| `problems.py` | the `Finding` every check returns (a JSON pointer, a message, error or warning) |
| `schema.py` | the schema shipped in the package, checked with jsonschema-rs, explained with jsonschema |
| `ascii.py` | find non-ASCII characters with their pointer and offset, suggest transliterations, fix them in place |
| `latent.py` | match a latent resource to hidden facts and expected revelations (token overlap) |
| `rules.py` | the cross-field rules the schema's description lists and JSON Schema cannot check |
| `validate.py` | read a file and run all of the above |
| `utility.py` | the utility model: normalised weights, the utility of an allocation, feasibility |
| `pareto.py` | pure geometry: the exact Pareto frontier, Nash, utilitarian and egalitarian points, distances |
| `analyze.py` | a scenario's negotiation space from its resources and BATNAs |
| `score.py` | read an allocation file and score it against the analysis |
| `render.py`, `plot.py` | text and JSON output; the PNG of the utility set |
| `commands.py` | ``fcb scenario validate|analyze|score`` |

Nothing here imports the detector harness (an import-linter contract holds it): `harness.files`, `harness.errors`
and `harness.schema_messages` are its only harness imports.
"""
