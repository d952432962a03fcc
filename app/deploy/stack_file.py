"""The three kinds of stack file, each with one path: load, check, build.

A stack file is a platform's (a cluster and its pools, maybe with a job), a workload's
(`trainstack:platform`: a job on a platform made elsewhere) or a fleet's (`trainstack:fleet`: a
MultiKueue manager over platform stacks). `kind` picks one from the raw keys; each kind loads its
model (`load`), checks it with every rule that reads more than its own sections (`check`, on
`validate` and before any resource on `up`), reads what it needs from other stacks on `up`
(`read`) and registers its resources (`build`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

import pulumi
from pydantic import Field

from trainstack import workloads
from trainstack.components.image import ImageSpec
from trainstack.core.errors import ConfigError, Problem, describe, key_path
from trainstack.core.spec import validated
from trainstack.infra import compose, contract, remote
from trainstack.infra import fleet_stack as fleet
from trainstack.infra.context import StackContext
from trainstack.infra.fleet import FleetContext, TrainingFleet, TrainingFleetArgs
from trainstack.infra.platform import Platform
from trainstack.infra.remote import read_platform_stack
from trainstack.infra.stack import PlatformRef, Queue, StackConfig, WorkloadStackConfig
from trainstack.infra.training_platform import TrainingPlatform, TrainingPlatformArgs
from trainstack.workloads import platforms
from trainstack.workloads.spec import Where, WorkloadSpec, fleet_problems, namespace_problems, platform_problems
from trainstack.workloads.training_workload import TrainingWorkload, TrainingWorkloadArgs

# The Pulumi names of the shipped program's components: their children are `platform-<role>`,
# `workload-<role>` and `fleet-<role>`, aliased from the top-level names they had before.
PLATFORM_NAME, WORKLOAD_NAME, FLEET_NAME = "platform", "workload", "fleet"


class PlatformStackFile(StackConfig):
    """A whole stack's configuration, keyed exactly as in `stacks/Pulumi.<stack>.yaml`."""

    workload: WorkloadSpec | None = Field(None, alias="trainstack:workload")
    """The training job. Absent: a platform-only stack (the platform of recipes, for workload stacks to run
    on)."""

    def _problems(self) -> Iterator[Problem]:
        """The platform's stack rules, then its job's against the job's queue."""
        yield from StackConfig._problems(self)
        if self.workload is not None and self.pools:
            terms = contract.of_platform(self, "", None, None, None, self.workload.namespace)
            where = Where("this stack", "trainstack:kueue.priorityClasses", lambda queue: _queue_sources(self, queue))
            yield from platform_problems(self.workload, terms, where)

    @property
    def platform_sections(self) -> StackConfig:
        """The platform's sections alone, as `StackConfig` holds them (what `TrainingPlatform` is checked with)."""
        return StackConfig.model_construct(self.model_fields_set - {"workload"}, **{name: getattr(self, name) for name in StackConfig.model_fields})

    @property
    def job_queue(self) -> Queue:
        """The queue this stack's job is submitted to (`trainstack:workload.queue`; the first
        queue on a platform-only stack or by default). Validation refuses an unknown name."""
        return self.job_queue_of(self.workload.queue if self.workload else None)


def _queue_sources(config: StackConfig, queue: contract.Contract) -> dict[str, str]:
    """Where a platform stack's job queue (its contract) takes its nodes, machine, storage and
    topology from: the queue's first pool, as the user wrote it."""
    index = next(i for i, p in enumerate(config.pools) if p.name == queue.gpu_pool)
    first, key = config.pools[index], key_path(config.pool_key(index))
    topology = (
        f"{first.machine_type} nodes carry no GKE topology labels"
        if not first.machine.topology_labels
        else f"{key}.autoscaling: an autoscaled pool has no nodes to place on"
    )
    return {"nodes": key, "machine": f"{key}.machineType", "storage": "trainstack:storage.kind", "topology": topology}


class WorkloadStackFile(WorkloadStackConfig):
    """A workload stack: the workload layer only, on a trainstack platform stack or an existing
    cluster. It creates no network, cluster or node pool."""

    workload: WorkloadSpec = Field(alias="trainstack:workload")
    """The training job."""


@dataclass(frozen=True)
class JobContext(StackContext):
    """A stack's context with its stack file's job (`trainstack:workload`), if it has one, and the
    stack file's config it was made from (what the app's reports read beside the platform's facts)."""

    workload: WorkloadSpec | None = None
    stack_file: PlatformStackFile | WorkloadStackFile | fleet.FleetStackConfig | None = None


