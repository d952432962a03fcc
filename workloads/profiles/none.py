"""No GPUDirect (A2): NCCL runs over the primary NIC with its built-in socket transport."""

from __future__ import annotations

from collections.abc import Sequence

from trainstack import catalog
from trainstack.workloads.pod import PodParts
from trainstack.workloads.profiles import networks as multinetwork


def parts(machine: catalog.Machine, networks: Sequence[str]) -> PodParts:
    """Nothing to add; the machine has no extra NICs to attach."""
    multinetwork.data_interfaces(machine, networks)
    return PodParts()
