"""Recipe 004's job as trainstack renders it, loaded the way the image's Mistral loads it.

Reads the plan of the a2-gpt2-deepspeed stack (`trainstack plan ... --out DIR`): the JobSet's
`deepspeed ... train.py <args>` command and the ConfigMap's ds_config.json and hostfile. Then, in
the image's Python, torch and pins (images/mistral):

1. quinine: a stand-in of Mistral's conf/ tree at the pinned commit (same file names and inherit
   lists, the values that matter here) is loaded with quinine's QuinineArgumentParser, the schema
   built from mistral-schema.txt and train.py's exact arguments: the config's inherits must
   resolve as quinine resolves them (relative to the config's folder), every flag must be one the
   schema knows, every value must validate.
2. Hugging Face + DeepSpeed: TrainingArguments as Mistral's get_training_arguments builds them
   (gradient accumulation from effective_bsz, WORLD_SIZE from the hostfile's slots) with the
   rendered ds_config.json, under transformers' own HfTrainerDeepSpeedConfig (fills "auto",
   refuses a literal that disagrees with the training arguments), then DeepSpeed's own
   DeepSpeedConfig parser with the job's data-parallel world size.

Controls (the check must be able to fail): the config path and DeepSpeed config trainstack rendered
before d3bf450 (conf/archive/v1/tutorial-gpt2-micro.yaml, literal betas [0.9, 0.95] and no batch
sizes) must be refused by the same code. Stand-ins replace Mistral's files because its source
is not available here; CUDA is replaced by a device stand-in (TrainingArguments.device), so
nothing touches a GPU.

    python check_mistral_config.py PLAN_DIR
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent

# stanford-crfm/mistral@bf9eff0 conf/: the files conf/mistral-micro.yaml inherits, with the values
# this check depends on (keys and values as at that commit), and the archived tutorial config with
# its inherit list (its targets do not exist under conf/archive/v1/).
STAND_IN_TREE: dict[str, dict[str, Any]] = {
    "conf/mistral-micro.yaml": {
        "inherit": ["datasets/wikitext2.yaml", "models/mistral-micro.yaml", "trainers/gpt2-small.yaml"],
        "run_id": None,
        "wandb": None,
        "group": None,
        "artifacts": {"cache_dir": "/path/to/artifacts", "run_dir": "/path/to/runs"},
        "effective_bsz": 32,
        "resume": False,
        "resume_checkpoint": None,
        "checkpoint_frequency": [[2, 10], [10, 100], [50, 2000], [100, 20000], [1000, 400000]],
        "local_rank": -1,
        "nnodes": -1,
        "nproc_per_node": -1,
        "num_gpus": -1,
        "num_nodes": -1,
        "world_size": -1,
        "log_level": 20,
        "seed": 21,
        "online_eval": {"stride": 256},
    },
    "conf/datasets/wikitext2.yaml": {
        "dataset": {"id": "wikitext", "name": "wikitext-2-raw-v1", "validation_ratio": None, "num_proc": 4, "eval_num_proc": 4},
    },
    "conf/datasets/wikitext103.yaml": {
        "dataset": {"id": "wikitext", "name": "wikitext-103-raw-v1", "num_proc": 4, "eval_num_proc": 4},
    },
    "conf/models/mistral-micro.yaml": {
        "model": {
            "id": "gpt2-small",
            "pretrained_tokenizer": True,
            "seq_len": 256,
            "reorder_and_upcast_attn": True,
            "scale_attn_by_inverse_layer_idx": True,
            "initial_weights": None,
            "config_path": "conf/models/mistral-micro.json",
        },
    },
    "conf/trainers/gpt2-small.yaml": {
        "training_arguments": {
            "output_dir": None,
            "do_train": True,
            "evaluation_strategy": "steps",
            "per_device_train_batch_size": 8,
            "per_device_eval_batch_size": 16,
            "gradient_accumulation_steps": None,
            "gradient_checkpointing": False,
            "prediction_loss_only": True,
            "learning_rate": 0.0006,
            "weight_decay": 0.1,
            "adam_beta1": 0.9,
            "adam_beta2": 0.999,
            "adam_epsilon": 1.0e-8,
            "max_grad_norm": 1.0,
            "max_steps": 400000,
            "lr_scheduler_type": "linear",
            "warmup_steps": 4000,
            "run_name": None,
            "logging_dir": None,
            "logging_first_step": True,
            "logging_steps": 50,
            "eval_steps": 1000,
            "save_steps": 1000,
            "ignore_data_skip": False,
            "seed": None,
            "fp16": True,
            "sharded_ddp": None,
            "deepspeed": None,
            "dataloader_num_workers": 0,
            "local_rank": None,
        },
    },
    "conf/archive/v1/tutorial-gpt2-micro.yaml": {
        "inherit": ["datasets/wikitext103.yaml", "models/gpt2-micro.yaml", "trainers/gpt2-small.yaml"],
        "effective_bsz": 32,
    },
}

# trainstack's DeepSpeed config before d3bf450 (workloads/launchers/deepspeed.py), for the control.
OLD_DS_CONFIG = {
    "optimizer": {"type": "AdamW", "params": {"lr": 6e-4, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.1}},
    "scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": 400000, "warmup_max_lr": 6e-4, "warmup_num_steps": 4000}},
    "zero_optimization": {
        "stage": 1,
        "allgather_partitions": True,
        "allgather_bucket_size": 200000000,
        "reduce_scatter": True,
        "reduce_bucket_size": 200000000,
        "overlap_comm": True,
        "contiguous_gradients": True,
    },
    "fp16": {"enabled": True},
}
OLD_CONFIG_PATH = "conf/archive/v1/tutorial-gpt2-micro.yaml"


def _value(text: str) -> Any:
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def schema() -> dict[str, Any]:
    """The Cerberus schema mistral-schema.txt describes, nested as quinine expects."""
    root: dict[str, Any] = {}
    for raw in (HERE / "mistral-schema.txt").read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        path, kind, *rest = line.split()
        rule: dict[str, Any] = {"type": kind}
        if rest and rest[0] in ("required", "nullable"):
            rule[rest.pop(0)] = True
        if rest:
            rule["default"] = _value(" ".join(rest))
        *parents, leaf = path.split(".")
        level = root
        for parent in parents:
            level = level.setdefault(parent, {"type": "dict", "schema": {}})["schema"]
        level[leaf] = rule
    return root


def rendered_job(plan: Path) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """(train.py's arguments, the container's env, the ConfigMap's files)."""
    manifests = plan / "manifests"
    (jobset_file,) = manifests.glob("jobset-*.yaml")
    jobset = yaml.safe_load(jobset_file.read_text())
    container = next(
        c for job in jobset["spec"]["replicatedJobs"] for c in job["template"]["spec"]["template"]["spec"]["containers"] if "deepspeed" in (c.get("args") or [])
    )
    args = container["args"]
    train_args = args[args.index("train.py") + 1 :]
    env = {e["name"]: e.get("value", "") for e in container.get("env", [])}
    files: dict[str, str] = {}
    for path in manifests.glob("configmap-*.yaml"):
        data = yaml.safe_load(path.read_text()).get("data") or {}
        if "ds_config.json" in data:
            files = data
    if not files:
        raise SystemExit(f"no ConfigMap with ds_config.json under {manifests}")
    return train_args, env, files


def write_tree(root: Path) -> None:
    for name, content in STAND_IN_TREE.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(content, sort_keys=False))


