"""What every layer of one stack shares: its name, its validated config, its labels and names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from trainstack.core import catalog, names
from trainstack.core.rules import ACCOUNT_ID_MAX, EPHEMERAL, EXPIRES_LABEL, MANAGED_BY, STACK_LABEL
from trainstack.infra.contract import WORKLOAD_SERVICE_ACCOUNT, Contract
from trainstack.infra.fleet_stack import FleetStackConfig
from trainstack.infra.stack import Queue, StackConfig, WorkloadStackConfig


@dataclass(frozen=True)
class JobPool:
    """The GPU pool a stack's jobs are queued to: its machine, its largest size and its LocalQueue."""

    machine: catalog.Machine
    nodes: int
    local_queue: str


@dataclass(frozen=True)
class PlatformFacts:
    """What a stack knows of the platform it builds or runs on, one shape whichever its source.

    Attributes:
        project, region: where this stack's resources are created (a workload stack's own, if it
            sets them, else its platform's).
        zone: the GPU pool's zone (a fleet's: its manager's).
        name_prefix: the prefix of this stack's cloud resource names: its cluster's name, or the
            cluster a workload stack runs on.
        job_pool: the GPU pool its jobs are queued to; None for a fleet, whose manager has none.
    """

    project: str
    region: str
    zone: str
    name_prefix: str
    job_pool: JobPool | None


def platform_facts(config: StackConfig | WorkloadStackConfig | FleetStackConfig, contract: Contract | None, queue: Queue | None = None) -> PlatformFacts:
    """The facts of a platform stack's or a fleet's own config, or of a workload stack's config over
    its platform's contract. A platform's job pool is `queue`'s, else its first queue's."""
    if isinstance(config, WorkloadStackConfig):
        if contract is None:
            raise TypeError("a workload stack's context needs its platform's contract")
        pool = JobPool(catalog.machine(contract.gpu_machine_type), contract.gpu_nodes, contract.local_queue)
        return PlatformFacts(config.project or contract.project, config.region or contract.region, contract.zone, contract.cluster_name, pool)
    if isinstance(config, FleetStackConfig):
        return PlatformFacts(config.project, config.region, config.zone, config.cluster.name, None)
    queue = queue or config.queues[0]
    return PlatformFacts(config.project, config.region, config.gpu_zones[0], config.cluster.name, JobPool(queue.machine, queue.max_nodes, queue.local_queue))


@dataclass(frozen=True)
class StackContext:
    """One stack being built: `stack` is the Pulumi stack name, `config` its validated config,
    `root` the project directory (image build contexts are relative to it).

    A workload stack also carries its platform's contract and, on a trainstack platform, the
    StackReference it was read through (`reference`). A platform names the `namespace` and `queue`
    its jobs use (its stack file's job's, or a `TrainingPlatform`'s args).
    """

    stack: str
    config: StackConfig | WorkloadStackConfig | FleetStackConfig
    root: Path
    contract: Contract | None = None
    reference: Any = None
    namespace: str | None = None
    queue: str | None = None

    @property
    def workload_namespace(self) -> str:
        """Where workloads run: as the platform was told, else `default`."""
        return self.namespace or "default"

    @property
    def job_queue(self) -> Queue:
        """The queue the platform readies for its jobs: as it was told, else its first."""
        assert isinstance(self.config, StackConfig)
        return (self.config.queue_of(self.queue) if self.queue else None) or self.config.queues[0]

    @property
    def labels(self) -> dict[str, str]:
        """GCP labels on every labelled resource: who manages it and which stack owns it."""
        ephemeral = getattr(self.config, "ephemeral", None)
        return {
            MANAGED_BY[0]: MANAGED_BY[1],
            STACK_LABEL: label_value(self.stack),
            **self.config.labels,
            **({EPHEMERAL[0]: EPHEMERAL[1], EXPIRES_LABEL: ephemeral.expires} if ephemeral else {}),
        }

    @property
    def workload_service_account(self) -> str:
        """The Kubernetes service account the training pods run as."""
        return self.contract.service_account if self.contract else WORKLOAD_SERVICE_ACCOUNT

    @cached_property
    def facts(self) -> PlatformFacts:
        """What this stack knows of its platform, read once from its config or its platform's contract."""
        return platform_facts(self.config, self.contract, self.job_queue if self.queue else None)

    @property
    def project(self) -> str:
        """The project resources of this stack are created in (a workload stack's own, if it
        sets one, else its platform's)."""
        return self.facts.project

    @property
    def region(self) -> str:
        return self.facts.region

    @property
    def machine(self) -> catalog.Machine:
        """The GPU pool's machine: this stack's, or its platform's."""
        return self._gpu.machine

    @property
    def gpu_nodes(self) -> int:
        """The GPU pool's largest size: this stack's, or its platform's."""
        return self._gpu.nodes

    @property
    def zone(self) -> str:
        """The GPU pool's zone (a fleet's: its manager's zone)."""
        return self.facts.zone

    @property
    def local_queue(self) -> str:
        return self._gpu.local_queue

    @property
    def name_prefix(self) -> str:
        """The prefix of this stack's cloud resource names: its cluster's name, or, for a
        workload stack, the cluster it runs on."""
        return self.facts.name_prefix

    @property
    def _gpu(self) -> JobPool:
        if self.facts.job_pool is None:
            raise TypeError(f"stack {self.stack!r} is a fleet: its manager has no GPU pool of its own")
        return self.facts.job_pool

    def physical_name(self, suffix: str, max_length: int = 63) -> str:
        """`<name prefix>-<suffix>` within `max_length` (names.physical): names of cloud resources."""
        return names.physical(self.name_prefix, suffix, max_length)

    def account_id(self, suffix: str) -> str:
        """`<name prefix>-<suffix>` as a service account ID (rules.ACCOUNT_ID): the nodes' and the image builder's accounts."""
        return self.physical_name(suffix, ACCOUNT_ID_MAX)


def label_value(value: str) -> str:
    """A GCP label value: lowercase letters, digits, '-' and '_', at most 63 characters."""
    return re.sub(r"[^a-z0-9_-]", "-", value.lower())[:63]
