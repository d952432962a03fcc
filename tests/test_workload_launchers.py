"""Each framework launcher: its launch command, parameters, environment and files."""

from __future__ import annotations

import ast
import json
import re
import sys
import types
from typing import Any

import pytest
import yaml

from helpers import load_platform, raw_config, workload_of
from trainstack.core import catalog
from trainstack.core.errors import describe
from trainstack.core.memory import bytes_per_param
from trainstack.workloads import launchers
from trainstack.workloads.launchers import litgpt, megatron_bridge, nemo2, nemo_megatron
from trainstack.workloads.spec import WorkloadSpec
from trainstack.workloads.training_job import MASTER_PORT, pod_hosts


def job(stack: str, **workload: Any) -> launchers.JobSpec:
    config = load_platform(stack, raw_config(stack, trainstack_workload=workload))
    w = workload_of(config)
    return launchers.JobSpec(
        name=w.name,
        gpus_per_node=config.gpu_pool.machine.gpus_per_node,
        hosts=pod_hosts(w.name, w.controller, w.nodes),
        master_port=MASTER_PORT,
        storage_path=config.storage.mount_path,
        workload=w,
    )


def flag(command: tuple[str, ...], name: str) -> str:
    """The value of `name=value` or `name value` in an argv."""
    for i, arg in enumerate(command):
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
        if arg == name:
            return command[i + 1]
    raise AssertionError(f"{name} not in {command}")


def test_every_framework_of_the_config_has_a_launcher() -> None:
    from typing import get_args

    assert set(launchers.LAUNCHERS) == set(get_args(WorkloadSpec.model_fields["framework"].annotation))


def test_every_launcher_is_a_whole_launcher() -> None:
    """Each registered launcher has every method of the Launcher protocol (mypy checks the
    signatures through LAUNCHERS' type); one that forgets a method is not a Launcher."""
    from trainstack.workloads.launchers.base import Launcher, StackBatch

    assert {f: isinstance(launcher, Launcher) for f, launcher in launchers.LAUNCHERS.items()} == dict.fromkeys(launchers.LAUNCHERS, True)

    class Forgetful(StackBatch):  # no launch
        def problems(self, workload: WorkloadSpec, machine: Any) -> list[Any]:
            return []

        def training(self, workload: WorkloadSpec, machine: Any) -> Any:
            return None

    assert not isinstance(Forgetful(), Launcher)


def test_a_launcher_without_its_own_global_batch_takes_the_stacks() -> None:
    spec = job("a3mega-gpt3-175b", framework="deepspeed", model="gpt2-micro", parallelism=None, resiliency={"enabled": False}, globalBatchSize=64)
    machine = catalog.machine("a3-megagpu-8g")
    assert launchers.global_batch(spec.workload, machine) == 64
    assert launchers.global_batch(spec.workload.model_copy(update={"global_batch_size": None}), machine) is None


# --- NeMo 2.0 (recipe 000) ------------------------------------------------------------------


def test_nemo2_under_the_supervisor_runs_the_resiliency_launcher() -> None:
    spec = job("a3ultra-405b")
    launch = launchers.launch(spec)
    assert launch.command[:3] == ("python3", "resiliency/launcher.py", "--use-supervisor")
    assert flag(launch.command, "--nproc-per-node") == "8"
    assert flag(launch.command, "--nnodes") == "54"
    assert flag(launch.command, "--node_rank") == "$(JOB_COMPLETION_INDEX)"
    assert flag(launch.command, "--master_addr") == "llama31-405b-workload-0-0.llama31-405b"
    # The era's launcher finds its host monitor at HOST_DAEMON_PORT, not through a flag.
    assert launch.env["HOST_DAEMON_PORT"] == "60010"
    assert not any(a.startswith("--host-daemon-port") for a in launch.command)
    script = launch.command.index("/workload/configs/train.py")
    assert flag(launch.command[script:], "--max-steps") == "500"  # the script's own flags follow it


def test_nemo2_without_the_supervisor_runs_torchrun() -> None:
    launch = launchers.launch(job("a3ultra-405b", resiliency={"enabled": False}))
    assert launch.command[0] == "torchrun"
    assert flag(launch.command, "--nproc-per-node") == "8"
    assert flag(launch.command, "--node-rank") == "$(JOB_COMPLETION_INDEX)"
    assert flag(launch.command, "--master-port") == "6002"
    assert launch.command[-1] == "/workload/configs/train.py"


