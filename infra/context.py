"""What every layer of one stack shares: its name, the facts of the platform it builds or runs on,
its labels and names. It knows no stack-file kind: each kind makes its context from its own config
(app/deploy/stack_file.py, infra/training_platform.py), and whatever else a build reads of that
config is handed to it as an argument."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainstack.core import catalog, names
from trainstack.core.rules import ACCOUNT_ID_MAX, EPHEMERAL, EXPIRES_LABEL, MANAGED_BY, STACK_LABEL
from trainstack.infra.contract import WORKLOAD_SERVICE_ACCOUNT, Contract
from trainstack.infra.facts import JobPool, PlatformFacts


@dataclass(frozen=True)
class StackContext:
    """One stack being built: `stack` is the Pulumi stack name, `facts` what it knows of its
    platform, `root` the project directory (image build contexts are relative to it),
    `own_labels` the stack file's `trainstack:labels` and `expires` its expiry (`trainstack:ephemeral`).

    A workload stack also carries its platform's contract and, on a trainstack platform, the
    StackReference it was read through (`reference`). A platform names the `namespace` and `queue`
    its jobs use (its stack file's job's, or a `TrainingPlatform`'s args).
    """

    stack: str
    facts: PlatformFacts
    root: Path
    own_labels: Mapping[str, str] = field(default_factory=dict)
    expires: str | None = None
    contract: Contract | None = None
    reference: Any = None
    namespace: str | None = None
    queue: str | None = None

    @property
    def workload_namespace(self) -> str:
        """Where workloads run: as the platform was told, else `default`."""
        return self.namespace or "default"

    @property
    def labels(self) -> dict[str, str]:
        """GCP labels on every labelled resource: who manages it and which stack owns it."""
        return {
            MANAGED_BY[0]: MANAGED_BY[1],
            STACK_LABEL: label_value(self.stack),
            **self.own_labels,
            **({EPHEMERAL[0]: EPHEMERAL[1], EXPIRES_LABEL: self.expires} if self.expires else {}),
        }

    @property
    def workload_service_account(self) -> str:
        """The Kubernetes service account the training pods run as."""
        return self.contract.service_account if self.contract else WORKLOAD_SERVICE_ACCOUNT

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
