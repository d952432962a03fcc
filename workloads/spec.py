"""The workload's section, `trainstack:workload` (the training job as a stack file writes it), and
its rules against the platform it runs on.

`WorkloadSpec` holds what a user decides of the job, in the stack file's shape, with the rules
between its own keys. `platform_problems` checks it against its platform's contract
(infra/contract.py), one path for a platform stack's job and a workload stack's, naming each
platform key as the user wrote it (`Where`); `fleet_problems` adds what a job on a fleet cannot have.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from trainstack.components.image import ImageSpec
from trainstack.components.storage import KINDS
from trainstack.core import catalog, rules
from trainstack.core.errors import Problem
from trainstack.core.spec import (
    INT32_MAX,
    AbsolutePath,
    Dns1035Name,
    Duration,
    EnvName,
    K8sName,
    Quantity,
    Section,
    by_rule,
    rule_errors,
)
from trainstack.infra import contract
from trainstack.infra.contract import Contract

# The largest GPU pool a config describes (rules.NODE_COUNT), so the most nodes a job can ask for.
MAX_POOL_NODES = rules.POOL_NODES_MAX


def _pool_sized(nodes: int) -> int:
    if nodes > MAX_POOL_NODES:
        raise PydanticCustomError("rule", "must be at most {n}: no GKE node pool holds more nodes (1000 a pool per zone)", {"n": MAX_POOL_NODES})
    return nodes


class Secure(Section):
    """A secret value: `{secure: ...}` as `pulumi config set --secret` writes it in a stack file
    (the ciphertext, offline), or, under `pulumi up`, the value the engine decrypted. It stays a
    Pulumi secret all the way to the resource that uses it."""

    secure: str
    """The ciphertext `pulumi config set --secret` wrote, or the value the engine decrypted."""


class Profiling(Section):
    """An Nsight Systems capture of a step range."""

    enabled: bool = False
    """Capture an Nsight Systems profile."""
    start_step: Annotated[int, Field(ge=0)] = 0
    """The first step captured."""
    end_step: Annotated[int, Field(ge=0)] = 0
    """The step the capture ends at."""

    @model_validator(mode="after")
    def _rules(self) -> Profiling:
        rule_errors(
            "Profiling",
            [Problem(("endStep",), self.end_step, f"must be greater than startStep ({self.start_step})")]
            if self.enabled and self.end_step <= self.start_step
            else [],
        )
        return self


class TopologyRequest(Section):
    """Kueue Topology Aware Scheduling: pack the job's pods within one topology domain."""

    mode: Literal["preferred", "required"] = "preferred"
    """`preferred`: pack the pods where Kueue can; `required`: admit the job only where one domain holds
    every pod."""
    level: Literal[
        "cloud.google.com/gce-topology-block",
        "cloud.google.com/gce-topology-subblock",
        "cloud.google.com/gce-topology-host",
        "kubernetes.io/hostname",
    ] = "kubernetes.io/hostname"
    """The topology level (a node label) the pods are packed within; the default as recipe 000 (gpu-recipes
    values.yaml tasSettings)."""


class Resiliency(Section):
    """The resiliency supervisor (recipe 000): host monitors report faults, the controller
    hot-swaps faulty nodes and restarts or rescales the job by data-parallel replicas."""

    enabled: bool = False
    """Run the supervisor beside the job."""
    heartbeat_polling_period_s: Annotated[int, Field(ge=1)] = 15
    """How often it polls the workers, in seconds."""
    heartbeat_timeout_s: Annotated[int, Field(ge=1)] = 30
    """Seconds without a heartbeat after which a worker counts as hung."""
    max_in_job_restarts: Annotated[int, Field(ge=0)] = 0
    """In-process restarts before the job is restarted; 0: none."""
    max_workload_restarts: Annotated[int, Field(ge=0)] = 0
    """Job restarts before a faulty node is hot-swapped; 0: at once."""
    nodes_per_data_parallel_replica: Annotated[int, Field(ge=1)] | None = None
    """Nodes one data-parallel replica spans; default: all the job's nodes."""
    min_data_parallel_replicas: Annotated[int, Field(ge=1)] = 1
    """The fewest data-parallel replicas the job shrinks to."""
    workload_scaling: bool = True
    """Drop or add whole data-parallel replicas as nodes fail or return."""
    pod_termination_threshold_s: Annotated[int, Field(ge=1)] = 60
    """How long a pod may take to terminate before the supervisor acts, in seconds."""
    workload_downtime_threshold_s: Annotated[int, Field(ge=1)] = 180
    """How long the job may stay down before the supervisor acts, in seconds."""


