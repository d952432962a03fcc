"""TensorBoard over a training run's log directory on the shared file system (recipe 001).

A one-replica Deployment on the CPU pool mounts the shared claim read-only and serves the log
directory; a ClusterIP Service fronts it. Nothing is exposed outside the cluster: a user with
cluster credentials reaches it with `kubectl port-forward` (the `access_command` attribute).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from trainstack.components.args import Args, Problem
from trainstack.components.options import Children
from trainstack.components.pod_security import POD_SECURITY, container_security
from trainstack.core import catalog, rules
from trainstack.workloads.pod import mount

PORT = 6006
# The user it runs as: any but root (the image's tensorboard needs no home of its own).
NON_ROOT_USER = 65534
SHARED_VOLUME = "shared"

Json = dict[str, Any]


@dataclass(frozen=True)
class TensorBoardArgs(Args):
    """Where the logs are and where TensorBoard runs. Order it after what it needs (the claim,
    the CPU pool) with `opts.depends_on`."""

    name: str
    """The Deployment and Service name."""
    namespace: str
    """Where both live (the training job's namespace, where the claim is)."""
    claim_name: str
    """The shared storage's PersistentVolumeClaim."""
    mount_path: str
    """Where the claim is mounted (the same path the training pods use)."""
    log_dir: str
    """The directory to serve, under `mount_path`."""
    node_pool: str
    """The CPU pool it runs on."""
    image: str = field(default_factory=lambda: catalog.image("tensorboard").ref)
    """An image with the `tensorboard` command."""

    _checks = {
        "name": rules.DNS1035_NAME,
        "namespace": rules.K8S_NAME,
        "claim_name": rules.K8S_NAME,
        "mount_path": rules.ABSOLUTE_PATH,
        "log_dir": rules.ABSOLUTE_PATH,
        "node_pool": rules.DNS1035_NAME,
    }

    def _cross(self) -> Iterator[Problem]:
        if not (self.log_dir == self.mount_path or self.log_dir.startswith(self.mount_path.rstrip("/") + "/")):
            yield Problem(("log_dir",), self.log_dir, f"is not on the shared storage at {self.mount_path}")


def labels(args: TensorBoardArgs) -> dict[str, str]:
    return {"app.kubernetes.io/name": "tensorboard", "app.kubernetes.io/instance": args.name, "app.kubernetes.io/managed-by": "trainstack"}


def deployment_spec(args: TensorBoardArgs) -> Json:
    return {
        "replicas": 1,
        "selector": {"matchLabels": labels(args)},
        "template": {
            "metadata": {"labels": labels(args)},
            "spec": {
                "automountServiceAccountToken": False,
                "securityContext": POD_SECURITY,
                "nodeSelector": {"cloud.google.com/gke-nodepool": args.node_pool},
                "containers": [
                    {
                        "name": "tensorboard",
                        "image": args.image,
                        "command": ["tensorboard", f"--logdir={args.log_dir}", "--bind_all", f"--port={PORT}"],
                        "ports": [{"name": "http", "containerPort": PORT}],
                        "readinessProbe": {"httpGet": {"path": "/", "port": PORT}, "periodSeconds": 10},
                        "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}},
                        "volumeMounts": [mount(SHARED_VOLUME, args.mount_path, read_only=True)],
                        # It reads world-readable logs and serves an unprivileged port: restricted.
                        "securityContext": container_security(non_root=NON_ROOT_USER),
                    }
                ],
                "volumes": [{"name": SHARED_VOLUME, "persistentVolumeClaim": {"claimName": args.claim_name, "readOnly": True}}],
            },
        },
    }


def access_command(args: TensorBoardArgs) -> str:
    """How a user opens it: forward the Service to localhost, then browse http://localhost:6006."""
    return f"kubectl port-forward svc/{args.name} {PORT}:{PORT} -n {args.namespace}"


class TensorBoard(pulumi.ComponentResource):
    """TensorBoard for one log directory; `access_command` is how a user reaches it."""

    access_command: str
    """The `kubectl port-forward` command that reaches it."""

    def __init__(self, name: str, args: TensorBoardArgs, opts: pulumi.ResourceOptions | None = None):
        args = TensorBoardArgs.checked(args, type(self), name)
        super().__init__("trainstack:workload:TensorBoard", name, None, opts)
        kids = Children(self, name, opts, roles_were_names=False)
        metadata = {"name": args.name, "namespace": args.namespace, "labels": labels(args)}
        k8s.apps.v1.Deployment(**kids.main(), metadata=metadata, spec=deployment_spec(args))
        k8s.core.v1.Service(
            **kids.main(),
            metadata=metadata,
            spec={
                "type": "ClusterIP",
                "selector": labels(args),
                "ports": [{"name": "http", "port": PORT, "targetPort": PORT, "protocol": "TCP"}],
            },
        )
        self.access_command = access_command(args)
        self.register_outputs({"accessCommand": self.access_command})
