"""The base of every component's Args: built from the dataclass or from the plain dict the
Pulumi component provider passes (`provider/`), and checked before any child registers.

A field's rule comes from `trainstack.core.rules`, the same function the stack config's types
call. Values not yet known (a `pulumi.Output`, an awaitable) are not checked; a plain value of an
`Input` field is. Each field is typed as it is at run time: `T | None` only where None means
something. In the dict the provider passes, a null for a field with a default is that default
(`_build`); the package schema makes every field with a default optional (`app/deploy/package.py`).

Args with a `spec` field (a `core.spec.Section`: what a stack file's section holds) are the spec
plus wiring: the package passes the spec's keys beside the wiring, as its schema flattens them,
and the spec's model checks them (`spec_input`, then its validators).
"""

import dataclasses
import inspect
import sys
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import pulumi
from pydantic import BaseModel, ValidationError

from trainstack.core import rules
from trainstack.core.errors import ArgsError, Problem, key_path
from trainstack.core.spec import plain, problem_of, rule_errors

__all__ = ["Args", "Each", "KeyPath", "Problem", "deprecated_keys", "has_default", "not_empty", "one_of"]


@dataclass(frozen=True)
class Each:
    """A rule for every item of a list field (reported as `field[i]`)."""

    rule: rules.Rule


def one_of(*allowed: str | int) -> rules.Rule:
    """A rule that the value is one of `allowed` (the schema types these fields as strings or integers)."""

    def rule(value: Any) -> str | None:
        return None if value in allowed else f"must be one of {', '.join(map(str, allowed))}"

    return rule


def not_empty(value: Any) -> str | None:
    """A list that needs at least one item."""
    if not isinstance(value, list | tuple):
        return "must be a list"
    return None if value else "must not be empty"


def _known(value: Any) -> bool:
    return not isinstance(value, pulumi.Output) and not inspect.isawaitable(value)


class Args:
    """Mixed into each component's frozen Args dataclass. `_checks` maps a field to its rule,
    `Each(rule)`, or a tuple of them; `_cross` yields the rules between fields, checked once
    every field follows its own."""

    _checks: ClassVar[dict[str, rules.Rule | Each | tuple[rules.Rule | Each, ...]]] = {}

    @classmethod
    def spec_aliases(cls) -> type[BaseModel] | None:
        """The spec's deprecated package inputs (a model of them, for the schema), which `spec_input` folds in."""
        return None

    @classmethod
    def spec_required(cls) -> tuple[str, ...]:
        """The spec's keys the component needs though a stack file may leave them out (its stack fills them in)."""
        return ()

    @classmethod
    def spec_input(cls, raw: dict[str, Any]) -> dict[str, Any]:
        """The spec's keys of the package's inputs, as the spec's model reads them."""
        return raw

    def _cross(self) -> Iterator[Problem]:
        return iter(())

    def problems(self, path: tuple[str | int, ...] = (), cross: bool = True) -> list[Problem]:
        """Every broken rule of these Args and of the Args nested in them, keyed by field path
        (without `cross`, only each field's own)."""
        found: list[Problem] = []
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            key, value = (*path, f.name), getattr(self, f.name)
            if value is None and has_default(f) and f.default is not None:
                found.append(Problem(key, value, "must not be None: leave it out for its default"))
                continue
            checks = self._checks.get(f.name, ())
            for check in checks if isinstance(checks, tuple) else (checks,):
                if isinstance(check, Each) and isinstance(value, list | tuple):
                    found += [Problem((*key, i), v, m) for i, v in enumerate(value) if _known(v) and (m := check.rule(v))]
                elif not isinstance(check, Each) and value is not None and _known(value) and (message := check(value)):
                    found.append(Problem(key, value, message))
            if isinstance(value, Args):
                found += value.problems(key)
            elif isinstance(value, list | tuple):
                for i, item in enumerate(value):
                    if isinstance(item, Args):
                        found += item.problems((*key, i))
        if not found and cross:  # rules between fields read fields that follow their own rules
            found = [Problem((*path, *k), v, m) for k, v, m in self._cross()]
        return found

    @classmethod
    def checked(cls, args: "Self | dict[str, Any]", component: type, name: str) -> Self:
        """`args` (or the dict of them) as this class, checked: one ArgsError names the component
        and every broken rule. Called before the component registers anything."""
        try:
            built = _build(cls, args)
        except ValidationError as exc:  # the spec's, and the wiring's own
            spec = spec_model(cls)
            assert spec is not None
            raise ArgsError(component.__name__, name, [problem_of(e, spec) for e in exc.errors(include_url=False)] + _wiring_problems(cls, args)) from None
        except (TypeError, ValueError) as exc:
            raise ArgsError(component.__name__, name, [Problem(("args",), args, str(exc))]) from None
        problems = built.problems()
        if problems:
            raise ArgsError(component.__name__, name, problems)
        return built


