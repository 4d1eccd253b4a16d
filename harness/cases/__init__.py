"""Reading and checking cases files: the bounded line reader, the check of one line, the reader (`scan`), the label
scheme, and requests stripped of labels."""
