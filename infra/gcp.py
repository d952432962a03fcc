"""The GCP layer of a stack: APIs, networks, the cluster and its pools, storage and the image,
composed from components and wired from the StackConfig.

Ordering is by data and explicit dependencies only: every resource waits for the APIs it
calls; the pools wait for the cluster, their networks and the node account's grants; the image
build, the bucket, the Filestore instance and the NFS disk do not wait for the cluster (only
the bucket's Workload Identity grant does: its principal exists once a cluster creates the
project's identity pool).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
import pulumi_gcp as gcp

from trainstack.components import gcp_services as apis
from trainstack.components.gcp_network import (
    GpuNicNetworks,
    GpuNicNetworksArgs,
    NetworkRef,
    PrimaryNetwork,
    PrimaryNetworkArgs,
)
from trainstack.components.gcp_services import ProjectServices, ProjectServicesArgs
from trainstack.components.gcp_storage import (
    CheckpointBucket,
    CheckpointBucketArgs,
    FilestoreShare,
    FilestoreShareArgs,
    LustreInstance,
    LustreInstanceArgs,
    NfsDisk,
    NfsDiskArgs,
    workload_identity_principal,
)
from trainstack.components.gke_cluster import (
    AuthorizedNetwork,
    GkeCluster,
    GkeClusterArgs,
    MaintenanceExclusion,
    MaintenanceWindow,
)
from trainstack.components.image import WorkloadImage, WorkloadImageArgs, context_digest, ngc_login
from trainstack.components.node_pools import (
    Autoscaling,
    CpuNodePool,
    CpuNodePoolArgs,
    ExtraNetwork,
    GpuNodePool,
    GpuNodePoolArgs,
    NodeServiceAccount,
    NodeServiceAccountArgs,
    Reservation,
)
from trainstack.core import catalog, names, rules
from trainstack.core.config import BuildConfig, ClusterConfig, ImageConfig, Problem, StackConfig
from trainstack.core.context import StackContext
from trainstack.core.contract import KUBECONFIG_OUTPUT
from trainstack.core.fleet import FleetStackConfig
from trainstack.infra.platform import TOP, GcpPlatform, Place

# Filestore tiers whose instances live in a zone; the others are regional.


def image_build_services(build: BuildConfig) -> tuple[str, ...]:
    """The APIs an image build calls: the repository, the build, its account and its staging
    bucket, and Secret Manager for a registry login's secret."""
    services = (apis.ARTIFACT_REGISTRY, apis.CLOUD_BUILD, apis.IAM, apis.STORAGE)
    return (*services, apis.SECRET_MANAGER) if build.ngc_api_key_secret else services


def project_bucket_name(project: str, name: str) -> str:
    """`<project>-<name>`, a valid bucket name (names.bucket)."""
    return names.bucket(project, name)


# Storage kinds whose instance peers with the stack's VPC (Filestore DIRECT_PEERING, Managed
# Lustre's private services access): while such an instance is kept, its VPC must be kept too.
PEERED_STORAGE = ("filestore", "lustre")


def required_services(config: StackConfig) -> list[str]:
    """The APIs this stack calls."""
    services = [apis.CONTAINER, apis.COMPUTE, apis.IAM, apis.CLOUD_RESOURCE_MANAGER, apis.STORAGE, apis.LOGGING, apis.MONITORING]
    if config.storage.kind == "filestore":
        services.append(apis.FILESTORE)
    if config.storage.kind == "lustre":
        services += [apis.LUSTRE, apis.SERVICE_NETWORKING]
    if config.image.build is not None:
        services += image_build_services(config.image.build)
    return sorted(set(services))


def problems(image: ImageConfig, root: Path) -> list[Problem]:
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


def bucket_name(stack: str, config: StackConfig) -> str:
    """The configured bucket name, else `<project>-<stack>` made a valid bucket name."""
    return config.storage.bucket_config.name or project_bucket_name(config.project, stack)


