"""Reviewing a change before it is applied: the plan diff, the base ref's rendering and the providers' replacement semantics."""
