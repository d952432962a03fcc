"""Networks: the primary VPC (or an existing one) and the GPU NIC networks of each machine."""

from __future__ import annotations

import dataclasses

import pytest

from gcp_support import (
    CLUSTER,
    FIREWALL,
    NETWORK,
    PROJECT,
    REGION,
    SUBNETWORK,
    ZONE,
    by_name,
    of_type,
    render,
)

NIC_PARENT = "trainstack:gcp:GpuNicNetworks"


def nic_children(variant: str, type_token: str) -> list:
    """The GpuNicNetworks component's children of `type_token` (the variant's one machine type's),
    named by role (`gpu-nics-<machine>-` dropped)."""
    rendered = render(variant)
    (component,) = [r.name for r in rendered.registrations if r.type == NIC_PARENT]
    machine = component.removeprefix("gpu-nics-")
    found = [r for r in of_type(rendered, type_token) if r.parent and r.parent.endswith(f"{NIC_PARENT}::gpu-nics-{machine}")]
    return [dataclasses.replace(r, name=r.name.removeprefix(f"gpu-nics-{machine}-")) for r in found]


def test_primary_network_is_a_custom_vpc_with_pod_and_service_ranges() -> None:
    rendered = render("a3ultra")
    vpc = by_name(rendered, NETWORK, "network-vpc")
    assert vpc.inputs["autoCreateSubnetworks"] is False
    assert vpc.inputs["name"] == "a3ultra-405b-net"
    subnet = by_name(rendered, SUBNETWORK, "network-subnet").inputs
    assert subnet["region"] == REGION
    assert subnet["ipCidrRange"] == "10.0.0.0/20"
    assert subnet["privateIpGoogleAccess"] is True
    assert subnet["secondaryIpRanges"] == [
        {"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"},
        {"rangeName": "services", "ipCidrRange": "10.8.0.0/20"},
    ]


def test_private_nodes_reach_registries_through_cloud_nat() -> None:
    rendered = render("a3ultra")
    router = by_name(rendered, "gcp:compute/router:Router", "network-router")
    nat = by_name(rendered, "gcp:compute/routerNat:RouterNat", "network-nat")
    assert nat.inputs["router"] == router.inputs["name"]
    assert nat.inputs["natIpAllocateOption"] == "AUTO_ONLY"
    assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"


def test_internal_firewall_admits_node_and_pod_ranges() -> None:
    rule = by_name(render("a3ultra"), FIREWALL, "network-internal").inputs
    assert rule["direction"] == "INGRESS"
    assert rule["sourceRanges"] == ["10.0.0.0/20", "10.4.0.0/14"]
    assert {a["protocol"] for a in rule["allows"]} == {"tcp", "udp", "icmp"}


def test_a3_ultra_has_one_gvnic_vpc_and_an_rdma_vpc_with_eight_subnets() -> None:
    networks = {n.name: n.inputs for n in nic_children("a3ultra", NETWORK)}
    assert set(networks) == {"gvnic-1", "rdma"}
    assert networks["gvnic-1"]["mtu"] == 8896
    assert "networkProfile" not in networks["gvnic-1"]
    assert networks["rdma"]["mtu"] == 8896
    assert networks["rdma"]["networkProfile"] == f"projects/{PROJECT}/global/networkProfiles/{ZONE}-vpc-roce"
    subnets = {s.name: s.inputs for s in nic_children("a3ultra", SUBNETWORK)}
    assert sorted(subnets) == ["gvnic-1"] + [f"rdma-{i}" for i in range(8)]
    assert subnets["gvnic-1"]["ipCidrRange"] == "192.168.0.0/24"
    assert [subnets[f"rdma-{i}"]["ipCidrRange"] for i in range(8)] == [f"192.168.{i + 1}.0/24" for i in range(8)]
    rdma_vpc = f"projects/{PROJECT}/global/networks/a3ultra-405b-rdma-net"
    assert all(subnets[f"rdma-{i}"]["network"] == rdma_vpc for i in range(8))


