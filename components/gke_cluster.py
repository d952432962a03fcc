"""The GKE Standard cluster: regional, VPC-native, private nodes, Workload Identity.

The cluster's spec (`ClusterSpec`) is what a stack file's `trainstack:cluster` holds, with its
rules; the component's Args are the spec and what the stack around it derives (project, region,
zones, network, node account, the features its pools and storage use). A stack file adds its own
policy on top (infra/stack.py `ClusterConfig`: an explicit opt-in for an open control plane,
fleets admitted through StackReferences, a maintenance policy on by default).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import pulumi
import pulumi_gcp as gcp
import yaml
from pydantic import BaseModel, Field, model_validator

from trainstack.components.args import Args, Each, KeyPath, Problem, deprecated_keys, not_empty
from trainstack.components.gcp_network import NetworkRef
from trainstack.components.k8s_provider import ClusterProviderArgs, cluster_provider
from trainstack.components.options import Children
from trainstack.core import rules
from trainstack.core.spec import Cidr, Section, UtcTime, by_rule, rule_errors

MASTER_IPV4_CIDR = "172.16.0.32/28"  # the control plane's private /28, unless the stack file sets one

AUTH_PLUGIN = "gke-gcloud-auth-plugin"


# A GKE cluster name: at most 40 lowercase letters, digits and '-', starting with a letter and
# ending with a letter or digit (GKE API v1 Cluster.name,
# cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#Cluster).
ClusterName = Annotated[str, Field(max_length=40), by_rule(rules.CLUSTER_NAME)]


class AuthorizedNetwork(Section):
    """A network allowed to reach the control plane."""

    cidr_block: Cidr
    """An IPv4 range allowed to reach the control plane."""
    display_name: str = ""
    """A name for it in the cluster's settings."""


class MaintenanceWindow(Section):
    """When GKE may upgrade the cluster: a recurring window (RFC 3339 times, an RFC 5545 rule)."""

    start: UtcTime = "2026-01-03T03:00:00Z"
    """The first window's start (RFC 3339, UTC)."""
    end: UtcTime = "2026-01-03T11:00:00Z"
    """The first window's end, 4 to 24 hours after its start."""
    recurrence: Annotated[str, by_rule(rules.RECURRENCE)] = "FREQ=WEEKLY;BYDAY=SA,SU"
    """How the window recurs (an RFC 5545 rule)."""

    @model_validator(mode="after")
    def _rules(self) -> MaintenanceWindow:
        # A window of 4 to 24 hours that allows GKE's 48 hours in 32 days.
        if wrong := rules.window_length(self.start, self.end) or rules.maintenance_availability(self.start, self.end, self.recurrence):
            rule_errors("MaintenanceWindow", [Problem(("end",), self.end, wrong)])
        return self


class MaintenanceExclusion(Section):
    """A maintenance exclusion: GKE makes no upgrade of `scope` from `start` until the cluster's
    minor version reaches its end of support. Lift it by setting `enabled: false` and running
    `pulumi up` (or `gcloud container clusters update --remove-maintenance-exclusion`)."""

    enabled: bool = True
    """Whether the exclusion holds; false lets GKE make those upgrades again."""
    # terraform-provider-google container maintenance_exclusion.exclusion_options.scope.
    scope: Annotated[Literal["NO_MINOR_OR_NODE_UPGRADES", "NO_MINOR_UPGRADES", "NO_UPGRADES"], by_rule(rules.exclusion_scope)] = "NO_MINOR_OR_NODE_UPGRADES"
    """Which upgrades GKE holds back."""
    start: UtcTime = "2026-01-01T00:00:00Z"
    """When the exclusion starts (RFC 3339, UTC)."""
    name: str | None = None
    """Its name in the cluster's maintenance policy; default: `trainstack-<scope>` (`no-minor-upgrades`, ...)."""

    @property
    def exclusion_name(self) -> str:
        """The exclusion's name: `name`, else `trainstack-<scope>`."""
        return self.name or f"trainstack-{self.scope.lower().replace('_', '-')}"


