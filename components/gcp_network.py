"""Networks: the primary VPC the cluster lives on, and the extra VPCs behind a GPU machine's
additional NICs (one VPC per gVNIC; one RoCE VPC with a subnet per RDMA NIC).

The primary VPC's spec (`NetworkSpec`: its ranges and their rule) is what a stack file's
`trainstack:network` holds for it; `PrimaryNetworkArgs` is the spec and what the stack around it
derives (project, region, names, MTU, whether the VPC is kept). A stack file's section adds what
only a stack decides (infra/stack.py `NetworkConfig`: an existing VPC, the GPU NIC range).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
from pydantic import model_validator

from trainstack.components.args import Args, Problem
from trainstack.components.options import Children
from trainstack.core import catalog, rules
from trainstack.core.catalog import NicNetwork
from trainstack.core.spec import Cidr, GcpName, Section, rule_errors

PODS_RANGE = "pods"
SERVICES_RANGE = "services"

# Internal traffic the firewall rules admit: every port of TCP and UDP, and ICMP.
_INTERNAL = [
    gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["0-65535"]),
    gcp.compute.FirewallAllowArgs(protocol="udp", ports=["0-65535"]),
    gcp.compute.FirewallAllowArgs(protocol="icmp"),
]


@dataclass(frozen=True)
class NetworkRef(Args):
    """Where a cluster attaches: a VPC, a subnet and the subnet's secondary ranges."""

    network: pulumi.Input[str]
    """The VPC's name (or resource path, for an existing shared VPC)."""
    subnetwork: pulumi.Input[str]
    """The subnet's name (or resource path)."""
    pods_range: str
    """The subnet's secondary range name for pod IPs."""
    services_range: str
    """The subnet's secondary range name for Service IPs."""

    # Secondary range names are GCP resource names (Subnetwork.secondaryIpRanges.rangeName).
    _checks = {"pods_range": rules.GCP_NAME, "services_range": rules.GCP_NAME}


class ExistingNetwork(Section):
    """A VPC, subnet and secondary ranges made elsewhere."""

    network: str
    """The VPC's name."""
    subnetwork: str
    """The subnet's name."""
    pods_range_name: GcpName
    """The name of the subnet's secondary range for pods."""
    services_range_name: GcpName
    """The name of the subnet's secondary range for Services."""

    @property
    def ref(self) -> NetworkRef:
        """Where a cluster attaches."""
        return NetworkRef(self.network, self.subnetwork, self.pods_range_name, self.services_range_name)


class NetworkSpec(Section):
    """The primary VPC's address ranges (a stack file's `trainstack:network`, infra/stack.py)."""

    subnet_cidr: Cidr = "10.0.0.0/20"
    """The primary range of the subnet the stack makes (the nodes' addresses)."""
    pods_cidr: Cidr = "10.4.0.0/14"
    """The subnet's secondary range for pods."""
    services_cidr: Cidr = "10.8.0.0/20"
    """The subnet's secondary range for Services."""

    def ranges(self) -> dict[str, str]:
        """The ranges, by key, that must not overlap (GCP refuses overlapping primary and secondary ranges in a VPC)."""
        return {"subnetCidr": self.subnet_cidr, "podsCidr": self.pods_cidr, "servicesCidr": self.services_cidr}

    @model_validator(mode="after")
    def _rules(self) -> NetworkSpec:
        rule_errors(type(self).__name__, [Problem((key,), value, rule) for key, value, rule in rules.overlaps(self.ranges())])
        return self


@dataclass(frozen=True)
class PrimaryNetworkArgs(Args):
    """Arguments of PrimaryNetwork: its ranges as a stack file writes them, and what the stack around it derives."""

    spec: NetworkSpec
    """The VPC's ranges: a stack file's `trainstack:network` (its `subnetCidr`, `podsCidr`, `servicesCidr`)."""
    project: str
    """The project of the VPC and its subnet."""
    region: str
    """The subnet's region."""
    name_prefix: str
    """Prefix of physical names (`<prefix>-net`, `<prefix>-subnet`, ...)."""
    keep_vpc: bool = False
    """`pulumi destroy` leaves the VPC in the project: storage kept on destroy (a Filestore
    instance, a Managed Lustre instance) stays peered with it, and GCP deletes no VPC that has a peering."""
    egress_address: bool = False
    """The Cloud NAT translates to one regional static external address reserved here
    (`<prefix>-nat-ip`, `MANUAL_ONLY`), exported as `egress`, instead of addresses it allocates and
    may change itself (`AUTO_ONLY`): what another cluster's authorized networks can admit (a fleet's
    manager). Turning it on updates the NAT in place (`natIpAllocateOption` and `natIps` are not
    ForceNew: terraform-provider-google-beta 93c65b2 google-beta/services/compute/
    resource_compute_router_nat.go), and its connections move to the new address."""
    mtu: int | None = None
    """The VPC's MTU when it is created (None: GCP's default, 1460); rules.primary_mtu picks
    8896 for RDMA machines and Managed Lustre. A live VPC keeps the MTU it was made with: see
    PrimaryNetwork."""

    # The longest suffixes are `-router` and `-nat-ip` (7): the names stay GCP names of at most 63 characters.
    _checks = {
        "project": rules.PROJECT_ID,
        "region": rules.REGION_ID,
        "name_prefix": rules.Pattern(
            r"[a-z]([-a-z0-9]*[a-z0-9])?", "must be a GCP name prefix: a lowercase letter, then lowercase letters, digits and '-'", 56
        ),
        "mtu": rules.MTU,
    }


