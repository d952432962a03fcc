"""Managed Lustre as a storage kind: the instance on the cluster's VPC through private services
access, GKE's Lustre CSI driver, a static volume, the capacity rules, and data kept on destroy.

Sources: capacities by throughput, core/catalog/storage.py LUSTRE_TIERS (Managed Lustre docs "Performance
tiers"); the volume handle and attributes, GoogleCloudPlatform/lustre-csi-driver 89f1eb7
pkg/util/util.go ParseVolumeID and pkg/csi_driver/controller.go; the cluster addon,
terraform-provider-google e03b762 `addons_config.lustre_csi_driver_config`.
"""

from __future__ import annotations

from typing import Any

import pytest

from helpers import load_platform, named, raw_config
from trainstack.app.deploy.stack_file import load
from trainstack.app.plan.plan import render
from trainstack.app.schemas.validate import validate_object
from trainstack.components.storage.lustre import LustreSpec
from trainstack.core import catalog
from trainstack.core.errors import ConfigError

STACK = "a3mega-gpt3-175b"  # no deletion protection: destroy reaches the storage


def lustre(**spec: Any) -> dict[str, Any]:
    """The stack on Managed Lustre, its cluster on a GKE minor whose nodes take port 988 (rules.lustre_gke_version)."""
    return raw_config(
        STACK,
        trainstack_storage={"kind": "lustre", "lustre": spec, "disposable": spec.pop("disposable", False)},
        trainstack_cluster={"versionPrefix": "1.34."},
    )


