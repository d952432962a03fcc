"""`TrainingPlatform`: a whole stack's platform as one component, from its sections as a stack file
writes them (`trainstack:cluster`, `trainstack:gpuPools`, ...), validated by the stack file's own
models and rules (`infra.stack.StackConfig`), then built as `infra` builds a stack: networks with
the GPU NICs the machines need, the cluster and its pools, storage, the image, Kueue, JobSet, the
GPUDirect installers. The shipped program (`app.program`) and the package (`provider/`) take it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
from pulumi.errors import InputPropertyErrorDetails
from pydantic import ValidationError

from trainstack.core.errors import Problem, describe, key_path, reason
from trainstack.core.spec import plain, problem_of
from trainstack.infra import compose, contract
from trainstack.infra.context import StackContext
from trainstack.infra.platform import Place, Platform
from trainstack.infra.stack import StackConfig

TYPE = "trainstack:index:TrainingPlatform"

# Args field -> the stack file's key of that section.
SECTIONS = {
    "project": "gcp:project",
    "region": "gcp:region",
    "zone": "gcp:zone",
    "cluster": "trainstack:cluster",
    "network": "trainstack:network",
    "gpu_pool": "trainstack:gpuPool",
    "gpu_pools": "trainstack:gpuPools",
    "cpu_pool": "trainstack:cpuPool",
    "storage": "trainstack:storage",
    "image": "trainstack:image",
    "kueue": "trainstack:kueue",
    "labels": "trainstack:labels",
    "ephemeral": "trainstack:ephemeral",
}


@dataclass(frozen=True)
class TrainingPlatformArgs:
    """The platform sections of a stack file, each as the stack file writes it (a dict, camelCase
    keys; in Python snake_case keys, or the `infra.stack` section models, work too)."""

    project: str
    """The GCP project (the stack file's `gcp:project`)."""
    region: str
    """The region of the cluster (`gcp:region`)."""
    zone: str
    """The default zone of the GPU pools (`gcp:zone`)."""
    cluster: dict[str, Any]
    """The stack file's `trainstack:cluster`."""
    storage: dict[str, Any]
    """The stack file's `trainstack:storage`."""
    image: dict[str, Any]
    """The stack file's `trainstack:image`."""
    network: dict[str, Any] | None = None
    """The stack file's `trainstack:network`."""
    gpu_pool: dict[str, Any] | None = None
    """The stack file's `trainstack:gpuPool` (one pool; or `gpuPools`)."""
    gpu_pools: list[dict[str, Any]] | None = None
    """The stack file's `trainstack:gpuPools` (a list of pools; or `gpuPool`)."""
    cpu_pool: dict[str, Any] | None = None
    """The stack file's `trainstack:cpuPool`."""
    kueue: dict[str, Any] | None = None
    """The stack file's `trainstack:kueue`."""
    labels: dict[str, str] | None = None
    """The stack file's `trainstack:labels`."""
    ephemeral: dict[str, Any] | None = None
    """The stack file's `trainstack:ephemeral` (what `trainstack bench` sets)."""
    namespace: str | None = None
    """The namespace its jobs run in (granted the storage); default `default`."""
    queue: str | None = None
    """The LocalQueue its jobs use, whose NICs and installers they wait for; default the first."""
    stack: str | None = None
    """Names the default bucket and the stack label; default the Pulumi stack's name."""
    root: str | None = None
    """The folder image build contexts are relative to; default the working directory."""


PLATFORMS: dict[str, TrainingPlatform] = {}
"""The TrainingPlatforms this process made, by URN: the package's provider hands a program's reference to one
to a TrainingWorkload (app/deploy/package.py)."""


class TrainingPlatform(pulumi.ComponentResource):
    """A GKE training platform: networks (with the GPU NICs of each machine), the cluster, GPU and
    CPU pools, storage, the image, Kueue, JobSet and the GPUDirect installers, from the sections
    of a trainstack stack file."""

    kubeconfig: pulumi.Output[str]
    """A kubeconfig of the cluster (a secret; authenticates with gke-gcloud-auth-plugin)."""
    cluster_name: pulumi.Output[str]
    """The GKE cluster's name."""
    local_queue: pulumi.Output[str]
    """The Kueue LocalQueue jobs are submitted to."""
    queues: pulumi.Output[list[str]]
    """Every LocalQueue of the platform (one per GPU machine type), in order."""
    namespace: pulumi.Output[str]
    """The namespace jobs run in."""
    storage_claim: pulumi.Output[str]
    """The PersistentVolumeClaim of the shared storage."""
    nic_networks: pulumi.Output[list[str]]
    """The Kubernetes Network names of the job queue's extra GPU NICs, in interface order."""
    platform: pulumi.Output[dict[str, Any]]
    """The platform contract (versioned) a TrainingWorkload or a workload stack runs on."""

    def __init__(self, name: str, args: TrainingPlatformArgs, opts: pulumi.ResourceOptions | None = None, *, checked: StackConfig | None = None) -> None:
        """`checked`: the stack file's config `args` was made from, every rule run on it already (the
        shipped program), so it is not validated a second time."""
        if isinstance(args, dict):  # the package's provider passes the inputs as a dict
            args = TrainingPlatformArgs(**args)
        config, ctx = context(args, checked)
        super().__init__(TYPE, name, None, opts)
        self.urn.apply(lambda urn: PLATFORMS.setdefault(urn, self))
        self.built: Platform = compose.build(ctx, config, Place(self, name))
        """What a workload needs of the platform (TrainingWorkload reads it)."""
        self.stack_outputs: dict[str, Any] = self.built.outputs
        """The stack outputs the shipped program exports."""
        kube = self.built.kubernetes
        self.image_config = config.image
        """The image section (a TrainingWorkload checks its nodes' images against it)."""
        self.kubeconfig = pulumi.Output.from_input(self.stack_outputs[contract.KUBECONFIG_OUTPUT])
        self.cluster_name = pulumi.Output.from_input(self.stack_outputs["clusterName"])
        self.local_queue = pulumi.Output.from_input(kube.local_queue)
        self.queues = pulumi.Output.from_input([q.local_queue for q in config.queues])
        self.namespace = pulumi.Output.from_input(kube.namespace)
        self.storage_claim = pulumi.Output.from_input(kube.claim_name)
        self.nic_networks = pulumi.Output.from_input([nic.name for nic in kube.nics])
        self.platform = pulumi.Output.from_input(self.stack_outputs[contract.OUTPUT])
        self.register_outputs(
            {
                "kubeconfig": self.kubeconfig,
                "clusterName": self.cluster_name,
                "localQueue": self.local_queue,
                "queues": self.queues,
                "namespace": self.namespace,
                "storageClaim": self.storage_claim,
                "nicNetworks": self.nic_networks,
                "platform": self.platform,
            }
        )


def context(args: TrainingPlatformArgs, checked: StackConfig | None = None) -> tuple[StackConfig, StackContext]:
    """The platform's config and the stack context of `args`, checked as the stack file is (every rule, the build contexts'
    files included). Raises `pulumi.InputPropertiesError` naming each input as written
    (`gpuPools[1].nodeCount`). With `checked`, the stack file's config `args` was made from and
    checked already, its platform sections stand as they are."""
    root = Path(args.root) if args.root else Path.cwd()
    if checked is not None:
        return checked, _context(args, checked, root)
    config = validate(args)
    problems = compose.problems(config.image, root)
    if args.queue is not None and config.queue_of(args.queue) is None:
        problems.append(Problem(("queue",), args.queue, f"is not a queue of the platform ({', '.join(q.local_queue for q in config.queues)})"))
    if problems:
        raise input_error("TrainingPlatform", problems)
    return config, _context(args, config, root)


def _context(args: TrainingPlatformArgs, config: StackConfig, root: Path) -> StackContext:
    return StackContext(
        args.stack or pulumi.get_stack(), config.facts(args.queue), root, config.labels, config.expires, namespace=args.namespace, queue=args.queue
    )


def validate(args: TrainingPlatformArgs) -> StackConfig:
    """`args` as the StackConfig a stack file with these sections has (its models and rules)."""
    raw = {SECTIONS[f.name]: plain(getattr(args, f.name)) for f in dataclasses.fields(args) if f.name in SECTIONS}
    raw = {key: value for key, value in raw.items() if value is not None}
    try:
        return StackConfig.model_validate(raw, by_alias=True, by_name=True)
    except ValidationError as exc:
        raise input_error("TrainingPlatform", [problem_of(e, StackConfig) for e in exc.errors(include_url=False)]) from None


def package_key(key: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """A stack file's key path as the package's inputs name it: `trainstack:gpuPool` -> `gpuPool`,
    `gcp:zone` -> `zone`."""
    head = key[0] if key else ""
    return (head.split(":", 1)[1], *key[1:]) if isinstance(head, str) and head.startswith(("trainstack:", "gcp:")) else key


class InputProblems(pulumi.InputPropertiesError):
    """A component's bad inputs: the engine's error, and `problems`, each Problem by its path as
    the package's inputs name it (what `trainstack plan --program` reports)."""

    def __init__(self, component: str, problems: list[Problem]):
        self.problems = problems
        errors = [InputPropertyErrorDetails(property_path=key_path(p.key), reason=reason(p)) for p in problems]
        lines = "\n".join(f"  - {describe(p, component)}" for p in problems)
        super().__init__(f"{component} has {len(problems)} input problem(s):\n{lines}", errors)


def input_error(component: str, problems: list[Problem]) -> InputProblems:
    """One `pulumi.InputPropertiesError` of `problems`, each by its path as the package's inputs
    name it, its reason the value, the rule and the fix as the stack file's message gives them."""
    return InputProblems(component, [p.rekeyed(package_key) for p in problems])
