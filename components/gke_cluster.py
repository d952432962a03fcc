"""The GKE Standard cluster: regional, VPC-native, private nodes, Workload Identity."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp
import yaml

from trainstack.components.args import Args, Each, Problem, not_empty, one_of
from trainstack.components.gcp_network import NetworkRef
from trainstack.components.k8s_provider import ClusterProviderArgs, cluster_provider
from trainstack.components.options import Children
from trainstack.core import resource_rules, rules

MASTER_IPV4_CIDR = "172.16.0.32/28"  # the control plane's private /28, unless the stack file sets one

AUTH_PLUGIN = "gke-gcloud-auth-plugin"


@dataclass(frozen=True)
class AuthorizedNetwork(Args):
    """A CIDR block allowed to reach the control plane."""

    cidr_block: str
    """The IPv4 CIDR block."""
    display_name: str = ""
    """A name for it in the cluster's settings."""

    _checks = {"cidr_block": rules.cidr}


@dataclass(frozen=True)
class MaintenanceWindow(Args):
    """A recurring window for GKE's own upgrades: RFC 3339 start and end, an RFC 5545 rule."""

    start: str
    """The first window's start (`2026-01-03T03:00:00Z`)."""
    end: str
    """The first window's end, 4 to 24 hours after its start."""
    recurrence: str
    """How it recurs (`FREQ=WEEKLY;BYDAY=SA,SU`)."""

    _checks = {"start": rules.utc_time, "end": rules.utc_time, "recurrence": rules.RECURRENCE}

    def _cross(self) -> Iterator[Problem]:
        return resource_rules.check("maintenance_window", self)


@dataclass(frozen=True)
class MaintenanceExclusion(Args):
    """No upgrades of `scope` from `start` until the end of the cluster's minor version's support."""

    name: str
    """The exclusion's name."""
    start: str
    """When it starts (RFC 3339 UTC)."""
    scope: str = "NO_MINOR_OR_NODE_UPGRADES"
    """NO_MINOR_OR_NODE_UPGRADES, NO_MINOR_UPGRADES or NO_UPGRADES."""

    # terraform-provider-google container maintenance_exclusion.exclusion_options.scope.
    _checks = {"start": rules.utc_time, "scope": (one_of("NO_MINOR_OR_NODE_UPGRADES", "NO_MINOR_UPGRADES", "NO_UPGRADES"), rules.exclusion_scope)}


