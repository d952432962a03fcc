"""The training job: one pod per node, all admitted together by Kueue.

By default a JobSet (`jobset.x-k8s.io/v1alpha2`) with one replicated job of N indexed pods;
with `controller="job"`, an Indexed batch Job and the headless Service that names its pods.
Each pod takes every GPU of a node of the GPU pool. Pods find the rendezvous master by the
stable DNS name the controller gives the pod of index 0, derived here in one place
(`pod_hosts`) for the pods' environment and for the launchers (DeepSpeed's hostfile).

The pod is composed from pieces (`pod.PodParts`): the base (GPU, node selection, shared
memory, local SSD, the shared storage claim, the host NVIDIA libraries), an optional dataset
download, the machine's GPUDirect profile, the launcher's files and environment, and the
user's environment, last.

The job carries the LocalQueue label and no `spec.suspend`: Kueue's admission webhook suspends
a job that names a queue as it is created, admits it whole (and, with a topology request,
places it within one topology domain) and unsuspends it. Leaving `suspend` to Kueue keeps it out
of Pulumi's inputs, so after `pulumi refresh` the live `suspend: false` is no difference and a
running job is never replaced for it. Pulumi does not wait for the job to run
(`pulumi.com/skipAwait`); a changed job is replaced, not patched, because a running job's pod
template is immutable.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import pulumi
import pulumi_kubernetes as k8s

from trainstack.components.args import Args, Problem, one_of
from trainstack.components.options import Children
from trainstack.components.pod_security import POD_SECURITY, container_security
from trainstack.core import catalog, names, rules
from trainstack.workloads import dranet, imex, preflight
from trainstack.workloads.launchers.base import Launch
from trainstack.workloads.pod import (
    REPLICATED_JOB,
    WORKLOAD_CONTAINER,
    Json,
    PodParts,
    compose,
    empty_dir,
    env_list,
    host_path,
    mount,
    nvidia_libraries,
)
from trainstack.workloads.spec import Dataset

MASTER_PORT = 6002

SHARED_VOLUME = "shared"
SHM_VOLUME = "dshm"
LOCAL_SSD_VOLUME = "local-ssd"
LOCAL_SSD_HOST_DIR = "/mnt/stateful_partition/kube-ephemeral-ssd"  # GKE's ephemeral-storage SSD RAID
LOCAL_SSD_DIR = "/ssd"
DATASET_VOLUME = "dataset"

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
CONFIG_HASH_ANNOTATION = "trainstack/config-hash"

# Shell run before the launcher: put the NCCL plugin first on the library path (keeping the
# image's own), source the plugin's NCCL settings if it ships a script, then the launcher's
# setup lines. Kubernetes has already expanded `$(VAR)` references in the launcher's argv.
_PROLOGUE = """\
if [ -n "${NCCL_PLUGIN_PATH:-}" ]; then export LD_LIBRARY_PATH="${NCCL_PLUGIN_PATH}:${LD_LIBRARY_PATH:-}"; fi
if [ -n "${NCCL_INIT_SCRIPT:-}" ]; then source "${NCCL_INIT_SCRIPT}"; fi
set -e
"""
_EXEC = 'echo "node ${JOB_COMPLETION_INDEX} of ${NNODES}: $*"\nexec "$@"\n'

Controller = Literal["jobset", "job"]


@dataclass(frozen=True)
class Topology(Args):
    """A Kueue Topology Aware Scheduling request: keep the pods within one domain of `level`,
    `required` or only `preferred`."""

    level: str
    mode: Literal["preferred", "required"] = "preferred"

    # Kueue podset annotations kueue.x-k8s.io/podset-{required,preferred}-topology.
    _checks = {"mode": one_of("preferred", "required")}


def pod_hosts(name: str, controller: Controller, nodes: int) -> tuple[str, ...]:
    """Every pod's DNS name (resolvable in the job's namespace), in completion-index order: its
    hostname under the subdomain named like the job (JobSet's, or the Indexed Job's headless
    Service)."""
    return tuple(f"{names.pod_hostname(name, controller, i)}.{name}" for i in range(nodes))


@dataclass(frozen=True)
class TrainingJobArgs(Args):
    """One distributed training job.

    Attributes:
        name: the JobSet (or Job) name; also its pods' DNS subdomain and the run identifier.
        namespace: where it runs.
        image: the training image.
        machine: the GPU machine of the pool (GPUs per pod, accelerator label, local SSDs).
        nodes: pods, one per node.
        node_selector, tolerations: what lands a pod on the GPU pool (`GpuNodePool`'s).
        queue: the Kueue LocalQueue it is submitted to.
        service_account: the pods' Kubernetes service account (Workload Identity).
        claim_name: the shared storage's PersistentVolumeClaim, mounted at `mount_path`.
        mount_path: where the shared storage is mounted.
        launch: what each pod runs (from the framework's launcher).
        gpudirect: the machine's GPUDirect pieces (from its profile).
        controller: "jobset", or "job" for an Indexed batch Job.
        max_restarts: JobSet: whole-job restarts after a failure; Job: pod retries.
        topology: Kueue Topology Aware Scheduling request, or None for none.
        shared_memory: size of /dev/shm.
        gcsfuse: the claim is a Cloud Storage FUSE volume (the pod needs the sidecar).
        dataset: data to copy from Cloud Storage to node-local disk before training.
        env: the user's environment, applied last.
        run_id: the run's identity within the job's name (`JOB_IDENTIFIER` = `<name>-<run_id>`),
            which names its logs and checkpoints; None: the job's name alone.
        secret_env: the user's secret environment: kept in a Kubernetes Secret `<name>-env`
            (the values stay Pulumi secrets) and referenced from the pod, never inlined.
        priority_class: the Kueue WorkloadPriorityClass of the job, or None for Kueue's default.
        preflight: the preflight gate (workloads/preflight.py), or None for none.
        cpu_pool: the CPU node pool the preflight's warden runs on (None: no warden, no taints).
        dranet: the pods claim their node's RDMA NICs through GKE's DRANET (a ResourceClaimTemplate
            `<name>-rdma` of the job's, workloads.dranet) instead of joining their networks.

    Order it after what it needs (controllers, queue, claim, networks, node installers) with
    `opts.depends_on`.
    """

    _checks = {
        # The Job's headless Service is named like it: a DNS-1035 label.
        "name": rules.DNS1035_NAME,
        "namespace": rules.K8S_NAME,
        "nodes": rules.POSITIVE,
        "queue": rules.K8S_NAME,
        "service_account": rules.K8S_NAME,
        "claim_name": rules.K8S_NAME,
        "mount_path": rules.ABSOLUTE_PATH,
        "controller": one_of("jobset", "job"),
        # JobSet failurePolicy.maxRestarts and Job backoffLimit are int32.
        "max_restarts": rules.Bounds(0, rules.INT32_MAX, "a Kubernetes int32"),
        "shared_memory": rules.QUANTITY,
        "env": rules.env_names,
        "secret_env": rules.env_names,
        "priority_class": rules.K8S_NAME,
    }

    name: str
    namespace: str
    image: pulumi.Input[str]
    machine: catalog.Machine
    nodes: int
    node_selector: Mapping[str, str]
    tolerations: Sequence[Mapping[str, str]]
    queue: str
    service_account: str
    claim_name: str
    mount_path: str
    launch: Launch
    gpudirect: PodParts = field(default_factory=PodParts)
    controller: Controller = "jobset"
    max_restarts: int = 0
    topology: Topology | None = None
    shared_memory: str = "250Gi"
    gcsfuse: bool = False
    dataset: Dataset | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    run_id: str | None = None
    secret_env: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    priority_class: str | None = None
    preflight: preflight.Gate | None = None
    cpu_pool: str | None = None
    dranet: bool = False

    def _cross(self) -> Iterator[Problem]:
        # The pod, Job and Service names the JobSet (or Job) controller derives from `name`.
        if self.nodes > 0 and (message := names.too_long(self.name, self.controller, self.nodes)):
            yield Problem(("name",), self.name, message)

    @property
    def run_name(self) -> str:
        return f"{self.name}-{self.run_id}" if self.run_id else self.name

    @property
    def hosts(self) -> tuple[str, ...]:
        return pod_hosts(self.name, self.controller, self.nodes)


def job_topology(args: TrainingJobArgs) -> Topology | None:
    """The job's Topology Aware Scheduling request: as asked, except that where TAS places the job
    at all, a job that fits one multi-node NVLink domain is required to stay in one (unless it
    already requires a level within it), as Cluster Toolkit's gke-a4x example requires."""
    asked = args.topology
    if asked is None or not imex.within_one_domain(args.machine, args.nodes):
        return asked
    if asked.mode == "required" and asked.level in imex.WITHIN_DOMAIN:
        return asked
    return Topology(imex.DOMAIN_LEVEL, "required")


def base_parts(args: TrainingJobArgs) -> PodParts:
    """What every training pod has, whatever the machine and framework."""
    annotations = {"kubectl.kubernetes.io/default-container": WORKLOAD_CONTAINER}
    if (topology := job_topology(args)) is not None:
        annotations[f"kueue.x-k8s.io/podset-{topology.mode}-topology"] = topology.level
    if args.gcsfuse:
        # Inject the Cloud Storage FUSE sidecar; "0" lifts its CPU, memory and disk limits
        # (cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/cloud-storage-fuse-csi-driver-sidecar).
        annotations |= {
            "gke-gcsfuse/volumes": "true",
            "gke-gcsfuse/cpu-limit": "0",
            "gke-gcsfuse/memory-limit": "0",
            "gke-gcsfuse/ephemeral-storage-limit": "0",
        }
    env = {
        "JOB_IDENTIFIER": args.run_name,
        **({"JOBSET_NAME": args.name} if args.controller == "jobset" else {}),
        "MASTER_ADDR": args.hosts[0],
        "MASTER_PORT": str(MASTER_PORT),
        "NNODES": str(args.nodes),
        "GPUS_PER_NODE": str(args.machine.gpus_per_node),
        "WORLD_SIZE": str(args.nodes * args.machine.gpus_per_node),
    }
    volumes = [
        empty_dir(SHM_VOLUME, medium="Memory", sizeLimit=args.shared_memory),
        {"name": SHARED_VOLUME, "persistentVolumeClaim": {"claimName": args.claim_name}},
    ]
    mounts = [mount(SHM_VOLUME, "/dev/shm"), mount(SHARED_VOLUME, args.mount_path)]
    if args.machine.local_ssds:
        volumes.append(host_path(LOCAL_SSD_VOLUME, LOCAL_SSD_HOST_DIR))
        mounts.append(mount(LOCAL_SSD_VOLUME, LOCAL_SSD_DIR))
    return compose(
        nvidia_libraries(),
        PodParts(
            annotations=annotations,
            env=env,
            volumes=tuple(volumes),
            volume_mounts=tuple(mounts),
            tolerations=(
                *(dict(t) for t in args.tolerations),
                # Keep running through the node's termination notice; the job ends on its own.
                {"key": "cloud.google.com/impending-node-termination", "operator": "Exists"},
            ),
        ),
    )


def dataset_parts(dataset: Dataset | None) -> PodParts:
    """Copy `dataset.source` to node-local disk at `dataset.path` before the workload starts."""
    if dataset is None:
        return PodParts()
    downloader = {
        "name": "dataset-download",
        "image": catalog.image("cloud-sdk").ref,
        "command": ["gcloud", "storage", "rsync", "--recursive", dataset.source, dataset.path],
        "volumeMounts": [mount(DATASET_VOLUME, dataset.path)],
        "securityContext": container_security(),
    }
    return PodParts(
        volumes=(empty_dir(DATASET_VOLUME),),
        volume_mounts=(mount(DATASET_VOLUME, dataset.path),),
        init_containers=(downloader,),
    )


def secret_name(args: TrainingJobArgs) -> str:
    return f"{args.name}-env"


def secret_env_list(args: TrainingJobArgs) -> list[Json]:
    """Each secret variable as a reference to its key in the job's Secret."""
    return [{"name": name, "valueFrom": {"secretKeyRef": {"name": secret_name(args), "key": name}}} for name in args.secret_env]


def config_map_name(args: TrainingJobArgs, suffix: str) -> str:
    return f"{args.name}-{suffix}"


def file_parts(args: TrainingJobArgs) -> PodParts:
    """The launcher's files, each ConfigMap mounted read-only; the template carries a hash of
    their contents, so changed files replace the job rather than change under a running one."""
    volumes = tuple({"name": f"files-{files.name}", "configMap": {"name": config_map_name(args, files.name)}} for files in args.launch.files)
    mounts = tuple(mount(f"files-{files.name}", files.mount_path, read_only=True) for files in args.launch.files)
    contents = json.dumps([[f.name, f.mount_path, dict(sorted(f.files.items()))] for f in args.launch.files], sort_keys=True)
    annotations = {CONFIG_HASH_ANNOTATION: hashlib.sha256(contents.encode()).hexdigest()[:16]} if args.launch.files else {}
    return PodParts(annotations=annotations, volumes=volumes, volume_mounts=mounts)


def pod_parts(args: TrainingJobArgs) -> PodParts:
    return compose(
        base_parts(args),
        dataset_parts(args.dataset),
        args.gpudirect,
        imex.parts(args.name) if args.machine.accelerator_topology else PodParts(),
        dranet.parts(args.name) if args.dranet else PodParts(),
        file_parts(args),
        PodParts(env=args.launch.env),
        PodParts(env=args.env),
    )


def nccl_prologue(after_init: Mapping[str, str]) -> str:
    """The shell that sets NCCL up as the trainer runs it: the plugin, its script, the exports after it."""
    return _PROLOGUE + "".join(f"export {name}={shlex.quote(value)}\n" for name, value in after_init.items())


def container_command(launch: Launch, after_init: Mapping[str, str]) -> list[str]:
    """`bash -c <prologue, exports after the NCCL script, setup, exec "$@"> launch <argv...>`."""
    script = nccl_prologue(after_init) + "".join(f"{line}\n" for line in launch.setup) + _EXEC
    return ["bash", "-c", script, "launch"]


def pod_template(args: TrainingJobArgs) -> Json:
    parts = pod_parts(args)
    after_init = {k: v for k, v in parts.after_init.items() if k not in args.env}
    resources: Json = {
        "limits": {"nvidia.com/gpu": args.machine.gpus_per_node},
        **({"claims": [{"name": claim["name"]} for claim in parts.resource_claims]} if parts.resource_claims else {}),
    }
    workload = {
        "name": WORKLOAD_CONTAINER,
        "image": args.image,
        "imagePullPolicy": "Always",  # as the recipes' charts: a re-pushed tag is never stale
        # A variable the stack sets itself is not exported over.
        "command": container_command(args.launch, after_init),
        "args": list(args.launch.command),
        "env": [*env_list({k: v for k, v in parts.env.items() if k not in args.secret_env}), *secret_env_list(args)],
        "resources": resources,
        "volumeMounts": list(parts.volume_mounts),
        "securityContext": {"privileged": True} if parts.privileged else container_security(),
    }
    inits = list(parts.init_containers)
    volumes = list(parts.volumes)
    annotations = dict(parts.annotations)
    if args.preflight is not None:
        gate = preflight.init_containers(args.preflight, args.name, parts, args.hosts, list(args.secret_env), resources, nccl_prologue(after_init))
        inits += gate
        volumes.append(preflight.probe_volume(args.name))
        annotations[preflight.HASH_ANNOTATION] = preflight.probe_hash()
    spec: Json = {
        "restartPolicy": "Never",
        **({"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet"} if parts.host_network else {}),
        "serviceAccountName": args.service_account,
        # Nothing in the pod calls the Kubernetes API; Google Cloud is reached through Workload
        # Identity's metadata server, which needs no token in the pod.
        "automountServiceAccountToken": False,
        "securityContext": POD_SECURITY,
        "nodeSelector": dict(args.node_selector),
        "tolerations": list(parts.tolerations),
        **({"initContainers": inits} if inits else {}),
        **({"resourceClaims": list(parts.resource_claims)} if parts.resource_claims else {}),
        "containers": [workload],
        "volumes": volumes,
    }
    if args.controller == "job":
        spec["subdomain"] = args.name  # the headless Service; the Job names pods <job>-<index>
    return {"metadata": {"annotations": annotations}, "spec": spec}


def preflight_containers(template: Json) -> list[Json]:
    return [c for c in template["spec"].get("initContainers", []) if c["name"].startswith("preflight")]


def restarts(args: TrainingJobArgs) -> int:
    """maxRestarts (JobSet) or backoffLimit (Job): the user's, plus the preflight's retries."""
    return args.max_restarts + (args.preflight.retries if args.preflight else 0)


def _metadata(args: TrainingJobArgs) -> Json:
    return {
        "name": args.name,
        "namespace": args.namespace,
        "labels": {
            QUEUE_LABEL: args.queue,
            **({PRIORITY_LABEL: args.priority_class} if args.priority_class else {}),
            "app.kubernetes.io/managed-by": "trainstack",
        },
        # The job runs for hours after `pulumi up`; Kueue, not Pulumi, decides when it starts.
        "annotations": {"pulumi.com/skipAwait": "true"},
    }


def jobset(args: TrainingJobArgs) -> Json:
    """The JobSet: one replicated job of N indexed pods; a pod failure restarts the whole set
    up to `max_restarts` times (and the preflight's retries); it succeeds when every pod does."""
    template = pod_template(args)
    return {
        "apiVersion": catalog.JOBSET_API,
        "kind": "JobSet",
        "metadata": _metadata(args),
        "spec": {
            "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
            "failurePolicy": {"maxRestarts": restarts(args)},
            "successPolicy": {"operator": "All", "targetReplicatedJobs": [REPLICATED_JOB]},
            "replicatedJobs": [
                {
                    "name": REPLICATED_JOB,
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "parallelism": args.nodes,
                            "completions": args.nodes,
                            "completionMode": "Indexed",
                            "backoffLimit": 0,  # JobSet restarts the whole set instead
                            **({"podFailurePolicy": preflight.pod_failure_policy(gates)} if (gates := preflight_containers(template)) else {}),
                            "template": template,
                        }
                    },
                }
            ],
        },
    }


def indexed_job(args: TrainingJobArgs) -> Json:
    """The Indexed batch Job; failed pods are retried up to `max_restarts` times in all."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _metadata(args),
        "spec": {
            "parallelism": args.nodes,
            "completions": args.nodes,
            "completionMode": "Indexed",
            "backoffLimit": restarts(args),
            "template": pod_template(args),
        },
    }


def headless_service(args: TrainingJobArgs) -> Json:
    """DNS for the Indexed Job's pods, published before they are ready (rendezvous needs it)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": args.name, "namespace": args.namespace},
        "spec": {
            "clusterIP": "None",
            "selector": {"batch.kubernetes.io/job-name": args.name},
            "publishNotReadyAddresses": True,
        },
    }


