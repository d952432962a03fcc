"""The GPU NIC networks a machine needs, and the MTU of the VPCs trainstack creates.

JUMBO_MTU is the MTU of a VPC trainstack creates for a cluster with RDMA machines or Managed Lustre:
8896, the largest GCP allows (cloud.google.com/vpc/docs/mtu; terraform-provider-google 017d2f5
google/services/compute/resource_compute_network.go `mtu`: 1300 to 8896, default 1460). Managed Lustre
creates its VPCs with it and reports up to about 10% more throughput than at 1460
(docs.cloud.google.com/managed-lustre/docs/vpc `--mtu=8896`; .../managed-lustre/docs/performance, read
2026-11-25); the RDMA machines' NIC VPCs take it already (`Machine.mtu`).
"""

from __future__ import annotations

import ipaddress
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from trainstack.core.catalog.gpudirect import GpuDirect

if TYPE_CHECKING:
    from trainstack.core.catalog.machines import Machine


@dataclass(frozen=True)
class NicNetwork:
    """One extra GPU NIC network, named once here so VPCs, Kubernetes Network objects and pod
    interfaces agree.

    Attributes:
        name: the Kubernetes `Network` / `GKENetworkParamSet` name pods reference
            (`gvnic-1`, `rdma-0`..`rdma-7` on A3 Ultra; `vpc1`..`vpc8` on A3 Mega/High).
        kind: `gvnic` (its own VPC and subnet) or `rdma` (a subnet of the shared RDMA VPC).
        interface: the pod interface name it becomes (`eth1`, `eth2`, ...).
        cidr: the subnet's range, a /24 of the stack's GPU NIC range.
    """

    name: str
    kind: Literal["gvnic", "rdma"]
    interface: str
    cidr: str


# /24s of the GPU NIC /16 kept for each machine family: a family has at most 9 NICs.
NIC_FAMILY_BLOCK = 32


def nic_networks(machine: Machine, gpu_nic_cidr: str, prefix: str = "") -> list[NicNetwork]:
    """The extra NIC networks a machine needs, in interface order; `prefix` starts their names (a
    second machine family on one cluster keeps its Networks apart from the first's).

    GKE: "Any Pod-networks in a single GKE cluster can't have overlapping CIDR ranges"
    (cloud.google.com/kubernetes-engine/docs/how-to/setup-multinetwork-support-for-pods, General
    limitations). The unprefixed family takes the /16's first /24s, as it always did; a prefixed
    one the block of its GPUDirect stack (one family per stack on a cluster), so no two families'
    subnets meet, whatever the order of the pools.
    """
    block = NIC_FAMILY_BLOCK * (1 + list(GpuDirect).index(machine.gpudirect)) if prefix else 0
    subnets = itertools.islice(ipaddress.ip_network(gpu_nic_cidr).subnets(new_prefix=24), block, None)
    rdma = machine.gpudirect == GpuDirect.RDMA
    nets: list[NicNetwork] = []
    for i in range(machine.gvnic_networks):
        name = f"gvnic-{i + 1}" if rdma else f"vpc{i + 1}"
        nets.append(NicNetwork(f"{prefix}{name}", "gvnic", f"eth{len(nets) + 1}", str(next(subnets))))
    for i in range(machine.rdma_subnets):
        nets.append(NicNetwork(f"{prefix}rdma-{i}", "rdma", f"eth{len(nets) + 1}", str(next(subnets))))
    return nets


JUMBO_MTU = 8896  # cloud.google.com/vpc/docs/mtu: the largest GCP allows