def test_nemo2_script_trains_500_steps_and_checkpoints_every_20_to_the_bucket() -> None:
    launch = launchers.launch(job("a3ultra-405b", resiliency={"enabled": False}, globalBatchSize=432))
    (files,) = launch.files
    script = files.files["train.py"]
    ast.parse(script)  # valid Python
    assert "llm.llama31_405b.pretrain_recipe(" in script
    assert "recipe.trainer.max_steps = 500" in script
    assert "recipe.log.ckpt.every_n_train_steps = 20" in script
    assert "recipe.data.global_batch_size = 432" in script
    assert launch.env["EXP_DIR"] == "/job-logs/nemo-experiments" == launch.log_dir


def test_nemo2_under_the_supervisor_runs_trainstacks_resilient_script_with_the_recipes_flags() -> None:
    """gpu-recipes 27b47e7 .../nemo-pretraining-gke-resiliency/values.yaml defaultArguments."""
    launch = launchers.launch(job("a3ultra-405b"))
    script = launch.files[0].files["train.py"]
    ast.parse(script)
    flags = launch.command[launch.command.index("/workload/configs/train.py") + 1 :]
    for expected in (
        "--max-runtime=86400",
        "--enable-dist-ckpt",
        "--enable-async-ckpt",
        "--enable-optimized-async-ckpt",
        "--enable-fault-tolerance",
        "--enable-gc",
        "--topk-ckpt=-1",
        "--ckpt-threads-per-rank=1",
        "--checkpoint-interval=20",
        "--max-steps=500",
        "--job-name=$(JOB_IDENTIFIER)",
    ):
        assert expected in flags
    assert not any(f.startswith("--global-batch-size") for f in flags)  # upstream: one micro-batch per GPU, 432
    # Every flag the launcher passes is one the script declares (no flag only in a comment).
    declared = set(re.findall(r"\(\"([a-z-]+)\", (?:str|int)\)|\"([a-z-]+)\"", script))
    names = {n for pair in declared for n in pair if n}
    assert {f.split("=")[0].removeprefix("--") for f in flags} <= names


def test_nemo2_script_sets_parallelism_and_fp8_only_when_asked() -> None:
    plain = launchers.launch(job("a3ultra-405b", resiliency={"enabled": False}, parallelism=None)).files[0].files["train.py"]
    assert "strategy" not in plain and "recipe.trainer.plugins = " not in plain and "FaultTolerance" not in plain
    tuned = (
        launchers.launch(job("a3ultra-405b", resiliency={"enabled": False}, precision="fp8", parallelism={"tensor": 8, "pipeline": 18, "virtualPipeline": 7}))
        .files[0]
        .files["train.py"]
    )
    assert "recipe.trainer.strategy.pipeline_model_parallel_size = 18" in tuned
    assert "recipe.trainer.strategy.virtual_pipeline_model_parallel_size = 7" in tuned
    assert "recipe.trainer.plugins = bf16_with_fp8_mixed()" in tuned
    ast.parse(tuned)