@dataclass(frozen=True)
class GkeClusterArgs(Args):
    """Arguments of GkeCluster."""

    project: str
    """The cluster's project."""
    location: str
    """Its region (a regional control plane)."""
    name: str
    """The cluster's name."""
    node_locations: list[str]
    """Zones nodes may use (the pools pick their own subset)."""
    network: NetworkRef
    """The VPC, subnet and secondary ranges (VPC-native)."""
    node_service_account: pulumi.Input[str]
    """Email of the account nodes run as (also used by the transient default pool GKE creates
    before it is removed)."""
    release_channel: str = "REGULAR"
    """RAPID, REGULAR, STABLE or EXTENDED."""
    version_prefix: str | None = None
    """A minor version prefix (`1.33.`) resolved at deploy time to the newest version GKE offers
    with it; None: the channel's default. Later changes of the resolved version are ignored: the
    release channel upgrades the cluster, and a re-resolved version must never churn it."""
    maintenance_window: MaintenanceWindow | None = None
    """When GKE may upgrade, or None for any time."""
    maintenance_exclusion: MaintenanceExclusion | None = None
    """Upgrades GKE must not make (a running job's nodes), or None."""
    private_nodes: bool = True
    """Nodes get internal IPs only (egress through Cloud NAT)."""
    private_endpoint: bool = False
    """The control plane has no public endpoint."""
    master_ipv4_cidr: str = MASTER_IPV4_CIDR
    """The /28 of the control plane's private endpoint."""
    authorized_networks: list[AuthorizedNetwork] = field(default_factory=list)
    """CIDRs allowed to reach the control plane; empty leaves the public endpoint open to any
    address (still authenticated)."""
    control_plane_ports: list[int] = field(default_factory=list)
    """TCP ports on the nodes the control plane must reach beyond GKE's own (admission webhooks,
    aggregated APIs). With private nodes and a peered control plane, GKE's firewall rules admit
    only 443 and 10250 from the control plane's range, so a webhook elsewhere times out; a rule
    from `master_ipv4_cidr` admits these."""
    multi_networking: bool = False
    """Dataplane V2 plus multi-networking, for pools with extra NICs."""
    dataplane_v2: bool = False
    """Dataplane V2 (which enforces NetworkPolicy) without multi-networking. Fixed at creation:
    changing it replaces the cluster."""
    dranet: bool = False
    """Some pool reaches its RDMA NICs through GKE's DRANET, which needs Dataplane V2
    (rules.dranet_dataplane)."""
    shielded_nodes: bool = True
    """Shielded GKE nodes; off for bare metal machines (catalog `bare_metal`: Cluster Toolkit's A4X
    Max blueprint sets `enable_shielded_nodes: false`)."""
    database_encryption_key: str | None = None
    """A Cloud KMS key (`projects/P/locations/L/keyRings/R/cryptoKeys/K`, in the cluster's
    region) that encrypts Secrets in etcd (application-layer secrets encryption); GKE's service
    agent must be allowed to use it (roles/cloudkms.cryptoKeyEncrypterDecrypter)."""
    binary_authorization: str = "off"
    """`audit`: Binary Authorization checks every pod's image against the project's policy
    (`PROJECT_SINGLETON_POLICY_ENFORCE`); with a dry-run policy it logs, never blocks."""
    filestore_csi: bool = False
    """Enable the Filestore CSI driver."""
    beta_apis: list[str] = field(default_factory=list)
    """Kubernetes beta APIs the cluster serves beyond its defaults (`resource.k8s.io/v1beta1/
    deviceclasses`, ...: GKE `enable_k8s_beta_apis`), for add-ons that need them."""
    lustre_csi: bool = False
    """Enable the Managed Lustre CSI driver on port 988, without the legacy LNet port (which
    only instances made with gke_support_enabled need): nodes at
    catalog.LUSTRE_PORT_988_MIN_GKE or newer, so a `version_prefix` of its minor or later
    (rules.lustre_gke_version)."""
    deletion_protection: bool = True
    """GKE refuses to delete the cluster while true, and Pulumi protects it too, so `pulumi
    destroy` stops before it deletes anything rather than half-way."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP resource labels."""

    _checks = {
        "project": rules.PROJECT_ID,
        "location": rules.LOCATION,
        "name": rules.CLUSTER_NAME,
        "node_locations": (not_empty, Each(rules.ZONE_ID)),
        "release_channel": one_of(*rules.RELEASE_CHANNEL_NAMES),
        "version_prefix": rules.VERSION_PREFIX,
        "database_encryption_key": rules.KMS_KEY,
        "binary_authorization": one_of("off", "audit"),
        "master_ipv4_cidr": (rules.cidr, rules.master_cidr),
        "control_plane_ports": Each(rules.PORT),
        "labels": rules.gcp_labels,
    }

    def _cross(self) -> Iterator[Problem]:
        yield from resource_rules.check("cluster", self)
        # The stack checks these against gcp:region and trainstack:storage (StackConfig).
        for zone in self.node_locations:
            if isinstance(self.location, str) and isinstance(zone, str) and (message := rules.cluster_zone(self.location, zone)):
                yield Problem(("node_locations",), zone, message)
        prefix = self.version_prefix
        if self.lustre_csi and (prefix is None or not rules.VERSION_PREFIX(prefix)) and (message := rules.lustre_gke_version(prefix)):
            yield Problem(("version_prefix",), prefix, message)
        if message := rules.dranet_dataplane(self.dranet, self.multi_networking or self.dataplane_v2):
            yield Problem(("dranet",), self.dranet, message)
        # GKE MaintenancePolicy: every policy has a window, an exclusion included (the stack file always has one).
        if self.maintenance_exclusion is not None and self.maintenance_window is None:
            yield Problem(
                ("maintenance_exclusion",), self.maintenance_exclusion.name, "needs a maintenance window: GKE requires a window in every maintenance policy"
            )