class Parallelism(Section):
    """How the model is split across GPUs (Megatron-style); unset keys keep the framework's default."""

    tensor: Annotated[int, Field(ge=1)] = 1
    """Tensor-parallel size: the GPUs each layer is split over."""
    pipeline: Annotated[int, Field(ge=1)] = 1
    """Pipeline-parallel size: the stages the layers are split into."""
    virtual_pipeline: Annotated[int, Field(ge=2)] | None = None
    """Virtual pipeline size: model chunks per pipeline stage (the interleaved schedule)."""
    context: Annotated[int, Field(ge=1)] = 1
    """Context-parallel size: the GPUs each sequence is split over."""
    sequence_parallel: bool = False
    """Sequence parallelism within the tensor-parallel group."""

    @model_validator(mode="after")
    def _rules(self) -> Parallelism:
        problems: list[Problem] = []
        if self.virtual_pipeline is not None and self.pipeline == 1:
            problems.append(Problem(("virtualPipeline",), self.virtual_pipeline, "interleaving needs pipeline > 1"))
        if self.sequence_parallel and self.tensor == 1:
            problems.append(Problem(("sequenceParallel",), True, "sequence parallelism needs tensor > 1"))
        rule_errors("Parallelism", problems)
        return self

    @property
    def model_parallel_size(self) -> int:
        """GPUs one model replica spans."""
        return self.tensor * self.pipeline * self.context


class Dataset(Section):
    """Training data copied from Cloud Storage to node-local disk before the job starts."""

    source: Annotated[str, by_rule(rules.GCS_URI)]
    """The Cloud Storage URI copied."""
    path: AbsolutePath = "/data"
    """Where it is copied, on the node's local disk (a path in the container)."""


class Preflight(Section):
    """The preflight: checks of the job's own nodes and fabric in its pods before the trainer starts
    (workloads/preflight.py); `true`/`false` for all defaults, or on with keys overridden."""

    enabled: bool = True
    """Run it; off: the trainer starts as soon as its pods do."""
    dcgm_level: Literal[0, 1, 2, 3] = 2
    """The DCGM diagnostic's level (`dcgmi diag -r`; 2: about two minutes); 0: none."""
    fabric: bool | None = None
    """The NCCL test across the nodes; unset: on every multi-node job whose machine has a GPUDirect stack
    and an nccl-tests image."""
    bus_bandwidth: Annotated[float, Field(gt=0)] | None = None
    """The bus bandwidth (GB/s) the NCCL test must reach; unset: the machine's mark (the catalog's)."""
    collectives: list[Literal["all_gather", "all_reduce"]] = ["all_gather", "all_reduce"]
    """The collectives measured."""
    retries: Annotated[int, Field(ge=0, le=10)] = 2
    """Whole-job restarts a failed preflight may take (after Kueue replaced the node it tainted), on top
    of maxRestarts."""


def _preflight_switch(value: Any) -> Any:
    return {"enabled": value} if isinstance(value, bool) else value


