"""The preflight gate: the job's own nodes and fabric are checked in the job's own pods, before the
trainer starts.

Mechanism, chosen from what the pinned controllers do:
- In the trainer's pods, as init containers after the GPUDirect ones. JobSet 0.12.0 could order a
  separate replicated job first (`startupPolicy: InOrder`, or `dependsOn` a replicated job's
  `Complete`), but Kueue 0.19.2 admits a JobSet as one Workload with a pod set per replicated job,
  reserving quota for all of them at once (pkg/controller/jobs/jobset/jobset_controller.go PodSets), and
  TAS places each pod set on nodes of its own: a preflight job would need twice the GPUs and would test
  other nodes. Init containers run on exactly the nodes TAS gave the trainer, in order after the
  GPUDirect installer and the TCPX/TCPXO receive-datapath sidecars (native sidecars are up first), with
  the trainer's GPUs, resource claims (IMEX channel, NICs), volumes, NCCL environment and network
  annotations, so a pass means the trainer's fabric works; the trainer's container starts only after
  every init container succeeded.
- `preflight-node` (every job): GPU count, uncorrected ECC errors, pending row remaps, inactive NVLinks
  (nvidia-smi from the host driver) and `dcgmi diag -r <level>` (catalog.preflight DCGM_LEVEL: why 2).
- `preflight-fabric` (multi-node jobs): rank 0 runs nccl-tests' all-gather and all-reduce over all the
  job's hosts through mpirun and sshd on port 222, the health checker's way; where a run fails it tests
  node pairs to name the bad nodes; every other pod serves ssh until rank 0 hands it its verdict.
- A failed check exits FAILED_EXIT_CODE and writes `node=<node> check=<check> ...` to the termination
  message (`kubectl get pod -o jsonpath='{..terminated.message}'`) and the container log. The Job's
  podFailurePolicy fails the Job at once on it (its condition names the container), JobSet restarts
  the whole set, within `maxRestarts` raised by `preflight.retries` (bounded: JobSet 0.12.0 fails the
  set once `restartsCountTowardsMax` reaches maxRestarts, pkg/controllers/failure_policy.go; the actions
  that ignore maxRestarts are not used). An Indexed Job (`controller: job`) retries the pod instead,
  within its backoffLimit raised the same way. A separate replicated job would not do: JobSet 0.12.0's
  `dependsOn` (api/jobset/v1alpha2/jobset_types.go) orders replicated jobs, but see the first point.
- The warden (a Deployment on the CPU pool, with its own service account: list the job's pods, patch
  nodes) taints each named node `trainstack.dev/preflight=<check>:NoSchedule`. Kueue 0.19.2 then treats
  the node as failed for the job (TASReplaceNodeOnNodeTaints and TASReplaceNodeOnPodTermination, Beta and
  on: an untolerated NoSchedule taint on a node of the workload's assignment whose pods terminated;
  pkg/controller/tas/node_controller.go) and TASFailedNodeReplacement finds a replacement; with more
  than one failed node it evicts and requeues the job. The restarted pods land on the new nodes. The
  trainer's pods keep no Kubernetes token, and the job's own identity gains nothing.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from trainstack.components.args import Args
from trainstack.components.options import Children
from trainstack.components.pod_security import POD_SECURITY, container_security
from trainstack.core import catalog, rules
from trainstack.core.catalog import preflight as facts
from trainstack.core.errors import Problem
from trainstack.workloads import preflight_probe
from trainstack.workloads.pod import NVIDIA_DIR, Json, PodParts, env_list, mount
from trainstack.workloads.spec import Preflight as PreflightConfig

NODE_CONTAINER = "preflight-node"
FABRIC_CONTAINER = "preflight-fabric"
PROBE_DIR = "/preflight"
PROBE_FILE = "preflight_probe.py"
PROBE_VOLUME = "preflight-probe"
# sshd's privilege separation (setuid/setgid/chroot, chown of its tty, killing its child, audit log); all
# in Pod Security's baseline list, so the namespace stays where the trainer's hostPath mounts put it.
SSHD_CAPABILITIES = ("AUDIT_WRITE", "CHOWN", "KILL", "SETGID", "SETUID", "SYS_CHROOT")


@dataclass(frozen=True)
class Gate:
    """What one job's preflight runs: node checks (DCGM at `dcgm_level`, 0 none), the fabric test of
    `collectives` against `threshold` when `fabric`, at most `retries` extra whole-job restarts."""

    machine: catalog.Machine
    nodes: int
    dcgm_level: int
    fabric: bool
    collectives: tuple[str, ...]
    threshold: facts.Threshold | None
    retries: int

    @property
    def seconds(self) -> int:
        return expected_seconds_of(self)[0]

    def entry(self) -> dict[str, Any]:
        """The plan's `preflight` entry of the job."""
        seconds, derivation = expected_seconds_of(self)
        return {
            "nodeChecks": ["gpu count", "ecc", "row remap", "nvlink", *([f"dcgm diag -r {self.dcgm_level}"] if self.dcgm_level else [])],
            "fabric": {
                "collectives": list(self.collectives),
                "sizes": f"{facts.MIN_BYTES}..{facts.MAX_BYTES}",
                "busBandwidthGBps": self.threshold.gbytes if self.threshold else None,
                "source": self.threshold.source if self.threshold else "none: reported, judged on errors only",
            }
            if self.fabric
            else None,
            "retries": self.retries,
            "seconds": seconds,
            "derivation": derivation,
        }

    def summary(self) -> str:
        """The plan summary's line."""
        fabric = (
            f"{'+'.join(self.collectives)} >= {self.threshold.gbytes:g} GB/s busbw"
            if self.fabric and self.threshold
            else ("NCCL" if self.fabric else "no fabric test")
        )
        dcgm = f"DCGM level {self.dcgm_level}" if self.dcgm_level else "no DCGM"
        return f"{self.nodes} nodes: GPU/ECC/NVLink, {dcgm}, {fabric}; ~{self.seconds / 60:.0f} min, {self.retries} retries"


