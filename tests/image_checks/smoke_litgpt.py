"""CPU smoke run of recipe 003's training path under the image's torch and Lightning pins.

lit-gpt at the pinned commit (Lightning-AI/lit-gpt@6178c7cc) is not on any package index and its
source is not available here, so this runs trainstack's own stand-in of its OpenWebText trainer
(pretrain/openwebtext_trainer.py) with the same calls, in the same order, against the installed
torch and lightning:

- a GPT block whose attention is lit_gpt.model's call at that commit,
  F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, scale=1/sqrt(head_size),
  is_causal=True) (torch 2.0 has no `scale`: Lightning-AI/litgpt#763);
- a LightningModule that builds the model in `configure_model` (a Lightning 2.1 hook), AdamW with
  foreach=False and betas (0.9, 0.95), per-step learning rate set in on_train_batch_start, the
  measured FLOPs of a meta-device copy with torch.utils.flop_counter.FlopCounterMode in
  on_fit_start (lit_gpt.speed_monitor.measure_flops);
- data read as the trainer reads it: np.memmap of uint16 train.bin / val.bin, random windows;
- L.Trainer with CSVLogger, ModelCheckpoint(every_n_train_steps, save_last), gradient
  accumulation, validation, max_steps; the CLI through jsonargparse.CLI(main), given the
  precision flag trainstack's launcher renders (read from the plan's JobSet).

Two optimizer steps of a 2-layer model, on one CPU process (devices=1, num_nodes=1 here: the
rendered --devices=8 is checked against GPUS_PER_NODE instead).

    python smoke_litgpt.py PLAN_DIR
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
from torch.utils.data import DataLoader, IterableDataset
from torch.utils.flop_counter import FlopCounterMode

# The image's trainer path (images/litgpt/Dockerfile) that the launcher must run.
ENTRYPOINT = "/opt/lit-gpt/pretrain/openwebtext_trainer.py"

VOCAB, BLOCK, LAYERS, HEADS, EMBD = 128, 32, 2, 2, 32
MICRO_BATCH, ACCUMULATION, STEPS = 2, 2, 2


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.Linear(EMBD, 3 * EMBD)
        self.proj = nn.Linear(EMBD, EMBD)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, HEADS, C // HEADS).transpose(1, 2) for t in (q, k, v))
        scale = 1.0 / math.sqrt(C // HEADS)
        # lit_gpt/model.py at 6178c7cc, CausalSelfAttention.scaled_dot_product_attention
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, scale=scale, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(EMBD), nn.LayerNorm(EMBD)
        self.attn = Attention()
        self.mlp = nn.Sequential(nn.Linear(EMBD, 4 * EMBD), nn.GELU(), nn.Linear(4 * EMBD, EMBD))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # GPT-NeoX (Pythia) parallel residual
        return x + self.attn(self.norm_1(x)) + self.mlp(self.norm_2(x))


class GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.wte = nn.Embedding(VOCAB, EMBD)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(EMBD)
        self.lm_head = nn.Linear(EMBD, VOCAB, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.wte(idx)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def measure_flops(model: nn.Module, x: torch.Tensor) -> int:
    counter = FlopCounterMode(model, display=False)
    with counter:
        model(x).sum().backward()
    return counter.get_total_flops()


class Module(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.module: nn.Module | None = None
        self.measured_flops: int | None = None

    def configure_model(self) -> None:
        self.module = GPT()

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.AdamW(self.module.parameters(), lr=6e-4, weight_decay=0.1, betas=(0.9, 0.95), foreach=False)

    def on_fit_start(self) -> None:
        with torch.device("meta"):
            meta = GPT()
            self.measured_flops = measure_flops(meta, torch.randint(0, 1, (MICRO_BATCH, BLOCK)))

    def on_train_batch_start(self, batch: Any, batch_idx: int) -> None:
        lr = 6e-4 * min(1.0, (self.trainer.fit_loop.total_batch_idx + 1) / 2)
        for optimizer in self.trainer.strategy.optimizers:
            for group in optimizer.param_groups:
                group["lr"] = lr

    def _loss(self, batch: Any) -> torch.Tensor:
        inputs, targets = batch
        logits = self.module(inputs)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        loss = self._loss(batch)
        self.log("train_loss", loss, on_step=True, on_epoch=False, prog_bar=False)
        return loss

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        self.log("val_loss", self._loss(batch), on_step=False, on_epoch=True)


class Dataset(IterableDataset):
    def __init__(self, data_file: Path, block_size: int):
        super().__init__()
        self.data_file, self.block_size = data_file, block_size

    def __iter__(self):
        data = np.memmap(self.data_file, dtype=np.uint16, mode="r")
        while True:
            i = torch.randint(len(data) - self.block_size, (1,)).item()
            x = torch.from_numpy(data[i : i + self.block_size].astype(np.int64))
            y = torch.from_numpy(data[i + 1 : i + 1 + self.block_size].astype(np.int64))
            yield x, y


RESULT: dict[str, Any] = {}


def main(devices: int = 1, num_nodes: int = 1, precision: str | None = None, data_dir: str = "data", out_dir: str = "out") -> None:
    """The trainer's entry point: jsonargparse builds its CLI from this signature."""
    trainer = L.Trainer(
        accelerator="cpu",
        devices=devices,
        num_nodes=num_nodes,
        strategy="auto",
        precision=precision,
        logger=CSVLogger(out_dir, "openwebtext", flush_logs_every_n_steps=1),
        callbacks=[ModelCheckpoint(dirpath=Path(out_dir) / "openwebtext", every_n_train_steps=STEPS, save_last=True)],
        max_steps=STEPS,
        max_epochs=1,
        limit_val_batches=1,
        accumulate_grad_batches=ACCUMULATION,
        log_every_n_steps=1,
        val_check_interval=STEPS * ACCUMULATION,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    L.seed_everything(1337, workers=True)
    model = Module()
    train = DataLoader(Dataset(Path(data_dir) / "train.bin", BLOCK), batch_size=MICRO_BATCH, num_workers=0)
    val = DataLoader(Dataset(Path(data_dir) / "val.bin", BLOCK), batch_size=MICRO_BATCH, num_workers=0)
    started = time.perf_counter()
    trainer.fit(model, train, val)
    RESULT.update(
        steps=trainer.global_step,
        loss=float(trainer.callback_metrics["train_loss"]),
        val_loss=float(trainer.callback_metrics.get("val_loss", float("nan"))),
        flops=model.measured_flops,
        seconds=time.perf_counter() - started,
        precision=str(trainer.precision),
        last=(Path(out_dir) / "openwebtext" / "last.ckpt").is_file(),
    )


def rendered_command(plan: Path) -> tuple[list[str], dict[str, str]]:
    (jobset_file,) = (plan / "manifests").glob("jobset-*.yaml")
    jobset = yaml.safe_load(jobset_file.read_text())
    for job in jobset["spec"]["replicatedJobs"]:
        for container in job["template"]["spec"]["template"]["spec"]["containers"]:
            args = container.get("args") or []
            if ENTRYPOINT in args:
                return args, {e["name"]: e.get("value", "") for e in container.get("env", [])}
    raise SystemExit(f"no container runs {ENTRYPOINT} in {jobset_file}")


def main_check(plan: str) -> int:
    from jsonargparse import CLI

    failures = []
    args, env = rendered_command(Path(plan))
    trainer_args = args[args.index(ENTRYPOINT) + 1 :]
    flags = dict(a[2:].split("=", 1) for a in trainer_args if a.startswith("--") and "=" in a)
    print(f"torch {torch.__version__}, lightning {L.__version__}; launcher: {' '.join(trainer_args)}")
    if flags.get("devices") != env.get("GPUS_PER_NODE"):
        failures.append(f"--devices={flags.get('devices')} but GPUS_PER_NODE={env.get('GPUS_PER_NODE')}")
    failures += [
        f"the trainer reads {name} from the environment; the job does not set it"
        for name in ("NNODES", "MODEL_NAME", "BATCH_SIZE", "MICRO_BATCH_SIZE", "MAX_ITERS")
        if not env.get(name)
    ]
    unknown = set(flags) - {"devices", "precision", "num_nodes"}
    if unknown:
        failures.append(f"the trainer's main() has no parameter for {sorted(unknown)}")

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        rng = np.random.default_rng(0)
        for name in ("train.bin", "val.bin"):
            rng.integers(0, VOCAB, size=4096, dtype=np.uint16).tofile(data / name)
        argv = ["--devices=1", "--num_nodes=1", f"--precision={flags.get('precision')}", f"--data_dir={data}", f"--out_dir={Path(tmp) / 'out'}"]
        try:
            CLI(main, args=argv)
        except Exception as error:  # the failure is the finding
            failures.append(f"training failed: {type(error).__name__}: {error}")
    if RESULT:
        print(
            f"trained {RESULT['steps']} steps x {ACCUMULATION} micro-batches in {RESULT['seconds']:.1f} s at {RESULT['precision']}: "
            f"loss {RESULT['loss']:.3f}, val_loss {RESULT['val_loss']:.3f}, measured FLOPs/micro-batch {RESULT['flops']}, last.ckpt {RESULT['last']}"
        )
        if RESULT["steps"] != STEPS or not math.isfinite(RESULT["loss"]) or not RESULT["last"] or not RESULT["flops"]:
            failures.append(f"unexpected result {RESULT}")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main_check(sys.argv[1]))
