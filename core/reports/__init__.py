"""Reports on stacks and runs: cost, deploy critical path, MFU and goodput."""
