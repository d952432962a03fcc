"""The GKE cluster: add-ons, flags, labels, its kubeconfig and the layer's stack outputs."""

from __future__ import annotations

import re

import pytest
import yaml

from gcp_support import CLUSTER, FIREWALL, PROJECT, REGION, ZONE, by_name, render
from helpers import present
from trainstack.app.plan.recorder import SECRET
from trainstack.components.gke_cluster import cluster_identity


def cluster(variant: str = "a3ultra", **changes) -> dict:
    return by_name(render(variant, **changes), CLUSTER, "cluster").inputs


def test_standard_cluster_without_its_default_pool() -> None:
    inputs = cluster()
    assert inputs["name"] == "a3ultra-405b"
    assert inputs["location"] == REGION
    assert inputs["nodeLocations"] == [ZONE]
    assert inputs["removeDefaultNodePool"] is True
    assert inputs["initialNodeCount"] == 1
    assert "enableAutopilot" not in inputs
    assert inputs["networkingMode"] == "VPC_NATIVE"
    assert inputs["ipAllocationPolicy"] == {"clusterSecondaryRangeName": "pods", "servicesSecondaryRangeName": "services"}


@pytest.mark.parametrize(("variant", "multi"), [("a3ultra", True), ("a3mega", True), ("a3high", True), ("a2", False)])
def test_dataplane_v2_and_multi_networking_only_with_extra_nics(variant: str, multi: bool) -> None:
    inputs = cluster(variant)
    assert (inputs.get("datapathProvider") == "ADVANCED_DATAPATH") is multi
    assert bool(inputs.get("enableMultiNetworking")) is multi


def test_workload_identity_gcs_fuse_and_dcgm_metrics() -> None:
    inputs = cluster()
    assert inputs["workloadIdentityConfig"] == {"workloadPool": f"{PROJECT}.svc.id.goog"}
    assert inputs["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert inputs["monitoringConfig"]["enableComponents"] == ["SYSTEM_COMPONENTS", "DCGM"]
    assert inputs["monitoringConfig"]["managedPrometheus"] == {"enabled": True}


@pytest.mark.parametrize(("variant", "enabled"), [("a3ultra", False), ("a3mega", True), ("a2", False)])
def test_filestore_csi_driver_only_with_filestore(variant: str, enabled: bool) -> None:
    assert cluster(variant)["addonsConfig"]["gcpFilestoreCsiDriverConfig"] == {"enabled": enabled}


def test_release_channel_and_a_version_prefix_resolved_at_deploy_time() -> None:
    """No pinned patch version (GKE rejects one its channel no longer offers): the channel's
    default, or the newest version GKE offers with a minor prefix, as Cluster Toolkit resolves it."""
    inputs = cluster()
    assert inputs["releaseChannel"] == {"channel": "REGULAR"}
    assert "minMasterVersion" not in inputs
    resolved = render("a3ultra", trainstack_cluster={"releaseChannel": "STABLE", "versionPrefix": "1.33."})
    changed = by_name(resolved, CLUSTER, "cluster").inputs
    assert changed["releaseChannel"] == {"channel": "STABLE"}
    # FakeGcp answers getEngineVersions with versions under the prefix, newest first.
    assert re.fullmatch(r"1\.33\.\d+-gke\.\d+", changed["minMasterVersion"])


def test_a_maintenance_window_and_an_exclusion_keep_upgrades_off_running_jobs() -> None:
    policy = cluster()["maintenancePolicy"]
    assert policy["recurringWindow"] == {"startTime": "2026-01-03T03:00:00Z", "endTime": "2026-01-03T11:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU"}
    (exclusion,) = policy["maintenanceExclusions"]
    assert exclusion["exclusionOptions"] == {"scope": "NO_MINOR_OR_NODE_UPGRADES", "endTimeBehavior": "UNTIL_END_OF_SUPPORT"}
    assert exclusion["startTime"] == "2026-01-01T00:00:00Z" and "endTime" not in exclusion
    lifted = cluster(trainstack_cluster={"maintenance": {"exclusion": {"enabled": False}}})["maintenancePolicy"]
    assert "maintenanceExclusions" not in lifted and lifted["recurringWindow"] == policy["recurringWindow"]


def test_private_nodes_authorized_networks_shielded_nodes() -> None:
    inputs = cluster()
    assert inputs["privateClusterConfig"] == {
        "enablePrivateNodes": True,
        "enablePrivateEndpoint": False,
        "masterIpv4CidrBlock": "172.16.0.32/28",
    }
    assert inputs["masterAuthorizedNetworksConfig"] == {"cidrBlocks": [{"cidrBlock": "203.0.113.0/24", "displayName": "replace with your network"}]}
    assert inputs["enableShieldedNodes"] is True


def test_private_endpoint_when_asked() -> None:
    inputs = cluster(trainstack_cluster={"privateEndpoint": True, "authorizedNetworks": [{"cidrBlock": "10.10.0.0/16", "displayName": "vpn"}]})
    assert inputs["privateClusterConfig"]["enablePrivateEndpoint"] is True
    assert inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [{"cidrBlock": "10.10.0.0/16", "displayName": "vpn"}]


def test_any_address_only_by_explicit_opt_in() -> None:
    anywhere = {"authorizedNetworks": [{"cidrBlock": "0.0.0.0/0"}], "allowAnyAddress": True}
    assert cluster(trainstack_cluster=anywhere)["masterAuthorizedNetworksConfig"] == {"cidrBlocks": [{"cidrBlock": "0.0.0.0/0"}]}


def test_deletion_protection_and_labels_from_config() -> None:
    inputs = cluster()
    assert inputs["deletionProtection"] is True
    assert inputs["resourceLabels"] == {"managed-by": "trainstack", "trainstack-stack": "a3ultra-405b"}
    assert cluster(trainstack_cluster={"deletionProtection": False})["deletionProtection"] is False
    # Pulumi protects it too: `pulumi destroy` refuses before it deletes anything, not half-way.
    assert by_name(render("a3ultra"), CLUSTER, "cluster").options["protect"] is True
    unprotected = by_name(render("a3ultra", trainstack_cluster={"deletionProtection": False}), CLUSTER, "cluster")
    assert "protect" not in unprotected.options


def test_default_pool_config_and_resolved_version_are_never_diffed() -> None:
    reg = by_name(render("a3ultra"), CLUSTER, "cluster")
    assert sorted(reg.options["ignoreChanges"]) == ["minMasterVersion", "nodeConfig"]
    assert reg.inputs["nodeConfig"]["serviceAccount"] == f"a3ultra-405b-nodes@{PROJECT}.iam.gserviceaccount.com"


def test_kubeconfig_is_secret_and_uses_the_auth_plugin() -> None:
    outputs = render("a3ultra").outputs
    assert outputs["_kubeconfigSecret"] == SECRET
    config = yaml.safe_load(outputs["_kubeconfig"])
    context = f"gke_{PROJECT}_{REGION}_a3ultra-405b"
    assert config["current-context"] == context
    (entry,) = config["clusters"]
    assert entry["cluster"]["server"].startswith("https://34.")
    assert entry["cluster"]["certificate-authority-data"]
    (user,) = config["users"]
    assert user["user"] == {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "gke-gcloud-auth-plugin",
            "installHint": "Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin",
            "provideClusterInfo": True,
        }
    }