class GkeCluster(pulumi.ComponentResource):
    """A GKE Standard cluster with its default node pool removed (pools are separate resources)
    and the add-ons training needs: GCS FUSE CSI (and Filestore CSI when asked), DCGM metrics
    into Managed Service for Prometheus, Workload Identity, shielded nodes.

    In Python, `provider` is the Kubernetes provider of this cluster: every Kubernetes object of
    the stack uses it, and it is replaced (with them) when the cluster is. Other languages build
    theirs from `kubeconfig`.
    """

    cluster: gcp.container.Cluster
    """The cluster resource."""
    cluster_id: pulumi.Output[str]
    """`projects/<p>/locations/<l>/clusters/<name>`, what node pools attach to."""
    name: pulumi.Output[str]
    """The cluster's name."""
    location: str
    """The cluster's region."""
    identity: pulumi.Output[str]
    """Names this cluster instance (`cluster_identity`): a replaced cluster has another, so what
    is bound to it follows it."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig (secret) that authenticates with gke-gcloud-auth-plugin."""

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        args = GkeClusterArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:GkeCluster", name, None, opts)
        kids = Children(self, name, opts)
        self.cluster = gcp.container.Cluster(
            project=args.project,
            name=args.name,
            location=args.location,
            node_locations=sorted(set(args.node_locations)),
            network=args.network.network,
            subnetwork=args.network.subnetwork,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
                cluster_secondary_range_name=args.network.pods_range,
                services_secondary_range_name=args.network.services_range,
            ),
            datapath_provider="ADVANCED_DATAPATH" if args.multi_networking or args.dataplane_v2 else None,
            enable_multi_networking=True if args.multi_networking else None,
            enable_k8s_beta_apis=gcp.container.ClusterEnableK8sBetaApisArgs(enabled_apis=list(args.beta_apis)) if args.beta_apis else None,
            # Node pools are separate resources; GKE needs a default pool at creation and
            # removes it at once. It runs as the node account so no default account is needed.
            remove_default_node_pool=True,
            initial_node_count=1,
            node_config=gcp.container.ClusterNodeConfigArgs(
                service_account=args.node_service_account,
                oauth_scopes=["https://www.googleapis.com/auth/cloud-platform"],
            ),
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel=args.release_channel),
            min_master_version=gcp.container.get_engine_versions_output(
                project=args.project, location=args.location, version_prefix=args.version_prefix
            ).latest_master_version
            if args.version_prefix
            else None,
            maintenance_policy=maintenance_policy(args),
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(workload_pool=f"{args.project}.svc.id.goog"),
            addons_config=gcp.container.ClusterAddonsConfigArgs(
                gcs_fuse_csi_driver_config=gcp.container.ClusterAddonsConfigGcsFuseCsiDriverConfigArgs(enabled=True),
                gce_persistent_disk_csi_driver_config=gcp.container.ClusterAddonsConfigGcePersistentDiskCsiDriverConfigArgs(enabled=True),
                gcp_filestore_csi_driver_config=gcp.container.ClusterAddonsConfigGcpFilestoreCsiDriverConfigArgs(enabled=args.filestore_csi),
                lustre_csi_driver_config=gcp.container.ClusterAddonsConfigLustreCsiDriverConfigArgs(enabled=True) if args.lustre_csi else None,
            ),
            monitoring_config=gcp.container.ClusterMonitoringConfigArgs(
                enable_components=["SYSTEM_COMPONENTS", "DCGM"],
                managed_prometheus=gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(enabled=True),
            ),
            private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
                enable_private_nodes=True,
                enable_private_endpoint=args.private_endpoint,
                master_ipv4_cidr_block=args.master_ipv4_cidr,
            )
            if args.private_nodes
            else None,
            master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                cidr_blocks=[
                    gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block=n.cidr_block, display_name=n.display_name or None)
                    for n in args.authorized_networks
                ]
            )
            if args.authorized_networks
            else None,
            enable_shielded_nodes=args.shielded_nodes,
            database_encryption=gcp.container.ClusterDatabaseEncryptionArgs(state="ENCRYPTED", key_name=args.database_encryption_key)
            if args.database_encryption_key
            else None,
            binary_authorization=gcp.container.ClusterBinaryAuthorizationArgs(evaluation_mode="PROJECT_SINGLETON_POLICY_ENFORCE")
            if args.binary_authorization == "audit"
            else None,
            deletion_protection=args.deletion_protection,
            resource_labels=dict(args.labels),
            # The default pool's config matters only at creation; a later change to it would
            # replace the whole cluster, so it is never diffed. The resolved minimum version
            # matters only at creation too (as in Cluster Toolkit's gke-cluster).
            **kids.main(was="cluster", ignore_changes=["nodeConfig", "minMasterVersion"], protect=args.deletion_protection),
        )
        if args.private_nodes and args.control_plane_ports:
            gcp.compute.Firewall(
                **kids("control-plane-to-nodes"),
                project=args.project,
                name=f"{args.name}-control-plane-webhooks",
                network=args.network.network,
                direction="INGRESS",
                source_ranges=[args.master_ipv4_cidr],
                allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(p) for p in sorted(args.control_plane_ports)])],
                description="The GKE control plane calls admission webhooks and aggregated APIs on the nodes",
            )
        self.cluster_id = self.cluster.id
        self.name = self.cluster.name
        self.location = args.location
        # A plain mock engine (or a preview) may leave master_auth unknown or empty.
        ca_certificate = self.cluster.master_auth.apply(lambda auth: (auth.cluster_ca_certificate if auth else None) or "")
        self.identity = pulumi.Output.all(self.cluster_id, ca_certificate).apply(lambda v: cluster_identity(v[0], v[1]))
        context = f"gke_{args.project}_{args.location}_{args.name}"
        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(self.cluster.endpoint, ca_certificate).apply(lambda v: kubeconfig(context, v[0] or "", v[1])))
        self.provider = cluster_provider(
            kids.name("gke"),
            ClusterProviderArgs(kubeconfig=self.kubeconfig, cluster_identifier=self.identity),
            # A child by Children's aliases (not its options: the provider waits for nothing the
            # component does), and created as `gke` at the top of the stack before it became the
            # cluster's child: the same provider.
            opts=pulumi.ResourceOptions(
                parent=self, aliases=[*kids.aliases(kids.name("gke"), "gke"), pulumi.Alias(name="gke", parent=pulumi.ROOT_STACK_RESOURCE)]
            ),
        )
        self.register_outputs({"name": self.name, "location": self.location, "kubeconfig": self.kubeconfig})


