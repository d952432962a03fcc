"""Every public component built from its Args alone (plain values: no stack config, no config
models) under the mock engine: the children it registers, the inputs its Args decide, the Args it
refuses, and the one ordering convention: `opts.depends_on` given to a component reaches every
child (`trainstack.components.options.child_options`). The stack-level tests (test_gcp_*,
test_k8s_*, test_workload_build) cover the same components as the recipes configure them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, Literal, TypeVar

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

from helpers import of_type, one
from trainstack import components, workloads
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan import engine
from trainstack.app.plan.aliases import claims
from trainstack.app.plan.recorder import Registration
from trainstack.app.schemas.validate import validate_object
from trainstack.components import (
    BuildSpec,
    CheckpointBucket,
    CheckpointBucketArgs,
    ClusterSpec,
    CpuNodePool,
    CpuNodePoolArgs,
    ExtraNetwork,
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
    KueueSpec,
    LustreInstance,
    LustreInstanceArgs,
    LustreVolume,
    LustreVolumeArgs,
    MultiKueueClusters,
    MultiKueueClustersArgs,
    MultiKueueQueue,
    MultiKueueWorker,
    MultiKueueWorkerAccess,
    MultiKueueWorkerAccessArgs,
    NetworkRef,
    NetworkSpec,
    NfsDisk,
    NfsDiskArgs,
    NfsServer,
    NfsServerArgs,
    NfsVolume,
    NfsVolumeArgs,
    NicAttachment,
    NodeServiceAccount,
    NodeServiceAccountArgs,
    NvidiaDraDriver,
    NvidiaDraDriverArgs,
    NvidiaDriverInstaller,
    NvidiaDriverInstallerArgs,
    Placement,
    PrimaryNetwork,
    PrimaryNetworkArgs,
    ProjectServices,
    ProjectServicesArgs,
    WorkloadIdentity,
    WorkloadIdentityArgs,
    WorkloadImage,
    WorkloadImageArgs,
)
from trainstack.components.gke_cluster import cluster_identity
from trainstack.components.gpudirect_installers import NODE_INSTALLED
from trainstack.components.node_daemons import MachineDaemonSets, MachineDaemonSetsArgs
from trainstack.components.node_pools import NODE_ROLES, CpuPoolSpec, GpuPoolSpec
from trainstack.components.storage.filestore import FilestoreSpec
from trainstack.components.storage.gcs import BucketSpec
from trainstack.components.storage.lustre import LustreSpec
from trainstack.components.storage.nfs import NfsSpec
from trainstack.core import catalog, rules
from trainstack.core.testing import SECRET as SECRET_VALUE
from trainstack.workloads import (
    ConfigFiles,
    JobNetworkPolicies,
    JobNetworkPoliciesArgs,
    Launch,
    ResiliencySupervisor,
    SupervisorArgs,
    TensorBoard,
    TensorBoardArgs,
    Topology,
    TrainingJob,
    TrainingJobArgs,
    profiles,
)

# Registration types.
GATE = "test:order:Gate"
K8S_PROVIDER = "pulumi:providers:kubernetes"
API = "gcp:projects/service:Service"
NETWORK = "gcp:compute/network:Network"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"
CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
ACCOUNT = "gcp:serviceaccount/account:Account"
IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
BUCKET = "gcp:storage/bucket:Bucket"
BUCKET_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
FILESTORE = "gcp:filestore/instance:Instance"
DISK = "gcp:compute/disk:Disk"
COMMAND = "command:local:Command"
RELEASE = "kubernetes:helm.sh/v3:Release"
KUEUE = f"kubernetes:{catalog.KUEUE_API}"
BUILD = BuildSpec.model_validate({"context": "images/x", "imageName": "img", "tag": "t"})  # a stack file's trainstack:image.build
JOBSET = f"kubernetes:{catalog.JOBSET_API}:JobSet"
JOB = "kubernetes:batch/v1:Job"
SERVICE = "kubernetes:core/v1:Service"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
SECRET = "kubernetes:core/v1:Secret"
NAMESPACE = "kubernetes:core/v1:Namespace"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"

ULTRA, MEGA, HIGH, A2 = (catalog.machine(m) for m in ("a3-ultragpu-8g", "a3-megagpu-8g", "a3-highgpu-8g", "a2-highgpu-8g"))
# All catalog machines have 8 GPUs; a 4-GPU one tells "from the machine" from a literal 8.
FOUR_GPUS = dataclasses.replace(A2, name="test-4g", gpus_per_node=4)
NET = NetworkRef("vpc", "subnet", "pods", "services")
SA = "nodes@p.iam.gserviceaccount.com"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
NIC_CIDR = "192.168.0.0/16"

T = TypeVar("T")


# --- the harness ----------------------------------------------------------------------------------


class Gate(pulumi.CustomResource):
    """What a caller orders a component after (`opts.depends_on`)."""

    def __init__(self, name: str = "gate") -> None:
        super().__init__(GATE, name, {})


@dataclass
class Built(Generic[T]):
    """What one build registered, and the object it returned (a component, usually)."""

    rendered: engine.Rendered
    value: T

    def all(self, type_token: str) -> list[Registration]:
        return of_type(self.rendered, type_token)

    def one(self, type_token: str, name: str | None = None) -> Registration:
        return one(self.rendered, type_token, name)

    def inputs(self, type_token: str, name: str | None = None) -> dict[str, Any]:
        return self.one(type_token, name).inputs

    def gate(self) -> str:
        return self.one(GATE, "gate").urn


@cache
def _stack() -> tuple[Any, dict[str, Any]]:
    """Any valid stack: the mock engine takes its project, region and name, nothing else."""
    return engine.load_stack("a3ultra-405b"), raw_stack_config("a3ultra-405b")


def bucket_spec(name: str, **keys: Any) -> BucketSpec:
    """A bucket named `name` in us-central1, with `keys` of its spec (as a stack file writes them)."""
    return BucketSpec.model_validate({"name": name, "location": "us-central1", **keys})


def run(build: Callable[[pulumi.ResourceOptions], T]) -> Built[T]:
    """`build(opts)` under the mock engine, `opts` ordering it after a Gate and naming a
    Kubernetes provider (which GCP resources ignore)."""
    built: list[T] = []

    def body() -> None:
        gate = Gate()
        provider = k8s.Provider("k8s", kubeconfig="{}")
        built.append(build(pulumi.ResourceOptions(depends_on=[gate], providers=[provider])))

    ctx, raw = _stack()
    return Built(engine.execute(ctx, raw, body), built[0])


def capture(output: pulumi.Output[Any], into: dict[str, Any], key: str) -> None:
    """Record `output`'s value once the mock engine resolves it."""
    output.apply(lambda value: into.__setitem__(key, value))


def descendants(registrations: list[Registration], root: str) -> list[Registration]:
    """Everything registered under the resource `root` (a URN), at any depth."""
    found: list[Registration] = []
    parents = {root}
    for reg in registrations:  # parents register before their children
        if reg.parent in parents:
            found.append(reg)
            parents.add(reg.urn)
    return found


def waits_for(registrations: list[Registration], reg: Registration, urn: str) -> bool:
    """Whether `reg` waits for `urn`, directly or through what it waits for."""
    by_urn = {r.urn: r for r in registrations}
    seen: set[str] = set()
    pending = list(reg.dependencies)
    while pending:
        dep = pending.pop()
        if dep == urn:
            return True
        if dep not in seen and dep in by_urn:
            seen.add(dep)
            pending += by_urn[dep].dependencies
    return False


