"""The namespace and Kubernetes service account training pods run as.

Identity to Google Cloud is Workload Identity Federation for GKE with the Kubernetes service
account as the principal itself: the GCP layer grants the bucket (and whatever else the job
reads) to `principal://iam.googleapis.com/projects/<number>/locations/global/workloadIdentityPools/
<project>.svc.id.goog/subject/ns/<namespace>/sa/<name>`. No Google service account is
impersonated, so the service account carries no `iam.gke.io/gcp-service-account` annotation
(cloud.google.com/kubernetes-engine/docs/how-to/workload-identity).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
from trainstack.components.args import Args, one_of
from trainstack.core import rules
from trainstack.components.k8s_provider import metadata
from trainstack.components.options import Children
from trainstack.components.pod_security import namespace_labels

# Namespaces every cluster already has: used, never created (nor deleted on destroy).
BUILT_IN_NAMESPACES = frozenset({"default"})


@dataclass(frozen=True)
class WorkloadIdentityArgs(Args):
    """The workload's namespace (created unless built in) and its service account's name."""

    namespace: str
    """The namespace; `default` is used, any other is created."""
    service_account: str
    """The Kubernetes service account's name."""
    pod_security: str | None = "privileged"
    """The Pod Security Standard a created namespace enforces (it warns and audits at
    `restricted`). GPU training pods mount the host's NVIDIA libraries (a hostPath, which
    `baseline` refuses), and the GPUDirect sidecars and the supervisor's host monitor run
    privileged or on the host network: `privileged` is the lowest level they run at."""

    _checks = {"namespace": rules.K8S_NAME, "service_account": rules.K8S_NAME, "pod_security": one_of("privileged", "baseline", "restricted")}


class WorkloadIdentity(pulumi.ComponentResource):
    """The workload namespace and service account."""

    namespace: pulumi.Output[str]
    """The namespace's name, resolved once the namespace exists (objects placed in it by this
    value wait for it)."""
    service_account_name: str
    """The service account's name."""
    service_account: k8s.core.v1.ServiceAccount
    """The ServiceAccount resource."""

    def __init__(self, name: str, args: WorkloadIdentityArgs, opts: pulumi.ResourceOptions | None = None):
        args = WorkloadIdentityArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:WorkloadIdentity", name, None, opts)
        kids = Children(self, name, opts)
        if args.namespace in BUILT_IN_NAMESPACES:
            self.namespace: pulumi.Output[str] = pulumi.Output.from_input(args.namespace)
        else:
            namespace = k8s.core.v1.Namespace(
                **kids("namespace"), metadata=metadata(args.namespace, labels=namespace_labels(args.pod_security))
            )
            self.namespace = namespace.metadata.apply(lambda meta: meta.name)
        self.service_account_name = args.service_account
        self.service_account = k8s.core.v1.ServiceAccount(
            **kids("service-account"),
            metadata=metadata(args.service_account, self.namespace),
            # Training pods call Google Cloud through the metadata server, never the Kubernetes
            # API: no token is mounted unless a pod asks for one.
            automount_service_account_token=False,
        )
        self.register_outputs({"namespace": self.namespace, "serviceAccount": self.service_account_name})
