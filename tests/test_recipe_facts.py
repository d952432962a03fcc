"""Recipe facts tables: each fact an upstream recipe fixes, with its source (repository, commit,
path), asserted against the rendered plan. A deliberate departure is listed in the stack file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan.plan import Plan, render

RECIPES = "AI-Hypercomputer/gpu-recipes"
A3MEGA_VALUES = f"{RECIPES}@916aa8e training/a3mega/GPT3-175B/nemo-pretraining-gke/values.yaml"
A3MEGA_CONFIG = f"{RECIPES}@916aa8e src/frameworks/nemo-configs/gpt3-175b-256gpus-fp8.yaml"


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    return {stack: render(stack, raw_stack_config(stack)) for stack in ("a3mega-gpt3-175b", "a3ultra-405b")}


def one(plan: Plan, type_token: str) -> dict[str, Any]:
    (found,) = [r["inputs"] for r in plan.resources if r["type"] == type_token]
    return found


def container(plan: Plan, kind: str) -> dict[str, Any]:
    obj = one(plan, kind)
    spec = obj["spec"]
    template = spec["replicatedJobs"][0]["template"]["spec"]["template"] if "replicatedJobs" in spec else spec["template"]
    return template


# --- recipe 002: GPT-3 175B on A3 Mega ----------------------------------------------------------

A3MEGA_ENV = [
    ("NCCL_DEBUG", "VERSION", A3MEGA_VALUES),
    ("NCCL_ALGO", "Ring,Tree", A3MEGA_VALUES),
    ("NCCL_MIN_NCHANNELS", "4", A3MEGA_VALUES),
    ("OMP_NUM_THREADS", "12", A3MEGA_VALUES),
]

A3MEGA_MODEL = [
    ("optim.name", "distributed_fused_adam", A3MEGA_CONFIG),
    ("optim.bucket_cap_mb", 220, A3MEGA_CONFIG),
    ("optim.overlap_grad_sync", True, A3MEGA_CONFIG),
    ("optim.overlap_param_sync", True, A3MEGA_CONFIG),
    ("optim.grad_sync_dtype", "bf16", A3MEGA_CONFIG),
    ("megatron_amp_O2", True, A3MEGA_CONFIG),
    ("tensor_model_parallel_size", 4, A3MEGA_CONFIG),
    ("pipeline_model_parallel_size", 8, A3MEGA_CONFIG),
    ("sequence_parallel", True, A3MEGA_CONFIG),
    ("fp8", True, A3MEGA_CONFIG),
    ("global_batch_size", 2048, A3MEGA_CONFIG),
    ("micro_batch_size", 1, A3MEGA_CONFIG),
]

A3MEGA_OVERRIDES = [
    ("++model.overlap_p2p_comm=true", A3MEGA_CONFIG),
    ("++model.batch_p2p_comm=false", A3MEGA_CONFIG),
    ("model.optim.lr=9.0e-05", A3MEGA_CONFIG),
    ("model.optim.betas=[0.9,0.95]", A3MEGA_CONFIG),
    ("model.optim.weight_decay=0.1", A3MEGA_CONFIG),
    ("model.optim.sched.warmup_steps=115", A3MEGA_CONFIG),
    ("++model.optim.sched.constant_steps=12500", A3MEGA_CONFIG),
    ("model.optim.sched.min_lr=9.0e-06", A3MEGA_CONFIG),
    ("++exp_manager.step_timing_kwargs.sync_cuda=true", A3MEGA_CONFIG),
    ("++exp_manager.step_timing_kwargs.buffer_size=5", A3MEGA_CONFIG),
    ("++model.gradient_accumulation_fusion=true", A3MEGA_CONFIG),
    ("++model.apply_query_key_layer_scaling=true", A3MEGA_CONFIG),
    ("trainer.val_check_interval=100", A3MEGA_CONFIG),
    ("++trainer.limit_val_batches=20", A3MEGA_CONFIG),
]


@pytest.mark.parametrize(("name", "value", "source"), A3MEGA_ENV, ids=[f[0] for f in A3MEGA_ENV])
def test_a3mega_env_is_the_recipes(plans: dict[str, Plan], name: str, value: str, source: str) -> None:
    env = {e["name"]: e.get("value") for e in container(plans["a3mega-gpt3-175b"], "kubernetes:batch/v1:Job")["spec"]["containers"][0]["env"]}
    assert env[name] == value, source


def _nemo_config(plan: Plan) -> dict[str, Any]:
    config_maps = [
        r["inputs"] for r in plan.resources if r["type"] == "kubernetes:core/v1:ConfigMap" and r["inputs"]["metadata"]["name"].endswith("nemo-config")
    ]
    (data,) = [cm["data"] for cm in config_maps]
    return yaml.safe_load(next(iter(data.values())))


def _nemo_model(plan: Plan) -> dict[str, Any]:
    return _nemo_config(plan)["model"]


@pytest.mark.parametrize(("key", "value", "source"), A3MEGA_MODEL, ids=[f[0] for f in A3MEGA_MODEL])
def test_a3mega_model_config_is_the_recipes(plans: dict[str, Plan], key: str, value: Any, source: str) -> None:
    node: Any = _nemo_model(plans["a3mega-gpt3-175b"])
    for part in key.split("."):
        node = node[part]
    assert node == value, source


@pytest.mark.parametrize(("override", "source"), A3MEGA_OVERRIDES, ids=[f[0] for f in A3MEGA_OVERRIDES])
def test_a3mega_launch_carries_the_recipes_overrides(plans: dict[str, Plan], override: str, source: str) -> None:
    args = container(plans["a3mega-gpt3-175b"], "kubernetes:batch/v1:Job")["spec"]["containers"][0]["args"]
    assert override in args, source


def test_a3mega_gpudirect_versions_are_a_listed_departure(plans: dict[str, Plan]) -> None:
    """The recipe pins TCPXO plugin v1.0.3 / RxDM v1.0.9 (values.yaml network.pluginVersion /
    daemonVersion) for GKE 1.28-1.30; trainstack pins Cluster Toolkit's current pair (1047080
    examples/gke-a3-megagpu) for the GKE 1.32+ its channels give, and the stack file says so."""
    pod = container(plans["a3mega-gpt3-175b"], "kubernetes:batch/v1:Job")["spec"]
    images = {c["image"].split("@")[0] for c in pod["initContainers"]}  # the tags; the digests beside them
    assert "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15" in images
    assert "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21" in images
    stack_file = (Path(__file__).resolve().parent.parent / "stacks" / "Pulumi.a3mega-gpt3-175b.yaml").read_text()
    assert "TCPXO plugin v1.0.15 / RxDM v1.0.21" in stack_file and "v1.0.3 / v1.0.9" in stack_file


# --- recipe 000: Llama 3.1 405B with the resiliency supervisor on A3 Ultra -----------------------

A3ULTRA = f"{RECIPES}@27b47e7 training/a3ultra/llama3-1-405b/nemo-pretraining-gke-resiliency/values.yaml"
A3ULTRA_LAUNCHER = f"{RECIPES} src/launchers/grl-nemo-20-launcher-a3u.sh (per the recipe audit)"
A3ULTRA_ENV = [
    ("NCCL_DEBUG", "VERSION", A3ULTRA),
    ("NCCL_WORK_FIFO_DEPTH", "4194304", A3ULTRA),
    ("GLOO_SOCKET_IFNAME", "eth0", A3ULTRA),
    ("NVTE_FWD_LAYERNORM_SM_MARGIN", "8", A3ULTRA),
    ("NVTE_BWD_LAYERNORM_SM_MARGIN", "8", A3ULTRA),
    ("HOST_DAEMON_PORT", "60010", A3ULTRA),  # how the era's launcher finds its host monitor
]
A3ULTRA_FLAGS = [
    "--max-runtime=86400",
    "--max-steps=500",
    "--checkpoint-interval=20",
    "--topk-ckpt=-1",
    "--ckpt-threads-per-rank=1",
    "--enable-dist-ckpt",
    "--enable-gc",
    "--enable-async-ckpt",
    "--enable-fault-tolerance",
    "--enable-optimized-async-ckpt",
    "--tokenizer-path=tokenizer.model",
    "--job-name=$(JOB_IDENTIFIER)",
    "--ft-param-initial_rank_heartbeat_timeout=1800",
    "--ft-param-rank_heartbeat_timeout=1800",
    "--use-supervisor",
    "--max-restarts=0",
]
# What the image's resiliency launcher (AI-Hypercomputer/resiliency 02c17b7, the era of the
# `...-A3Mega-20250605` image) parses with argparse's parse_args: anything else exits with
# "unrecognized arguments" before training starts.
ERA_LAUNCHER_FLAGS = {
    "--use-supervisor",
    "--ft-param-initial_rank_heartbeat_timeout",
    "--ft-param-rank_heartbeat_timeout",
    "--nproc-per-node",
    "--nnodes",
    "--node_rank",
    "--rdzv_id",
    "--master_addr",
    "--master_port",
    "--max-restarts",
}


def a3ultra_pod(plans: dict[str, Plan]) -> dict[str, Any]:
    return container(plans["a3ultra-405b"], "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet")


@pytest.mark.parametrize(("name", "value", "source"), A3ULTRA_ENV, ids=[f[0] for f in A3ULTRA_ENV])
def test_a3ultra_env_is_the_recipes(plans: dict[str, Plan], name: str, value: str, source: str) -> None:
    env = {e["name"]: e.get("value") for e in a3ultra_pod(plans)["spec"]["containers"][0]["env"]}
    assert env[name] == value, source


def test_a3ultra_tuner_is_exported_after_the_gib_script(plans: dict[str, Plan]) -> None:
    """The launcher exports gIB's A3 Ultra tuner after sourcing set_nccl_env.sh, so the script
    cannot set another; the container env does not carry it."""
    workload = a3ultra_pod(plans)["spec"]["containers"][0]
    script = workload["command"][2]
    export = "export NCCL_TUNER_CONFIG_PATH=/usr/local/gib/configs/tuner_config_a3u.txtpb"
    assert script.index('source "${NCCL_INIT_SCRIPT}"') < script.index(export), A3ULTRA_LAUNCHER
    assert "NCCL_TUNER_CONFIG_PATH" not in {e["name"] for e in workload["env"]}


@pytest.mark.parametrize("flag", A3ULTRA_FLAGS)
def test_a3ultra_launch_passes_the_recipes_flags(plans: dict[str, Plan], flag: str) -> None:
    assert flag in a3ultra_pod(plans)["spec"]["containers"][0]["args"], A3ULTRA


def test_a3ultra_pod_runs_as_the_recipe_does(plans: dict[str, Plan]) -> None:
    pod = a3ultra_pod(plans)
    spec, workload = pod["spec"], pod["spec"]["containers"][0]
    assert (spec["hostNetwork"], spec["dnsPolicy"]) == (True, "ClusterFirstWithHostNet"), A3ULTRA  # network.hostNetwork
    assert workload["securityContext"] == {"privileged": True}, A3ULTRA
    assert "networking.gke.io/interfaces" not in pod["metadata"]["annotations"]
    assert workload["image"] == "us-central1-docker.pkg.dev/deeplearning-images/reproducibility/pytorch-gpu-goodput:nemo24.12.01-A3Mega-20250605", A3ULTRA
    assert workload["imagePullPolicy"] == "Always"
    gib = {c["image"] for c in spec["initContainers"]}
    assert gib == {"us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.0.5"}, A3ULTRA  # network.gibVersion
    assert pod["metadata"]["annotations"]["kueue.x-k8s.io/podset-preferred-topology"] == "kubernetes.io/hostname", A3ULTRA
    assert not any(a.startswith("--global-batch-size") for a in workload["args"])  # no GBS: 1 x 432 GPUs


def test_a3ultra_launcher_gets_only_flags_its_era_parses(plans: dict[str, Plan]) -> None:
    args = a3ultra_pod(plans)["spec"]["containers"][0]["args"]
    script = args.index("/workload/configs/train.py")
    assert args[:3] == ["python3", "resiliency/launcher.py", "--use-supervisor"]
    assert {a.split("=")[0] for a in args[2:script]} == ERA_LAUNCHER_FLAGS, f"{RECIPES}@5014bf9 src/launchers/grl-nemo-20-launcher-a3u.sh"


def test_a3ultra_host_monitor_is_on_the_host_network_as_its_era_runs_it(plans: dict[str, Plan]) -> None:
    (monitor,) = [r["inputs"] for r in plans["a3ultra-405b"].resources if r["type"] == "kubernetes:apps/v1:DaemonSet"]
    pod = monitor["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True
    # gpu-recipes 5014bf9 supervisor chart: the host daemon takes no arguments (it reads its ConfigMap).
    assert pod["containers"][0]["command"] == ["python3", "resiliency/supervisor/host_daemon.py"]
    assert pod["containers"][0]["ports"][0]["hostPort"] == 60010


# --- recipes 001 (NeMo GPT-5B) and 003 (LitGPT) on A3 High -------------------------------------

MEGATRON_DEMO = "GoogleCloudPlatform/ai-infra-cluster-provisioning@ca1fbce sample_workloads/megatron-demo"
LITGPT_DEMO = "GoogleCloudPlatform/ai-infra-cluster-provisioning@26e3b34 sample_workloads/lit-gpt-demo"
A3HIGH_ENV = [
    ("a3high-nemo-gpt5b", "NCCL_MIN_NCHANNELS", "8", MEGATRON_DEMO),
    ("a3high-nemo-gpt5b", "NCCL_MAX_NCHANNELS", "8", MEGATRON_DEMO),
    ("a3high-nemo-gpt5b", "NCCL_GPUDIRECTTCPX_TX_COMPLETION_NANOSLEEP", "1000", MEGATRON_DEMO),
    ("a3high-nemo-gpt5b", "NCCL_GPUDIRECTTCPX_FORCE_ACK", "0", MEGATRON_DEMO),
    ("a3high-nemo-gpt5b", "NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS", "1000000", MEGATRON_DEMO),
    ("a3high-litgpt", "NCCL_MIN_NCHANNELS", "8", LITGPT_DEMO),
    ("a3high-litgpt", "NCCL_MAX_NCHANNELS", "8", LITGPT_DEMO),
    ("a3high-litgpt", "NCCL_GPUDIRECTTCPX_TX_COMPLETION_NANOSLEEP", "1000", LITGPT_DEMO),
    ("a3high-litgpt", "NCCL_GPUDIRECTTCPX_FORCE_ACK", "1", LITGPT_DEMO),
    ("a3high-litgpt", "NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS", "1000000", LITGPT_DEMO),
    ("a3high-litgpt", "OMP_NUM_THREADS", "12", LITGPT_DEMO),
]


@pytest.fixture(scope="module")
def a3high() -> dict[str, Plan]:
    return {stack: render(stack, raw_stack_config(stack)) for stack in ("a3high-nemo-gpt5b", "a3high-litgpt")}


@pytest.mark.parametrize(("stack", "name", "value", "source"), A3HIGH_ENV, ids=[f"{f[0]}-{f[1]}" for f in A3HIGH_ENV])
def test_a3high_env_is_the_recipes(a3high: dict[str, Plan], stack: str, name: str, value: str, source: str) -> None:
    pod = container(a3high[stack], "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet")
    env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
    assert env[name] == value, source


def test_gpt5b_holds_its_model_as_the_recipes_config_does(a3high: dict[str, Plan]) -> None:
    model = _nemo_model(a3high["a3high-nemo-gpt5b"])
    assert model["megatron_amp_O2"] is True and model["optim"]["name"] == "distributed_fused_adam", MEGATRON_DEMO
    assert model["activations_checkpoint_granularity"] == "selective", MEGATRON_DEMO


def _hydra_value(text: str) -> Any:
    """A Hydra override's value as YAML reads it, quotes removed (`'99990,8,2'` -> the string)."""
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"" else yaml.safe_load(text)


