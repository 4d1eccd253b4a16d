"""The harness's version, in a module of its own so that any module can read it without importing the package's
public surface (`harness/__init__.py`), which imports the run machinery on use."""

__version__ = "0.1.0"
