"""The Kubernetes layer (infra.kubernetes.build) rendered offline on a stand-in GCP layer, for
every GPUDirect stack and storage kind: what it creates, how it is ordered, and that every
object passes its schema."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pytest
import yaml

from helpers import of_type, one, present, raw_config, render_with
from trainstack.app.plan.engine import Rendered
from trainstack.app.plan.recorder import Registration, public_urn
from trainstack.app.schemas.validate import validate_object
from trainstack.components.k8s_provider import ClusterProviderArgs, cluster_provider
from trainstack.components.storage.filestore import FilestoreSpec
from trainstack.components.storage.kind import Store
from trainstack.core import catalog, rules
from trainstack.core.catalog import nic_networks
from trainstack.core.spec import Section
from trainstack.core.testing import fake_ip
from trainstack.infra import kubernetes
from trainstack.infra.platform import GcpPlatform, KubernetesPlatform

RELEASE = "kubernetes:helm.sh/v3:Release"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
PARAM_SET = "kubernetes:networking.gke.io/v1:GKENetworkParamSet"
NETWORK = "kubernetes:networking.gke.io/v1:Network"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
KUEUE = f"kubernetes:{catalog.KUEUE_API}"


@dataclass
class Layer:
    """One render of the Kubernetes layer, with what build() returned."""

    rendered: Rendered
    platform: KubernetesPlatform
    ready_urns: list[str] = field(default_factory=list)
    pool_urns: dict[str, str] = field(default_factory=dict)
    node_setup_urns: list[str] = field(default_factory=list)

    def registrations(self) -> list[Registration]:
        return self.rendered.registrations

    def by_urn(self) -> dict[str, Registration]:
        return {r.urn: r for r in self.rendered.registrations}

    def depends_on(self, urn: str) -> set[str]:
        """Every URN `urn` waits for, directly, through a dependency's dependencies, or
        through its parents'."""
        index, seen, todo = self.by_urn(), set(), [urn]
        while todo:
            reg = index.get(todo.pop())
            if reg is None:
                continue
            for dep in [*reg.dependencies, *((reg.parent and [reg.parent]) or [])]:
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return seen


def _share_name(spec: Section) -> str:
    assert isinstance(spec, FilestoreSpec)
    return spec.share_name


def _stand_in_gcp(ctx: Any, pools: dict[str, str]) -> GcpPlatform:
    """A GCP layer with the shape infra.gcp returns: real (mocked) cluster, pools, bucket and
    disk resources, so the Kubernetes layer's dependencies on them are visible."""
    config = ctx.stack_file
    cluster = gcp.container.Cluster("cluster", name=config.cluster.name, location=config.region)
    gpu_pool = gcp.container.NodePool("gpu-pool", cluster=cluster.name, name=config.gpu_pool.name)
    cpu_pool = gcp.container.NodePool("cpu-pool", cluster=cluster.name, name=config.cpu_pool.name)
    gpu_pool.urn.apply(lambda urn: pools.__setitem__("gpu", public_urn(urn)))
    cpu_pool.urn.apply(lambda urn: pools.__setitem__("cpu", public_urn(urn)))
    storage = config.storage
    # The kind's GCP part as its volume reads it: a bucket's name, a share's address, a disk's name.
    parts = {
        "gcs": lambda: SimpleNamespace(name=gcp.storage.Bucket("bucket", name=f"{config.project}-{ctx.stack}", location=config.region).name),
        "filestore": lambda: SimpleNamespace(ip=pulumi.Output.from_input("10.200.7.9"), share_name=_share_name(storage.spec)),
        "nfs": lambda: SimpleNamespace(name=gcp.compute.Disk("nfs-disk", name=ctx.physical_name("nfs"), zone=config.gpu_zones[0]).name),
    }
    site = SimpleNamespace(project=config.project, zone=config.gpu_zones[0])
    made = Store(storage.of_kind, storage.spec, site, parts[storage.kind]())  # type: ignore[arg-type]  # the volume reads only these
    provider = cluster_provider("gke", ClusterProviderArgs(kubeconfig=pulumi.Output.secret("apiVersion: v1\nkind: Config\n"), cluster_identifier=cluster.id))
    return GcpPlatform(
        cluster=SimpleNamespace(provider=provider),  # type: ignore[arg-type]  # the layer reads only the provider
        gpu_pools=[SimpleNamespace()],  # type: ignore[list-item]  # the layer does not read the pools
        node_pools=[gpu_pool, cpu_pool],
        nic_networks={
            config.gpu_pool.machine_type: [
                (nic, pulumi.Output.from_input(ctx.physical_name(f"{nic.name}-net")), pulumi.Output.from_input(ctx.physical_name(f"{nic.name}-sub")))
                for nic in nic_networks(config.gpu_pool.machine, config.network.gpu_nic_cidr)
            ]
        }
        if config.gpu_pool.machine.extra_nics
        else {},
        image=pulumi.Output.from_input("us-docker.pkg.dev/p/r/i:t"),
        cpu_pool=cpu_pool,
        storage=made,
    )


