"""``python -m harness.datasets.embedded``: regenerate the embedded data set."""

from harness.datasets.embedded import main

raise SystemExit(main())