class Maintenance(Section):
    """`trainstack:cluster.maintenance`: a window for the upgrades GKE makes on its own, and an
    exclusion that keeps them off a running job's nodes (on by default: every node drain
    restarts a whole JobSet)."""

    window: MaintenanceWindow = MaintenanceWindow()
    """The recurring window GKE may upgrade in."""
    exclusion: MaintenanceExclusion = MaintenanceExclusion()
    """The upgrades GKE must not make (on by default)."""


class ClusterSpec(Section):
    """`trainstack:cluster`: the GKE Standard cluster (regional, in `gcp:region`)."""

    name: ClusterName
    """The GKE cluster's name."""
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = "REGULAR"
    """The GKE release channel the cluster follows."""
    version_prefix: Annotated[str, by_rule(rules.VERSION_PREFIX)] | None = None
    """A minor version prefix such as "1.33." resolved against the versions GKE offers at deploy
    time; None: the release channel's default."""
    private_nodes: bool = True
    """Nodes get internal addresses only (egress through Cloud NAT)."""
    private_endpoint: bool = False
    """The control plane has no public endpoint."""
    master_ipv4_cidr: Annotated[Cidr, by_rule(rules.master_cidr)] = MASTER_IPV4_CIDR
    """The control plane's private /28 range."""
    authorized_networks: list[AuthorizedNetwork] = []
    """The networks that may reach the control plane; `0.0.0.0/0` needs allowAnyAddress in a stack
    file. A program's empty list leaves a public endpoint open to any address (still authenticated);
    a stack file lists at least one."""
    deletion_protection: bool = True
    """GKE refuses to delete the cluster, and Pulumi protects it, while true."""
    maintenance: Maintenance | None = None
    """When GKE may upgrade the cluster on its own, and which upgrades it must not make; None: no
    maintenance policy (GKE upgrades at any time)."""
    dataplane_v2: bool = False
    """Dataplane V2, which enforces the jobs' NetworkPolicies, on a cluster without extra NICs
    (clusters with them have it already). Fixed at creation: changing it replaces the cluster."""
    database_encryption_key: Annotated[str, by_rule(rules.KMS_KEY)] | None = None
    """Application-layer secrets encryption with this Cloud KMS key (CMEK), in gcp:region."""
    binary_authorization: Literal["off", "audit"] = "off"
    """audit: Binary Authorization evaluates every image against the project's policy; keep that
    policy in dry run (enforcementMode DRYRUN_AUDIT_LOG_ONLY) to log without blocking."""

    @model_validator(mode="after")
    def _rules(self) -> ClusterSpec:
        rule_errors("ClusterSpec", list(self._problems()))
        return self

    def _problems(self) -> Iterator[Problem]:
        """The rules between the cluster's keys, each independent of the others."""
        # GKE PrivateClusterConfig: a private endpoint needs private nodes.
        if self.private_endpoint and not self.private_nodes:
            yield Problem(("privateEndpoint",), True, "a private endpoint needs private nodes")
        # No more authorized networks than GKE takes.
        if wrong := rules.authorized_networks(len(self.authorized_networks)):
            yield Problem(("authorizedNetworks",), "...", wrong)
        # A private endpoint takes only internal authorized networks.
        for i, network in enumerate(self.authorized_networks):
            if self.private_endpoint and (wrong := rules.private_endpoint_network(network.cidr_block)):
                yield Problem(("authorizedNetworks", i, "cidrBlock"), network.cidr_block, wrong)


class ClusterAliases(Section):
    """The package's GkeCluster inputs before they took the spec's spelling: deprecated, accepted
    for one release (`GkeClusterArgs.spec_input`), then refused as unknown keys."""

    maintenance_window: MaintenanceWindow | None = None
    """Deprecated: use `maintenance.window`."""
    maintenance_exclusion: MaintenanceExclusion | None = None
    """Deprecated: use `maintenance.exclusion`."""