def render_layer(raw: dict[str, Any] | None = None) -> Layer:
    captured: dict[str, Any] = {}
    pools: dict[str, str] = {}

    def collect(key: str, resources: list[pulumi.Resource]) -> None:
        captured[key] = []
        pulumi.Output.all(*[r.urn for r in resources]).apply(lambda urns: captured[key].extend(map(public_urn, urns)))

    def body(ctx: Any) -> None:
        platform = kubernetes.build(ctx, ctx.stack_file, _stand_in_gcp(ctx, pools))
        captured["platform"] = platform
        collect("ready", platform.ready)
        collect("node_setup", platform.node_setup)

    rendered = render_with(body, raw=raw)
    return Layer(rendered, captured["platform"], captured["ready"], pools, captured["node_setup"])


# Every machine of the catalog: a machine added there is exercised here without a test change.
MACHINES = sorted(catalog.MACHINES)


@pytest.fixture(scope="module")
def layers() -> dict[str, Layer]:
    """One render per GPU machine (recipe 000's stack with its machine type changed)."""
    return {m: render_layer(raw_config(trainstack_gpuPool={"machineType": m}, **gke_minor(m))) for m in MACHINES}


def gke_minor(machine_type: str) -> dict[str, Any]:
    """The cluster's version prefix where the machine needs a newer GKE than the channel's default,
    and no resiliency supervisor where its trainers run off the host network (rules.host_monitor_reachable)."""
    machine = catalog.machine(machine_type)
    floor = machine.min_gke_minor or (machine.min_gke_version and ".".join(machine.min_gke_version.split(".")[:2]))
    changes: dict[str, Any] = {"trainstack_cluster": {"versionPrefix": f"{floor}."}} if floor else {}
    if rules.host_monitor_reachable(machine):
        changes["trainstack_workload"] = {"resiliency": {"enabled": False}}
    return changes


@pytest.fixture(scope="module")
def variants() -> dict[str, Layer]:
    """Storage kinds, the driver DaemonSet and a workload namespace of its own."""
    return {
        "filestore": render_layer(raw_config(trainstack_storage={"kind": "filestore", "bucket": None, "filestore": {"capacityGib": 2560}})),
        "nfs": render_layer(
            raw_config(
                trainstack_storage={"kind": "nfs", "bucket": None, "nfs": {"diskSizeGb": 500}},
                trainstack_gpuPool={"machineType": "a2-highgpu-8g", "gpuDriver": "daemonset", "nodeCount": None, "autoscaling": {"maxNodes": 72}},
                trainstack_workload={"resiliency": {"enabled": False}},
                # recipe 000's 1m would evict every job before the pool scales up (rules.pods_ready_budget)
                trainstack_kueue={"waitForPodsReady": {"timeout": "30m"}},
            )
        ),
        "namespaced": render_layer(raw_config(trainstack_workload={"namespace": "training"}, trainstack_storage={"bucket": {"fileCache": False}})),
    }


