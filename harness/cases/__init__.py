"""Reading and checking cases files: the reader, the label scheme, and requests stripped of labels."""