def test_layer_outputs() -> None:
    outputs = render("a3ultra").outputs
    assert outputs["clusterName"] == "a3ultra-405b"
    assert outputs["clusterLocation"] == REGION
    assert outputs["getCredentials"] == f"gcloud container clusters get-credentials a3ultra-405b --region {REGION} --project {PROJECT}"
    assert (outputs["gpuNodes"], outputs["gpus"]) == (54, 432)
    assert outputs["_nodePools"] == 2
    assert (render("a2").outputs["gpuNodes"], render("a2").outputs["gpus"]) == (4, 32)


def test_the_control_plane_reaches_the_controllers_webhooks_on_private_nodes() -> None:
    """A peered control plane reaches private nodes only on 443 and 10250 by GKE's own rules; the
    Kueue and JobSet webhooks (9443) and Kueue's visibility API (8082) need a rule of their own."""
    rule = by_name(render("a3ultra"), FIREWALL, "cluster-control-plane-to-nodes").inputs
    assert rule["sourceRanges"] == ["172.16.0.32/28"]
    assert rule["allows"] == [{"protocol": "tcp", "ports": ["8082", "9443"]}]
    assert rule["direction"] == "INGRESS" and rule["network"] == "a3ultra-405b-net"
    public = render("a3ultra", trainstack_cluster={"privateNodes": False})
    assert not [r for r in public.registrations if r.name == "cluster-control-plane-to-nodes"]


def test_the_provider_identity_follows_the_cluster_instance() -> None:
    """A cluster replaced under the same name (datapath, network or master range changed) has a
    new CA, so a new identity, so pulumi-kubernetes replaces its provider and every object on it
    (provider.go DiffConfig replaces on a changed clusterIdentifier)."""
    path = "projects/p/locations/us-central1/clusters/c"
    first, again, replaced = cluster_identity(path, "CA-1"), cluster_identity(path, "CA-1"), cluster_identity(path, "CA-2")
    assert first == again and first != replaced and first.startswith(path + "#")
    (provider,) = [r for r in render("a3ultra").registrations if r.type == "pulumi:providers:kubernetes"]
    assert provider.inputs["clusterIdentifier"].startswith(f"projects/{PROJECT}/locations/{REGION}/clusters/a3ultra-405b#")
    assert present(provider.parent).endswith("trainstack:gcp:GkeCluster::cluster")
