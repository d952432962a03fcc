"""Node pools: each machine family's GPU pool, the CPU pool, and the node service account."""

from __future__ import annotations

from typing import Any

import pytest

from gcp_support import NODE_POOL, PROJECT, ZONE, by_name, first_gpu_pool, of_type, render
from trainstack.components.node_pools import GPU_TAINT, NODE_ROLES
from trainstack.core import catalog

NODE_SA = f"a3ultra-405b-nodes@{PROJECT}.iam.gserviceaccount.com"


def gpu_pool(variant: str = "a3ultra", **changes):
    return first_gpu_pool(render(variant, **changes))


def test_a3_ultra_pool_follows_the_catalog() -> None:
    pool = gpu_pool().inputs
    config = pool["nodeConfig"]
    assert pool["name"] == "a3-ultra"
    assert pool["location"] == "us-central1"
    assert pool["cluster"] == f"projects/{PROJECT}/locations/us-central1/clusters/a3ultra-405b"
    assert pool["nodeLocations"] == [ZONE]
    assert pool["nodeCount"] == 54
    assert config["machineType"] == "a3-ultragpu-8g"
    assert config["guestAccelerators"] == [{"type": "nvidia-h200-141gb", "count": 8, "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}]
    assert config["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 32}
    assert config["gvnic"] == {"enabled": True}
    assert config["imageType"] == "COS_CONTAINERD"
    assert config["diskType"] == "hyperdisk-balanced"
    assert config["diskSizeGb"] == 200


def test_gpu_nodes_are_tainted_with_the_one_gpu_taint_and_carry_no_label_of_ours() -> None:
    config = gpu_pool().inputs["nodeConfig"]
    assert config["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    assert (GPU_TAINT.key, GPU_TAINT.value, GPU_TAINT.effect) == ("nvidia.com/gpu", "present", "NoSchedule")
    # Pods select GKE's own node labels (GpuNodePool.node_selector); a label nobody selects is noise.
    assert "labels" not in config


def test_one_additional_node_network_per_extra_nic_in_order() -> None:
    networks = gpu_pool().inputs["networkConfig"]["additionalNodeNetworkConfigs"]
    assert networks[0] == {"network": "a3ultra-405b-gvnic-1-net", "subnetwork": "a3ultra-405b-gvnic-1-subnet"}
    assert networks[1:] == [{"network": "a3ultra-405b-rdma-net", "subnetwork": f"a3ultra-405b-rdma-{i}-subnet"} for i in range(8)]


@pytest.mark.parametrize(("variant", "nics", "ssds", "disk"), [("a3mega", 8, 16, "pd-balanced"), ("a3high", 4, 16, "pd-balanced")])
def test_tcpx_pools(variant: str, nics: int, ssds: int, disk: str) -> None:
    config = gpu_pool(variant).inputs
    assert [n["network"] for n in config["networkConfig"]["additionalNodeNetworkConfigs"]] == [f"a3ultra-405b-vpc{i + 1}-net" for i in range(nics)]
    assert config["nodeConfig"]["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": ssds}
    assert config["nodeConfig"]["diskType"] == disk == catalog.machine(config["nodeConfig"]["machineType"]).boot_disk_type


def test_a_specific_reservation_gets_no_placement_policy() -> None:
    """The reservation's own (dense) deployment places its VMs: Cluster Toolkit's A3 Ultra and A3
    Mega blueprints never set a placement policy with a specific reservation."""
    pool = gpu_pool().inputs
    assert "placementPolicy" not in pool
    assert pool["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["a3-ultra-reservation"],
    }


def test_compact_placement_where_no_specific_reservation_places_the_nodes() -> None:
    pool = gpu_pool(trainstack_gpuPool={"reservation": {"affinity": "any", "name": None}}).inputs
    assert pool["placementPolicy"] == {"type": "COMPACT"}
    flex = {"reservation": {"affinity": "none", "name": None}, "provisioning": "flex-start", "nodeCount": None, "autoscaling": {"maxNodes": 4}}
    # A3 Ultra allows compact placement with flex-start (Cluster Toolkit's A3 Ultra blueprint).
    changes: dict[str, Any] = {
        "trainstack_gpuPool": flex,
        "trainstack_workload": {"nodes": 4, "resiliency": {"nodesPerDataParallelReplica": 2}},
        "trainstack_kueue": {"waitForPodsReady": {"timeout": "30m"}},  # the pool scales up for the job (rules.pods_ready_budget)
    }
    assert gpu_pool(**changes).inputs["placementPolicy"] == {"type": "COMPACT"}


def test_shared_reservation_is_named_by_its_project() -> None:
    pool = gpu_pool(trainstack_gpuPool={"reservation": {"affinity": "specific", "name": "r1", "project": "capacity-host"}}).inputs
    assert pool["nodeConfig"]["reservationAffinity"]["values"] == ["projects/capacity-host/reservations/r1"]


@pytest.mark.parametrize(("variant", "affinity"), [("a3mega", "ANY_RESERVATION"), ("a2", "NO_RESERVATION"), ("flex", "NO_RESERVATION")])
def test_reservation_affinity(variant: str, affinity: str) -> None:
    reservation = gpu_pool(variant).inputs["nodeConfig"]["reservationAffinity"]
    assert reservation == {"consumeReservationType": affinity}


def test_upgrades_replace_one_node_at_a_time_and_repair_is_on() -> None:
    pool = gpu_pool().inputs
    assert pool["upgradeSettings"] == {"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": 1}
    assert pool["management"] == {"autoRepair": True, "autoUpgrade": True}
    changed = gpu_pool(trainstack_gpuPool={"upgrade": {"maxSurge": 2, "maxUnavailable": 0}}).inputs
    assert changed["upgradeSettings"] == {"strategy": "SURGE", "maxSurge": 2, "maxUnavailable": 0}


def test_autoscaling_from_zero_leaves_the_size_to_the_autoscaler() -> None:
    reg = gpu_pool("a2")
    pool = reg.inputs
    assert pool["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "BALANCED"}
    assert "nodeCount" not in pool
    assert pool["initialNodeCount"] == 0
    assert reg.options["ignoreChanges"] == ["initialNodeCount", "nodeCount"]
    assert "ignoreChanges" not in gpu_pool().options


def test_a2_pool_installs_no_driver_and_has_no_local_ssd_or_placement() -> None:
    pool = gpu_pool("a2").inputs
    config = pool["nodeConfig"]
    assert config["guestAccelerators"][0]["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
    assert config["guestAccelerators"][0]["type"] == "nvidia-tesla-a100"
    assert "ephemeralStorageLocalSsdConfig" not in config
    assert "networkConfig" not in pool
    assert "placementPolicy" not in pool


def test_flex_start_pool() -> None:
    pool = gpu_pool("flex").inputs
    assert pool["nodeConfig"]["flexStart"] is True
    assert "spot" not in pool["nodeConfig"]
    assert pool["management"] == {"autoRepair": False, "autoUpgrade": True}
    assert pool["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 8, "locationPolicy": "ANY"}
    assert pool["nodeConfig"]["guestAccelerators"][0]["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "DEFAULT"}


def test_spot_pool() -> None:
    config = gpu_pool("a3high").inputs["nodeConfig"]
    assert config["spot"] is True
    assert "flexStart" not in config
    assert "spot" not in gpu_pool().inputs["nodeConfig"]


def test_fixed_size_is_spread_over_zones() -> None:
    pool = gpu_pool(
        "a3mega",
        trainstack_gpuPool={"placement": "none", "zones": ["us-central1-a", "us-central1-b"], "nodeCount": 32},
        trainstack_cpuPool={"zones": ["us-central1-a"]},
    ).inputs
    assert pool["nodeLocations"] == ["us-central1-a", "us-central1-b"]
    assert pool["nodeCount"] == 16


def test_cpu_pool_for_controllers() -> None:
    pool = by_name(render("a3ultra"), NODE_POOL, "cpu-pool").inputs
    assert pool["name"] == "supervisor-cpu-pool"
    assert pool["nodeCount"] == 2
    assert pool["nodeLocations"] == [ZONE]
    config = pool["nodeConfig"]
    assert config["machineType"] == "e2-standard-8"
    assert "labels" not in config
    assert "taints" not in config and "guestAccelerators" not in config
    assert pool["management"] == {"autoRepair": True, "autoUpgrade": True}


@pytest.mark.parametrize("name", ["gpu-pool-a3-ultra", "cpu-pool"])
def test_pools_run_as_the_least_privilege_node_account(name: str) -> None:
    rendered = render("a3ultra")
    config = by_name(rendered, NODE_POOL, name).inputs["nodeConfig"]
    assert config["serviceAccount"] == NODE_SA
    assert config["oauthScopes"] == ["https://www.googleapis.com/auth/cloud-platform"]
    assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert config["shieldedInstanceConfig"] == {"enableSecureBoot": True, "enableIntegrityMonitoring": True}
    assert config["resourceLabels"] == {"managed-by": "trainstack", "trainstack-stack": "a3ultra-405b"}
    grants = {g.urn for g in of_type(rendered, "gcp:projects/iAMMember:IAMMember")}
    assert grants <= set(by_name(rendered, NODE_POOL, name).dependencies)


def test_node_account_roles() -> None:
    rendered = render("a3ultra")
    account = by_name(rendered, "gcp:serviceaccount/account:Account", "node-sa").inputs
    assert account["accountId"] == "a3ultra-405b-nodes"
    grants = of_type(rendered, "gcp:projects/iAMMember:IAMMember")
    assert (
        sorted(g.inputs["role"] for g in grants)
        == sorted(NODE_ROLES)
        == sorted(
            [
                "roles/logging.logWriter",
                "roles/monitoring.metricWriter",
                "roles/monitoring.viewer",
                "roles/stackdriver.resourceMetadata.writer",
            ]
        )
    )
    assert {g.inputs["member"] for g in grants} == {f"serviceAccount:{NODE_SA}"}
    assert {g.inputs["project"] for g in grants} == {PROJECT}
