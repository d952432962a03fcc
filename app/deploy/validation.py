"""The one validation entry point: every rule, before any resource exists.

`pulumi up` (the program), `trainstack validate`, `plan`, `up` and `bench` all call `check`
(or `validate`, which loads the raw config first). It runs the config model's rules, a workload
stack's rules against its platform's contract, the framework launcher's rules, and the rules
that read the project's files, and reports every problem at once, each naming the key as the
user wrote it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainstack import workloads
from trainstack.core.errors import ConfigError, Problem, describe
from trainstack.infra import compose, contract
from trainstack.infra import fleet_stack as fleet
from trainstack.infra.context import StackContext
from trainstack.infra.stack import StackConfig, WorkloadStackConfig, load
from trainstack.workloads import platforms


def validate(stack: str, raw: dict[str, Any], root: Path, platform_output: Any = None, worker_outputs: dict[str, Any] | None = None) -> StackContext:
    """`check` of the raw config (keys as in its YAML); ConfigError listing every problem. A fleet
    stack is checked against its workers' contracts, `worker_outputs` (stack -> `platform` output)."""
    if fleet.is_fleet(raw):
        return check_fleet(stack, fleet.load(stack, raw), root, worker_outputs or {})[0]
    return check(stack, load(stack, raw), root, platform_output)


def check_fleet(stack: str, config: fleet.FleetStackConfig, root: Path, worker_outputs: dict[str, Any]) -> tuple[StackContext, list[fleet.Worker]]:
    """A fleet's context and its workers, or ConfigError listing how the workers fail to mirror one another."""
    workers = fleet.workers_of(config, worker_outputs)
    problems = [*fleet.problems(workers), *fleet.reach_problems(config, workers, stack)]
    if problems:
        raise ConfigError(stack, [describe(p) for p in problems])
    return StackContext(stack, config, root), workers


def check(stack: str, config: StackConfig | WorkloadStackConfig, root: Path, platform_output: Any = None) -> StackContext:
    """The context of a loaded config, or ConfigError listing every problem. A workload stack is
    checked against its platform: `platform_output` is the contract its platform stack
    exported, or, on an existing cluster, the contract its own config describes."""
    terms = None
    problems: list[Problem] = []
    if isinstance(config, WorkloadStackConfig):
        ref = config.platform
        if ref.stack:
            terms = contract.from_output(ref.stack, platform_output)
        else:
            assert ref.existing_cluster is not None
            terms = contract.of_existing(ref.existing_cluster)
        narrowed = contract.for_queue(terms, config.workload.queue)
        if narrowed is None:
            problems.append(
                Problem(("trainstack:workload", "queue"), config.workload.queue, f"is not a queue of the platform ({', '.join(contract.queues(terms))})")
            )
        else:
            terms = narrowed
            problems += contract.workload_stack_problems(config, terms)
            if fleet.of_fleet(terms):
                problems += fleet.job_problems(config, terms)
    ctx = StackContext(stack, config, root, contract=terms)
    if config.workload is not None and (terms is None or config.workload.nodes <= terms.gpu_nodes):
        # A job its pool cannot hold is refused for that alone: nothing more that scales with nodes.
        problems += workloads.problems(config.workload, ctx.machine, _pods_ready(config))
        problems += workloads.mount_problems(config.workload, ctx.machine, _storage_mount(config, terms))
        problems += platforms.problems(config.workload, ctx.machine, config.image, *_machine_keys(config))
    problems += compose.problems(config.image, root)
    if problems:
        raise ConfigError(stack, [describe(p) for p in problems])
    return ctx


def _pods_ready(config: StackConfig | WorkloadStackConfig) -> list[tuple[str, str]]:
    """Kueue's pods-ready budgets a job's start must fit, where the stack configures Kueue."""
    return config.pods_ready_budgets if isinstance(config, StackConfig) else []


def _storage_mount(config: StackConfig | WorkloadStackConfig, terms: contract.Contract | None) -> tuple[tuple[str, ...], str]:
    """Where the shared storage is mounted, and the key that says so."""
    if isinstance(config, StackConfig):
        return ("trainstack:storage", "mountPath"), config.storage.mount_path
    assert terms is not None
    existing = config.platform.existing_cluster
    return (("trainstack:platform", "existingCluster", "storage", "mountPath") if existing else ("trainstack:platform", "stack")), terms.mount_path


def _machine_keys(config: StackConfig | WorkloadStackConfig) -> tuple[tuple[str | int, ...], tuple[str | int, ...] | None]:
    """Where the job's machine is named, and where its pool asks for the driver installer DaemonSet."""
    if isinstance(config, WorkloadStackConfig):
        existing = config.platform.existing_cluster
        return (("trainstack:platform", "existingCluster", "machineType") if existing else ("trainstack:platform", "stack")), None
    index = config.pools.index(config.job_queue.pools[0])
    pool = config.pool_key(index)
    return (*pool, "machineType"), ((*pool, "gpuDriver") if config.pools[index].gpu_driver == "daemonset" else None)
