"""The A4X recipe stack `a4x-llama3-70b`, fact by fact from its upstream sources.

Sources: AI-Hypercomputer/gpu-recipes 2e1fd5e training/a4x/llama3_70b/nemo-gke/nemo2602/
64gpus-bf16-gbs256 (RECIPE: values.yaml, launcher.sh, templates/workload-job.yaml);
GoogleCloudPlatform/cluster-toolkit 1047080 examples/gke-a4x (TOOLKIT); NVIDIA-NeMo/Megatron-Bridge
f7a9428 scripts/performance/argument_parser.py (the script's flags).
"""

from __future__ import annotations

import json

import pytest

from helpers import job_pod_template, load_platform, plan_inputs, raw_config
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan.plan import Plan, render
from trainstack.core import catalog
from trainstack.core.errors import ConfigError
from trainstack.workloads.launchers import megatron_bridge

STACK = "a4x-llama3-70b"
RECIPE = "gpu-recipes@2e1fd5e training/a4x/llama3_70b/nemo-gke/nemo2602/64gpus-bf16-gbs256"
TOOLKIT = "cluster-toolkit@1047080 examples/gke-a4x"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return render(STACK, raw_stack_config(STACK))


def test_the_launch_is_the_recipes_run_script_flags(plan: Plan) -> None:
    """RECIPE launcher.sh: torchrun --nproc-per-node=4 --nnodes=16 and the script's flags."""
    workload = job_pod_template(plan)["spec"]["containers"][0]
    args = workload["args"]
    assert args[:3] == ["torchrun", "--nproc-per-node=4", "--nnodes=16"]
    assert args[args.index(megatron_bridge.SCRIPT) + 1 :] == [
        "--model_family_name=llama",
        "--model_recipe_name=llama3_70b",
        "--gpu=gb200",
        "--num_gpus=64",
        "--gpus_per_node=4",
        "--compute_dtype=bf16",
        "--seq_length=8192",
        "--global_batch_size=256",
        "--micro_batch_size=1",
        "--tensor_model_parallel_size=1",
        "--pipeline_model_parallel_size=1",
        "--context_parallel_size=1",
        "--use_megatron_fsdp=true",
        "--max_steps=50",
        "--activation_offload_layers=20",
    ], RECIPE
    assert workload["image"] == "nvcr.io/nvidia/nemo:26.02" == catalog.image("nemo-26.02").ref
    script = workload["command"][2]
    assert f"git -C /opt/Megatron-Bridge checkout {megatron_bridge.RECIPES['llama3-70b'][2]}" in script
    assert megatron_bridge.RECIPES["llama3-70b"][2].startswith("f7a9428")  # RECIPE launcher.sh `git checkout`


