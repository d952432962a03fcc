"""A fleet stack: the MultiKueue manager cluster and its link to each worker platform.

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
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pulumi

from trainstack.components import gcp_services as apis
from trainstack.components.gcp_network import PrimaryNetwork
from trainstack.components.gcp_services import ProjectServices, ProjectServicesArgs
from trainstack.components.gke_cluster import GkeCluster
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
from trainstack.infra.gcp import cluster_args, network_args
from trainstack.infra.kubernetes import kueue_args

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


def build(ctx: StackContext, config: fleet.FleetStackConfig, workers: list[fleet.Worker], references: dict[str, Any]) -> dict[str, Any]:
    """Register the manager and the workers' accounts; return the stack's outputs (the fleet's
    `platform` contract and secret `kubeconfig` among them). `references` maps a worker's stack
    to its StackReference."""
    project, region, labels = config.project, config.region, ctx.labels
    services = ProjectServices(
        "services",
        ProjectServicesArgs(project, sorted({apis.CONTAINER, apis.COMPUTE, apis.IAM, apis.CLOUD_RESOURCE_MANAGER, apis.LOGGING, apis.MONITORING})),
    )
    network = PrimaryNetwork(
        "network",
        # Its Cloud NAT egresses from an address reserved here, exported: the workers admit it.
        network_args(config.network, project=project, region=region, name_prefix=config.cluster.name, egress_address=True),
        opts=pulumi.ResourceOptions(depends_on=services.need(apis.COMPUTE)),
    )
    node_account = NodeServiceAccount(
        "node-sa",
        NodeServiceAccountArgs(project=project, account_id=ctx.account_id("nodes")),
        opts=pulumi.ResourceOptions(depends_on=services.need(apis.IAM, apis.CLOUD_RESOURCE_MANAGER)),
    )
    spec = config.cluster
    cluster = GkeCluster(
        "cluster",
        cluster_args(
            spec,
            project=project,
            location=region,
            node_locations=config.cpu_zones,
            network=network.ref,
            node_service_account=node_account.email,
            labels=labels,
        ),
        opts=pulumi.ResourceOptions(depends_on=services.need(apis.CONTAINER, apis.COMPUTE, apis.LOGGING, apis.MONITORING)),
    )
    cpu = config.cpu_pool
    cpu_pool = CpuNodePool(
        "cpu-pool",
        CpuNodePoolArgs(
            spec=cpu.model_copy(update={"zones": config.cpu_zones}),
            project=project,
            location=region,
            cluster=cluster.cluster_id,
            service_account=node_account.email,
            labels=labels,
        ),
        opts=pulumi.ResourceOptions(depends_on=[node_account, *services.need(apis.CONTAINER)]),
    )

    on_manager = pulumi.ResourceOptions(providers=[cluster.provider], depends_on=[cpu_pool])
    placement = Placement(node_selector={NODE_POOL_LABEL: cpu.name})
    queues = fleet.queues(workers)
    first = workers[0].terms
    # The job namespace mirrors the workers' (they agree: infra.fleet_stack.problems).
    identity = WorkloadIdentity(
        "workload-identity",
        WorkloadIdentityArgs(namespace=first.namespace, service_account=first.service_account),
        opts=pulumi.ResourceOptions(providers=[cluster.provider]),
    )
    JobSet("jobset", JobSetArgs(placement=placement), opts=on_manager)
    # The manager waits for a job's pods as long as the worker running it does (infra.fleet_stack).
    timeout = fleet.pods_ready_timeout(config, workers)
    args = kueue_args(KueueSpec(), manager_flavors(queues), queues[0].name, queues[0].name, identity.namespace, placement, timeout)
    origin = config.fleet.origin or account_name(ctx.stack)
    dispatch = MultiKueueDispatch(dispatcher=DISPATCHER[config.fleet.dispatcher], origin=origin)
    # The manager's admission is the dispatch: blocking it while one job's pods start (the local
    # JobSet's status mirrors the worker's) would dispatch one job at a time to the whole fleet.
    # Each worker blocks its own admissions.
    ready = args.spec.wait_for_pods_ready.model_copy(update={"block_admission": False})
    kueue = Kueue("kueue", replace(args, multikueue=dispatch, spec=args.spec.model_copy(update={"wait_for_pods_ready": ready})), opts=on_manager)

    accesses = []
    for worker in workers:
        reference = references[worker.config.stack]
        worker_config = reference.require_output(contract.KUBECONFIG_OUTPUT)
        provider = cluster_provider(
            f"worker-{worker.config.name}",
            ClusterProviderArgs(
                kubeconfig=worker_config,
                cluster_identifier=worker.cluster,
                # Not this stack's cluster: never forget objects because the API is out of reach.
                delete_unreachable=False,
            ),
        )
        accesses.append(
            MultiKueueWorkerAccess(
                f"worker-{worker.config.name}",
                MultiKueueWorkerAccessArgs(
                    worker=worker.config.name,
                    account=account_name(ctx.stack),
                    worker_kubeconfig=worker_config,
                    rotation=worker.config.credential_rotation,
                ),
                opts=pulumi.ResourceOptions(providers=[provider]),
            )
        )
    MultiKueueClusters(
        "multikueue",
        MultiKueueClustersArgs(
            workers=[MultiKueueWorker(w.config.name, a.kubeconfig) for w, a in zip(workers, accesses, strict=True)],
            queues=[MultiKueueQueue(q.name, q.workers) for q in queues],
        ),
        opts=pulumi.ResourceOptions(providers=[cluster.provider], depends_on=[kueue.release]),
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
