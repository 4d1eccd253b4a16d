"""Rendering one run: the terminal summary, report.md, metrics.json, report.html and plots.

Modules:
- ``text``: the terminal summary, ``report.md`` and ``metrics.json``
- ``html``: ``report.html``, one self-contained page with the figures and a case explorer
- ``packing``: the data a page carries for its script, gzip-compressed and base64; explorer rows packed as made
- ``plots``: PNG plots: confusion heatmaps, per-category bars, metric trends
- ``markdown``: values from run folders made inert in Markdown (no HTML, links or code spans)
"""
