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


class ArgsError(TrainstackError, ValueError):
    """A component's Args that break one or more rules; `problems` holds (field path, value,
    rule) for each, the path as the Args field is written (`flavors[0].nodes`)."""

    def __init__(self, component: str, name: str, problems: list[tuple[str, object, str]]):
        self.component = component
        self.name = name
        self.problems = problems
        lines = "\n".join(f"  - {path} = {value!r}: {rule}" for path, value, rule in problems)
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(f"{component} {name!r} has {len(problems)} Args {noun}:\n{lines}")
