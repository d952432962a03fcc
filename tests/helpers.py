"""Shared test helpers: render a stack (or a piece of one) under the mock engine."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel, ValidationError

from trainstack.app.deploy.stack_file import PLATFORM, PLATFORM_NAME, WORKLOAD_NAME, JobContext, PlatformStackFile, WorkloadStackFile
from trainstack.app.deploy.stacks import project_root, raw_stack_config
from trainstack.app.plan import engine
from trainstack.app.plan.plan import Plan
from trainstack.app.plan.recorder import Registration
from trainstack.core.errors import ArgsError
from trainstack.infra.fleet_stack import FleetStackConfig
from trainstack.infra.stack import StackConfig, WorkloadStackConfig
from trainstack.workloads.spec import WorkloadSpec

_T = TypeVar("_T")


def merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge `changes` into a copy of `base`; a value of None deletes the key."""
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def raw_config(stack: str = "a3ultra-405b", **changes: Any) -> dict[str, Any]:
    """A stack's raw config with changes, keyed like `trainstack_gpuPool=` -> `trainstack:gpuPool`."""
    return merge(raw_stack_config(stack), {k.replace("_", ":", 1): v for k, v in changes.items()})


def present(value: _T | None) -> _T:
    """`value`, which the test expects to be set (asserted): an Optional narrowed for the type checker."""
    assert value is not None, "expected a value, got None"
    return value


def platform_config(config: StackConfig | WorkloadStackConfig | FleetStackConfig | None) -> StackConfig:
    """`config`, asserted to be a platform stack's (what `load` returns for a stack without `trainstack:platform`)."""
    assert isinstance(config, StackConfig), f"expected a platform stack's config, got {type(config).__name__}"
    return config


def load_platform(stack: str, raw: dict[str, Any]) -> PlatformStackFile:
    """`raw` loaded as a platform stack file (its platform and its job)."""
    return PLATFORM.load(stack, raw)


def workload_of(config: PlatformStackFile | WorkloadStackFile | JobContext) -> WorkloadSpec:
    """The workload section of a stack file (or of its context), asserted present."""
    return present(config.workload)


def render(stack: str = "a3ultra-405b", raw: dict[str, Any] | None = None) -> engine.Rendered:
    """The whole program of `stack` (or of `raw` under that stack name), offline."""
    return engine.run(stack, raw if raw is not None else raw_stack_config(stack))


def render_with(body: Callable[[JobContext], Any], stack: str = "a3ultra-405b", raw: dict[str, Any] | None = None) -> engine.Rendered:
    """Run `body(ctx)` alone under the mock engine: for testing one component."""
    raw = raw if raw is not None else raw_stack_config(stack)
    ctx = PLATFORM.context(stack, PLATFORM.load(stack, raw), project_root())
    return engine.execute(ctx, raw, lambda: body(ctx))


def named(actual: str, role: str) -> bool:
    """Whether a resource's name is `role` as the program names it: `role` itself (a component's
    own child, or a piece rendered alone), else under the TrainingPlatform or TrainingWorkload
    (`platform-<role>`, `workload-<role>`: infra/platform.py Place)."""
    return actual in (role, f"{PLATFORM_NAME}-{role}", f"{WORKLOAD_NAME}-{role}")


def of_type(rendered: engine.Rendered, type_token: str) -> list[Registration]:
    return [r for r in rendered.registrations if r.type == type_token]


def one(rendered: engine.Rendered, type_token: str, name: str | None = None) -> Registration:
    found = [r for r in of_type(rendered, type_token) if name is None or named(r.name, name)]
    assert len(found) == 1, f"expected one {type_token} {name or ''}, found {[r.name for r in found]}"
    return found[0]


def plan_inputs(plan: Plan, type_token: str, name: str | None = None) -> dict[str, Any]:
    """The inputs of the one resource of `type_token` (named `name`) in a plan."""
    (found,) = [r["inputs"] for r in plan.resources if r["type"] == type_token and (name is None or named(r["name"], name))]
    return found


def job_pod_template(plan: Plan) -> dict[str, Any]:
    """The training pod template of a plan's JobSet."""
    jobset = plan_inputs(plan, "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet")
    return jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]


def construct(component: type, args: Any) -> tuple[ArgsError | None, list[str]]:
    """Construct `component("res", args)` under the mock engine: the ArgsError it raised (or
    None) and the types of everything registered."""
    caught: list[ArgsError] = []

    def body(ctx: Any) -> None:
        try:
            component("res", args)
        except ArgsError as exc:
            caught.append(exc)

    rendered = render_with(body)
    return (caught[0] if caught else None), [r.type for r in rendered.registrations if r.type != "pulumi:pulumi:Stack"]


def refuses(model: type[BaseModel], keys: dict[str, Any], key: tuple[str | int, ...], text: str) -> None:
    """A spec's rule refuses `keys` through its one door, the spec's model: an error at `key`, as
    the user writes it, whose message holds `text`."""
    with pytest.raises(ValidationError) as refused:
        model.model_validate(keys)
    found = [(tuple(e["loc"]), e["msg"]) for e in refused.value.errors(include_url=False)]
    assert [msg for loc, msg in found if loc == key and text in msg], found
