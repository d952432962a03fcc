"""The messages a rule can report, read from the rule's own source, so the config reference shows
each rule's text without a copy of it.

A rule in `core/rules.py` returns its message (or yields `(key, value, message)`); a model
validator collects `Problem(key, value, message)`s.
`reports` walks a function's syntax tree for those messages: string literals, f-strings (each
value shown as `…`, or as the messages of the rule it holds), and the messages of the trainstack
functions a message or problem comes from.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from types import FunctionType, UnionType
from typing import Any

from pydantic import BaseModel

from trainstack.core import rules

# A shown value of an f-string that holds no rule of its own.
VALUE = "…"
# A message has words and spaces; a key or an error type has no space.
_PROSE = re.compile(r"(?=.* )(?=.*[A-Za-z]{3})")


@dataclass(frozen=True)
class Report:
    """A message a rule reports, and the key it names (parts as written: `zones`, `[]`; absolute
    keys start with their namespace, `trainstack:cluster`); `()` where the rule names no key."""

    key: tuple[str, ...]
    text: str


def reports(func: Any, owner: type | None = None) -> list[Report]:
    """The messages `func` (a function or method of `owner`) can report, in source order, once each."""
    return list(dict.fromkeys(_Reader(func, owner, frozenset()).reports()))


def field_rule(rule: Any) -> list[str]:
    """The text of a field's own rule: a pattern's message, a range, or a rule function's messages."""
    if isinstance(rule, rules.Pattern):
        return ([f"at most {rule.max_length} characters"] if rule.max_length is not None else []) + [rule.message]
    if isinstance(rule, rules.Bounds):
        return [rule.message]
    return [r.text for r in reports(rule)]


def _ours(obj: Any) -> bool:
    return isinstance(obj, FunctionType) and obj.__module__.startswith("trainstack.")


@dataclass(frozen=True)
class _Iterated:
    """A name bound to the items of what a call returns (`for key, rule in rules.overlaps(...)`),
    at `position` of each item (None: the whole item)."""

    call: ast.Call
    position: int | None = None