class _Config:
    """A stand-in for a NeMo-Run Config: attributes as set, a missing one a new Config."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Any:
        setattr(self, name, child := _Config())
        return child


def _run_nemo2_script(script: str, monkeypatch: Any) -> Any:
    """Run a generated NeMo 2.0 script against a stand-in NeMo whose recipe and plugins start as
    NVIDIA/NeMo v2.4.0 makes them: bf16_mixed and bf16_with_fp8_mixed (built on it) with
    grad_reduce_in_fp32=True, fp16_mixed with False (recipes/precision/mixed_precision.py), the
    optimizer without the precision-aware flag (recipes/optim/adam.py). Returns the recipe run."""
    ran: list[Any] = []

    def pretrain_recipe(**_: Any) -> _Config:
        recipe = _Config(plugins=None)
        recipe.trainer.plugins = _Config(grad_reduce_in_fp32=True)
        recipe.optim.config.use_precision_aware_optimizer = False
        return recipe

    llm = types.ModuleType("nemo.collections.llm")
    for recipe_module in nemo2.RECIPES.values():
        setattr(llm, recipe_module, types.SimpleNamespace(pretrain_recipe=pretrain_recipe))
    precision = types.ModuleType("nemo.collections.llm.recipes.precision.mixed_precision")
    vars(precision).update(
        bf16_with_fp8_mixed=lambda: _Config(grad_reduce_in_fp32=True, fp8="hybrid"),
        fp16_mixed=lambda: _Config(grad_reduce_in_fp32=False),
    )
    collections = types.ModuleType("nemo.collections")
    vars(collections).update(llm=llm)
    nemo_run = types.ModuleType("nemo_run")
    vars(nemo_run).update(run=lambda recipe, direct: ran.append(recipe))
    for name, module in {
        "nemo_run": nemo_run,
        "nemo": types.ModuleType("nemo"),
        "nemo.collections": collections,
        "nemo.collections.llm": llm,
        "nemo.collections.llm.recipes.precision.mixed_precision": precision,
    }.items():
        monkeypatch.setitem(sys.modules, name, module)
    for name, value in {"LOCAL_WORLD_SIZE": "8", "WORLD_SIZE": "64", "JOB_IDENTIFIER": "run", "EXP_DIR": "/x"}.items():
        monkeypatch.setenv(name, value)
    exec(compile(script, "train.py", "exec"), {"__name__": "__main__"})
    (recipe,) = ran
    return recipe


@pytest.mark.parametrize(
    ("precision", "zero_stage", "aware"),
    [("bf16", None, True), ("bf16", 1, True), ("bf16", 0, False), ("fp8", None, False), ("fp16", None, False)],
)
def test_nemo2_script_runs_the_upstream_precision_settings_and_the_estimate_holds_what_it_runs(
    precision: str, zero_stage: int | None, aware: bool, monkeypatch: Any
) -> None:
    """gpu-recipes e515bfc training/a4/llama3_70b/nemo-gke/nemo2507/64gpus-bf16-gbs256/recipe/
    llama3-1-70b-bf16-seq8192-gbs256-gpus64.py runs set_primary_perf_configs, whose
    set_precision_configs (NVIDIA/NeMo v2.4.0 scripts/performance/helpers.py:207-224) sets
    `recipe.optim.config.use_precision_aware_optimizer = True` for bf16, `recipe.trainer.plugins =
    bf16_with_fp8_mixed()` for fp8, then `recipe.trainer.plugins.grad_reduce_in_fp32 = False` for
    every precision. Megatron-core takes the precision-aware optimizer only with the distributed
    optimizer (core_v0.13.0 optimizer_config.py __post_init__), which zeroStage 0 turns off. The
    memory estimate is of the recipe the script leaves."""
    settings = {"precision": precision, "resiliency": {"enabled": False}, "zeroStage": zero_stage}
    config = load_platform("a4-llama3-70b", raw_config("a4-llama3-70b", trainstack_workload=settings))
    script = nemo2.training_script(workload_of(config))
    recipe = _run_nemo2_script(script, monkeypatch)
    assert recipe.trainer.plugins.grad_reduce_in_fp32 is False
    assert recipe.optim.config.use_precision_aware_optimizer is aware
    assert (getattr(recipe.trainer.plugins, "fp8", None) == "hybrid") is (precision == "fp8")
    held = launchers.training(workload_of(config), config.gpu_pool.machine)
    per = bytes_per_param(precision, fp32_grads=held.fp32_grads, fp32_grad_copy=held.fp32_grad_copy, master_remainders=held.master_remainders)
    assert per.gradients == 2  # reduced in the weights' 16 bits
    assert per.optimizer == (8 + 2 if aware else 8 + 4 + 4)  # remainders and no copy, or fp32 master and grad copy


def test_nemo2_under_the_supervisor_keeps_fp32_gradients_as_its_upstream() -> None:
    """gpu-recipes 27b47e7 training/a3ultra/llama3-1-405b/nemo-pretraining-gke-resiliency/train.py:274
    builds MegatronMixedPrecision(precision="bf16-mixed"), whose grad_reduce_in_fp32 defaults to
    True (NVIDIA/NeMo v2.4.0 nemo/lightning/pytorch/plugins/mixed_precision.py), and an
    OptimizerConfig without the precision-aware optimizer: a3ultra-405b reduces in fp32."""
    config = load_platform("a3ultra-405b", raw_config("a3ultra-405b"))
    script = launchers.launch(job("a3ultra-405b")).files[0].files["train.py"]
    assert 'nl.MegatronMixedPrecision(precision="bf16-mixed")' in script
    assert "grad_reduce_in_fp32" not in script and "use_precision_aware_optimizer" not in script
    held = launchers.training(workload_of(config), config.gpu_pool.machine)
    per = bytes_per_param("bf16", fp32_grads=held.fp32_grads, master_remainders=held.master_remainders)
    assert (per.gradients, per.optimizer) == (4, 12)


def problems(stack: str, **workload: Any) -> list[str]:
    """The launcher's problems for the stack's workload with `workload` changes, as the user reads them."""
    config = load_platform(stack, raw_config(stack, trainstack_workload=workload))
    return [describe(p) for p in launchers.problems(workload_of(config), config.gpu_pool.machine)]


def test_nemo2_rejects_a_model_it_has_no_recipe_for() -> None:
    (problem,) = problems("a3ultra-405b", model="gpt3-175b")
    assert problem.startswith("trainstack:workload.model = 'gpt3-175b': the nemo2 launcher has no recipe for it; known: llama3-70b")


def test_megatron_launchers_reject_a_batch_that_is_not_whole_micro_batches_per_rank() -> None:
    # a3mega: 256 GPUs at TP4 x PP8 -> 8 data-parallel ranks x micro-batch 1.
    assert problems("a3mega-gpt3-175b", globalBatchSize=2044) == [
        "trainstack:workload.globalBatchSize = 2044: must be a multiple of microBatchSize x data-parallel size (8 on 256 GPUs)"
    ]
    assert problems("a3mega-gpt3-175b", parallelism={"tensor": 3, "pipeline": 1, "virtualPipeline": None}) == [
        "trainstack:workload.parallelism = 3: tensor x pipeline x context (3) must divide the job's 256 GPUs"
    ]


def test_megatron_launchers_split_the_layers_as_megatron_core_does() -> None:
    """NVIDIA/Megatron-LM d98e8a6 megatron/core/transformer/transformer_block.py
    get_num_layers_to_build asserts `num_layers % pipeline_model_parallel_size == 0` and
    `num_layers_per_pipeline_rank % vp_size == 0`: llama3.1-8b's 32 layers go 8 to each of 4
    stages, which 5 interleaved chunks cannot share; 4 chunks of 2 can."""
    split = {"tensor": 2, "pipeline": 4, "context": 2, "sequenceParallel": True}
    assert problems("a4-llama3-70b", model="llama3.1-8b", parallelism={**split, "virtualPipeline": 5}) == [
        (
            "trainstack:workload.parallelism.virtualPipeline = 5: llama3.1-8b: each of the 4 pipeline stages holds 8 layers, "
            "which do not divide into 5 virtual-pipeline chunks; Megatron-core needs them to"
        )
    ]
    assert problems("a4-llama3-70b", model="llama3.1-8b", parallelism={**split, "virtualPipeline": 4}) == []
    assert problems("a4-llama3-70b") == []  # 80 layers: 20 a stage, 4 in each of 5 chunks
    assert problems("a3mega-gpt3-175b", parallelism={"pipeline": 64, "virtualPipeline": None}) == [
        "trainstack:workload.parallelism.pipeline = 64: gpt3-175b: 96 layers do not divide into 64 pipeline stages; Megatron-core splits them evenly"
    ]


def test_megatron_launchers_split_heads_and_key_value_groups_over_the_tensor_parallel_gpus() -> None:
    """NVIDIA/Megatron-LM f41b4fd megatron/core/transformer/attention.py divides the attention heads
    and the query groups by the tensor-parallel size (megatron/core/utils.py `divide` asserts it):
    TP 3 splits neither of llama3.1-405b's 128 heads (432 GPUs hold TP 3 x PP 18 x CP 1 evenly);
    TP 16 splits llama3.1-70b's 64 heads but not its 8 key/value groups."""
    assert problems("a3ultra-405b", parallelism={"tensor": 3}) == [
        "trainstack:workload.parallelism.tensor = 3: llama3.1-405b: its 128 attention heads do not divide over 3 tensor-parallel GPUs; Megatron-core splits them evenly"
    ]
    single = {"pipeline": 1, "virtualPipeline": None, "context": 1}
    assert problems("a4-llama3-70b", parallelism={**single, "tensor": 16}) == [
        "trainstack:workload.parallelism.tensor = 16: llama3.1-70b: its 8 key/value groups do not divide over 16 tensor-parallel GPUs; Megatron-core splits them evenly"
    ]
    assert problems("a4-llama3-70b", parallelism={**single, "tensor": 8}) == []


