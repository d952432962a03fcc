"""The platform of a workload stack, made elsewhere: a trainstack platform stack (read through
its StackReference) or a GKE cluster trainstack did not make (read with the provider's lookup).
Nothing here creates a network, a cluster or a node pool."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp
from pulumi.runtime.sync_await import _sync_await

from trainstack.components import gcp_services as apis
from trainstack.components.gcp_services import ProjectServices, ProjectServicesArgs
from trainstack.components.gke_cluster import kubeconfig
from trainstack.components.jobset import JobSet, JobSetArgs
from trainstack.components.k8s_provider import NODE_POOL_LABEL, ClusterProviderArgs, Placement, cluster_provider
from trainstack.components.kueue import Kueue
from trainstack.context import StackContext
from trainstack.infra import contract
from trainstack.infra.gcp import workload_image
from trainstack.infra.kubernetes import kueue_args
from trainstack.infra.platform import KubernetesPlatform, Platform


def read_platform_stack(name: str) -> tuple[pulumi.StackReference, Any]:
    """The StackReference of platform stack `name` and the raw value of its contract output.
    Read at once (the engine resolves the reference), so the workload is checked against it
    before anything else registers."""
    reference = pulumi.StackReference(name)
    details = _sync_await(reference.get_output_details(contract.OUTPUT))
    return reference, details.value


def _cluster_kubeconfig(terms: contract.Contract) -> pulumi.Output[str]:
    """A kubeconfig of an existing cluster, looked up by project, location and name (the
    lookup's master auths arrive as mappings keyed by their Python names)."""
    found = gcp.container.get_cluster_output(name=terms.cluster_name, location=terms.cluster_location, project=terms.project)
    context = f"gke_{terms.project}_{terms.cluster_location}_{terms.cluster_name}"
    return pulumi.Output.secret(
        pulumi.Output.all(found.endpoint, found.master_auths).apply(
            lambda values: kubeconfig(context, values[0], values[1][0]["cluster_ca_certificate"])
        )
    )


def build(ctx: StackContext) -> Platform:
    """The platform a workload stack runs on, from its contract."""
    assert ctx.platform is not None and ctx.contract is not None
    terms, config = ctx.contract, ctx.config
    if ctx.platform.stack:
        config_source: Any = ctx.reference.require_output(contract.KUBECONFIG_OUTPUT)
    else:
        config_source = _cluster_kubeconfig(terms)
    provider = cluster_provider(
        "cluster",
        ClusterProviderArgs(
            kubeconfig=config_source,
            cluster_identifier=f"projects/{terms.project}/locations/{terms.cluster_location}/clusters/{terms.cluster_name}",
            # Not this stack's cluster: never forget objects because the API is out of reach.
            delete_unreachable=False,
        ),
    )
    ready: list[pulumi.Resource] = []
    existing = ctx.platform.existing_cluster
    on_cluster = pulumi.ResourceOptions(provider=provider)
    placement = Placement(node_selector={NODE_POOL_LABEL: terms.cpu_pool})
    if existing is not None and existing.install_job_set:
        ready.append(JobSet("jobset", JobSetArgs(placement=placement), opts=on_cluster).release)
    if existing is not None and existing.install_kueue:
        ready += Kueue("kueue", kueue_args(config, terms.namespace, placement), opts=on_cluster).objects
    image, _ = _image(ctx)
    kube = KubernetesPlatform(
        provider=provider,
        namespace=terms.namespace,
        service_account=terms.service_account,
        local_queue=terms.local_queue,
        claim_name=terms.storage_claim,
        network_names=list(terms.network_names),
        ready=ready,
        topology_aware=terms.topology_aware,
        outputs={
            "platform": ctx.platform.stack or f"projects/{terms.project}/locations/{terms.cluster_location}/clusters/{terms.cluster_name}",
            "localQueue": terms.local_queue,
            "workloadNamespace": terms.namespace,
            "storageClaim": terms.storage_claim,
            "getCredentials": f"gcloud container clusters get-credentials {terms.cluster_name} --location {terms.cluster_location} --project {terms.project}",
        },
    )
    return Platform(kubernetes=kube, image=image)


def _image(ctx: StackContext) -> tuple[pulumi.Output[str], pulumi.Output[str] | None]:
    """The workload image: prebuilt, or built here (with the APIs the build needs)."""
    services = None
    if ctx.config.image.build is not None:
        services = ProjectServices("services", ProjectServicesArgs(ctx.config.project, sorted([apis.ARTIFACT_REGISTRY, apis.CLOUD_BUILD])))
    return workload_image(ctx, services)
