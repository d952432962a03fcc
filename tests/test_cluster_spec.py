"""The cluster's and the primary network's specs (components/gke_cluster.py, components/gcp_network.py):
each rule between their keys refuses its value through the one door, the spec's model, which the
stack file's `trainstack:cluster` / `trainstack:network` and the GkeCluster / PrimaryNetwork package
inputs both are. One case a rule: with the rule deleted, its case passes the model and the test
fails. What only a stack file decides (infra/stack.py ClusterConfig, NetworkConfig) is checked
there and nowhere else: a program's GkeCluster keeps accepting what it accepted."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from helpers import refuses
from trainstack.components.gcp_network import NetworkSpec, PrimaryNetwork, PrimaryNetworkArgs
from trainstack.components.gke_cluster import ClusterSpec, GkeCluster, GkeClusterArgs, Maintenance, MaintenanceExclusion, MaintenanceWindow
from trainstack.core.errors import ArgsError
from trainstack.infra.stack import ClusterConfig, NetworkConfig

PRIVATE: dict[str, Any] = {"name": "c", "privateEndpoint": True}
PACKAGE: dict[str, Any] = {
    "project": "my-project",
    "location": "us-central1",
    "name": "c",
    "node_locations": ["us-central1-a"],
    "network": {"network": "vpc", "subnetwork": "subnet", "pods_range": "pods", "services_range": "services"},
    "node_service_account": "sa",
}
EXISTING = {"network": "vpc", "subnetwork": "subnet", "podsRangeName": "pods", "servicesRangeName": "services"}
# (rule, the spec's model, the keys it refuses, the key the problem names, a text of the rule's message)
CASES: list[tuple[str, type[BaseModel], dict[str, Any], tuple[str | int, ...], str]] = [
    ("private_endpoint_nodes", ClusterSpec, {**PRIVATE, "privateNodes": False}, ("privateEndpoint",), "a private endpoint needs private nodes"),
    (
        "authorized_network_count",
        ClusterSpec,
        {"name": "c", "authorizedNetworks": [{"cidrBlock": f"10.0.{i}.0/24"} for i in range(51)]},
        ("authorizedNetworks",),
        "GKE takes at most 50",
    ),
    (
        "private_endpoint_ranges",
        ClusterSpec,
        {**PRIVATE, "authorizedNetworks": [{"cidrBlock": "10.0.0.0/8"}, {"cidrBlock": "8.8.8.0/24"}]},
        ("authorizedNetworks", 1, "cidrBlock"),
        "is a public range",
    ),
    ("window_length", MaintenanceWindow, {"end": "2026-01-03T05:00:00Z"}, ("end",), "must be 4 to 24 hours after start"),
    ("window_availability", MaintenanceWindow, {"end": "2026-01-03T08:59:00Z"}, ("end",), "GKE requires at least 48 h"),
    ("primary_ranges", NetworkSpec, {"podsCidr": "10.0.0.0/16"}, ("podsCidr",), "overlaps"),
    ("nic_range", NetworkConfig, {"gpuNicCidr": "10.0.0.0/16"}, ("gpuNicCidr",), "overlaps"),
]


@pytest.mark.parametrize(("model", "keys", "key", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_rule_refuses_its_value_naming_the_key_as_written(model: type[BaseModel], keys: dict[str, Any], key: tuple[str | int, ...], text: str) -> None:
    refuses(model, keys, key, text)


def test_the_bases_the_cases_change_pass() -> None:
    assert ClusterSpec.model_validate({**PRIVATE, "authorizedNetworks": [{"cidrBlock": "10.0.0.0/8"}]}).private_endpoint
    assert MaintenanceWindow.model_validate({"end": "2026-01-03T09:00:00Z"}).end == "2026-01-03T09:00:00Z"  # 6 h a day on 2 days: 48 h
    assert NetworkConfig.model_validate({}).ranges() == {**NetworkSpec().ranges(), "gpuNicCidr": "192.168.0.0/16"}


def test_an_existing_vpcs_ranges_are_not_the_stacks_to_check() -> None:
    """With `existing`, the primary ranges are the existing VPC's: the NIC range alone is checked."""
    given = {"existing": EXISTING, "podsCidr": "10.0.0.0/16", "gpuNicCidr": "10.0.0.0/16"}
    assert NetworkConfig.model_validate(given).ranges() == {"gpuNicCidr": "10.0.0.0/16"}
    with pytest.raises(ValidationError):
        NetworkConfig.model_validate({k: v for k, v in given.items() if k != "existing"})