class WorkloadSpec(Section):
    """`trainstack:workload`: the training job."""

    name: Dns1035Name
    """The job's name: its JobSet (or Job), its pods' DNS subdomain and, with runId, its run's identity."""
    namespace: Annotated[K8sName, by_rule(rules.workload_namespace)] = "trainstack"
    """The stack's own namespace, created with Pod Security labels. Stacks made before it was the
    default set `namespace: default`: moving a live job's namespace replaces its objects."""
    framework: Literal["nemo2", "megatron-bridge", "nemo-megatron", "litgpt", "deepspeed"]
    """The training framework; its launcher builds each pod's command."""
    model: str
    """The model trained, by the name its framework's recipe knows (core/models.py gives its shape for the
    memory estimate)."""
    nodes: Annotated[int, Field(ge=1), AfterValidator(_pool_sized)]  # bounded before anything scales with it
    """The nodes the job runs on, one pod each."""
    steps: Annotated[int, Field(ge=1)]
    """Training steps."""
    checkpoint_interval: Annotated[int, Field(ge=1)] | None = None
    """Steps between checkpoints; unset: the framework's default."""
    precision: Literal["bf16", "fp8", "fp16", "fp32"] = "bf16"
    """The training precision."""
    global_batch_size: Annotated[int, Field(ge=1)] | None = None
    """The global batch size; unset: the framework's default."""
    micro_batch_size: Annotated[int, Field(ge=1)] | None = None
    """The micro batch size of each GPU; unset: the framework's default."""
    seq_length: Annotated[int, Field(ge=1)] | None = None
    """The sequence length; unset: the framework's default."""
    profiling: Profiling = Profiling()
    """An Nsight Systems capture of a step range."""
    overrides: list[str] = []
    """Further `key=value` settings handed to the framework's launcher."""
    env: dict[EnvName, str | Secure] = {}
    """Environment variables of the training container, applied last; a `{secure: ...}` value stays a
    Pulumi secret and reaches the pods through a Kubernetes Secret."""
    max_restarts: Annotated[int, Field(ge=0, le=INT32_MAX)] = 0
    """Whole-job restarts (JobSet) or pod retries (Job)."""
    controller: Literal["jobset", "job"] = "jobset"
    """`jobset`: a JobSet; `job`: an Indexed batch Job and its headless Service."""
    topology: TopologyRequest | None = TopologyRequest()
    """Kueue Topology Aware Scheduling for the job's pods: the default (`{}`, preferred at
    kubernetes.io/hostname) applies where the queue has Topology Aware Scheduling and asks for nothing
    where it has none; null: never."""
    parallelism: Parallelism | None = None
    """How the model is split over the GPUs; unset: the framework's own default split."""
    dataset: Dataset | None = None
    """Training data copied to node-local disk before the job starts."""
    shared_memory: Quantity = "250Gi"
    """The size of each pod's /dev/shm."""
    resiliency: Resiliency = Resiliency()
    """The resiliency supervisor."""
    tensorboard: bool = False
    """Run TensorBoard on the job's logs in the shared file system."""
    run_id: K8sName | None = None
    """The run's identity (JOB_IDENTIFIER = <name>-<runId>): its logs and checkpoints, and what an
    automatic resume picks up. Keep it to resume a run; change it to start a new one."""
    max_runtime: Duration = "24h"
    """A cap on the run's wall time (the resilient NeMo 2.0 script's --max-runtime)."""
    queue: K8sName | None = None
    """The LocalQueue the job is submitted to, which picks the machine it runs on (one queue per
    GPU machine type); default: the first pool's."""
    priority_class: K8sName | None = None
    """A WorkloadPriorityClass of the platform's Kueue (label kueue.x-k8s.io/priority-class)."""
    zero_stage: Annotated[int, Field(ge=0, le=3)] | None = None
    """How model states are sharded over data-parallel ranks: 1 the optimizer (Megatron/NeMo's distributed
    optimizer, DeepSpeed ZeRO-1), 2 gradients too, 3 weights too (DeepSpeed, FSDP); unset: the
    framework's default (see its launcher)."""
    master_weights: bool | None = None
    """Keep 16-bit weights with fp32 master copies (NeMo megatron_amp_O2); unset: the framework's default."""
    recompute: Literal["none", "selective", "full"] | None = None
    """Recompute activations in the backward pass: none, selected ones, or all; unset: the framework's
    default."""
    memory_check: Literal["error", "warn", "off"] = "error"
    """The GPU memory estimate before anything is created: error (refuse), warn, or off."""
    preflight: Annotated[Preflight, BeforeValidator(_preflight_switch)] = Preflight()
    """The preflight gate: node checks and an NCCL test on the job's own nodes before the trainer starts."""
    own_identity: bool = True
    """A workload stack on a trainstack platform: the job runs as a service account of its own
    that may write only <bucket>/<name>/, where it keeps its logs and checkpoints, so no other
    job can overwrite them. Off: the platform's shared account and the bucket's root."""

    @model_validator(mode="after")
    def _rules(self) -> WorkloadSpec:
        problems: list[Problem] = []
        if self.checkpoint_interval is not None and self.checkpoint_interval > self.steps:
            problems.append(Problem(("checkpointInterval",), self.checkpoint_interval, f"must not exceed steps ({self.steps})"))
        if self.profiling.enabled and self.profiling.end_step > self.steps:
            problems.append(Problem(("profiling", "endStep"), self.profiling.end_step, f"must not exceed steps ({self.steps})"))
        for i, override in enumerate(self.overrides):
            if "=" not in override:
                problems.append(Problem(("overrides", i), override, "must be key=value"))
        if self.resiliency.enabled and self.controller != "jobset":
            problems.append(Problem(("controller",), self.controller, "the resiliency supervisor acts on JobSets; use controller: jobset"))
        rule_errors("WorkloadSpec", problems)
        return self

    @property
    def plain_env(self) -> dict[str, str]:
        return {k: v for k, v in self.env.items() if isinstance(v, str)}

    @property
    def secret_env(self) -> dict[str, str]:
        return {k: v.secure for k, v in self.env.items() if isinstance(v, Secure)}

    def replica_problems(self) -> list[Problem]:
        """How the supervisor's data-parallel replicas fail to fit `nodes` (keys relative to
        `trainstack:workload`). Checked with the cross-section rules, after `nodes` is known
        to fit the GPU pool, so that a wrong node count reports the pool's limit first."""
        resiliency = self.resiliency
        if not resiliency.enabled:
            return []
        problems: list[Problem] = []
        per_replica = self.nodes_per_data_parallel_replica
        if self.nodes % per_replica:
            problems.append(
                Problem(("resiliency", "nodesPerDataParallelReplica"), per_replica, f"must divide nodes ({self.nodes}) into whole data-parallel replicas")
            )
        elif resiliency.min_data_parallel_replicas > self.nodes // per_replica:
            problems.append(
                Problem(
                    ("resiliency", "minDataParallelReplicas"),
                    resiliency.min_data_parallel_replicas,
                    f"must not exceed the {self.nodes // per_replica} replicas {self.nodes} nodes hold",
                )
            )
        return problems

    @property
    def nodes_per_data_parallel_replica(self) -> int:
        """Nodes one data-parallel replica spans (all nodes unless the supervisor says otherwise)."""
        return self.resiliency.nodes_per_data_parallel_replica or self.nodes

    @property
    def data_parallel_replicas(self) -> int:
        return self.nodes // self.nodes_per_data_parallel_replica