def load_quinfig(root: Path, train_args: list[str]) -> Any:
    """train.py's `QuinineArgumentParser(schema=get_schema()).parse_quinfig()`, run in Mistral's
    folder with train.py's argv."""
    from quinine import QuinineArgumentParser

    cwd, argv = os.getcwd(), sys.argv
    os.chdir(root)
    sys.argv = ["train.py", *train_args]
    try:
        return QuinineArgumentParser(schema=schema()).parse_quinfig()
    finally:
        os.chdir(cwd)
        sys.argv = argv


def training_arguments(quinfig: Any, ds_config_path: str, world_size: int, run_dir: Path) -> Any:
    """Mistral's get_training_arguments (src/args/training_args.py at bf9eff0): run name, output
    dir, seeds and local rank set from the run; report_to none; sharded_ddp None -> False;
    gradient_accumulation_steps = effective_bsz // (per_device_train_batch_size * world_size)."""
    import torch
    from transformers import TrainingArguments

    class OnTheJobsGpus(TrainingArguments):
        # The job's device and world, without CUDA here: rank 0 of `world_size` data-parallel ranks.
        @property
        def device(self) -> torch.device:
            return torch.device("cuda", 0)

        @property
        def n_gpu(self) -> int:
            return 1

        @property
        def world_size(self) -> int:
            return world_size

    args = dict(quinfig.training_arguments)
    args["deepspeed"] = ds_config_path
    args.update(run_name=quinfig.run_id, output_dir=str(run_dir), seed=quinfig.seed, data_seed=quinfig.seed, local_rank=0, report_to="none")
    if args["sharded_ddp"] is None:
        args["sharded_ddp"] = False
    accumulation = quinfig.effective_bsz // (args["per_device_train_batch_size"] * world_size)
    if accumulation <= 0 or quinfig.effective_bsz % accumulation:
        raise ValueError(f"Incompatible sizes for gradient accumulation (Mistral refuses): effective_bsz {quinfig.effective_bsz}, world {world_size}")
    args["gradient_accumulation_steps"] = accumulation
    return OnTheJobsGpus(**args)