@dataclass(frozen=True)
class FleetJobContext(JobContext, FleetContext):
    """A fleet stack's context: its workers as its check read them, and no job of its own."""


@dataclass(frozen=True)
class Remote:
    """What a stack reads from other stacks on `up`: the outputs its checks read (a workload's
    platform's `platform` output; a fleet's, each worker stack's) and the StackReferences its
    build wires (a workload's platform's; a fleet's, by worker stack)."""

    platform_output: Any = None
    worker_outputs: dict[str, Any] = field(default_factory=dict)
    references: Any = None


Config = TypeVar("Config", PlatformStackFile, WorkloadStackFile, fleet.FleetStackConfig)
Checked = TypeVar("Checked", bound=JobContext)


class _Kind(ABC, Generic[Config]):
    """What every kind does with its own `load`, `read`, `check` and `build`."""

    @abstractmethod
    def load(self, stack: str, raw: dict[str, Any]) -> Config: ...

    @abstractmethod
    def read(self, stack: str, config: Config) -> tuple[Config, Remote]: ...

    @abstractmethod
    def check(self, stack: str, config: Config, root: Path, platform_output: Any = None, worker_outputs: dict[str, Any] | None = None) -> JobContext: ...

    @abstractmethod
    def build(self, ctx: JobContext, config: Config, read: Remote) -> None: ...

    @abstractmethod
    def warnings(self, config: Config) -> list[str]: ...

    def validate(self, stack: str, raw: dict[str, Any], root: Path, platform_output: Any = None, worker_outputs: dict[str, Any] | None = None) -> JobContext:
        """`check` of the raw config, against the outputs given (`validate`, the offline plan)."""
        return self.check(stack, self.load(stack, raw), root, platform_output, worker_outputs)

    def prepare(self, stack: str, raw: dict[str, Any], root: Path) -> Callable[[], None]:
        """`check` of the raw config against what it reads from other stacks (on `up`), and the
        build left to run once every rule holds."""
        config, read = self.read(stack, self.load(stack, raw))
        ctx = self.check(stack, config, root, read.platform_output, read.worker_outputs)
        return lambda: self.build(ctx, config, read)


class PlatformStack(_Kind[PlatformStackFile]):
    """A platform stack: a `TrainingPlatform`, and its job if the file has one."""

    def load(self, stack: str, raw: dict[str, Any]) -> PlatformStackFile:
        """The platform's config and its job, or ConfigError with every problem, each naming its key."""
        return validated(stack, raw, PlatformStackFile)

    def read(self, stack: str, config: PlatformStackFile) -> tuple[PlatformStackFile, Remote]:
        """The config with the egress of the fleets it admits, read from the fleet stacks."""
        if config.cluster.admit_fleets:
            config = fleet.admit_egress(config, _fleet_egress(config))
        return config, Remote()

    def check(self, stack: str, config: PlatformStackFile, root: Path, platform_output: Any = None, worker_outputs: dict[str, Any] | None = None) -> JobContext:
        """The context of a loaded platform config, or ConfigError listing every problem."""
        ctx = self.context(stack, config, root)
        problems: list[Problem] = []
        if config.workload is not None:
            index = config.pools.index(config.job_queue.pools[0])
            pool = config.pool_key(index)
            driver = (*pool, "gpuDriver") if config.pools[index].gpu_driver == "daemonset" else None
            mount = (("trainstack:storage", "mountPath"), config.storage.mount_path)
            problems += _job_problems(ctx, config.workload, config.image, config.pods_ready_budgets, mount, (*pool, "machineType"), driver)
        problems += compose.problems(config.image, root)
        return _checked(ctx, problems)

    def context(self, stack: str, config: PlatformStackFile, root: Path) -> JobContext:
        """The stack's context: its platform readies its job's namespace and queue, if it has a job."""
        job = config.workload
        queue = job.queue if job else None
        return JobContext(
            stack,
            config.facts(queue),
            root,
            config.labels,
            config.expires,
            namespace=job.namespace if job else None,
            queue=queue,
            workload=job,
            stack_file=config,
        )

    def build(self, ctx: JobContext, config: PlatformStackFile, read: Remote) -> None:
        """The platform, then its job if there is one, then the outputs a user needs next."""
        platform = TrainingPlatform(PLATFORM_NAME, platform_args(ctx, config), checked=config.platform_sections)
        _export(ctx, platform, dict(platform.stack_outputs))

    def warnings(self, config: PlatformStackFile) -> list[str]:
        """What `validate` warns of beyond the rules (a zone the catalog's table does not know)."""
        return config.warnings()


