"""Typed errors: each carries a message meant for the user, not a traceback."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Sequence
from typing import Any, NamedTuple


class _Absent:
    """The value of a key the user did not write (a required key missing, a problem of a whole file)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()
UNKNOWN_KEY = "unknown key"


class _Broken(NamedTuple):
    key: tuple[str | int, ...]
    value: Any
    rule: str


class Problem(_Broken):
    """A broken rule, the one shape every door reports: the key path as the user wrote it
    (`("flavors", 0, "nodes")`, `("trainstack:gpuPools", 1, "nodeCount")`), the value found there
    (ABSENT where there is none), the rule; and, where one is known, the fix: given as text, or
    `near`, the key path the user most likely meant ("did you mean ..."). They are attributes beside the triple
    (a problem is still compared and unpacked as (key, value, rule)), so a door that names keys
    its own way re-keys `near` as it re-keys `key` (`rekeyed`), never by rewriting text."""

    near: tuple[str | int, ...] | None
    _fix: str | None

    def __new__(cls, key: tuple[str | int, ...], value: Any, rule: str, fix: str | None = None, near: tuple[str | int, ...] | None = None) -> Problem:
        self = super().__new__(cls, key, value, rule)
        self._fix, self.near = fix, near
        return self

    def __getnewargs__(self) -> tuple[Any, ...]:
        return (*self, self._fix, self.near)

    @property
    def fix(self) -> str | None:
        """What to do instead, where it is known: the fix given, or the key meant."""
        return f"did you mean {key_path(self.near)}?" if self.near is not None else self._fix

    def _replace(self, **changes: Any) -> Problem:
        fix, near = changes.pop("fix", self._fix), changes.pop("near", self.near)
        return Problem(*super()._replace(**changes), fix, near)

    def rekeyed(self, rekey: Callable[[tuple[str | int, ...]], tuple[str | int, ...]]) -> Problem:
        """This problem with its key and its `near` as `rekey` names them (another door's spelling)."""
        return self._replace(key=rekey(self.key), near=rekey(self.near) if self.near is not None else None)

    def to_json(self, where: str = "") -> dict[str, Any]:
        """The problem as `--format json` gives it: key as written, value, rule, fix."""
        value = None if self.value is ABSENT else self.value if _plain(self.value) else show(self.value)
        return {"key": key_path(self.key) or where, "value": value, "rule": self.rule, "fix": self.fix}


def as_problem(found: tuple[Any, ...]) -> Problem:
    """`found` (a Problem, or a (key, value, rule) triple) as a Problem."""
    return found if isinstance(found, Problem) else Problem(*found)


def _plain(value: Any) -> bool:
    """Whether `value` is JSON as it is (YAML's scalars, lists and mappings of them)."""
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    return isinstance(value, dict) and all(isinstance(k, str) and _plain(v) for k, v in value.items())


def unknown_key(loc: tuple[str | int, ...], value: Any, known: Collection[str]) -> Problem:
    """Key `loc[-1]`, unknown where `known` are the keys, with the known key it most resembles:
    the one "did you mean" of every door (the stack file's models, the package's inputs)."""
    close = difflib.get_close_matches(str(loc[-1]), list(known), n=1, cutoff=0.6)
    if close:
        return Problem(loc, value, UNKNOWN_KEY, near=(*loc[:-1], close[0]))
    return Problem(loc, value, UNKNOWN_KEY, "check its spelling against the documented keys")


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


def describe(problem: tuple[Any, ...], where: str = "(stack config)") -> str:
    """One problem as the user reads it: `trainstack:workload.nodes = 64: exceeds ...`; a key with
    no value `trainstack:workload: required key is missing`; an unknown key `x.nodeCont: unknown
    key (value 3); did you mean x.nodeCount?`."""
    found = as_problem(problem)
    valued = found.value is not ABSENT and found.rule != UNKNOWN_KEY
    return f"{key_path(found.key) or where}{' = ' if valued else ': '}{reason(found)}"


def reason(problem: Problem) -> str:
    """What a problem says after its key: `64: exceeds ...`, `required key is missing`."""
    if problem.rule == UNKNOWN_KEY:
        text = f"{UNKNOWN_KEY} (value {show(problem.value)})"
    elif problem.value is ABSENT:
        text = problem.rule
    else:
        text = f"{show(problem.value)}: {problem.rule}"
    return f"{text}; {problem.fix}" if problem.fix else text


class TrainstackError(Exception):
    """Base of every error trainstack reports to a user."""


class CatalogError(TrainstackError, LookupError):
    """A name that is not in the machine catalog."""


class ConfigError(TrainstackError, ValueError):
    """A stack configuration that breaks one or more rules: `details` holds each Problem (a bare
    line is a problem of no one key), `problems` each as the user reads it."""

    def __init__(self, stack: str, problems: Sequence[Problem | str]):
        self.stack = stack
        self.details = [Problem((), ABSENT, p) if isinstance(p, str) else as_problem(p) for p in problems]
        self.problems = [p if isinstance(p, str) else describe(p) for p in problems]
        lines = "\n".join(f"  - {p}" for p in self.problems)
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