class DataParallel:
    """A model-parallel unit with `world_size` data-parallel ranks, for DeepSpeedConfig."""

    def __init__(self, world_size: int):
        self.world_size = world_size

    def get_data_parallel_world_size(self) -> int:
        return self.world_size

    def get_data_parallel_rank(self) -> int:
        return 0

    def get_model_parallel_world_size(self) -> int:
        return 1

    def get_model_parallel_rank(self) -> int:
        return 0


def deepspeed_config(args: Any, world_size: int) -> Any:
    """What Hugging Face's Trainer hands DeepSpeed (deepspeed_init: trainer_config_finalize with
    the model and the run's steps), parsed by DeepSpeed's own DeepSpeedConfig as rank 0 of
    `world_size` data-parallel ranks."""
    from deepspeed import comm
    from deepspeed.runtime.config import DeepSpeedConfig
    from transformers import GPT2Config

    # Mistral's gpt2-micro (conf/models/mistral-micro.json at bf9eff0): the finalize step reads
    # the model's hidden size.
    model = SimpleNamespace(config=GPT2Config(n_embd=768, n_layer=2, n_head=2, n_positions=256, n_ctx=256, vocab_size=50257))
    hf = args.hf_deepspeed_config
    hf.trainer_config_finalize(args, model, args.max_steps)
    # DeepSpeedConfig asks the process group for this process's rank (and falls back to a world of
    # 1 without one): this process is rank 0; the world comes from the data-parallel unit.
    comm.get_rank = lambda group=None: 0
    return DeepSpeedConfig(hf.config, mpu=DataParallel(world_size))


