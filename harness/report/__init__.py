"""Rendering one run: the terminal summary, report.md, metrics.json, report.html and plots."""
