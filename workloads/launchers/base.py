"""What a framework launcher takes and returns, and the torchrun invocation they share."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from trainstack.core import catalog, memory, models, rules
from trainstack.core.errors import CatalogError, Problem
from trainstack.workloads.spec import WorkloadSpec

# Launcher files (configs, scripts, hostfiles) are mounted read-only here.
CONFIG_DIR = "/workload/configs"

# Kubernetes sets this in every container of an Indexed Job's pod; `$(VAR)` in a container's
# command or args is expanded by the kubelet from the container's environment.
NODE_RANK = "$(JOB_COMPLETION_INDEX)"
JOB_ID = "$(JOB_IDENTIFIER)"


@dataclass(frozen=True)
class JobSpec:
    """The distributed job a launcher starts, as the training job names it.

    Attributes:
        name: the JobSet (or Job) name, also the run's identifier.
        gpus_per_node: GPUs each pod gets (all of its node's).
        hosts: every pod's DNS name, in node-rank order; `hosts[0]` is the rendezvous master.
        master_port: the rendezvous port on `hosts[0]`.
        storage_path: where the shared storage (checkpoints, logs) is mounted.
        workload: the stack's workload section (model, steps, batch sizes, precision, ...).
        gpu: the GPU model's short name (catalog `Gpu.name`), for launchers that tune by it.
    """

    name: str
    gpus_per_node: int
    hosts: tuple[str, ...]
    master_port: int
    storage_path: str
    workload: WorkloadSpec
    gpu: str = ""

    @property
    def nodes(self) -> int:
        return len(self.hosts)

    @property
    def master_addr(self) -> str:
        return self.hosts[0]

    @property
    def world_size(self) -> int:
        return self.nodes * self.gpus_per_node


@dataclass(frozen=True)
class ConfigFiles:
    """Files a launcher needs, served from one ConfigMap named `<job>-<name>` at `mount_path`."""

    name: str
    mount_path: str
    files: Mapping[str, str]


@dataclass(frozen=True)
class Launch:
    """How to start one node's share of the job.

    Attributes:
        command: the launcher's argv; `$(VAR)` references are expanded by Kubernetes.
        env: environment the launcher and the framework read.
        log_dir: where the run writes logs and TensorBoard events (on the shared storage).
        files: ConfigMap-served files.
        setup: shell lines run before `command` (directories, working directory).
    """

    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    log_dir: str = ""
    files: tuple[ConfigFiles, ...] = ()
    setup: tuple[str, ...] = ()


@runtime_checkable
class Launcher(Protocol):
    """A framework's launcher: what the framework would refuse, how it holds the job in GPU memory,
    its global batch, and the pure function from the job to its launch. One instance a framework
    sits in `launchers.LAUNCHERS`, whose type makes mypy check each against this protocol."""

    def problems(self, workload: WorkloadSpec, machine: catalog.Machine) -> list[Problem]:
        """What the framework would refuse on `machine`, checked before anything is created."""
        ...

    def training(self, workload: WorkloadSpec, machine: catalog.Machine) -> memory.Training:
        """How the framework holds the workload in GPU memory, for the fit estimate."""
        ...

    def global_batch(self, workload: WorkloadSpec, machine: catalog.Machine) -> int | None:
        """Sequences a training step: the stack's, else the framework's default where the launcher
        knows it (None where it does not)."""
        ...

    def launch(self, job: JobSpec) -> Launch:
        """The launch command, environment and ConfigMap-served files of `job`."""
        ...


class StackBatch:
    """For a launcher whose global batch is the stack's own `globalBatchSize` (None where unset)."""

    def global_batch(self, workload: WorkloadSpec, machine: catalog.Machine) -> int | None:
        return workload.global_batch_size


def torchrun(job: JobSpec) -> tuple[str, ...]:
    """`torchrun` with static rendezvous on the first pod: one process per GPU, node rank =
    the pod's completion index."""
    return (
        "torchrun",
        f"--nproc-per-node={job.gpus_per_node}",
        f"--nnodes={job.nodes}",
        f"--node-rank={NODE_RANK}",
        f"--master-addr={job.master_addr}",
        f"--master-port={job.master_port}",
    )


WORKLOAD = "trainstack:workload"


def model_problems(framework: str, workload: WorkloadSpec, known: Collection[str]) -> list[Problem]:
    """The workload's model, unless the framework's launcher knows it."""
    if workload.model in known:
        return []
    return [Problem((WORKLOAD, "model"), workload.model, f"the {framework} launcher has no recipe for it; known: {', '.join(sorted(known))}")]


def precision_problems(framework: str, workload: WorkloadSpec, supported: Sequence[str]) -> list[Problem]:
    """The workload's precision, unless the framework trains in it."""
    if workload.precision in supported:
        return []
    return [Problem((WORKLOAD, "precision"), workload.precision, f"{framework} trains in {', '.join(supported)}")]


def megatron_problems(workload: WorkloadSpec, machine: catalog.Machine, extra_layers: int | None = 0) -> list[Problem]:
    """Megatron-style splits: the attention heads and key/value groups divide over the tensor-
    parallel GPUs (rules.tensor_split), tensor x pipeline x context parallelism divides the GPUs, the
    global batch is a whole number of micro-batches on every data-parallel rank (Megatron-LM
    and NeMo refuse anything else at start-up), and the model's layers (with `extra_layers` for
    an embedding and loss counted as layers; None: a model the launcher cannot train, left to
    model_problems) split evenly over the pipeline stages and their virtual-pipeline chunks
    (rules.pipeline_split, Megatron-core's rule)."""
    found: list[Problem] = []
    split = workload.parallelism
    if (
        split
        and split.pipeline > 1
        and extra_layers is not None
        and (layers := _layers(workload.model))
        and (wrong := rules.pipeline_split(layers, split.pipeline, split.virtual_pipeline, extra_layers))
    ):
        whole = (layers + extra_layers) % split.pipeline == 0
        key, value = ("virtualPipeline", split.virtual_pipeline) if whole else ("pipeline", split.pipeline)
        found.append(Problem((WORKLOAD, "parallelism", key), value, f"{workload.model}: {wrong}"))
    if split and split.tensor > 1 and (shape := _shape(workload.model)) and (wrong := rules.tensor_split(shape.heads, shape.kv_heads, split.tensor)):
        found.append(Problem((WORKLOAD, "parallelism", "tensor"), split.tensor, f"{workload.model}: {wrong}"))
    gpus = machine.gpus(workload.nodes)
    size = split.model_parallel_size if split else 1
    if gpus % size:
        return [*found, Problem((WORKLOAD, "parallelism"), size, f"tensor x pipeline x context ({size}) must divide the job's {gpus} GPUs")]
    step = (workload.micro_batch_size or 1) * (gpus // size)
    if workload.global_batch_size is not None and workload.global_batch_size % step:
        found.append(
            Problem(
                (WORKLOAD, "globalBatchSize"), workload.global_batch_size, f"must be a multiple of microBatchSize x data-parallel size ({step} on {gpus} GPUs)"
            )
        )
    return found


def _layers(model: str) -> int | None:
    """The model's transformer layers; None for a model without a shape (model_problems says so)."""
    shape = _shape(model)
    return shape.layers if shape else None


def _shape(model: str) -> models.ModelShape | None:
    """The model's shape; None for a model without one (model_problems says so)."""
    try:
        return models.model_shape(model)
    except CatalogError:
        return None


def training(
    workload: WorkloadSpec,
    machine: catalog.Machine,
    *,
    zero_stage: int,
    master_weights: bool,
    seq_length: int,
    recompute: memory.Recompute = "none",
    fp32_grads: bool | None = None,
    fp32_grad_copy: bool = False,
    master_remainders: bool = False,
    optimizer: str = "te-fused-adam",
) -> memory.Training:
    """The memory side of `workload` on `machine`: its parallel split, precision and batch, and
    its own zeroStage, masterWeights, recompute and seqLength where set, else the framework's
    defaults (the arguments; how its optimizer holds gradients and master weights and which
    implementation steps it, memory.Training)."""
    split = workload.parallelism
    tensor, pipeline, context = (split.tensor, split.pipeline, split.context) if split else (1, 1, 1)
    data = max(1, machine.gpus(workload.nodes) // (tensor * pipeline * context))
    return memory.Training(
        tensor=tensor,
        pipeline=pipeline,
        virtual_pipeline=split.virtual_pipeline if split else None,
        data=data,
        context=context,
        sequence_parallel=bool(split and split.sequence_parallel),
        precision=workload.precision,
        zero_stage=workload.zero_stage if workload.zero_stage is not None else zero_stage,
        master_weights=workload.master_weights if workload.master_weights is not None else master_weights,
        recompute=workload.recompute or recompute,
        fp32_grads=fp32_grads,
        fp32_grad_copy=fp32_grad_copy,
        master_remainders=master_remainders,
        optimizer=optimizer,
        micro_batch=workload.micro_batch_size or 1,
        seq_length=workload.seq_length or seq_length,
    )


def setting_problems(framework: str, workload: WorkloadSpec, zero_stages: Collection[int]) -> list[Problem]:
    """The workload's zeroStage, unless the framework can shard that far."""
    if workload.zero_stage is None or workload.zero_stage in zero_stages:
        return []
    return [Problem((WORKLOAD, "zeroStage"), workload.zero_stage, f"{framework} shards with ZeRO stage {', '.join(map(str, sorted(zero_stages)))} only")]