def pod_of(built: Built[Any]) -> tuple[Registration, dict[str, Any]]:
    """The training job's JobSet (or Job) and its pod template."""
    jobsets = built.all(JOBSET)
    if jobsets:
        (jobset,) = jobsets
        return jobset, jobset.inputs["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    job = built.one(JOB)
    return job, job.inputs["spec"]["template"]


# --- Args builders (plain values) -----------------------------------------------------------------


CLUSTER_ARGS = GkeClusterArgs(
    spec=ClusterSpec.model_validate({"name": "c"}),
    project="proj-1",
    location="us-central1",
    node_locations=["us-central1-c", "us-central1-b", "us-central1-c"],
    network=NET,
    node_service_account=SA,
)
GPU_POOL: dict[str, Any] = {"name": "gpus", "zones": ["us-central1-b"], "machineType": MEGA.name, "nodeCount": 4}
JOB_ARGS = TrainingJobArgs(
    name="hello",
    namespace="ml",
    image="registry.example/train:1",
    machine=FOUR_GPUS,
    nodes=3,
    node_selector={"cloud.google.com/gke-nodepool": "a100"},
    tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}],
    queue="research",
    service_account="trainer",
    claim_name="shared",
    mount_path="/shared",
    launch=Launch(command=("torchrun", "train.py")),
)
SUPERVISOR_ARGS = SupervisorArgs(
    jobset="hello",
    namespace="ml",
    project="proj-1",
    cpu_pool="cpu",
    gpus_per_node=4,
    nodes=6,
    nodes_per_replica=2,
    gpu_tolerations=[GPU_TOLERATION],
)
TENSORBOARD_ARGS = TensorBoardArgs(
    name="hello-tb",
    namespace="ml",
    claim_name="shared",
    mount_path="/shared",
    log_dir="/shared/runs/hello",
    node_pool="cpu",
    image="registry.example/tensorboard:1",
)


def cluster_args(spec: dict[str, Any] | None = None, **wiring: Any) -> GkeClusterArgs:
    """CLUSTER_ARGS with the spec's keys `spec` set, and `wiring`."""
    return dataclasses.replace(CLUSTER_ARGS, spec=ClusterSpec.model_validate({"name": "c", **(spec or {})}), **wiring)


def gpu_pool_args(spec: dict[str, Any] | None = None, **wiring: Any) -> GpuNodePoolArgs:
    """GPU_POOL with the spec's keys `spec` changed (None drops one), on the test cluster with `wiring`."""
    keys = {k: v for k, v in {**GPU_POOL, **(spec or {})}.items() if v is not None}
    cluster = "projects/p/locations/us-central1/clusters/c"
    return GpuNodePoolArgs(GpuPoolSpec.model_validate(keys), "proj-1", "us-central1", cluster, SA, **wiring)


def cpu_pool_args(spec: dict[str, Any], **wiring: Any) -> CpuNodePoolArgs:
    return CpuNodePoolArgs(CpuPoolSpec.model_validate(spec), "proj-1", "us-central1", "c", SA, **wiring)


def job_args(**changes: Any) -> TrainingJobArgs:
    return dataclasses.replace(JOB_ARGS, **changes)


def nic_args(machine: catalog.Machine) -> GpuNicNetworksArgs:
    return GpuNicNetworksArgs("proj-1", "us-central1", "us-central1-b", "c", machine.name, NIC_CIDR)


# --- every exported component: a case, and the ordering convention --------------------------------


@dataclass(frozen=True)
class Case:
    component: type[pulumi.ComponentResource]
    build: Callable[[str, pulumi.ResourceOptions], Any]  # (the component's name, its options)
    variant: str = ""

    @property
    def id(self) -> str:
        return "-".join(filter(None, (self.component.__name__, self.variant)))


# Each builds one component, named as given, with Args that make it register every kind of child it has.
# A worker's kubeconfig as a platform outputs it (its server and CA).
KUBECONFIG: str = yaml.safe_dump(
    {"clusters": [{"name": "east", "cluster": {"server": "https://10.0.0.2", "certificate-authority-data": "Y2E="}}], "contexts": [], "users": []}
)


CASES = [
    Case(ProjectServices, lambda n, o: ProjectServices(n, ProjectServicesArgs("proj-1", ["container.googleapis.com", "file.googleapis.com"]), o)),
    Case(PrimaryNetwork, lambda n, o: PrimaryNetwork(n, PrimaryNetworkArgs(NetworkSpec(), "proj-1", "us-central1", "c"), o)),
    Case(GpuNicNetworks, lambda n, o: GpuNicNetworks(n, nic_args(ULTRA), o)),
    Case(GkeCluster, lambda n, o: GkeCluster(n, cluster_args(control_plane_ports=[9443]), o)),
    Case(NodeServiceAccount, lambda n, o: NodeServiceAccount(n, NodeServiceAccountArgs("proj-1", "gke-nodes"), o)),
    Case(GpuNodePool, lambda n, o: GpuNodePool(n, gpu_pool_args(), o)),
    Case(CpuNodePool, lambda n, o: CpuNodePool(n, cpu_pool_args({"name": "cpu", "zones": ["us-central1-b"]}), o)),
    Case(CheckpointBucket, lambda n, o: CheckpointBucket(n, CheckpointBucketArgs(bucket_spec("bkt"), "proj-1", object_users={"ns.sa": "principal://x"}), o)),
    Case(FilestoreShare, lambda n, o: FilestoreShare(n, FilestoreShareArgs(FilestoreSpec(), "proj-1", "fs", "us-central1-b", "vpc"), o)),
    Case(NfsDisk, lambda n, o: NfsDisk(n, NfsDiskArgs(NfsSpec.model_validate({"diskSizeGb": 100}), "proj-1", "us-central1-b", "disk"), o)),
    Case(LustreInstance, lambda n, o: LustreInstance(n, LustreInstanceArgs(LustreSpec(), "proj-1", "us-central1-b", f"{n}-lustre", "vpc"), o)),
    Case(
        WorkloadImage,
        lambda n, o: WorkloadImage(n, WorkloadImageArgs(BUILD, "proj-1", "us-central1", "repo", "0" * 64, "builder", "p-builds"), o),
    ),
    Case(
        Kueue,
        lambda n, o: Kueue(
            n,
            KueueArgs(
                KueueSpec.model_validate({"localQueue": "lq", "clusterQueue": "cq", "priorityClasses": [{"name": "high", "value": 100}]}),
                "ml",
                [GpuFlavor("f", "pool", ULTRA.name, 2)],
            ),
            o,
        ),
    ),
    Case(JobSet, lambda n, o: JobSet(n, JobSetArgs(), o)),
    Case(GpuNetworks, lambda n, o: GpuNetworks(n, GpuNetworksArgs([NicAttachment("rdma-0", "rdma", "v", "s")]), o)),
    Case(GpuDirectInstallers, lambda n, o: GpuDirectInstallers(n, GpuDirectInstallersArgs(MEGA.name), o)),
    Case(NvidiaDriverInstaller, lambda n, o: NvidiaDriverInstaller(n, NvidiaDriverInstallerArgs(A2.accelerator), o)),
    Case(NvidiaDraDriver, lambda n, o: NvidiaDraDriver(n, NvidiaDraDriverArgs("a4x-highgpu-4g"), o)),
    Case(GcsFuseVolume, lambda n, o: GcsFuseVolume(n, GcsFuseVolumeArgs(bucket="bucket", claim_name="shared", namespace="ml"), o)),
    Case(NfsVolume, lambda n, o: NfsVolume(n, NfsVolumeArgs(server="10.0.0.2", path="/share1", capacity="1Ti", claim_name="shared", namespace="ml"), o)),
    Case(
        LustreVolume,
        lambda n, o: LustreVolume(
            n,
            LustreVolumeArgs(
                volume_handle="proj-1/us-central1-b/lustre", ip="10.232.0.5", filesystem="lustrefs", capacity_gib=9000, claim_name="shared", namespace="ml"
            ),
            o,
        ),
    ),
    Case(NfsServer, lambda n, o: NfsServer(n, NfsServerArgs("disk", "proj-1", "us-central1-b", 100, "ml"), o)),
    Case(WorkloadIdentity, lambda n, o: WorkloadIdentity(n, WorkloadIdentityArgs("ml", "trainer"), o)),
    Case(MultiKueueWorkerAccess, lambda n, o: MultiKueueWorkerAccess(n, MultiKueueWorkerAccessArgs("east", "mk-manager", KUBECONFIG), o)),
    Case(
        MultiKueueClusters,
        lambda n, o: MultiKueueClusters(n, MultiKueueClustersArgs([MultiKueueWorker("east", KUBECONFIG)], [MultiKueueQueue("a3-mega", ["east"])]), o),
    ),
    Case(
        TrainingJob,
        lambda n, o: TrainingJob(n, job_args(launch=Launch(command=("x",), files=(ConfigFiles("cfg", "/cfg", {"a": "b"}),)), secret_env={"TOKEN": "t"}), o),
        "jobset",
    ),
    Case(TrainingJob, lambda n, o: TrainingJob(n, job_args(controller="job"), o), "job"),
    Case(ResiliencySupervisor, lambda n, o: ResiliencySupervisor(n, SUPERVISOR_ARGS, o)),
    Case(TensorBoard, lambda n, o: TensorBoard(n, TENSORBOARD_ARGS, o)),
    Case(JobNetworkPolicies, lambda n, o: JobNetworkPolicies(n, JobNetworkPoliciesArgs("llama", "ml", supervised=True, tensorboard=True), o)),
]