def _build(typ: Any, value: Any) -> Any:
    """`value` as `typ`: a dict becomes the Args (or plain dataclass) it describes, recursively;
    a whole float an int (the engine sends every number as a float)."""
    typ = _unwrap(typ)
    if isinstance(value, dict) and isinstance(typ, type) and issubclass(typ, BaseModel):
        return typ.model_validate(plain(value))
    if isinstance(value, dict) and isinstance(typ, type) and dataclasses.is_dataclass(typ):
        spec = spec_model(typ)
        hints = {k: v for base in reversed(typ.__mro__) for k, v in inspect.get_annotations(base, eval_str=True).items()} | ({"spec": spec} if spec else {})
        wiring = {f.name for f in dataclasses.fields(typ)}
        if spec is not None and "spec" not in value:  # the package's: the spec's keys beside the wiring
            spec = typ.spec_input({k: v for k, v in value.items() if k not in wiring})  # type: ignore[attr-defined]
            value = {**{k: v for k, v in value.items() if k in wiring}, "spec": spec}
        unknown = set(value) - {f.name for f in dataclasses.fields(typ)}
        if unknown:
            raise TypeError(f"{typ.__name__} has no field {', '.join(sorted(unknown))}")
        defaulted = {f.name for f in dataclasses.fields(typ) if has_default(f) and f.default is not None}
        return typ(**{k: _build(hints[k], v) for k, v in value.items() if not (v is None and k in defaulted)})
    if isinstance(value, list) and typing.get_origin(typ) is list:
        (item,) = typing.get_args(typ)
        return [_build(item, v) for v in value]
    if typ is int and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _wiring_problems(cls: type[Args], args: Any) -> list[Problem]:
    """The own rules' problems of the wiring fields in the package's dict `args` (beside a spec that failed)."""
    if not isinstance(args, dict):
        return []
    wiring = {f.name for f in dataclasses.fields(cls)} - {"spec"}  # type: ignore[arg-type]
    try:
        return _build(cls, {**{k: v for k, v in args.items() if k in wiring}, "spec": None}).problems(cross=False)
    except (TypeError, ValueError):  # a wiring field it cannot build: the spec's problems say enough
        return []


KeyPath = tuple[str, ...]


def deprecated_keys(
    raw: dict[str, Any], moves: dict[KeyPath, KeyPath], owner: str, convert: dict[KeyPath, Callable[[Any], Any]] | None = None
) -> dict[str, Any]:
    """A package's spec inputs (`raw`, its nulls dropped, and those of each object on a path moved)
    with each deprecated key path of `moves` read as its new path (`convert`ed where a value changed
    shape too): an old spelling accepted for one release (`Args.spec_input`). One given beside its new
    spelling is refused, naming the old key (`rule_errors` of `owner`); a value in the way of a new
    path that is not an object is left for the spec's model to refuse."""
    spec = {k: v for k, v in raw.items() if v is not None}
    found: list[tuple[KeyPath, Any]] = []
    both = []
    for old, new in moves.items():
        parent = _owned(spec, old[:-1], make=False)
        value = parent.pop(old[-1], None) if parent is not None else None
        if value is None:
            continue
        if new[-1] in (_object_at(spec, new[:-1]) or {}):
            both.append(Problem(old, value, f"is the deprecated spelling of {key_path(new)}; set only {key_path(new)}"))
        else:
            found.append((new, (convert or {}).get(old, lambda v: v)(value)))
    rule_errors(owner, both)
    for new, value in found:
        if (target := _owned(spec, new[:-1], make=True)) is not None:
            target[new[-1]] = value
    return spec


def _owned(spec: dict[str, Any], path: KeyPath, make: bool) -> dict[str, Any] | None:
    """The object at `path` in `spec`, each object on the way a copy of the caller's (whose inputs are
    never changed) without its nulls (the package's null is the default, as at the top), an absent or
    null one made where `make`; None where something else is in the way."""
    node = spec
    for part in path:
        child = node.get(part)
        if child is None and make:
            child = {}
        if not isinstance(child, dict):
            return None
        node[part] = node = {k: v for k, v in child.items() if v is not None}
    return node


def _object_at(raw: dict[str, Any], path: KeyPath) -> dict[str, Any] | None:
    """The object at `path` in `raw`, if there is one there."""
    node: Any = raw
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def spec_model(args: type) -> type[BaseModel] | None:
    """The model of an Args class's `spec` field, if it has one."""
    hint = next((f.type for f in dataclasses.fields(args) if f.name == "spec"), None) if dataclasses.is_dataclass(args) else None
    if isinstance(hint, str):  # as written (the package retypes the annotation for the SDK's analyzer)
        hint = eval(hint, vars(sys.modules[args.__module__]))  # what inspect.get_annotations(eval_str=True) does
    hint = _unwrap(hint)
    return hint if isinstance(hint, type) and issubclass(hint, BaseModel) else None


def has_default(f: dataclasses.Field[Any]) -> bool:
    """Whether a dataclass field has a default (a value or a factory)."""
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


def _unwrap(typ: Any) -> Any:
    """The type inside `T | None`, else `typ`."""
    if typing.get_origin(typ) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(typ) if a is not type(None)]
        if len(members) == 1:
            return members[0]
    return typ
