"""The five recipe stacks: each one's defining facts (machine, nodes, GPUs, GPUDirect stack,
queue, storage, image, steps), from its config and from its whole rendered plan."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from helpers import load_platform, of_type, render, workload_of
from trainstack.app.deploy.stack_file import PlatformStackFile
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan import engine
from trainstack.app.plan.engine import Rendered
from trainstack.app.plan.recorder import Registration
from trainstack.components.storage.filestore import FilestoreSpec
from trainstack.components.storage.nfs import NfsSpec


@dataclass(frozen=True)
class Recipe:
    seed: str
    machine: str
    gpudirect: str
    pool: int | tuple[int, int]  # fixed size, or autoscaling (min, max)
    nodes: int
    gpus: int
    queue: str
    storage: str
    image: str  # a build context, or a prebuilt reference
    framework: str
    model: str
    steps: int
    precision: str
    controller: str = "jobset"


RECIPES = {
    "a3ultra-405b": Recipe(
        "000",
        "a3-ultragpu-8g",
        "rdma",
        54,
        54,
        432,
        "a3-ultra",
        "gcs",
        "us-central1-docker.pkg.dev/deeplearning-images/reproducibility/pytorch-gpu-goodput:nemo24.12.01-A3Mega-20250605",
        "nemo2",
        "llama3.1-405b",
        500,
        "bf16",
    ),
    "a3high-nemo-gpt5b": Recipe(
        "001",
        "a3-highgpu-8g",
        "tcpx",
        4,
        2,
        16,
        "a3-queue",
        "filestore",
        "images/nemofw-23.05",
        "nemo-megatron",
        "gpt3-5b",
        100,
        "bf16",
    ),
    "a3mega-gpt3-175b": Recipe(
        "002",
        "a3-megagpu-8g",
        "tcpxo",
        32,
        32,
        256,
        "a3-mega",
        "gcs",
        "images/nemo-24.07",
        "nemo-megatron",
        "gpt3-175b",
        50,
        "fp8",
        controller="job",
    ),
    "a3high-litgpt": Recipe(
        "003",
        "a3-highgpu-8g",
        "tcpx",
        8,
        8,
        64,
        "a3-queue",
        "gcs",
        "images/litgpt",
        "litgpt",
        "pythia-6.9b",
        30,
        "bf16",
    ),
    "a2-gpt2-deepspeed": Recipe(
        "004",
        "a2-highgpu-8g",
        "none",
        (0, 2),
        2,
        16,
        "gpu-queue",
        "nfs",
        "images/mistral",
        "deepspeed",
        "gpt2-micro",
        400000,
        "fp16",
    ),
}
STACKS = list(RECIPES)


# --- from the config ------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_config_states_the_recipe(stack: str) -> None:
    recipe, config = RECIPES[stack], load_stack(stack)
    pool, workload = config.gpu_pool, workload_of(config)
    assert pool.machine_type == recipe.machine
    assert pool.machine.gpudirect.value == recipe.gpudirect
    size = pool.node_count if pool.autoscaling is None else (pool.autoscaling.min_nodes, pool.autoscaling.max_nodes)
    assert size == recipe.pool
    assert workload.nodes == recipe.nodes
    assert workload.nodes * pool.machine.gpus_per_node == recipe.gpus
    assert config.local_queue == recipe.queue
    assert config.storage.kind == recipe.storage
    assert (config.image.build.context if config.image.build else config.image.prebuilt) == recipe.image
    assert (workload.framework, workload.model, workload.steps, workload.precision) == (recipe.framework, recipe.model, recipe.steps, recipe.precision)
    assert workload.controller == recipe.controller


def test_000_checkpoints_every_20_steps_under_the_supervisor() -> None:
    workload = workload_of(load_stack("a3ultra-405b"))
    assert workload.checkpoint_interval == 20
    assert workload.resiliency.enabled and workload.nodes_per_data_parallel_replica == 18
    assert workload.max_restarts == 20


def test_001_serves_tensorboard_from_a_one_tib_filestore_share() -> None:
    config = load_stack("a3high-nemo-gpt5b")
    assert workload_of(config).tensorboard
    share = config.storage.spec
    assert isinstance(share, FilestoreSpec) and (share.tier, share.capacity_gib) == ("ENTERPRISE", 1024)
    assert config.gpu_pool.gpu_driver == "daemonset"


def test_002_builds_nemo_24_07_on_e2_highcpu_32_and_can_profile_steps_41_to_43() -> None:
    config = load_stack("a3mega-gpt3-175b")
    build = config.image.build
    assert build is not None and (build.tag, build.machine_type, build.timeout) == ("24.07", "e2-highcpu-32", "2h")
    profiling = workload_of(config).profiling
    assert (profiling.enabled, profiling.start_step, profiling.end_step) == (False, 41, 43)
    assert (parallelism := workload_of(config).parallelism) is not None and parallelism.model_parallel_size == 32


def test_004_scales_its_a100_pool_from_zero_onto_nfs() -> None:
    config = load_stack("a2-gpt2-deepspeed")
    assert config.gpu_pool.gpu_driver == "daemonset"
    disk = config.storage.spec
    assert isinstance(disk, NfsSpec) and (disk.disk_type, disk.disk_size_gb) == ("pd-ssd", 1000)
    assert workload_of(config).topology is None  # TAS cannot place pods on a pool with no nodes yet


@pytest.mark.parametrize(
    ("stack", "protected"),
    [("a3ultra-405b", True), ("a2-gpt2-deepspeed", True), ("a3high-nemo-gpt5b", False), ("a3mega-gpt3-175b", False), ("a3high-litgpt", False)],
)
def test_only_long_lived_clusters_are_deletion_protected(stack: str, protected: bool) -> None:
    assert load_stack(stack).cluster.deletion_protection is protected


# --- from the rendered plan -----------------------------------------------------------------------


@cache
def plan(stack: str) -> Rendered:
    return render(stack)


def gpu_pool(rendered: Rendered, machine: str) -> dict[str, Any]:
    (pool,) = [r.inputs for r in of_type(rendered, "gcp:container/nodePool:NodePool") if r.inputs["nodeConfig"]["machineType"] == machine]
    return pool


def workload_object(rendered: Rendered) -> Registration:
    (job,) = of_type(rendered, "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet") + of_type(rendered, "kubernetes:batch/v1:Job")
    return job


def pod_template(job: Registration) -> dict[str, Any]:
    spec = job.inputs["spec"]
    return spec["replicatedJobs"][0]["template"]["spec"]["template"] if "replicatedJobs" in spec else spec["template"]


@pytest.mark.parametrize("stack", STACKS)
def test_plan_has_the_recipes_gpu_pool(stack: str) -> None:
    recipe = RECIPES[stack]
    pool = gpu_pool(plan(stack), recipe.machine)
    if isinstance(recipe.pool, tuple):
        assert (pool["autoscaling"]["totalMinNodeCount"], pool["autoscaling"]["totalMaxNodeCount"]) == recipe.pool
    else:
        assert pool["nodeCount"] == recipe.pool


@pytest.mark.parametrize("stack", STACKS)
def test_plan_submits_the_job_to_the_recipes_queue_with_every_gpu(stack: str) -> None:
    recipe = RECIPES[stack]
    job = workload_object(plan(stack))
    assert job.inputs["kind"] == ("JobSet" if recipe.controller == "jobset" else "Job")
    assert job.inputs["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == recipe.queue
    spec = job.inputs["spec"]
    indexed = spec["replicatedJobs"][0]["template"]["spec"] if "replicatedJobs" in spec else spec
    assert indexed["parallelism"] == indexed["completions"] == recipe.nodes
    (container,) = pod_template(job)["spec"]["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] * recipe.nodes == recipe.gpus
    localqueues = [r.inputs["metadata"]["name"] for r in of_type(plan(stack), "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")]
    assert recipe.queue in localqueues


@pytest.mark.parametrize("stack", STACKS)
def test_plan_wires_the_recipes_gpudirect_stack(stack: str) -> None:
    recipe = RECIPES[stack]
    pod = pod_template(workload_object(plan(stack)))
    sidecars = {c["name"] for c in pod["spec"].get("initContainers", []) if c.get("restartPolicy") == "Always"}
    expected = {"tcpx": {"tcpd-daemon"}, "tcpxo": {"tcpxo-daemon"}, "rdma": set(), "none": set()}[recipe.gpudirect]
    assert sidecars == expected
    annotations = pod["metadata"]["annotations"]
    networks = json.loads(annotations.get("networking.gke.io/interfaces", "[]"))
    assert len(networks) == {"tcpx": 5, "tcpxo": 9, "rdma": 0, "none": 0}[recipe.gpudirect]  # rdma: host network
    assert pod["spec"].get("hostNetwork", False) == (recipe.gpudirect == "rdma")


@pytest.mark.parametrize("stack", STACKS)
def test_plan_creates_the_recipes_storage(stack: str) -> None:
    recipe, rendered = RECIPES[stack], plan(stack)
    buckets = of_type(rendered, "gcp:storage/bucket:Bucket")
    filestores = of_type(rendered, "gcp:filestore/instance:Instance")
    disks = [d for d in of_type(rendered, "gcp:compute/disk:Disk") if d.inputs.get("type") == "pd-ssd"]
    if recipe.storage == "gcs":
        assert any(b.inputs.get("hierarchicalNamespace", {}).get("enabled") for b in buckets)
    elif recipe.storage == "filestore":
        (instance,) = filestores
        assert instance.inputs["tier"] == "ENTERPRISE"
        assert instance.inputs["fileShares"]["capacityGb"] == 1024
    else:
        assert [d.inputs["size"] for d in disks] == [1000]


@pytest.mark.parametrize("stack", STACKS)
def test_plan_runs_the_recipes_steps(stack: str) -> None:
    recipe, rendered = RECIPES[stack], plan(stack)
    files = "\n".join(value for r in of_type(rendered, "kubernetes:core/v1:ConfigMap") for value in (r.inputs.get("data") or {}).values())
    args = " ".join(pod_template(workload_object(rendered))["spec"]["containers"][0]["args"])
    env = {e["name"]: e["value"] for e in pod_template(workload_object(rendered))["spec"]["containers"][0]["env"]}
    assert (
        f"max_steps = {recipe.steps}" in files
        or f"max_steps: {recipe.steps}" in files
        or f"--training_arguments.max_steps {recipe.steps}" in args
        or f"--max-steps={recipe.steps}" in args
        or env.get("MAX_ITERS") == str(recipe.steps)
    )


@pytest.mark.parametrize("stack", STACKS)
def test_plan_exports_how_to_watch_the_job(stack: str) -> None:
    outputs = plan(stack).outputs
    name = workload_of(load_stack(stack)).name
    kind = "jobset" if RECIPES[stack].controller == "jobset" else "job"
    assert outputs["jobName"] == name
    assert outputs["watchJob"].startswith(f"kubectl get {kind} {name} -n ")


def test_plan_of_001_exports_tensorboard_access() -> None:
    assert plan("a3high-nemo-gpt5b").outputs["tensorboard"].startswith("kubectl port-forward svc/nemo-gpt5b-tensorboard 6006:6006 -n ")


def test_plan_of_000_runs_the_supervisor_on_the_cpu_pool() -> None:
    rendered = plan("a3ultra-405b")
    deployments = [r.inputs for r in of_type(rendered, "kubernetes:apps/v1:Deployment") if "supervisor" in r.inputs["metadata"]["name"]]
    assert len(deployments) == 3
    pools = {d["spec"]["template"]["spec"]["nodeSelector"]["cloud.google.com/gke-nodepool"] for d in deployments}
    cpu_pools = {p.inputs["name"] for p in of_type(rendered, "gcp:container/nodePool:NodePool") if not p.inputs["nodeConfig"]["machineType"].startswith("a3-")}
    assert pools == {"supervisor-cpu-pool"} and pools <= cpu_pools


def load_stack(stack: str) -> PlatformStackFile:
    """A platform stack file's validated config."""
    engine.load_stack(stack)  # every rule, the launchers' included
    return load_platform(stack, raw_stack_config(stack))
