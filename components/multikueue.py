"""MultiKueue (Kueue v0.19.2; Beta, gate `MultiKueue` on by default): one queue on a manager
cluster, each admitted job run on one of several worker clusters.

On each worker, `MultiKueueWorkerAccess`: a ServiceAccount in the worker's Kueue namespace, bound
to exactly what the manager's MultiKueue controller does there for the integrations trainstack
enables, a token Secret of it, and the kubeconfig that authenticates as it (a Pulumi secret).
On the manager, `MultiKueueClusters`: per worker a Secret holding that kubeconfig in Kueue's
namespace and the MultiKueueCluster reading it; per ClusterQueue the MultiKueueConfig listing its
workers in dispatch order (the AdmissionCheck naming it is the Kueue component's,
`KueueArgs.multikueue`, so a ClusterQueue is deleted before its check).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from trainstack.components.args import Args, Each, Problem, not_empty
from trainstack.components.k8s_provider import MANAGED_BY, metadata
from trainstack.components.kueue import FRAMEWORKS, multikueue_check_name
from trainstack.components.options import Children
from trainstack.core import catalog, rules

# What the manager's MultiKueue controller does on a worker, per integration: the rules of Kueue
# v0.19.2 site/static/examples/multikueue/create-multikueue-kubeconfig.sh (the RBAC the docs'
# "Setup a MultiKueue environment" gives the worker's account), kept for the integrations enabled
# (`kueue.FRAMEWORKS`): the script also grants pods, StatefulSets, LeaderWorkerSets, Kubeflow,
# Ray and AppWrapper objects, which no trainstack job is.
_WRITE = ("create", "delete", "get", "list", "watch")
INTEGRATION_RULES: dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]] = {
    "batch/job": (("batch", "jobs", _WRITE), ("batch", "jobs/status", ("get",))),
    "jobset.x-k8s.io/jobset": (("jobset.x-k8s.io", "jobsets", _WRITE), ("jobset.x-k8s.io", "jobsets/status", ("get",))),
}
KUEUE_RULES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("kueue.x-k8s.io", "workloads", (*_WRITE, "update", "patch")),
    ("kueue.x-k8s.io", "clusterqueues", ("get", "list", "watch")),
    ("kueue.x-k8s.io", "localqueues", ("get", "list", "watch")),
    ("kueue.x-k8s.io", "workloads/status", ("get", "patch", "update")),
)
# The key of the kubeconfig in a MultiKueueCluster's Secret (v0.19.2 apis/kueue/v1beta2
# MultiKueueConfigSecretKey).
KUBECONFIG_KEY = "kubeconfig"


def access_rules(frameworks: list[str]) -> list[dict[str, Any]]:
    """The worker account's ClusterRole rules for `frameworks`, then Kueue's own."""
    found = [rule for framework in frameworks for rule in INTEGRATION_RULES[framework]]
    return [{"apiGroups": [group], "resources": [resource], "verbs": list(verbs)} for group, resource, verbs in (*found, *KUEUE_RULES)]


def _known_framework(value: Any) -> str | None:
    return None if value in INTEGRATION_RULES else f"must be one of {', '.join(INTEGRATION_RULES)}"


def token_kubeconfig(worker: str, server: str, ca_certificate: str, token: str) -> str:
    """A kubeconfig that authenticates with a bearer token: what Kueue v0.19.2 accepts for a
    MultiKueueCluster (multikueuecluster.go validateKubeconfig: no token or CA file, no exec
    plugin or auth provider, TLS verified)."""
    user = f"{worker}-multikueue"
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": worker, "cluster": {"server": server, "certificate-authority-data": ca_certificate}}],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": worker, "context": {"cluster": worker, "user": user}}],
            "current-context": worker,
        },
        sort_keys=False,
    )


def cluster_of(kubeconfig: str) -> tuple[str, str]:
    """The server and CA data of a kubeconfig's first cluster (a trainstack platform's
    `kubeconfig` output); empty for text that is no kubeconfig (an offline plan's `[secret]`),
    which Kueue then reports on the MultiKueueCluster ("server URL is required")."""
    document = yaml.safe_load(kubeconfig) if kubeconfig else None
    clusters = document.get("clusters") if isinstance(document, dict) else None
    cluster = (clusters[0].get("cluster") or {}) if clusters else {}
    return cluster.get("server", ""), cluster.get("certificate-authority-data", "")


@dataclass(frozen=True)
class MultiKueueWorkerAccessArgs(Args):
    """A worker's account for a MultiKueue manager."""

    worker: str
    """The worker's name on the manager (its MultiKueueCluster's)."""
    account: str
    """The ServiceAccount, ClusterRole and ClusterRoleBinding name on the worker (one per manager)."""
    worker_kubeconfig: pulumi.Input[str]
    """The worker's kubeconfig (a platform's `kubeconfig` output): its server and CA."""
    rotation: str = "1"
    """Part of the token Secret's name: a new value replaces the Secret, so the worker's API server
    issues a new token, the old one is revoked with its Secret, and the manager's kubeconfig follows."""
    namespace: str = catalog.KUEUE_CHART.namespace
    """The worker's Kueue namespace (the account lives beside Kueue)."""
    frameworks: list[str] = field(default_factory=lambda: list(FRAMEWORKS))
    """The Kueue integrations MultiKueue dispatches."""

    _checks = {
        "worker": rules.K8S_NAME,
        "account": rules.K8S_NAME,
        "rotation": rules.K8S_NAME,
        "namespace": rules.K8S_NAME,
        "frameworks": (not_empty, Each(_known_framework)),
    }


class MultiKueueWorkerAccess(pulumi.ComponentResource):
    """On a worker (its provider in `opts`): the manager's account and its token. `kubeconfig` is
    the secret kubeconfig the manager reaches the worker with."""

    kubeconfig: pulumi.Output[str]
    """A kubeconfig of the worker's server and CA and the account's token (a Pulumi secret)."""

    def __init__(self, name: str, args: MultiKueueWorkerAccessArgs, opts: pulumi.ResourceOptions | None = None):
        args = MultiKueueWorkerAccessArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:MultiKueueWorkerAccess", name, None, opts)
        kids = Children(self, name, opts)
        account = k8s.core.v1.ServiceAccount(**kids("account"), metadata=metadata(args.account, args.namespace), automount_service_account_token=False)
        role = k8s.rbac.v1.ClusterRole(**kids("role"), metadata=metadata(args.account), rules=access_rules(args.frameworks))
        binding = k8s.rbac.v1.ClusterRoleBinding(
            **kids("binding", role, account),
            metadata=metadata(args.account),
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": args.account},
            subjects=[{"kind": "ServiceAccount", "name": args.account, "namespace": args.namespace}],
        )
        # A long-lived token the API server writes into the Secret (Kubernetes "Manually create a
        # long-lived API token for a ServiceAccount"); deleting the Secret revokes it. The provider
        # waits for the token before it reports the Secret created (pulumi-kubernetes#2048).
        token = k8s.core.v1.Secret(
            **kids("token", binding, additional_secret_outputs=["data"]),
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=f"{args.account}-token-{args.rotation}",
                namespace=args.namespace,
                labels=dict(MANAGED_BY),
                annotations={"kubernetes.io/service-account.name": args.account},
            ),
            type="kubernetes.io/service-account-token",
        )
        worker = args.worker

        def compose(values: list[Any]) -> str:
            kubeconfig, data = values
            server, ca = cluster_of(kubeconfig or "")
            encoded = (data or {}).get("token", "")
            return token_kubeconfig(worker, server, ca, base64.b64decode(encoded).decode() if encoded else "")

        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(args.worker_kubeconfig, token.data).apply(compose))
        self.register_outputs({"account": args.account})