def all_layers(layers: dict[str, Layer], variants: dict[str, Layer]) -> list[Layer]:
    return [*layers.values(), *variants.values()]


def kubernetes_objects(layer: Layer) -> list[Registration]:
    return [r for r in layer.registrations() if r.custom and r.type.startswith("kubernetes:") and r.type != RELEASE]


# -- provider ------------------------------------------------------------------------------


def test_one_provider_from_the_cluster_kubeconfig_is_used_by_every_kubernetes_resource(layers, variants) -> None:
    for layer in all_layers(layers, variants):
        provider = one(layer.rendered, "pulumi:providers:kubernetes")
        assert provider.inputs["kubeconfig"] == "[secret]"
        assert provider.inputs["enableServerSideApply"] == "true"
        assert provider.inputs["deleteUnreachable"] == "true"
        assert provider.inputs["clusterIdentifier"] == "projects/my-training-project/locations/us-central1/clusters/a3ultra-405b"
        k8s_resources = [r for r in layer.registrations() if r.custom and r.type.startswith("kubernetes:")]
        assert k8s_resources
        assert {r.provider for r in k8s_resources} == {provider.urn}, [r.urn for r in k8s_resources if r.provider != provider.urn]


def test_components_use_the_trainstack_k8s_type_tokens(layers) -> None:
    components = {r.type for r in layers["a3-megagpu-8g"].registrations() if not r.custom}
    assert components == {
        "trainstack:k8s:WorkloadIdentity",
        "trainstack:k8s:JobSet",
        "trainstack:k8s:Kueue",
        "trainstack:k8s:GcsFuseVolume",
        "trainstack:k8s:GpuNetworks",
        "trainstack:k8s:GpuDirectInstallers",
    }


# -- schemas -------------------------------------------------------------------------------


def test_every_object_passes_its_kubernetes_or_crd_schema(layers, variants) -> None:
    checked = 0
    for layer in all_layers(layers, variants):
        for reg in kubernetes_objects(layer):
            assert validate_object(reg.inputs) == [], reg.urn
            checked += 1
    assert checked > 50


def test_every_object_has_an_explicit_name(layers, variants) -> None:
    for layer in all_layers(layers, variants):
        objects = kubernetes_objects(layer)
        assert objects
        for reg in objects:
            assert reg.inputs["metadata"]["name"], reg.urn


# -- GPUDirect: installers and networks ------------------------------------------------------


EXPECTED_INSTALLERS = {
    catalog.GpuDirect.RDMA: set(),  # gIB goes into each pod (an init container), as recipe 000 does
    catalog.GpuDirect.TCPXO: {"nccl-tcpxo-installer", "device-injector"},
    catalog.GpuDirect.TCPX: {"nccl-tcpx-installer"},
    catalog.GpuDirect.NONE: set(),
}


def _pod(reg: Registration) -> dict[str, Any]:
    return reg.inputs["spec"]["template"]["spec"]


def _images(reg: Registration) -> set[str]:
    pod = _pod(reg)
    return {c["image"] for c in [*pod.get("initContainers", []), *pod["containers"]]}