def priority_problems(workload: WorkloadSpec, known: list[str], source: str) -> Iterator[Problem]:
    """The workload's priority class, unless the platform's Kueue has it."""
    if workload.priority_class is not None and workload.priority_class not in known:
        yield Problem(
            ("trainstack:workload", "priorityClass"),
            workload.priority_class,
            f"is not a priority class of the platform ({source}: {', '.join(known) or 'none'})",
        )


def workload_problems(
    workload: WorkloadSpec,
    machine: catalog.Machine,
    max_nodes: int,
    storage_kind: str,
    topology_aware: bool,
    sources: dict[str, str],
) -> Iterator[Problem]:
    """Rules between a workload and the GPU pool, queue and storage it runs on. `sources` names
    where the pool's `nodes`, `machine`, `storage` and `topology` come from, as the user wrote
    them (`trainstack:gpuPool`, `trainstack:platform.existingCluster.nodeCount`, a platform stack)."""
    if workload.topology is not None and "topology" in workload.model_fields_set and not topology_aware:
        yield Problem(
            ("trainstack:workload", "topology"),
            workload.topology.level,
            f"the queue has no Topology Aware Scheduling ({sources['topology']}), so Kueue would never admit a job asking for a topology; set topology: null",
        )
    if workload.topology is not None and (wrong := rules.topology_admissible(workload.topology.mode, workload.topology.level, workload.nodes)):
        yield Problem(("trainstack:workload", "topology", "mode"), workload.topology.mode, wrong)
    if workload.nodes > max_nodes:
        yield Problem(("trainstack:workload", "nodes"), workload.nodes, f"exceeds the GPU pool's maximum of {max_nodes} nodes ({sources['nodes']})")
    else:
        for loc, value, rule in workload.replica_problems():
            yield Problem(("trainstack:workload", *loc), value, rule)
    gpu = machine.gpu
    if workload.precision not in gpu.peak_tflops and workload.precision != "fp32":
        yield Problem(
            ("trainstack:workload", "precision"),
            workload.precision,
            f"{machine.name} ({gpu.name}) has no {workload.precision} tensor cores ({sources['machine']})",
        )
    if workload.resiliency.enabled and workload.framework != "nemo2":
        yield Problem(("trainstack:workload", "resiliency", "enabled"), True, "the resiliency supervisor drives NeMo 2.0 jobs only (framework: nemo2)")
    elif workload.resiliency.enabled and (wrong := rules.host_monitor_reachable(machine)):
        yield Problem(("trainstack:workload", "resiliency", "enabled"), True, f"{wrong} ({sources['machine']})")
    if workload.tensorboard and KINDS[storage_kind].fuse:
        yield Problem(
            ("trainstack:workload", "tensorboard"),
            True,
            f"TensorBoard reads the shared file system; it needs storage kind filestore or nfs ({sources['storage']})",
        )


