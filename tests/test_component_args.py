"""Every public component built from its Args alone (plain values, no stack config), under the
mock engine: what it registers, the inputs its Args decide, and that `opts.depends_on` reaches
every child (the one ordering convention)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from trainstack import catalog, components, workloads
from trainstack.app.plan import engine
from trainstack.app.plan.recorder import Registration
from trainstack.app.stacks import raw_stack_config
from trainstack.components import (
    AuthorizedNetwork,
    Autoscaling,
    CheckpointBucket,
    CheckpointBucketArgs,
    CpuNodePool,
    CpuNodePoolArgs,
    FilestoreShare,
    FilestoreShareArgs,
    GcsFuseVolume,
    GcsFuseVolumeArgs,
    GkeCluster,
    GkeClusterArgs,
    GpuDirectInstallers,
    GpuDirectInstallersArgs,
    GpuFlavor,
    GpuNetworks,
    GpuNetworksArgs,
    GpuNicNetworks,
    GpuNicNetworksArgs,
    GpuNodePool,
    GpuNodePoolArgs,
    JobSet,
    JobSetArgs,
    Kueue,
    KueueArgs,
    NetworkRef,
    NfsDisk,
    NfsDiskArgs,
    NfsServer,
    NfsServerArgs,
    NfsVolume,
    NfsVolumeArgs,
    NicAttachment,
    NodeServiceAccount,
    NodeServiceAccountArgs,
    NvidiaDriverInstaller,
    NvidiaDriverInstallerArgs,
    PrimaryNetwork,
    PrimaryNetworkArgs,
    ProjectServices,
    ProjectServicesArgs,
    Reservation,
    WorkloadIdentity,
    WorkloadIdentityArgs,
    WorkloadImage,
    WorkloadImageArgs,
)
from trainstack.workloads import (
    Launch,
    ResiliencySupervisor,
    SupervisorArgs,
    TensorBoard,
    TensorBoardArgs,
    Topology,
    TrainingJob,
    TrainingJobArgs,
)

ULTRA, MEGA, A2 = (catalog.machine(m) for m in ("a3-ultragpu-8g", "a3-megagpu-8g", "a2-highgpu-8g"))
NET = NetworkRef("vpc", "subnet", "pods", "services")
SA = "nodes@p.iam.gserviceaccount.com"


class Gate(pulumi.CustomResource):
    """What a caller orders a component after (`opts.depends_on`)."""

    def __init__(self) -> None:
        super().__init__("test:order:Gate", "gate", {})


def render(build: Callable[[pulumi.ResourceOptions], Any]) -> tuple[list[Registration], str]:
    """Registrations of `build(opts)`, with opts ordering it after a gate (and a Kubernetes
    provider for Kubernetes components); and the gate's URN."""
    found: dict[str, str] = {}

    def body() -> None:
        gate = Gate()
        gate.urn.apply(lambda urn: found.setdefault("gate", urn))
        provider = k8s.Provider("k8s", kubeconfig="{}")
        build(pulumi.ResourceOptions(depends_on=[gate], providers=[provider]))

    rendered = engine.execute(engine.load_stack("a3ultra-405b"), raw_stack_config("a3ultra-405b"), body)
    return rendered.registrations, found["gate"].split("::")[-1]


def children(registrations: list[Registration]) -> list[Registration]:
    return [r for r in registrations if r.custom and r.type not in ("test:order:Gate", "pulumi:providers:kubernetes")]


def assert_ordered(registrations: list[Registration], gate: str) -> None:
    """Every child waits for the gate the component was ordered after, directly or through the
    resources it waits for (Pulumi does not pass a component's depends_on to its children)."""
    by_urn = {r.urn: r for r in registrations}

    def waits_for_gate(urn: str, seen: set[str]) -> bool:
        reg = by_urn.get(urn)
        if reg is None or urn in seen:
            return False
        seen.add(urn)
        return any(d.endswith(f"::{gate}") or waits_for_gate(d, seen) for d in reg.dependencies)

    for child in children(registrations):
        assert waits_for_gate(child.urn, set()), f"{child.type} {child.name} does not wait for opts.depends_on"


def named(registrations: list[Registration], type_token: str, name: str | None = None) -> Registration:
    found = [r for r in registrations if r.type == type_token and (name is None or r.name == name)]
    assert len(found) == 1, [r.name for r in found]
    return found[0]


# --- GCP ------------------------------------------------------------------------------------------