@pytest.mark.parametrize("machine_type", MACHINES)
def test_installers_follow_the_gpudirect_stack(layers, machine_type: str) -> None:
    layer, machine = layers[machine_type], catalog.machine(machine_type)
    daemonsets = {r.inputs["metadata"]["name"]: r for r in of_type(layer.rendered, DAEMONSET)}
    # the machine's own node DaemonSets (catalog `node_daemonsets`: test_machines checks them)
    assert {n for n in daemonsets if n in machine.node_daemonsets} == set(machine.node_daemonsets)
    daemonsets = {n: d for n, d in daemonsets.items() if n not in machine.node_daemonsets}
    assert set(daemonsets) == EXPECTED_INSTALLERS[machine.gpudirect]
    for ds in daemonsets.values():
        assert ds.inputs["metadata"]["namespace"] == "kube-system"
        terms = _pod(ds)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms == [{"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": [machine.accelerator]}]}]
        assert _pod(ds)["tolerations"] == [{"operator": "Exists"}]
        # they wait for the GPU pool, so they are ready only once they ran on its nodes
        assert layer.pool_urns["gpu"] in ds.dependencies
        assert ds.urn in layer.node_setup_urns and ds.urn not in layer.ready_urns
    images = machine.gpudirect_images
    if images and daemonsets:
        plugin_installer = next(d for n, d in daemonsets.items() if n.startswith("nccl-"))
        assert images.nccl_plugin.ref in _images(plugin_installer)
    if machine_type == "a3-megagpu-8g":
        assert _images(daemonsets["device-injector"]) == {present(present(images).nri_device_injector).ref}
        setup = _pod(daemonsets["nccl-tcpxo-installer"])["initContainers"][0]
        assert setup["image"] == catalog.image("node-setup").ref and setup["command"][0] == "nsenter"


def expected_networks(machine: catalog.Machine) -> dict[str, str]:
    """Network name -> device type: A3 Ultra's gVNIC and RDMA NICs (GKE RDMA guide), one
    NetDevice VPC per extra NIC on TCPX/TCPXO machines (GKE TCPX guide), none on A2, nor where pods
    claim the NICs through DRANET (A4X Max's only way: test_machines)."""
    if rules.uses_dranet(machine, None):
        return {}
    if machine.gpudirect is catalog.GpuDirect.RDMA:
        return {"gvnic-1": "NetDevice", **{f"rdma-{i}": "RDMA" for i in range(machine.rdma_subnets)}}
    return {f"vpc{i}": "NetDevice" for i in range(1, machine.extra_nics + 1)}


@pytest.mark.parametrize("machine_type", MACHINES)
def test_one_device_network_per_extra_nic(layers, machine_type: str) -> None:
    layer = layers[machine_type]
    expected = expected_networks(catalog.machine(machine_type))
    params = {r.inputs["metadata"]["name"]: r for r in of_type(layer.rendered, PARAM_SET)}
    networks = {r.inputs["metadata"]["name"]: r for r in of_type(layer.rendered, NETWORK)}
    assert {name: p.inputs["spec"]["deviceMode"] for name, p in params.items()} == expected
    assert set(networks) == set(expected)
    assert list(layer.platform.nics) == ([] if layer.platform.dranet else nic_networks(catalog.machine(machine_type), "192.168.0.0/16"))
    for name, network in networks.items():
        assert network.inputs["spec"] == {
            "type": "Device",
            "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": name},
        }
        assert params[name].urn in network.dependencies
        assert params[name].inputs["spec"]["vpc"] == f"a3ultra-405b-{name}-net"
        assert params[name].inputs["spec"]["vpcSubnet"] == f"a3ultra-405b-{name}-sub"
        assert network.urn in layer.ready_urns