@dataclass(frozen=True)
class MultiKueueWorker(Args):
    """A worker as the manager knows it."""

    name: str
    """The MultiKueueCluster's name."""
    kubeconfig: pulumi.Input[str]
    """The kubeconfig reaching it (`MultiKueueWorkerAccess.kubeconfig`); kept a Pulumi secret."""

    _checks = {"name": rules.K8S_NAME}


@dataclass(frozen=True)
class MultiKueueQueue(Args):
    """A manager ClusterQueue and the workers its jobs may run on, in dispatch order."""

    cluster_queue: str
    """The manager's ClusterQueue (its MultiKueue AdmissionCheck and MultiKueueConfig are named after it)."""
    workers: list[str]
    """Worker names, the preferred first (at most 20: the v0.19.2 CRD's maxItems)."""

    _checks = {"cluster_queue": rules.K8S_NAME, "workers": not_empty}

    def _cross(self) -> Iterator[Problem]:
        if len(self.workers) > 20:
            yield Problem(("workers",), self.workers, "at most 20 workers a queue (MultiKueueConfig.spec.clusters)")
        if len(set(self.workers)) != len(self.workers):
            yield Problem(("workers",), self.workers, "a worker at most once")


@dataclass(frozen=True)
class MultiKueueClustersArgs(Args):
    """The manager's side of MultiKueue."""

    workers: list[MultiKueueWorker]
    """Every worker."""
    queues: list[MultiKueueQueue]
    """Every manager ClusterQueue with its workers."""
    namespace: str = catalog.KUEUE_CHART.namespace
    """The manager's Kueue namespace, where Kueue reads a MultiKueueCluster's Secret."""

    _checks = {"workers": not_empty, "queues": not_empty, "namespace": rules.K8S_NAME}

    def _cross(self) -> Iterator[Problem]:
        known = {w.name for w in self.workers}
        for i, queue in enumerate(self.queues):
            if unknown := [w for w in queue.workers if w not in known]:
                yield Problem(("queues", i, "workers"), unknown, f"not among the workers ({', '.join(sorted(known))})")


