"""Networks: the primary VPC the cluster lives on, and the extra VPCs behind a GPU machine's
additional NICs (one VPC per gVNIC; one RoCE VPC with a subnet per RDMA NIC)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
from trainstack.core import catalog
from trainstack.core.catalog import NicNetwork
from trainstack.components.options import Children

PODS_RANGE = "pods"
SERVICES_RANGE = "services"

# Internal traffic the firewall rules admit: every port of TCP and UDP, and ICMP.
_INTERNAL = [
    gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["0-65535"]),
    gcp.compute.FirewallAllowArgs(protocol="udp", ports=["0-65535"]),
    gcp.compute.FirewallAllowArgs(protocol="icmp"),
]


@dataclass(frozen=True)
class NetworkRef:
    """Where a cluster attaches: a VPC, a subnet and the subnet's secondary ranges.

    Attributes:
        network, subnetwork: names (or resource paths, for an existing shared VPC).
        pods_range, services_range: secondary range names for pod and Service IPs.
    """

    network: pulumi.Input[str]
    subnetwork: pulumi.Input[str]
    pods_range: str
    services_range: str


def rdma_network_profile(project: str, zone: str) -> str:
    """The RoCE network profile of `zone`, which an RDMA VPC must be created with."""
    return f"projects/{project}/global/networkProfiles/{zone}-vpc-roce"


@dataclass(frozen=True)
class PrimaryNetworkArgs:
    """Arguments of PrimaryNetwork.

    Attributes:
        project, region: where the VPC and its subnet live.
        name_prefix: prefix of physical names (`<prefix>-net`, `<prefix>-subnet`, ...).
        subnet_cidr: the nodes' range.
        pods_cidr, services_cidr: secondary ranges for pod IPs and Service IPs (VPC-native).
    """

    project: str
    region: str
    name_prefix: str
    subnet_cidr: str
    pods_cidr: str
    services_cidr: str


class PrimaryNetwork(pulumi.ComponentResource):
    """A custom-mode VPC with one subnet (Private Google Access on, pod and Service secondary
    ranges), a Cloud Router with Cloud NAT so private nodes reach registries, and a firewall
    rule admitting traffic between nodes and pods."""

    network: gcp.compute.Network
    subnetwork: gcp.compute.Subnetwork
    ref: NetworkRef

    def __init__(self, name: str, args: PrimaryNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("trainstack:gcp:PrimaryNetwork", name, None, opts)
        kids = Children(self, name, opts)
        self.network = gcp.compute.Network(
            **kids("vpc"),
            project=args.project,
            name=f"{args.name_prefix}-net",
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
        )
        self.subnetwork = gcp.compute.Subnetwork(
            **kids("subnet"),
            project=args.project,
            region=args.region,
            name=f"{args.name_prefix}-subnet",
            network=self.network.id,
            ip_cidr_range=args.subnet_cidr,
            private_ip_google_access=True,
            secondary_ip_ranges=[
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=PODS_RANGE, ip_cidr_range=args.pods_cidr),
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=SERVICES_RANGE, ip_cidr_range=args.services_cidr),
            ],
        )
        router = gcp.compute.Router(
            **kids("router"),
            project=args.project,
            region=args.region,
            name=f"{args.name_prefix}-router",
            network=self.network.id,
        )
        gcp.compute.RouterNat(
            **kids("nat"),
            project=args.project,
            region=args.region,
            name=f"{args.name_prefix}-nat",
            router=router.name,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
            log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
        )
        gcp.compute.Firewall(
            **kids("internal"),
            project=args.project,
            name=f"{args.name_prefix}-internal",
            network=self.network.id,
            direction="INGRESS",
            source_ranges=sorted({args.subnet_cidr, args.pods_cidr}),
            allows=_INTERNAL,
        )
        self.ref = NetworkRef(self.network.name, self.subnetwork.name, PODS_RANGE, SERVICES_RANGE)
        self.register_outputs({"network": self.network.name, "subnetwork": self.subnetwork.name})


@dataclass(frozen=True)
class GpuNicNetworksArgs:
    """Arguments of GpuNicNetworks.

    Attributes:
        project, region, zone: where the networks live; an RDMA VPC is bound to `zone`.
        name_prefix: prefix of physical names (`<prefix>-vpc1`, `<prefix>-rdma-net`, ...).
        machine: the GPU machine (its GPUDirect stack and MTU come from the catalog).
        nics: the extra NIC networks, from `catalog.nic_networks`.
        nic_cidr: the range all NIC subnets are carved from (the firewall's source).
    """

    project: str
    region: str
    zone: str
    name_prefix: str
    machine: catalog.Machine
    nics: Sequence[NicNetwork]
    nic_cidr: str


class GpuNicNetworks(pulumi.ComponentResource):
    """The VPCs behind a GPU machine's extra NICs, at the machine's MTU.

    Each gVNIC NIC gets its own VPC and subnet with a firewall rule for traffic between the
    NIC subnets (TCPX/TCPXO move GPU data over these). RDMA NICs share one VPC created with the
    zone's RoCE network profile, one subnet per NIC; RoCE VPCs carry only MRDMA traffic and take
    no firewall rules.
    """

    def __init__(self, name: str, args: GpuNicNetworksArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("trainstack:gcp:GpuNicNetworks", name, None, opts)
        kids = Children(self, name, opts)
        # (NIC network, VPC name, subnet name) in interface order.
        self.networks: list[tuple[NicNetwork, pulumi.Output[str], pulumi.Output[str]]] = []
        rdma_vpc: gcp.compute.Network | None = None
        for nic in args.nics:
            if nic.kind == "rdma":
                if rdma_vpc is None:
                    rdma_vpc = gcp.compute.Network(
                        **kids("rdma"),
                        project=args.project,
                        name=f"{args.name_prefix}-rdma-net",
                        auto_create_subnetworks=False,
                        mtu=args.machine.mtu,
                        network_profile=rdma_network_profile(args.project, args.zone),
                        routing_mode="REGIONAL",
                    )
                vpc = rdma_vpc
            else:
                vpc = gcp.compute.Network(
                    **kids(nic.name),
                    project=args.project,
                    name=f"{args.name_prefix}-{nic.name}-net",
                    auto_create_subnetworks=False,
                    mtu=args.machine.mtu,
                    routing_mode="REGIONAL",
                )
                gcp.compute.Firewall(
                    **kids(nic.name),
                    project=args.project,
                    name=f"{args.name_prefix}-{nic.name}-internal",
                    network=vpc.id,
                    direction="INGRESS",
                    source_ranges=[args.nic_cidr],
                    allows=_INTERNAL,
                )
            subnet = gcp.compute.Subnetwork(
                **kids(nic.name),
                project=args.project,
                region=args.region,
                name=f"{args.name_prefix}-{nic.name}-subnet",
                network=vpc.id,
                ip_cidr_range=nic.cidr,
            )
            self.networks.append((nic, vpc.name, subnet.name))
        self.register_outputs({"networks": [{"name": n.name, "network": v, "subnetwork": s} for n, v, s in self.networks]})