def _effective_nemo_model(plan: Plan, kind: str) -> dict[str, Any]:
    """The generated model config with the launch's `model.*` overrides applied on top, as Hydra
    would (`key=value` sets a key, `++key=value` adds or sets one)."""
    model = _nemo_model(plan)
    args = container(plan, kind)["spec"]["containers"][0]["args"]
    for arg in args:
        key, sep, value = arg.removeprefix("++").partition("=")
        if not sep or not key.startswith("model."):
            continue
        *parents, leaf = key.split(".")[1:]
        node = model
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = _hydra_value(value)
    return model


GPT5B_CONFIG = f"{MEGATRON_DEMO}/nemo-example/nemo-configurations/gpt-5b.yaml"
GPT5B_MODEL = [
    ("num_layers", 24),
    ("hidden_size", 4096),
    ("ffn_hidden_size", 16384),
    ("num_attention_heads", 32),
    ("init_method_std", 0.01),
    ("encoder_seq_length", 2048),
    ("micro_batch_size", 4),
    ("global_batch_size", 2048),
    ("megatron_amp_O2", True),
    ("transformer_engine", True),
    ("activations_checkpoint_granularity", "selective"),
    ("activations_checkpoint_method", "block"),
    ("activations_checkpoint_num_layers", 0),
    ("optim.name", "distributed_fused_adam"),
    ("optim.bucket_cap_mb", 400),
    ("optim.overlap_grad_sync", True),
    ("optim.overlap_param_sync", True),
    ("optim.contiguous_grad_buffer", True),
    ("optim.grad_sync_dtype", "bf16"),
    ("optim.lr", 1.6e-4),
    ("optim.weight_decay", 0.1),
    ("optim.betas", [0.9, 0.95]),
    ("optim.sched.warmup_steps", 115),
    ("optim.sched.constant_steps", 12500),
    ("optim.sched.min_lr", 1.6e-5),
    ("data.data_impl", "mmap"),
    ("data.splits_string", "99990,8,2"),
    # The recipe's image bakes these two into its working directory, /workspace (nemo_example.Dockerfile).
    ("tokenizer.vocab_file", "/workspace/gpt2-vocab.json"),
    ("tokenizer.merge_file", "/workspace/gpt2-merges.txt"),
]