# Modules whose components register Kubernetes objects (JobSet: only a Helm release).
K8S_MODULES = tuple(
    f"trainstack.{m}"
    for m in (
        "components.kueue",
        "components.multinic",
        "components.gpudirect_installers",
        "components.storage.gcs",
        "components.storage.lustre",
        "components.storage.nfs",
        "components.dra_driver",
        "components.workload_identity",
        "workloads",
    )
)
# A storage kind's module holds its GCP part beside its volume.
GCP_PARTS = ("CheckpointBucket", "LustreInstance", "NfsDisk")


def exported_components() -> set[type]:
    found = set()
    for module in (components, workloads):
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, pulumi.ComponentResource):
                found.add(value)
    return found


def test_every_exported_component_has_a_case() -> None:
    assert {c.component for c in CASES} == exported_components()
    assert {TrainingJob, ResiliencySupervisor, TensorBoard, GkeCluster, Kueue} <= exported_components()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_depends_on_reaches_every_child(case: Case) -> None:
    built = run(lambda o: case.build("c", o))
    (component,) = [r for r in built.rendered.registrations if r.type.endswith(f":{case.component.__name__}") and not r.custom]
    assert component.type.startswith("trainstack:") and built.gate() in component.dependencies
    children = [r for r in descendants(built.rendered.registrations, component.urn) if r.custom]
    assert children
    for child in children:
        if child.type.startswith("pulumi:providers:"):
            # A provider waits for what its inputs come from (GkeCluster's: the cluster).
            assert waits_for(built.rendered.registrations, child, built.gate()), child.name
        else:
            assert built.gate() in child.dependencies, f"{child.type} {child.name} does not wait for opts.depends_on"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_two_instances_coexist_in_one_program(case: Case) -> None:
    """Two of a component in one program (two clusters, two teams' queues): no URN twice, every
    child named after its own component, and the PersistentVolumes (cluster-wide) named apart."""
    built = run(lambda o: [case.build("east", o), case.build("west", o)])
    registrations = built.rendered.registrations
    urns = [r.urn for r in registrations]
    assert len(urns) == len(set(urns)), sorted(u for u in urns if urns.count(u) > 1)
    for name in ("east", "west"):
        (component,) = [r for r in registrations if r.name == name and not r.custom and r.type.startswith("trainstack:")]
        children = [r for r in registrations if r.parent == component.urn]
        assert children and all(c.name == name or c.name.startswith(f"{name}-") for c in children), [c.name for c in children]
    volumes = [r.inputs["metadata"]["name"] for r in built.all(PV)]
    assert len(volumes) == len(set(volumes))


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.component.__module__.startswith(K8S_MODULES) and c.component.__name__ not in GCP_PARTS], ids=lambda c: c.id
)
def test_kubernetes_objects_from_plain_args_are_schema_valid(case: Case) -> None:
    built = run(lambda o: case.build("c", o))
    objects = [r for r in built.rendered.registrations if r.custom and r.type.startswith("kubernetes:") and r.type != RELEASE]
    assert objects
    # A field holding a Pulumi secret (the Secret's stringData) is redacted whole in the record.
    problems = [f"{r.type} {r.name}: {p}" for r in objects for p in validate_object({k: v for k, v in r.inputs.items() if v != SECRET_VALUE})]
    assert not problems, "\n".join(problems)


