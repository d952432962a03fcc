"""The GCP layer of a stack: APIs, networks, the cluster and its pools, storage and the image,
composed from components and wired from the StackConfig.

`build` composes the parts, each registering one concern: the network (`_network`, `_nic_networks`),
the nodes' account, the cluster (`_cluster`), its pools (`_pools`), the storage (`_storage`, made by its
kind: components/storage) and the image.

Ordering is by data and explicit dependencies only: every resource waits for the APIs it
calls; the pools wait for the cluster, their networks and the node account's grants; the image
build, the bucket, the Filestore instance and the NFS disk do not wait for the cluster (only
the bucket's Workload Identity grant does: its principal exists once a cluster creates the
project's identity pool).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi

from trainstack.components import gcp_services as apis
from trainstack.components.gcp_network import (
    GpuNicNetworks,
    GpuNicNetworksArgs,
    NetworkRef,
    PrimaryNetwork,
    PrimaryNetworkArgs,
)
from trainstack.components.gcp_services import ProjectServices, ProjectServicesArgs
from trainstack.components.gke_cluster import GkeCluster, GkeClusterArgs
from trainstack.components.image import BuildSpec, ImageSpec, PreloadBuild, WorkloadImage, WorkloadImageArgs, context_digest
from trainstack.components.node_pools import (
    CpuNodePool,
    CpuNodePoolArgs,
    ExtraNetwork,
    GpuNodePool,
    GpuNodePoolArgs,
    NodeServiceAccount,
    NodeServiceAccountArgs,
)
from trainstack.components.storage.kind import StorageSite, Store
from trainstack.core import catalog, names
from trainstack.core.errors import Problem
from trainstack.infra.context import StackContext
from trainstack.infra.contract import KUBECONFIG_OUTPUT
from trainstack.infra.platform import TOP, GcpPlatform, Place
from trainstack.infra.stack import StackConfig


def image_build_services(build: BuildSpec) -> tuple[str, ...]:
    """The APIs an image build calls: the repository, the build, its account and its staging
    bucket, and Secret Manager for a registry login's secret."""
    services = (apis.ARTIFACT_REGISTRY, apis.CLOUD_BUILD, apis.IAM, apis.STORAGE)
    return (*services, apis.SECRET_MANAGER) if build.ngc_api_key_secret else services


def project_bucket_name(project: str, name: str) -> str:
    """`<project>-<name>`, a valid bucket name (names.bucket)."""
    return names.bucket(project, name)


def required_services(config: StackConfig) -> list[str]:
    """The APIs this stack calls."""
    services = [apis.CONTAINER, apis.COMPUTE, apis.IAM, apis.CLOUD_RESOURCE_MANAGER, apis.STORAGE, apis.LOGGING, apis.MONITORING]
    services += config.storage.of_kind.needs
    if config.image.build is not None:
        services += image_build_services(config.image.build)
    if config.image.streaming:
        services.append(catalog.CONTAINER_FILESYSTEM_API)
    return sorted(set(services))


def problems(image: ImageSpec, root: Path) -> list[Problem]:
    """Rules that need the project's files (build contexts), checked before anything registers."""
    build = image.build
    if build is None:
        return []
    dockerfile = root / build.context / "Dockerfile"
    if not dockerfile.is_file():
        return [Problem(("trainstack:image", "build", "context"), build.context, f"no Dockerfile in {build.context}/ under {root}")]
    gated = [base for base in dockerfile_bases(dockerfile) if base.startswith(catalog.NGC_EARLY_ACCESS)]
    if gated and build.ngc_api_key_secret is None:
        return [
            Problem(
                ("trainstack:image", "build", "ngcApiKeySecret"),
                None,
                (
                    f"{build.context}/Dockerfile starts from {gated[0]}, which only an NGC API key with early access to "
                    f"{catalog.NGC_EARLY_ACCESS.rstrip('/')} can pull: name the Secret Manager secret that holds the key"
                ),
            )
        ]
    return []