def test_rdma_vpc_takes_no_firewall_rule() -> None:
    assert [f.name for f in nic_children("a3ultra", FIREWALL)] == ["gvnic-1"]


@pytest.mark.parametrize(("variant", "count", "mtu"), [("a3mega", 8, 8244), ("a3high", 4, 8244)])
def test_tcpx_machines_get_one_vpc_per_extra_nic(variant: str, count: int, mtu: int) -> None:
    names = [f"vpc{i + 1}" for i in range(count)]
    networks = {n.name: n.inputs for n in nic_children(variant, NETWORK)}
    assert sorted(networks) == sorted(names)
    assert {n["mtu"] for n in networks.values()} == {mtu}
    assert not any("networkProfile" in n for n in networks.values())
    assert sorted(s.name for s in nic_children(variant, SUBNETWORK)) == sorted(names)
    assert sorted(f.name for f in nic_children(variant, FIREWALL)) == sorted(names)
    for rule in nic_children(variant, FIREWALL):
        assert rule.inputs["sourceRanges"] == ["192.168.0.0/16"]


def test_a2_needs_no_extra_networks() -> None:
    rendered = render("a2")
    assert not [r for r in rendered.registrations if r.type == NIC_PARENT]
    assert rendered.outputs["_nics"] == []


def test_platform_lists_nic_networks_in_interface_order() -> None:
    nics = render("a3ultra").outputs["_nics"]
    assert [n["name"] for n in nics] == ["gvnic-1"] + [f"rdma-{i}" for i in range(8)]
    assert nics[0] == {"name": "gvnic-1", "network": "a3ultra-405b-gvnic-1-net", "subnetwork": "a3ultra-405b-gvnic-1-subnet"}
    assert nics[1] == {"name": "rdma-0", "network": "a3ultra-405b-rdma-net", "subnetwork": "a3ultra-405b-rdma-0-subnet"}


def test_existing_network_is_used_as_is() -> None:
    rendered = render("a3high")
    assert not [r for r in rendered.registrations if r.type == "trainstack:gcp:PrimaryNetwork"]
    assert not of_type(rendered, "gcp:compute/routerNat:RouterNat")
    cluster = by_name(rendered, CLUSTER, "cluster").inputs
    assert (cluster["network"], cluster["subnetwork"]) == ("shared-net", "shared-subnet")
    assert cluster["ipAllocationPolicy"] == {"clusterSecondaryRangeName": "gke-pods", "servicesSecondaryRangeName": "gke-services"}


@pytest.mark.parametrize(
    ("variant", "changes", "mtu"),
    [
        ("a3ultra", {}, 8896),  # RDMA
        ("a3mega", {}, None),  # TCPXO on Filestore: GCP's default, 1460
        ("a2", {}, None),
        # Managed Lustre on a machine without RDMA: its VPC guide creates the network --mtu=8896
        # (docs.cloud.google.com/managed-lustre/docs/vpc) for up to ~10% more throughput (.../performance).
        (
            "a3mega",
            {"trainstack_storage": {"kind": "lustre", "filestore": None, "lustre": {"capacityGib": 9000}}, "trainstack_cluster": {"versionPrefix": "1.34."}},
            8896,
        ),
    ],
)
def test_a_new_vpc_for_rdma_machines_or_lustre_takes_jumbo_frames(variant: str, changes: dict, mtu: int | None) -> None:
    vpc = by_name(render(variant, **changes), NETWORK, "network-vpc")
    assert vpc.inputs.get("mtu") == mtu


def test_an_existing_vpcs_mtu_is_never_changed_in_place() -> None:
    """terraform-provider-google 017d2f5 resource_compute_network.go: `mtu` is Optional and Computed,
    not ForceNew, so the provider PATCHes a live network's MTU; GCP says never to while VMs run on it
    (cloud.google.com/vpc/docs/change-mtu-vpc-network). Pulumi's ignoreChanges keeps the old value,
    so a stack made at 1460 stays there; the MTU is set only when the VPC is created."""
    for variant in ("a3ultra", "a3mega"):
        assert "mtu" in by_name(render(variant), NETWORK, "network-vpc").options["ignoreChanges"]
