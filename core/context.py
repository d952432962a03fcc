"""What every component of one stack shares: its name, its config, its labels and names."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trainstack.config import PlatformRef, StackConfig

if TYPE_CHECKING:
    from trainstack.infra.contract import Contract

# The Kubernetes service account the workloads of a trainstack platform run as; the platform
# grants it its storage through Workload Identity.
WORKLOAD_SERVICE_ACCOUNT = "trainstack-workload"


@dataclass(frozen=True)
class StackContext:
    """One stack being built: `stack` is the Pulumi stack name, `config` its validated config.

    A workload stack also carries where its platform is (`platform`), that platform's contract,
    and, on a trainstack platform, the StackReference it was read through (`reference`).
    """

    stack: str
    config: StackConfig
    extra_labels: dict[str, str] = field(default_factory=dict)
    platform: PlatformRef | None = None
    contract: Contract | None = None
    reference: Any = None

    @property
    def labels(self) -> dict[str, str]:
        """GCP labels on every labelled resource: who manages it and which stack owns it."""
        return {
            "managed-by": "trainstack",
            "trainstack-stack": label_value(self.stack),
            **self.config.labels,
            **self.extra_labels,
        }

    @property
    def workload_service_account(self) -> str:
        """The Kubernetes service account the training pods run as."""
        return self.contract.service_account if self.contract else WORKLOAD_SERVICE_ACCOUNT

    def physical_name(self, suffix: str, max_length: int = 63) -> str:
        """`<cluster name>-<suffix>`, trimmed to `max_length`: names of cloud resources."""
        name = f"{self.config.cluster.name}-{suffix}" if suffix else self.config.cluster.name
        return name[:max_length].rstrip("-")


def label_value(value: str) -> str:
    """A GCP label value: lowercase letters, digits, '-' and '_', at most 63 characters."""
    return re.sub(r"[^a-z0-9_-]", "-", value.lower())[:63]