# --- the stack file's own policy ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("networks", "text"),
    [([], "list the networks that may reach the control plane"), ([{"cidrBlock": "0.0.0.0/0"}], "opens the control plane to any address")],
)
def test_an_open_control_plane_is_the_stack_files_opt_in_not_the_components(networks: list[dict[str, str]], text: str) -> None:
    """A stack file opts in to a control plane open to any address (allowAnyAddress); a program's
    GkeCluster is not held to that: it builds as GKE and the component always did."""
    with pytest.raises(ValidationError, match=text):
        ClusterConfig.model_validate({"name": "c", "authorizedNetworks": networks})
    args = GkeClusterArgs.checked({**PACKAGE, "authorizedNetworks": networks}, GkeCluster, "c")
    assert [n.cidr_block for n in args.spec.authorized_networks] == [n["cidrBlock"] for n in networks]


def test_a_stack_file_keeps_upgrades_off_running_jobs_by_default_a_program_sets_no_policy() -> None:
    assert ClusterConfig.model_validate({"name": "c", "authorizedNetworks": [{"cidrBlock": "10.0.0.0/8"}]}).maintenance == Maintenance()
    assert GkeClusterArgs.checked(PACKAGE, GkeCluster, "c").spec.maintenance is None


# --- the package's deprecated spellings -----------------------------------------------------------

WINDOW = {"start": "2026-01-03T03:00:00Z", "end": "2026-01-03T09:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU"}
EXCLUSION = {"name": "freeze", "start": "2026-02-01T00:00:00Z", "scope": "NO_MINOR_UPGRADES"}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A window alone made no exclusion: it still makes none.
        ({"maintenanceWindow": WINDOW}, {"maintenance": {"window": WINDOW, "exclusion": {"enabled": False}}}),
        # An exclusion keeps its name; the policy gets the window GKE requires of every policy.
        ({"maintenanceExclusion": EXCLUSION}, {"maintenance": {"exclusion": EXCLUSION}}),
        ({"maintenanceWindow": WINDOW, "maintenanceExclusion": EXCLUSION}, {"maintenance": {"window": WINDOW, "exclusion": EXCLUSION}}),
        # A window in the old spelling beside an exclusion in the new: the exclusion given is kept.
        ({"maintenanceWindow": WINDOW, "maintenance": {"exclusion": EXCLUSION}}, {"maintenance": {"window": WINDOW, "exclusion": EXCLUSION}}),
    ],
)
def test_the_packages_deprecated_spelling_reads_as_the_spec(old: dict[str, Any], new: dict[str, Any]) -> None:
    """GkeCluster's inputs before the spec's spelling (`maintenanceWindow`, `maintenanceExclusion`)
    are read for one release as the `maintenance` they became."""
    assert GkeClusterArgs.checked({**PACKAGE, **old}, GkeCluster, "c").spec == GkeClusterArgs.checked({**PACKAGE, **new}, GkeCluster, "c").spec


def test_a_deprecated_exclusion_keeps_its_name_in_the_policy() -> None:
    spec = GkeClusterArgs.checked({**PACKAGE, "maintenanceExclusion": EXCLUSION}, GkeCluster, "c").spec
    assert spec.maintenance is not None and spec.maintenance.exclusion.exclusion_name == "freeze"
    assert MaintenanceExclusion(scope="NO_MINOR_UPGRADES").exclusion_name == "trainstack-no-minor-upgrades"


@pytest.mark.parametrize(
    ("given", "key"),
    [
        ({"maintenanceWindow": WINDOW, "maintenance": {"window": WINDOW}}, "maintenanceWindow"),
        ({"maintenanceExclusion": EXCLUSION, "maintenance": {"exclusion": EXCLUSION}}, "maintenanceExclusion"),
    ],
)
def test_a_deprecated_input_with_its_new_spelling_is_refused(given: dict[str, Any], key: str) -> None:
    with pytest.raises(ArgsError) as refused:
        GkeClusterArgs.checked({**PACKAGE, **given}, GkeCluster, "c")
    ((found, _, rule),) = refused.value.problems
    assert found == (key,) and rule.startswith("is the deprecated spelling of")


def test_the_primary_networks_package_inputs_are_checked_by_its_spec() -> None:
    wiring = {"project": "my-project", "region": "us-central1", "name_prefix": "c"}
    assert PrimaryNetworkArgs.checked(wiring, PrimaryNetwork, "net").spec == NetworkSpec()
    with pytest.raises(ArgsError) as refused:
        PrimaryNetworkArgs.checked({**wiring, "podsCidr": "10.0.0.0/16"}, PrimaryNetwork, "net")
    assert [(p.key, p.value) for p in refused.value.problems] == [(("podsCidr",), "10.0.0.0/16")]