def gate(config: PreflightConfig, machine: catalog.Machine, nodes: int) -> Gate | None:
    """The job's preflight, or None where it is off."""
    if not config.enabled:
        return None
    can = _fabric_possible(machine)
    fabric = nodes > 1 and (config.fabric if config.fabric is not None else can)
    mark = facts.Threshold(config.bus_bandwidth, "trainstack:workload.preflight.busBandwidth") if config.bus_bandwidth else facts.threshold(machine)
    level = config.dcgm_level if _node_image(machine) is not None else 0
    return Gate(machine, nodes, level, fabric, tuple(config.collectives), mark, config.retries)


def entries(job: str, found: Gate | None) -> dict[str, Any]:
    """The plan's `preflight`: per job (by name), what its preflight (`gate`) runs, with a one-line
    `summary`; None for a job without one."""
    return {job: {**found.entry(), "summary": found.summary()} if found else None}


def _fabric_possible(machine: catalog.Machine) -> bool:
    return machine.gpudirect is not catalog.GpuDirect.NONE and facts.nccl_test_image(machine) is not None


def _node_image(machine: catalog.Machine) -> catalog.Image | None:
    """The DCGM image where it is published for the machine's architecture (None: nvidia-smi checks
    alone, in the nccl-tests image)."""
    return facts.NODE_CHECK_IMAGE if facts.NODE_CHECK_IMAGE.runs_on(machine.architecture) else None


