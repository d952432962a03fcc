"""Training metrics of a run: MFU, goodput, and their command line."""