def test_the_pod_runs_as_the_a4x_chart(plan: Plan) -> None:
    """RECIPE values.yaml (gibVersion nccl-plugin-gib-arm64:v1.1.0, NCCL_DEBUG WARN,
    GLOO_SOCKET_IFNAME eth0) and templates/workload-job.yaml (the arm64 toleration, the
    ComputeDomain claim, NCCL_SOCKET_IFNAME eth0,eth1 and the A3 Ultra tuner after the init script,
    off the host network); the RDMA NICs claimed through DRANET as Toolkit's gke-a4x NCCL test claims
    them (c765092 nccl-jobset-example.yaml `rdma` claim), no multi-network interfaces."""
    template = job_pod_template(plan)
    spec = template["spec"]
    workload = spec["containers"][0]
    env = {e["name"]: e.get("value") for e in workload["env"]}
    assert "hostNetwork" not in spec and "privileged" not in workload["securityContext"]
    assert "networking.gke.io/interfaces" not in template["metadata"]["annotations"]
    assert (env["NCCL_DEBUG"], env["GLOO_SOCKET_IFNAME"]) == ("WARN", "eth0")
    # The preflight's containers follow (tests/test_preflight_gate.py).
    gpudirect = [c["image"] for c in spec["initContainers"] if not c["name"].startswith("preflight")]
    assert gpudirect == ["us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-arm64:v1.1.0"]
    assert {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"} in spec["tolerations"]
    script = workload["command"][2]
    source = script.index('source "${NCCL_INIT_SCRIPT}"')
    assert source < script.index("export NCCL_SOCKET_IFNAME=eth0,eth1")
    assert source < script.index("export NCCL_TUNER_CONFIG_PATH=/usr/local/gib/configs/tuner_config_a3u.txtpb")
    assert spec["resourceClaims"] == [
        {"name": "compute-domain-channel", "resourceClaimTemplateName": "llama3-70b-channel"},
        {"name": "rdma", "resourceClaimTemplateName": "llama3-70b-rdma"},
    ]
    assert workload["resources"] == {"limits": {"nvidia.com/gpu": 4}, "claims": [{"name": "compute-domain-channel"}, {"name": "rdma"}]}
    claim = plan_inputs(plan, "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    assert claim["spec"]["spec"]["devices"]["requests"] == [
        {"name": "req-mrdma", "exactly": {"deviceClassName": "mrdma.google.com", "allocationMode": "ExactCount", "count": 4}}
    ]


def test_the_compute_domain_is_the_jobs_16_nodes_in_an_18_node_domain(plan: Plan) -> None:
    domain = plan_inputs(plan, "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain")
    assert domain["spec"] == {"numNodes": 16, "channel": {"resourceClaimTemplate": {"name": "llama3-70b-channel"}}}
    pool = plan_inputs(plan, "gcp:container/nodePool:NodePool", "gpu-pool-a4x")
    assert pool["nodeCount"] == 18 == catalog.machine("a4x-highgpu-4g").nvlink_domain_nodes


def test_the_cluster_is_toolkits_gke_a4x(plan: Plan) -> None:
    """TOOLKIT gke-a4x.yaml: version_prefix 1.35., the four resource.k8s.io/v1beta1 APIs, the
    workload policy HIGH_THROUGHPUT 1x72, a specific reservation, hyperdisk-balanced, nvidia-gb200
    x 4; on DRANET since c765092 (PR #5835): `enable_dranet` (accelerator network profile auto,
    the driver's label, no additional networks: gke-node-pool main.tf) and Dataplane V2."""
    pool = plan_inputs(plan, "gcp:container/nodePool:NodePool", "gpu-pool-a4x")
    config = pool["nodeConfig"]
    assert (config["machineType"], config["diskType"]) == ("a4x-highgpu-4g", "hyperdisk-balanced")
    assert (config["guestAccelerators"][0]["type"], config["guestAccelerators"][0]["count"]) == ("nvidia-gb200", 4)
    assert config["reservationAffinity"]["consumeReservationType"] == "SPECIFIC_RESERVATION"
    assert config["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 32}
    policy = plan_inputs(plan, "gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "1x72"}
    assert pool["placementPolicy"] == {"type": "COMPACT", "policyName": policy["name"]}
    assert pool["networkConfig"] == {"acceleratorNetworkProfile": "auto"}
    assert config["labels"] == {"cloud.google.com/gke-networking-dra-driver": "true"}
    assert not [r for r in plan.resources if r["type"] == "gcp:compute/network:Network" and r["inputs"]["name"] != f"{STACK}-net"]
    cluster = plan_inputs(plan, "gcp:container/cluster:Cluster")
    assert cluster["datapathProvider"] == "ADVANCED_DATAPATH"
    assert cluster["enableK8sBetaApis"]["enabledApis"] == list(catalog.DRA_BETA_APIS)
    assert load_platform(STACK, raw_stack_config(STACK)).cluster.version_prefix == "1.35."


def test_on_multi_networking_the_pool_attaches_toolkits_vpcs_before_dranet() -> None:
    """`networking: multi-network` (A4X's default): gke-a4x-net-1 and the 4-subnet RoCE VPC, as Toolkit
    attached them before DRANET (d1236e228^), and pods join them (eth1 gvnic-1, eth2..eth5 rdma-0..3)."""
    raw = raw_config(STACK, trainstack_gpuPool={"networking": "multi-network"})
    multi = render(STACK, raw)
    pool = plan_inputs(multi, "gcp:container/nodePool:NodePool", "gpu-pool-a4x")
    networks = [n["subnetwork"] for n in pool["networkConfig"]["additionalNodeNetworkConfigs"]]
    assert networks == [f"{STACK}-gvnic-1-subnet", *(f"{STACK}-rdma-{i}-subnet" for i in range(4))]
    (rdma,) = [r["inputs"] for r in multi.resources if r["type"] == "gcp:compute/network:Network" and r["inputs"]["name"].endswith("-rdma-net")]
    assert rdma["networkProfile"].endswith("/networkProfiles/us-central1-b-vpc-roce") and rdma["mtu"] == 8896
    template = job_pod_template(multi)
    assert json.loads(template["metadata"]["annotations"]["networking.gke.io/interfaces"]) == [
        {"interfaceName": "eth0", "network": "default"},
        {"interfaceName": "eth1", "network": "gvnic-1"},
        *({"interfaceName": f"eth{i + 2}", "network": f"rdma-{i}"} for i in range(4)),
    ]
    assert [c["name"] for c in template["spec"]["resourceClaims"]] == ["compute-domain-channel"]


def test_queue_flavor_and_driver(plan: Plan) -> None:
    """TOOLKIT kueue-configuration.yaml.tftpl: queue a4x, flavor on nvidia-gb200 tolerating the
    arm64 taint; the DRA driver 25.3.0 from NGC's chart repository."""
    flavor = plan_inputs(plan, "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")
    assert flavor["spec"]["nodeLabels"]["cloud.google.com/gke-accelerator"] == "nvidia-gb200"
    assert plan_inputs(plan, "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")["metadata"]["name"] == "a4x"
    driver = plan_inputs(plan, "kubernetes:helm.sh/v3:Release", "nvidia-dra-driver")
    assert (driver["chart"], driver["version"]) == ("nvidia-dra-driver-gpu", "25.3.0")


def test_memory_fit_counts_the_offloaded_layers(plan: Plan) -> None:
    """80 layers' activations at sequence 8192 do not fit a GB200 without the recipe's 20
    offloaded ones; with them the estimate fits."""
    assert plan.memory is not None and plan.memory["fits"]
    raw = raw_config(STACK, trainstack_workload={"overrides": []})
    with pytest.raises(ConfigError, match=r"needs about .* per GPU"):
        render(STACK, raw)


def test_cost_says_a4x_is_not_priced(plan: Plan) -> None:
    cost = plan.cost.to_dict()
    assert cost["notPriced"] == ["a4x"] and cost["pools"]["a4x"]["usdPerNodeHour"] is None
    assert cost["gpus"] == 72 and cost["usdPerHourAtMax"] > 0  # the CPU pool and the cluster fee
    assert plan.critical_path.to_markdown()
