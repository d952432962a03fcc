"""Storage: the HNS bucket and its Workload Identity grant, Filestore, the NFS disk."""

from __future__ import annotations

import pytest

from gcp_support import (
    BUCKET,
    BUCKET_MEMBER,
    DISK,
    FILESTORE,
    PROJECT,
    REGION,
    ZONE,
    by_name,
    of_type,
    render,
)
from trainstack.core.testing import FakeGcp


def test_bucket_is_hierarchical_private_regional_and_kept_on_destroy() -> None:
    reg = by_name(render("a3ultra"), BUCKET, "bucket")
    bucket = reg.inputs
    assert bucket["name"] == f"{PROJECT}-a3ultra-405b"
    assert bucket["location"] == REGION.upper()
    assert bucket["hierarchicalNamespace"] == {"enabled": True}
    assert bucket["uniformBucketLevelAccess"] is True
    assert bucket["publicAccessPrevention"] == "enforced"
    assert bucket["forceDestroy"] is False
    assert bucket["labels"] == {"managed-by": "trainstack", "trainstack-stack": "a3ultra-405b"}
    # Destroy leaves it and its data (and does not refuse the whole destroy, as protect would).
    assert reg.options == {"retainOnDelete": True}


def test_disposable_bucket_can_be_destroyed_with_its_objects() -> None:
    reg = by_name(render("flex"), BUCKET, "bucket")
    assert reg.inputs["name"] == "my-scratch-bucket"
    assert reg.inputs["forceDestroy"] is True
    assert reg.options == {}


@pytest.mark.parametrize(("variant", "type_token", "name"), [("a3mega", FILESTORE, "filestore"), ("a2", DISK, "nfs-disk")])
def test_shares_and_disks_follow_the_one_data_rule(variant: str, type_token: str, name: str) -> None:
    assert by_name(render(variant), type_token, name).options == {"retainOnDelete": True}
    assert by_name(render(variant, trainstack_storage={"disposable": True}), type_token, name).options == {}


def test_workload_service_account_gets_object_access_through_workload_identity() -> None:
    (grant,) = of_type(render("a3ultra"), BUCKET_MEMBER)
    number = FakeGcp(PROJECT, REGION, ZONE).project_number
    assert grant.inputs["bucket"] == f"{PROJECT}-a3ultra-405b"
    assert grant.inputs["role"] == "roles/storage.objectUser"
    assert grant.inputs["member"] == (
        f"principal://iam.googleapis.com/projects/{number}/locations/global/workloadIdentityPools/"
        f"{PROJECT}.svc.id.goog/subject/ns/default/sa/trainstack-workload"
    )


def test_grant_follows_the_workload_namespace() -> None:
    (grant,) = of_type(render("a3ultra", trainstack_workload={"namespace": "training"}), BUCKET_MEMBER)
    assert grant.inputs["member"].endswith("/subject/ns/training/sa/trainstack-workload")


def test_bucket_output() -> None:
    assert render("a3ultra").outputs["bucketUrl"] == f"gs://{PROJECT}-a3ultra-405b"


def test_zonal_filestore_on_the_primary_vpc() -> None:
    rendered = render("a3mega")
    instance = by_name(rendered, FILESTORE, "filestore").inputs
    assert instance["name"] == "a3ultra-405b-filestore"
    assert instance["tier"] == "ZONAL"
    assert instance["location"] == ZONE
    assert instance["fileShares"] == {"name": "share1", "capacityGb": 1024}
    assert instance["networks"] == [{"network": "a3ultra-405b-net", "modes": ["MODE_IPV4"], "connectMode": "DIRECT_PEERING"}]
    assert rendered.outputs["filestoreAddress"].startswith("10.200.")
    assert rendered.outputs["filestoreAddress"].endswith(":/share1")
    assert [b.name for b in of_type(rendered, BUCKET)] == ["image-staging"]  # only the image build's


def test_enterprise_filestore_is_regional_on_an_existing_network() -> None:
    instance = by_name(render("a3high"), FILESTORE, "filestore").inputs
    assert (instance["tier"], instance["location"]) == ("ENTERPRISE", REGION)
    assert instance["networks"][0]["network"] == "shared-net"
    assert instance["fileShares"]["name"] == "nemo"


def test_nfs_disk_in_the_gpu_zone() -> None:
    rendered = render("a2")
    disk = by_name(rendered, DISK, "nfs-disk").inputs
    assert disk == {
        "name": "a3ultra-405b-nfs",
        "project": PROJECT,
        "zone": ZONE,
        "type": "pd-ssd",
        "size": 1000,
        "labels": {"managed-by": "trainstack", "trainstack-stack": "a3ultra-405b"},
    }
    assert rendered.outputs["nfsDisk"] == "a3ultra-405b-nfs"
