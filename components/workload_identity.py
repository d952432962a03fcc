"""The namespace and Kubernetes service account training pods run as.

Identity to Google Cloud is Workload Identity Federation for GKE with the Kubernetes service
account as the principal itself: the GCP layer grants the bucket (and whatever else the job
reads) to `principal://iam.googleapis.com/projects/<number>/locations/global/workloadIdentityPools/
<project>.svc.id.goog/subject/ns/<namespace>/sa/<name>`. No Google service account is
impersonated, so the service account carries no `iam.gke.io/gcp-service-account` annotation
(cloud.google.com/kubernetes-engine/docs/how-to/workload-identity).

On a platform shared by many job stacks, `JobIdentity` gives one job a service account of its
own, allowed to write only its own prefix of the platform's bucket.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from trainstack.components.args import Args, Problem, one_of
from trainstack.components.k8s_provider import metadata
from trainstack.components.options import Children
from trainstack.components.pod_security import Level, namespace_labels
from trainstack.components.storage.gcs import OBJECT_USER_ROLE, OBJECT_VIEWER_ROLE, workload_identity_principal
from trainstack.core import rules

# Namespaces every cluster already has: used, never created (nor deleted on destroy).
BUILT_IN_NAMESPACES = frozenset({"default"})


@dataclass(frozen=True)
class WorkloadIdentityArgs(Args):
    """The workload's namespace (created unless built in) and its service account's name."""

    namespace: str
    """The namespace; `default` is used, any other is created."""
    service_account: str
    """The Kubernetes service account's name."""
    pod_security: str = "privileged"
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
                **kids("namespace"),
                metadata=metadata(args.namespace, labels=namespace_labels(cast(Level, args.pod_security))),  # one of the levels (_checks)
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


@dataclass(frozen=True)
class JobIdentityArgs(Args):
    """One job's own identity on a shared platform: its service account and the one prefix of
    the platform's bucket it may write."""

    namespace: str
    """The platform's workload namespace."""
    service_account: str
    """The job's Kubernetes service account."""
    prefix: str
    """The job's directory in the bucket (no slashes)."""
    project: str
    """The cluster's project (its Workload Identity pool)."""
    project_number: pulumi.Input[str] | None = None
    """The project's number (the principal names it)."""
    bucket: pulumi.Input[str] | None = None
    """The platform's bucket; None (a file share): the service account alone."""

    _checks = {"namespace": rules.K8S_NAME, "service_account": rules.K8S_NAME, "prefix": rules.K8S_NAME, "project": rules.PROJECT_ID}

    def _cross(self) -> Iterator[Problem]:
        if self.bucket is not None and self.project_number is None:
            yield Problem(("project_number",), None, "needed with a bucket: the bucket grants the job's principal, which names the project by number")


def prefix_condition(bucket: str, prefix: str) -> str:
    """CEL: an object or (hierarchical namespace) folder under `prefix/` of `bucket`
    (cloud.google.com/storage/docs/access-control/iam#conditions)."""
    root = f"projects/_/buckets/{bucket}"
    return f'resource.name.startsWith("{root}/objects/{prefix}/") || resource.name.startsWith("{root}/folders/{prefix}/")'


class JobIdentity(pulumi.ComponentResource):
    """A job's Kubernetes service account, allowed (Workload Identity principal) to write only
    `<bucket>/<prefix>/` and to list the bucket, so one job cannot overwrite another's
    checkpoints. Pass the Kubernetes provider in `opts.providers`."""

    def __init__(self, name: str, args: JobIdentityArgs, opts: pulumi.ResourceOptions | None = None):
        args = JobIdentityArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:JobIdentity", name, None, opts)
        kids = Children(self, name, opts)
        account = k8s.core.v1.ServiceAccount(
            **kids("service-account"), metadata=metadata(args.service_account, args.namespace), automount_service_account_token=False
        )
        self.service_account_name = args.service_account
        if args.bucket is not None and args.project_number is not None:  # one without the other is refused (_cross)
            member = pulumi.Output.from_input(args.project_number).apply(
                lambda number: workload_identity_principal(number, args.project, args.namespace, args.service_account)
            )
            bucket = pulumi.Output.from_input(args.bucket)
            gcp.storage.BucketIAMMember(
                **kids("own-prefix", account),
                bucket=bucket,
                role=OBJECT_USER_ROLE,
                member=member,
                condition=gcp.storage.BucketIAMMemberConditionArgs(
                    title=f"only-{args.prefix}", expression=bucket.apply(lambda b: prefix_condition(b, args.prefix))
                ),
            )
            # Listing is a call on the bucket itself; object reads elsewhere stay refused.
            gcp.storage.BucketIAMMember(
                **kids("list-bucket", account),
                bucket=bucket,
                role=OBJECT_VIEWER_ROLE,
                member=member,
                condition=gcp.storage.BucketIAMMemberConditionArgs(
                    title="bucket-listing", expression=bucket.apply(lambda b: f'resource.name == "projects/_/buckets/{b}"')
                ),
            )
        self.register_outputs({"serviceAccount": self.service_account_name})