class WorkloadStack(_Kind[WorkloadStackFile]):
    """A workload stack: a job on a platform made elsewhere (a platform stack's, or an existing cluster)."""

    def load(self, stack: str, raw: dict[str, Any]) -> WorkloadStackFile:
        """The workload's config, or ConfigError with every problem, each naming its key."""
        return validated(stack, raw, WorkloadStackFile)

    def read(self, stack: str, config: WorkloadStackFile) -> tuple[WorkloadStackFile, Remote]:
        """The config, and its platform stack's output and StackReference (none on an existing cluster)."""
        if not config.platform.stack:
            return config, Remote()
        reference, output = read_platform_stack(config.platform.stack)
        return config, Remote(platform_output=output, references=reference)

    def check(self, stack: str, config: WorkloadStackFile, root: Path, platform_output: Any = None, worker_outputs: dict[str, Any] | None = None) -> JobContext:
        """The context of a loaded workload config, or ConfigError listing every problem. It is
        checked against its platform: `platform_output` is the contract its platform stack
        exported, or, on an existing cluster, the contract its own config describes."""
        problems: list[Problem] = []
        ref = config.platform
        if ref.stack:
            terms = contract.from_output(ref.stack, platform_output)
        else:
            assert ref.existing_cluster is not None
            terms = contract.of_existing(ref.existing_cluster)
        on = _platform_where(ref)
        problems += namespace_problems(config.workload, terms, on.priorities)
        problems += platform_problems(config.workload, terms, on)
        if ref.existing_cluster is not None:
            problems += contract.existing_problems(ref.existing_cluster)
        narrowed = contract.for_queue(terms, config.workload.queue)
        if narrowed is not None:
            terms = narrowed
            if fleet.of_fleet(terms):
                problems += fleet_problems(config.workload, config.image, terms, str(ref.stack))
        facts = contract.facts_on(terms, config.project, config.region)
        ctx = JobContext(stack, facts, root, config.labels, contract=terms, workload=config.workload, stack_file=config)
        if config.workload.nodes <= terms.gpu_nodes:
            existing = config.platform.existing_cluster
            where = (("trainstack:platform", "existingCluster", "storage", "mountPath") if existing else ("trainstack:platform", "stack")), terms.mount_path
            machine = ("trainstack:platform", "existingCluster", "machineType") if existing else ("trainstack:platform", "stack")
            problems += _job_problems(ctx, config.workload, config.image, [], where, machine, None)
        problems += compose.problems(config.image, root)
        return _checked(ctx, problems)

    def build(self, ctx: JobContext, config: WorkloadStackFile, read: Remote) -> None:
        """The platform read from elsewhere, the job on it, then the outputs a user needs next."""
        ctx = replace(ctx, reference=read.references)
        job = config.workload.name if config.workload.own_identity else None
        platform = remote.build(ctx, config.platform, config.image, job)
        _export(ctx, platform, dict(platform.outputs))

    def warnings(self, config: WorkloadStackFile) -> list[str]:
        """None: a workload stack makes no pools of its own."""
        return []