def check(plan: Path) -> list[str]:
    failures: list[str] = []
    train_args, env, files = rendered_job(plan)
    hosts = [line.split() for line in files["hostfile"].splitlines() if line.strip()]
    world_size = sum(int(slots.split("=", 1)[1]) for _, slots in hosts)
    print(f"train.py {' '.join(train_args)}")
    print(f"world size {world_size} (hostfile: {len(hosts)} hosts); container WORLD_SIZE={env.get('WORLD_SIZE')}")
    if env.get("WORLD_SIZE") and int(env["WORLD_SIZE"]) != world_size:
        failures.append(f"container WORLD_SIZE {env['WORLD_SIZE']} != hostfile slots {world_size}")

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mistral"
        write_tree(root)
        ds_path = Path(tmp) / "ds_config.json"
        ds_path.write_text(files["ds_config.json"])
        old_ds_path = Path(tmp) / "old_ds_config.json"
        old_ds_path.write_text(json.dumps(OLD_DS_CONFIG))
        # The launcher's --training_arguments.deepspeed names the ConfigMap's mount; here, its copy.
        local_args = [str(ds_path) if a.endswith("/ds_config.json") else a for a in train_args]

        # 1. quinine
        try:
            quinfig = load_quinfig(root, local_args)
        except SystemExit as exit_:  # argparse: an unknown flag or a value of the wrong type
            failures.append(f"quinine refused train.py's arguments (exit {exit_.code}): a flag the schema does not know or a bad value")
            return failures
        except Exception as error:
            failures.append(f"quinine could not load {train_args[train_args.index('--config') + 1]}: {type(error).__name__}: {error}")
            return failures
        ta = quinfig.training_arguments
        print(
            f"quinine: loaded; dataset {quinfig.dataset.name}, model {quinfig.model.id}, effective_bsz {quinfig.effective_bsz}, "
            f"per-device {ta.per_device_train_batch_size}, fp16 {ta.fp16}, adam_beta2 {ta.adam_beta2}, max_steps {ta.max_steps}"
        )
        if ta.adam_beta2 != 0.999 or quinfig.model.config_path != "conf/models/mistral-micro.json":
            failures.append("quinine did not merge the inherited files (adam_beta2, model.config_path)")

        control = [a if a != train_args[train_args.index("--config") + 1] else OLD_CONFIG_PATH for a in local_args]
        try:
            load_quinfig(root, control)
            failures.append(f"control: {OLD_CONFIG_PATH} loaded, but its inherits do not exist beside it")
        except FileNotFoundError as error:
            print(f"control: {OLD_CONFIG_PATH} refused as expected ({error.filename})")

        # 2. Hugging Face's DeepSpeed integration, then DeepSpeed's parser
        warnings.simplefilter("ignore")
        try:
            args = training_arguments(quinfig, str(ds_path), world_size, Path(tmp) / "runs")
            config = deepspeed_config(args, world_size)
        except Exception as error:
            failures.append(f"the rendered ds_config.json is refused: {type(error).__name__}: {error}")
            return failures
        print(
            f"DeepSpeed: train_batch_size {config.train_batch_size} = micro {config.train_micro_batch_size_per_gpu} x "
            f"accumulation {config.gradient_accumulation_steps} x world {world_size}; ZeRO stage {config.zero_optimization_stage}; "
            f"fp16 {config.fp16_enabled}; optimizer {config.optimizer_name} {config.optimizer_params}; scheduler {config.scheduler_name}"
        )
        expected = {
            "train_batch_size": quinfig.effective_bsz,
            "train_micro_batch_size_per_gpu": ta.per_device_train_batch_size,
            "zero_optimization_stage": 1,
        }
        for key, value in expected.items():
            if getattr(config, key) != value:
                failures.append(f"DeepSpeed's {key} is {getattr(config, key)}, the job's is {value}")
        betas = list(config.optimizer_params.get("betas", []))
        if betas != [ta.adam_beta1, ta.adam_beta2]:
            failures.append(f"DeepSpeed's AdamW betas {betas} differ from Mistral's adam_beta1/2 {[ta.adam_beta1, ta.adam_beta2]}")
        if ta.fp16 and not config.fp16_enabled:
            failures.append("Mistral trains in fp16 but DeepSpeed's fp16 is off")

        try:
            deepspeed_config(training_arguments(quinfig, str(old_ds_path), world_size, Path(tmp) / "runs"), world_size)
            failures.append("control: the pre-d3bf450 DeepSpeed config (betas [0.9, 0.95], no batch sizes) was accepted")
        except Exception as error:
            print(f"control: the pre-d3bf450 DeepSpeed config refused as expected ({type(error).__name__}: {str(error).splitlines()[0][:120]})")
    return failures


def main(plan: str) -> int:
    failures = check(Path(plan))
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
