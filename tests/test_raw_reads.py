"""Every read of a stack file before its models validate it is total: any YAML value at any
top-level key, or at any key of `trainstack:fleet`, ends in `validate`'s own error (the key as
written, the value, the rule) or in a plan, on `validate` and `plan` alike, never a traceback.

The keys are the models' own (a platform's, a workload's on a platform, a fleet's), so a key added
to a model is fed every type too. A platform stack's outputs are rendered once and reused: the
path that reads them is the program's, only its result is cached.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan import engine
from trainstack.app.plan.plan import render
from trainstack.core.errors import ConfigError
from trainstack.infra import fleet_stack as fleet
from trainstack.infra.stack import StackConfig, WorkloadStackConfig

# One value of each YAML type: null, bool, int, float, str, sequence, mapping.
VALUES: tuple[Any, ...] = (None, True, 7, 1.5, "text", ["text"], {"text": 1})
STACKS: dict[str, type[BaseModel]] = {"a3ultra-platform": StackConfig, "a3ultra-405b-job": WorkloadStackConfig, "a3ultra-fleet": fleet.FleetStackConfig}
FLEET = "a3ultra-fleet"


def top_level(model: type[BaseModel]) -> list[str]:
    return [f.alias for f in model.model_fields.values() if f.alias]


def cases() -> Iterator[Any]:
    """(stack, the key as written, where it is: top, fleet or worker, its name there, the value)."""
    for stack, model in STACKS.items():
        for key in top_level(model):
            for value in VALUES:
                yield pytest.param(stack, key, "top", key, value, id=f"{stack}:{key}={value!r}")
    for where, model, prefix in (("fleet", fleet.FleetConfig, fleet.KEY), ("worker", fleet.FleetWorker, f"{fleet.KEY}.workers[0]")):
        for name in top_level(model):
            for value in VALUES:
                yield pytest.param(FLEET, f"{prefix}.{name}", where, name, value, id=f"{where}.{name}={value!r}")


@pytest.fixture(autouse=True)
def _platforms_rendered_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "_platform_outputs", _cached_outputs)


@functools.cache
def _rendered_outputs(stack: str, platform: str, key: str, what: str) -> dict[str, Any]:
    return _ORIGINAL(stack, platform, key, what)


def _cached_outputs(stack: str, platform: str, key: str, what: str = "platform") -> dict[str, Any]:
    return _rendered_outputs(stack, platform, key, what)


_ORIGINAL = engine._platform_outputs


def variant(stack: str, where: str, name: str, value: Any) -> dict[str, Any]:
    raw = raw_stack_config(stack)
    if where == "worker":
        workers = raw[fleet.KEY]["workers"]
        return {**raw, fleet.KEY: {**raw[fleet.KEY], "workers": [{**workers[0], name: value}, *workers[1:]]}}
    if where == "fleet":
        return {**raw, fleet.KEY: {**raw[fleet.KEY], name: value}}
    return {**raw, name: value}


@pytest.mark.parametrize(("stack", "key", "where", "name", "value"), list(cases()))
def test_any_yaml_value_gets_validates_error_or_a_plan(stack: str, key: str, where: str, name: str, value: Any) -> None:
    raw = variant(stack, where, name, value)
    try:
        engine.validate_offline(stack, raw)
    except ConfigError as exc:
        refused = str(exc)
        assert key in refused, refused
        with pytest.raises(ConfigError) as planned:
            render(stack, raw)
        assert str(planned.value) == refused
        return
    render(stack, raw)  # everything validate accepts plans
