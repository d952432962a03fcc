"""Kubernetes components on their own: their pure pieces, and the behaviour a recipe author
composing them in Python relies on (several GPU pools, no waitForPodsReady, no GPUDirect)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

from helpers import of_type, one, render_with
from trainstack.app.schemas.validate import validate_object
from trainstack.components.gpudirect_installers import (
    GpuDirectInstallers,
    GpuDirectInstallersArgs,
)
from trainstack.components.k8s_provider import (
    ClusterProviderArgs,
    Placement,
    cluster_provider,
)
from trainstack.components.kueue import (
    GpuFlavor,
    Kueue,
    KueueArgs,
    KueueSpec,
    WaitForPodsReady,
    chart_values,
    manager_configuration,
    render_configuration,
)
from trainstack.components.multinic import GpuNetworks, GpuNetworksArgs, NicAttachment
from trainstack.components.options import ChildArgs, Children, child_options
from trainstack.core import catalog
from trainstack.core.errors import ArgsError

KUEUE = f"kubernetes:{catalog.KUEUE_API}"
ULTRA = catalog.machine("a3-ultragpu-8g")
MEGA = catalog.machine("a3-megagpu-8g")


def _args(spec: dict[str, Any] | None = None, **changes: Any) -> KueueArgs:
    """Kueue's Args of a stack file's `trainstack:kueue` (its queues named) with the `spec` keys and wiring `changes`."""
    named = KueueSpec.model_validate({"localQueue": "team", "clusterQueue": "gpus", "priorityClasses": [], **(spec or {})})
    base: dict[str, Any] = {"namespace": "ml", "flavors": [GpuFlavor("a3-ultra", "a3-ultra", ULTRA.name, 2)]}
    return KueueArgs(named, **{**base, **changes})


def test_wait_for_pods_ready_block_has_only_what_is_set() -> None:
    assert WaitForPodsReady(timeout="10m").configuration() == {
        "timeout": "10m",
        "blockAdmission": True,
        "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600},
    }
    block = WaitForPodsReady.model_validate(
        {"timeout": "5m", "blockAdmission": False, "recoveryTimeout": "0s", "requeuingStrategy": {"timestamp": "Creation", "backoffLimitCount": 3}}
    ).configuration()
    assert block["recoveryTimeout"] == "0s" and block["blockAdmission"] is False
    assert block["requeuingStrategy"] == {"timestamp": "Creation", "backoffLimitCount": 3, "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600}
    assert "enable" not in block


def test_the_wait_for_pods_ready_block_is_always_written() -> None:
    """Kueue 0.19.2 fills in and applies waitForPodsReady when the block is absent
    (apis/config/v1beta2/defaults.go), so the component always states it."""
    assert manager_configuration(_args())["waitForPodsReady"]["timeout"] == "10m"
    assert manager_configuration(_args({"waitForPodsReady": {"timeout": "1m"}}))["waitForPodsReady"]["timeout"] == "1m"


def test_configuration_renders_deterministically_and_parses_back() -> None:
    args = _args({"waitForPodsReady": {"timeout": "1m", "recoveryTimeout": "1m"}})
    text = render_configuration(args)
    assert text == render_configuration(_args({"waitForPodsReady": {"timeout": "1m", "recoveryTimeout": "1m"}}))
    assert yaml.safe_load(text) == manager_configuration(args)
    assert text.startswith("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n")


def test_feature_gates_are_sorted_name_enabled_pairs() -> None:
    values = chart_values(_args(feature_gates={"TopologyAwareScheduling": True, "ElasticJobsViaWorkloadSlices": False}))
    assert values["controllerManager"]["featureGates"] == [
        {"name": "ElasticJobsViaWorkloadSlices", "enabled": False},
        {"name": "TopologyAwareScheduling", "enabled": True},
    ]


def test_placement_goes_to_the_chart_values() -> None:
    toleration = {"key": "dedicated", "operator": "Equal", "value": "controllers", "effect": "NoSchedule"}
    values = chart_values(_args(placement=Placement({"pool": "cpu"}, [toleration])))
    assert values["controllerManager"]["nodeSelector"] == {"pool": "cpu"}
    assert values["controllerManager"]["tolerations"] == [toleration]


def test_flavor_quota_is_nodes_times_the_machine() -> None:
    assert GpuFlavor("f", "pool", MEGA.name, 32).quota() == {"cpu": 208 * 32, "memory": f"{1872 * 32}Gi", "nvidia.com/gpu": 256}
    assert GpuFlavor("f", "pool", MEGA.name, 0).quota()["nvidia.com/gpu"] == 0


def _render_kueue(args: KueueArgs):
    def body(ctx: Any) -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        Kueue("kueue", args, opts=pulumi.ResourceOptions(providers=[provider]))

    return render_with(body)


def test_one_flavor_per_gpu_pool_and_one_cluster_queue_per_machine_type() -> None:
    """A job is built for one machine: two machine types get a ClusterQueue (and LocalQueue) each."""
    flavors = [GpuFlavor("a3-ultra", "ultra-pool", ULTRA.name, 4), GpuFlavor("a3-mega", "mega-pool", MEGA.name, 2, queue="a3-mega")]
    rendered = _render_kueue(_args(flavors=flavors))
    names = {r.name.removeprefix("kueue-flavor-"): r for r in of_type(rendered, f"{KUEUE}:ResourceFlavor")}
    assert set(names) == {"a3-ultra", "a3-mega"}
    assert all(r.inputs["metadata"]["name"].startswith(f"{n}-") for n, r in names.items())
    assert names["a3-mega"].inputs["spec"]["nodeLabels"] == {
        "cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb",
        "cloud.google.com/gke-nodepool": "mega-pool",
    }
    queues = {r.inputs["metadata"]["name"]: r for r in of_type(rendered, f"{KUEUE}:ClusterQueue")}
    flavor_name = {n: r.inputs["metadata"]["name"] for n, r in names.items()}
    for queue_name, flavor, gpus in (("gpus", "a3-ultra", 32), ("a3-mega", "a3-mega", 16)):
        (group,) = queues[queue_name].inputs["spec"]["resourceGroups"]
        assert [(f["name"], {r["name"]: r["nominalQuota"] for r in f["resources"]}["nvidia.com/gpu"]) for f in group["flavors"]] == [
            (flavor_name[flavor], gpus)
        ]
        assert names[flavor].urn in queues[queue_name].dependencies
        assert "flavorFungibility" not in queues[queue_name].inputs["spec"]  # one flavor: nothing to fall back to
    local = {r.inputs["metadata"]["name"]: r.inputs["spec"]["clusterQueue"] for r in of_type(rendered, f"{KUEUE}:LocalQueue")}
    assert local == {"team": "gpus", "a3-mega": "a3-mega"}
    for reg in rendered.registrations:
        if reg.custom and reg.type.startswith(KUEUE):
            assert validate_object(reg.inputs) == []
    assert not of_type(rendered, f"{KUEUE}:WorkloadPriorityClass")  # none asked for


def test_one_cluster_queue_never_mixes_machine_types() -> None:
    flavors = [GpuFlavor("a3-ultra", "ultra-pool", ULTRA.name, 4), GpuFlavor("a3-mega", "mega-pool", MEGA.name, 2)]
    with pytest.raises(ArgsError, match="mixes machine types"):
        _render_kueue(_args(flavors=flavors))


def test_component_passes_its_depends_on_to_every_child() -> None:
    def body(ctx: Any) -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        gate = k8s.core.v1.ConfigMap("gate", metadata={"name": "gate"}, opts=pulumi.ResourceOptions(provider=provider))
        Kueue("kueue", _args(), opts=pulumi.ResourceOptions(providers=[provider], depends_on=[gate]))

    rendered = render_with(body)
    gate = one(rendered, "kubernetes:core/v1:ConfigMap", "gate").urn
    children = [r for r in rendered.registrations if r.custom and r.parent and "trainstack:k8s:Kueue" in r.parent]
    assert len(children) == 5  # release, topology, flavor, cluster queue, local queue
    assert all(gate in r.dependencies for r in children)


def test_child_options_accepts_a_single_resource_or_none() -> None:
    def body(ctx: Any) -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        parent = pulumi.ComponentResource("test:x:Parent", "parent")
        assert child_options(parent, None).depends_on is None
        assert child_options(parent, pulumi.ResourceOptions(depends_on=provider)).depends_on == [provider]
        assert child_options(parent, pulumi.ResourceOptions(depends_on=[provider]), parent).depends_on == [provider, parent]

    render_with(body)


def test_a_child_is_aliased_from_its_name_under_each_earlier_name_of_its_component() -> None:
    """The names a live stack may keep a child under: its bare role (components named children so
    before 4be4cd4; workloads never did) and `<earlier component name><suffix>`, the name an
    unfinished `up` saves it under (components/options.py)."""

    def names(child: ChildArgs) -> list[Any]:
        return [a.name if isinstance(a, pulumi.Alias) else a for a in child["opts"].aliases or []]

    def body(ctx: Any) -> None:
        parent = pulumi.ComponentResource("test:x:Parent", "platform-network")
        moved = pulumi.ResourceOptions(aliases=[pulumi.Alias(name="network", parent=pulumi.ROOT_STACK_RESOURCE), pulumi.Alias(name="net")])
        assert names(Children(parent, "platform-network", moved)("vpc")) == ["vpc", "network-vpc", "net-vpc"]
        assert names(Children(parent, "platform-network", moved, roles_were_names=False)("vpc")) == ["network-vpc", "net-vpc"]
        assert names(Children(parent, "platform-network", moved).main(was="vpc")) == ["vpc", "network", "net"]
        assert names(Children(parent, "platform-network", None, roles_were_names=False)("vpc")) == []

    render_with(body)


def test_provider_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULUMI_K8S_UPSERT_EXISTING_OBJECTS", "true")  # a creates-adopt environment changes nothing

    def body(ctx: Any) -> None:
        cluster_provider("gke", ClusterProviderArgs("kubeconfig", "projects/p/locations/r/clusters/c", delete_unreachable=False))

    provider = one(render_with(body), "pulumi:providers:kubernetes")
    assert provider.inputs["enableServerSideApply"] == "true"
    assert provider.inputs["deleteUnreachable"] == "false"
    assert provider.inputs["upsertExistingObjects"] == "false"
    assert provider.inputs["clusterIdentifier"] == "projects/p/locations/r/clusters/c"


@pytest.mark.parametrize(("kind", "mode"), [("gvnic", "NetDevice"), ("rdma", "RDMA")])
def test_device_mode_follows_the_nic_kind(kind: str, mode: str) -> None:
    assert NicAttachment("n", kind, "vpc", "subnet").device_mode == mode


def test_gpu_networks_render_valid_pairs() -> None:
    def body(ctx: Any) -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        GpuNetworks(
            "nets",
            GpuNetworksArgs([NicAttachment("gvnic-1", "gvnic", "v0", "s0"), NicAttachment("rdma-0", "rdma", "v1", "s1")]),
            opts=pulumi.ResourceOptions(providers=[provider]),
        )

    rendered = render_with(body)
    objects = [r.inputs for r in rendered.registrations if r.custom and r.type.startswith("kubernetes:networking")]
    assert len(objects) == 4
    assert all(validate_object(o) == [] for o in objects)


def test_no_gpudirect_stack_has_nothing_to_install() -> None:
    def body(ctx: Any) -> None:
        GpuDirectInstallers("gpudirect", GpuDirectInstallersArgs("a2-highgpu-8g"))

    with pytest.raises(Exception, match="a2-highgpu-8g uses GPUDirect 'none': there is nothing to install"):
        render_with(body)


def test_topology_only_for_topology_aware_flavors() -> None:
    rendered = _render_kueue(_args(flavors=[GpuFlavor("a2", "a2-pool", "a2-highgpu-8g", 8, topology_aware=False)]))
    assert not of_type(rendered, f"{KUEUE}:Topology")
    flavor = one(rendered, f"{KUEUE}:ResourceFlavor")
    assert "topologyName" not in flavor.inputs["spec"]
    assert validate_object(flavor.inputs) == []


# --- Kueue objects whose fields are immutable (v0.19.2 CRDs: transition rules on oldSelf) -------


def _kueue_objects(args: KueueArgs) -> dict[str, Any]:
    rendered = _render_kueue(args)
    return {kind: one(rendered, f"{KUEUE}:{kind}") for kind in ("Topology", "ResourceFlavor", "ClusterQueue", "LocalQueue")}


def test_a_changed_topology_is_a_new_topology_and_a_new_flavor_the_queue_moves_to() -> None:
    """Topology `levels` are immutable: new levels make a new Topology (another name), which the
    flavor's immutable `topologyName` follows, so both are created before the old ones go and
    the ClusterQueue is updated in place to the new flavor."""
    before = _kueue_objects(_args())
    after = _kueue_objects(_args(topology_levels=("cloud.google.com/gce-topology-block", "kubernetes.io/hostname")))
    assert before["Topology"].options["replaceOnChanges"] == ["spec.levels"]
    assert before["Topology"].inputs["metadata"]["name"] != after["Topology"].inputs["metadata"]["name"]
    assert after["ResourceFlavor"].inputs["spec"]["topologyName"] == after["Topology"].inputs["metadata"]["name"]
    flavor = after["ResourceFlavor"].inputs["metadata"]["name"]
    assert flavor != before["ResourceFlavor"].inputs["metadata"]["name"]
    assert [f["name"] for f in after["ClusterQueue"].inputs["spec"]["resourceGroups"][0]["flavors"]] == [flavor]
    for objects in (before, after):  # created before, deleted after, what refers to them
        assert "deleteBeforeReplace" not in objects["ResourceFlavor"].options
        assert objects["ResourceFlavor"].urn in objects["ClusterQueue"].dependencies
        assert objects["Topology"].urn in objects["ResourceFlavor"].dependencies


def test_a_flavor_with_other_node_labels_is_a_new_flavor() -> None:
    before = _kueue_objects(_args())
    after = _kueue_objects(_args(flavors=[GpuFlavor("a3-ultra", "other-pool", ULTRA.name, 2)]))
    assert before["ResourceFlavor"].options["replaceOnChanges"] == ["spec.nodeLabels", "spec.topologyName"]
    assert before["ResourceFlavor"].inputs["metadata"]["name"] != after["ResourceFlavor"].inputs["metadata"]["name"]
    # The same flavor renders the same name: no churn on an unchanged stack.
    assert before["ResourceFlavor"].inputs["metadata"]["name"] == _kueue_objects(_args())["ResourceFlavor"].inputs["metadata"]["name"]


def test_a_local_queue_pointed_at_another_cluster_queue_is_replaced_under_its_name() -> None:
    lq = _kueue_objects(_args())["LocalQueue"]
    assert lq.options["replaceOnChanges"] == ["spec.clusterQueue"] and lq.options["deleteBeforeReplace"] is True
    assert lq.inputs["metadata"]["name"] == "team"  # jobs name it; it keeps its name