def test_nemo2_counts_the_405b_recipes_embedding_and_loss_as_pipeline_layers() -> None:
    """NVIDIA/NeMo v2.4.0 recipes/llama31_405b.py `trainer` sets account_for_embedding_in_pipeline_split
    and account_for_loss_in_pipeline_split: Megatron-core splits 126 + 2 layers (transformer_block.py).
    The generated script keeps that trainer; the resilient script (recipe 000) builds its own
    strategy without them, and splits 126 over 18 stages of 7, one a chunk."""
    assert problems("a3ultra-405b") == []
    assert problems("a3ultra-405b", resiliency={"enabled": False}) == [
        (
            "trainstack:workload.parallelism.pipeline = 18: llama3.1-405b: 126 layers and the embedding and loss (128) do not divide "
            "into 18 pipeline stages; Megatron-core splits them evenly"
        )
    ]
    two_stages = {"tensor": 8, "pipeline": 2, "virtualPipeline": 8, "context": 1, "sequenceParallel": True}
    assert problems("a3ultra-405b", resiliency={"enabled": False}, parallelism=two_stages) == []  # 64 a stage, 8 a chunk


# --- NeMo Megatron (recipes 001, 002) ---------------------------------------------------------


def test_nemo_megatron_runs_the_pretraining_script_with_the_mounted_config() -> None:
    spec = job("a3mega-gpt3-175b")
    launch = launchers.launch(spec)
    assert launch.command[0] == "torchrun"
    assert flag(launch.command, "--nnodes") == "32"
    assert flag(launch.command, "--master-addr") == "gpt3-175b-0.gpt3-175b"  # an Indexed Job
    assert nemo_megatron.ENTRYPOINT in launch.command
    assert flag(launch.command, "--config-path") == "/workload/configs"
    assert flag(launch.command, "--config-name") == "gpt3-175b.yaml"
    assert launch.command[-len(spec.workload.overrides) :] == tuple(spec.workload.overrides)