def expected_seconds_of(gate: Gate) -> tuple[int, str]:
    """Seconds the preflight holds a pod from Ready, and how they add up: the node checks (nvidia-smi
    and the DCGM level's documented run time) run on every node at once; then, per collective, the
    MPI/NCCL start and (warm-up + timed iterations) of each message size at the mark's speed (an
    all-gather of S bytes takes S/algbw, algbw = busbw n/(n-1); all-reduce 2(n-1)/n: doc/PERFORMANCE.md)."""
    node = facts.NODE_CHECK_SECONDS + facts.DCGM_LEVEL_SECONDS.get(gate.dcgm_level, 0)
    parts = [f"node checks {facts.NODE_CHECK_SECONDS} s + DCGM level {gate.dcgm_level} {facts.DCGM_LEVEL_SECONDS.get(gate.dcgm_level, 0)} s"]
    total = float(node)
    if gate.fabric:
        ranks = gate.nodes * gate.machine.gpus_per_node
        busbw = gate.threshold.gbytes if gate.threshold else 10.0  # no mark: a slow fabric's 10 GB/s
        for collective in gate.collectives:
            factor = (ranks - 1) / ranks * (2 if collective == "all_reduce" else 1)
            transfer = sum(size * factor / (busbw * 1e9) for size in facts.SIZES_BYTES) * (facts.NCCL_ITERATIONS + facts.NCCL_WARMUP)
            total += facts.NCCL_SETUP_SECONDS + transfer
            parts.append(f"{collective}: start {facts.NCCL_SETUP_SECONDS} s + {transfer:.0f} s at {busbw:g} GB/s busbw")
    seconds = round(total)
    return seconds, "; ".join(parts) + f" = {seconds} s (a failed run adds pair tests to name the node)"


def expected_seconds(config: PreflightConfig, machine: catalog.Machine, nodes: int) -> tuple[int, str]:
    """The preflight's expected duration for a job (0 where off) and its derivation: for the deploy
    critical path, where it runs between the pods starting and the trainer's first step."""
    found = gate(config, machine, nodes)
    return expected_seconds_of(found) if found else (0, "preflight off")


def problems(config: PreflightConfig, machine: catalog.Machine, nodes: int, pods_ready: Sequence[tuple[str, str]] = ()) -> list[Problem]:
    """What cannot work: a mark above the machine's line rate, a fabric test where the machine has no
    GPUDirect stack or no nccl-tests image, a preflight longer than a pods-ready budget leaves
    (`pods_ready`: (key, duration) of Kueue's waitForPodsReady timeout, counted from admission, and of
    its recoveryTimeout, counted from a restart: Kueue 0.19.2 pkg/controller/core/workload_controller.go
    admittedNotReadyWorkload; the pods are not Ready while their init containers run)."""
    key = ("trainstack:workload", "preflight")
    found: list[Problem] = []
    if not config.enabled:
        return found
    rate = facts.line_rate_gbytes(machine)
    if config.bus_bandwidth is not None and rate is not None and config.bus_bandwidth > rate:
        found.append(Problem((*key, "busBandwidth"), config.bus_bandwidth, f"must not exceed {machine.name}'s GPU NIC line rate, {rate:g} GB/s"))
    if config.fabric and not _fabric_possible(machine):
        why = "no GPUDirect stack (its GPUs talk over the primary NIC)" if machine.gpudirect is catalog.GpuDirect.NONE else "no nccl-tests image in the catalog"
        found.append(Problem((*key, "fabric"), True, f"the NCCL test runs over the pool's GPUDirect profile; {machine.name} has {why}"))
    elif config.bus_bandwidth is not None and rate is None:
        found.append(Problem((*key, "busBandwidth"), config.bus_bandwidth, f"{machine.name} has no GPUDirect stack to measure"))
    planned = gate(config, machine, nodes)
    for budget_key, budget in pods_ready:
        if planned and planned.seconds >= rules.duration_seconds(budget):
            found.append(
                Problem(
                    key,
                    f"~{planned.seconds} s",
                    f"must finish within {budget_key} ({budget}): Kueue evicts a job whose pods are not all Ready by then, and they are "
                    "not while it runs; raise it, lower dcgmLevel, drop a collective, or set preflight: false",
                )
            )
    return found


def probe_source() -> str:
    """The probe the containers run: this package's own module, mounted from a ConfigMap."""
    return inspect.getsource(preflight_probe)


HASH_ANNOTATION = "trainstack/preflight-hash"