def test_project_services_are_never_disabled_on_destroy() -> None:
    regs, gate = render(lambda o: ProjectServices("s", ProjectServicesArgs("p", ["container.googleapis.com"]), o))
    service = named(regs, "gcp:projects/service:Service")
    assert service.inputs["service"] == "container.googleapis.com" and service.inputs["disableOnDestroy"] is False
    assert_ordered(regs, gate)


def test_primary_network_from_its_ranges() -> None:
    args = PrimaryNetworkArgs("p", "us-central1", "c", "10.0.0.0/20", "10.4.0.0/14", "10.8.0.0/20")
    regs, gate = render(lambda o: PrimaryNetwork("n", args, o))
    subnet = named(regs, "gcp:compute/subnetwork:Subnetwork")
    assert subnet.inputs["ipCidrRange"] == "10.0.0.0/20"
    assert {r["ipCidrRange"] for r in subnet.inputs["secondaryIpRanges"]} == {"10.4.0.0/14", "10.8.0.0/20"}
    assert_ordered(regs, gate)


@pytest.mark.parametrize("machine", sorted(catalog.MACHINES))
def test_gpu_nic_networks_follow_the_machine(machine: str) -> None:
    m = catalog.machine(machine)
    nics = catalog.nic_networks(m, "192.168.0.0/16")
    if not nics:
        return
    args = GpuNicNetworksArgs(project="p", region="us-central1", zone="us-central1-b", name_prefix="c", machine=m, nics=nics, nic_cidr="192.168.0.0/16")
    regs, gate = render(lambda o: GpuNicNetworks("g", args, o))
    subnets = [r for r in regs if r.type == "gcp:compute/subnetwork:Subnetwork"]
    assert len(subnets) == m.extra_nics
    assert {r.inputs["mtu"] for r in regs if r.type == "gcp:compute/network:Network"} == {m.mtu}
    assert_ordered(regs, gate)


def test_gke_cluster_hands_out_its_provider_and_protects_itself() -> None:
    args = GkeClusterArgs(
        project="p", location="us-central1", name="c", node_locations=["us-central1-b"], network=NET, node_service_account=SA,
        authorized_networks=[AuthorizedNetwork("203.0.113.0/24", "vpn")], control_plane_ports=[9443],
    )
    regs, gate = render(lambda o: GkeCluster("cluster", args, o))
    cluster = named(regs, "gcp:container/cluster:Cluster")
    assert cluster.inputs["masterAuthorizedNetworksConfig"] == {"cidrBlocks": [{"cidrBlock": "203.0.113.0/24", "displayName": "vpn"}]}
    assert cluster.options["protect"] is True
    provider = [r for r in regs if r.type == "pulumi:providers:kubernetes" and r.name == "gke"]
    assert len(provider) == 1 and provider[0].inputs["clusterIdentifier"].startswith("c-id#") or provider[0].inputs["clusterIdentifier"]
    rule = named(regs, "gcp:compute/firewall:Firewall")
    assert rule.inputs["allows"] == [{"protocol": "tcp", "ports": ["9443"]}] and rule.inputs["sourceRanges"] == ["172.16.0.32/28"]
    assert_ordered(regs, gate)


def test_node_service_account_and_its_grants() -> None:
    regs, gate = render(lambda o: NodeServiceAccount("sa", NodeServiceAccountArgs("p", "nodes"), o))
    assert named(regs, "gcp:serviceaccount/account:Account").inputs["accountId"] == "nodes"
    assert len([r for r in regs if r.type == "gcp:projects/iAMMember:IAMMember"]) == 5
    assert_ordered(regs, gate)


@pytest.mark.parametrize("machine", sorted(catalog.MACHINES))
def test_gpu_node_pool_follows_the_machine_record(machine: str) -> None:
    m = catalog.machine(machine)
    args = GpuNodePoolArgs(project="p", location="us-central1", cluster="c", name="gpus", zones=["us-central1-b"], machine=m, service_account=SA, node_count=2)
    built: dict[str, GpuNodePool] = {}
    regs, gate = render(lambda o: built.setdefault("pool", GpuNodePool("gpu", args, o)))
    pool = named(regs, "gcp:container/nodePool:NodePool").inputs
    (accelerator,) = pool["nodeConfig"]["guestAccelerators"]
    assert (accelerator["type"], accelerator["count"], pool["nodeConfig"]["machineType"]) == (m.accelerator, m.gpus_per_node, m.name)
    assert pool["placementPolicy"] == {"type": "COMPACT"}
    assert built["pool"].node_selector == {"cloud.google.com/gke-accelerator": m.accelerator, "cloud.google.com/gke-nodepool": "gpus"}
    assert built["pool"].tolerations == ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},)
    # The profile of the machine's GPUDirect stack composes with the pool's NICs.
    workloads.profiles.for_machine(m, catalog.nic_networks(m, "192.168.0.0/16"))
    assert_ordered(regs, gate)


