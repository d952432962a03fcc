"""A machine is a catalog record: one added in a test alone plans a pool of it; A4X Max (GB300 bare
metal, DRANET, RoCE metal, IMEX with the DRA driver 25.8.0, asapd-lite), G4 (RTX PRO 6000, no
GPUDirect) and A4X on DRANET, each as its upstream blueprint builds it (Cluster Toolkit c765092
examples/gke-a4x-max-bm, examples/gke-g4, examples/gke-a4x); what validate refuses of them, as GKE does."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import job_pod_template, plan_inputs, raw_config
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.metrics import mfu
from trainstack.app.plan.plan import Plan, render
from trainstack.app.review.diff import diff_plans
from trainstack.app.review.semantics import REPLACE
from trainstack.app.schemas.validate import crds_for, validate_object
from trainstack.components.gke_cluster import GkeClusterArgs
from trainstack.core import catalog
from trainstack.core.catalog import Dranet, GpuDirect, Image, Machine, RdmaVpcProfile
from trainstack.core.errors import ArgsError, ConfigError

POOL = "gcp:container/nodePool:NodePool"
VPC = "gcp:compute/network:Network"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
MAX, G4, A4X = "a4x-maxgpu-4g-metal", "g4-standard-384", "a4x-highgpu-4g"


def resources(plan: Plan, type_token: str) -> list[dict[str, Any]]:
    return [r["inputs"] for r in plan.resources if r["type"] == type_token]


# --- one record -------------------------------------------------------------------------------------

# A machine no catalog has, written here alone: the record is all trainstack needs of it.
PLAIN = Machine(
    name="z9-standard-16g",
    accelerator="nvidia-z9",
    gpu=catalog.GPUS["rtx-pro-6000"],
    gpus_per_node=2,
    vcpus=64,
    memory_gb=256,
    local_ssds=0,
    gpudirect=GpuDirect.NONE,
    gvnic_networks=0,
    rdma_subnets=0,
    mtu=1460,
    compact_placement=False,
    hourly_usd=12.5,
    default_queue="z9",
)
# An RDMA machine with a RoCE profile of its own, also written here alone: its record plus its profile.
ROCE_Z = RdmaVpcProfile("vpc-roce-z")
RDMA = Machine(
    name="z9-highgpu-4g",
    accelerator="nvidia-z9-hbm",
    gpu=catalog.GPUS["b200"],
    gpus_per_node=4,
    vcpus=112,
    memory_gb=1024,
    local_ssds=16,
    gpudirect=GpuDirect.RDMA,
    gvnic_networks=1,
    rdma_subnets=2,
    mtu=8896,
    compact_placement=True,
    hourly_usd=None,
    boot_disk_type="hyperdisk-balanced",
    default_queue="z9-rdma",
    nccl_plugin=Image(catalog.GIB_REPOSITORY, "v1.1.0"),
    rdma_profile=ROCE_Z,
)


@pytest.mark.parametrize("machine", [PLAIN, RDMA], ids=lambda m: m.name)
def test_a_machine_added_in_the_test_alone_plans_a_pool_of_it(machine: Machine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(catalog.MACHINES, machine.name, machine)
    pool = {"name": "z9", "machineType": machine.name, "nodeCount": 2, "reservation": {"affinity": "none", "name": None}, "placement": "auto"}
    plan = render("a3ultra-platform", raw_config("a3ultra-platform", trainstack_gpuPool=pool, trainstack_kueue={"localQueue": machine.default_queue}))
    node_pool = plan_inputs(plan, POOL, "gpu-pool-z9")
    config = node_pool["nodeConfig"]
    assert (config["machineType"], config["guestAccelerators"][0]["type"], config["guestAccelerators"][0]["count"]) == (
        machine.name,
        machine.accelerator,
        machine.gpus_per_node,
    )
    assert config["diskType"] == machine.boot_disk_type
    assert ("placementPolicy" in node_pool) is machine.compact_placement
    flavor = plan_inputs(plan, "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")
    assert flavor["spec"]["nodeLabels"]["cloud.google.com/gke-accelerator"] == machine.accelerator
    queue = plan_inputs(plan, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
    quota = {r["name"]: r["nominalQuota"] for r in queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
    assert quota["nvidia.com/gpu"] == 2 * machine.gpus_per_node and quota["cpu"] == 2 * machine.vcpus
    extra = node_pool.get("networkConfig", {}).get("additionalNodeNetworkConfigs", [])
    assert len(extra) == machine.extra_nics
    profiles = [v["networkProfile"] for v in resources(plan, VPC) if "networkProfile" in v]
    assert profiles == ([f"projects/my-training-project/global/networkProfiles/us-central1-b-{ROCE_Z.suffix}"] if machine.rdma_subnets else [])


# --- A4X Max ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def a4x_max() -> Plan:
    return render("a4xmax-llama31-405b", raw_stack_config("a4xmax-llama31-405b"))


def test_the_a4x_max_pool_is_toolkits(a4x_max: Plan) -> None:
    """gke-a4x-max-bm.yaml a4x-max-pool: nvidia-gb300 x 4, hyperdisk-balanced, a specific reservation, the
    1x72 workload policy, hugepage_size_2m 4096, the DRANET and unified-CNI labels; its additional
    networks are gke-a4x-max-net-1 (IDPF) and the RoCE metal VPC's eight MRDMA interfaces on the subnet
    the profile makes (modules/network/gpu-rdma-vpc `subnetwork_interfaces_gke`)."""
    stack = "a4xmax-llama31-405b"
    pool = plan_inputs(a4x_max, POOL, "gpu-pool-a4x-max")
    config = pool["nodeConfig"]
    assert (config["machineType"], config["guestAccelerators"][0]["type"], config["guestAccelerators"][0]["count"]) == (MAX, "nvidia-gb300", 4)
    assert config["diskType"] == "hyperdisk-balanced"
    assert config["reservationAffinity"]["consumeReservationType"] == "SPECIFIC_RESERVATION"
    assert config["linuxNodeConfig"] == {"hugepagesConfig": {"hugepageSize2m": 4096}}
    assert config["labels"] == {"cloud.google.com/gke-networking-dra-driver": "true", "cloud.google.com/gke-dpv2-unified-cni": "cni-migration"}
    assert pool["placementPolicy"]["type"] == "COMPACT"
    policy = plan_inputs(a4x_max, "gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "1x72"}
    extra = pool["networkConfig"]["additionalNodeNetworkConfigs"]
    rdma_vpc = f"{stack}-rdma-net"
    assert (
        extra
        == [{"network": f"{stack}-gvnic-1-net", "subnetwork": f"{stack}-gvnic-1-subnet"}]
        + [{"network": rdma_vpc, "subnetwork": f"default-subnet-1-{rdma_vpc}"}] * 8
    )
    assert "acceleratorNetworkProfile" not in pool["networkConfig"]  # its own VPCs, labelled for DRANET
    (rdma,) = [v for v in resources(a4x_max, VPC) if v["name"] == rdma_vpc]
    assert rdma["networkProfile"] == "projects/my-training-project/global/networkProfiles/us-central1-b-vpc-roce-metal"
    assert [s["name"] for s in resources(a4x_max, SUBNET) if s["network"] == rdma_vpc] == []  # the profile makes it
    cluster = plan_inputs(a4x_max, "gcp:container/cluster:Cluster")
    assert (cluster["datapathProvider"], cluster["enableShieldedNodes"]) == ("ADVANCED_DATAPATH", False)


def test_a4x_max_pods_claim_eight_mrdma_nics_and_join_no_network(a4x_max: Plan) -> None:
    """Toolkit's A4X Max NCCL test: a ComputeDomain channel and eight mrdma.google.com devices a pod, no
    Network objects; gIB copied from its image (/usr/local/gib) by the init container."""
    template = job_pod_template(a4x_max)
    assert "networking.gke.io/interfaces" not in template["metadata"].get("annotations", {})
    assert [c["name"] for c in template["spec"]["resourceClaims"]] == ["compute-domain-channel", "rdma"]
    claim = plan_inputs(a4x_max, "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    assert claim["spec"]["spec"]["devices"]["requests"][0]["exactly"] == {"deviceClassName": "mrdma.google.com", "allocationMode": "ExactCount", "count": 8}
    assert validate_object(claim) == []
    assert not [r for r in a4x_max.resources if r["type"].startswith("kubernetes:networking.gke.io/")]
    (installer,) = template["spec"]["initContainers"][:1]
    assert installer["image"] == "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-gib-a4x-max-arm64:v1.1.1"
    assert installer["args"][0].endswith("cp -R /usr/local/gib/. /target/usr/local/gib\n")
    env = {e["name"]: e.get("value") for e in template["spec"]["containers"][0]["env"]}
    assert (env["NCCL_NVLS_ENABLE"], env["GLOO_SOCKET_IFNAME"]) == ("0", "eth0")  # the recipe's pod exports both


def test_a4x_max_runs_the_dra_driver_25_8_and_asapd_lite(a4x_max: Plan) -> None:
    driver = plan_inputs(a4x_max, "kubernetes:helm.sh/v3:Release", "nvidia-dra-driver")
    assert (driver["chart"], driver["version"]) == ("nvidia-dra-driver-gpu", "25.8.0")
    assert driver["values"]["image"]["tag"] == "v25.8.0"
    domain = plan_inputs(a4x_max, "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain")
    assert len(crds_for(catalog.COMPUTE_DOMAIN_API, "ComputeDomain")) == 2 and validate_object(domain) == []
    (daemonset,) = [r["inputs"] for r in a4x_max.resources if r["type"] == "kubernetes:apps/v1:DaemonSet"]
    pod = daemonset["spec"]["template"]["spec"]
    assert (daemonset["metadata"]["name"], daemonset["metadata"]["namespace"]) == ("asapd-lite", "kube-system")
    assert (pod["hostNetwork"], pod["hostPID"], pod["containers"][0]["securityContext"]) == (True, True, {"privileged": True})
    assert pod["containers"][0]["image"] == "us-docker.pkg.dev/gce-ai-infra/asapd-lite/asapd-lite:v0.0.8"
    assert pod["containers"][0]["resources"]["limits"] == {"hugepages-2Mi": "8192Mi", "memory": "1024Mi"}
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
    assert {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [MAX]} in terms
    assert validate_object(daemonset) == []


def test_the_a4x_max_recipe_flags_are_the_recipes(a4x_max: Plan) -> None:
    """gpu-recipes 2e1fd5e training/a4x-max/llama3-1-405b/.../64gpus-fp8cs-seq8192-gbs64/recipe/launcher.sh."""
    container = job_pod_template(a4x_max)["spec"]["containers"][0]
    args, script = container["args"], container["command"][2]
    for flag in (
        "--model_recipe_name=llama31_405b",
        "--gpu=gb300",
        "--compute_dtype=fp8_cs",
        "--config_variant=v1",
        "--num_gpus=64",
        "--gpus_per_node=4",
        "--seq_length=8192",
        "--global_batch_size=64",
        "--micro_batch_size=1",
        "--tensor_model_parallel_size=4",
        "--pipeline_model_parallel_size=1",
        "--context_parallel_size=1",
        "--use_megatron_fsdp=true",
        "--activation_offload_layers=10",
    ):
        assert flag in args, flag
    assert "git -C /opt/Megatron-Bridge checkout 9c9dd848966322fc3ed7706747ec13219ef49dda" in script
    assert container["image"] == "nvcr.io/nvidia/nemo:26.02"


@pytest.mark.parametrize(
    ("changes", "key", "words"),
    [
        ({"trainstack_cluster": {"versionPrefix": "1.33."}}, "trainstack:cluster.versionPrefix", "needs GKE 1.34"),
        ({"trainstack_gpuPool": {"networking": "multi-network"}}, "trainstack:gpuPool.networking", "only through DRANET"),
        ({"trainstack_gpuPool": {"reservation": {"affinity": "none", "name": None}}}, "trainstack:gpuPool.reservation.affinity", "reserved capacity"),
        ({"trainstack_gpuPool": {"nodeCount": 16}}, "trainstack:gpuPool.nodeCount", "whole number of NVLink domains"),
    ],
)
def test_validate_refuses_what_gke_refuses_of_a4x_max(changes: dict[str, Any], key: str, words: str) -> None:
    with pytest.raises(ConfigError) as error:
        render("a4xmax-llama31-405b", raw_config("a4xmax-llama31-405b", **changes))
    assert any(key in str(p) and words in str(p) for p in error.value.problems), error.value.problems


# --- G4 ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def g4() -> Plan:
    return render("g4-llama31-8b", raw_stack_config("g4-llama31-8b"))


def test_the_g4_pool_has_no_gpudirect_and_no_placement(g4: Plan) -> None:
    """gke-g4.yaml g4-pool: nvidia-rtx-pro-6000 x 8 on g4-standard-384, the latest driver, no placement
    policy; no RDMA, no gIB, no NIC VPCs (examples/gke-g4/README.md: standard TCP/IP networking)."""
    pool = plan_inputs(g4, POOL, "gpu-pool-g4")
    accelerator = pool["nodeConfig"]["guestAccelerators"][0]
    assert (accelerator["type"], accelerator["count"], accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"]) == ("nvidia-rtx-pro-6000", 8, "LATEST")
    assert "placementPolicy" not in pool and "networkConfig" not in pool
    assert [v["name"] for v in resources(g4, VPC)] == ["g4-llama31-8b-net"]
    spec = job_pod_template(g4)["spec"]
    assert "initContainers" not in spec or not [c for c in spec["initContainers"] if "gib" in c["image"]]
    env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
    assert env["NCCL_P2P_LEVEL"] == "SYS"  # PCIe peer to peer across all eight GPUs (Toolkit's G4 README)


def test_the_g4_memory_check_and_mfu_know_the_gpu(g4: Plan) -> None:
    """97887 MiB a GPU (102.6 GB) and 503.8 dense bf16 TFLOPS (catalog.gpus)."""
    assert g4.memory is not None and g4.memory["fits"]
    assert catalog.GPUS["rtx-pro-6000"].memory_bytes == 97887 * 2**20
    gpu = catalog.machine(G4).gpu
    assert gpu.peak("bf16") == 503.8 and gpu.peak("fp8") == 2 * gpu.peak("bf16")
    # The same step time on eight RTX PRO 6000s and eight B200s: the G4's MFU is the B200's scaled by their peaks.
    at = {name: mfu.compute_mfu(10.0, "llama3.1-8b", 512, 8192, 8, name, "bf16") for name in ("rtx-pro-6000", "b200")}
    assert at["rtx-pro-6000"].peak_tflops == 503.8
    assert at["rtx-pro-6000"].mfu == pytest.approx(at["b200"].mfu * 2250.0 / 503.8)


def test_g4_needs_the_gke_version_its_blueprint_names() -> None:
    with pytest.raises(ConfigError, match=r"g4-standard-384 needs GKE 1.32.11-gke.1174000 or newer"):
        render("g4-llama31-8b", raw_config("g4-llama31-8b", trainstack_cluster={"versionPrefix": "1.31."}))


# --- DRANET -----------------------------------------------------------------------------------------


def test_dranet_only_where_the_catalog_says_how() -> None:
    with pytest.raises(ConfigError, match=r"a3-ultragpu-8g has no DRANET networking in the catalog"):
        render("a3ultra-platform", raw_config("a3ultra-platform", trainstack_gpuPool={"networking": "dranet"}))
    assert catalog.machine(A4X).dranet == Dranet(managed_networks=True)  # Toolkit's enable_dranet
    assert catalog.machine(MAX).dranet == Dranet(managed_networks=False, required=True)


def test_dranet_without_dataplane_v2_is_refused() -> None:
    """Toolkit c765092 gke-node-pool check `dranet_requirements`: DRANET needs Dataplane V2."""
    network = {"network": "vpc", "subnetwork": "subnet", "pods_range": "pods", "services_range": "services"}
    args = {
        "project": "my-project",
        "location": "us-central1",
        "name": "c",
        "node_locations": ["us-central1-b"],
        "network": network,
        "node_service_account": "sa",
    }
    with pytest.raises(ArgsError, match="needs Dataplane V2"):
        GkeClusterArgs.checked({**args, "dranet": True}, object, "c")
    assert GkeClusterArgs.checked({**args, "dranet": True, "dataplaneV2": True}, object, "c").dranet


def test_a_live_a4x_stack_moving_to_dranet_replaces_its_pool_not_its_cluster() -> None:
    """What `trainstack diff` says of the A4X stack from multi-networking (A4X's default, the stack before
    this release) to DRANET (the shipped stack, as Toolkit moved): the pool is replaced (GKE cannot
    change its accelerator network profile or additional networks in place), the NIC VPCs and Networks
    go, the job restarts; the cluster stays."""
    stack = "a4x-llama3-70b"
    base = render(stack, raw_config(stack, trainstack_gpuPool={"networking": "multi-network"})).to_dict()
    diff = diff_plans(stack, base, render(stack, raw_stack_config(stack)).to_dict())
    effects = {c.resource.name: c.effect for c in diff.changed}
    assert effects["platform-gpu-pool-a4x"] == REPLACE
    assert not [name for name, effect in effects.items() if "cluster" in name and effect == REPLACE]
    removed = {r.type for r in diff.removed}
    assert {"gcp:compute/network:Network", "gcp:compute/subnetwork:Subnetwork", "kubernetes:networking.gke.io/v1:Network"} <= removed
    assert [r.type for r in diff.added] == ["kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"]


def test_one_dra_driver_version_a_cluster() -> None:
    """A4X (25.3.0) and A4X Max (25.8.0) would need two releases of the one DRA driver a cluster runs."""
    stack = "a4xmax-llama31-405b"
    raw = raw_stack_config(stack)
    pools = [
        raw["trainstack:gpuPool"],
        {"name": "a4x", "machineType": A4X, "nodeCount": 18, "reservation": {"affinity": "specific", "name": "a4x-reservation"}, "networking": "dranet"},
    ]
    with pytest.raises(ConfigError, match=r"need NVIDIA DRA driver versions 25.3.0, 25.8.0; one release serves a cluster"):
        render(stack, raw_config(stack, trainstack_gpuPool=None, trainstack_gpuPools=pools))


def test_one_networking_a_machine_type() -> None:
    """The job of a machine's queue is written once: its pools reach their NICs one way."""
    stack = "a4x-llama3-70b"
    raw = raw_stack_config(stack)
    second = {**raw["trainstack:gpuPool"], "name": "a4x-b", "networking": "multi-network"}
    with pytest.raises(ConfigError, match=r"trainstack:gpuPools\[1\]\.networking.*one networking per machine type"):
        render(stack, raw_config(stack, trainstack_gpuPool=None, trainstack_gpuPools=[raw["trainstack:gpuPool"], second]))
