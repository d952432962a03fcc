"""Args checked at the component boundary: each kind of rule, just inside and just outside its
limit, on a component built under the mock engine. Outside, one ArgsError names the component
(class and resource name), the field as the Args write it, the value and the rule, and nothing
registers. The stack config and the components share each rule (core/rules.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pulumi
import pytest

from helpers import construct, render_with
from trainstack.components import (
    CheckpointBucket,
    ClusterSpec,
    CpuNodePool,
    FilestoreShare,
    FilestoreShareArgs,
    GkeCluster,
    GkeClusterArgs,
    GpuFlavor,
    GpuNodePool,
    GpuNodePoolArgs,
    Kueue,
    KueueArgs,
    KueueSpec,
    NetworkRef,
    NetworkSpec,
    NodeServiceAccount,
    NodeServiceAccountArgs,
    PrimaryNetwork,
    PrimaryNetworkArgs,
    WaitForPodsReady,
)
from trainstack.components.storage.filestore import FilestoreSpec
from trainstack.core import rules
from trainstack.core.errors import TrainstackError, key_path
from trainstack.workloads import ResiliencySupervisor, SupervisorArgs

SA = "nodes@my-project.iam.gserviceaccount.com"
ZONE = "us-central1-a"
# The node pools as the package passes them: the spec's keys (camelCase) beside the wiring.
POOL: dict[str, Any] = {
    "project": "my-project",
    "location": "us-central1",
    "cluster": "projects/my-project/locations/us-central1/clusters/c",
    "service_account": SA,
    "name": "gpus",
    "zones": [ZONE],
    "machineType": "a3-megagpu-8g",
    "nodeCount": 2,
}
CPU_POOL: dict[str, Any] = {
    "project": "my-project",
    "location": "us-central1",
    "cluster": "c",
    "service_account": SA,
    "name": "cpu",
    "zones": [ZONE],
    "nodeCount": 2,
}
CLUSTER = GkeClusterArgs(
    ClusterSpec.model_validate({"name": "research"}), "my-project", "us-central1", [ZONE], NetworkRef("vpc", "subnet", "pods", "services"), SA
)
# The cluster as the package passes it: the spec's keys (camelCase) beside the wiring.
CLUSTER_INPUTS: dict[str, Any] = {
    "project": "my-project",
    "location": "us-central1",
    "node_locations": [ZONE],
    "network": {"network": "vpc", "subnetwork": "subnet", "pods_range": "pods", "services_range": "services"},
    "node_service_account": SA,
    "name": "research",
}
KUEUE = KueueArgs(KueueSpec.model_validate({"localQueue": "lq", "clusterQueue": "cq"}), "ml", [GpuFlavor("mega", "gpus", "a3-megagpu-8g", 2)])
# Kueue as the package passes it: the spec's keys beside the wiring.
KUEUE_INPUTS = {
    "clusterQueue": "cq",
    "localQueue": "lq",
    "namespace": "ml",
    "flavors": [{"name": "mega", "node_pool": "gpus", "machine_type": "a3-megagpu-8g", "nodes": 2}],
}
FILESTORE = FilestoreShareArgs(FilestoreSpec(), "my-project", "fs", ZONE, "vpc")
# The storage kinds' GCP parts as the package passes them: the spec's keys beside the wiring.
FILESTORE_INPUTS: dict[str, Any] = {"project": "my-project", "name": "fs", "location": ZONE, "network": "vpc", "tier": "ZONAL", "capacityGib": 1024}
PRIMARY = PrimaryNetworkArgs(NetworkSpec(), "my-project", "us-central1", "research")
SUPERVISOR = SupervisorArgs(jobset="hello", namespace="ml", project="my-project", cpu_pool="cpu", gpus_per_node=8, nodes=4, nodes_per_replica=2)


# (component, good Args, their changes just inside the limit, just outside it, the field, the rule)
CASES = [
    # a name pattern: GKE node pool names (RFC 1035, at most 40 characters)
    ("node-pool-name", GpuNodePool, POOL, {"name": "a" * 40}, {"name": "a" * 41}, "name", "must be at most 40 characters"),
    ("dns-label", GpuNodePool, POOL, {"name": "gpus-2"}, {"name": "2gpus"}, "name", "must be a GKE node pool name: a lowercase letter"),
    ("project-id", GpuNodePool, POOL, {"project": "abcdef"}, {"project": "abcde"}, "project", "must be a GCP project ID: 6-30 lowercase letters"),
    ("cluster-name", GkeCluster, CLUSTER_INPUTS, {"name": "c" * 40}, {"name": "c" * 41}, "name", "at most 40 characters"),
    (
        "account-id",
        NodeServiceAccount,
        NodeServiceAccountArgs("my-project", "nodes-1"),
        {"account_id": "node-1"},
        {"account_id": "node1"},
        "account_id",
        "must be a service account ID",
    ),
    # bounds with their source
    (
        "node-count-max",
        GpuNodePool,
        POOL,
        {"nodeCount": 1000},
        {"nodeCount": 1001},
        "nodeCount",
        "must be between 0 and 1000 (GKE allows at most 1000 nodes a pool per zone)",
    ),
    ("node-count-min", GpuNodePool, POOL, {"nodeCount": 0}, {"nodeCount": -1}, "nodeCount", "must be between 0 and 1000"),
    ("boot-disk", GpuNodePool, POOL, {"bootDiskGb": 100}, {"bootDiskGb": 99}, "bootDiskGb", "must be between 100 and 65536"),
    ("cpu-nodes", CpuNodePool, CPU_POOL, {"nodeCount": 100}, {"nodeCount": 101}, "nodeCount", "must be between 1 and 100"),
    (
        "port",
        GkeCluster,
        CLUSTER,
        {"control_plane_ports": [65535]},
        {"control_plane_ports": [65536]},
        "control_plane_ports[0]",
        "must be between 1 and 65535 (a TCP port)",
    ),
    # a list that needs an item (the ZeroDivisionError of a pool without zones), and each item's rule
    ("zones-not-empty", GpuNodePool, POOL, {"zones": [ZONE]}, {"zones": []}, "zones", "must not be empty"),
    ("zones-each", GpuNodePool, POOL, {"zones": ["us-central1-b"]}, {"zones": ["us-central1"]}, "zones[0]", "must be a GCP zone such as us-central1-b"),
    ("ai-zone", GpuNodePool, POOL, {"zones": ["us-central1-ai1a"]}, {"zones": ["us-central1-ai"]}, "zones[0]", "must be a GCP zone such as us-central1-b"),
    # a zone of the location's region (GKE NodePool.locations, Cluster.locations)
    (
        "pool-zone-region",
        GpuNodePool,
        POOL,
        {"zones": ["us-central1-f"]},
        {"zones": ["us-east1-b"]},
        "zones",
        "must be a zone of the cluster's region (us-central1)",
    ),
    (
        "cpu-zone-region",
        CpuNodePool,
        CPU_POOL,
        {"zones": ["us-central1-f"]},
        {"zones": ["us-east1-b"]},
        "zones",
        "must be a zone of the cluster's region (us-central1)",
    ),
    (
        "cluster-zone-region",
        GkeCluster,
        CLUSTER,
        {"node_locations": ["us-central1-f"]},
        {"node_locations": ["us-east1-b"]},
        "node_locations",
        "must be a zone of the cluster's region",
    ),
    # the zone holds the machine (catalog.MACHINE_ZONES): asia-south1 has A3 High and Ultra, no A3 Mega
    (
        "machine-zone",
        GpuNodePool,
        POOL,
        {"location": "europe-west4", "zones": ["europe-west4-b"]},
        {"location": "asia-south1", "zones": ["asia-south1-b"]},
        "zones",
        "asia-south1 offers no a3-megagpu-8g",
    ),
    # CIDRs
    ("cidr", GkeCluster, CLUSTER_INPUTS, {"masterIpv4Cidr": "172.16.0.16/28"}, {"masterIpv4Cidr": "172.16.0.17/28"}, "masterIpv4Cidr", "its host bits are set"),
    ("cidr-prefix", GkeCluster, CLUSTER_INPUTS, {"masterIpv4Cidr": "172.16.0.16/28"}, {"masterIpv4Cidr": "172.16.0.0/27"}, "masterIpv4Cidr", "must be a /28"),
    # one of a set
    (
        "one-of",
        GpuNodePool,
        POOL,
        {"provisioning": "spot"},
        {"provisioning": "preemptible"},
        "provisioning",
        "Input should be 'on-demand', 'spot', 'flex-start' or 'queued'",
    ),
    (
        "known-machine",
        GpuNodePool,
        POOL,
        {"machineType": "a3-highgpu-8g"},
        {"machineType": "a3-highgpu-4g"},
        "machineType",
        "unknown GPU machine type; known: a2-highgpu-8g",
    ),
    (
        "bucket-name",
        CheckpointBucket,
        {"project": "my-project", "name": "abc", "location": "us-central1"},
        {"name": "a" * 63},
        {"name": "ab"},
        "name",
        "must be a valid bucket name",
    ),
    ("labels", GpuNodePool, POOL, {"labels": {"team": "ml"}}, {"labels": {"Team": "ml"}}, "labels", "label key 'Team' must start with a lowercase letter"),
    # rules between fields
    (
        "min-max",
        GpuNodePool,
        POOL,
        {"nodeCount": None, "autoscaling": {"minNodes": 2, "maxNodes": 2}},
        {"nodeCount": None, "autoscaling": {"minNodes": 3, "maxNodes": 2}},
        "autoscaling.minNodes",
        "must not exceed the maximum (2)",
    ),
    ("exactly-one", GpuNodePool, POOL, {"nodeCount": 2}, {"nodeCount": None}, "nodeCount", "set exactly one of a fixed node count and autoscaling"),
    (
        "per-zone",
        GpuNodePool,
        POOL,
        {"zones": [ZONE, "us-central1-b"], "nodeCount": 4, "placement": "none"},
        {"zones": [ZONE, "us-central1-b"], "nodeCount": 3, "placement": "none"},
        "nodeCount",
        "must be a multiple of the number of zones (2)",
    ),
    ("capacity-by-tier", FilestoreShare, FILESTORE_INPUTS, {"capacityGib": 1024}, {"capacityGib": 1023}, "capacityGib", "tier ZONAL takes 1024 to"),
    (
        "window",
        GkeCluster,
        CLUSTER_INPUTS,
        {"maintenance": {"window": {"start": "2026-01-03T03:00:00Z", "end": "2026-01-03T07:00:00Z", "recurrence": "FREQ=DAILY"}}},
        {"maintenance": {"window": {"start": "2026-01-03T03:00:00Z", "end": "2026-01-03T06:59:59Z", "recurrence": "FREQ=DAILY"}}},
        "maintenance.window.end",
        "must be 4 to 24 hours after start",
    ),
    # GKE: 48 h of maintenance in 32 days (a weekly 6 h window on 2 days: 48 h; 5 h 59 m: less)
    (
        "maintenance-availability",
        GkeCluster,
        CLUSTER_INPUTS,
        {"maintenance": {"window": {"start": "2026-01-03T03:00:00Z", "end": "2026-01-03T09:00:00Z"}}},
        {"maintenance": {"window": {"start": "2026-01-03T03:00:00Z", "end": "2026-01-03T08:59:00Z"}}},
        "maintenance.window.end",
        "GKE requires at least 48 h",
    ),
    (
        "recurrence-days",
        GkeCluster,
        CLUSTER_INPUTS,
        {"maintenance": {"window": {"end": "2026-01-03T09:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU"}}},
        {"maintenance": {"window": {"end": "2026-01-03T09:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SA,SX"}}},
        "maintenance.window.recurrence",
        "must be an RFC 5545 rule",
    ),
    (
        "exclusion-scope",
        GkeCluster,
        CLUSTER_INPUTS,
        {"maintenance": {"exclusion": {"scope": "NO_MINOR_UPGRADES"}}},
        {"maintenance": {"exclusion": {"scope": "NO_UPGRADES"}}},
        "maintenance.exclusion.scope",
        "lasts at most 30 days",
    ),
    # GKE authorized networks: 50 with a public endpoint; a private endpoint takes internal ranges only
    (
        "authorized-networks",
        GkeCluster,
        CLUSTER_INPUTS,
        {"authorizedNetworks": [{"cidrBlock": f"10.0.{i}.0/24"} for i in range(50)]},
        {"authorizedNetworks": [{"cidrBlock": f"10.0.{i}.0/24"} for i in range(51)]},
        "authorizedNetworks",
        "GKE takes at most 50",
    ),
    (
        "authorized-networks-private",
        GkeCluster,
        {**CLUSTER_INPUTS, "privateEndpoint": True},
        {"authorizedNetworks": [{"cidrBlock": f"10.0.{i}.0/24"} for i in range(50)]},
        {"authorizedNetworks": [{"cidrBlock": f"10.0.{i}.0/24"} for i in range(51)]},
        "authorizedNetworks",
        "GKE takes at most 50",
    ),
    (
        "private-endpoint-networks",
        GkeCluster,
        {**CLUSTER_INPUTS, "privateEndpoint": True},
        {"authorizedNetworks": [{"cidrBlock": "10.1.0.0/16"}]},
        {"authorizedNetworks": [{"cidrBlock": "8.8.8.0/24"}]},
        "authorizedNetworks[0].cidrBlock",
        "is a public range",
    ),
    # Filestore capacity steps: ZONAL's lower range is 1-9.75 TiB in 256 GiB steps, then 10 TiB
    (
        "capacity-step",
        FilestoreShare,
        FILESTORE_INPUTS,
        {"capacityGib": 9984},
        {"capacityGib": 10000},
        "capacityGib",
        "1024 to 9984 GiB in steps of 256 or 10240 to 102400 GiB in steps of 2560",
    ),
    (
        "capacity-regional",
        FilestoreShare,
        {**FILESTORE_INPUTS, "location": "us-central1", "tier": "REGIONAL"},
        {"capacityGib": 100},
        {"capacityGib": 99},
        "capacityGib",
        "tier REGIONAL takes 100 to 10239 GiB",
    ),
    (
        "nested-item",
        Kueue,
        KUEUE,
        {"flavors": [GpuFlavor("mega", "gpus", "a3-megagpu-8g", 1000)]},
        {"flavors": [GpuFlavor("mega", "gpus", "a3-megagpu-8g", 1001)]},
        "flavors[0].nodes",
        "must be between 0 and 1000",
    ),
    (
        "duplicate",
        Kueue,
        KUEUE,
        {"flavors": [GpuFlavor("a", "gpus", "a3-megagpu-8g", 1), GpuFlavor("b", "gpus", "a3-megagpu-8g", 1)]},
        {"flavors": [GpuFlavor("a", "gpus", "a3-megagpu-8g", 1), GpuFlavor("a", "gpus", "a3-megagpu-8g", 1)]},
        "flavors[1].name",
        "is already used by another flavor",
    ),
    (
        "duration",
        Kueue,
        KUEUE_INPUTS,
        {"waitForPodsReady": {"timeout": "1s"}},
        {"waitForPodsReady": {"timeout": "0s"}},
        "waitForPodsReady.timeout",
        "must be longer than 0s",
    ),
    # `<jobset>-supervisor-controller` is a Service name (DNS-1035, 63): core/names.py, as the config's rule
    ("derived-service", ResiliencySupervisor, SUPERVISOR, {"jobset": "j" * 41}, {"jobset": "j" * 42}, "jobset", "supervisor Service"),
    ("divides", ResiliencySupervisor, SUPERVISOR, {"nodes_per_replica": 4}, {"nodes_per_replica": 3}, "nodes_per_replica", "must divide nodes (4)"),
    # Lustre on port 988 without the legacy port: nodes at 1.33.2-gke.4655000 or newer (GKE API
    # LustreCsiDriverConfig.enable_legacy_lustre_port); the newest 1.33 patch is, no 1.32 one is
    (
        "lustre-version",
        GkeCluster,
        CLUSTER_INPUTS,
        {"lustre_csi": True, "versionPrefix": "1.33."},
        {"lustre_csi": True, "versionPrefix": "1.32."},
        "versionPrefix",
        "Managed Lustre on port 988 needs GKE nodes at 1.33.2-gke.4655000 or newer",
    ),
    (
        "lustre-channel-default",
        GkeCluster,
        CLUSTER_INPUTS,
        {"lustre_csi": True, "versionPrefix": "1.34."},
        {"lustre_csi": True, "versionPrefix": None},
        "versionPrefix",
        "set a version prefix of 1.33. or later",
    ),
    # a VPC's MTU: 1300 to 8896 (terraform-provider-google 017d2f5 resource_compute_network.go `mtu`)
    ("mtu", PrimaryNetwork, PRIMARY, {"mtu": 8896}, {"mtu": 8897}, "mtu", "must be between 1300 and 8896"),
]


def changed(args: Any, changes: dict[str, Any]) -> Any:
    """`args` (Args, or the dict the package passes) with `changes`."""
    return {**args, **changes} if isinstance(args, dict) else dataclasses.replace(args, **changes)


@pytest.mark.parametrize(("component", "args", "inside", "outside", "field", "rule"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_rule_just_inside_and_just_outside(component: type, args: Any, inside: dict[str, Any], outside: dict[str, Any], field: str, rule: str) -> None:
    error, registered = construct(component, changed(args, inside))
    assert error is None and registered, error

    bad = changed(args, outside)
    error, registered = construct(component, bad)
    assert error is not None and registered == [], "refused before anything registers"
    assert isinstance(error, TrainstackError) and (error.component, error.name) == (component.__name__, "res")
    (problem,) = [p for p in error.problems if key_path(p.key) == field]
    assert rule in problem[2]
    assert f"{component.__name__} 'res' has" in str(error)
    assert f"  - {field} = {problem[1]!r}: {problem[2]}" in str(error)


def test_every_problem_is_in_the_one_error() -> None:
    error, registered = construct(GpuNodePool, {**POOL, "project": "p", "nodeCount": -1, "machineType": "a9", "provisioning": "free"})
    assert registered == [] and error is not None
    assert [p.key for p in error.problems] == [("machineType",), ("nodeCount",), ("provisioning",), ("project",)]
    assert str(error).startswith("GpuNodePool 'res' has 4 Args problems:\n  - machineType = 'a9': unknown GPU machine type")


def test_dict_args_are_checked_with_their_nested_paths() -> None:
    args = {
        "clusterQueue": "cq",
        "localQueue": "lq",
        "namespace": "ml",
        "flavors": [{"name": "f", "node_pool": "gpus", "machine_type": "a3-megagpu-8g", "nodes": -2}],
    }
    error, registered = construct(Kueue, args)
    assert registered == [] and error is not None and error.problems == [(("flavors", 0, "nodes"), -2, rules.NODE_COUNT(-2))]


def test_a_null_in_dict_args_is_the_fields_default() -> None:
    """The provider's dict (Pulumi YAML, TypeScript) may carry null for an input left out: the
    field's default, as the schema's optional input promises."""
    args = {
        "clusterQueue": "cq",
        "localQueue": "lq",
        "namespace": "ml",
        "waitForPodsReady": None,
        "frameworks": None,
        "flavors": [{"name": "f", "node_pool": "gpus", "machine_type": "a3-megagpu-8g", "nodes": 2, "topology_aware": None}],
    }
    built = KueueArgs.checked(args, Kueue, "res")
    assert (built.flavors[0].topology_aware, built.spec.wait_for_pods_ready, built.frameworks) == (
        True,
        WaitForPodsReady(),
        KueueArgs(KueueSpec(), "ml", []).frameworks,
    )


def test_none_for_a_field_with_a_default_is_refused_naming_it() -> None:
    """In Python a field is typed as it is at run time: None where the type has no None is a clean
    error, not an AttributeError deep in the component."""
    pool = GpuNodePoolArgs.checked(POOL, GpuNodePool, "res")
    error, registered = construct(GpuNodePool, dataclasses.replace(pool, extra_networks=None, labels=None))  # type: ignore[arg-type]  # None on purpose: the refusal under test
    assert registered == [] and error is not None
    assert error.problems == [((field,), None, "must not be None: leave it out for its default") for field in ("extra_networks", "labels")]


def test_outputs_are_checked_only_once_known() -> None:
    """An Output's value is unknown at construction: the Args docstring says it is unchecked."""

    def body(ctx: Any) -> None:
        GkeCluster("res", dataclasses.replace(CLUSTER, node_service_account=pulumi.Output.from_input("not an email")))

    assert render_with(body).registrations


def test_a_value_of_the_wrong_type_is_a_clean_error() -> None:
    error, registered = construct(GpuNodePool, {**POOL, "nodeCount": "3"})
    assert registered == [] and error is not None and error.problems == [(("nodeCount",), "3", "Input should be a valid integer")]
