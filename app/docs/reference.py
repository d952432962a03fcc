"""The stack config reference, `docs/config-reference.md`, generated from the config models.

Every key as a stack file writes it (`trainstack:gpuPools[].reservation.name`, `gcp:zone`), with
its type, default, description (the field's docstring where its model declares it: a component's
spec, infra/stack.py, infra/fleet_stack.py, workloads/spec.py, app/deploy/stack_file.py) and
rules: the field's own (its Annotated rule, range or length) and, per section, the rules across
keys its model validators check, their text read from the rules' source (`app.rule_text`). Then
the rules `validate` checks beyond the models (a workload against its platform, each framework's),
and the `platform` contract a platform stack exports (infra/contract.py). `python -m
trainstack.app.docs.reference` writes the file; tests/test_reference.py checks it is current.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import re
import sys
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal

import annotated_types
from pydantic import AfterValidator, BaseModel, BeforeValidator
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from trainstack.app.deploy import stack_file
from trainstack.app.docs import rule_text
from trainstack.infra import contract
from trainstack.infra import fleet_stack as fleet
from trainstack.workloads import launchers

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "docs" / "config-reference.md"

# The kinds of stack: what each is, by the model that reads its config.
STACKS: list[tuple[str, type[BaseModel]]] = [
    ("Platform stack", stack_file.PlatformStackFile),
    ("Workload stack", stack_file.WorkloadStackFile),
    ("Fleet stack", fleet.FleetStackConfig),
]


class UndocumentedError(Exception):
    """A key or contract output without a description."""


@dataclass(frozen=True)
class Row:
    """One key: where it is written (one path per place its section sits), and what it takes."""

    keys: list[str]
    type: str
    default: str
    description: str
    rules: list[str]


@dataclass
class Section:
    """A top-level key holding an object, with the stacks that have it and its nested keys."""

    model: type[BaseModel]
    paths: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Descriptions: the attribute docstrings under each field.


@functools.cache
def _module_tree(module: str) -> ast.Module:
    """A module's syntax tree, parsed once (inspect finds a class's source by parsing its module)."""
    return ast.parse(inspect.getsource(sys.modules[module]))


def descriptions(model: type) -> dict[str, str]:
    """Each field's docstring (the string statement right below it, in the class that declares the
    field: the model or a base of it), whitespace collapsed."""
    found: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if issubclass(cls, BaseModel) and cls is not BaseModel:
            found |= _declared(cls)
    return found


def _declared(model: type) -> dict[str, str]:
    """The docstrings of the fields `model`'s own class body declares."""
    (tree,) = [c for c in _module_tree(model.__module__).body if isinstance(c, ast.ClassDef) and c.name == model.__qualname__]
    found = {}
    for cls in [*(c for c in reversed(model.__mro__[1:]) if c.__module__.startswith("trainstack.")), model]:
        (tree,) = [c for c in _module_tree(cls.__module__).body if isinstance(c, ast.ClassDef) and c.name == cls.__qualname__]
        for statement, following in zip(tree.body, tree.body[1:], strict=False):
            if (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                found[statement.target.id] = _prose(following.value.value)
    return found


def _prose(text: str) -> str:
    return " ".join(inspect.cleandoc(text).split())


# ---------------------------------------------------------------------------------------------
# Keys


def rows(model: type[BaseModel], prefixes: list[str], nested_keys: bool = True) -> Iterator[Row]:
    """The keys of `model` under each of `prefixes` (`""` at the top), nested objects' keys after
    the key that holds them (unless not `nested_keys`). UndocumentedError for a field without a
    description."""
    documented = descriptions(model)
    for name, info in model.model_fields.items():
        key = info.alias or name
        keys = [f"{p}.{key}" if p else key for p in prefixes]
        if name not in documented:
            raise UndocumentedError(f"{keys[0]} ({model.__name__}.{name}) has no description: write a docstring under the field")
        yield Row(keys, _type(info.annotation), _default(info), documented[name], field_rules(info))
        nested = _nested(info.annotation)
        if nested is not None and nested_keys:
            yield from rows(nested[0], [k + nested[1] for k in keys])


def _nested(annotation: Any, suffix: str = "") -> tuple[type[BaseModel], str] | None:
    """The model a field holds, and how its keys continue the field's (`[]` for list items,
    `.<NAME>` for a map's values); None for a field of plain values."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, suffix
    if origin is Annotated:
        return _nested(args[0], suffix)
    if origin is list:
        return _nested(args[0], suffix + "[]")
    if origin is dict:
        return _nested(args[1], suffix + ".<NAME>")
    if origin in (typing.Union, UnionType):
        return next((found for a in args if (found := _nested(a, suffix)) is not None), None)
    return None


def _type(annotation: Any) -> str:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return _type(args[0])
    if origin in (typing.Union, UnionType):
        return " or ".join(_type(a) for a in args if a is not type(None))
    if origin is Literal:
        return "one of " + ", ".join(f"`{a}`" for a in args)
    if origin is list:
        return f"list of {_type(args[0])}"
    if origin is dict:
        return f"map of {_type(args[0])} to {_type(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object"
    return {str: "string", int: "integer", bool: "boolean", float: "number"}[annotation]


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    value = info.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    return f"`{json.dumps(value, default=lambda m: m.model_dump(mode='json', by_alias=True, exclude_defaults=True))}`"


def field_rules(info: FieldInfo) -> list[str]:
    """A field's own rules: its Annotated rules, ranges and lengths, its items' and names' too."""
    return list(dict.fromkeys(_metadata_rules(info.metadata, info.annotation) + _annotation_rules(info.annotation, "")))


def _annotation_rules(annotation: Any, what: str) -> list[str]:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return [what + r for r in _metadata_rules(list(args[1:]), args[0])] + _annotation_rules(args[0], what)
    if origin in (typing.Union, UnionType):
        return [r for a in args for r in _annotation_rules(a, what)]
    if origin is list:
        return _annotation_rules(args[0], "each item ")
    if origin is dict:
        return _annotation_rules(args[0], "each name ") + _annotation_rules(args[1], "each value ")
    return []


def _metadata_rules(metadata: list[Any], annotation: Any) -> list[str]:
    unit = "characters" if _type(annotation) == "string" else "items"
    low = high = None
    out = []
    for item in metadata:
        if isinstance(item, FieldInfo):
            out += _metadata_rules(item.metadata, annotation)
        elif isinstance(item, annotated_types.Ge):
            low = item.ge
        elif isinstance(item, annotated_types.Le):
            high = item.le
        elif isinstance(item, annotated_types.MinLen):
            out.append(f"at least {item.min_length} {unit[:-1] if item.min_length == 1 else unit}")
        elif isinstance(item, annotated_types.MaxLen):
            out.append(f"at most {item.max_length} {unit}")
        elif isinstance(item, (AfterValidator, BeforeValidator)):
            rule = getattr(item.func, "__wrapped__", None)
            out += rule_text.field_rule(rule) if rule is not None else [r.text for r in rule_text.reports(item.func)]
    if low is not None or high is not None:
        out.insert(0, f"from {low} to {high}" if low is not None and high is not None else f"at least {low}" if high is None else f"at most {high}")
    return out


# ---------------------------------------------------------------------------------------------
# Rules across keys


def cross_rules(model: type[BaseModel], prefix: str, nested_models: bool = True) -> list[tuple[str, str]]:
    """(key, rule) of the model validators of `model` and (unless not `nested_models`) of the
    models it holds, each key as written under `prefix` (a rule's absolute key as it is)."""
    found = []
    for decorator in model.__pydantic_decorators__.model_validators.values():
        found += [(_key(prefix, r.key), r.text) for r in rule_text.reports(decorator.func, model)]
    for name, info in model.model_fields.items() if nested_models else ():
        nested = _nested(info.annotation)
        if nested is not None:
            key = info.alias or name
            found += cross_rules(nested[0], (f"{prefix}.{key}" if prefix else key) + nested[1])
    return list(dict.fromkeys(found))


def _key(prefix: str, parts: tuple[str, ...]) -> str:
    absolute = bool(parts) and ":" in parts[0]
    out = "" if absolute else prefix
    for part in parts:
        out += part if part == "[]" or not out else f".{part}"
    return out


# ---------------------------------------------------------------------------------------------
# Outputs


def outputs() -> list[tuple[list[str], str]]:
    """(output keys, description) of the `platform` contract's fields, from the `Attributes:` of
    Contract's docstring (`name[, name]: text`, continued on deeper-indented lines), in field order."""
    doc = inspect.cleandoc(contract.Contract.__doc__ or "")
    groups: list[tuple[list[str], str]] = []
    for line in doc.partition("Attributes:")[2].splitlines():
        if match := re.fullmatch(r"    ([a-z_]+(?:, [a-z_]+)*): (.*)", line):
            groups.append((match.group(1).split(", "), match.group(2)))
        elif line.startswith("        ") and groups:
            groups[-1] = (groups[-1][0], f"{groups[-1][1]} {line.strip()}")
    described = {name for names, _ in groups for name in names}
    for f in fields(contract.Contract):
        if f.name not in described:
            raise UndocumentedError(f"platform contract field {f.name} has no description in Contract's Attributes")
    return [([f"{contract.OUTPUT}.{to_camel(n)}" for n in names], text) for names, text in groups]


# ---------------------------------------------------------------------------------------------
# The document


def sections() -> list[Section]:
    """The top-level keys that hold objects, in the order the stacks list them, each once."""
    found: dict[type[BaseModel], Section] = {}
    for kind, model in STACKS:
        for name, info in model.model_fields.items():
            nested = _nested(info.annotation)
            if nested is None:
                continue
            section = found.setdefault(nested[0], Section(nested[0]))
            path = (info.alias or name) + nested[1]
            section.paths += [path] if path not in section.paths else []
            section.kinds += [kind] if kind not in section.kinds else []
    return list(found.values())


def render() -> str:
    """The reference as Markdown."""
    out = [
        "# Stack config reference",
        "",
        "Generated by `python -m trainstack.app.docs.reference` from the config models (infra/stack.py, infra/fleet_stack.py:",
        "each key's docstring, type, default and rules) and the platform contract (infra/contract.py); do not edit",
        "it by hand. A key is written as `pulumi config set --path` takes it: `[]` stands for a list index",
        "(`trainstack:gpuPools[0].name`), `<NAME>` for a name of your choice. In a rule, `…` stands for a value",
        "the message shows (the key's value, a limit, a machine).",
        "",
    ]
    for kind, model in STACKS:
        out += [f"## {kind}", "", _prose(model.__doc__ or ""), ""]
        out += _table(list(rows(model, [""], nested_keys=False)))
        out += _bullets("Rules across sections", cross_rules(model, "", nested_models=False))
    for section in sections():
        out += [f"## {', '.join(f'`{p}`' for p in section.paths)}", ""]
        if section.model.__doc__:
            out += [_prose(section.model.__doc__), ""]
        out += [f"In: {', '.join(k.lower() + 's' for k in section.kinds)}.", ""]
        out += _table(list(rows(section.model, section.paths)))
        out += _bullets("Rules across keys", _per_path(section))
    out += _checked()
    out += ["## Outputs", "", _prose(contract.__doc__.split("\n\n")[1]), ""]
    out += ["| output | description |", "|---|---|"]
    out += [f"| {'<br>'.join(f'`{k}`' for k in keys)} | {_cell(text)} |" for keys, text in outputs()]
    out += ["", f"`{contract.OUTPUT}.version` is the contract's version, {contract.CONTRACT_VERSION}; the secret output is `{contract.KUBECONFIG_OUTPUT}`.", ""]
    return "\n".join(out)


def _checked() -> list[str]:
    """What `trainstack validate` (and `pulumi up`) checks beyond each section's own rules: a
    workload against its platform (this stack's pools, or the contract of the platform it names),
    its memory estimate and names, a fleet's workers against one another, the image build, and
    each framework's own rules."""
    found = [
        (_key("", r.key), r.text)
        for kind in (stack_file.WorkloadStack, stack_file.PlatformStack, stack_file.FleetStack)
        for r in rule_text.reports(kind.check, kind)
    ]
    out = ["## Rules checked with the platform, the image and the framework", "", _prose(_checked.__doc__ or ""), ""]
    out += _bullets("For every stack", list(dict.fromkeys(found)))
    for framework, launcher in launchers.LAUNCHERS.items():
        out += _bullets(f"With `framework: {framework}`", [(_key("", r.key), r.text) for r in rule_text.reports(type(launcher).problems, type(launcher))])
    return out


def _table(found: list[Row]) -> list[str]:
    out = ["| key | type | default | description | rules |", "|---|---|---|---|---|"]
    for row in found:
        keys = "<br>".join(f"`{k}`" for k in row.keys)
        out.append(f"| {keys} | {_cell(row.type)} | {row.default} | {_cell(row.description)} | {'<br>'.join(_cell(r) for r in row.rules)} |")
    return [*out, ""]


def _per_path(section: Section) -> list[tuple[list[str], str]]:
    """The section's rules across keys, each with its key under every path of the section."""
    found: dict[str, list[str]] = {}
    for path in section.paths:
        for key, text in cross_rules(section.model, path):
            found.setdefault(text, [])
            found[text] += [key] if key not in found[text] else []
    return [(keys, text) for text, keys in found.items()]


def _bullets(title: str, found: list[tuple[str, str]] | list[tuple[list[str], str]]) -> list[str]:
    if not found:
        return []
    lines = []
    for key, text in found:
        keys = ", ".join(f"`{k}`" for k in ([key] if isinstance(key, str) else key) if k)
        lines.append(f"- {keys + ': ' if keys else ''}{_cell(text)}")
    return [f"{title}:", "", *lines, ""]


def _cell(text: str) -> str:
    """Text for Markdown: no pipes, and `<...>` outside code shown, not read as HTML."""
    parts = text.split("`")
    parts = [p if i % 2 else p.replace("<", "&lt;") for i, p in enumerate(parts)]
    return "`".join(parts).replace("|", "\\|")


def main() -> None:
    """Write docs/config-reference.md."""
    OUTPUT.write_text(render())
    print(f"wrote {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
