"""The Kubernetes provider of a stack's cluster, and what every Kubernetes component shares:
GKE's node labels, object metadata, controller placement and the Helm release of a controller."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from trainstack.components.args import Args
from trainstack.components.options import ChildArgs
from trainstack.core import catalog

# Labels GKE sets on every node (cloud.google.com/kubernetes-engine/docs/how-to/gpus and
# /node-pools): the node pool's name and the GPU model (the catalog's `accelerator`).
NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"

# On every object trainstack applies, so `kubectl get -l app.kubernetes.io/managed-by=trainstack`
# lists them.
MANAGED_BY = {"app.kubernetes.io/managed-by": "trainstack"}


@dataclass(frozen=True)
class ClusterProviderArgs:
    """How the provider reaches the cluster.

    Attributes:
        kubeconfig: a kubeconfig (secret) whose user runs gke-gcloud-auth-plugin.
        cluster_identifier: a stable ID of the cluster (its resource name). The provider, and
            with it every object in the cluster, is replaced only when this changes; without it
            Pulumi guesses from the kubeconfig, and a rotated CA or a new endpoint address
            would replace every object.
        delete_unreachable: forget the cluster's objects when the cluster is gone. Every object
            here lives and dies with the cluster this stack owns and holds no data itself
            (volumes are `Retain` views of a bucket, a share or a disk the GCP layer owns), so
            when the cluster was deleted out of band (a reaped CI cluster, a console delete),
            `pulumi destroy` and `refresh` finish instead of failing on every object. The price:
            a refresh while the API is out of reach (a private endpoint, a narrowed authorized
            network) forgets the objects too, and the next `up` reports them as existing.
    """

    kubeconfig: pulumi.Input[str]
    cluster_identifier: pulumi.Input[str]
    delete_unreachable: bool = True


def cluster_provider(name: str, args: ClusterProviderArgs, opts: pulumi.ResourceOptions | None = None) -> k8s.Provider:
    """The one Kubernetes provider of a stack; every Kubernetes resource names it.

    Server-side apply (explicit, though the v4 default): the API server merges our fields with
    those GKE and the controllers own (webhook-injected fields, Kueue's status and finalizers),
    so an update never fights another field manager or reverts its fields.

    A create refuses an object that exists (AlreadyExists; pulumi/pulumi-kubernetes#4278, 4.29.0)
    instead of adopting it: where a resource's URN moves without an alias, the engine's create
    then delete of the old entry would otherwise delete the live object. Set here, not left to
    the default, because the provider reads PULUMI_K8S_UPSERT_EXISTING_OBJECTS from the
    environment only when its config does not say (pulumi-kubernetes@9497796
    provider/pkg/provider/provider.go `Configure`).
    """
    return k8s.Provider(
        name,
        kubeconfig=args.kubeconfig,
        cluster_identifier=args.cluster_identifier,
        enable_server_side_apply=True,
        delete_unreachable=args.delete_unreachable,
        upsert_existing_objects=False,
        opts=opts,
    )


@dataclass(frozen=True)
class Placement(Args):
    """Where a controller's pods run: a node selector, and tolerations for its nodes' taints."""

    node_selector: dict[str, str] = field(default_factory=dict)
    """The labels of the nodes the pods run on."""
    tolerations: list[dict[str, str]] = field(default_factory=list)
    """Tolerations as the Kubernetes API writes them (`key`, `operator`, `value`, `effect`)."""

    def pod_fields(self) -> dict[str, Any]:
        """`nodeSelector` and `tolerations` for a pod spec or a chart's values."""
        return {"nodeSelector": dict(self.node_selector), "tolerations": [dict(t) for t in self.tolerations]}


def metadata(name: pulumi.Input[str], namespace: pulumi.Input[str] | None = None, labels: Mapping[str, str] | None = None) -> k8s.meta.v1.ObjectMetaArgs:
    """Object metadata with an explicit name (never auto-named) and the managed-by label."""
    return k8s.meta.v1.ObjectMetaArgs(name=name, namespace=namespace, labels={**MANAGED_BY, **(labels or {})})


def controller_release(child: ChildArgs, chart: catalog.HelmChart, values: Mapping[str, Any]) -> k8s.helm.v3.Release:
    """A controller installed from its pinned upstream chart, as one Helm release.

    `helm.v3.Release`, not `helm.v4.Chart`: a controller is usable only when all of it is (CRDs,
    certificates, webhook configurations, the manager answering its webhooks), and the Release
    waits for exactly that (`helm --wait`: the Deployment reports ready, and Kueue's and JobSet's
    readiness probes pass only once their webhook certificates are in place), so a custom
    resource that depends on the Release is created only when its webhook answers. The
    release is also what the upstream docs and a platform team's tools expect (`helm list`,
    `helm history`, `helm rollback`), and a failed upgrade is cleaned up. `helm.v4.Chart` would
    list each rendered object in `pulumi preview`; the offline plan already records the values
    that decide them. CRDs follow Helm's rules: Kueue ships them as templates (upgraded with
    the chart), JobSet under `crds/` (installed with the first release, never upgraded).
    """
    oci = chart.repo.startswith("oci://")
    return k8s.helm.v3.Release(
        **child,
        name=chart.name,  # the release name fixes the object names the upstream docs use
        chart=f"{chart.repo}/{chart.name}" if oci else chart.name,
        repository_opts=None if oci else k8s.helm.v3.RepositoryOptsArgs(repo=chart.repo),
        version=chart.version,
        namespace=chart.namespace,
        create_namespace=True,
        values=dict(values),
        cleanup_on_fail=True,
        max_history=10,  # bound the release Secrets a long-lived cluster accumulates
    )