def workload_image(
    ctx: StackContext, services: ProjectServices | None, node_accounts: list[pulumi.Input[str]], place: Place = TOP
) -> tuple[pulumi.Output[str], pulumi.Output[str] | None]:
    """The workload image reference and the registry it was pushed to: built here with Cloud
    Build (`trainstack:image.build`), else the prebuilt reference and no registry. The nodes'
    accounts (emails) may pull from that repository. `place`: where it registers."""
    assert not isinstance(ctx.config, FleetStackConfig)  # a fleet builds no image
    image = ctx.config.image
    spec = image.build
    if spec is None:
        return pulumi.Output.from_input(image.prebuilt or ""), None
    after = pulumi.ResourceOptions(depends_on=services.need(*image_build_services(spec)) if services else [])
    built = WorkloadImage(
        place.name("image"),
        WorkloadImageArgs(
            project=ctx.project,
            region=ctx.region,
            repository_id=image.repository or ctx.physical_name("images"),
            image_name=spec.image_name,
            tag=spec.tag,
            context=spec.context,
            context_digest=context_digest(ctx.root / spec.context),
            machine_type=spec.machine_type,
            timeout=spec.timeout,
            builder_account_id=ctx.physical_name("builder", 30),
            staging_bucket=project_bucket_name(ctx.project, ctx.physical_name("builds")),
            labels=ctx.labels,
            registry_login=ngc_login(spec.ngc_api_key_secret) if spec.ngc_api_key_secret else None,
            readers=[pulumi.Output.concat("serviceAccount:", email) for email in node_accounts],
        ),
        opts=place.opts("image", after),
    )
    return built.reference, built.repository.registry_uri


def nic_role(index: int, machine_type: str) -> str:
    """The role of a GPU machine family's NIC networks (the first family's is unsuffixed)."""
    return "gpu-nics" if index == 0 else f"gpu-nics-{machine_type}"


def cluster_args(
    spec: ClusterConfig,
    *,
    project: str,
    location: str,
    node_locations: list[str],
    network: NetworkRef,
    node_service_account: pulumi.Output[str],
    labels: dict[str, str],
    **features: Any,
) -> GkeClusterArgs:
    """The GKE cluster a `trainstack:cluster` section describes, with `features` (multi-networking,
    CSI drivers, beta APIs) of the stack around it: one reading for platforms and a fleet's manager."""
    maintenance = spec.maintenance
    exclusion = maintenance.exclusion
    return GkeClusterArgs(
        project=project,
        location=location,
        name=spec.name,
        node_locations=node_locations,
        network=network,
        node_service_account=node_service_account,
        release_channel=spec.release_channel,
        version_prefix=spec.version_prefix,
        maintenance_window=MaintenanceWindow(maintenance.window.start, maintenance.window.end, maintenance.window.recurrence),
        maintenance_exclusion=MaintenanceExclusion(f"trainstack-{exclusion.scope.lower().replace('_', '-')}", exclusion.start, exclusion.scope)
        if exclusion.enabled
        else None,
        private_nodes=spec.private_nodes,
        private_endpoint=spec.private_endpoint,
        master_ipv4_cidr=spec.master_ipv4_cidr,
        authorized_networks=[AuthorizedNetwork(n.cidr_block, n.display_name) for n in spec.authorized_networks],
        control_plane_ports=[catalog.CONTROLLER_WEBHOOK_PORT, catalog.KUEUE_VISIBILITY_PORT],
        dataplane_v2=spec.dataplane_v2,
        database_encryption_key=spec.database_encryption_key,
        binary_authorization=spec.binary_authorization,
        deletion_protection=spec.deletion_protection,
        labels=labels,
        **features,
    )