def test_gpu_node_pool_args_rules() -> None:
    both = GpuNodePoolArgs(project="p", location="l", cluster="c", name="g", zones=["z"], machine=A2, service_account=SA, node_count=1, autoscaling=Autoscaling(0, 2))
    with pytest.raises(ValueError, match="exactly one of node_count and autoscaling"):
        render(lambda o: GpuNodePool("g", both, o))
    reserved = GpuNodePoolArgs(project="p", location="l", cluster="c", name="g", zones=["z"], machine=ULTRA, service_account=SA, node_count=1, compact=False, reservation=Reservation("specific", "r"))
    regs, _ = render(lambda o: GpuNodePool("g", reserved, o))
    assert "placementPolicy" not in named(regs, "gcp:container/nodePool:NodePool").inputs


def test_cpu_node_pool() -> None:
    args = CpuNodePoolArgs(project="p", location="l", cluster="c", name="cpu", zones=["z"], machine_type="e2-standard-8", node_count=2, service_account=SA)
    regs, gate = render(lambda o: CpuNodePool("cpu", args, o))
    pool = named(regs, "gcp:container/nodePool:NodePool").inputs
    assert pool["nodeCount"] == 2 and "taints" not in pool["nodeConfig"]
    assert_ordered(regs, gate)


@pytest.mark.parametrize("disposable", [False, True])
def test_data_is_retained_unless_disposable(disposable: bool) -> None:
    regs, gate = render(lambda o: (
        CheckpointBucket("b", CheckpointBucketArgs("p", "bucket", "us-central1", disposable=disposable, object_users=["principal://x"]), o),
        FilestoreShare("f", FilestoreShareArgs("p", "fs", "us-central1-b", "ZONAL", 1024, "share1", "vpc", disposable=disposable), o),
        NfsDisk("d", NfsDiskArgs("p", "us-central1-b", "disk", "pd-ssd", 100, disposable=disposable), o),
    ))
    for type_token in ("gcp:storage/bucket:Bucket", "gcp:filestore/instance:Instance", "gcp:compute/disk:Disk"):
        assert named(regs, type_token).options == ({} if disposable else {"retainOnDelete": True})
    assert named(regs, "gcp:storage/bucket:Bucket").inputs["forceDestroy"] is disposable
    assert_ordered(regs, gate)


def test_workload_image_builds_as_its_own_account() -> None:
    args = WorkloadImageArgs("p", "us-central1", "repo", "img", "t", "images/x", "0" * 64, builder_account_id="builder", staging_bucket="p-builds")
    regs, gate = render(lambda o: WorkloadImage("image", args, o))
    build = named(regs, "command:local:Command")
    assert "--service-account=projects/" in build.inputs["create"] and "builder@" in build.inputs["create"]
    assert build.inputs["triggers"] == ["0" * 64]
    assert_ordered(regs, gate)


# --- Kubernetes -----------------------------------------------------------------------------------


