"""``python -m harness`` is the ``fcb`` command."""

from harness.cli import main

raise SystemExit(main())