def maintenance_policy(args: GkeClusterArgs) -> gcp.container.ClusterMaintenancePolicyArgs | None:
    window, exclusion = args.maintenance_window, args.maintenance_exclusion
    if window is None and exclusion is None:
        return None
    return gcp.container.ClusterMaintenancePolicyArgs(
        recurring_window=gcp.container.ClusterMaintenancePolicyRecurringWindowArgs(start_time=window.start, end_time=window.end, recurrence=window.recurrence)
        if window
        else None,
        maintenance_exclusions=[
            gcp.container.ClusterMaintenancePolicyMaintenanceExclusionArgs(
                exclusion_name=exclusion.name,
                start_time=exclusion.start,
                exclusion_options=gcp.container.ClusterMaintenancePolicyMaintenanceExclusionExclusionOptionsArgs(
                    scope=exclusion.scope, end_time_behavior="UNTIL_END_OF_SUPPORT"
                ),
            )
        ]
        if exclusion
        else None,
    )


def cluster_identity(cluster_id: str, ca_certificate: str) -> str:
    """`<cluster id>#<CA fingerprint>`: the resource path names the cluster, the fingerprint of
    its CA this instance of it (GKE issues every cluster its own CA), so a cluster replaced under
    the same name (a ForceNew field such as the datapath or the network changed) gets a new
    identity, and the Kubernetes provider, with every object on the old cluster, is replaced
    too. A credential rotation also issues a new CA; it is a deliberate operation, after which
    the next `pulumi up` re-creates the Kubernetes layer on the rotated cluster."""
    fingerprint = hashlib.sha256(ca_certificate.encode()).hexdigest()[:16] if ca_certificate else "unknown"
    return f"{cluster_id}#{fingerprint}"


def kubeconfig(context: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig for one cluster that gets tokens from gke-gcloud-auth-plugin (no static
    credentials); `context` follows gcloud's naming (`gke_<project>_<location>_<name>`)."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": {"server": f"https://{endpoint}", "certificate-authority-data": ca_certificate}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
            "current-context": context,
            "users": [
                {
                    "name": context,
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": AUTH_PLUGIN,
                            "installHint": "Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin",
                            "provideClusterInfo": True,
                        }
                    },
                }
            ],
        },
        sort_keys=True,
    )
