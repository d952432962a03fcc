"""Check recorded inputs against the provider SDKs' `@pulumi.input_type` Args classes.

The mock engine accepts any input key: a misspelled nested key (`machineTypo`) reaches the mock
silently, while a real provider would reject or ignore it. Each SDK describes every property of
every resource in its Args classes, so an offline plan can catch what a real preview catches.
Kubernetes objects are checked by their schemas instead (trainstack.app.schemas).
"""

from __future__ import annotations

import collections.abc
import difflib
import importlib
import typing
from functools import cache
from typing import Any

from pulumi import _types  # an SDK internal: pinned and guarded, tests/test_pulumi_internals.py

from trainstack.app.plan.recorder import Registration

# Inputs the engine adds to every resource of a package, not part of any Args class.
_ENGINE_KEYS = {"__defaults", "__meta"}
_PACKAGES = {"gcp": "pulumi_gcp", "command": "pulumi_command"}
# Kubernetes resources checked here (objects are checked against their OpenAPI schemas).
_KUBERNETES_ARGS = {
    "kubernetes:helm.sh/v3:Release": ("pulumi_kubernetes.helm.v3", "ReleaseArgs"),
    "kubernetes:helm.sh/v4:Chart": ("pulumi_kubernetes.helm.v4", "ChartArgs"),
    "pulumi:providers:kubernetes": ("pulumi_kubernetes", "ProviderArgs"),
}
# Free-form maps whose keys are data, not properties (labels, chart values, ...).
_FREE_FORM = {"values", "labels", "resourceLabels", "userLabels", "effectiveLabels", "metadata", "triggers", "environment"}


@cache
def args_class(type_token: str) -> type | None:
    """The Args class of a resource type token, or None when the plan has no SDK schema for it."""
    if type_token in _KUBERNETES_ARGS:
        module, name = _KUBERNETES_ARGS[type_token]
        return getattr(importlib.import_module(module), name, None)
    package, _, rest = type_token.partition(":")
    if type_token.startswith("pulumi:providers:"):
        package, rest = type_token.split(":")[2], "index/provider:Provider"
    if package not in _PACKAGES:
        return None
    module_path, _, cls = rest.partition(":")
    module = module_path.split("/")[0]
    target = _PACKAGES[package] if module == "index" else f"{_PACKAGES[package]}.{module}"
    return getattr(importlib.import_module(target), f"{cls}Args", None)


@cache
def _properties(cls: type) -> dict[str, Any]:
    return _types.input_type_types(cls)


def _input_types(hint: Any) -> list[type]:
    """Input-type classes reachable from a type hint (through Optional, Union, Sequence, Mapping)."""
    if isinstance(hint, type) and _types.is_input_type(hint):
        return [hint]
    found: list[type] = []
    for arg in typing.get_args(hint):
        found += _input_types(arg)
    return found


def _is_sequence(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    return origin in (list, collections.abc.Sequence) or any(_is_sequence(a) for a in typing.get_args(hint) if typing.get_origin(a))


def _is_mapping(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    return origin in (dict, collections.abc.Mapping) or any(_is_mapping(a) for a in typing.get_args(hint) if typing.get_origin(a))


def check_value(cls: type, value: dict[str, Any], path: str) -> list[str]:
    """Problems with the keys of `value` as an instance of input type `cls`."""
    props = _properties(cls)
    problems: list[str] = []
    for key, sub in value.items():
        if key in _ENGINE_KEYS:
            continue
        if key not in props:
            close = _close_match(key, props)
            hint = f"; did you mean {close!r}?" if close else ""
            problems.append(f"{path}{key}: not a property of {cls.__name__}{hint}")
            continue
        if key in _FREE_FORM or sub is None:
            continue
        hint = props[key]
        nested = _input_types(hint)
        if not nested:
            continue
        if isinstance(sub, dict) and not _is_mapping(hint):
            problems += check_value(nested[0], sub, f"{path}{key}.")
        elif isinstance(sub, list):
            for i, item in enumerate(sub):
                if isinstance(item, dict):
                    problems += check_value(nested[0], item, f"{path}{key}[{i}].")
        elif isinstance(sub, dict):
            for k, item in sub.items():
                if isinstance(item, dict):
                    problems += check_value(nested[0], item, f"{path}{key}.{k}.")
    return problems


def _close_match(key: str, props: dict[str, Any]) -> str | None:
    matches = difflib.get_close_matches(key, list(props), n=1, cutoff=0.75)
    return matches[0] if matches else None


def check(registrations: list[Registration]) -> list[str]:
    """Every input that the resource's SDK schema does not know, as `<urn>: <path>: <problem>`."""
    problems: list[str] = []
    for reg in registrations:
        if not reg.custom:
            continue
        cls = args_class(reg.type)
        if cls is None:
            continue
        problems += [f"{reg.type} {reg.name!r}: {p}" for p in check_value(cls, reg.inputs, "")]
    return problems
