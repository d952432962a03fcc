"""The storage kinds' specs (components/storage/<kind>.py): each rule between a kind's keys refuses
its value through the one door, the spec's model, which the stack file's `trainstack:storage.<block>`
and the kind's GCP part (CheckpointBucket, FilestoreShare, LustreInstance, NfsDisk, through the
package too) both are. One case a rule: with the rule deleted, its case passes the model and the
test fails. The volumes share one claimed-volume base (components/storage/volume.py)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from helpers import construct, refuses
from trainstack.components.args import Args
from trainstack.components.storage import KINDS
from trainstack.components.storage.filestore import FilestoreShare, FilestoreShareArgs, FilestoreSpec
from trainstack.components.storage.gcs import BucketSpec, CheckpointBucket, CheckpointBucketArgs, GcsFuseVolume, GcsFuseVolumeArgs
from trainstack.components.storage.lustre import LustreInstance, LustreInstanceArgs, LustreSpec, LustreVolume, LustreVolumeArgs
from trainstack.components.storage.nfs import NfsDisk, NfsDiskArgs, NfsVolume, NfsVolumeArgs
from trainstack.components.storage.volume import ClaimedVolume, ClaimedVolumeArgs
from trainstack.core import rules
from trainstack.core.errors import ArgsError

# (rule, the spec's model, the keys it refuses, the key the problem names, a text of the rule's message)
CASES: list[tuple[str, type[BaseModel], dict[str, Any], tuple[str, ...], str]] = [
    ("hns_uniform", BucketSpec, {"uniformAccess": False}, ("uniformAccess",), rules.HNS_NEEDS_UNIFORM_ACCESS),
    ("parallel_needs_cache", BucketSpec, {"parallelDownloads": True}, ("parallelDownloads",), "set fileCache: true"),
    ("filestore_size", FilestoreSpec, {"capacityGib": 1000}, ("capacityGib",), "tier ZONAL takes 1024 to"),
    ("filestore_size_by_tier", FilestoreSpec, {"tier": "REGIONAL", "capacityGib": 99}, ("capacityGib",), "tier REGIONAL takes 100 to"),
    ("lustre_size", LustreSpec, {"capacityGib": 100}, ("capacityGib",), "throughput 1000 MB/s per TiB"),
]


@pytest.mark.parametrize(("model", "keys", "key", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_storage_rule_refuses_its_value_naming_the_key_as_written(model: type[BaseModel], keys: dict[str, Any], key: tuple[str, ...], text: str) -> None:
    refuses(model, keys, key, text)


@pytest.mark.parametrize("name", list(KINDS))
def test_each_kinds_defaults_pass(name: str) -> None:
    """The specs the cases change are valid as their defaults, so a case's problem is its own change's."""
    assert isinstance(KINDS[name].spec.model_validate({}), KINDS[name].spec)


def test_every_rule_of_both_bucket_keys_is_reported_at_once() -> None:
    with pytest.raises(ValidationError) as refused:
        BucketSpec.model_validate({"uniformAccess": False, "parallelDownloads": True})
    assert sorted(e["loc"] for e in refused.value.errors(include_url=False)) == [("parallelDownloads",), ("uniformAccess",)]


# Each kind's GCP part as the package passes it: the spec's keys (camelCase) beside the wiring (as the Args name it).
PARTS: dict[str, tuple[type, dict[str, Any]]] = {
    "gcs": (CheckpointBucket, {"project": "my-project", "name": "ckpt", "location": "us-central1"}),
    "filestore": (FilestoreShare, {"project": "my-project", "name": "fs", "location": "us-central1-a", "network": "vpc"}),
    "lustre": (LustreInstance, {"project": "my-project", "zone": "us-central1-a", "instance_id": "lustre", "network": "vpc"}),
    "nfs": (NfsDisk, {"project": "my-project", "zone": "us-central1-a", "name": "nfs"}),
}
# A broken rule of each spec that has one, as the package writes it.
BROKEN: dict[str, dict[str, Any]] = {"gcs": {"uniformAccess": False}, "filestore": {"capacityGib": 1000}, "lustre": {"capacityGib": 100}}


def _args(component: type) -> type[Args]:
    """The Args class a component takes."""
    return {CheckpointBucket: CheckpointBucketArgs, FilestoreShare: FilestoreShareArgs, LustreInstance: LustreInstanceArgs, NfsDisk: NfsDiskArgs}[component]


@pytest.mark.parametrize("name", list(KINDS))
def test_a_kinds_gcp_part_takes_its_spec_plus_wiring(name: str) -> None:
    component, inputs = PARTS[name]
    built = _args(component).checked(inputs, component, "res")
    assert isinstance(built.spec, KINDS[name].spec)  # type: ignore[attr-defined]  # every part's Args have a spec
    error, registered = construct(component, built)
    assert error is None and registered


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_kinds_gcp_part_refuses_what_its_spec_does_naming_the_key_as_written(name: str) -> None:
    component, inputs = PARTS[name]
    error, registered = construct(component, {**inputs, **BROKEN[name]})
    assert registered == [] and error is not None
    assert [p.key for p in error.problems] == [tuple(BROKEN[name])]


@pytest.mark.parametrize("key", ["name", "location"])
def test_a_bucket_names_its_name_and_location(key: str) -> None:
    """The stack file's defaults (`<project>-<stack>`, gcp:region) are the stack's: the part needs them said."""
    component, inputs = PARTS["gcs"]
    error, registered = construct(component, {k: v for k, v in inputs.items() if k != key})
    assert registered == [] and error is not None
    assert [(p.key, p.rule) for p in error.problems] == [((key,), "required key is missing")]


def test_a_filestore_instance_takes_the_location_its_tier_does() -> None:
    """A zonal tier's instance in a zone, the others in a region (rules.filestore_location)."""
    component, inputs = PARTS["filestore"]
    error, _ = construct(component, {**inputs, "tier": "REGIONAL", "capacityGib": 1024})
    assert error is not None and [p.key for p in error.problems] == [("location",)]
    assert construct(component, {**inputs, "location": "us-central1", "tier": "REGIONAL", "capacityGib": 1024})[0] is None