def test_nemo_megatron_config_is_gpt3_175b_fp8_for_50_steps() -> None:
    launch = launchers.launch(job("a3mega-gpt3-175b"))
    config = yaml.safe_load(launch.files[0].files["gpt3-175b.yaml"])
    assert config["defaults"] == ["megatron_gpt_config", "_self_"]
    assert config["trainer"] == {"num_nodes": 32, "devices": 8, "precision": "bf16", "max_steps": 50, "val_check_interval": 50, "log_every_n_steps": 1}
    model = config["model"]
    assert (model["num_layers"], model["hidden_size"], model["num_attention_heads"]) == (96, 12288, 96)
    assert (model["tensor_model_parallel_size"], model["pipeline_model_parallel_size"], model["virtual_pipeline_model_parallel_size"]) == (4, 8, 2)
    assert (model["global_batch_size"], model["micro_batch_size"], model["encoder_seq_length"]) == (2048, 1, 2048)
    assert model["fp8"] is True and model["transformer_engine"] is True
    assert model["data"]["data_impl"] == "mock"
    assert "nsys_profile" not in model
    assert config["exp_manager"]["explicit_log_dir"] == "/job-logs/nemo-experiments/gpt3-175b"


def test_nemo_megatron_profiles_the_configured_step_range_with_nsight() -> None:
    launch = launchers.launch(job("a3mega-gpt3-175b", profiling={"enabled": True, "startStep": 41, "endStep": 43}))
    assert launch.command[:2] == ("nsys", "profile")
    assert flag(launch.command, "--capture-range") == "cudaProfilerApi"
    assert flag(launch.command, "--output") == "/job-logs/nemo-experiments/gpt3-175b/noderank-$(JOB_COMPLETION_INDEX)"
    assert launch.command.index("torchrun") > launch.command.index("profile")
    model = yaml.safe_load(launch.files[0].files["gpt3-175b.yaml"])["model"]
    assert model["nsys_profile"] == {"enabled": True, "start_step": 41, "end_step": 43, "ranks": [0], "gen_shape": False}