class PrimaryNetwork(pulumi.ComponentResource):
    """A custom-mode VPC with one subnet (Private Google Access on, pod and Service secondary
    ranges), a Cloud Router with Cloud NAT so private nodes reach registries, and a firewall
    rule admitting traffic between nodes and pods.

    The VPC's MTU is set when it is created and never changed by a later `up`
    (`ignoreChanges: [mtu]`): terraform-provider-google updates `mtu` in place (017d2f5
    google/services/compute/resource_compute_network.go: not ForceNew since GoogleCloudPlatform/
    magic-modules#13995, 2025, so in the provider pulumi-gcp 10 bridges), by a PATCH of the live
    network, and GCP says not to change a network's MTU while VMs run on it: they would disagree
    on the MTU until each restarts (Linux VMs read it from DHCP at boot), and connectivity is
    unreliable meanwhile; the safe way is to stop every VM, change the MTU, start them again
    (cloud.google.com/vpc/docs/change-mtu-vpc-network). So a stack made before trainstack set an
    MTU keeps 1460; `README.md` ("Managed Lustre") gives the procedure to move it.
    """

    network: gcp.compute.Network
    """The VPC."""
    subnetwork: gcp.compute.Subnetwork
    """The nodes' subnet."""
    ref: NetworkRef
    """Where a cluster attaches (GkeClusterArgs.network)."""
    egress: pulumi.Output[list[str]]
    """The NAT's reserved address as a /32 CIDR (`egress_address`), else no CIDR."""

    def __init__(self, name: str, args: PrimaryNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        args = PrimaryNetworkArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:PrimaryNetwork", name, None, opts)
        kids = Children(self, name, opts)
        self.network = gcp.compute.Network(
            **kids("vpc", retain_on_delete=args.keep_vpc or None, ignore_changes=["mtu"]),
            project=args.project,
            name=f"{args.name_prefix}-net",
            auto_create_subnetworks=False,
            mtu=args.mtu,
            routing_mode="REGIONAL",
        )
        self.subnetwork = gcp.compute.Subnetwork(
            **kids("subnet"),
            project=args.project,
            region=args.region,
            name=f"{args.name_prefix}-subnet",
            network=self.network.id,
            ip_cidr_range=args.spec.subnet_cidr,
            private_ip_google_access=True,
            secondary_ip_ranges=[
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=PODS_RANGE, ip_cidr_range=args.spec.pods_cidr),
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=SERVICES_RANGE, ip_cidr_range=args.spec.services_cidr),
            ],
        )
        router = gcp.compute.Router(
            **kids("router"),
            project=args.project,
            region=args.region,
            name=f"{args.name_prefix}-router",
            network=self.network.id,
        )
        # A regional external address in the NAT's region. One address: its source ports 1024-65535
        # (64,512; cloud.google.com/nat/docs/ports-and-addresses) at the default 64 a VM with static
        # allocation (terraform-provider-google-beta 93c65b2 resource_compute_router_nat.go
        # `min_ports_per_vm`) serve 1,008 VMs, far more than a CPU-only manager runs.
        address = (
            gcp.compute.Address(
                **kids("nat-ip"),
                project=args.project,
                region=args.region,
                name=f"{args.name_prefix}-nat-ip",
                address_type="EXTERNAL",
            )
            if args.egress_address
            else None
        )
        self.egress = address.address.apply(lambda ip: [f"{ip}/32"]) if address else pulumi.Output.from_input([])
        gcp.compute.RouterNat(
            **kids("nat"),
            project=args.project,
            region=args.region,
            name=f"{args.name_prefix}-nat",
            router=router.name,
            nat_ip_allocate_option="MANUAL_ONLY" if address else "AUTO_ONLY",
            nat_ips=[address.self_link] if address else None,
            source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
            log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
        )
        gcp.compute.Firewall(
            **kids("internal"),
            project=args.project,
            name=f"{args.name_prefix}-internal",
            network=self.network.id,
            direction="INGRESS",
            source_ranges=sorted({args.spec.subnet_cidr, args.spec.pods_cidr}),
            allows=_INTERNAL,
        )
        self.ref = NetworkRef(self.network.name, self.subnetwork.name, PODS_RANGE, SERVICES_RANGE)
        self.register_outputs({"network": self.network.name, "subnetwork": self.subnetwork.name})


