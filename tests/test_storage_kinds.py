"""The storage kinds' registry (components/storage): each kind's entry says what its module makes,
and the stack file, the GCP layer and the plan read it instead of naming kinds."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest

from gcp_support import render
from trainstack.app.plan.plan import _KINDS
from trainstack.components.gke_cluster import GkeClusterArgs
from trainstack.components.storage import KINDS, KindName, StorageSpec

SERVICE = "gcp:projects/service:Service"
NETWORK = "gcp:compute/network:Network"
# A stack of each kind (tests/gcp_support.py's variants), with the storage they make.
STACKS: dict[str, tuple[str, dict[str, Any]]] = {
    "gcs": ("a3ultra", {}),
    "filestore": ("a3mega", {}),
    "nfs": ("a2", {}),
    "lustre": ("a3ultra", {"trainstack_storage": {"kind": "lustre", "bucket": None}, "trainstack_cluster": {"versionPrefix": "1.33."}}),
}


def test_the_stack_files_kinds_are_the_registrys_in_order() -> None:
    assert typing.get_args(KindName) == tuple(KINDS) == tuple(STACKS)


@pytest.mark.parametrize("name", list(KINDS))
def test_the_storage_section_reads_a_kinds_block_as_its_spec_and_refuses_another_kinds(name: str) -> None:
    kind = KINDS[name]
    storage = StorageSpec.model_validate({"kind": name, kind.block: {}})
    assert type(storage.spec) is kind.spec and storage.of_kind is kind
    assert type(StorageSpec.model_validate({"kind": name}).spec) is kind.spec  # the defaults when the block is left out
    other = next(k for k in KINDS.values() if k.name != name)
    with pytest.raises(ValueError, match=rf"is used only with kind '{other.name}', not '{name}'"):
        StorageSpec.model_validate({"kind": name, other.block: {}})


@pytest.mark.parametrize("name", list(KINDS))
def test_a_kinds_cluster_features_are_flags_of_the_cluster(name: str) -> None:
    flags = {f.name: f.type for f in dataclasses.fields(GkeClusterArgs)}
    assert all(flags.get(feature) == "bool" and on for feature, on in KINDS[name].cluster.items())


@pytest.mark.parametrize("name", list(KINDS))
def test_a_stack_of_a_kind_enables_its_apis_makes_its_part_and_keeps_what_the_kind_says(name: str) -> None:
    """Kept on destroy: the kind's data (as the plan names it) and, where it peers, the VPC."""
    variant, changes = STACKS[name]
    rendered = render(variant, **changes)
    kind = KINDS[name]
    assert set(kind.needs) <= {r.inputs["service"] for r in rendered.registrations if r.type == SERVICE}
    assert [r.type.startswith("trainstack:gcp:") for r in rendered.registrations if r.name == kind.role and not r.custom] == [True]
    kept = {r.type for r in rendered.registrations if r.options.get("retainOnDelete")}
    assert kept - {NETWORK} == set(kind.kept)
    assert (NETWORK in kept) == kind.peered
    assert all(_KINDS[rtype] == called for rtype, called in kind.kept.items())