def dockerfile_bases(dockerfile: Path) -> list[str]:
    """The images a Dockerfile's FROM lines name (stage names and flags left out)."""
    bases = []
    for line in dockerfile.read_text(errors="replace").splitlines():
        words = line.split()
        image = next((w for w in words[1:] if not w.startswith("--")), None) if words and words[0].upper() == "FROM" else None
        if image:
            bases.append(image)
    return bases


def workload_image(
    ctx: StackContext, image: ImageSpec, services: ProjectServices | None, node_accounts: dict[str, pulumi.Input[str]], place: Place = TOP
) -> tuple[pulumi.Output[str], pulumi.Output[str] | None]:
    """The workload image reference and the registry it was pushed to: built here with Cloud
    Build (`trainstack:image.build`), else the prebuilt reference and no registry. The nodes'
    accounts (emails, by account id) may pull from that repository. `place`: where it registers."""
    built = built_image(ctx, image, services, node_accounts, place)
    if built is None:
        return pulumi.Output.from_input(image.prebuilt or ""), None
    return built.reference, built.repository.registry_uri


def preload_build(config: StackConfig, ctx: StackContext, network: NetworkRef) -> PreloadBuild | None:
    """The preload disk image built with the image (`trainstack:image.preload.build`): its builder VM
    in the stack's zone on the cluster's VPC and subnet."""
    preload = config.image.preload
    if preload is None or not preload.build:
        return None
    return PreloadBuild(
        zone=config.zone,
        network=network.network,
        subnetwork=network.subnetwork,
        name_prefix=ctx.physical_name("preload"),
        vm_account_id=ctx.account_id("preload"),
        disk_size_gb=preload.disk_size_gb,
    )


def built_image(
    ctx: StackContext,
    image: ImageSpec,
    services: ProjectServices | None,
    node_accounts: dict[str, pulumi.Input[str]],
    place: Place = TOP,
    preload: PreloadBuild | None = None,
) -> WorkloadImage | None:
    """The image built here with Cloud Build (`image.build`), and its preload disk image where
    `preload` says; None for a prebuilt image."""
    spec = image.build
    if spec is None:
        return None
    needs = (*image_build_services(spec), *((apis.COMPUTE,) if preload else ()))
    after = pulumi.ResourceOptions(depends_on=services.need(*needs) if services else [])
    built = WorkloadImage(
        place.name("image"),
        WorkloadImageArgs(
            spec=spec,
            project=ctx.project,
            region=ctx.region,
            repository_id=image.repository or ctx.physical_name("images"),
            context_digest=context_digest(ctx.root / spec.context),
            builder_account_id=ctx.account_id("builder"),
            staging_bucket=project_bucket_name(ctx.project, ctx.physical_name("builds")),
            labels=ctx.labels,
            readers={account: pulumi.Output.concat("serviceAccount:", email) for account, email in node_accounts.items()},
            preload=preload,
        ),
        opts=place.opts("image", after),
    )
    return built


# The ports on the nodes the control plane calls: the controllers' webhooks and Kueue's visibility API.
CONTROL_PLANE_PORTS = [catalog.CONTROLLER_WEBHOOK_PORT, catalog.KUEUE_VISIBILITY_PORT]


@dataclass(frozen=True)
class Site:
    """What every part of a platform's GCP layer registers with: the stack, its config, where it
    registers, and the APIs it enabled."""

    ctx: StackContext
    config: StackConfig
    place: Place
    services: ProjectServices

    def opts(
        self, role: str, *needs: str, after: Sequence[pulumi.Resource] = (), was: Sequence[str] = (), roles_were: Sequence[str] = ()
    ) -> pulumi.ResourceOptions:
        """The options of the component playing `role`: it waits for `after` and the APIs it calls (`needs`)."""
        return self.place.opts(role, pulumi.ResourceOptions(depends_on=[*after, *self.services.need(*needs)]), was=was, roles_were=roles_were)