@dataclass(frozen=True)
class GpuNicNetworksArgs(Args):
    """Arguments of GpuNicNetworks."""

    project: str
    """The networks' project."""
    region: str
    """The subnets' region."""
    zone: str
    """The GPU pool's zone: an RDMA VPC is bound to its RoCE profile."""
    name_prefix: str
    """Prefix of physical names (`<prefix>-vpc1`, `<prefix>-rdma-net`, ...)."""
    machine_type: str
    """The GPU machine type: its catalog record gives the NICs, GPUDirect stack and MTU."""
    nic_cidr: str
    """A /16 the NIC subnets are carved from as /24s (the firewall's source)."""
    nic_prefix: str = ""
    """Starts the NIC networks' names (`tcpx-vpc1`): a second machine family on the cluster."""
    flow_logs: bool = False
    """VPC flow logs on the gVNIC subnets (5 s aggregation, half the flows sampled, all metadata)."""

    _checks = {
        "project": rules.PROJECT_ID,
        "region": rules.REGION_ID,
        "zone": rules.ZONE_ID,
        "name_prefix": rules.Pattern(
            r"[a-z]([-a-z0-9]*[a-z0-9])?", "must be a GCP name prefix: a lowercase letter, then lowercase letters, digits and '-'", 48
        ),
        "machine_type": rules.gpu_machine,
        "nic_cidr": (rules.cidr, rules.NIC_CIDR),
        "nic_prefix": rules.Pattern(r"([a-z][-a-z0-9]*-)?", "must be empty or a lowercase name ending in '-'", 16),
    }

    @property
    def machine(self) -> catalog.Machine:
        """The machine's catalog record."""
        return catalog.machine(self.machine_type)

    @property
    def nics(self) -> list[NicNetwork]:
        """The extra NIC networks, in interface order (`catalog.nic_networks`)."""
        return catalog.nic_networks(self.machine, self.nic_cidr, self.nic_prefix)


class GpuNicNetworks(pulumi.ComponentResource):
    """The VPCs behind a GPU machine's extra NICs, at the machine's MTU (set when each VPC is
    created and never changed in place, as PrimaryNetwork's).

    Each gVNIC NIC gets its own VPC and subnet with a firewall rule for traffic between the
    NIC subnets (TCPX/TCPXO move GPU data over these). RDMA NICs share one VPC created with the
    zone's RoCE network profile of the machine (catalog `rdma_profile`), one subnet per NIC, or,
    where the profile makes the VPC's one subnet itself (RoCE metal), that subnet for every NIC;
    RoCE VPCs carry only MRDMA traffic and take no firewall rules.
    """

    def __init__(self, name: str, args: GpuNicNetworksArgs, opts: pulumi.ResourceOptions | None = None):
        args = GpuNicNetworksArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:GpuNicNetworks", name, None, opts)
        kids = Children(self, name, opts)
        # (NIC network, VPC name, subnet name) in interface order.
        self.networks: list[tuple[NicNetwork, pulumi.Output[str], pulumi.Output[str]]] = []
        rdma_vpc: gcp.compute.Network | None = None
        for nic in args.nics:
            if nic.kind == "rdma":
                if rdma_vpc is None:
                    rdma_vpc = gcp.compute.Network(
                        **kids("rdma", ignore_changes=["mtu"]),
                        project=args.project,
                        name=f"{args.name_prefix}-rdma-net",
                        auto_create_subnetworks=False,
                        mtu=args.machine.mtu,
                        network_profile=args.machine.rdma_profile.path(args.project, args.zone),
                        routing_mode="REGIONAL",
                    )
                vpc = rdma_vpc
                if args.machine.rdma_profile.predefined_subnet:
                    self.networks.append((nic, vpc.name, vpc.name.apply(args.machine.rdma_profile.subnet)))
                    continue
            else:
                vpc = gcp.compute.Network(
                    **kids(nic.name, ignore_changes=["mtu"]),
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
                log_config=gcp.compute.SubnetworkLogConfigArgs(aggregation_interval="INTERVAL_5_SEC", flow_sampling=0.5, metadata="INCLUDE_ALL_METADATA")
                if args.flow_logs and nic.kind == "gvnic"
                else None,
            )
            self.networks.append((nic, vpc.name, subnet.name))
        self.register_outputs({"networks": [{"name": n.name, "network": v, "subnetwork": s} for n, v, s in self.networks]})
