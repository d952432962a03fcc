"""The Pulumi SDK internals trainstack relies on, each named with the signature it is called with.

pyproject.toml pins the SDK to the minor release these were read from. When a release drops or changes
one, the test names it and where trainstack uses it, so moving the pin is a decision, not a surprise.

On a real `pulumi up` only one internal remains (`pulumi.runtime.config.CONFIG`, the program's config
read whole, app/program.py); the platform stack is read through the public `pulumi.runtime.invoke`
(infra/remote.py). The others run only under the offline plan (`pulumi.runtime.set_mocks`).
"""

from __future__ import annotations

import contextvars
import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest

# (module, attribute, its parameters as called, where trainstack calls it)
CALLED = [
    ("pulumi.runtime.stack", "run_pulumi_func", ["func"], "app/plan/engine.py: runs the program under the mocks"),
    ("pulumi.runtime.sync_await", "_sync_await", ["awaitable"], "app/plan/engine.py: waits for the program and its outputs"),
    ("pulumi._types", "input_type_types", ["input_type_cls"], "app/plan/inputcheck.py: an input type's fields"),
    ("pulumi._types", "is_input_type", ["cls"], "app/plan/inputcheck.py: whether a hint is an input type"),
    ("pulumi.runtime.rpc", "deserialize_properties", ["props_struct", "keep_unknowns", "keep_internal"], "app/plan/recorder.py: a registration's inputs"),
    ("pulumi.runtime.rpc", "is_rpc_secret", ["value"], "app/plan/recorder.py: a secret input"),
    ("pulumi.runtime.mocks:MockMonitor", "__init__", ["self", "mocks"], "app/plan/recorder.py: RecordingMonitor's base"),
    ("pulumi.runtime.mocks:MockMonitor", "RegisterResource", ["self", "request"], "app/plan/recorder.py: overridden to record"),
    ("pulumi.runtime.mocks:MockMonitor", "ReadResource", ["self", "request"], "app/plan/recorder.py: overridden to record"),
]
# (module, attribute, what it is, where trainstack reads it)
VALUES: list[tuple[str, str, Any, str]] = [
    ("pulumi.runtime.config", "CONFIG", contextvars.ContextVar, "app/program.py: the stack's config, read whole (real `pulumi up`)"),
    ("pulumi.runtime.settings", "ROOT", contextvars.ContextVar, "app/plan/engine.py: the root resource reset between plans"),
    ("pulumi.runtime.rpc", "UNKNOWN", str, "app/plan/recorder.py: an unknown input"),
]


def _resolve(path: str) -> Any:
    """`module` or `module:Class`."""
    module, _, owner = path.partition(":")
    found = importlib.import_module(module)
    return getattr(found, owner) if owner else found


@pytest.mark.parametrize(("path", "name", "parameters", "used"), CALLED, ids=[f"{p}.{n}" for p, n, _, _ in CALLED])
def test_an_internal_called_keeps_its_signature(path: str, name: str, parameters: list[str], used: str) -> None:
    owner = _resolve(path)
    assert hasattr(owner, name), f"pulumi {_version()} has no {path}.{name}, which {used}"
    found = list(inspect.signature(getattr(owner, name)).parameters)
    assert found[: len(parameters)] == parameters, f"pulumi {_version()} changed {path}.{name}{tuple(found)}, which {used} calls as {tuple(parameters)}"


@pytest.mark.parametrize(("path", "name", "kind", "used"), VALUES, ids=[f"{p}.{n}" for p, n, _, _ in VALUES])
def test_an_internal_read_keeps_its_kind(path: str, name: str, kind: type, used: str) -> None:
    owner = importlib.import_module(path)
    assert isinstance(getattr(owner, name, None), kind), f"pulumi {_version()}: {path}.{name} is no longer a {kind.__name__}, which {used}"


@pytest.mark.parametrize(("name", "used"), [(n, u) for _, n, _, u in [*CALLED, *VALUES]])
def test_each_internal_listed_is_still_used_where_named(name: str, used: str) -> None:
    """The list holds what trainstack uses: one no longer used where named is removed from it."""
    assert name in (Path(__file__).parents[1] / used.split(":")[0]).read_text(), f"{name} is no longer used in {used.split(':')[0]}"


def _version() -> str:
    from importlib.metadata import version

    return version("pulumi")