@dataclass(frozen=True)
class Where:
    """Where a job's platform facts come from, as the user wrote them, for the messages: `queues`
    the platform whose queues a job picks from (`this stack`, `the platform`), `priorities` the
    key or stack of its priority classes, and `sources` the keys of the job's queue's `nodes`,
    `machine`, `storage` and `topology` (given that queue's contract)."""

    queues: str
    priorities: str
    sources: Callable[[Contract], dict[str, str]]


def platform_problems(workload: WorkloadSpec, terms: Contract, where: Where) -> list[Problem]:
    """How a job fails to fit its platform (`terms`, its contract): its queue, then the nodes,
    machine, storage and topology of that queue's pools, and its priority class. One path for a
    platform stack's job and a workload stack's."""
    problems: list[Problem] = []
    queue = contract.for_queue(terms, workload.queue)
    if queue is None:
        queues = ", ".join(contract.queues(terms))
        problems.append(Problem(("trainstack:workload", "queue"), workload.queue, f"is not a queue of {where.queues} ({queues})"))
    else:
        machine = catalog.machine(queue.gpu_machine_type)
        problems += workload_problems(workload, machine, queue.gpu_nodes, queue.storage_kind, queue.topology_aware, where.sources(queue))
    if terms.priority_classes is not None:
        problems += priority_problems(workload, list(terms.priority_classes), where.priorities)
    return problems


def namespace_problems(workload: WorkloadSpec, terms: Contract, where: str) -> list[Problem]:
    """A job on a platform made elsewhere (`where`, as the user named it) runs in its namespace:
    unset, it takes the platform's; set, it must be that one."""
    if "namespace" in workload.model_fields_set and workload.namespace != terms.namespace:
        rule = f"the platform's storage and service account are in {terms.namespace!r} ({where})"
        return [Problem(("trainstack:workload", "namespace"), workload.namespace, rule)]
    return []


def fleet_problems(workload: WorkloadSpec, image: ImageSpec, terms: Contract, stack: str) -> Iterator[Problem]:
    """What a job on a fleet (`terms`, its queue's contract; `stack`, the fleet's stack as the user
    named it) cannot have: only its JobSet is dispatched to a worker; anything beside it would run
    on the manager, which has no GPU and not the worker's storage."""
    where = f"platform stack {stack} is a fleet"
    if workload.resiliency.enabled:
        yield Problem(
            ("trainstack:workload", "resiliency", "enabled"),
            True,
            f"{where}: the supervisor would run on the manager, not beside the job; set resiliency.enabled: false",
        )
    if workload.tensorboard:
        yield Problem(("trainstack:workload", "tensorboard"), True, f"{where}: TensorBoard would run on the manager, without the job's storage")
    if workload.own_identity:
        yield Problem(("trainstack:workload", "ownIdentity"), True, f"{where}: the job runs as each worker's {terms.service_account!r}; set ownIdentity: false")
    if image.build is not None:
        yield Problem(("trainstack:image", "build"), "...", f"{where}: each worker's nodes pull from their own registry only; use image.prebuilt")
    if workload.controller != "jobset":
        yield Problem(
            ("trainstack:workload", "controller"),
            workload.controller,
            f"{where}: an Indexed Job's DNS Service would stay on the manager; a JobSet makes its own on the worker (controller: jobset)",
        )
    if catalog.machine(terms.gpu_machine_type).accelerator_topology:
        yield Problem(
            ("trainstack:workload", "nodes"),
            workload.nodes,
            f"{where}: a {terms.gpu_machine_type} job's ComputeDomain is not dispatched with it; run it on its platform",
        )
