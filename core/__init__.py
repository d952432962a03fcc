"""The foundation: config schema, machine catalog, platform contract, stack context, errors,
memory model and `testing`; it imports nothing above it."""
