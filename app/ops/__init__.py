"""Operations: preview diffs, the Automation API, ephemeral benchmark stacks, reaping."""
