"""Typed errors: each carries a message meant for the user, not a traceback."""

from __future__ import annotations

from typing import Any, NamedTuple


class Problem(NamedTuple):
    """A broken rule, the one shape every door reports: the key path (`("flavors", 0, "nodes")`,
    `("trainstack:gpuPools", 1, "nodeCount")`), the value found there, and the rule."""

    key: tuple[str | int, ...]
    value: Any
    rule: str


def key_path(loc: tuple[str | int, ...]) -> str:
    """`('trainstack:gpuPool', 'zones', 0)` -> `trainstack:gpuPool.zones[0]`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}"
        else:
            out = part
    return out


def show(value: Any) -> str:
    """A value as a problem shows it: its repr, cut at 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe(problem: tuple[tuple[str | int, ...], Any, str], where: str = "(stack config)") -> str:
    """One problem as the user reads it: `trainstack:workload.nodes = 64: exceeds ...`."""
    loc, value, rule = problem
    return f"{key_path(loc) or where} = {show(value)}: {rule}"


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
    """A component's Args that break one or more rules; `problems` holds each, its key the Args
    field path (`("flavors", 0, "nodes")`, shown `flavors[0].nodes`)."""

    def __init__(self, component: str, name: str, problems: list[Problem]):
        self.component = component
        self.name = name
        self.problems = problems
        lines = "\n".join(f"  - {describe(p, component)}" for p in problems)
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(f"{component} {name!r} has {len(problems)} Args {noun}:\n{lines}")


class ReportError(TrainstackError, ValueError):
    """Input a report cannot be computed from (unreadable log, unknown model, missing figures)."""