def probe_hash() -> str:
    """The pod template carries it: a changed probe replaces the job, as changed launcher files do."""
    return hashlib.sha256(probe_source().encode()).hexdigest()[:16]


def config_map(job: str, namespace: str) -> Json:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{job}-preflight", "namespace": namespace},
        "data": {PROBE_FILE: probe_source()},
    }


def _env(parts: PodParts, secret: Sequence[str]) -> list[Json]:
    node_name = {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}
    return [*env_list({k: v for k, v in parts.env.items() if k not in secret}), node_name]


def init_containers(gate: Gate, job: str, parts: PodParts, hosts: Sequence[str], secret_env: Sequence[str], resources: Json, prologue: str) -> list[Json]:
    """The preflight's init containers of a trainer pod composed of `parts`: its mounts, environment,
    GPUs and claims (`resources`), after `prologue` (the trainer's own NCCL setup)."""
    mounts = [*parts.volume_mounts, mount(PROBE_VOLUME, PROBE_DIR, read_only=True)]
    probe = f"{PROBE_DIR}/{PROBE_FILE}"
    fabric_image = facts.nccl_test_image(gate.machine)
    node_image = _node_image(gate.machine) or fabric_image or facts.NODE_CHECK_IMAGE
    node_args = ["node", "--gpus", str(gate.machine.gpus_per_node), "--dcgm-level", str(gate.dcgm_level), "--nvidia-smi", f"{NVIDIA_DIR}/bin/nvidia-smi"]
    containers = [
        {
            "name": NODE_CONTAINER,
            "image": node_image.ref,
            "command": ["python3", probe, *node_args],
            "env": _env(parts, secret_env),
            "resources": resources,
            "volumeMounts": mounts,
            "securityContext": {"privileged": True} if parts.privileged else container_security(),
            "terminationMessagePolicy": "FallbackToLogsOnError",
        }
    ]
    if gate.fabric and fabric_image is not None:
        fabric_args = [
            "fabric",
            "--hosts", ",".join(hosts),
            "--gpus", str(gate.machine.gpus_per_node),
            "--machine", gate.machine.name,
            "--collectives", ",".join(gate.collectives),
            "--tests-dir", facts.NCCL_TESTS_DIR,
            "--min-bytes", facts.MIN_BYTES,
            "--max-bytes", facts.MAX_BYTES,
            "--iters", str(facts.NCCL_ITERATIONS),
            "--warmup", str(facts.NCCL_WARMUP),
            *(["--threshold", f"{gate.threshold.gbytes:g}"] if gate.threshold else []),
        ]  # fmt: skip
        containers.append(
            {
                "name": FABRIC_CONTAINER,
                "image": fabric_image.ref,
                # The trainer's prologue (the plugin on the library path, its NCCL script, the exports after it).
                "command": ["bash", "-c", prologue + 'exec python3 "$@"', "preflight", probe, *fabric_args],
                "env": _env(parts, secret_env),
                "resources": resources,
                "volumeMounts": mounts,
                "securityContext": {"privileged": True} if parts.privileged else container_security(*SSHD_CAPABILITIES),
                "terminationMessagePolicy": "FallbackToLogsOnError",
            }
        )
    return containers


def probe_volume(job: str) -> Json:
    return {"name": PROBE_VOLUME, "configMap": {"name": f"{job}-preflight"}}


def pod_failure_policy(containers: Sequence[Json]) -> Json:
    """Fail the Job at once when a preflight check failed, naming the container in its condition (a
    rule may name only a container of the template: Kubernetes validates containerName)."""
    return {
        "rules": [{"action": "FailJob", "onExitCodes": {"containerName": c["name"], "operator": "In", "values": [facts.FAILED_EXIT_CODE]}} for c in containers]
    }


def warden_name(job: str) -> str:
    return f"{job}-preflight-warden"


def warden_labels(job: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": "preflight-warden", "app.kubernetes.io/instance": job, "app.kubernetes.io/managed-by": "trainstack"}


# What the warden calls, and nothing else: the job's pods (to read the preflight's verdicts) in its
# namespace, and nodes (to taint the failed ones) cluster-wide.
WARDEN_ROLE_RULES: list[Json] = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]
WARDEN_CLUSTER_ROLE_RULES: list[Json] = [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]


