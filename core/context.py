"""What every layer of one stack shares: its name, its validated config, its labels and names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainstack.core import catalog, names
from trainstack.core.config import (
    Queue,
    StackConfig,
    WorkloadConfig,
    WorkloadStackConfig,
)
from trainstack.core.contract import WORKLOAD_SERVICE_ACCOUNT, Contract
from trainstack.core.fleet import FleetStackConfig
from trainstack.core.rules import EPHEMERAL, EXPIRES_LABEL, MANAGED_BY, STACK_LABEL


@dataclass(frozen=True)
class StackContext:
    """One stack being built: `stack` is the Pulumi stack name, `config` its validated config,
    `root` the project directory (image build contexts are relative to it).

    A workload stack also carries its platform's contract and, on a trainstack platform, the
    StackReference it was read through (`reference`). A platform built without its workload (a
    `TrainingPlatform` of a program's own) names the `namespace` and `queue` its jobs use.
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
        """Where workloads run: as the platform was told, else the stack's (StackConfig.workload_namespace)."""
        assert isinstance(self.config, StackConfig)
        return self.namespace or self.config.workload_namespace

    @property
    def job_queue(self) -> Queue:
        """The queue the platform readies for its jobs: as it was told, else the stack's job queue."""
        assert isinstance(self.config, StackConfig)
        return (self.config.queue_of(self.queue) if self.queue else None) or self.config.job_queue

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

    @property
    def project(self) -> str:
        """The project resources of this stack are created in (a workload stack's own, if it
        sets one, else its platform's)."""
        if not isinstance(self.config, WorkloadStackConfig):
            return self.config.project
        assert self.contract is not None
        return self.config.project or self.contract.project

    @property
    def region(self) -> str:
        if not isinstance(self.config, WorkloadStackConfig):
            return self.config.region
        assert self.contract is not None
        return self.config.region or self.contract.region

    @property
    def workload(self) -> WorkloadConfig | None:
        return self.config.workload

    @property
    def machine(self) -> catalog.Machine:
        """The GPU pool's machine: this stack's, or its platform's."""
        if isinstance(self.config, StackConfig):
            return self.config.job_queue.machine
        assert self.contract is not None
        return catalog.machine(self.contract.gpu_machine_type)

    @property
    def gpu_nodes(self) -> int:
        """The GPU pool's largest size: this stack's, or its platform's."""
        if isinstance(self.config, StackConfig):
            return self.config.job_queue.max_nodes
        assert self.contract is not None
        return self.contract.gpu_nodes

    @property
    def zone(self) -> str:
        """The GPU pool's zone (a fleet's: its manager's zone)."""
        if isinstance(self.config, FleetStackConfig):
            return self.config.zone
        if isinstance(self.config, StackConfig):
            return self.config.gpu_zones[0]
        assert self.contract is not None
        return self.contract.zone

    @property
    def local_queue(self) -> str:
        if isinstance(self.config, StackConfig):
            return self.config.job_queue.local_queue
        assert self.contract is not None
        return self.contract.local_queue

    @property
    def name_prefix(self) -> str:
        """The prefix of this stack's cloud resource names: its cluster's name, or, for a
        workload stack, the cluster it runs on."""
        if not isinstance(self.config, WorkloadStackConfig):
            return self.config.cluster.name
        assert self.contract is not None
        return self.contract.cluster_name

    def physical_name(self, suffix: str, max_length: int = 63) -> str:
        """`<name prefix>-<suffix>` within `max_length` (names.physical): names of cloud resources."""
        return names.physical(self.name_prefix, suffix, max_length)


def label_value(value: str) -> str:
    """A GCP label value: lowercase letters, digits, '-' and '_', at most 63 characters."""
    return re.sub(r"[^a-z0-9_-]", "-", value.lower())[:63]