# --- every catalog machine ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(catalog.MACHINES))
def test_every_catalog_machine_builds_its_networks_pool_installers_and_job(name: str) -> None:
    """A machine added to the catalog gets its NIC networks, a GPU pool on them, its GPUDirect
    profile in a training pod (composed with the base pod) and, where its stack needs them,
    node installers: all from the machine record."""
    machine = catalog.machine(name)
    nics = catalog.nic_networks(machine, NIC_CIDR)
    assert len(nics) == machine.extra_nics
    dranet = rules.uses_dranet(machine, None)  # the machine's own way to its RDMA NICs
    profile = profiles.for_machine(machine, nics, dranet=dranet)

    def build(o: pulumi.ResourceOptions) -> GpuNodePool:
        networks = GpuNicNetworks("nics", nic_args(machine), o).networks if nics else []
        pool = GpuNodePool(
            "gpu",
            gpu_pool_args(
                {"machineType": machine.name, "nodeCount": machine.nvlink_domain_nodes or 4, "placement": "compact" if machine.compact_placement else "none"},
                extra_networks=[ExtraNetwork(vpc, subnet) for _, vpc, subnet in networks],
            ),
            o,
        )
        TrainingJob("train", job_args(machine=machine, gpudirect=profile, node_selector=pool.node_selector, tolerations=pool.tolerations, dranet=dranet), o)
        if machine.gpudirect in NODE_INSTALLED:
            GpuDirectInstallers("gpudirect", GpuDirectInstallersArgs(machine.name), o)
        if machine.node_daemonsets:
            MachineDaemonSets("daemons", MachineDaemonSetsArgs(machine.name), o)
        return pool

    built = run(build)
    pool = built.one(NODE_POOL)
    config = pool.inputs["nodeConfig"]
    assert config["machineType"] == machine.name and config["diskType"] == machine.boot_disk_type
    assert [(a["type"], a["count"]) for a in config["guestAccelerators"]] == [(machine.accelerator, machine.gpus_per_node)]
    assert config.get("ephemeralStorageLocalSsdConfig") == ({"localSsdCount": machine.local_ssds} if machine.local_ssds else None)
    # One node network per extra NIC, in interface order; RDMA NICs share one VPC, each on a subnet of
    # its own or, with a RoCE metal profile, on the one the profile makes.
    predefined = machine.rdma_profile.predefined_subnet

    def subnet(n: catalog.NicNetwork) -> str:
        return "default-subnet-1-c-rdma-net" if n.kind == "rdma" and predefined else f"c-{n.name}-subnet"

    expected = [{"network": "c-rdma-net" if n.kind == "rdma" else f"c-{n.name}-net", "subnetwork": subnet(n)} for n in nics]
    assert pool.inputs.get("networkConfig", {}).get("additionalNodeNetworkConfigs", []) == expected
    subnets = built.all(SUBNET)
    assert sorted(s.inputs["ipCidrRange"] for s in subnets) == sorted(n.cidr for n in nics if not (n.kind == "rdma" and predefined))
    assert {s.urn for s in subnets} <= set(pool.dependencies)
    assert {n.inputs["mtu"] for n in built.all(NETWORK)} == ({machine.mtu} if nics else set())
    profile_suffix = f"/networkProfiles/us-central1-b-{machine.rdma_profile.suffix}"
    assert all(n.inputs.get("networkProfile", "").endswith(profile_suffix) == n.name.endswith("-rdma") for n in built.all(NETWORK))
    assert config.get("labels", {}).get(catalog.DRANET_NODE_LABEL) == ("true" if dranet else None)

    _, template = pod_of(built)
    pod = template["spec"]
    (container,) = pod["containers"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": machine.accelerator, "cloud.google.com/gke-nodepool": "gpus"}
    assert GPU_TOLERATION in pod["tolerations"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": machine.gpus_per_node}
    assert profile.annotations.items() <= template["metadata"]["annotations"].items()
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert profile.env.items() <= env.items()
    assert {c["name"] for c in profile.init_containers} <= {c["name"] for c in pod.get("initContainers", [])}
    assert pod.get("hostNetwork", False) is profile.host_network

    daemonsets = [d for d in built.all(DAEMONSET) if d.inputs["metadata"]["name"] not in machine.node_daemonsets]
    assert bool(daemonsets) is (machine.gpudirect in NODE_INSTALLED)
    assert sorted(d.inputs["metadata"]["name"] for d in built.all(DAEMONSET) if d not in daemonsets) == sorted(machine.node_daemonsets)
    for ds in daemonsets:
        terms = ds.inputs["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == [machine.accelerator]
    if machine.gpudirect not in NODE_INSTALLED:
        with pytest.raises(ValueError, match="nothing to install"):
            run(lambda o: GpuDirectInstallers("gpudirect", GpuDirectInstallersArgs(machine.name), o))


# --- gcp_services ---------------------------------------------------------------------------------


def test_project_services_enable_each_api_once_and_never_disable_it() -> None:
    apis = ["file.googleapis.com", "container.googleapis.com", "file.googleapis.com"]
    built = run(lambda o: ProjectServices("apis", ProjectServicesArgs("proj-1", apis), o))
    services = built.all(API)
    assert sorted((s.name, s.inputs["service"]) for s in services) == [("apis-container", "container.googleapis.com"), ("apis-file", "file.googleapis.com")]
    for service in services:
        assert (service.inputs["project"], service.inputs["disableOnDestroy"], service.inputs["disableDependentServices"]) == ("proj-1", False, False)


# --- gcp_network ----------------------------------------------------------------------------------


def test_primary_network_is_named_and_ranged_by_its_args() -> None:
    args = PrimaryNetworkArgs(NetworkSpec(), "proj-1", "us-east4", "c")
    built = run(lambda o: PrimaryNetwork("net", args, o))
    gcp = [r for r in built.rendered.registrations if r.custom and r.type.startswith("gcp:")]
    assert sorted(r.inputs["name"] for r in gcp) == ["c-internal", "c-nat", "c-net", "c-router", "c-subnet"]
    subnet = built.inputs(SUBNET)
    assert (subnet["region"], subnet["ipCidrRange"], subnet["privateIpGoogleAccess"]) == ("us-east4", "10.0.0.0/20", True)
    assert subnet["secondaryIpRanges"] == [
        {"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"},
        {"rangeName": "services", "ipCidrRange": "10.8.0.0/20"},
    ]
    assert built.inputs(FIREWALL)["sourceRanges"] == ["10.0.0.0/20", "10.4.0.0/14"]  # nodes and pods, not Services
    assert (built.value.ref.pods_range, built.value.ref.services_range) == ("pods", "services")


def test_gpu_nic_networks_firewall_only_the_gvnic_vpcs() -> None:
    built = run(lambda o: GpuNicNetworks("nics", nic_args(ULTRA), o))
    assert sorted(r.inputs["name"] for r in built.all(FIREWALL)) == ["c-gvnic-1-internal"]
    assert built.inputs(FIREWALL)["sourceRanges"] == [NIC_CIDR]
    assert built.inputs(NETWORK, "nics-rdma")["networkProfile"] == "projects/proj-1/global/networkProfiles/us-central1-b-vpc-roce"
    assert [n.name for n, _, _ in built.value.networks] == ["gvnic-1", *(f"rdma-{i}" for i in range(8))]


# --- gke_cluster ----------------------------------------------------------------------------------


def test_gke_cluster_hands_out_a_provider_identified_by_this_cluster_instance() -> None:
    seen: dict[str, Any] = {}

    def build(o: pulumi.ResourceOptions) -> GkeCluster:
        cluster = GkeCluster("cluster", cluster_args(), o)
        capture(cluster.cluster.id, seen, "id")
        capture(cluster.cluster.master_auth.apply(lambda auth: auth.cluster_ca_certificate), seen, "ca")
        return cluster

    built = run(build)
    provider = built.one(K8S_PROVIDER, "cluster-gke")
    assert provider.parent == built.one("trainstack:gcp:GkeCluster").urn
    assert seen["ca"] and provider.inputs["clusterIdentifier"] == cluster_identity(seen["id"], seen["ca"])
    assert provider.inputs["enableServerSideApply"] == "true"


def test_gke_cluster_from_its_args() -> None:
    args = cluster_args({"releaseChannel": "STABLE"}, multi_networking=True, filestore_csi=True, labels={"team": "ml"})
    cluster = run(lambda o: GkeCluster("cluster", args, o)).inputs(CLUSTER)
    assert (cluster["project"], cluster["location"], cluster["name"]) == ("proj-1", "us-central1", "c")
    assert cluster["nodeLocations"] == ["us-central1-b", "us-central1-c"]
    assert (cluster["network"], cluster["subnetwork"]) == ("vpc", "subnet")
    assert cluster["ipAllocationPolicy"] == {"clusterSecondaryRangeName": "pods", "servicesSecondaryRangeName": "services"}
    assert cluster["nodeConfig"]["serviceAccount"] == SA
    assert (cluster["datapathProvider"], cluster["enableMultiNetworking"]) == ("ADVANCED_DATAPATH", True)
    assert cluster["addonsConfig"]["gcpFilestoreCsiDriverConfig"] == {"enabled": True}
    assert cluster["releaseChannel"] == {"channel": "STABLE"} and cluster["resourceLabels"] == {"team": "ml"}
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "proj-1.svc.id.goog"}
    plain = run(lambda o: GkeCluster("cluster", cluster_args(), o)).inputs(CLUSTER)
    assert "datapathProvider" not in plain and "enableMultiNetworking" not in plain


@pytest.mark.parametrize("private", [True, False])
def test_gke_cluster_private_nodes_and_the_control_plane_firewall(private: bool) -> None:
    args = cluster_args({"privateNodes": private, "privateEndpoint": private, "masterIpv4Cidr": "172.16.8.0/28"}, control_plane_ports=[9443, 8443])
    built = run(lambda o: GkeCluster("cluster", args, o))
    cluster = built.inputs(CLUSTER)
    if private:
        assert cluster["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": True, "masterIpv4CidrBlock": "172.16.8.0/28"}
        rule = built.inputs(FIREWALL)
        assert (rule["network"], rule["sourceRanges"]) == ("vpc", ["172.16.8.0/28"])
        assert rule["allows"] == [{"protocol": "tcp", "ports": ["8443", "9443"]}]
    else:
        assert "privateClusterConfig" not in cluster and not built.all(FIREWALL)


def test_gke_cluster_authorized_networks_and_deletion_protection() -> None:
    networks = [{"cidrBlock": "203.0.113.0/24", "displayName": "vpn"}, {"cidrBlock": "198.51.100.7/32"}]
    locked = run(lambda o: GkeCluster("cluster", cluster_args({"authorizedNetworks": networks}), o)).one(CLUSTER)
    assert locked.inputs["masterAuthorizedNetworksConfig"] == {
        "cidrBlocks": [{"cidrBlock": "203.0.113.0/24", "displayName": "vpn"}, {"cidrBlock": "198.51.100.7/32"}]
    }
    assert locked.inputs["deletionProtection"] is True and locked.options["protect"] is True
    open_ = run(lambda o: GkeCluster("cluster", cluster_args({"deletionProtection": False}), o)).one(CLUSTER)
    assert "masterAuthorizedNetworksConfig" not in open_.inputs
    assert open_.inputs["deletionProtection"] is False and "protect" not in open_.options


# --- node_pools -----------------------------------------------------------------------------------


def test_node_service_account_grants_each_node_role_to_its_own_account() -> None:
    seen: dict[str, Any] = {}

    def build(o: pulumi.ResourceOptions) -> NodeServiceAccount:
        account = NodeServiceAccount("sa", NodeServiceAccountArgs("proj-1", "gke-nodes"), o)
        capture(account.email, seen, "email")
        return account

    built = run(build)
    account = built.one(ACCOUNT)
    assert (account.inputs["project"], account.inputs["accountId"]) == ("proj-1", "gke-nodes")
    grants = built.all(IAM_MEMBER)
    assert sorted(g.inputs["role"] for g in grants) == sorted(NODE_ROLES)
    assert all(g.inputs["project"] == "proj-1" and account.urn in g.dependencies for g in grants)
    assert seen["email"].startswith("gke-nodes@") and {g.inputs["member"] for g in grants} == {f"serviceAccount:{seen['email']}"}


def test_gpu_node_pool_from_its_args() -> None:
    spec = {
        "reservation": {"affinity": "specific", "name": "r1", "project": "host-proj"},
        "placement": "none",
        "gpuDriver": "default",
        "bootDiskGb": 500,
        "upgrade": {"maxSurge": 1, "maxUnavailable": 0},
    }
    args = gpu_pool_args(spec, labels={"team": "ml"}, extra_networks=[ExtraNetwork("v1", "s1")])
    built = run(lambda o: GpuNodePool("gpu", args, o))
    pool = built.inputs(NODE_POOL)
    config = pool["nodeConfig"]
    assert (pool["name"], pool["cluster"], pool["nodeLocations"], pool["nodeCount"]) == ("gpus", args.cluster, ["us-central1-b"], 4)
    assert config["machineType"] == "a3-megagpu-8g"
    assert config["guestAccelerators"] == [{"type": "nvidia-h100-mega-80gb", "count": 8, "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"}}]
    assert config["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    assert config["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["projects/host-proj/reservations/r1"],
    }
    assert "placementPolicy" not in pool
    assert (config["serviceAccount"], config["resourceLabels"], config["diskSizeGb"]) == (SA, {"team": "ml"}, 500)
    assert pool["networkConfig"] == {"additionalNodeNetworkConfigs": [{"network": "v1", "subnetwork": "s1"}]}
    assert pool["upgradeSettings"] == {"strategy": "SURGE", "maxSurge": 1, "maxUnavailable": 0}
    # What a pod needs to land here: the pool's GKE labels, and the toleration of its taint.
    assert built.value.node_selector == {"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb", "cloud.google.com/gke-nodepool": "gpus"}
    assert built.value.tolerations == [GPU_TOLERATION]


@pytest.mark.parametrize(("placement", "compact"), [("compact", True), ("auto", True), ("none", False)])
def test_gpu_node_pool_placement_policy_only_when_compact(placement: str, compact: bool) -> None:
    pool = run(lambda o: GpuNodePool("gpu", gpu_pool_args({"placement": placement}), o)).inputs(NODE_POOL)
    assert pool.get("placementPolicy") == ({"type": "COMPACT"} if compact else None)


@pytest.mark.parametrize(("affinity", "consumed"), [("none", "NO_RESERVATION"), ("any", "ANY_RESERVATION")])
def test_gpu_node_pool_reservation_affinity(affinity: str, consumed: str) -> None:
    config = run(lambda o: GpuNodePool("gpu", gpu_pool_args({"reservation": {"affinity": affinity}}), o)).inputs(NODE_POOL)["nodeConfig"]
    assert config["reservationAffinity"] == {"consumeReservationType": consumed}


@pytest.mark.parametrize(
    ("changes", "count", "initial", "autoscaling"),
    [
        ({"nodeCount": 4}, 2, None, None),
        (
            {"nodeCount": None, "autoscaling": {"minNodes": 1, "maxNodes": 8}},
            None,
            1,
            {"totalMinNodeCount": 1, "totalMaxNodeCount": 8, "locationPolicy": "ANY"},
        ),
        (
            {"nodeCount": None, "autoscaling": {"minNodes": 3, "maxNodes": 6}, "reservation": {"affinity": "none"}},
            None,
            2,
            {"totalMinNodeCount": 3, "totalMaxNodeCount": 6, "locationPolicy": "BALANCED"},
        ),
        (
            {"nodeCount": None, "autoscaling": {"minNodes": 0, "maxNodes": 6}, "provisioning": "spot"},
            None,
            0,
            {"totalMinNodeCount": 0, "totalMaxNodeCount": 6, "locationPolicy": "ANY"},
        ),
    ],
    ids=["fixed", "autoscaled-reserved", "autoscaled-on-demand", "autoscaled-spot"],
)
def test_gpu_node_pool_is_fixed_or_autoscaled_over_its_zones(
    changes: dict[str, Any], count: int | None, initial: int | None, autoscaling: dict[str, Any] | None
) -> None:
    """node_count and initialNodeCount are per zone; an autoscaled pool's size is the autoscaler's."""
    args = gpu_pool_args({"zones": ["us-central1-c", "us-central1-b"], "placement": "none", **changes})
    reg = run(lambda o: GpuNodePool("gpu", args, o)).one(NODE_POOL)
    assert reg.inputs["nodeLocations"] == ["us-central1-b", "us-central1-c"]
    assert (reg.inputs.get("nodeCount"), reg.inputs.get("initialNodeCount"), reg.inputs.get("autoscaling")) == (count, initial, autoscaling)
    assert reg.options.get("ignoreChanges") == (["initialNodeCount", "nodeCount"] if autoscaling else None)


@pytest.mark.parametrize("provisioning", ["on-demand", "spot", "flex-start"])
def test_gpu_node_pool_provisioning(provisioning: str) -> None:
    # A3 Mega takes no compact placement with flex-start (GpuNodePool refuses it: see below).
    spec = {"provisioning": provisioning, "nodeCount": None, "autoscaling": {"maxNodes": 2}, "reservation": {"affinity": "none"}}
    args = gpu_pool_args({**spec, "placement": "none" if provisioning == "flex-start" else "compact"})
    pool = run(lambda o: GpuNodePool("gpu", args, o)).inputs(NODE_POOL)
    assert pool["nodeConfig"].get("spot") is (True if provisioning == "spot" else None)
    assert pool["nodeConfig"].get("flexStart") is (True if provisioning == "flex-start" else None)
    assert pool["management"] == {"autoRepair": provisioning != "flex-start", "autoUpgrade": True}


def test_cpu_node_pool_is_untainted_and_sized_per_zone() -> None:
    zones = ["us-central1-b", "us-central1-a"]
    args = cpu_pool_args({"name": "cpu", "zones": zones, "machineType": "n2-standard-8", "nodeCount": 4, "bootDiskGb": 50}, labels={"team": "ml"})
    pool = run(lambda o: CpuNodePool("cpu", args, o)).inputs(NODE_POOL)
    config = pool["nodeConfig"]
    assert (pool["name"], pool["nodeLocations"], pool["nodeCount"]) == ("cpu", ["us-central1-a", "us-central1-b"], 2)
    assert (config["machineType"], config["diskSizeGb"], config["diskType"]) == ("n2-standard-8", 50, catalog.cpu_machine("n2-standard-8").boot_disk_type)
    assert "taints" not in config and "guestAccelerators" not in config
    assert (config["serviceAccount"], config["resourceLabels"]) == (SA, {"team": "ml"})


# --- storage --------------------------------------------------------------------------------------


@pytest.mark.parametrize("disposable", [False, True])
def test_data_is_kept_on_destroy_unless_disposable(disposable: bool) -> None:
    """Retained (forgotten by destroy, data kept), never `protect`ed: that would refuse the
    whole destroy."""
    built = run(
        lambda o: (
            CheckpointBucket("b", CheckpointBucketArgs(bucket_spec("bucket"), "proj-1", disposable=disposable), o),
            FilestoreShare("f", FilestoreShareArgs(FilestoreSpec(), "proj-1", "fs", "us-central1-b", "vpc", disposable=disposable), o),
            NfsDisk("d", NfsDiskArgs(NfsSpec.model_validate({"diskSizeGb": 100}), "proj-1", "us-central1-b", "disk", disposable=disposable), o),
        )
    )
    for type_token in (BUCKET, FILESTORE, DISK):
        options = {k: v for k, v in built.one(type_token).options.items() if k != "aliases"}
        assert options == ({} if disposable else {"retainOnDelete": True})
    assert built.inputs(BUCKET)["forceDestroy"] is disposable


def test_checkpoint_bucket_grants_object_users_after_grant_after() -> None:
    def build(o: pulumi.ResourceOptions) -> CheckpointBucket:
        pool = Gate("identity-pool")
        args = CheckpointBucketArgs(
            bucket_spec("ckpt", hierarchicalNamespace=False),
            "proj-1",
            object_users={"ns.a": "principal://a", "ns.b": "principal://b"},
            grant_after=[pool],
            labels={"team": "ml"},
        )
        return CheckpointBucket("bucket", args, o)

    built = run(build)
    bucket = built.one(BUCKET)
    assert (bucket.inputs["name"], bucket.inputs["location"], bucket.inputs["labels"]) == ("ckpt", "US-CENTRAL1", {"team": "ml"})
    assert "hierarchicalNamespace" not in bucket.inputs and bucket.inputs["publicAccessPrevention"] == "enforced"
    pool = built.one(GATE, "identity-pool").urn
    grants = built.all(BUCKET_MEMBER)
    assert {g.name: (g.inputs["member"], g.inputs["role"]) for g in grants} == {
        "bucket-object-user-ns.a": ("principal://a", "roles/storage.objectUser"),
        "bucket-object-user-ns.b": ("principal://b", "roles/storage.objectUser"),
    }
    assert all({pool, bucket.urn} <= set(g.dependencies) for g in grants)
    assert pool not in bucket.dependencies  # only the grants wait for the identity pool


def _bucket_grants(users: dict[str, pulumi.Input[str]]) -> dict[str, Registration]:
    built = run(lambda o: CheckpointBucket("bucket", CheckpointBucketArgs(bucket_spec("ckpt"), "proj-1", object_users=users), o))
    # In the order of `users` (the order the component registers them in; the recorder's may differ).
    grants = {g.inputs["member"]: g for g in built.all(BUCKET_MEMBER)}
    return {member: grants[member] for member in users.values() if isinstance(member, str)}


def _plan_rows(grants: dict[str, Registration]) -> list[dict[str, Any]]:
    return [{"urn": g.urn, "parent": None, "options": {"aliases": g.options.get("aliases") or []}} for g in grants.values()]


def test_a_bucket_grant_is_keyed_by_its_grantee_and_moves_from_its_place() -> None:
    """Removing the first grantee touches no other grant (its URN is its grantee's), and a live
    stack's positional grants (`object-user-<i>`, as releases before named them) are each taken
    over by the grant now at that place, by the engine's matching (app/plan/aliases.py)."""
    both = _bucket_grants({"ns.a": "principal://a", "ns.b": "principal://b"})
    assert [g.name for g in both.values()] == ["bucket-object-user-ns.a", "bucket-object-user-ns.b"]
    alone = _bucket_grants({"ns.b": "principal://b"})
    assert alone["principal://b"].urn == both["principal://b"].urn
    positional = {g.urn.replace(g.name, f"bucket-object-user-{i}"): g.urn for i, g in enumerate(both.values())}
    found = claims(positional, _plan_rows(both))
    assert found.was == {new: old for old, new in positional.items()} and not found.deleted and not found.invalid


@pytest.mark.parametrize("key", ["", "Ns.A", "a/b", "-a", "a" * 101])
def test_a_grantee_key_that_is_no_resource_name_is_refused(key: str) -> None:
    problems = CheckpointBucketArgs(bucket_spec("ckpt"), "proj-1", object_users={key: "principal://a"}).problems()
    assert [(p.key, p.rule) for p in problems] == [(("object_users",), f"key {key!r} {rules.GRANTEE_KEY(key)}")]
    assert WorkloadImageArgs(BUILD, "proj-1", "us-central1", "repo", "0" * 64, "builder", "p-builds", readers={key: "x"}).problems()


def test_filestore_share_and_nfs_disk_from_their_args() -> None:
    built = run(
        lambda o: (
            FilestoreShare(
                "f",
                FilestoreShareArgs(
                    FilestoreSpec.model_validate({"tier": "ENTERPRISE", "capacityGib": 2048, "shareName": "data"}),
                    "proj-1",
                    "fs",
                    "us-central1",
                    "projects/h/global/networks/shared",
                ),
                o,
            ),
            NfsDisk("d", NfsDiskArgs(NfsSpec.model_validate({"diskType": "pd-balanced", "diskSizeGb": 300}), "proj-1", "us-central1-b", "nfs"), o),
        )
    )
    share = built.inputs(FILESTORE)
    assert (share["name"], share["location"], share["tier"]) == ("fs", "us-central1", "ENTERPRISE")
    assert share["fileShares"] == {"name": "data", "capacityGb": 2048}
    assert share["networks"] == [{"network": "projects/h/global/networks/shared", "modes": ["MODE_IPV4"], "connectMode": "DIRECT_PEERING"}]
    assert built.value[0].share_name == "data"
    disk = built.inputs(DISK)
    assert (disk["name"], disk["zone"], disk["type"], disk["size"]) == ("nfs", "us-central1-b", "pd-balanced", 300)


# --- image ----------------------------------------------------------------------------------------


def test_workload_image_builds_after_its_grants_when_its_context_changes() -> None:
    spec = BuildSpec.model_validate({"context": "images/x", "imageName": "img", "tag": "t", "machineType": "e2-highcpu-8"})
    args = WorkloadImageArgs(spec, "proj-1", "us-central1", "repo", "f" * 64, "builder", "p-builds")
    built = run(lambda o: WorkloadImage("image", args, o))
    build = built.one(COMMAND)
    grants = [
        built.one(type_token, name)
        for type_token, name in (
            ("gcp:artifactregistry/repositoryIamMember:RepositoryIamMember", "image-builder-push"),
            (BUCKET_MEMBER, "image-builder-staging"),
            (IAM_MEMBER, "image-builder-logs"),
        )
    ]
    assert {g.urn for g in grants} <= set(build.dependencies)
    assert build.inputs["triggers"] == ["f" * 64]
    create = build.inputs["create"]
    assert create.startswith("gcloud builds submit images/x --project=proj-1 --region=us-central1 ")
    assert "/img:t " in create and "--machine-type=e2-highcpu-8" in create and "--gcs-source-staging-dir=gs://p-builds/source" in create
    assert built.inputs(ACCOUNT)["accountId"] == "builder"
    assert (built.inputs(BUCKET, "image-staging")["name"], built.inputs(BUCKET, "image-staging")["forceDestroy"]) == ("p-builds", True)


# --- kueue ----------------------------------------------------------------------------------------


def test_kueue_queue_objects_from_its_args() -> None:
    flavor = GpuFlavor("mega", "mega-pool", MEGA.name, 3)
    placement = Placement({"cloud.google.com/gke-nodepool": "cpu"}, [GPU_TOLERATION])
    classes = [{"name": "high", "value": 1000, "description": "urgent"}, {"name": "low", "value": 10}]
    args = KueueArgs(KueueSpec.model_validate({"localQueue": "lq", "clusterQueue": "cq", "priorityClasses": classes}), "ml", [flavor], placement=placement)
    built = run(lambda o: Kueue("kueue", args, o))
    topology, resource_flavor = built.inputs(f"{KUEUE}:Topology"), built.inputs(f"{KUEUE}:ResourceFlavor")
    assert resource_flavor["spec"] == {
        "nodeLabels": {"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb", "cloud.google.com/gke-nodepool": "mega-pool"},
        "tolerations": [GPU_TOLERATION],
        "topologyName": topology["metadata"]["name"],
    }
    queue = built.inputs(f"{KUEUE}:ClusterQueue")
    assert queue["metadata"]["name"] == "cq"
    (group,) = queue["spec"]["resourceGroups"]
    (entry,) = group["flavors"]
    assert entry["name"] == resource_flavor["metadata"]["name"]
    assert {r["name"]: r["nominalQuota"] for r in entry["resources"]} == {"cpu": 3 * 208, "memory": f"{3 * 1872}Gi", "nvidia.com/gpu": 3 * 8}
    local = built.inputs(f"{KUEUE}:LocalQueue")
    assert (local["metadata"]["name"], local["metadata"]["namespace"], local["spec"]) == ("lq", "ml", {"clusterQueue": "cq"})
    priorities = {p.inputs["metadata"]["name"]: p.inputs for p in built.all(f"{KUEUE}:WorkloadPriorityClass")}
    assert (priorities["high"]["value"], priorities["high"]["description"]) == (1000, "urgent")
    assert priorities["low"]["value"] == 10 and "description" not in priorities["low"]
    release = built.one(RELEASE)
    assert release.inputs["values"]["controllerManager"]["nodeSelector"] == {"cloud.google.com/gke-nodepool": "cpu"}
    assert release.inputs["values"]["controllerManager"]["tolerations"] == [GPU_TOLERATION]
    queue_objects = [r for r in built.rendered.registrations if r.type.startswith(KUEUE)]
    assert len(queue_objects) == 6 and all(release.urn in r.dependencies for r in queue_objects)
    assert built.value.local_queue_name == "lq"


# --- jobset ---------------------------------------------------------------------------------------


def test_jobset_controller_release_from_its_args() -> None:
    chart = catalog.HelmChart("jobset", "oci://registry.example/charts", "9.9.9", "js-system")
    placement = Placement({"cloud.google.com/gke-nodepool": "cpu"}, [GPU_TOLERATION])
    built = run(lambda o: JobSet("jobset", JobSetArgs(placement, chart), o))
    release = built.inputs(RELEASE)
    assert (release["name"], release["chart"], release["version"], release["namespace"]) == (
        "jobset",
        "oci://registry.example/charts/jobset",
        "9.9.9",
        "js-system",
    )
    assert release["values"] == {"controller": {"nodeSelector": {"cloud.google.com/gke-nodepool": "cpu"}, "tolerations": [GPU_TOLERATION]}}
    assert built.value.version == "9.9.9"


# --- multinic -------------------------------------------------------------------------------------


def test_gpu_networks_one_parameter_set_and_network_per_attachment() -> None:
    attachments = [NicAttachment("gvnic-1", "gvnic", "c-gvnic-1-net", "c-gvnic-1-subnet"), NicAttachment("rdma-0", "rdma", "c-rdma-net", "c-rdma-0-subnet")]
    built = run(lambda o: GpuNetworks("nets", GpuNetworksArgs(attachments), o))
    params = {p.inputs["metadata"]["name"]: p for p in built.all("kubernetes:networking.gke.io/v1:GKENetworkParamSet")}
    networks = {n.inputs["metadata"]["name"]: n for n in built.all("kubernetes:networking.gke.io/v1:Network")}
    assert params["gvnic-1"].inputs["spec"] == {"vpc": "c-gvnic-1-net", "vpcSubnet": "c-gvnic-1-subnet", "deviceMode": "NetDevice"}
    assert params["rdma-0"].inputs["spec"] == {"vpc": "c-rdma-net", "vpcSubnet": "c-rdma-0-subnet", "deviceMode": "RDMA"}
    for name, network in networks.items():
        assert network.inputs["spec"] == {"type": "Device", "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": name}}
        assert params[name].urn in network.dependencies
    assert built.value.network_names == ["gvnic-1", "rdma-0"]