def warden_deployment(job: str, namespace: str, cpu_pool: str, owner_label: str) -> Json:
    """The warden: one pod on the CPU pool running the probe's `warden` mode (kubectl from its image)."""
    labels = warden_labels(job)
    warden_args = ["--namespace", namespace, "--selector", f"{owner_label}={job}", "--taint", facts.TAINT_KEY]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        # `pulumi up` need not wait for it: nothing waits on the warden, and the job does not start faster for it.
        "metadata": {"name": warden_name(job), "namespace": namespace, "labels": labels, "annotations": {"pulumi.com/skipAwait": "true"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": warden_name(job),
                    "automountServiceAccountToken": True,
                    "securityContext": POD_SECURITY,
                    "nodeSelector": {"cloud.google.com/gke-nodepool": cpu_pool},
                    "containers": [
                        {
                            "name": "warden",
                            "image": facts.WARDEN_IMAGE.ref,
                            "command": ["python3", f"{PROBE_DIR}/{PROBE_FILE}", "warden", *warden_args],
                            "volumeMounts": [mount(PROBE_VOLUME, PROBE_DIR, read_only=True)],
                            "resources": {"requests": {"cpu": "50m", "memory": "128Mi"}},
                            "securityContext": container_security(),
                        }
                    ],
                    "volumes": [probe_volume(job)],
                },
            },
        },
    }


@dataclass(frozen=True)
class WardenArgs(Args):
    """The warden of one job: `job` in `namespace`, its pods found by `owner_label`=`job`, run on `cpu_pool`."""

    job: str
    namespace: str
    cpu_pool: str
    owner_label: str

    _checks = {"job": rules.DNS1035_NAME, "namespace": rules.K8S_NAME, "cpu_pool": rules.DNS1035_NAME}


class PreflightWarden(pulumi.ComponentResource):
    """Taints the nodes a job's preflight failed on (see the module docstring), with its own service
    account: list the job's pods in its namespace, get and patch nodes."""

    def __init__(self, name: str, args: WardenArgs, opts: pulumi.ResourceOptions | None = None):
        args = WardenArgs.checked(args, type(self), name)
        super().__init__("trainstack:workload:PreflightWarden", name, None, opts)
        kids = Children(self, name, opts, roles_were_names=False)
        account_name = warden_name(args.job)
        labels = warden_labels(args.job)
        meta = {"name": account_name, "namespace": args.namespace, "labels": labels}
        subject = [{"kind": "ServiceAccount", "name": account_name, "namespace": args.namespace}]
        account = k8s.core.v1.ServiceAccount(**kids("sa"), metadata=meta, automount_service_account_token=False)
        role = k8s.rbac.v1.Role(**kids("role"), metadata=meta, rules=WARDEN_ROLE_RULES)
        binding = k8s.rbac.v1.RoleBinding(
            **kids("binding", role, account),
            metadata=meta,
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account_name},
            subjects=subject,
        )
        # ClusterRole names are cluster-wide: the namespace keeps two stacks' wardens apart.
        cluster_meta = {"name": f"{args.namespace}-{account_name}", "labels": labels}
        cluster_role = k8s.rbac.v1.ClusterRole(**kids("nodes"), metadata=cluster_meta, rules=WARDEN_CLUSTER_ROLE_RULES)
        cluster_binding = k8s.rbac.v1.ClusterRoleBinding(
            **kids("nodes-binding", cluster_role, account),
            metadata=cluster_meta,
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_meta["name"]},
            subjects=subject,
        )
        manifest = warden_deployment(args.job, args.namespace, args.cpu_pool, args.owner_label)
        k8s.apps.v1.Deployment(**kids.main(binding, cluster_binding), metadata=manifest["metadata"], spec=manifest["spec"])
        self.register_outputs({"serviceAccount": account_name})
