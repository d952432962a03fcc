"""Run the real program under Pulumi's mock engine and return what it registered.

The runtime is reset for each stack (a new event loop, no root resource), so one interpreter
renders many stacks in turn and pays the provider import floor once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config
from pulumi.runtime import mocks, settings

# SDK internals (run_pulumi_func, _sync_await, settings.ROOT): pinned and guarded, tests/test_pulumi_internals.py.
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from trainstack.app.deploy import program, secrets, validation
from trainstack.app.deploy.stack_file import JobContext
from trainstack.app.deploy.stacks import project_root, raw_stack_config, stack_names
from trainstack.app.plan import crdcheck
from trainstack.app.plan.recorder import RecordingMonitor, Registration, redact
from trainstack.core.errors import ConfigError, describe
from trainstack.core.testing import SECRET, FakeGcp
from trainstack.infra import fleet_stack as fleet
from trainstack.infra.contract import OUTPUT

PROJECT = "trainstack"


@dataclass
class Rendered:
    """The raw result of one mock run, before it is shaped into a plan."""

    stack: str
    context: JobContext
    registrations: list[Registration]
    outputs: dict[str, Any]


def run(stack: str, raw: dict[str, Any], references: dict[str, dict[str, Any]] | None = None) -> Rendered:
    """Validate `raw` (ConfigError before anything registers), then run the program offline;
    ConfigError too when a custom resource it renders fails its bundled CRD schema.

    A workload stack on a trainstack platform stack (`trainstack:platform.stack`) reads that
    stack's outputs: they are rendered first, offline, from the platform's own stack file (the
    last part of its name), so the plan shows the real names; or they are given, `references`
    (stack name -> its outputs), for stacks without a stack file (a bench's copies)."""
    own = references is None
    _RENDERING.append(stack)
    try:
        references = _references(stack, raw) if references is None else references
        rendered = execute(_validate(stack, raw, references), raw, program.main, references)
    finally:
        _RENDERING.pop()
    if found := crdcheck.problems(rendered.registrations):
        raise ConfigError(stack, [describe(p) for p in found])
    if own:
        _OUTPUTS[_key(stack, raw)] = rendered.outputs
    return rendered


_OUTPUTS: dict[tuple[str, str], dict[str, Any]] = {}
"""The outputs of each stack this process rendered from its own config (rendering is deterministic):
a workload or fleet stack reads its platforms' from here instead of rendering them again."""


_RENDERING: list[str] = []
"""The stacks whose rendering is under way, outermost first: a worker that admits a fleet (its
`trainstack:cluster.admitFleets`) reads the fleet's outputs, and the fleet its workers'."""


def _key(stack: str, raw: dict[str, Any]) -> tuple[str, str]:
    return stack, json.dumps(raw, sort_keys=True, default=repr)


def validate_offline(stack: str, raw: dict[str, Any]) -> JobContext:
    """Every check `pulumi up` makes before it registers a resource, offline: for a workload stack
    on a platform stack, against that platform's outputs rendered from its own stack file."""
    return _validate(stack, raw, _references(stack, raw))


def load_stack(stack: str, root: Path | None = None) -> JobContext:
    """A stack file's validated context (UnknownStackError, or ConfigError listing every problem)."""
    return validate_offline(stack, raw_stack_config(stack, root))


def _validate(stack: str, raw: dict[str, Any], references: dict[str, dict[str, Any]]) -> JobContext:
    output = next((outputs.get(OUTPUT) for outputs in references.values()), None)
    workers = {name: outputs.get(OUTPUT) for name, outputs in references.items()}
    return validation.validate(stack, raw, project_root(), output, workers)


def _references(stack: str, raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The outputs of the platform stacks `raw` references: a fleet's workers' (the fleet's config
    validated first, so any value there gets `validate`'s error), or its platform's."""
    if fleet.is_fleet(raw):
        workers = fleet.load(stack, raw).fleet.workers
        return {w.stack: _platform_outputs(stack, w.stack, f"{fleet.KEY}.workers[{i}].stack") for i, w in enumerate(workers)}
    ref = raw.get("trainstack:platform")
    platform = ref.get("stack") if isinstance(ref, dict) else None
    if isinstance(platform, str):
        return {platform: _platform_outputs(stack, platform, "trainstack:platform.stack")}
    return _admitted_fleets(stack, raw)


def _admitted_fleets(stack: str, raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The outputs of the fleets a platform admits (`trainstack:cluster.admitFleets`, where it is a
    list of names: any other value gets `validate`'s error), each rendered from its stack file. A
    fleet whose rendering is under way (it reads this platform as a worker) gives no egress: the
    worker's outputs, all the fleet reads, do not depend on it."""
    cluster = raw.get("trainstack:cluster")
    names = cluster.get("admitFleets") if isinstance(cluster, dict) else None
    if not isinstance(names, list):
        return {}
    return {
        name: {fleet.EGRESS_OUTPUT: []}
        if name.rsplit("/", 1)[-1] in _RENDERING
        else _platform_outputs(stack, name, f"trainstack:cluster.admitFleets[{i}]", "fleet")
        for i, name in enumerate(names)
        if isinstance(name, str)
    }


def _platform_outputs(stack: str, platform: str, key: str, what: str = "platform") -> dict[str, Any]:
    """The outputs of `platform` (the stack file of its last part, rendered); ConfigError naming
    `key`, where the stack file names it, when there is no such file (`what`: the stack's kind)."""
    name = platform.rsplit("/", 1)[-1]
    if name not in stack_names():
        raise ConfigError(stack, [f"{key} = {platform!r}: no stacks/Pulumi.{name}.yaml here to render that {what} offline"])
    raw = raw_stack_config(name)
    return _OUTPUTS.get(_key(name, raw)) or run(name, raw).outputs


def execute(
    ctx: JobContext,
    raw: dict[str, Any],
    body: Callable[[], Any],
    references: dict[str, dict[str, Any]] | None = None,
) -> Rendered:
    """Run `body` under the mock engine with `raw` as the stack's Pulumi config; `references`
    are the outputs of the stacks a StackReference may read."""
    registrations, outputs = mocked(ctx.stack, FakeGcp(ctx.project, ctx.region, ctx.zone, references or {}), raw, body)
    return Rendered(ctx.stack, ctx, registrations, outputs)


def mocked(stack: str, fake: FakeGcp, raw: dict[str, Any], body: Callable[[], Any], project: str = PROJECT) -> tuple[list[Registration], dict[str, Any]]:
    """Run `body` as Pulumi project `project`'s stack `stack` under the mock engine answered by
    `fake`, `raw` its config; what it registered and its stack outputs."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        settings.ROOT.set(None)
        monitor = RecordingMonitor(fake)
        mocks.set_mocks(fake, project=project, stack=stack, preview=False, monitor=monitor)
        # The engine marks a key secret when its value holds an encrypted leaf, as the CLI does.
        # A key set to null is no config value at all, as for the CLI.
        config = {k: _encode(v) for k, v in raw.items() if v is not None}
        runtime_config.set_all_config(config, sorted(k for k, v in raw.items() if secrets.has_secure_leaf(v)))
        _sync_await(run_pulumi_func(body))
        outputs = _resolve_outputs()
    finally:
        asyncio.set_event_loop(None)
        loop.close()
    return monitor.registrations, outputs


def _encode(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _resolve_outputs() -> dict[str, Any]:
    root = settings.get_root_resource()
    resolved: dict[str, Any] = {}
    for name, value in sorted(getattr(root, "outputs", {}).items()):
        out = pulumi.Output.from_input(value)
        secret = _sync_await(out.is_secret())
        resolved[name] = SECRET if secret else redact(_sync_await(out.future()))
    return resolved