class _Reader:
    def __init__(self, func: Any, owner: type | None, seen: frozenset[Any]) -> None:
        self.func = inspect.unwrap(func)
        self.owner = owner
        self.seen = seen | {self.func}
        self.tree = _ProblemsAsTuples().visit(ast.parse(textwrap.dedent(inspect.getsource(self.func)))).body[0]
        self.hints = typing.get_type_hints(self.func) if _ours(self.func) else {}
        # Each name's bindings by position; a comprehension's names are bound for its own nodes.
        self.bindings: dict[str, list[tuple[tuple[int, int], ast.expr | _Iterated]]] = {}
        self.local: dict[int, ast.expr | _Iterated] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self._bind(node.targets[0].id, node, node.value)
            elif isinstance(node, ast.NamedExpr):
                self._bind(node.target.id, node, node.value)
            elif isinstance(node, ast.IfExp):  # `a if (wrong := rule(...)) else b`: the test runs first
                for named in (n for n in ast.walk(node.test) if isinstance(n, ast.NamedExpr)):
                    self._bind(named.target.id, node, named.value)
            elif isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
                for name, position in _targets(node.target):
                    self._bind(name, node, _Iterated(node.iter, position))
            elif isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
                for generator in node.generators:
                    if isinstance(generator.iter, ast.Call):
                        for name, position in _targets(generator.target):
                            item = _Iterated(generator.iter, position)
                            self.local |= {id(n): item for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name}
                    for test in generator.ifs:  # `if (wrong := rule(...))` binds `wrong` for the item too
                        for named in (n for n in ast.walk(test) if isinstance(n, ast.NamedExpr)):
                            self.local |= {id(n): named.value for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == named.target.id}
        for found in self.bindings.values():
            found.sort(key=lambda b: b[0])

    def _bind(self, name: str, node: ast.stmt | ast.expr, value: ast.expr | _Iterated) -> None:
        self.bindings.setdefault(name, []).append(((node.lineno, node.col_offset), value))

    def _bound(self, name: ast.Name) -> ast.expr | _Iterated | None:
        """What a name holds where it is used: its comprehension's item, else its latest binding before."""
        if id(name) in self.local:
            return self.local[id(name)]
        before = [value for at, value in self.bindings.get(name.id, []) if at < (name.lineno, name.col_offset)]
        return before[-1] if before else None

    # Where messages are reported.

    def reports(self) -> list[Report]:
        found: list[Report] = []
        for node in _in_order(self.tree):
            if (isinstance(node, ast.Return) and node.value is not None and not isinstance(node.value, ast.Tuple)) or (
                isinstance(node, (ast.Yield, ast.Return)) and isinstance(node.value, ast.Tuple)
            ):
                found += self._problem(node.value)
            elif isinstance(node, ast.YieldFrom) and isinstance(node.value, ast.Call):
                found += self._called(node.value)
            elif isinstance(node, ast.Call) and self._name(node.func) == "append" and node.args:
                found += self._problem(node.args[0])
            elif isinstance(node, ast.Call) and self._name(node.func) == "PydanticCustomError" and len(node.args) > 1:
                found += [Report(r.key, re.sub(r"\{\w+\}", VALUE, r.text)) for r in self._texts(node.args[1], ())]
            elif isinstance(node, ast.Call) and self._name(node.func) == "list" and node.args and isinstance(node.args[0], ast.Call):
                found += self._called(node.args[0])
            elif isinstance(node, (ast.List, ast.ListComp)):
                for item in node.elts if isinstance(node, ast.List) else [node.elt]:
                    if isinstance(item, ast.Tuple):
                        found += self._problem(item)
            elif (isinstance(node, ast.Starred) and isinstance(node.value, ast.Call)) or (isinstance(node, ast.AugAssign) and isinstance(node.value, ast.Call)):
                found += self._called(node.value)
        return found

    def _problem(self, node: ast.expr) -> list[Report]:
        """A `(key, value, message)` or `(key, message)` problem, or a bare message."""
        if not isinstance(node, ast.Tuple):
            return self._texts(node, ())
        if len(node.elts) not in (2, 3):
            return []
        key = self._key(node.elts[0])
        if key is None or "*" not in key:
            return self._texts(node.elts[-1], key)
        at = key.index("*")  # the rule's own key goes where the problem unpacks it
        return [Report((*key[:at], *r.key, *key[at + 1 :]), r.text) for r in self._texts(node.elts[-1], None)]

    def _key(self, node: ast.expr) -> tuple[str, ...] | None:
        """A problem's key as written, or None where it comes from the rule (its own key)."""
        parts = node.elts if isinstance(node, ast.Tuple) else [node]
        out: list[str] = []
        for part in parts:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                out += part.value.split(".")
            elif isinstance(part, ast.Starred):
                out.append("*" if isinstance(part.value, ast.Name) and self._from_rule(part.value) else VALUE)
            elif isinstance(part, ast.Name) and not self._from_rule(part):
                out.append(self._key_part(part))
            else:
                return None
        return tuple(out)

    def _key_part(self, name: ast.Name) -> str:
        """A name in a key: a list index (`[]`), a constant's text, or a value (`…`)."""
        bound = self._bound(name)
        if isinstance(bound, _Iterated) and self._name(bound.call.func) == "enumerate" and bound.position == 0:
            return "[]"
        constant = self.func.__globals__.get(name.id) if bound is None else None
        return constant if isinstance(constant, str) else VALUE

    def _from_rule(self, name: ast.Name) -> bool:
        """Whether a name holds an item of what a trainstack function returns."""
        bound = self._bound(name)
        return isinstance(bound, _Iterated) and _ours(self._resolve(bound.call.func)[0])

    # What a message expression can be.

    def _texts(self, node: ast.expr, key: tuple[str, ...] | None) -> list[Report]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [Report(key or (), node.value)] if _PROSE.search(node.value) else []
        if isinstance(node, ast.JoinedStr):
            return [Report(key or (), text) for text in self._joined(node)]
        if isinstance(node, ast.BoolOp):
            return [r for value in node.values for r in self._texts(value, key)]
        if isinstance(node, ast.IfExp):
            return self._texts(node.body, key) + self._texts(node.orelse, key)
        if isinstance(node, ast.Name) and (bound := self._bound(node)) is not None:
            from_rule = self._called(bound.call) if isinstance(bound, _Iterated) else self._texts(bound, key)
            return [Report(key if key is not None else r.key, r.text) for r in from_rule]
        if isinstance(node, ast.Call):
            return [Report(key if key is not None else r.key, r.text) for r in self._called(node)]
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(constant := self._resolve(node)[0], str):
            return [Report(key or (), constant)] if _PROSE.search(constant) else []
        return []

    def _joined(self, node: ast.JoinedStr) -> list[str]:
        """An f-string's texts: the first value that holds a rule's messages once with each, the
        others as `…`."""
        texts = [""]
        substituted = False
        for part in node.values:
            if isinstance(part, ast.Constant):
                texts = [t + str(part.value) for t in texts]
                continue
            assert isinstance(part, ast.FormattedValue)
            inner = [] if substituted or not isinstance(part.value, ast.Name) else [r.text for r in self._texts(part.value, ())]
            substituted = substituted or bool(inner)
            texts = [t + i for t in texts for i in inner] if inner else [t + VALUE for t in texts]
        return [t for t in texts if _PROSE.search(t)]

    def _called(self, call: ast.Call) -> list[Report]:
        """The reports of the trainstack function `call` calls."""
        target, owner = self._resolve(call.func)
        if isinstance(target, (rules.Pattern, rules.Bounds)):
            return [Report((), text) for text in field_rule(target)]
        if not _ours(target) or target in self.seen:
            return []
        return _Reader(target, owner, self.seen).reports()

    def _resolve(self, node: ast.expr) -> tuple[Any, type | None]:
        """The object an expression names (`rules.cidr`, `self._problems`, `workload.replica_problems`)."""
        if isinstance(node, ast.Name):
            return self.func.__globals__.get(node.id), None
        if not isinstance(node, ast.Attribute):
            return None, None
        if isinstance(node.value, ast.Name) and inspect.ismodule(module := self.func.__globals__.get(node.value.id)):
            return getattr(module, node.attr, None), None
        if isinstance(node.value, ast.Name) and inspect.isclass(base := self.func.__globals__.get(node.value.id)):
            return inspect.getattr_static(base, node.attr, None), self.owner  # a base's method on `self` (`StackConfig._problems(self)`)
        cls = self._type(node.value)
        return (inspect.getattr_static(cls, node.attr, None), cls) if cls is not None else (None, None)

    def _type(self, node: ast.expr) -> type | None:
        """The config model an expression holds: `self`, a parameter, or a field of either."""
        if isinstance(node, ast.Name):
            return self.owner if node.id == "self" else _model(self.hints.get(node.id))
        if isinstance(node, ast.Attribute) and (cls := self._type(node.value)) is not None and issubclass(cls, BaseModel):
            field = cls.model_fields.get(node.attr)
            return _model(field.annotation) if field else None
        return None

    @staticmethod
    def _name(node: ast.expr) -> str | None:
        return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


class _ProblemsAsTuples(ast.NodeTransformer):
    """`Problem(key, value, rule)` read as the tuple it is."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "Problem" and not node.keywords:
            return ast.copy_location(ast.Tuple(elts=node.args, ctx=ast.Load()), node)
        return node


def _targets(target: ast.expr) -> Iterator[tuple[str, int | None]]:
    """The names a loop target binds, each with its position in the item (None: the whole item)."""
    parts = target.elts if isinstance(target, ast.Tuple) else [target]
    for position, part in enumerate(parts):
        for name in ast.walk(part):
            if isinstance(name, ast.Name):
                yield name.id, position if isinstance(target, ast.Tuple) else None


def _in_order(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and everything below it, in source order."""
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _in_order(child)


def _model(hint: Any) -> type | None:
    """The class a type hint holds (optionally)."""
    if isinstance(hint, type):
        return hint
    if typing.get_origin(hint) in (typing.Union, UnionType):
        return next((c for a in typing.get_args(hint) if (c := _model(a)) is not None), None)
    return None