def problems(raw: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        load(STACK, raw)
    return str(caught.value)


@pytest.mark.parametrize(
    ("throughput", "good", "bad"),
    [
        (1000, [9000, 18000, 1530000, 1584000, 10008000], [8999, 9001, 1539000, 1548000, 10080000]),
        (500, [18000, 3060000, 3168000, 20016000], [9000, 3078000, 20160000]),
        (250, [36000, 6120000, 6336000, 40032000], [18000, 6156000, 40320000]),
        (125, [72000, 12240000], [36000, 108000, 12312000]),
    ],
)
def test_capacity_follows_the_throughput_tier(throughput: int, good: list[int], bad: list[int]) -> None:
    """Just inside and just outside each tier's minimum, step, threshold and maximum."""
    for gib in good:
        spec = load_platform(STACK, lustre(capacityGib=gib, throughput=throughput)).storage.spec
        assert isinstance(spec, LustreSpec) and spec.capacity_gib == gib
    for gib in bad:
        assert f"trainstack:storage.lustre.capacityGib = {gib}: throughput {throughput} MB/s per TiB takes" in problems(
            lustre(capacityGib=gib, throughput=throughput)
        )


def test_throughput_and_file_system_name_as_the_api_takes_them() -> None:
    assert "trainstack:storage.lustre.throughput" in problems(lustre(throughput=2000))
    load(STACK, lustre(filesystem="a1234567"))
    for name in ("a12345678", "1abc", "ab-c"):
        assert f"trainstack:storage.lustre.filesystem = '{name}': must be 1-8 letters or digits" in problems(lustre(filesystem=name))


def test_lustre_needs_the_stacks_own_vpc() -> None:
    raw = lustre()
    raw["trainstack:network"] = {"existing": {"network": "shared", "subnetwork": "s", "podsRangeName": "pods", "servicesRangeName": "services"}}
    assert "Managed Lustre peers with the stack's own VPC" in problems(raw)


@pytest.fixture(scope="module")
def plan() -> dict[str, Any]:
    return render(STACK, lustre(capacityGib=36000, throughput=500)).to_dict()


def one(plan: dict[str, Any], type_token: str) -> dict[str, Any]:
    (found,) = [r for r in plan["resources"] if r["type"] == type_token]
    return found


def test_the_instance_reached_over_private_services_access(plan: dict[str, Any]) -> None:
    instance = one(plan, "gcp:lustre/instance:Instance")
    network = "projects/my-training-project/global/networks/a3mega-gpt3-175b-net"
    wanted = {"capacityGib": "36000", "perUnitStorageThroughput": "500", "filesystem": "lustrefs", "location": "us-central1-a", "network": network}
    assert wanted.items() <= instance["inputs"].items()  # the provider types capacity and throughput as strings
    address = one(plan, "gcp:compute/globalAddress:GlobalAddress")
    assert (address["inputs"]["purpose"], address["inputs"]["prefixLength"], address["inputs"]["network"]) == (
        "VPC_PEERING",
        catalog.LUSTRE_PSA_PREFIX,
        network,
    )
    peering = one(plan, "gcp:servicenetworking/connection:Connection")
    assert peering["inputs"] == {"network": network, "service": "servicenetworking.googleapis.com", "reservedPeeringRanges": [address["inputs"]["name"]]}
    assert peering["urn"] in instance["dependencies"]  # the instance is made once its peering exists
    (rule,) = [r for r in plan["resources"] if r["type"] == "gcp:compute/firewall:Firewall" and r["name"].endswith("-lnet")]
    assert rule["inputs"]["sourceRanges"] == [f"10.232.0.0/{catalog.LUSTRE_PSA_PREFIX}"]
    assert rule["inputs"]["allows"] == [{"protocol": "tcp", "ports": [str(catalog.LUSTRE_LNET_PORT)]}]
    services = {r["inputs"]["service"] for r in plan["resources"] if r["type"] == "gcp:projects/service:Service"}
    assert {"lustre.googleapis.com", "servicenetworking.googleapis.com"} <= services


def test_the_cluster_runs_the_lustre_csi_driver_and_jobs_mount_a_static_volume(plan: dict[str, Any]) -> None:
    cluster = one(plan, "gcp:container/cluster:Cluster")
    assert cluster["inputs"]["addonsConfig"]["lustreCsiDriverConfig"] == {"enabled": True}
    volume = one(plan, "kubernetes:core/v1:PersistentVolume")["inputs"]
    claim = one(plan, "kubernetes:core/v1:PersistentVolumeClaim")["inputs"]
    csi = volume["spec"]["csi"]
    assert csi["driver"] == catalog.LUSTRE_CSI_DRIVER
    project, zone, instance = csi["volumeHandle"].split("/")  # PROJECT_ID/LOCATION/INSTANCE_NAME, as ParseVolumeID takes it
    assert (project, zone, instance) == ("my-training-project", "us-central1-a", one(plan, "gcp:lustre/instance:Instance")["inputs"]["instanceId"])
    assert set(csi["volumeAttributes"]) == {"ip", "filesystem"} and csi["volumeAttributes"]["filesystem"] == "lustrefs"
    assert volume["spec"]["accessModes"] == claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert volume["spec"]["capacity"] == {"storage": "36000Gi"} and claim["spec"]["volumeName"] == volume["metadata"]["name"]
    assert validate_object(volume) == [] and validate_object(claim) == []


def test_destroy_keeps_the_instance_its_range_and_peering_unless_disposable(plan: dict[str, Any]) -> None:
    kept = ("gcp:lustre/instance:Instance", "gcp:compute/globalAddress:GlobalAddress", "gcp:servicenetworking/connection:Connection")
    assert all(one(plan, t)["options"].get("retainOnDelete") for t in kept)
    disposable = render(STACK, lustre(disposable=True)).to_dict()
    assert not any(one(disposable, t)["options"].get("retainOnDelete") for t in kept)
    assert "Lustre" in render(STACK, lustre()).destroy_effect()


@pytest.mark.parametrize("kind", ["filestore", "lustre"])
def test_a_kept_peered_instance_keeps_its_vpc(kind: str) -> None:
    """GCP deletes no VPC that still has a peering: while destroy keeps a Filestore or Lustre
    instance (peered with the VPC), it keeps the VPC too; a disposable one takes the VPC with it."""

    def vpc(disposable: bool) -> dict[str, Any]:
        raw = raw_config(STACK, trainstack_storage={"kind": kind, "disposable": disposable}, trainstack_cluster={"versionPrefix": "1.34."})
        (network,) = [r for r in render(STACK, raw).to_dict()["resources"] if r["type"] == "gcp:compute/network:Network" and named(r["name"], "network-vpc")]
        return network["options"]

    assert vpc(False).get("retainOnDelete") is True
    assert not vpc(True).get("retainOnDelete")
