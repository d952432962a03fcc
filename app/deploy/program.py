"""The one program every engine runs: the Pulumi CLI, the Automation API and the offline plan."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from trainstack.app.deploy import secrets, validation
from trainstack.app.deploy.stacks import project_root, raw_stack_config
from trainstack.core.errors import ConfigError, UnknownStackError
from trainstack.infra import fleet as fleet_infra
from trainstack.infra import fleet_stack as fleet
from trainstack.infra import remote
from trainstack.infra.context import StackContext
from trainstack.infra.platform import Platform
from trainstack.infra.remote import read_platform_stack
from trainstack.infra.stack import StackConfig, WorkloadStackConfig, load
from trainstack.infra.training_platform import TrainingPlatform, TrainingPlatformArgs
from trainstack.workloads.training_workload import TrainingWorkload, TrainingWorkloadArgs

# The Pulumi names of the shipped program's two components: their children are `platform-<role>`
# and `workload-<role>`, aliased from the top-level names they had before.
PLATFORM, WORKLOAD = "platform", "workload"


def raw_config() -> dict[str, Any]:
    """This stack's config as `pulumi config` holds it, objects decoded from their JSON form."""
    merged = {**(runtime_config.get_config_env() or {}), **runtime_config.CONFIG.get()}
    return {key: _decode(value) for key, value in merged.items()}


def _decode(value: str) -> Any:
    if value == "null":  # a key set to null in the stack file: absent
        return None
    if isinstance(value, str) and value.startswith(("{", "[")):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _stack_file(stack: str) -> dict[str, Any] | None:
    """The stack file's `config:` as written (encrypted values as `{secure: ...}`), if present."""
    try:
        return raw_stack_config(stack, project_root())
    except UnknownStackError:
        return None


def main() -> None:
    """Entry point of `__main__.py`: validate the config (every rule, before any resource),
    then build the stack."""
    stack = pulumi.get_stack()
    try:
        raw = raw_config()
        raw = secrets.mark_secrets(raw, secrets.secret_keys(raw), _stack_file(stack))
        if fleet.is_fleet(raw):
            return _fleet(stack, raw)
        config = load(stack, raw)
        if isinstance(config, StackConfig) and config.cluster.admit_fleets:
            config = fleet.admit_egress(config, _fleet_egress(config))
        reference = output = None
        if isinstance(config, WorkloadStackConfig) and config.platform.stack:
            reference, output = read_platform_stack(config.platform.stack)
        ctx = replace(validation.check(stack, config, project_root(), output), reference=reference)
    except ConfigError as exc:
        # RunError ends the program with this message and no traceback.
        raise pulumi.RunError(str(exc)) from None
    build(ctx)


def _fleet_egress(config: StackConfig) -> dict[str, list[str]]:
    """The egress CIDRs of each fleet the platform admits, read from the fleet stacks; a fleet with
    none yet is named in a warning (its manager is admitted at the first `up` after the fleet's)."""
    found = {}
    for i, name in enumerate(config.cluster.admit_fleets):
        cidrs = remote.read_fleet_egress(f"trainstack:cluster.admitFleets[{i}]", name)
        if cidrs is None:
            pulumi.log.warn(
                f"trainstack:cluster.admitFleets[{i}] = {name!r}: that fleet exports no {fleet.EGRESS_OUTPUT} yet (not deployed, or deployed by an "
                "earlier trainstack): its manager cannot reach this cluster until you `up` this stack again after the fleet's `up`"
            )
        else:
            found[name] = cidrs
    return found


def _fleet(stack: str, raw: dict[str, Any]) -> None:
    """A fleet stack: its workers read through their StackReferences and checked, then the manager."""
    try:
        config = fleet.load(stack, raw)
        read = {w.stack: read_platform_stack(w.stack) for w in config.fleet.workers}
        ctx, workers = validation.check_fleet(stack, config, project_root(), {name: output for name, (_, output) in read.items()})
    except ConfigError as exc:
        raise pulumi.RunError(str(exc)) from None
    outputs = fleet_infra.build(ctx, config, workers, {name: reference for name, (reference, _) in read.items()})
    for name, value in sorted(outputs.items()):
        pulumi.export(name, value)


def build(ctx: StackContext) -> None:
    """Register the whole stack: the platform (a TrainingPlatform, or read from elsewhere), then
    the workload if there is one (a TrainingWorkload), then the outputs a user needs next."""
    config = ctx.config
    platform: TrainingPlatform | Platform
    if isinstance(config, StackConfig):
        platform = TrainingPlatform(PLATFORM, platform_args(ctx, config))
        outputs = dict(platform.stack_outputs)
    else:
        assert isinstance(config, WorkloadStackConfig)  # a fleet stack is built by `_fleet`
        platform = remote.build(ctx, config)
        outputs = dict(platform.outputs)
    if config.workload is not None:
        outputs |= TrainingWorkload(WORKLOAD, TrainingWorkloadArgs(workload=config.workload, platform=platform)).stack_outputs
    for name, value in sorted(outputs.items()):
        pulumi.export(name, value)


def platform_args(ctx: StackContext, config: StackConfig) -> TrainingPlatformArgs:
    """The TrainingPlatform of a stack file: its sections, validated already (the models pass as they are)."""
    sections: dict[str, Any] = {
        "cluster": config.cluster,
        "network": config.network,
        "gpu_pool": config.single_pool,
        "gpu_pools": config.pool_list,
        "cpu_pool": config.cpu_pool,
        "storage": config.storage,
        "image": config.image,
        "kueue": config.kueue,
        "ephemeral": config.ephemeral,
    }
    return TrainingPlatformArgs(
        project=config.project,
        region=config.region,
        zone=config.zone,
        labels=config.labels,
        namespace=config.workload_namespace,
        queue=config.workload.queue if config.workload else None,
        stack=ctx.stack,
        root=str(ctx.root),
        **sections,
    )
