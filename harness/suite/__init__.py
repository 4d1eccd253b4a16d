"""``fcb suite``: many detectors on many data sets from one TOML file (`harness.suite.spec`), each pair run or
resumed into its own folder and the results gathered into a board folder (`harness.suite.board`)."""
