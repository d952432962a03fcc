"""The platform of a workload stack, made elsewhere: a trainstack platform stack (read through
its StackReference) or a GKE cluster trainstack did not make (read with the provider's lookup).
Nothing here creates a network, a cluster or a node pool; the Platform is filled from the
contract the workload was validated against."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from trainstack.components.gcp_services import ProjectServices, ProjectServicesArgs
from trainstack.components.gke_cluster import cluster_identity, kubeconfig
from trainstack.components.image import ImageSpec
from trainstack.components.jobset import JobSet, JobSetArgs
from trainstack.components.k8s_provider import ACCELERATOR_LABEL, NODE_POOL_LABEL, ClusterProviderArgs, Placement, cluster_provider
from trainstack.components.kueue import GpuFlavor, Kueue, KueueSpec
from trainstack.components.node_pools import gpu_pool_selector, gpu_tolerations
from trainstack.components.workload_identity import JobIdentity, JobIdentityArgs
from trainstack.core import catalog, rules
from trainstack.core.errors import ConfigError
from trainstack.infra import contract
from trainstack.infra import fleet_stack as fleet
from trainstack.infra.context import StackContext
from trainstack.infra.gcp import image_build_services, workload_image
from trainstack.infra.kubernetes import kueue_args
from trainstack.infra.platform import KubernetesPlatform, Platform
from trainstack.infra.stack import PlatformRef

# The engine's built-in function that returns a stack's outputs, as the StackReference resource reads
# them: {name, outputs, secretOutputNames} (pulumi/pulumi 1b59498 pkg/resource/deploy/builtins.go
# readStackOutputs, readStackReference; package `pulumi` is served by the engine's built-in provider,
# pkg/resource/deploy/providers/registry.go). `pulumi.runtime.invoke`, public and synchronous, calls it.
READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"


def read_platform_stack(name: str) -> tuple[pulumi.StackReference, Any]:
    """The StackReference of platform stack `name` and the raw value of its contract output.
    Read at once (a synchronous invoke of the engine's stack read; Python programs cannot await
    `get_output_details`, pulumi/pulumi#12172), so the workload is checked against it before anything
    else registers."""
    reference = pulumi.StackReference(name)
    try:
        read = pulumi.runtime.invoke(READ_STACK_OUTPUTS, {"name": name})
    except Exception as exc:  # the engine's own error for a stack it cannot read (missing, no access)
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            name,
            [f"trainstack:platform.stack = {name!r}: cannot read that stack ({reason}); deploy the platform stack first, or check its name and your access"],
        ) from None
    return reference, ((read.value or {}).get("outputs") or {}).get(contract.OUTPUT)


# The engine's error for a stack its backend does not have (pulumi/pulumi 1b59498
# pkg/backend/backend.go `GetStackOutputs`: `unknown stack %q`).
UNKNOWN_STACK = "unknown stack"


def read_fleet_egress(key: str, name: str) -> list[str] | None:
    """The egress CIDRs fleet stack `name` exports (core.fleet.EGRESS_OUTPUT), read at once as
    read_platform_stack reads a platform; None while there are none to admit: the fleet is not
    deployed yet (its first deployment follows its workers': README, fleets), or was deployed before
    trainstack reserved its egress. ConfigError at `key` for a stack that cannot be read otherwise,
    or whose output is no list of CIDRs."""
    try:
        read = pulumi.runtime.invoke(READ_STACK_OUTPUTS, {"name": name})
    except Exception as exc:  # the engine's own error for a stack it cannot read
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        if UNKNOWN_STACK in reason:
            return None
        raise ConfigError(name, [f"{key} = {name!r}: cannot read that stack ({reason}); check its name and your access"]) from None
    value = ((read.value or {}).get("outputs") or {}).get(fleet.EGRESS_OUTPUT)
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > rules.FLEET_EGRESS_ADDRESSES or any(rules.cidr(v) for v in value):
        raise ConfigError(
            name, [f"{key} = {name!r}: its output {fleet.EGRESS_OUTPUT!r} is {value!r}, not the fleet's egress CIDRs; is it a trainstack fleet stack?"]
        )
    return value


def _cluster_path(terms: contract.Contract) -> str:
    return f"projects/{terms.project}/locations/{terms.cluster_location}/clusters/{terms.cluster_name}"


def _existing_cluster_access(terms: contract.Contract) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
    """A kubeconfig of an existing cluster and its identity, looked up by project, location and
    name (the lookup's master auths arrive as mappings keyed by their Python names)."""
    found = gcp.container.get_cluster_output(name=terms.cluster_name, location=terms.cluster_location, project=terms.project)
    context = f"gke_{terms.project}_{terms.cluster_location}_{terms.cluster_name}"
    ca = found.master_auths.apply(lambda auths: (auths[0]["cluster_ca_certificate"] if auths else None) or "")
    config: pulumi.Output[str] = pulumi.Output.secret(pulumi.Output.all(found.endpoint, ca).apply(lambda v: kubeconfig(context, v[0] or "", v[1])))
    return config, ca.apply(lambda c: cluster_identity(_cluster_path(terms), c))


def _provider(ref: PlatformRef, ctx: StackContext, terms: contract.Contract) -> Any:
    if ref.stack:
        access: Any = ctx.reference.require_output(contract.KUBECONFIG_OUTPUT)
        # Platforms from before the contract carried the identity: their cluster path.
        identity: Any = terms.cluster_identity or _cluster_path(terms)
    else:
        access, identity = _existing_cluster_access(terms)
    return cluster_provider(
        "cluster",
        ClusterProviderArgs(
            kubeconfig=access,
            cluster_identifier=identity,
            # Not this stack's cluster: never forget objects because the API is out of reach.
            delete_unreachable=False,
        ),
    )


def _workers(ctx: StackContext, terms: contract.Contract) -> dict[str, Any]:
    """On a fleet: a provider for each worker that could run the job (its queue's), from the
    fleet's `kubeconfig-<worker>` outputs; else none."""
    if not fleet.of_fleet(terms):
        return {}
    clusters = {p["worker"]: p["workerCluster"] for p in terms.pools}
    return {
        worker: cluster_provider(
            f"worker-{worker}",
            ClusterProviderArgs(
                kubeconfig=ctx.reference.require_output(fleet.kubeconfig_output(worker)),
                cluster_identifier=identity,
                delete_unreachable=False,  # not this stack's cluster
            ),
        )
        for worker, identity in clusters.items()
    }


def build(ctx: StackContext, ref: PlatformRef, image: ImageSpec, job: str | None) -> Platform:
    """The platform a workload stack runs on (`ref`), from its contract, with its `image`; `job` names
    the job that runs as an account of its own on a trainstack platform (None: the platform's)."""
    terms = ctx.contract
    assert terms is not None
    provider = _provider(ref, ctx, terms)
    ready: list[pulumi.Resource] = []
    existing = ref.existing_cluster
    on_cluster = pulumi.ResourceOptions(provider=provider)
    placement = Placement(node_selector={NODE_POOL_LABEL: terms.cpu_pool})
    if existing is not None and existing.install_job_set:
        ready.append(JobSet("jobset", JobSetArgs(placement=placement), opts=on_cluster).release)
    machine = catalog.machine(terms.gpu_machine_type)
    if existing is not None and existing.install_kueue:
        flavor = GpuFlavor(terms.gpu_pool, terms.gpu_pool, machine.name, terms.gpu_nodes, terms.topology_aware, dranet=contract.dranet(terms))
        args = kueue_args(KueueSpec(), [flavor], terms.local_queue, terms.cluster_queue, terms.namespace, placement)
        ready += Kueue("kueue", args, opts=on_cluster).objects
    service_account, prefix = terms.service_account, ""
    if job is not None and existing is None:
        prefix = job
        identity = JobIdentity(
            "job-identity",
            JobIdentityArgs(
                namespace=terms.namespace,
                service_account=f"{job}-trainer",
                prefix=prefix,
                project=terms.project,
                project_number=gcp.organizations.get_project_output(project_id=terms.project).number,
                bucket=terms.bucket,
            ),
            opts=pulumi.ResourceOptions(providers=[provider]),
        )
        service_account = identity.service_account_name
        ready.append(identity)
    kube = KubernetesPlatform(
        companions=_workers(ctx, terms),
        provider=provider,
        namespace=terms.namespace,
        service_account=service_account,
        local_queue=terms.local_queue,
        claim_name=terms.storage_claim,
        nics=contract.nics(terms),
        dranet=contract.dranet(terms),
        ready=ready,
        topology_aware=terms.topology_aware,
        # GKE multi-networking needs Dataplane V2, so a cluster with GPU NICs enforces policies.
        network_policy=machine.extra_nics > 0,
        outputs={
            "platform": ref.stack or _cluster_path(terms),
            "localQueue": terms.local_queue,
            "workloadNamespace": terms.namespace,
            "storageClaim": terms.storage_claim,
            "getCredentials": f"gcloud container clusters get-credentials {terms.cluster_name} --location {terms.cluster_location} --project {terms.project}",
        },
    )
    reference, _ = _image(ctx, ref, image)
    return Platform(
        project=terms.project,
        zone=terms.zone,
        machine=machine,
        gpu_pool=terms.gpu_pool,
        gpu_nodes=terms.gpu_nodes,
        cpu_pool=terms.cpu_pool,
        # One pool: its selector. Several behind the queue: the machine's alone; Kueue adds the
        # pool of the flavor it admits the job on.
        # On a fleet, always the machine's alone: the job may run on any worker with the machine.
        node_selector=gpu_pool_selector(terms.gpu_pool, machine)
        if len(terms.pools or [terms.gpu_pool]) == 1 and not fleet.of_fleet(terms)
        else {ACCELERATOR_LABEL: machine.accelerator},
        tolerations=gpu_tolerations(machine),
        storage_kind=terms.storage_kind,
        mount_path=terms.mount_path,
        storage_prefix=prefix,
        kubernetes=kube,
        image=reference,
        outputs=dict(kube.outputs),
    )


def _image(ctx: StackContext, ref: PlatformRef, image: ImageSpec) -> tuple[pulumi.Output[str], pulumi.Output[str] | None]:
    """The workload image: prebuilt, or built here (with the APIs the build needs)."""
    services = None
    if image.build is not None:
        services = ProjectServices("services", ProjectServicesArgs(ctx.project, sorted(image_build_services(image.build))))
    # A trainstack platform's nodes run as <cluster>-nodes (infra.gcp); an existing cluster's
    # node account is its own to grant.
    assert ctx.contract is not None
    account = ctx.account_id("nodes")
    nodes: dict[str, pulumi.Input[str]] = {} if ref.existing_cluster else {account: f"{account}@{ctx.contract.project}.iam.gserviceaccount.com"}
    return workload_image(ctx, image, services, nodes)