@pytest.mark.parametrize(("key", "value"), GPT5B_MODEL, ids=[f[0] for f in GPT5B_MODEL])
def test_gpt5b_model_config_is_the_recipes(a3high: dict[str, Plan], key: str, value: Any) -> None:
    node: Any = _effective_nemo_model(a3high["a3high-nemo-gpt5b"], "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet")
    for part in key.split("."):
        node = node[part]
    assert node == value, GPT5B_CONFIG


def test_gpt5b_trains_16_gpus_in_bf16_as_the_recipe_does(a3high: dict[str, Plan]) -> None:
    trainer = _nemo_config(a3high["a3high-nemo-gpt5b"])["trainer"]
    assert (trainer["num_nodes"], trainer["devices"], trainer["precision"]) == (2, 8, "bf16"), f"{MEGATRON_DEMO} values.yaml (16 GPUs), {GPT5B_CONFIG}"


def test_gpt5b_image_is_the_recipes_base_with_its_tokenizer_files() -> None:
    dockerfile = (Path(__file__).resolve().parent.parent / "images" / "nemofw-23.05" / "Dockerfile").read_text()
    assert "FROM nvcr.io/ea-bignlp/nemofw-training:23.05-py3" in dockerfile, f"{MEGATRON_DEMO}/nemo-example/docker/nemo_example.Dockerfile"
    for name in ("gpt2-vocab.json", "gpt2-merges.txt"):
        assert f"-O /workspace/{name} https://s3.amazonaws.com/models.huggingface.co/bert/{name}" in dockerfile