def test_driver_daemonset_only_when_gke_does_not_install_the_driver(layers, variants) -> None:
    assert not [r for r in of_type(variants["nfs"].rendered, DAEMONSET) if r.name != "nvidia-driver"]
    driver = one(variants["nfs"].rendered, DAEMONSET, "nvidia-driver")
    pod = _pod(driver)
    installer = pod["initContainers"][0]
    assert installer["image"] == catalog.image("nvidia-driver-installer-cos").ref
    assert installer["imagePullPolicy"] == "Never"
    expressions = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
    assert {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"} in expressions
    assert {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-tesla-a100"]} in expressions
    assert driver.urn in variants["nfs"].node_setup_urns
    for layer in layers.values():  # gpuDriver: latest
        assert not [r for r in of_type(layer.rendered, DAEMONSET) if r.name == "nvidia-driver-installer"]


# -- Kueue -----------------------------------------------------------------------------------


def kueue_values(layer: Layer) -> dict[str, Any]:
    return one(layer.rendered, RELEASE, "kueue").inputs["values"]


def test_kueue_release_is_the_pinned_chart_on_the_cpu_pool(layers) -> None:
    layer = layers["a3-ultragpu-8g"]
    release = one(layer.rendered, RELEASE, "kueue")
    assert release.inputs["chart"] == "oci://registry.k8s.io/kueue/charts/kueue"
    assert release.inputs["version"] == catalog.KUEUE_CHART.version == "0.19.2"
    assert release.inputs["namespace"] == "kueue-system"
    assert release.inputs["name"] == "kueue"
    manager = release.inputs["values"]["controllerManager"]
    assert manager["nodeSelector"] == {"cloud.google.com/gke-nodepool": "supervisor-cpu-pool"}
    # it waits for the CPU pool alone, not for the (slow, reservation-bound) GPU pool
    assert layer.pool_urns["cpu"] in release.dependencies
    assert layer.pool_urns["gpu"] not in release.dependencies


def test_kueue_feature_gate_is_explicit(layers) -> None:
    gates = kueue_values(layers["a3-ultragpu-8g"])["controllerManager"]["featureGates"]
    assert {"name": "TopologyAwareScheduling", "enabled": True} in gates


def test_kueue_configuration_is_whole_and_carries_wait_for_pods_ready(layers) -> None:
    values = kueue_values(layers["a3-ultragpu-8g"])
    text = values["managerConfig"]["controllerManagerConfigYaml"]
    config = yaml.safe_load(text)
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2" and config["kind"] == "Configuration"
    assert config["webhook"] == {"port": 9443}
    assert config["health"] == {"healthProbeBindAddress": ":8081"}
    assert config["leaderElection"]["leaderElect"] is True
    assert config["controller"]["groupKindConcurrency"]["Workload.kueue.x-k8s.io"] == 10
    assert config["clientConnection"] == {"qps": 300, "burst": 500}
    assert {"batch/job", "jobset.x-k8s.io/jobset"} <= set(config["integrations"]["frameworks"])
    assert "pod" not in config["integrations"]["frameworks"]
    # recipe 000: timeout 1m, recoveryTimeout 1m; v1beta2 has no `enable`
    assert config["waitForPodsReady"] == {
        "timeout": "1m",
        "blockAdmission": True,
        "recoveryTimeout": "1m",
        "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600},
    }
    assert "featureGates" not in config  # set on the command line; Kueue refuses both
    annotation = values["controllerManager"]["manager"]["podAnnotations"]["trainstack/config-sha256"]
    assert annotation == hashlib.sha256(text.encode()).hexdigest()


def test_a_configuration_change_changes_the_pod_annotation() -> None:
    base = render_layer(raw_config(trainstack_kueue={"waitForPodsReady": {"timeout": "5m", "recoveryTimeout": None}}))
    config = yaml.safe_load(kueue_values(base)["managerConfig"]["controllerManagerConfigYaml"])
    assert config["waitForPodsReady"]["timeout"] == "5m" and "recoveryTimeout" not in config["waitForPodsReady"]
    before = kueue_values(render_layer())["controllerManager"]["manager"]["podAnnotations"]
    assert kueue_values(base)["controllerManager"]["manager"]["podAnnotations"] != before


@pytest.mark.parametrize("machine_type", MACHINES)
def test_cluster_queue_quota_is_the_whole_pool(layers, machine_type: str) -> None:
    machine = catalog.machine(machine_type)
    queue = one(layers[machine_type].rendered, f"{KUEUE}:ClusterQueue")
    [group] = queue.inputs["spec"]["resourceGroups"]
    # a machine whose NVLink spans nodes also has one IMEX channel a node (tests/test_kueue_dra.py)
    channel = {"nvidia.com/compute-domain-channel": 54} if machine.accelerator_topology else {}
    # and, on DRANET, every RDMA NIC of every node (the pods claim them)
    channel |= {catalog.MRDMA_RESOURCE: machine.rdma_subnets * 54} if rules.uses_dranet(machine, None) else {}
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu", *channel]
    [flavor] = group["flavors"]
    quota = {r["name"]: r["nominalQuota"] for r in flavor["resources"]}
    assert quota == {"cpu": machine.vcpus * 54, "memory": f"{machine.memory_gb * 54}Gi", "nvidia.com/gpu": machine.gpus_per_node * 54, **channel}
    assert queue.inputs["metadata"]["name"] == "a3-ultra"


def test_autoscaling_pool_quota_uses_its_maximum(variants) -> None:
    queue = one(variants["nfs"].rendered, f"{KUEUE}:ClusterQueue")
    quota = {r["name"]: r["nominalQuota"] for r in queue.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
    assert quota["nvidia.com/gpu"] == 72 * 8


def test_kueue_objects(layers) -> None:
    layer = layers["a3-ultragpu-8g"]
    topology = one(layer.rendered, f"{KUEUE}:Topology")
    assert topology.inputs["metadata"]["name"].startswith("gke-default-")  # the config's name, plus its levels' hash
    assert [level["nodeLabel"] for level in topology.inputs["spec"]["levels"]] == [
        "cloud.google.com/gce-topology-block",
        "cloud.google.com/gce-topology-subblock",
        "cloud.google.com/gce-topology-host",
        "kubernetes.io/hostname",
    ]
    flavor = one(layer.rendered, f"{KUEUE}:ResourceFlavor")
    assert flavor.inputs["spec"] == {
        "nodeLabels": {"cloud.google.com/gke-accelerator": "nvidia-h200-141gb", "cloud.google.com/gke-nodepool": "a3-ultra"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}],
        "topologyName": topology.inputs["metadata"]["name"],
    }
    local = one(layer.rendered, f"{KUEUE}:LocalQueue")
    assert local.inputs["metadata"] == {"name": "a3-ultra", "namespace": "default", "labels": {"app.kubernetes.io/managed-by": "trainstack"}}
    assert local.inputs["spec"] == {"clusterQueue": "a3-ultra"}
    classes = {r.inputs["metadata"]["name"]: r.inputs for r in of_type(layer.rendered, f"{KUEUE}:WorkloadPriorityClass")}
    assert {name: c["value"] for name, c in classes.items()} == {"training-high": 1000, "training-low": 100}
    assert "namespace" not in classes["training-high"]["metadata"]


def test_an_autoscaled_pool_is_not_topology_aware(layers, variants) -> None:
    """TAS places pods on existing nodes: a pool scaling up from zero for the job would wait
    forever, so its flavor has no topology and jobs must not ask for one."""
    autoscaled = variants["nfs"]
    assert autoscaled.platform.topology_aware is False
    assert not of_type(autoscaled.rendered, f"{KUEUE}:Topology")
    assert "topologyName" not in one(autoscaled.rendered, f"{KUEUE}:ResourceFlavor").inputs["spec"]
    fixed = layers["a3-ultragpu-8g"]
    assert fixed.platform.topology_aware is True
    assert one(fixed.rendered, f"{KUEUE}:ResourceFlavor").inputs["spec"]["topologyName"].startswith("gke-default-")


@pytest.mark.parametrize("machine_type", MACHINES)
def test_topology_aware_scheduling_only_where_gke_labels_the_topology(layers, machine_type: str) -> None:
    """Kueue ignores nodes that lack a level's label, so a TAS flavor on a machine GKE does not
    label would never admit a job (catalog `topology_labels`)."""
    layer, machine = layers[machine_type], catalog.machine(machine_type)
    assert layer.platform.topology_aware is machine.topology_labels
    assert bool(of_type(layer.rendered, f"{KUEUE}:Topology")) is machine.topology_labels


def test_every_kueue_object_waits_for_the_kueue_release(layers, variants) -> None:
    for layer in all_layers(layers, variants):
        release = one(layer.rendered, RELEASE, "kueue").urn
        crs = [r for r in layer.registrations() if r.type.startswith(KUEUE)]
        assert len(crs) == (6 if layer.platform.topology_aware else 5)
        for cr in crs:
            assert release in cr.dependencies, cr.urn  # directly, not only through a parent
            assert release in layer.depends_on(cr.urn)


def test_queue_objects_are_deleted_before_what_they_reference(layers) -> None:
    layer = layers["a3-ultragpu-8g"]
    urn = {r.type.rsplit(":", 1)[1]: r.urn for r in layer.registrations() if r.type.startswith(KUEUE)}
    assert urn["Topology"] in layer.depends_on(urn["ResourceFlavor"])
    assert urn["ResourceFlavor"] in layer.depends_on(urn["ClusterQueue"])
    assert urn["ClusterQueue"] in layer.depends_on(urn["LocalQueue"])


# -- JobSet ----------------------------------------------------------------------------------


def test_jobset_release_is_pinned_on_the_cpu_pool_and_awaited_by_workloads(layers) -> None:
    layer = layers["a3-ultragpu-8g"]
    release = one(layer.rendered, RELEASE, "jobset")
    assert release.inputs["chart"] == "oci://registry.k8s.io/jobset/charts/jobset"
    assert release.inputs["version"] == catalog.JOBSET_CHART.version == "0.12.0"
    assert release.inputs["values"] == {"controller": {"nodeSelector": {"cloud.google.com/gke-nodepool": "supervisor-cpu-pool"}, "tolerations": []}}
    assert layer.pool_urns["cpu"] in release.dependencies and layer.pool_urns["gpu"] not in release.dependencies
    assert release.urn in layer.ready_urns


def test_no_release_waits_a_fixed_time(layers) -> None:
    releases = of_type(layers["a3-ultragpu-8g"].rendered, RELEASE)
    assert releases
    for release in releases:
        assert release.inputs.get("skipAwait") in (None, False)


# -- storage ---------------------------------------------------------------------------------


def _volume_and_claim(layer: Layer) -> tuple[Registration, Registration]:
    claim = one(layer.rendered, PVC, "storage-claim")
    return one(layer.rendered, PV, "storage-volume"), claim


def test_gcs_volume_mounts_the_bucket_with_checkpoint_options(layers, variants) -> None:
    layer = layers["a3-ultragpu-8g"]
    volume, claim = _volume_and_claim(layer)
    spec = volume.inputs["spec"]
    assert spec["csi"]["driver"] == "gcsfuse.csi.storage.gke.io"
    assert spec["csi"]["volumeHandle"] == "my-training-project-a3ultra-405b"
    assert any("gcp:storage/bucket:Bucket" in dep for dep in volume.dependencies)  # an Output of the bucket
    assert spec["accessModes"] == ["ReadWriteMany"] and spec["persistentVolumeReclaimPolicy"] == "Retain"
    assert {"implicit-dirs", "file-system:kernel-list-cache-ttl-secs:0", "metadata-cache:ttl-secs:-1"} <= set(spec["mountOptions"])
    assert not [o for o in spec["mountOptions"] if "streaming-writes" in o]  # the managed sidecar decides
    assert "file-cache:max-size-mb:-1" in spec["mountOptions"]  # recipe 000 asks for the file cache
    no_cache = _volume_and_claim(variants["namespaced"])[0].inputs["spec"]["mountOptions"]
    assert not [o for o in no_cache if o.startswith("file-cache:")]
    assert spec["claimRef"] == {"name": "shared-storage", "namespace": "default"}
    assert claim.inputs["spec"]["volumeName"] == "shared-storage" and claim.inputs["spec"]["storageClassName"] == ""
    assert layer.platform.claim_name == "shared-storage"
    assert claim.urn in layer.ready_urns


def test_filestore_volume_points_at_the_share(variants) -> None:
    volume, claim = _volume_and_claim(variants["filestore"])
    assert volume.inputs["spec"]["nfs"] == {"server": "10.200.7.9", "path": "/share1"}
    assert volume.inputs["spec"]["capacity"] == {"storage": "2560Gi"}
    assert claim.inputs["spec"]["accessModes"] == ["ReadWriteMany"]


def test_nfs_volume_uses_the_service_cluster_ip(variants) -> None:
    layer = variants["nfs"]
    service = one(layer.rendered, "kubernetes:core/v1:Service", "nfs-server-service")
    volume, _ = _volume_and_claim(layer)
    assert volume.inputs["spec"]["nfs"] == {"server": fake_ip("10.8", "service", "nfs-server-service"), "path": "/"}
    assert service.urn in volume.dependencies  # from the Service's output, not a copied address
    assert {p["port"] for p in service.inputs["spec"]["ports"]} == {2049, 20048, 111}
    deployment = one(layer.rendered, "kubernetes:apps/v1:Deployment", "nfs-server")
    assert deployment.inputs["spec"]["strategy"] == {"type": "Recreate"}
    pod = deployment.inputs["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "supervisor-cpu-pool"}
    assert pod["containers"][0]["image"] == catalog.image("nfs-server").ref
    assert layer.pool_urns["cpu"] in deployment.dependencies
    disk = one(layer.rendered, PV, "nfs-server-disk-volume").inputs["spec"]
    assert disk["csi"]["volumeHandle"] == "projects/my-training-project/zones/us-central1-b/disks/a3ultra-405b-nfs"
    assert disk["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "topology.gke.io/zone", "operator": "In", "values": ["us-central1-b"]}
    ]


# -- workload namespace and identity ---------------------------------------------------------


def test_default_namespace_is_used_not_created(layers) -> None:
    layer = layers["a3-ultragpu-8g"]
    assert not of_type(layer.rendered, "kubernetes:core/v1:Namespace")
    account = one(layer.rendered, "kubernetes:core/v1:ServiceAccount")
    assert account.inputs["metadata"]["name"] == "trainstack-workload" == layer.platform.service_account
    assert account.inputs["metadata"]["namespace"] == "default"


def test_own_namespace_is_created_and_everything_in_it_waits_for_it(variants) -> None:
    layer = variants["namespaced"]
    namespace = one(layer.rendered, "kubernetes:core/v1:Namespace")
    assert namespace.inputs["metadata"]["name"] == "training" == layer.platform.namespace
    account = one(layer.rendered, "kubernetes:core/v1:ServiceAccount")
    # Workload Identity Federation: the KSA itself is the IAM principal; no GSA to impersonate
    assert "annotations" not in account.inputs["metadata"]
    for reg in [account, one(layer.rendered, f"{KUEUE}:LocalQueue"), _volume_and_claim(layer)[1]]:
        assert reg.inputs["metadata"]["namespace"] == "training"
        assert namespace.urn in reg.dependencies, reg.urn
    assert _volume_and_claim(layer)[0].inputs["spec"]["claimRef"]["namespace"] == "training"


def test_platform_outputs(layers) -> None:
    assert layers["a3-ultragpu-8g"].platform.outputs == {
        "localQueue": "a3-ultra",
        "clusterQueue": "a3-ultra",
        "workloadNamespace": "default",
        "storageClaim": "shared-storage",
        "kueueVersion": "0.19.2",
        "jobsetVersion": "0.12.0",
    }
