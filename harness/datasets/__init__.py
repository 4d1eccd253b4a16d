"""Benchmarks: the embedded set, the synthetic generator, the real-data build, the shortcut audit and stats."""