LITGPT_DOCKERFILE = f"{LITGPT_DEMO}/Dockerfile"


def test_litgpt_launch_is_the_recipes(a3high: dict[str, Plan]) -> None:
    """The recipe's entrypoint (scripts/litgpt_container_entrypoint.sh) runs the trainer with
    --devices=$GPUS_PER_NODE and its default precision, bf16-mixed on these GPUs
    (get_default_supported_precision(training=True)); the model and batch sizes come from its
    helm values (MODEL_NAME pythia-6.9b, 6 sequences per GPU, micro-batch 6: upstream 0557a9f)."""
    pod = container(a3high["a3high-litgpt"], "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet")["spec"]["containers"][0]
    assert pod["args"][-3:] == ["/opt/lit-gpt/pretrain/openwebtext_trainer.py", "--devices=8", "--precision=bf16-mixed"], LITGPT_DEMO
    env = {e["name"]: e.get("value") for e in pod["env"]}
    assert (env["MODEL_NAME"], env["BATCH_SIZE"], env["MICRO_BATCH_SIZE"]) == ("pythia-6.9b", "6", "6"), LITGPT_DEMO


def test_litgpt_image_is_built_as_the_recipe_builds_it() -> None:
    context = Path(__file__).resolve().parent.parent / "images" / "litgpt"
    dockerfile = (context / "Dockerfile").read_text()
    assert "FROM nvcr.io/nvidia/pytorch:23.09-py3" in dockerfile, LITGPT_DOCKERFILE
    assert "ARG LIT_GPT_COMMIT=6178c7cc58ba82e5cce138e7a3159c384e2d3b0f" in dockerfile, f"{LITGPT_DEMO}/readme.MD"
    assert "MAX_JOBS=4" in dockerfile and "--no-build-isolation" in dockerfile, LITGPT_DOCKERFILE
    pins = [line for line in (context / "requirements-flash-attn.txt").read_text().splitlines() if line and not line.startswith("#")]
    assert pins == ["flash-attn==2.0.4"], LITGPT_DOCKERFILE