def test_nemo_megatron_gpt5b_checkpoints_and_reads_the_copied_dataset() -> None:
    launch = launchers.launch(job("a3high-nemo-gpt5b"))
    config = yaml.safe_load(launch.files[0].files["gpt3-5b.yaml"])
    assert (config["model"]["num_layers"], config["model"]["hidden_size"]) == (24, 4096)
    assert config["trainer"]["num_nodes"] == 2
    assert config["exp_manager"]["checkpoint_callback_params"] == {"every_n_train_steps": 50}
    assert config["exp_manager"]["resume_if_exists"] is True
    assert "model.data.data_prefix=[1.0,/data/wikipedia-tokenized-for-gpt2]" in launch.command
    assert launch.log_dir == "/nfs/nemo-experiments"


def test_nemo_megatron_rejects_an_unknown_model() -> None:
    assert problems("a3mega-gpt3-175b", model="gpt3-13b") == [
        "trainstack:workload.model = 'gpt3-13b': the nemo-megatron launcher has no recipe for it; known: gpt3-175b, gpt3-5b"
    ]


# --- LitGPT (recipe 003) ------------------------------------------------------------------------


def test_litgpt_runs_the_trainer_under_torchrun_with_sizes_in_its_environment() -> None:
    launch = launchers.launch(job("a3high-litgpt"))
    assert launch.command[0] == "torchrun"
    assert flag(launch.command, "--nnodes") == "8"
    assert litgpt.ENTRYPOINT in launch.command
    assert flag(launch.command, "--devices") == "8"
    assert flag(launch.command, "--precision") == "bf16-mixed"  # the lit-gpt-demo trainer's default (26e3b34)
    assert launch.env == {"MODEL_NAME": "pythia-6.9b", "BATCH_SIZE": "6", "MICRO_BATCH_SIZE": "6", "MAX_ITERS": "30"}
    assert launch.setup == ('mkdir -p "/job-logs/litgpt/litgpt-pythia"', 'cd "/job-logs/litgpt/litgpt-pythia"')


def test_litgpt_rejects_a_batch_that_does_not_split_into_micro_batches() -> None:
    expected = "trainstack:workload.globalBatchSize = {}: over 64 GPUs must give each GPU a positive multiple of microBatchSize (6)"
    assert problems("a3high-litgpt", globalBatchSize=320) == [expected.format(320)]  # 5 per GPU
    assert problems("a3high-litgpt", globalBatchSize=385) == [expected.format(385)]  # not whole per GPU
    assert problems("a3high-litgpt", precision="fp8") == ["trainstack:workload.precision = 'fp8': LitGPT trains in bf16, fp16, fp32"]


# --- DeepSpeed (recipe 004) ---------------------------------------------------------------------


def test_deepspeed_launches_each_node_without_ssh() -> None:
    spec = job("a2-gpt2-deepspeed")
    launch = launchers.launch(spec)
    assert launch.command[0] == "deepspeed"
    assert "--no_ssh" in launch.command
    assert flag(launch.command, "--node_rank") == "$(JOB_COMPLETION_INDEX)"
    assert flag(launch.command, "--hostfile") == "/workload/configs/hostfile"
    assert flag(launch.command, "--master_addr") == spec.hosts[0]
    # A top-level config: quinine resolves its inherits (datasets/, models/, trainers/) beside it
    # (stanford-crfm/mistral bf9eff0 conf/mistral-micro.yaml).
    assert flag(launch.command, "--config") == "conf/mistral-micro.yaml"
    assert flag(launch.command, "--training_arguments.fp16") == "true"
    assert flag(launch.command, "--training_arguments.per_device_train_batch_size") == "4"
    assert flag(launch.command, "--training_arguments.deepspeed") == "/workload/configs/ds_config.json"
    assert flag(launch.command, "--nnodes") == "2"
    assert flag(launch.command, "--run_id") == "gpt2-micro"


def test_deepspeed_hostfile_lists_every_pod_with_its_gpus() -> None:
    launch = launchers.launch(job("a2-gpt2-deepspeed"))
    assert launch.files[0].files["hostfile"] == ("gpt2-micro-workload-0-0.gpt2-micro slots=8\ngpt2-micro-workload-0-1.gpt2-micro slots=8\n")