def build(ctx: StackContext, config: StackConfig, place: Place = TOP) -> GcpPlatform:
    """Register the GCP layer of `ctx`'s stack (`config`, its platform config) at `place` and
    return what the Kubernetes layer needs."""
    project, region = config.project, config.region
    labels = ctx.labels
    services = ProjectServices(place.name("services"), ProjectServicesArgs(project, required_services(config)), opts=place.opts("services"))

    primary: PrimaryNetwork | None = None
    if config.network.existing is not None:
        existing = config.network.existing
        network = NetworkRef(existing.network, existing.subnetwork, existing.pods_range_name, existing.services_range_name)
    else:
        primary = PrimaryNetwork(
            place.name("network"),
            PrimaryNetworkArgs(
                project=project,
                region=region,
                name_prefix=config.cluster.name,
                subnet_cidr=config.network.subnet_cidr,
                pods_cidr=config.network.pods_cidr,
                services_cidr=config.network.services_cidr,
                keep_vpc=config.storage.kind in PEERED_STORAGE and not config.storage.disposable,
                mtu=config.vpc_mtu,
            ),
            opts=place.opts("network", pulumi.ResourceOptions(depends_on=services.need(apis.COMPUTE))),
        )
        network = primary.ref

    # Each GPU machine with extra NICs gets its NIC VPCs, with ranges apart from every other family's.
    nic_nets = {
        family.machine.name: GpuNicNetworks(
            place.name(nic_role(i, family.machine.name)),
            GpuNicNetworksArgs(
                project=project,
                region=region,
                zone=family.zone,
                name_prefix=config.cluster.name,
                machine_type=family.machine.name,
                nic_cidr=config.network.gpu_nic_cidr,
                nic_prefix=family.prefix,
                flow_logs=config.network.flow_logs,
            ),
            opts=place.opts(nic_role(i, family.machine.name), pulumi.ResourceOptions(depends_on=services.need(apis.COMPUTE))),
        )
        for i, family in enumerate(config.nic_families)
    }

    node_account = NodeServiceAccount(
        place.name("node-sa"),
        NodeServiceAccountArgs(
            project=project,
            account_id=ctx.physical_name("nodes", 30),
        ),
        opts=place.opts("node-sa", pulumi.ResourceOptions(depends_on=services.need(apis.IAM, apis.CLOUD_RESOURCE_MANAGER))),
    )

    cluster = GkeCluster(
        place.name("cluster"),
        cluster_args(
            config.cluster,
            project=project,
            location=region,
            node_locations=[*config.all_gpu_zones, *config.cpu_zones],
            network=network,
            node_service_account=node_account.email,
            labels=labels,
            multi_networking=bool(nic_nets),
            filestore_csi=config.storage.kind == "filestore",
            lustre_csi=config.storage.kind == "lustre",
            beta_apis=list(catalog.DRA_BETA_APIS) if any(p.machine.accelerator_topology for p in config.pools) else [],
        ),
        opts=place.opts("cluster", pulumi.ResourceOptions(depends_on=services.need(apis.CONTAINER, apis.COMPUTE, apis.LOGGING, apis.MONITORING))),
    )

    gpu_pools = [
        GpuNodePool(
            place.name(names.gpu_pool_resource(pool.name)),
            GpuNodePoolArgs(
                project=project,
                location=region,
                cluster=cluster.cluster_id,
                name=pool.name,
                zones=pool.zones or [config.zone],
                machine_type=pool.machine_type,
                service_account=node_account.email,
                node_count=pool.node_count,
                autoscaling=Autoscaling(pool.autoscaling.min_nodes, pool.autoscaling.max_nodes) if pool.autoscaling else None,
                compact=pool.compact,
                reservation=Reservation(pool.reservation.affinity, pool.reservation.name, pool.reservation.project),
                provisioning=pool.provisioning,
                max_run_duration=pool.max_run_duration,
                gpu_driver=pool.gpu_driver,
                boot_disk_gb=pool.boot_disk_gb,
                max_surge=pool.upgrade.max_surge,
                max_unavailable=pool.upgrade.max_unavailable,
                extra_networks=[ExtraNetwork(vpc, subnet) for _, vpc, subnet in nic_nets[pool.machine_type].networks] if pool.machine_type in nic_nets else [],
                labels=labels,
                workload_policy_name=names.physical(config.cluster.name, f"{pool.name}-nvlink") if pool.machine.accelerator_topology else None,
            ),
            # Upgrade from positional names: the first pool was `gpu-pool`. Apply the upgrade
            # before reordering pools, or the alias lands on the pool that is first now.
            opts=place.opts(
                names.gpu_pool_resource(pool.name),
                pulumi.ResourceOptions(
                    depends_on=[node_account, *services.need(apis.CONTAINER), *(services.need(apis.COMPUTE) if pool.machine.accelerator_topology else [])],
                ),
                was=[names.FIRST_GPU_POOL_BEFORE] if i == 0 else [],
            ),
        )
        for i, pool in enumerate(config.pools)
    ]
    cpu_pool = CpuNodePool(
        place.name("cpu-pool"),
        CpuNodePoolArgs(
            project=project,
            location=region,
            cluster=cluster.cluster_id,
            name=config.cpu_pool.name,
            zones=config.cpu_zones,
            machine_type=config.cpu_pool.machine_type,
            node_count=config.cpu_pool.node_count,
            boot_disk_gb=config.cpu_pool.boot_disk_gb,
            service_account=node_account.email,
            labels=labels,
        ),
        opts=place.opts("cpu-pool", pulumi.ResourceOptions(depends_on=[node_account, *services.need(apis.CONTAINER)])),
    )

    outputs: dict[str, object] = {
        "clusterName": cluster.name,
        "clusterLocation": region,
        "getCredentials": f"gcloud container clusters get-credentials {config.cluster.name} --region {region} --project {project}",
        # A secret: authenticates through gke-gcloud-auth-plugin; `trainstack bench` runs kubectl with it.
        KUBECONFIG_OUTPUT: cluster.kubeconfig,
        "gpuNodes": sum(p.max_nodes for p in config.pools),
        "gpus": sum(p.max_nodes * p.machine.gpus_per_node for p in config.pools),
    }
    storage = config.storage
    bucket = filestore = nfs = lustre = None
    if storage.kind == "gcs":
        bucket_config = storage.bucket_config
        project_number = gcp.organizations.get_project_output(
            project_id=project, opts=pulumi.InvokeOutputOptions(depends_on=services.need(apis.CLOUD_RESOURCE_MANAGER))
        ).number
        namespace = ctx.workload_namespace
        principal = project_number.apply(lambda number: workload_identity_principal(number, project, namespace, ctx.workload_service_account))
        bucket = CheckpointBucket(
            place.name("bucket"),
            CheckpointBucketArgs(
                project=project,
                name=bucket_name(ctx.stack, config),
                location=bucket_config.location or region,
                hierarchical_namespace=bucket_config.hierarchical_namespace,
                uniform_access=bucket_config.uniform_access,
                disposable=storage.disposable,
                object_users=[principal],
                grant_after=[cluster.cluster],
                labels=labels,
            ),
            opts=place.opts("bucket", pulumi.ResourceOptions(depends_on=services.need(apis.STORAGE))),
        )
        outputs["bucketUrl"] = bucket.url
    elif storage.kind == "filestore":
        share = storage.filestore_config
        filestore = FilestoreShare(
            place.name("filestore"),
            FilestoreShareArgs(
                project=project,
                name=ctx.physical_name("filestore"),
                location=config.gpu_zones[0] if share.tier in rules.ZONAL_FILESTORE_TIERS else region,
                tier=share.tier,
                capacity_gib=share.capacity_gib,
                share_name=share.share_name,
                network=network.network,
                disposable=storage.disposable,
                labels=labels,
            ),
            opts=place.opts("filestore", pulumi.ResourceOptions(depends_on=services.need(apis.FILESTORE))),
        )
        outputs["filestoreAddress"] = filestore.ip.apply(lambda ip: f"{ip}:/{share.share_name}")
    elif storage.kind == "lustre":
        spec = storage.lustre_config
        lustre = LustreInstance(
            place.name("lustre"),
            LustreInstanceArgs(
                project=project,
                zone=config.gpu_zones[0],
                instance_id=ctx.physical_name("lustre"),
                network=network.network,
                capacity_gib=spec.capacity_gib,
                throughput=spec.throughput,
                filesystem=spec.filesystem,
                disposable=storage.disposable,
                labels=labels,
            ),
            opts=place.opts("lustre", pulumi.ResourceOptions(depends_on=services.need(apis.LUSTRE, apis.SERVICE_NETWORKING, apis.COMPUTE))),
        )
        outputs["lustreMountPoint"] = lustre.instance.mount_point
    else:
        disk = storage.nfs_config
        nfs = NfsDisk(
            place.name("nfs-disk"),
            NfsDiskArgs(
                project=project,
                zone=config.gpu_zones[0],
                name=ctx.physical_name("nfs"),
                disk_type=disk.disk_type,
                size_gb=disk.disk_size_gb,
                disposable=storage.disposable,
                labels=labels,
            ),
            opts=place.opts("nfs-disk", pulumi.ResourceOptions(depends_on=services.need(apis.COMPUTE))),
        )
        outputs["nfsDisk"] = nfs.name

    image, registry = workload_image(ctx, services, [node_account.email], place)
    outputs["image"] = image

    return GcpPlatform(
        cluster=cluster,
        gpu_pools=gpu_pools,
        node_pools=[*gpu_pools, cpu_pool],
        cpu_pool=cpu_pool,
        nic_networks={machine: nets.networks for machine, nets in nic_nets.items()},
        image=image,
        image_registry=registry,
        bucket_name=bucket.name if bucket else None,
        filestore_ip=filestore.ip if filestore else None,
        filestore_share=filestore.share_name if filestore else None,
        nfs_disk_name=nfs.name if nfs else None,
        lustre=lustre,
        outputs=outputs,
    )