# --- workload_identity ----------------------------------------------------------------------------


@pytest.mark.parametrize(("namespace", "created"), [("ml", True), ("default", False)])
def test_workload_identity_creates_its_namespace_unless_built_in(namespace: str, created: bool) -> None:
    built = run(lambda o: WorkloadIdentity("identity", WorkloadIdentityArgs(namespace, "trainer"), o))
    namespaces = built.all(NAMESPACE)
    assert [n.inputs["metadata"]["name"] for n in namespaces] == ([namespace] if created else [])
    account = built.one(SERVICE_ACCOUNT)
    assert (account.inputs["metadata"]["name"], account.inputs["metadata"]["namespace"]) == ("trainer", namespace)
    assert all(n.urn in account.dependencies for n in namespaces)  # created in it, so after it
    assert built.value.service_account_name == "trainer"


# --- gpudirect_installers -------------------------------------------------------------------------


@pytest.mark.parametrize(("machine", "daemonsets"), [(MEGA, ["device-injector", "nccl-tcpxo-installer"]), (HIGH, ["nccl-tcpx-installer"])])
def test_gpudirect_installers_follow_the_machines_stack(machine: catalog.Machine, daemonsets: list[str]) -> None:
    built = run(lambda o: GpuDirectInstallers("gpudirect", GpuDirectInstallersArgs(machine.name, namespace="gpu-system"), o))
    found = built.all(DAEMONSET)
    assert sorted(d.inputs["metadata"]["name"] for d in found) == daemonsets
    for ds in found:
        pod = ds.inputs["spec"]["template"]["spec"]
        assert ds.inputs["metadata"]["namespace"] == "gpu-system"
        assert pod["tolerations"] == [{"operator": "Exists"}]  # whatever taints the GPU nodes carry
        terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms == [{"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": [machine.accelerator]}]}]