def test_kueue_from_its_args() -> None:
    args = KueueArgs(cluster_queue="cq", local_queue="lq", namespace="ml", flavors=[GpuFlavor("f", "pool", MEGA, 4, topology_aware=False)])
    regs, gate = render(lambda o: Kueue("kueue", args, o))
    queue = named(regs, f"kubernetes:{catalog.KUEUE_API}:ClusterQueue").inputs
    quotas = {r["name"]: r["nominalQuota"] for r in queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
    assert quotas["nvidia.com/gpu"] == 32
    assert not [r for r in regs if r.type.endswith(":Topology")]  # no TAS flavor, no Topology
    assert_ordered(regs, gate)


def test_jobset_and_gpu_networks_and_identity() -> None:
    attachments = [NicAttachment("vpc1", "gvnic", "net-1", "sub-1"), NicAttachment("rdma-0", "rdma", "roce", "sub-r0")]
    regs, gate = render(lambda o: (
        JobSet("jobset", JobSetArgs(), o),
        GpuNetworks("nets", GpuNetworksArgs(attachments), o),
        WorkloadIdentity("wi", WorkloadIdentityArgs("ml", "trainer"), o),
    ))
    assert named(regs, "kubernetes:helm.sh/v3:Release").inputs["chart"].endswith("/jobset")
    assert len([r for r in regs if r.type == "kubernetes:networking.gke.io/v1:Network"]) == 2
    assert named(regs, "kubernetes:core/v1:ServiceAccount").inputs["metadata"]["name"] == "trainer"
    assert_ordered(regs, gate)


def test_installers_and_volumes() -> None:
    regs, gate = render(lambda o: (
        GpuDirectInstallers("gd", GpuDirectInstallersArgs(MEGA), o),
        NvidiaDriverInstaller("drv", NvidiaDriverInstallerArgs(A2.accelerator), o),
        GcsFuseVolume("gcs", GcsFuseVolumeArgs("bucket", "claim-a", "ml"), o),
        NfsVolume("nfs", NfsVolumeArgs("10.0.0.2", "/share1", "claim-b", "ml", "1Ti"), o),
        NfsServer("server", NfsServerArgs("disk", "p", "us-central1-b", 100, "ml"), o),
    ))
    daemonsets = {r.name for r in regs if r.type == "kubernetes:apps/v1:DaemonSet"}
    assert {"nccl-tcpxo-installer", "device-injector"} <= daemonsets
    claims = {r.inputs["metadata"]["name"] for r in regs if r.type == "kubernetes:core/v1:PersistentVolumeClaim"}
    assert {"claim-a", "claim-b"} <= claims
    with pytest.raises(ValueError, match="nothing to install"):
        render(lambda o: GpuDirectInstallers("gd", GpuDirectInstallersArgs(A2), o))
    assert_ordered(regs, gate)


# --- workloads ------------------------------------------------------------------------------------


def job_args(**changes: Any) -> TrainingJobArgs:
    base: dict[str, Any] = dict(
        name="hello", namespace="ml", image="nvcr.io/nvidia/pytorch:24.05-py3", machine=A2, nodes=2,
        node_selector={"cloud.google.com/gke-nodepool": "a100"}, tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}],
        queue="research", service_account="default", claim_name="shared", mount_path="/shared",
        launch=Launch(command=("torchrun", "train.py")),
    )
    return TrainingJobArgs(**{**base, **changes})


@pytest.mark.parametrize("controller", ["jobset", "job"])
def test_training_job_from_plain_args(controller: str) -> None:
    regs, gate = render(lambda o: TrainingJob("job", job_args(controller=controller, topology=Topology("kubernetes.io/hostname")), o))
    kind = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet" if controller == "jobset" else "kubernetes:batch/v1:Job"
    obj = named(regs, kind).inputs
    spec = obj["spec"]
    template = spec["replicatedJobs"][0]["template"]["spec"]["template"] if controller == "jobset" else spec["template"]
    pod = template["spec"]
    assert obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "research"
    assert pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "a100"}
    assert pod["tolerations"][0] == {"key": "nvidia.com/gpu", "operator": "Exists"}
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert template["metadata"]["annotations"]["kueue.x-k8s.io/podset-preferred-topology"] == "kubernetes.io/hostname"
    assert (controller == "job") == bool([r for r in regs if r.type == "kubernetes:core/v1:Service"])
    assert_ordered(regs, gate)


def test_supervisor_and_tensorboard_from_plain_args() -> None:
    tolerations = ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},)
    regs, gate = render(lambda o: (
        ResiliencySupervisor("sup", SupervisorArgs("hello", "ml", "p", "cpu", 8, 4, 2, gpu_tolerations=tolerations), o),
        TensorBoard("tb", TensorBoardArgs("tb", "ml", "shared", "/shared", "/shared/logs", "cpu"), o),
    ))
    monitor = named(regs, "kubernetes:apps/v1:DaemonSet").inputs["spec"]["template"]["spec"]
    assert monitor["tolerations"] == list(tolerations)
    assert len([r for r in regs if r.type == "kubernetes:apps/v1:Deployment"]) == 4  # three services and TensorBoard
    with pytest.raises(ValueError, match="not on the shared storage"):
        TensorBoardArgs("tb", "ml", "shared", "/shared", "/elsewhere", "cpu")
    assert_ordered(regs, gate)


def test_every_exported_component_is_exercised_here() -> None:
    source = Path(__file__).read_text()
    exported = [n for n in (*components.__all__, *workloads.__all__) if isinstance(getattr(components, n, None) or getattr(workloads, n, None), type)]
    components_only = [n for n in exported if issubclass(getattr(components, n, None) or getattr(workloads, n), pulumi.ComponentResource)]
    assert components_only and all(f"{name}(" in source for name in components_only), components_only
