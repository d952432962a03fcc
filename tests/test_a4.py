"""A4 (a4-highgpu-8g, 8 x B200) and its recipe stack `a4-llama3-70b`, fact by fact from sources.

Sources: AI-Hypercomputer/gpu-recipes e515bfc training/a4/llama3_70b/nemo-gke/nemo2507/
64gpus-bf16-gbs256/recipe (RECIPE); GoogleCloudPlatform/cluster-toolkit 1047080 examples/gke-a4 and
modules/compute/gke-node-pool/disk_definitions.tf (TOOLKIT); the billing-catalog snapshot
catalog.SNAPSHOT_PRICES_SOURCE (vCPUs, memory, price, zone).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from helpers import job_pod_template, plan_inputs, present, raw_config
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan.plan import Plan, render
from trainstack.core import catalog

STACK = "a4-llama3-70b"
RECIPE = "gpu-recipes@e515bfc training/a4/llama3_70b/nemo-gke/nemo2507/64gpus-bf16-gbs256/recipe"
TOOLKIT = "cluster-toolkit@1047080 examples/gke-a4"
A4 = catalog.machine("a4-highgpu-8g")


@pytest.fixture(scope="module")
def plan() -> Plan:
    return render(STACK, raw_stack_config(STACK))


@pytest.mark.parametrize(
    ("fact", "value", "source"),
    [
        ("accelerator", "nvidia-b200", f"{TOOLKIT}/gke-a4.yaml vars.accelerator_type"),
        ("gpus_per_node", 8, f"{TOOLKIT}/gke-a4.yaml guest_accelerator count"),
        ("local_ssds", 32, "cluster-toolkit@1047080 modules/compute/gke-node-pool/disk_definitions.tf"),
        ("gvnic_networks", 1, f"{TOOLKIT}/gke-a4.yaml gke-a4-net-1"),
        ("rdma_subnets", 8, f"{TOOLKIT}/gke-a4.yaml gke-a4-rdma-net subnetworks_template.count"),
        ("mtu", 8896, "cluster-toolkit@1047080 modules/network/gpu-rdma-vpc variables.tf mtu"),
        ("default_queue", "a4", f"{TOOLKIT}/kueue-configuration.yaml.tftpl"),
        ("vcpus", 224, catalog.SNAPSHOT_PRICES_SOURCE),
        ("memory_gb", 3968, catalog.SNAPSHOT_PRICES_SOURCE),
        ("hourly_usd", 90.22, catalog.SNAPSHOT_PRICES_SOURCE),
        ("spot_hourly_usd", 37.75, catalog.SNAPSHOT_PRICES_SOURCE),
        ("gpudirect", catalog.GpuDirect.RDMA, f"{RECIPE}/values.yaml gibVersion"),
        ("nccl_tuner_config", "tuner_config_a4.txtpb", f"{RECIPE}/templates/workload-job.yaml"),
        ("nccl_socket_interfaces", ("eth0", "eth1"), f"{RECIPE}/templates/workload-job.yaml"),
        ("compact_with_flex_start", True, "cluster-toolkit gke-node-pool precondition ^(a3-ultragpu-|a4-|h4d-)"),
        ("topology_labels", True, f"{TOOLKIT}/kueue-configuration.yaml.tftpl Topology levels"),
    ],
)
def test_a4_record_fact(fact: str, value: Any, source: str) -> None:
    assert getattr(A4, fact) == value, source


def test_b200_memory_and_peaks() -> None:
    """nvidia-smi on a4-highgpu-8g: 183359 MiB; NVIDIA HGX B200 datasheet halved for density."""
    b200 = catalog.GPUS["b200"]
    assert (b200.memory_mib, b200.peak("bf16"), b200.peak("fp8")) == (183359, 2250.0, 4500.0)


def test_the_a4_gib_release_is_its_own_and_a3_ultra_keeps_its_own() -> None:
    assert present(A4.gpudirect_images).nccl_plugin.ref == f"{catalog.GIB_REPOSITORY}:v1.1.0"  # RECIPE values.yaml, TOOLKIT gib version
    assert present(catalog.machine("a3-ultragpu-8g").gpudirect_images).nccl_plugin.ref == f"{catalog.GIB_REPOSITORY}:v1.0.5"


def test_node_pool_is_the_toolkits_a4_pool(plan: Plan) -> None:
    pool = plan_inputs(plan, "gcp:container/nodePool:NodePool", "gpu-pool-a4")
    config = pool["nodeConfig"]
    assert config["machineType"] == "a4-highgpu-8g" and pool["nodeCount"] == 8
    assert config["guestAccelerators"][0]["type"] == "nvidia-b200" and config["guestAccelerators"][0]["count"] == 8
    assert config["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 32}
    assert config["diskType"] == "hyperdisk-balanced"
    assert config["reservationAffinity"]["consumeReservationType"] == "SPECIFIC_RESERVATION"
    networks = [n["subnetwork"] for n in pool["networkConfig"]["additionalNodeNetworkConfigs"]]
    assert networks == [f"{STACK}-gvnic-1-subnet", *(f"{STACK}-rdma-{i}-subnet" for i in range(8))]


def test_rdma_vpc_takes_the_zones_roce_profile(plan: Plan) -> None:
    (rdma,) = [r["inputs"] for r in plan.resources if r["type"] == "gcp:compute/network:Network" and r["inputs"]["name"].endswith("-rdma-net")]
    assert rdma["networkProfile"].endswith("/networkProfiles/us-central1-b-vpc-roce") and rdma["mtu"] == 8896


def test_launch_is_the_recipes_split(plan: Plan) -> None:
    """RECIPE llama3-1-70b-bf16-seq8192-gbs256-gpus64.py and launcher.sh (trainer.max_steps=30,
    8 nodes x 8 GPUs)."""
    (config_map,) = [r["inputs"] for r in plan.resources if r["type"] == "kubernetes:core/v1:ConfigMap" and "train.py" in r["inputs"]["data"]]
    script = config_map["data"]["train.py"]
    for line in (
        "llm.llama31_70b.pretrain_recipe(",
        "recipe.trainer.max_steps = 30",
        "recipe.data.global_batch_size = 256",
        "recipe.data.micro_batch_size = 2",
        "recipe.data.seq_length = 8192",
        "recipe.trainer.strategy.tensor_model_parallel_size = 2",
        "recipe.trainer.strategy.pipeline_model_parallel_size = 4",
        "recipe.trainer.strategy.virtual_pipeline_model_parallel_size = 5",
        "recipe.trainer.strategy.context_parallel_size = 2",
    ):
        assert line in script, RECIPE
    assert "recipe.trainer.plugins = " not in script  # bf16: the recipe's own bf16_mixed plugin
    workload = job_pod_template(plan)["spec"]["containers"][0]
    assert workload["image"] == "nvcr.io/nvidia/nemo:25.07"
    assert workload["args"][:3] == ["torchrun", "--nproc-per-node=8", "--nnodes=8"]
    # RECIPE launcher.sh runs torchrun under OMP_NUM_THREADS=12 TORCH_NCCL_ENABLE_MONITORING=0.
    env = {e["name"]: e.get("value") for e in workload["env"]}
    assert (env["OMP_NUM_THREADS"], env["TORCH_NCCL_ENABLE_MONITORING"]) == ("12", "0")


def test_pod_runs_as_the_a4_chart_off_the_host_network(plan: Plan) -> None:
    """RECIPE values.yaml (NCCL_DEBUG WARN, GLOO_SOCKET_IFNAME eth0) and templates/workload-job.yaml
    with `hostNetwork: false` (no supervisor needs the node's network): the NICs through
    multi-networking, unprivileged; gIB v1.1.0 installed by an init container, set_nccl_env.sh
    sourced, then NCCL_SOCKET_IFNAME and the A4 tuner exported over it."""
    template = job_pod_template(plan)
    spec = template["spec"]
    workload = spec["containers"][0]
    env = {e["name"]: e.get("value") for e in workload["env"]}
    assert "hostNetwork" not in spec and not workload["securityContext"].get("privileged")
    networks = [i["network"] for i in json.loads(template["metadata"]["annotations"]["networking.gke.io/interfaces"])]
    assert networks == ["default", "gvnic-1", *(f"rdma-{i}" for i in range(8))]
    gke_networks = {r["inputs"]["metadata"]["name"] for r in plan.resources if r["type"] == "kubernetes:networking.gke.io/v1:Network"}
    assert set(networks[1:]) <= gke_networks
    assert (env["NCCL_DEBUG"], env["GLOO_SOCKET_IFNAME"], env["NCCL_INIT_SCRIPT"]) == ("WARN", "eth0", "/usr/local/gib/scripts/set_nccl_env.sh")
    assert [c["image"] for c in spec["initContainers"] if c["name"] == "nccl-plugin-installer"] == [f"{catalog.GIB_REPOSITORY}:v1.1.0"]
    script = workload["command"][2]
    source = script.index('source "${NCCL_INIT_SCRIPT}"')
    assert source < script.index("export NCCL_SOCKET_IFNAME=eth0,eth1") and source < script.index(
        "export NCCL_TUNER_CONFIG_PATH=/usr/local/gib/configs/tuner_config_a4.txtpb"
    )
    assert "NCCL_SOCKET_IFNAME" not in env


def test_the_stacks_own_setting_is_not_exported_over() -> None:
    raw = raw_config(STACK, trainstack_workload={"env": {"NCCL_SOCKET_IFNAME": "eth0"}})
    workload = job_pod_template(render(STACK, raw))["spec"]["containers"][0]
    assert "export NCCL_SOCKET_IFNAME" not in workload["command"][2]
    assert {e["name"]: e.get("value") for e in workload["env"]}["NCCL_SOCKET_IFNAME"] == "eth0"


def test_storage_is_a_retained_lustre_instance_in_the_pools_zone(plan: Plan) -> None:
    (lustre,) = [r for r in plan.resources if r["type"] == "gcp:lustre/instance:Instance"]
    assert lustre["options"].get("retainOnDelete") is True
    assert (lustre["inputs"]["capacityGib"], lustre["inputs"]["perUnitStorageThroughput"], lustre["inputs"]["location"]) == ("36000", "500", "us-central1-b")


def test_reports_cost_memory_and_queue(plan: Plan) -> None:
    cost = plan.cost.to_dict()
    assert cost["pools"]["a4"]["usdPerNodeHour"] == 90.22 and cost["pools"]["a4"]["priceSource"] == catalog.SNAPSHOT_PRICES_SOURCE
    assert cost["gpus"] == 64
    assert plan.memory is not None and plan.memory["gpu_memory"] == round(183359 * 2**20 / 1e9, 2)
    flavor = plan_inputs(plan, "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")
    assert flavor["spec"]["nodeLabels"]["cloud.google.com/gke-accelerator"] == "nvidia-b200"
    assert plan.critical_path.to_markdown()
