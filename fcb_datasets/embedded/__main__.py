"""``python -m fcb_datasets.embedded``: regenerate the embedded data set."""

from fcb_datasets.embedded import main

raise SystemExit(main())