class FleetStack(_Kind[fleet.FleetStackConfig]):
    """A fleet stack: a `TrainingFleet`, a MultiKueue manager dispatching to the platform stacks it names."""

    def load(self, stack: str, raw: dict[str, Any]) -> fleet.FleetStackConfig:
        """The fleet's config, or ConfigError with every problem, each naming its key."""
        return fleet.load(stack, raw)

    def read(self, stack: str, config: fleet.FleetStackConfig) -> tuple[fleet.FleetStackConfig, Remote]:
        """The config, and each worker stack's output and StackReference."""
        found = {w.stack: read_platform_stack(w.stack) for w in config.fleet.workers}
        outputs = {name: output for name, (_, output) in found.items()}
        return config, Remote(worker_outputs=outputs, references={name: reference for name, (reference, _) in found.items()})

    def check(
        self, stack: str, config: fleet.FleetStackConfig, root: Path, platform_output: Any = None, worker_outputs: dict[str, Any] | None = None
    ) -> FleetJobContext:
        """The fleet's context with its workers, or ConfigError listing how the workers
        (`worker_outputs`: stack -> `platform` output) fail to mirror one another."""
        workers = fleet.workers_of(config, worker_outputs or {})
        problems = [*fleet.problems(workers), *fleet.reach_problems(config, workers, stack)]
        ctx = FleetJobContext(stack, config.facts(), root, config.labels, config.expires, config=config, workers=tuple(workers), stack_file=config)
        return _checked(ctx, problems)

    def build(self, ctx: JobContext, config: fleet.FleetStackConfig, read: Remote) -> None:
        """The fleet (its manager and its account on each worker) from the workers `check` read, and its outputs."""
        assert isinstance(ctx, FleetJobContext)  # what `check` made
        built = TrainingFleet(FLEET_NAME, TrainingFleetArgs(ctx, read.references))
        for name, value in sorted(built.stack_outputs.items()):
            pulumi.export(name, value)

    def warnings(self, config: fleet.FleetStackConfig) -> list[str]:
        """None: a fleet's manager has no pools of its own."""
        return []


PLATFORM, WORKLOAD, FLEET = PlatformStack(), WorkloadStack(), FleetStack()
Kind = PlatformStack | WorkloadStack | FleetStack


def kind(raw: dict[str, Any]) -> Kind:
    """The kind of a raw stack config (keys as in its YAML): a fleet's has `trainstack:fleet`, a
    workload's `trainstack:platform`; any other is a platform's."""
    if fleet.is_fleet(raw):
        return FLEET
    return WORKLOAD if "trainstack:platform" in raw else PLATFORM


def load(stack: str, raw: dict[str, Any]) -> PlatformStackFile | WorkloadStackFile:
    """A workload stack's config (`trainstack:platform`) or a platform stack's (any other; a fleet's
    is `fleet_stack.load`'s), or ConfigError with every problem."""
    return WORKLOAD.load(stack, raw) if "trainstack:platform" in raw else PLATFORM.load(stack, raw)


def _platform_where(ref: PlatformRef) -> Where:
    """Where a workload stack's platform facts come from: its existing cluster's keys, or its platform stack."""
    if ref.existing_cluster is None:
        where = f"platform stack {ref.stack}"
        return Where("the platform", where, lambda _: dict.fromkeys(("nodes", "machine", "storage", "topology"), where))
    at = "trainstack:platform.existingCluster"
    sources = {"nodes": f"{at}.nodeCount", "machine": f"{at}.machineType", "storage": f"{at}.storage.kind", "topology": f"{at}.topologyAware"}
    return Where("the platform", at, lambda _: sources)


def _job_problems(
    ctx: StackContext,
    workload: WorkloadSpec,
    image: ImageSpec,
    pods_ready: list[tuple[str, str]],
    mount: tuple[tuple[str, ...], str],
    machine_key: tuple[str | int, ...],
    driver_key: tuple[str | int, ...] | None,
) -> list[Problem]:
    """A job's rules against its machine: its launcher's (within Kueue's pods-ready budgets), its
    mounts (storage mounted at `mount`: its key and path) and its framework's image."""
    problems: list[Problem] = []
    problems += workloads.problems(workload, ctx.machine, pods_ready)
    problems += workloads.mount_problems(workload, ctx.machine, mount)
    problems += platforms.problems(workload, ctx.machine, image, machine_key, driver_key)
    return problems


def _checked(ctx: Checked, problems: list[Problem]) -> Checked:
    if problems:
        raise ConfigError(ctx.stack, [describe(p) for p in problems])
    return ctx


def _export(ctx: JobContext, platform: TrainingPlatform | Platform, outputs: dict[str, Any]) -> None:
    """The job on `platform` if the stack has one, then every output, sorted."""
    if ctx.workload is not None:
        outputs |= TrainingWorkload(WORKLOAD_NAME, TrainingWorkloadArgs(workload=ctx.workload, platform=platform)).stack_outputs
    for name, value in sorted(outputs.items()):
        pulumi.export(name, value)


def _fleet_egress(config: PlatformStackFile) -> dict[str, list[str]]:
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


def platform_args(ctx: StackContext, config: PlatformStackFile) -> TrainingPlatformArgs:
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
        namespace=config.workload.namespace if config.workload else "default",
        queue=config.workload.queue if config.workload else None,
        stack=ctx.stack,
        root=str(ctx.root),
        **sections,
    )