def test_nvidia_driver_installer_skips_nodes_whose_driver_gke_manages() -> None:
    built = run(lambda o: NvidiaDriverInstaller("driver", NvidiaDriverInstallerArgs("nvidia-tesla-a100", "gpu-system"), o))
    ds = built.inputs(DAEMONSET)
    assert (ds["metadata"]["name"], ds["metadata"]["namespace"]) == ("nvidia-driver-installer", "gpu-system")
    terms = ds["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [
        {
            "matchExpressions": [
                {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-tesla-a100"]},
                {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
            ]
        }
    ]


# --- volumes --------------------------------------------------------------------------------------


def bound_pair(built: Built[Any], volume_name: str, claim_name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The volume and claim by name, checked bound to each other, retained, unprovisioned."""
    volume = next(r for r in built.all(PV) if r.inputs["metadata"]["name"] == volume_name)
    claim = next(r for r in built.all(PVC) if r.inputs["metadata"]["name"] == claim_name)
    assert claim.inputs["spec"]["volumeName"] == volume_name and volume.inputs["spec"]["claimRef"]["name"] == claim_name
    assert volume.inputs["spec"]["claimRef"]["namespace"] == claim.inputs["metadata"]["namespace"]
    assert volume.inputs["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert volume.inputs["spec"]["storageClassName"] == claim.inputs["spec"]["storageClassName"] == ""
    assert volume.urn in claim.dependencies
    return volume.inputs, claim.inputs


@pytest.mark.parametrize("file_cache", [False, True])
def test_gcsfuse_volume_mounts_its_bucket(file_cache: bool) -> None:
    built = run(
        lambda o: GcsFuseVolume("gcs", GcsFuseVolumeArgs(bucket="ckpt-bucket", claim_name="shared", namespace="ml", file_cache=file_cache, capacity="1Ti"), o)
    )
    volume, claim = bound_pair(built, "gcs", "shared")  # the volume named as its component: unique in the cluster
    assert (volume["spec"]["csi"]["driver"], volume["spec"]["csi"]["volumeHandle"]) == ("gcsfuse.csi.storage.gke.io", "ckpt-bucket")
    assert volume["spec"]["accessModes"] == claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert claim["spec"]["resources"]["requests"] == {"storage": "1Ti"} and claim["metadata"]["namespace"] == "ml"
    assert "implicit-dirs" in volume["spec"]["mountOptions"]
    assert ("file-cache:max-size-mb:-1" in volume["spec"]["mountOptions"]) is file_cache


def test_nfs_volume_mounts_its_export() -> None:
    args = NfsVolumeArgs(server="10.0.0.2", path="/share1", capacity="1Ti", claim_name="shared", namespace="ml", mount_options=["nfsvers=3"])
    volume, _ = bound_pair(run(lambda o: NfsVolume("nfs", args, o)), "nfs", "shared")
    assert volume["spec"]["nfs"] == {"server": "10.0.0.2", "path": "/share1"}
    assert volume["spec"]["mountOptions"] == ["nfsvers=3"] and volume["spec"]["capacity"] == {"storage": "1Ti"}


def test_nfs_server_serves_its_disk_from_its_zone() -> None:
    placement = Placement({"cloud.google.com/gke-nodepool": "cpu"}, [GPU_TOLERATION])
    args = NfsServerArgs("disk1", "proj-1", "us-central1-b", 300, "ml", placement, name="files")
    built = run(lambda o: NfsServer("server", args, o))
    volume, claim = bound_pair(built, "files-disk", "files-disk")
    assert volume["spec"]["csi"]["volumeHandle"] == "projects/proj-1/zones/us-central1-b/disks/disk1"
    assert volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": "topology.gke.io/zone", "operator": "In", "values": ["us-central1-b"]}]}
    ]
    assert claim["spec"]["resources"]["requests"] == {"storage": "300Gi"} and claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    deployment = built.one(DEPLOYMENT)
    pod = deployment.inputs["spec"]["template"]["spec"]
    assert (pod["nodeSelector"], pod["tolerations"]) == ({"cloud.google.com/gke-nodepool": "cpu"}, [GPU_TOLERATION])
    assert pod["volumes"][0]["persistentVolumeClaim"] == {"claimName": "files-disk"}
    service = built.one(SERVICE)
    assert service.inputs["metadata"]["name"] == "files" and deployment.urn in service.dependencies
    assert service.inputs["spec"]["selector"] == deployment.inputs["spec"]["selector"]["matchLabels"]


# --- workloads: training_job ----------------------------------------------------------------------


@pytest.mark.parametrize("controller", ["jobset", "job"])
def test_training_job_pod_from_its_args(controller: str) -> None:
    built = run(lambda o: TrainingJob("train", job_args(controller=controller), o))
    job, template = pod_of(built)
    pod = template["spec"]
    (container,) = pod["containers"]
    assert job.type == (JOBSET if controller == "jobset" else JOB)
    meta = job.inputs["metadata"]
    assert (meta["name"], meta["namespace"], meta["labels"]["kueue.x-k8s.io/queue-name"]) == ("hello", "ml", "research")
    assert "kueue.x-k8s.io/priority-class" not in meta["labels"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "a100"}
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists"},
        {"key": "cloud.google.com/impending-node-termination", "operator": "Exists"},
    ]
    assert (container["image"], container["args"]) == ("registry.example/train:1", ["torchrun", "train.py"])
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 4}  # FOUR_GPUS.gpus_per_node
    assert pod["serviceAccountName"] == "trainer"
    assert {"name": "shared", "persistentVolumeClaim": {"claimName": "shared"}} in pod["volumes"]
    assert {"name": "shared", "mountPath": "/shared"} in container["volumeMounts"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert (env["NNODES"], env["GPUS_PER_NODE"], env["WORLD_SIZE"]) == ("3", "4", "12")
    assert not [k for k in template["metadata"]["annotations"] if k.startswith("kueue.x-k8s.io/podset-")]  # no topology asked
    services = built.all(SERVICE)
    if controller == "job":
        (service,) = services
        assert service.inputs["metadata"]["name"] == pod["subdomain"] == "hello" and service.inputs["spec"]["clusterIP"] == "None"
        assert (job.inputs["spec"]["parallelism"], job.inputs["spec"]["completions"]) == (3, 3)
        assert env["MASTER_ADDR"] == "hello-0.hello"
    else:
        assert not services and "subdomain" not in pod
        assert job.inputs["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 3
        assert env["MASTER_ADDR"] == "hello-workload-0-0.hello"
    assert job.options == {"replaceOnChanges": ["spec"], "deleteBeforeReplace": True}
    assert len(built.value.hosts) == 3 and built.value.hosts[0] == env["MASTER_ADDR"]


@pytest.mark.parametrize("mode", ["preferred", "required"])
def test_training_job_topology_annotation_only_when_asked(mode: Literal["preferred", "required"]) -> None:
    args = job_args(topology=Topology("cloud.google.com/gce-topology-block", mode))
    _, template = pod_of(run(lambda o: TrainingJob("train", args, o)))
    annotations = template["metadata"]["annotations"]
    assert {k: v for k, v in annotations.items() if k.startswith("kueue.x-k8s.io/podset-")} == {
        f"kueue.x-k8s.io/podset-{mode}-topology": "cloud.google.com/gce-topology-block"
    }


def test_training_job_files_secrets_priority_and_user_env() -> None:
    launch = Launch(command=("deepspeed",), env={"A": "launcher", "B": "launcher"}, files=(ConfigFiles("ds", "/workload/ds", {"ds.json": "{}"}),))
    args = job_args(launch=launch, env={"B": "user"}, secret_env={"HF_TOKEN": "s3cr3t"}, priority_class="high", max_restarts=5)
    built = run(lambda o: TrainingJob("train", args, o))
    job, template = pod_of(built)
    (container,) = template["spec"]["containers"]
    config_map, secret = built.one(CONFIG_MAP), built.one(SECRET)
    assert (config_map.inputs["metadata"]["name"], config_map.inputs["data"]) == ("hello-ds", {"ds.json": "{}"})
    assert secret.inputs["metadata"]["name"] == "hello-env" and secret.inputs["stringData"] == SECRET_VALUE
    assert {config_map.urn, secret.urn} <= set(job.dependencies)  # the job starts with its files
    assert {"name": "files-ds", "configMap": {"name": "hello-ds"}} in template["spec"]["volumes"]
    assert {"name": "files-ds", "mountPath": "/workload/ds", "readOnly": True} in container["volumeMounts"]
    env = {e["name"]: e for e in container["env"]}
    assert env["HF_TOKEN"] == {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hello-env", "key": "HF_TOKEN"}}}
    assert (env["A"]["value"], env["B"]["value"]) == ("launcher", "user")  # the user's environment wins
    assert job.inputs["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "high"
    assert job.inputs["spec"]["failurePolicy"] == {"maxRestarts": 5}
    assert "s3cr3t" not in repr(built.rendered.registrations)


# --- workloads: supervisor ------------------------------------------------------------------------


def test_supervisor_from_its_args() -> None:
    built = run(lambda o: ResiliencySupervisor("supervisor", SUPERVISOR_ARGS, o))
    monitor = built.one(DAEMONSET)
    monitor_pod = monitor.inputs["spec"]["template"]["spec"]
    assert monitor_pod["tolerations"] == [GPU_TOLERATION]
    deployments = built.all(DEPLOYMENT)
    assert sorted(d.inputs["metadata"]["name"] for d in deployments) == [f"hello-supervisor-{s}" for s in ("actuator", "controller", "sensor")]
    for deployment in deployments:
        pod = deployment.inputs["spec"]["template"]["spec"]
        assert (pod["nodeSelector"], pod["serviceAccountName"]) == ({"cloud.google.com/gke-nodepool": "cpu"}, "hello-supervisor")
    config = built.one(CONFIG_MAP)
    data = config.inputs["data"]
    assert (data["WORKLOAD_NAME"], data["JOB_NAMESPACE"], data["PROJECT"]) == ("hello", "ml", "proj-1")
    assert (data["WORKERS_PER_HOST"], data["NUM_NODES_PER_DP"], data["NUM_DP_REPLICAS"]) == ("4", "2", "3")
    assert built.inputs("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")["metadata"]["name"] == "ml-hello-supervisor"
    ready = {built.one(SERVICE_ACCOUNT).urn, built.one("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding").urn, config.urn}
    assert all(ready <= set(r.dependencies) for r in [monitor, *deployments])


# --- workloads: tensorboard -----------------------------------------------------------------------


def test_tensorboard_serves_its_log_dir_read_only_on_the_cpu_pool() -> None:
    built = run(lambda o: TensorBoard("tensorboard", TENSORBOARD_ARGS, o))
    deployment = built.inputs(DEPLOYMENT)
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert (deployment["metadata"]["name"], deployment["metadata"]["namespace"]) == ("hello-tb", "ml")
    assert container["image"] == "registry.example/tensorboard:1" and "--logdir=/shared/runs/hello" in container["command"]
    assert container["volumeMounts"] == [{"name": "shared", "mountPath": "/shared", "readOnly": True}]
    assert pod["volumes"] == [{"name": "shared", "persistentVolumeClaim": {"claimName": "shared", "readOnly": True}}]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "cpu"}
    service = built.inputs(SERVICE)
    assert service["metadata"]["name"] == "hello-tb" and service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert built.value.access_command == "kubectl port-forward svc/hello-tb 6006:6006 -n ml"


@pytest.mark.parametrize(
    ("mount_path", "log_dir", "accepted"),
    [("/shared", "/shared", True), ("/shared/", "/shared/logs", True), ("/shared", "/elsewhere/logs", False), ("/shared", "/shared-2/logs", False)],
)
def test_tensorboard_args_need_a_log_dir_on_the_shared_storage(mount_path: str, log_dir: str, accepted: bool) -> None:
    problems = dataclasses.replace(TENSORBOARD_ARGS, mount_path=mount_path, log_dir=log_dir).problems()
    assert problems == ([] if accepted else [(("log_dir",), log_dir, f"is not on the shared storage at {mount_path}")])


def test_training_job_args_refuse_a_name_whose_pod_names_outgrow_63() -> None:
    """JobSet v0.12.0's webhook: `<name>-workload-0-<last pod>` plus 5 characters is a DNS-1035
    label (core/names.py, the rule the config's workload name follows too)."""
    assert dataclasses.replace(JOB_ARGS, name="j" * 44).problems() == []  # 44 + len("-workload-0-2-abcde") = 63
    (problem,) = dataclasses.replace(JOB_ARGS, name="j" * 45).problems()
    assert problem[0] == ("name",) and "has 64 characters, over 63 (JobSet v0.12.0's webhook" in problem[2]