NFS = {**PARTS["nfs"][1], "diskType": "pd-ssd"}


def test_the_nfs_disks_deprecated_size_reads_as_the_specs() -> None:
    """NfsDisk's package input `sizeGb` is the spec's `diskSizeGb` now, read for one release."""
    old = NfsDiskArgs.checked({**NFS, "sizeGb": 300}, NfsDisk, "res")
    assert old.spec == NfsDiskArgs.checked({**NFS, "diskSizeGb": 300}, NfsDisk, "res").spec
    assert old.spec.disk_size_gb == 300


def test_the_nfs_disks_deprecated_size_with_its_new_spelling_is_refused() -> None:
    with pytest.raises(ArgsError) as refused:
        NfsDiskArgs.checked({**NFS, "sizeGb": 300, "diskSizeGb": 300}, NfsDisk, "res")
    ((key, _, rule),) = refused.value.problems
    assert key == ("sizeGb",) and rule.startswith("is the deprecated spelling of diskSizeGb")


def test_the_nfs_disks_deprecated_size_keeps_the_specs_rule() -> None:
    with pytest.raises(ArgsError) as refused:
        NfsDiskArgs.checked({**NFS, "sizeGb": 9}, NfsDisk, "res")
    assert [p.key for p in refused.value.problems] == [("diskSizeGb",)]


# Each kind's volume, as the package passes it.
VOLUMES: list[tuple[type[ClaimedVolume], type[ClaimedVolumeArgs], dict[str, Any]]] = [
    (GcsFuseVolume, GcsFuseVolumeArgs, {"bucket": "ckpt"}),
    (NfsVolume, NfsVolumeArgs, {"server": "10.0.0.2", "path": "/share1", "capacity": "1Ti"}),
    (LustreVolume, LustreVolumeArgs, {"volume_handle": "p/z/l", "ip": "10.0.0.3", "filesystem": "lustrefs", "capacity_gib": 9000}),
]


@pytest.mark.parametrize(("component", "args", "source"), VOLUMES, ids=[v[0].__name__ for v in VOLUMES])
@pytest.mark.parametrize("key", ["claim_name", "namespace", "volume_name"])
def test_every_volume_checks_the_claims_names(component: type[ClaimedVolume], args: type[ClaimedVolumeArgs], source: dict[str, Any], key: str) -> None:
    """The claimed-volume base's rules hold for each kind's volume."""
    given = {"claim_name": "shared", "namespace": "ml", **source}
    assert issubclass(component, ClaimedVolume) and issubclass(args, ClaimedVolumeArgs)
    assert construct(component, given)[0] is None
    error, registered = construct(component, {**given, key: "Not_A_Name"})
    assert registered == [] and error is not None and [p.key for p in error.problems] == [(key,)]