@dataclass(frozen=True)
class GkeClusterArgs(Args):
    """Arguments of GkeCluster: the cluster as a stack file writes it, and what the stack around it derives."""

    spec: ClusterSpec
    """The cluster: a stack file's `trainstack:cluster`."""
    project: str
    """The cluster's project."""
    location: str
    """Its region (a regional control plane)."""
    node_locations: list[str]
    """Zones nodes may use (the pools pick their own subset)."""
    network: NetworkRef
    """The VPC, subnet and secondary ranges (VPC-native)."""
    node_service_account: pulumi.Input[str]
    """Email of the account nodes run as (also used by the transient default pool GKE creates
    before it is removed)."""
    control_plane_ports: list[int] = field(default_factory=list)
    """TCP ports on the nodes the control plane must reach beyond GKE's own (admission webhooks,
    aggregated APIs). With private nodes and a peered control plane, GKE's firewall rules admit
    only 443 and 10250 from the control plane's range, so a webhook elsewhere times out; a rule
    from `masterIpv4Cidr` admits these."""
    multi_networking: bool = False
    """Dataplane V2 plus multi-networking, for pools with extra NICs."""
    dranet: bool = False
    """Some pool reaches its RDMA NICs through GKE's DRANET, which needs Dataplane V2
    (rules.dranet_dataplane)."""
    shielded_nodes: bool = True
    """Shielded GKE nodes; off for bare metal machines (catalog `bare_metal`: Cluster Toolkit's A4X
    Max blueprint sets `enable_shielded_nodes: false`)."""
    filestore_csi: bool = False
    """Enable the Filestore CSI driver."""
    beta_apis: list[str] = field(default_factory=list)
    """Kubernetes beta APIs the cluster serves beyond its defaults (`resource.k8s.io/v1beta1/
    deviceclasses`, ...: GKE `enable_k8s_beta_apis`), for add-ons that need them."""
    lustre_csi: bool = False
    """Enable the Managed Lustre CSI driver on port 988, without the legacy LNet port (which
    only instances made with gke_support_enabled need): nodes at
    catalog.LUSTRE_PORT_988_MIN_GKE or newer, so a `versionPrefix` of its minor or later
    (rules.lustre_gke_version)."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP resource labels."""

    _checks = {
        "project": rules.PROJECT_ID,
        "location": rules.LOCATION,
        "node_locations": (not_empty, Each(rules.ZONE_ID)),
        "control_plane_ports": Each(rules.PORT),
        "labels": rules.gcp_labels,
    }

    @classmethod
    def spec_aliases(cls) -> type[BaseModel]:
        return ClusterAliases

    @classmethod
    def spec_input(cls, raw: dict[str, Any]) -> dict[str, Any]:
        """The package's inputs of the spec, its deprecated keys (`ClusterAliases`) in the spec's
        spelling: a deprecated window alone keeps no exclusion, as it did."""
        moves: dict[KeyPath, KeyPath] = {("maintenanceWindow",): ("maintenance", "window"), ("maintenanceExclusion",): ("maintenance", "exclusion")}
        spec = deprecated_keys(raw, moves, "GkeClusterArgs")
        if raw.get("maintenanceWindow") is not None and raw.get("maintenanceExclusion") is None and isinstance(spec.get("maintenance"), dict):
            spec["maintenance"].setdefault("exclusion", {"enabled": False})
        return spec

    def _cross(self) -> Iterator[Problem]:
        spec = self.spec
        # The stack checks these against gcp:region and trainstack:storage (StackConfig).
        for zone in self.node_locations:
            if isinstance(self.location, str) and isinstance(zone, str) and (message := rules.cluster_zone(self.location, zone)):
                yield Problem(("node_locations",), zone, message)
        prefix = spec.version_prefix
        if self.lustre_csi and (message := rules.lustre_gke_version(prefix)):
            yield Problem(("versionPrefix",), prefix, message)
        if message := rules.dranet_dataplane(self.dranet, self.multi_networking or spec.dataplane_v2):
            yield Problem(("dranet",), self.dranet, message)


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
        spec = args.spec
        super().__init__("trainstack:gcp:GkeCluster", name, None, opts)
        kids = Children(self, name, opts)
        self.cluster = gcp.container.Cluster(
            project=args.project,
            name=spec.name,
            location=args.location,
            node_locations=sorted(set(args.node_locations)),
            network=args.network.network,
            subnetwork=args.network.subnetwork,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
                cluster_secondary_range_name=args.network.pods_range,
                services_secondary_range_name=args.network.services_range,
            ),
            datapath_provider="ADVANCED_DATAPATH" if args.multi_networking or spec.dataplane_v2 else None,
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
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel=spec.release_channel),
            min_master_version=gcp.container.get_engine_versions_output(
                project=args.project, location=args.location, version_prefix=spec.version_prefix
            ).latest_master_version
            if spec.version_prefix
            else None,
            maintenance_policy=maintenance_policy(spec.maintenance),
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
                enable_private_endpoint=spec.private_endpoint,
                master_ipv4_cidr_block=spec.master_ipv4_cidr,
            )
            if spec.private_nodes
            else None,
            master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                cidr_blocks=[
                    gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block=n.cidr_block, display_name=n.display_name or None)
                    for n in spec.authorized_networks
                ]
            )
            if spec.authorized_networks
            else None,
            enable_shielded_nodes=args.shielded_nodes,
            database_encryption=gcp.container.ClusterDatabaseEncryptionArgs(state="ENCRYPTED", key_name=spec.database_encryption_key)
            if spec.database_encryption_key
            else None,
            binary_authorization=gcp.container.ClusterBinaryAuthorizationArgs(evaluation_mode="PROJECT_SINGLETON_POLICY_ENFORCE")
            if spec.binary_authorization == "audit"
            else None,
            deletion_protection=spec.deletion_protection,
            resource_labels=dict(args.labels),
            # The default pool's config matters only at creation; a later change to it would
            # replace the whole cluster, so it is never diffed. The resolved minimum version
            # matters only at creation too (as in Cluster Toolkit's gke-cluster).
            **kids.main(was="cluster", ignore_changes=["nodeConfig", "minMasterVersion"], protect=spec.deletion_protection),
        )
        if spec.private_nodes and args.control_plane_ports:
            gcp.compute.Firewall(
                **kids("control-plane-to-nodes"),
                project=args.project,
                name=f"{spec.name}-control-plane-webhooks",
                network=args.network.network,
                direction="INGRESS",
                source_ranges=[spec.master_ipv4_cidr],
                allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(p) for p in sorted(args.control_plane_ports)])],
                description="The GKE control plane calls admission webhooks and aggregated APIs on the nodes",
            )
        self.cluster_id = self.cluster.id
        self.name = self.cluster.name
        self.location = args.location
        # A plain mock engine (or a preview) may leave master_auth unknown or empty.
        ca_certificate = self.cluster.master_auth.apply(lambda auth: (auth.cluster_ca_certificate if auth else None) or "")
        self.identity = pulumi.Output.all(self.cluster_id, ca_certificate).apply(lambda v: cluster_identity(v[0], v[1]))
        context = f"gke_{args.project}_{args.location}_{spec.name}"
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


def maintenance_policy(maintenance: Maintenance | None) -> gcp.container.ClusterMaintenancePolicyArgs | None:
    """The cluster's maintenance policy: the window, and the exclusion while it is enabled."""
    if maintenance is None:
        return None
    window, exclusion = maintenance.window, maintenance.exclusion
    return gcp.container.ClusterMaintenancePolicyArgs(
        recurring_window=gcp.container.ClusterMaintenancePolicyRecurringWindowArgs(start_time=window.start, end_time=window.end, recurrence=window.recurrence),
        maintenance_exclusions=[
            gcp.container.ClusterMaintenancePolicyMaintenanceExclusionArgs(
                exclusion_name=exclusion.exclusion_name,
                start_time=exclusion.start,
                exclusion_options=gcp.container.ClusterMaintenancePolicyMaintenanceExclusionExclusionOptionsArgs(
                    scope=exclusion.scope, end_time_behavior="UNTIL_END_OF_SUPPORT"
                ),
            )
        ]
        if exclusion.enabled
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