def test_deepspeed_config_is_zero_stage_1_in_fp16() -> None:
    config = json.loads(launchers.launch(job("a2-gpt2-deepspeed")).files[0].files["ds_config.json"])
    assert config["zero_optimization"]["stage"] == 1
    assert config["fp16"] == {"enabled": "auto"}
    assert config["optimizer"] == {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}}
    # Hugging Face's Trainer fills these from Mistral's config: no literal to disagree with it
    # (its adam_beta2 is 0.999), and DeepSpeed gets its batch sizes.
    assert {config[k] for k in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")} == {"auto"}
    assert set(config["scheduler"]["params"].values()) == {"auto"}


def test_deepspeed_rejects_fp8() -> None:
    assert problems("a3mega-gpt3-175b", framework="deepspeed", model="gpt2-micro", parallelism=None, resiliency={"enabled": False}) == [
        "trainstack:workload.precision = 'fp8': DeepSpeed trains in fp16, bf16, fp32"
    ]


def test_launchers_are_pure() -> None:
    spec = job("a3ultra-405b")
    assert nemo2.NeMo2().launch(spec) == nemo2.NeMo2().launch(spec)


# --- Megatron-Bridge (a4x-llama3-70b; gpu-recipes 2e1fd5e training/a4x/llama3_70b/nemo-gke/nemo2602) --


def bridge_job(**workload: Any) -> launchers.JobSpec:
    spec = job("a4x-llama3-70b", **workload)
    return launchers.JobSpec(spec.name, spec.gpus_per_node, spec.hosts, spec.master_port, spec.storage_path, spec.workload, gpu="gb200")


def test_megatron_bridge_clones_the_pinned_tree_and_runs_in_the_runs_directory_on_shared_storage() -> None:
    launch = launchers.launch(bridge_job())
    assert launch.setup[:5] == (
        'export LD_LIBRARY_PATH="/usr/local/cuda/compat/lib:${LD_LIBRARY_PATH}"',
        "rm -rf /opt/Megatron-Bridge",
        "git clone https://github.com/NVIDIA-NeMo/Megatron-Bridge.git /opt/Megatron-Bridge",
        f"git -C /opt/Megatron-Bridge checkout {megatron_bridge.RECIPES['llama3-70b'][2]}",
        "git -C /opt/Megatron-Bridge submodule update --init --recursive",
    )
    assert launch.setup[-1] == 'cd "/job-logs/megatron-bridge/${JOB_IDENTIFIER}"' and launch.log_dir == "/job-logs/megatron-bridge"
    assert launch.command[launch.command.index(megatron_bridge.SCRIPT) - 1] == f"--master-port={MASTER_PORT}"


def test_megatron_bridge_maps_zero_stage_to_megatron_fsdp_and_passes_overrides_as_flags() -> None:
    distributed = launchers.launch(bridge_job(zeroStage=1, overrides=["recompute_num_layers=4"])).command
    assert flag(distributed, "--use_megatron_fsdp") == "false" and flag(distributed, "--recompute_num_layers") == "4"
    assert flag(launchers.launch(bridge_job()).command, "--use_megatron_fsdp") == "true"


def test_megatron_bridge_refuses_what_the_script_would() -> None:
    def problems(**workload: Any) -> list[str]:
        config = load_platform("a4x-llama3-70b", raw_config("a4x-llama3-70b", trainstack_workload=workload))
        return [describe(p) for p in launchers.problems(workload_of(config), config.gpu_pool.machine)]

    assert problems() == []
    assert problems(model="llama3.1-8b") == [
        "trainstack:workload.model = 'llama3.1-8b': the megatron-bridge launcher has no recipe for it; known: llama3-70b, llama3.1-405b"
    ]
    assert problems(precision="fp16") == ["trainstack:workload.precision = 'fp16': Megatron-Bridge trains in bf16, fp8"]
    assert problems(zeroStage=2) == ["trainstack:workload.zeroStage = 2: Megatron-Bridge shards with ZeRO stage 1, 3 only"]
    assert problems(overrides=["--max_steps=5"]) == [
        "trainstack:workload.overrides[0] = '--max_steps=5': must be name=value, a flag of run_script.py without its dashes"
    ]
    assert problems(overrides=["activation_offload_layers=all"]) == [
        "trainstack:workload.overrides[0] = 'activation_offload_layers=all': activation_offload_layers takes a number of layers"
    ]
