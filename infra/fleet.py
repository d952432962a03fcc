"""`TrainingFleet`: a fleet stack's MultiKueue manager cluster and its link to each worker platform,
as one component, as `TrainingPlatform` is a platform's.

The manager is small and CPU only (it holds the queue and the jobs' objects; Kueue does not let a
manager be its own worker): a VPC, a GKE cluster, a CPU pool, JobSet (a job is created on the
manager first; MultiKueue mirrors it to a worker and Kueue's webhook sets its `spec.managedBy`),
and Kueue with a MultiKueue AdmissionCheck on every ClusterQueue. Its queues mirror the workers'
(infra.fleet_stack): one a machine type, named as on the workers, its quota their pools' together, its
flavor topology-aware where every worker pool is (TAS runs on the worker; Kueue delays the
topology request on the manager: v0.19.2 pkg/scheduler/flavorassigner/tas_flavorassigner.go).

Each worker is read through its StackReference (its `platform` contract and secret
`kubeconfig`); on it, the fleet makes only the manager's account (components.multikueue), so
adding or removing a worker touches no other.

The fleet's components are the component's children, named `<name>-<role>` and each aliased from
the top-level resource it was before (infra.platform.Place): a live fleet stack moves under the
component and replaces nothing (tests/test_fleet_component.py). A worker's Kubernetes provider moves
so too, and the objects it manages on the worker with it: the engine does not count a provider
reached through its alias as a changed provider (pulumi/pulumi#6453, pkg/resource/deploy/
step_generator.go `providerChanged`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pulumi

from trainstack.components import gcp_services as apis
from trainstack.components.gcp_network import PrimaryNetwork, PrimaryNetworkArgs
from trainstack.components.gcp_services import ProjectServices, ProjectServicesArgs
from trainstack.components.gke_cluster import GkeCluster, GkeClusterArgs
from trainstack.components.jobset import JobSet, JobSetArgs
from trainstack.components.k8s_provider import NODE_POOL_LABEL, ClusterProviderArgs, Placement, cluster_provider
from trainstack.components.kueue import ALL_AT_ONCE_DISPATCHER, INCREMENTAL_DISPATCHER, GpuFlavor, Kueue, KueueSpec, MultiKueueDispatch
from trainstack.components.multikueue import (
    MultiKueueClusters,
    MultiKueueClustersArgs,
    MultiKueueQueue,
    MultiKueueWorker,
    MultiKueueWorkerAccess,
    MultiKueueWorkerAccessArgs,
)
from trainstack.components.node_pools import CpuNodePool, CpuNodePoolArgs, NodeServiceAccount, NodeServiceAccountArgs
from trainstack.components.workload_identity import WorkloadIdentity, WorkloadIdentityArgs
from trainstack.core import catalog
from trainstack.infra import contract
from trainstack.infra import fleet_stack as fleet
from trainstack.infra.context import StackContext
from trainstack.infra.gcp import CONTROL_PLANE_PORTS
from trainstack.infra.kubernetes import kueue_args
from trainstack.infra.platform import Place

TYPE = "trainstack:index:TrainingFleet"
DISPATCHER = {"incremental": INCREMENTAL_DISPATCHER, "all-at-once": ALL_AT_ONCE_DISPATCHER}


def manager_flavors(queues: list[fleet.FleetQueue]) -> list[GpuFlavor]:
    """One flavor a queue on the manager: its machine, every worker pool's nodes as quota, and
    node labels every worker of the machine satisfies (the machine's alone). The worker's copy is
    made from the job as submitted, before the manager admits it (v0.19.2
    pkg/controller/jobs/jobset/jobset_multikueue_adapter.go SyncJob)."""
    return [
        GpuFlavor(name=q.name, node_pool=q.name, machine_type=q.machine_type, nodes=q.nodes, topology_aware=q.topology_aware, queue=q.name, any_pool=True)
        for q in queues
    ]


def account_name(stack: str) -> str:
    """The manager's account on a worker: one a fleet stack, so a worker may serve two fleets."""
    return re.sub(r"[^a-z0-9-]+", "-", f"multikueue-{stack.lower()}")[:63].strip("-")


@dataclass(frozen=True)
class FleetContext(StackContext):
    """A fleet stack as its check left it (app/deploy/stack_file.py FleetStack): its config and its
    workers, each with the contract read from its stack, mirroring one another."""

    config: fleet.FleetStackConfig = field(kw_only=True)
    workers: tuple[fleet.Worker, ...] = ()


@dataclass(frozen=True)
class TrainingFleetArgs:
    """A fleet stack checked, and where its workers are read from."""

    fleet: FleetContext
    """The fleet's config and its workers, checked."""
    references: Mapping[str, Any]
    """Each worker stack's StackReference, by stack: the manager reads its `kubeconfig` through it."""


class TrainingFleet(pulumi.ComponentResource):
    """A MultiKueue fleet: a CPU-only manager cluster (its VPC, GKE cluster, CPU pool, JobSet and
    Kueue with a MultiKueue AdmissionCheck on every queue) and its account on each worker platform."""

    kubeconfig: pulumi.Output[str]
    """A kubeconfig of the manager's cluster (a secret)."""
    cluster_name: pulumi.Output[str]
    """The manager's GKE cluster's name."""
    queues: pulumi.Output[dict[str, list[str]]]
    """Each queue of the fleet, with the workers it dispatches to, in order."""
    platform: pulumi.Output[dict[str, Any]]
    """The fleet's platform contract (versioned) a workload stack runs on."""
    egress_addresses: pulumi.Output[list[str]]
    """The manager's egress CIDRs, which its workers admit."""

    def __init__(self, name: str, args: TrainingFleetArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        self.stack_outputs: dict[str, Any] = build(args.fleet, args.references, Place(self, name))
        """The stack outputs the shipped program exports."""
        self.kubeconfig = pulumi.Output.from_input(self.stack_outputs[contract.KUBECONFIG_OUTPUT])
        self.cluster_name = pulumi.Output.from_input(self.stack_outputs["clusterName"])
        self.queues = pulumi.Output.from_input(self.stack_outputs["queues"])
        self.platform = pulumi.Output.from_input(self.stack_outputs[contract.OUTPUT])
        self.egress_addresses = pulumi.Output.from_input(self.stack_outputs[fleet.EGRESS_OUTPUT])
        self.register_outputs(
            {
                "kubeconfig": self.kubeconfig,
                "clusterName": self.cluster_name,
                "queues": self.queues,
                "platform": self.platform,
                fleet.EGRESS_OUTPUT: self.egress_addresses,
            }
        )


def build(ctx: FleetContext, references: Mapping[str, Any], place: Place) -> dict[str, Any]:
    """Register the manager and the workers' accounts at `place`; return the stack's outputs (the
    fleet's `platform` contract and secret `kubeconfig` among them). `references` maps a worker's
    stack to its StackReference."""
    config, workers = ctx.config, list(ctx.workers)
    project, region, labels = config.project, config.region, ctx.labels
    services = ProjectServices(
        place.name("services"),
        ProjectServicesArgs(project, sorted({apis.CONTAINER, apis.COMPUTE, apis.IAM, apis.CLOUD_RESOURCE_MANAGER, apis.LOGGING, apis.MONITORING})),
        opts=place.opts("services"),
    )
    network = PrimaryNetwork(
        place.name("network"),
        # Its Cloud NAT egresses from an address reserved here, exported: the workers admit it.
        PrimaryNetworkArgs(spec=config.network, project=project, region=region, name_prefix=config.cluster.name, egress_address=True),
        opts=place.opts("network", pulumi.ResourceOptions(depends_on=services.need(apis.COMPUTE))),
    )
    node_account = NodeServiceAccount(
        place.name("node-sa"),
        NodeServiceAccountArgs(project=project, account_id=ctx.account_id("nodes")),
        opts=place.opts("node-sa", pulumi.ResourceOptions(depends_on=services.need(apis.IAM, apis.CLOUD_RESOURCE_MANAGER))),
    )
    spec = config.cluster
    cluster = GkeCluster(
        place.name("cluster"),
        GkeClusterArgs(
            spec=spec,
            project=project,
            location=region,
            node_locations=config.cpu_zones,
            network=network.ref,
            node_service_account=node_account.email,
            control_plane_ports=CONTROL_PLANE_PORTS,
            labels=labels,
        ),
        opts=place.opts("cluster", pulumi.ResourceOptions(depends_on=services.need(apis.CONTAINER, apis.COMPUTE, apis.LOGGING, apis.MONITORING))),
    )
    cpu = config.cpu_pool
    cpu_pool = CpuNodePool(
        place.name("cpu-pool"),
        CpuNodePoolArgs(
            spec=cpu.model_copy(update={"zones": config.cpu_zones}),
            project=project,
            location=region,
            cluster=cluster.cluster_id,
            service_account=node_account.email,
            labels=labels,
        ),
        opts=place.opts("cpu-pool", pulumi.ResourceOptions(depends_on=[node_account, *services.need(apis.CONTAINER)])),
    )

    on_manager = pulumi.ResourceOptions(providers=[cluster.provider], depends_on=[cpu_pool])
    placement = Placement(node_selector={NODE_POOL_LABEL: cpu.name})
    queues = fleet.queues(workers)
    first = workers[0].terms
    # The job namespace mirrors the workers' (they agree: infra.fleet_stack.problems).
    identity = WorkloadIdentity(
        place.name("workload-identity"),
        WorkloadIdentityArgs(namespace=first.namespace, service_account=first.service_account),
        opts=place.opts("workload-identity", pulumi.ResourceOptions(providers=[cluster.provider])),
    )
    JobSet(place.name("jobset"), JobSetArgs(placement=placement), opts=place.opts("jobset", on_manager))
    # The manager waits for a job's pods as long as the worker running it does (infra.fleet_stack).
    timeout = fleet.pods_ready_timeout(config, workers)
    args = kueue_args(KueueSpec(), manager_flavors(queues), queues[0].name, queues[0].name, identity.namespace, placement, timeout)
    origin = config.fleet.origin or account_name(ctx.stack)
    dispatch = MultiKueueDispatch(dispatcher=DISPATCHER[config.fleet.dispatcher], origin=origin)
    # The manager's admission is the dispatch: blocking it while one job's pods start (the local
    # JobSet's status mirrors the worker's) would dispatch one job at a time to the whole fleet.
    # Each worker blocks its own admissions.
    ready = args.spec.wait_for_pods_ready.model_copy(update={"block_admission": False})
    kueue = Kueue(
        place.name("kueue"),
        replace(args, multikueue=dispatch, spec=args.spec.model_copy(update={"wait_for_pods_ready": ready})),
        opts=place.opts("kueue", on_manager),
    )

    accesses = []
    for worker in workers:
        reference = references[worker.config.stack]
        worker_config = reference.require_output(contract.KUBECONFIG_OUTPUT)
        role = f"worker-{worker.config.name}"
        provider = cluster_provider(
            place.name(role),
            ClusterProviderArgs(
                kubeconfig=worker_config,
                cluster_identifier=worker.cluster,
                # Not this stack's cluster: never forget objects because the API is out of reach.
                delete_unreachable=False,
            ),
            place.opts(role),
        )
        accesses.append(
            MultiKueueWorkerAccess(
                place.name(role),
                MultiKueueWorkerAccessArgs(
                    worker=worker.config.name,
                    account=account_name(ctx.stack),
                    worker_kubeconfig=worker_config,
                    rotation=worker.config.credential_rotation,
                ),
                opts=place.opts(role, pulumi.ResourceOptions(providers=[provider])),
            )
        )
    MultiKueueClusters(
        place.name("multikueue"),
        MultiKueueClustersArgs(
            workers=[MultiKueueWorker(w.config.name, a.kubeconfig) for w, a in zip(workers, accesses, strict=True)],
            queues=[MultiKueueQueue(q.name, q.workers) for q in queues],
        ),
        opts=place.opts("multikueue", pulumi.ResourceOptions(providers=[cluster.provider], depends_on=[kueue.release])),
    )
    terms = fleet.fleet_contract(config, workers, cluster.identity, [pc.name for pc in args.spec.priority_classes])
    return {
        "clusterName": cluster.name,
        "clusterLocation": region,
        "getCredentials": f"gcloud container clusters get-credentials {spec.name} --region {region} --project {project}",
        contract.KUBECONFIG_OUTPUT: cluster.kubeconfig,
        contract.OUTPUT: terms.to_output(),
        **{fleet.kubeconfig_output(w.config.name): references[w.config.stack].require_output(contract.KUBECONFIG_OUTPUT) for w in workers},
        "workers": {w.config.name: {"stack": w.config.stack, "region": w.terms.region, "queues": contract.queues(w.terms)} for w in workers},
        "queues": {q.name: q.workers for q in queues},
        # The label value of this fleet's copies on its workers (`kueue.x-k8s.io/multikueue-origin`): draining a worker finds them by it.
        "multiKueueOrigin": origin,
        # The manager's egress (its Cloud NAT's reserved address, /32): each worker naming this stack in
        # trainstack:cluster.admitFleets adds it to its authorized networks at its next `up`.
        fleet.EGRESS_OUTPUT: network.egress,
        "kueueVersion": catalog.KUEUE_CHART.version,
        "jobsetVersion": catalog.JOBSET_CHART.version,
    }
