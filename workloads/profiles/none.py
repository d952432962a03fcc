"""No GPUDirect (A2): NCCL runs over the primary NIC with its built-in socket transport."""

from __future__ import annotations

from collections.abc import Sequence

from trainstack.core import catalog
from trainstack.core.catalog import NicNetwork
from trainstack.workloads.pod import PodParts
from trainstack.workloads.profiles import networks as multinetwork


def parts(machine: catalog.Machine, nics: Sequence[NicNetwork]) -> PodParts:
    """Nothing to add; the machine has no extra NICs to attach."""
    multinetwork.data_interfaces(machine, nics)
    return PodParts()