MISTRAL_TUTORIAL = "stanford-crfm/mistral@6a72127 docs/tutorials/gcp_plus_kubernetes.rst"
MISTRAL_Z1 = "stanford-crfm/mistral@bf9eff0 conf/deepspeed/z1-conf.json"


@pytest.fixture(scope="module")
def a2() -> Plan:
    return render("a2-gpt2-deepspeed", raw_stack_config("a2-gpt2-deepspeed"))


def test_mistral_launch_passes_the_tutorials_arguments(a2: Plan) -> None:
    args = container(a2, "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet")["spec"]["containers"][0]["args"]
    train = args[args.index("train.py") + 1 :]
    pairs = dict(zip(train[::2], train[1::2], strict=False))
    assert pairs["--nnodes"] == "2" and pairs["--nproc_per_node"] == "8", MISTRAL_TUTORIAL
    assert pairs["--training_arguments.fp16"] == "true", MISTRAL_TUTORIAL
    assert pairs["--training_arguments.per_device_train_batch_size"] == "4", MISTRAL_TUTORIAL
    assert pairs["--effective_bsz"] == "64", f"{MISTRAL_TUTORIAL}: 2 nodes x 8 GPUs x 4, which train.py asserts"
    assert pairs["--training_arguments.max_steps"] == "400000", f"{MISTRAL_Z1} total_num_steps"