def secret_name(worker: str) -> str:
    """The manager's Secret holding a worker's kubeconfig."""
    return f"{worker}-multikueue-kubeconfig"


class MultiKueueClusters(pulumi.ComponentResource):
    """On the manager (its provider in `opts`, after Kueue's release): the workers and the
    MultiKueueConfig of each queue. `objects` are every object, in creation order."""

    def __init__(self, name: str, args: MultiKueueClustersArgs, opts: pulumi.ResourceOptions | None = None):
        args = MultiKueueClustersArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:MultiKueueClusters", name, None, opts)
        kids = Children(self, name, opts)
        self.objects: list[pulumi.Resource] = []
        for worker in args.workers:
            secret = k8s.core.v1.Secret(
                **kids(f"kubeconfig-{worker.name}"),
                metadata=metadata(secret_name(worker.name), args.namespace),
                type="Opaque",
                string_data={KUBECONFIG_KEY: pulumi.Output.secret(worker.kubeconfig)},
            )
            cluster = k8s.apiextensions.CustomResource(
                **kids(f"cluster-{worker.name}", secret),
                api_version=catalog.KUEUE_API,
                kind="MultiKueueCluster",
                metadata=metadata(worker.name),
                spec={"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": secret_name(worker.name)}}},
            )
            self.objects += [secret, cluster]
        for queue in args.queues:
            self.objects.append(
                k8s.apiextensions.CustomResource(
                    **kids(f"config-{queue.cluster_queue}"),
                    api_version=catalog.KUEUE_API,
                    kind="MultiKueueConfig",
                    metadata=metadata(multikueue_check_name(queue.cluster_queue)),
                    spec={"clusters": list(queue.workers)},
                )
            )
        self.register_outputs({"workers": [w.name for w in args.workers]})
