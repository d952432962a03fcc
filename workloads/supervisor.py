"""The Google Cloud Resiliency library's supervisor for one JobSet (recipe 000).

Three Deployments on the CPU pool (Sensor: collects heartbeats and host-monitor reports;
Controller: decides; Actuator: cordons nodes, deletes pods, restarts or rescales the JobSet),
each behind a ClusterIP Service, and a Host Monitor DaemonSet on every GPU node that watches
ECC and Xid errors and serves the training processes' heartbeats on a host port. All share one
ConfigMap and one service account. Ports, flags and the ConfigMap's keys follow the library's
supervisor chart (AI-Hypercomputer/gpu-recipes src/helm-charts/resiliency); every key it reads is
rendered with a value.

Least privilege: the account may do exactly what API_CALLS lists, each verb with the line of the
library that calls it: pods and JobSets through a Role in the job's namespace, nodes (cluster
scoped) through a ClusterRole. Only the processes that call the API (the controller and the host
monitor) mount its token.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from trainstack.components.args import Args, Problem
from trainstack.components.options import Children
from trainstack.components.pod_security import POD_SECURITY, container_security
from trainstack.core import catalog, names, rules
from trainstack.workloads.pod import REPLICATED_JOB, WORKLOAD_CONTAINER

# The Host Monitor's port on every GPU node: the training launcher reaches the monitor of its
# own node at this host port.
HOST_MONITOR_PORT = 60010

# The supervisor's services and their ports.
SERVICES = dict(zip(names.SUPERVISOR_SERVICES, (60080, 60081, 60082), strict=True))

# The host monitor of the image's era (gpu-recipes 5014bf9 supervisor chart; resiliency 02c17b7)
# takes no arguments: it reads the supervisor's ConfigMap and watches ECC and Xid errors itself.
# (The --watchdogs/--watchdog_notification_cooldown_s/--enable_topology_aware_scheduling flags of
# the current chart belong to the later image, whose launcher flags differ too.)

# Fault injection is a test feature of the library; it stays off (the period is then unused).
FAULT_INJECTION_PERIOD_S = 3600

Json = dict[str, Any]

# What the supervisor calls on the Kubernetes API, and where. The image's `resiliency/supervisor/
# {controller,host_daemon}.py` (AI-Hypercomputer/resiliency@02c17b7 supervisor/controller.py:18,
# supervisor/host_daemon.py:18) import the `supervisor` package, published as PyPI's
# google-cloud-resiliency-supervisor (1.0.5, its only release): the controller's and the host
# monitor's `KubernetesCallbacks` (supervisor/client/python/controller.py:90, host.py:126) make
# every call; the sensor and the actuator make none. `kubectl cordon`/`uncordon` read and patch
# the node. (resource, verb) -> the lines that need it.
SUPERVISOR_SOURCE = "google-cloud-resiliency-supervisor==1.0.5:supervisor/client/python/orchestrators/gke_callbacks.py"
API_CALLS: dict[tuple[str, str], tuple[str, ...]] = {
    ("nodes", "get"): (f"{SUPERVISOR_SOURCE}:318", f"{SUPERVISOR_SOURCE}:334"),  # read_node; kubectl cordon
    ("nodes", "list"): (f"{SUPERVISOR_SOURCE}:104", f"{SUPERVISOR_SOURCE}:115"),  # list_node
    ("nodes", "watch"): (f"{SUPERVISOR_SOURCE}:119",),  # watch.stream(list_node)
    ("nodes", "patch"): (f"{SUPERVISOR_SOURCE}:334", f"{SUPERVISOR_SOURCE}:362"),  # kubectl cordon, uncordon
    ("pods", "list"): (f"{SUPERVISOR_SOURCE}:166", f"{SUPERVISOR_SOURCE}:646", f"{SUPERVISOR_SOURCE}:1012"),
    ("pods", "watch"): (f"{SUPERVISOR_SOURCE}:181",),  # watch.stream(list_namespaced_pod)
    ("pods", "delete"): (f"{SUPERVISOR_SOURCE}:672",),  # delete_namespaced_pod
    ("jobsets", "create"): (f"{SUPERVISOR_SOURCE}:695",),  # create_namespaced_custom_object
    ("jobsets", "delete"): (f"{SUPERVISOR_SOURCE}:723",),  # delete_namespaced_custom_object
    ("jobsets", "get"): (f"{SUPERVISOR_SOURCE}:742", f"{SUPERVISOR_SOURCE}:958"),  # get_namespaced_custom_object
    ("jobsets", "list"): (f"{SUPERVISOR_SOURCE}:787",),  # list_namespaced_custom_object
}
# The Deployments that construct KubernetesCallbacks, so mount the account's token (the host
# monitor does too).
CALLS_API = frozenset({"controller"})


@dataclass(frozen=True)
class SupervisorSettings(Args):
    """How the supervisor reacts: heartbeats, restarts, and scaling by data-parallel replicas."""

    heartbeat_polling_period_s: int = 15
    """How often it polls the workers."""
    heartbeat_timeout_s: int = 30
    """After how long without a heartbeat a worker counts as hung."""
    max_in_job_restarts: int = 0
    """In-process restarts before the job is restarted (0: none)."""
    max_workload_restarts: int = 0
    """Job restarts before a faulty node is hot-swapped (0: at once)."""
    workload_scaling: bool = True
    """Drop or add whole data-parallel replicas as nodes fail or return."""
    pod_termination_threshold_s: int = 60
    """How long a pod may take to terminate before the supervisor acts."""
    workload_downtime_threshold_s: int = 180
    """How long the job may stay down before the supervisor acts."""

    _checks = {
        "heartbeat_polling_period_s": rules.POSITIVE,
        "heartbeat_timeout_s": rules.POSITIVE,
        "max_in_job_restarts": rules.NON_NEGATIVE,
        "max_workload_restarts": rules.NON_NEGATIVE,
        "pod_termination_threshold_s": rules.POSITIVE,
        "workload_downtime_threshold_s": rules.POSITIVE,
    }


@dataclass(frozen=True)
class SupervisorArgs(Args):
    """What the supervisor watches and where it runs. Order it after what it needs (the CPU
    pool, the JobSet CRD) with `opts.depends_on`."""

    jobset: str
    """The JobSet it supervises."""
    namespace: str
    """The JobSet's namespace; the supervisor runs there too."""
    project: str
    """The GCP project (the library logs to Cloud Logging there)."""
    cpu_pool: str
    """The node pool its Deployments run on (`cloud.google.com/gke-nodepool`)."""
    gpus_per_node: int
    """Training processes per node (one per GPU)."""
    nodes: int
    """The JobSet's nodes."""
    nodes_per_replica: int
    """Nodes one data-parallel replica spans."""
    gpu_tolerations: list[dict[str, str]] = field(default_factory=list)
    """What lets the host monitor onto the GPU nodes (`GpuNodePool`'s)."""
    settings: SupervisorSettings = field(default_factory=SupervisorSettings)
    """Heartbeat, restart and scaling settings."""
    image: str = field(default_factory=lambda: catalog.image("resiliency").ref)
    """The library's image."""

    _checks = {
        "jobset": rules.DNS1035_NAME,
        "namespace": rules.K8S_NAME,
        "project": rules.PROJECT_ID,
        "cpu_pool": rules.DNS1035_NAME,
        "gpus_per_node": rules.POSITIVE,
        "nodes": rules.POSITIVE,
        "nodes_per_replica": rules.POSITIVE,
    }

    def _cross(self) -> Iterator[Problem]:
        # Its Services are named `<jobset>-supervisor-<service>`: DNS-1035 labels.
        if message := names.too_long(self.jobset, "jobset", self.nodes, supervisor=True):
            yield Problem(("jobset",), self.jobset, message)
        # The supervisor scales by whole data-parallel replicas: they tile the job's nodes.
        if self.nodes_per_replica > 0 and self.nodes % self.nodes_per_replica:
            yield Problem(("nodes_per_replica",), self.nodes_per_replica, f"must divide nodes ({self.nodes}): the job scales by whole replicas")

    @property
    def prefix(self) -> str:
        return names.supervisor_prefix(self.jobset)