def test_mistral_deepspeed_config_keeps_the_tutorials_zero_stage_1(a2: Plan) -> None:
    (data,) = [r["inputs"]["data"] for r in a2.resources if r["type"] == "kubernetes:core/v1:ConfigMap" and "ds_config.json" in r["inputs"].get("data", {})]
    ds = json.loads(data["ds_config.json"])
    zero = ds["zero_optimization"]
    assert zero["stage"] == 1 and zero["allgather_bucket_size"] == zero["reduce_bucket_size"] == 2e8, MISTRAL_Z1
    assert zero["overlap_comm"] and zero["contiguous_gradients"] and zero["reduce_scatter"] and zero["allgather_partitions"], MISTRAL_Z1
    assert (ds["optimizer"]["type"], ds["scheduler"]["type"]) == ("AdamW", "WarmupDecayLR"), MISTRAL_Z1
    # The listed departure: values the HF integration fills from Mistral's own training arguments.
    assert set(ds["optimizer"]["params"].values()) == {"auto"} and ds["train_batch_size"] == "auto"


def test_mistral_image_is_pinned_commit_with_a_no_ssh_deepspeed() -> None:
    context = Path(__file__).resolve().parent.parent / "images" / "mistral"
    assert "ARG MISTRAL_COMMIT=bf9eff08e83f4d5703b69dfcb6c18e8e35a00a6d" in (context / "Dockerfile").read_text()
    pins = {
        line.split("==")[0]: line.split("==")[1]
        for line in (context / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    # stanford-crfm/mistral@bf9eff0 setup/pip-requirements.txt, but DeepSpeed (a listed departure).
    assert pins["transformers"] == "4.18.0" and pins["quinine"] == "0.3.0" and pins["datasets"] == "2.0.0"
    assert pins["deepspeed"] == "0.15.4"  # deepspeedai/DeepSpeed acbaca3 (#5728, v0.14.5): --no_ssh


@pytest.mark.parametrize(
    ("stack", "departures"),
    [
        ("a3high-nemo-gpt5b", ("multi-NIC pod networking", "NGC login from Secret Manager", "100 steps")),
        ("a3high-litgpt", ("multi-NIC pod networking", "numactl", "Lightning pinned to 2.1.0")),
        ("a2-gpt2-deepspeed", ("conf/mistral-micro.yaml", '"auto"', "--no_ssh", "schema-1")),
    ],
)
def test_each_stack_lists_its_departures_with_reasons(stack: str, departures: tuple[str, ...]) -> None:
    header = "\n".join(
        line for line in (Path(__file__).resolve().parent.parent / "stacks" / f"Pulumi.{stack}.yaml").read_text().splitlines() if line.startswith("#")
    )
    assert "Departures from the upstream recipe" in header
    for departure in departures:
        assert departure in header.replace("\n# ", " "), f"{stack}: {departure!r} not listed"