def config_maps(args: TrainingJobArgs) -> list[Json]:
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": config_map_name(args, files.name), "namespace": args.namespace},
            "data": dict(sorted(files.files.items())),
        }
        for files in args.launch.files
    ]


def watch_command(args: TrainingJobArgs) -> str:
    kind = "jobset" if args.controller == "jobset" else "job"
    return f"kubectl get {kind} {args.name} -n {args.namespace}"


def owner_label(args: TrainingJobArgs) -> str:
    """The label its controller puts on each of the job's pods, valued with the job's name."""
    return "jobset.sigs.k8s.io/jobset-name" if args.controller == "jobset" else "batch.kubernetes.io/job-name"


def logs_command(args: TrainingJobArgs) -> str:
    """Follow the rank-0 pod's training log."""
    selector = f"{owner_label(args)}={args.name},batch.kubernetes.io/job-completion-index=0"
    return f"kubectl logs -f -n {args.namespace} -l {selector} -c {WORKLOAD_CONTAINER}"


class TrainingJob(pulumi.ComponentResource):
    """A distributed training job submitted to Kueue; on a machine whose NVLink spans nodes, with
    a ComputeDomain of its nodes (named like the job) whose IMEX channel every pod claims (the
    cluster needs NVIDIA's DRA driver: order the job after it).

    Attributes: `job_name`, `namespace`, `hosts` (pod DNS names, rank order),
    `watch_command` and `logs_command` (what a user runs next).
    """

    def __init__(
        self,
        name: str,
        args: TrainingJobArgs,
        opts: pulumi.ResourceOptions | None = None,
        companions: Mapping[str, pulumi.ProviderResource] | None = None,
    ):
        """`companions`: when the job is submitted to a MultiKueue manager (`opts`' provider), the
        worker clusters by name: MultiKueue copies only the job to the worker that admits it, so
        its files and secret env are made on each worker instead (`<name>-<file>-<worker>`)."""
        args = TrainingJobArgs.checked(args, type(self), name)
        super().__init__("trainstack:workload:TrainingJob", name, None, opts)
        kids = Children(self, name, opts, roles_were_names=False)
        # Where its files are made: the worker clusters by suffix, else with the job.
        targets: dict[str, pulumi.ProviderResource | None] = {f"-{worker}": provider for worker, provider in (companions or {}).items()} or {"": None}
        files: list[pulumi.Resource] = []
        for suffix, provider in targets.items():
            files += [
                k8s.core.v1.ConfigMap(
                    **kids(f"{manifest['metadata']['name']}{suffix}", provider=provider), metadata=manifest["metadata"], data=manifest["data"]
                )
                for manifest in config_maps(args)
            ]
            if args.preflight is not None:
                probe = preflight.config_map(args.name, args.namespace)
                files.append(
                    k8s.core.v1.ConfigMap(**kids(f"{probe['metadata']['name']}{suffix}", provider=provider), metadata=probe["metadata"], data=probe["data"])
                )
            if args.secret_env:
                files.append(
                    k8s.core.v1.Secret(
                        **kids(f"{secret_name(args)}{suffix}", provider=provider),
                        metadata={"name": secret_name(args), "namespace": args.namespace, "labels": {"app.kubernetes.io/managed-by": "trainstack"}},
                        string_data={k: pulumi.Output.secret(v) for k, v in sorted(args.secret_env.items())},
                    )
                )
        # What the job's pods need before they start: their files, and the IMEX domain, sized to
        # the job's nodes, whose channel's ResourceClaimTemplate the DRA driver's controller makes.
        # The domain's spec is immutable (its CRD's CEL rule): a change replaces it, as the job's.
        needs: list[pulumi.Resource] = list(files)
        if args.machine.accelerator_topology:
            domain = imex.compute_domain(args.name, args.namespace, args.nodes)
            needs.append(
                k8s.apiextensions.CustomResource(
                    **kids("compute-domain", replace_on_changes=["spec"], delete_before_replace=True),
                    api_version=domain["apiVersion"],
                    kind=domain["kind"],
                    metadata=domain["metadata"],
                    spec=domain["spec"],
                )
            )
        # Its RDMA NICs' claim template, on DRANET; a template's spec is immutable, so a change replaces it.
        if args.dranet:
            template = dranet.claim_template(args.name, args.namespace, args.machine)
            needs.append(
                k8s.apiextensions.CustomResource(
                    **kids("rdma-claim", replace_on_changes=["spec"], delete_before_replace=True),
                    api_version=template["apiVersion"],
                    kind=template["kind"],
                    metadata=template["metadata"],
                    spec=template["spec"],
                )
            )
        job = kids.main(*needs, replace_on_changes=["spec"], delete_before_replace=True)
        if args.controller == "jobset":
            manifest = jobset(args)
            k8s.apiextensions.CustomResource(
                **job, api_version=manifest["apiVersion"], kind=manifest["kind"], metadata=manifest["metadata"], spec=manifest["spec"]
            )
        else:
            service = headless_service(args)
            k8s.core.v1.Service(**kids("dns"), metadata=service["metadata"], spec=service["spec"])
            manifest = indexed_job(args)
            k8s.batch.v1.Job(**job, metadata=manifest["metadata"], spec=manifest["spec"])
        if args.preflight is not None and args.cpu_pool and not companions:
            warden = kids("preflight-warden", *files)
            preflight.PreflightWarden(
                warden["resource_name"],
                preflight.WardenArgs(job=args.name, namespace=args.namespace, cpu_pool=args.cpu_pool, owner_label=owner_label(args)),
                warden["opts"],
            )
        self.job_name = args.name
        self.namespace = args.namespace
        self.hosts = args.hosts
        self.watch_command = watch_command(args)
        self.logs_command = logs_command(args)
        self.register_outputs({"jobName": self.job_name, "watchCommand": self.watch_command})