def service_address(args: SupervisorArgs, service: str) -> str:
    return f"{args.prefix}-{service}:{SERVICES[service]}"


def settings_data(args: SupervisorArgs) -> dict[str, str]:
    """The ConfigMap every supervisor container reads as its environment."""
    s = args.settings
    return {
        "WORKLOAD_NAME": args.jobset,
        "SENSOR_ADDRESS": service_address(args, "sensor"),
        "ACTUATOR_ADDRESS": service_address(args, "actuator"),
        "CONTROLLER_ADDRESS": service_address(args, "controller"),
        "HOST_DAEMON_PORT": str(HOST_MONITOR_PORT),
        "HEARTBEAT_POLLING_PERIOD_S": str(s.heartbeat_polling_period_s),
        "HEARTBEAT_TIMEOUT_S": str(s.heartbeat_timeout_s),
        "WORKERS_PER_HOST": str(args.gpus_per_node),
        "JOB_NAMESPACE": args.namespace,
        "WORKLOAD_NAMESPACE": args.namespace,
        "NUM_NODES_PER_DP": str(args.nodes_per_replica),
        "NUM_DP_REPLICAS": str(args.nodes // args.nodes_per_replica),
        "MAX_IN_JOB_RESTARTS": str(s.max_in_job_restarts),
        "MAX_WORKLOAD_RESTARTS": str(s.max_workload_restarts),
        "ENABLE_WORKLOAD_SCALING": str(s.workload_scaling).lower(),
        "PROJECT": args.project,
        "POD_TERMINATION_THRESHOLD_S": str(s.pod_termination_threshold_s),
        "JOBSET_DOWNTIME_THRESHOLD_S": str(s.workload_downtime_threshold_s),
        "REPLICATED_JOB_NAME": REPLICATED_JOB,
        "WORKLOAD_CONTAINER_NAME": WORKLOAD_CONTAINER,
        "ENABLE_FAULT_INJECTION": "false",
        "FAULT_INJECTION_PERIOD_S": str(FAULT_INJECTION_PERIOD_S),
        "GLOG_logtostderr": "1",
        "GLOG_v": "2",
    }


def _verbs(resource: str) -> list[str]:
    return sorted(verb for res, verb in API_CALLS if res == resource)


def cluster_role_rules() -> list[Json]:
    """Nodes, the one cluster-scoped resource it acts on (read, watch, cordon)."""
    return [{"apiGroups": [""], "resources": ["nodes"], "verbs": _verbs("nodes")}]


def role_rules() -> list[Json]:
    """The job's pods and JobSets, in its namespace only."""
    return [
        {"apiGroups": [""], "resources": ["pods"], "verbs": _verbs("pods")},
        {"apiGroups": [catalog.JOBSET_API.split("/")[0]], "resources": ["jobsets"], "verbs": _verbs("jobsets")},
    ]


def labels(args: SupervisorArgs, component: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": "resiliency-supervisor",
        "app.kubernetes.io/instance": args.jobset,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": "trainstack",
    }


def config_checksum(args: SupervisorArgs) -> dict[str, str]:
    """The pod template annotation that rolls the supervisor's pods when its ConfigMap changes:
    they read it through envFrom, only when a container starts (kubernetes.io/docs/tasks/
    configure-pod-container/configure-pod-configmap: "not updated automatically"). The hash of
    the data, as Helm's "Automatically Roll Deployments" tip does
    (helm.sh/docs/howto/charts_tips_and_tricks)."""
    data = json.dumps(settings_data(args), sort_keys=True).encode()
    return {"checksum/config": hashlib.sha256(data).hexdigest()}


def deployment_spec(args: SupervisorArgs, service: str) -> Json:
    """One of the three supervisor Deployments, on the CPU pool."""
    port = SERVICES[service]
    return {
        "replicas": 1,
        "selector": {"matchLabels": labels(args, service)},
        "template": {
            "metadata": {"labels": labels(args, service), "annotations": config_checksum(args)},
            "spec": {
                "serviceAccountName": args.prefix,
                "automountServiceAccountToken": service in CALLS_API,
                "securityContext": POD_SECURITY,
                "nodeSelector": {"cloud.google.com/gke-nodepool": args.cpu_pool},
                "containers": [
                    {
                        "name": service,
                        "image": args.image,
                        "command": ["python3", f"resiliency/supervisor/{service}.py"],
                        "ports": [{"name": service, "containerPort": port}],
                        "env": [{"name": "PORT", "value": str(port)}],
                        "envFrom": [{"configMapRef": {"name": f"{args.prefix}-config"}}],
                        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                        "securityContext": container_security(),
                    }
                ],
            },
        },
    }


def host_monitor_spec(args: SupervisorArgs) -> Json:
    """The Host Monitor DaemonSet: privileged, on the host's network and PID namespace of every
    GPU node, listening on HOST_MONITOR_PORT."""
    return {
        "selector": {"matchLabels": labels(args, "host-monitor")},
        "updateStrategy": {"type": "RollingUpdate"},
        "template": {
            "metadata": {"labels": labels(args, "host-monitor"), "annotations": config_checksum(args)},
            "spec": {
                "serviceAccountName": args.prefix,
                "automountServiceAccountToken": True,  # its KubernetesCallbacks (host.py:126)
                "securityContext": POD_SECURITY,
                "hostNetwork": True,
                "hostPID": True,
                "dnsPolicy": "ClusterFirstWithHostNet",
                "terminationGracePeriodSeconds": 3,
                "nodeSelector": {"cloud.google.com/gke-gpu": "true"},
                "tolerations": [dict(t) for t in args.gpu_tolerations],
                "containers": [
                    {
                        "name": "host-monitor",
                        "image": args.image,
                        "command": [
                            "python3",
                            "resiliency/supervisor/host_daemon.py",
                        ],
                        # Privileged holds every capability: the chart's added ones would be redundant.
                        "securityContext": {"privileged": True},
                        "ports": [{"name": "host-monitor", "containerPort": HOST_MONITOR_PORT, "hostPort": HOST_MONITOR_PORT, "protocol": "TCP"}],
                        "envFrom": [{"configMapRef": {"name": f"{args.prefix}-config"}}],
                        "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                    }
                ],
            },
        },
    }


class ResiliencySupervisor(pulumi.ComponentResource):
    """The supervisor of one JobSet; `host_monitor_port` is where its launcher reports."""

    host_monitor_port: int = HOST_MONITOR_PORT
    """The port of the host monitor the training launcher reports to."""

    def __init__(self, name: str, args: SupervisorArgs, opts: pulumi.ResourceOptions | None = None):
        args = SupervisorArgs.checked(args, type(self), name)
        super().__init__("trainstack:workload:ResiliencySupervisor", name, None, opts)

        def meta(suffix: str = "", namespaced: bool = True) -> Json:
            return {
                "name": f"{args.prefix}{suffix}",
                **({"namespace": args.namespace} if namespaced else {}),
                "labels": labels(args, "supervisor"),
            }

        kids = Children(self, name, opts, roles_were_names=False)
        account = k8s.core.v1.ServiceAccount(**kids("sa"), metadata=meta(), automount_service_account_token=False)
        jobs_role = k8s.rbac.v1.Role(**kids("jobs-role"), metadata=meta(), rules=role_rules())
        jobs_binding = k8s.rbac.v1.RoleBinding(
            **kids("jobs-binding", jobs_role, account),
            metadata=meta(),
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": args.prefix},
            subjects=[{"kind": "ServiceAccount", "name": args.prefix, "namespace": args.namespace}],
        )
        # ClusterRole names are cluster-wide: the namespace keeps two stacks' supervisors apart.
        role_name = f"{args.namespace}-{args.prefix}"
        role = k8s.rbac.v1.ClusterRole(**kids("role"), metadata={**meta(namespaced=False), "name": role_name}, rules=cluster_role_rules())
        binding = k8s.rbac.v1.ClusterRoleBinding(
            **kids("binding", role, account),
            metadata={**meta(namespaced=False), "name": role_name},
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
            subjects=[{"kind": "ServiceAccount", "name": args.prefix, "namespace": args.namespace}],
        )
        config = k8s.core.v1.ConfigMap(**kids("config"), metadata=meta("-config"), data=settings_data(args))
        ready = [account, binding, jobs_binding, config]
        for service, port in SERVICES.items():
            k8s.core.v1.Service(
                **kids(service),
                metadata={**meta(f"-{service}"), "labels": labels(args, service)},
                spec={
                    "type": "ClusterIP",
                    "selector": labels(args, service),
                    "ports": [{"name": service, "port": port, "targetPort": port, "protocol": "TCP"}],
                },
            )
            k8s.apps.v1.Deployment(
                **kids(service, *ready),
                metadata={**meta(f"-{service}"), "labels": labels(args, service)},
                spec=deployment_spec(args, service),
            )
        k8s.apps.v1.DaemonSet(
            **kids("host-monitor", *ready),
            metadata={**meta("-host-monitor"), "labels": labels(args, "host-monitor")},
            spec=host_monitor_spec(args),
        )
        self.service_account = args.prefix
        self.register_outputs({"serviceAccount": self.service_account})
