"""Typed errors: each carries a message meant for the user, not a traceback."""

from __future__ import annotations


class TrainstackError(Exception):
    """Base of every error trainstack reports to a user."""


class CatalogError(TrainstackError, LookupError):
    """A name that is not in the machine catalog."""


class ConfigError(TrainstackError, ValueError):
    """A stack configuration that breaks one or more rules; `problems` lists each one."""

    def __init__(self, stack: str, problems: list[str]):
        self.stack = stack
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(f"stack {stack!r} has {len(problems)} configuration {noun}:\n{lines}")


class UnknownStackError(TrainstackError, LookupError):
    """A stack name with no stacks/Pulumi.<name>.yaml."""


class StackFileError(TrainstackError, ValueError):
    """A stack file that is not a readable YAML mapping of config keys."""