def _network(site: Site) -> NetworkRef:
    """Where the cluster attaches: the existing VPC the stack names, else one made here (kept on
    destroy while peered storage is kept)."""
    config = site.config
    existing = config.network.existing
    if existing is not None:
        return existing.ref
    args = PrimaryNetworkArgs(
        spec=config.network,
        project=config.project,
        region=config.region,
        name_prefix=config.cluster.name,
        keep_vpc=config.storage.of_kind.peered and not config.storage.disposable,
        mtu=config.vpc_mtu,
    )
    return PrimaryNetwork(site.place.name("network"), args, opts=site.opts("network", apis.COMPUTE)).ref


def _nic_networks(site: Site) -> dict[str, GpuNicNetworks]:
    """Each GPU machine with extra NICs, by machine type: its NIC VPCs, with ranges apart from every other family's."""
    config = site.config
    nets = {}
    for i, family in enumerate(config.nic_families):
        role, roles_were = names.by_machine("gpu-nics", i, family.machine.name)
        args = GpuNicNetworksArgs(
            project=config.project,
            region=config.region,
            zone=family.zone,
            name_prefix=config.cluster.name,
            machine_type=family.machine.name,
            nic_cidr=config.network.gpu_nic_cidr,
            nic_prefix=family.prefix,
            flow_logs=config.network.flow_logs,
        )
        nets[family.machine.name] = GpuNicNetworks(site.place.name(role), args, opts=site.opts(role, apis.COMPUTE, roles_were=roles_were))
    return nets


def _node_account(site: Site) -> NodeServiceAccount:
    """The account the nodes run as."""
    args = NodeServiceAccountArgs(project=site.config.project, account_id=site.ctx.account_id("nodes"))
    return NodeServiceAccount(site.place.name("node-sa"), args, opts=site.opts("node-sa", apis.IAM, apis.CLOUD_RESOURCE_MANAGER))


def _cluster(site: Site, network: NetworkRef, node_account: NodeServiceAccount) -> GkeCluster:
    """The GKE cluster over every pool's zones, with the features its pools and storage use:
    multi-networking (so Dataplane V2) wherever a machine has extra NICs, DRANET pools included,
    whose Toolkit blueprints leave it off: GKE cannot turn it off on a live cluster (Cluster Toolkit
    c765092 modules/scheduler/gke-cluster `enable_multi_networking`: "immutable on clusters"), so an
    A4X stack moving to DRANET keeps its cluster."""
    config = site.config
    args = GkeClusterArgs(
        spec=config.cluster,
        project=config.project,
        location=config.region,
        node_locations=[*config.all_gpu_zones, *config.cpu_zones],
        network=network,
        node_service_account=node_account.email,
        control_plane_ports=CONTROL_PLANE_PORTS,
        labels=site.ctx.labels,
        multi_networking=any(p.machine.extra_nics for p in config.pools),
        dranet=any(p.dranet for p in config.pools),
        shielded_nodes=not any(p.machine.bare_metal for p in config.pools),
        beta_apis=list(catalog.DRA_BETA_APIS) if any(p.machine.accelerator_topology for p in config.pools) else [],
        **config.storage.of_kind.cluster,
    )
    return GkeCluster(site.place.name("cluster"), args, opts=site.opts("cluster", apis.CONTAINER, apis.COMPUTE, apis.LOGGING, apis.MONITORING))


def _pools(
    site: Site, cluster: GkeCluster, node_account: NodeServiceAccount, nic_nets: dict[str, GpuNicNetworks], disk_image: pulumi.Output[str] | None
) -> tuple[list[GpuNodePool], CpuNodePool]:
    """The GPU pools in config order (booting from the preload `disk_image` built here, if any), and the CPU pool the controllers run on."""
    config = site.config
    gpu_pools = []
    for i, pool in enumerate(config.pools):
        role = names.gpu_pool_resource(pool.name)
        # Upgrade from positional names: the first pool was `gpu-pool`. Apply the upgrade
        # before reordering pools, or the alias lands on the pool that is first now.
        opts = site.opts(
            role,
            apis.CONTAINER,
            *([apis.COMPUTE] if pool.machine.accelerator_topology else []),
            after=[node_account],
            was=[names.FIRST_GPU_POOL_BEFORE] if i == 0 else [],
        )
        nics = nic_nets.get(pool.machine_type)
        args = GpuNodePoolArgs(
            spec=pool if pool.zones else pool.model_copy(update={"zones": [config.zone]}),
            project=config.project,
            location=config.region,
            cluster=cluster.cluster_id,
            service_account=node_account.email,
            extra_networks=[ExtraNetwork(vpc, subnet) for _, vpc, subnet in nics.networks] if nics else [],
            labels=site.ctx.labels,
            workload_policy_name=names.physical(config.cluster.name, f"{pool.name}-nvlink") if pool.machine.accelerator_topology else None,
            image_streaming=config.image.streaming,
            preload_disk_image=config.image.preload.disk_image if config.image.preload and config.image.preload.disk_image else disk_image,
        )
        gpu_pools.append(GpuNodePool(site.place.name(role), args, opts=opts))
    cpu_args = CpuNodePoolArgs(
        spec=config.cpu_pool.model_copy(update={"zones": config.cpu_zones}),
        project=config.project,
        location=config.region,
        cluster=cluster.cluster_id,
        service_account=node_account.email,
        labels=site.ctx.labels,
    )
    return gpu_pools, CpuNodePool(site.place.name("cpu-pool"), cpu_args, opts=site.opts("cpu-pool", apis.CONTAINER, after=[node_account]))


def _storage(site: Site, network: NetworkRef, cluster: GkeCluster) -> Store[Any, Any]:
    """The shared storage of `trainstack:storage.kind`, made by its kind (components/storage)."""
    ctx, config = site.ctx, site.config
    kind = config.storage.of_kind
    where = StorageSite(
        project=config.project,
        region=config.region,
        zone=config.gpu_zones[0],
        network=network.network,
        services=site.services,
        cluster=cluster.cluster,
        stack=ctx.stack,
        labels=ctx.labels,
        disposable=config.storage.disposable,
        physical_name=ctx.physical_name,
        workload_namespace=ctx.workload_namespace,
        workload_service_account=ctx.workload_service_account,
    )
    return kind.build(config.storage.spec, where, site.place.name(kind.role), site.opts(kind.role, *kind.needs))


def build(ctx: StackContext, config: StackConfig, place: Place = TOP) -> GcpPlatform:
    """Register the GCP layer of `ctx`'s stack (`config`, its platform config) at `place` and
    return what the Kubernetes layer needs."""
    services = ProjectServices(place.name("services"), ProjectServicesArgs(config.project, required_services(config)), opts=place.opts("services"))
    site = Site(ctx, config, place, services)
    network = _network(site)
    nic_nets = _nic_networks(site)
    node_account = _node_account(site)
    cluster = _cluster(site, network, node_account)
    built = built_image(ctx, config.image, services, {ctx.account_id("nodes"): node_account.email}, place, preload_build(config, ctx, network))
    image, registry = (built.reference, built.repository.registry_uri) if built else (pulumi.Output.from_input(config.image.prebuilt or ""), None)
    gpu_pools, cpu_pool = _pools(site, cluster, node_account, nic_nets, built.disk_image if built else None)
    storage = _storage(site, network, cluster)
    region = config.region
    outputs: dict[str, object] = {
        "clusterName": cluster.name,
        "clusterLocation": region,
        "getCredentials": f"gcloud container clusters get-credentials {config.cluster.name} --region {region} --project {config.project}",
        # A secret: authenticates through gke-gcloud-auth-plugin; `trainstack bench` runs kubectl with it.
        KUBECONFIG_OUTPUT: cluster.kubeconfig,
        "gpuNodes": sum(p.max_nodes for p in config.pools),
        "gpus": sum(p.max_nodes * p.machine.gpus_per_node for p in config.pools),
        storage.output[0]: storage.output[1],
        "image": image,
    }
    return GcpPlatform(
        cluster=cluster,
        gpu_pools=gpu_pools,
        node_pools=[*gpu_pools, cpu_pool],
        cpu_pool=cpu_pool,
        nic_networks={machine: nets.networks for machine, nets in nic_nets.items()},
        image=image,
        image_registry=registry,
        storage=storage,
        outputs=outputs,
    )
