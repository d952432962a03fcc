"""A fake `gcloud` on PATH (cli.py behind a shim), a project it serves, and `deploy`: what a
rendered plan's GCP resources are in that project, as the APIs list them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from fake_cli import FakeCli

COMPUTE = "https://www.googleapis.com/compute/v1/projects/{project}/"
KINDS = (
    "clusters",
    "filestore",
    "lustre",
    "disks",
    "buckets",
    "repositories",
    "addresses",
    "networks",
    "subnetworks",
    "firewalls",
    "routers",
    "policies",
    "peerings",
)
# Plan types that reap does not delete, and why: none is billed. Node pools and NAT go with their
# cluster and router; IAM grants, service accounts and enabled APIs cost nothing; the image build
# is a local command.
NOT_REAPED = {
    "gcp:container/nodePool:NodePool": "deleted with its cluster",
    "gcp:compute/routerNat:RouterNat": "part of its router",
    "gcp:projects/iAMMember:IAMMember": "not billed",
    "gcp:storage/bucketIAMMember:BucketIAMMember": "not billed",
    "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember": "not billed",
    "gcp:secretmanager/secretIamMember:SecretIamMember": "not billed",
    "gcp:serviceaccount/account:Account": "not billed",
    "gcp:projects/service:Service": "an enabled API, not billed",
    "command:local:Command": "a local command",
}


@dataclass
class FakeGcloud(FakeCli):
    name = "gcloud"
    cli = Path(__file__).resolve().parent / "cli.py"

    @classmethod
    def install(cls, root: Path) -> Self:
        fake = super().install(root)
        fake.save({kind: [] for kind in KINDS})
        return fake

    def project(self) -> dict[str, list[dict[str, Any]]]:
        return json.loads((self.home / "project.json").read_text())

    def save(self, project: dict[str, list[dict[str, Any]]]) -> None:
        (self.home / "project.json").write_text(json.dumps(project, indent=1))

    def names(self) -> set[str]:
        """Every resource's short name (a peering by its network)."""
        return {item.get("name", "").rsplit("/", 1)[-1] or item["network"].rsplit("/", 1)[-1] + "/psa" for items in self.project().values() for item in items}

    def calls(self) -> list[list[str]]:
        return self.logged()

    def deploy(self, resources: list[dict[str, Any]], project_id: str) -> list[str]:
        """Add a plan's GCP resources to the project as the APIs list them; returns their names.
        A type neither mapped here nor in NOT_REAPED fails: a new kind must be reaped or excused."""
        project = self.project()
        names = []
        for resource in resources:
            kind_item = as_listed(resource, project_id)
            if kind_item is None:
                continue
            kind, item = kind_item
            if kind == "disks":  # attached to a node of the plan's cluster, as the NFS server's disk is
                cluster = next(r["inputs"]["name"] for r in resources if r["type"] == "gcp:container/cluster:Cluster")
                item["users"] = [f"{item['zone']}/instances/gke-{cluster}-cpu-node"]
            if kind == "routers":  # its NAT's addresses, which GCP will not delete while it holds them
                nats = [r["inputs"] for r in resources if r["type"] == "gcp:compute/routerNat:RouterNat" and r["inputs"]["router"] == item["name"]]
                item["natIps"] = [ip.rsplit("/", 1)[-1] for nat in nats for ip in nat.get("natIps") or []]
            project[kind].append(item)
            names.append(item.get("name", "").rsplit("/", 1)[-1] or item["network"].rsplit("/", 1)[-1] + "/psa")
        self.save(project)
        return names


def as_listed(resource: dict[str, Any], project: str) -> tuple[str, dict[str, Any]] | None:
    """(kind, API object) of a plan resource, or None for the types in NOT_REAPED and non-GCP ones."""
    type_, i = resource["type"], resource.get("inputs", {})
    compute = COMPUTE.format(project=project)

    def net(value: str) -> str:
        return f"{compute}global/networks/{value.rsplit('/', 1)[-1]}"

    if not type_.startswith("gcp:") or type_ in NOT_REAPED:
        if not type_.startswith(("gcp:", "command:")) or type_ in NOT_REAPED:
            return None
        raise AssertionError(f"{type_} is neither reaped nor excused")
    if type_ == "gcp:container/cluster:Cluster":
        return "clusters", {
            "name": i["name"],
            "location": i["location"],
            "resourceLabels": i.get("resourceLabels", {}),
            "status": "RUNNING",
            "network": i["network"],
            "subnetwork": i["subnetwork"],
        }
    if type_ == "gcp:filestore/instance:Instance":
        return "filestore", {
            "name": f"projects/{project}/locations/{i['location']}/instances/{i['name']}",
            "labels": i.get("labels", {}),
            "networks": [{"network": n["network"]} for n in i["networks"]],
            "state": "READY",
        }
    if type_ == "gcp:lustre/instance:Instance":
        return "lustre", {
            "name": f"projects/{project}/locations/{i['location']}/instances/{i['instanceId']}",
            "labels": i.get("labels", {}),
            "network": i["network"],
            "state": "ACTIVE",
        }
    if type_ == "gcp:compute/disk:Disk":
        return "disks", {"name": i["name"], "zone": f"{compute}zones/{i['zone']}", "labels": i.get("labels", {}), "users": []}
    if type_ == "gcp:storage/bucket:Bucket":
        return "buckets", {"name": i["name"], "labels": i.get("labels", {}), "location": i["location"].upper()}
    if type_ == "gcp:artifactregistry/repository:Repository":
        return "repositories", {"name": f"projects/{project}/locations/{i['location']}/repositories/{i['repositoryId']}", "labels": i.get("labels", {})}
    if type_ == "gcp:compute/globalAddress:GlobalAddress":
        return "addresses", {"name": i["name"], "labels": i.get("labels", {}), "network": net(i["network"]), "purpose": i["purpose"]}
    if type_ == "gcp:compute/address:Address":
        return "addresses", {"name": i["name"], "region": f"{compute}regions/{i['region']}", "addressType": i.get("addressType", "EXTERNAL")}
    if type_ == "gcp:compute/network:Network":
        return "networks", {"name": i["name"], "selfLink": net(i["name"])}
    if type_ == "gcp:compute/subnetwork:Subnetwork":
        return "subnetworks", {"name": i["name"], "network": net(i["network"]), "region": f"{compute}regions/{i['region']}"}
    if type_ == "gcp:compute/firewall:Firewall":
        return "firewalls", {"name": i["name"], "network": net(i["network"])}
    if type_ == "gcp:compute/router:Router":
        return "routers", {"name": i["name"], "network": net(i["network"]), "region": f"{compute}regions/{i['region']}"}
    if type_ == "gcp:compute/resourcePolicy:ResourcePolicy":
        return "policies", {"name": i["name"], "region": f"{compute}regions/{i['region']}"}
    if type_ == "gcp:servicenetworking/connection:Connection":
        return "peerings", {
            "network": f"projects/123456789/global/networks/{i['network'].rsplit('/', 1)[-1]}",
            "peering": "servicenetworking-googleapis-com",
            "reservedPeeringRanges": i["reservedPeeringRanges"],
            "service": f"services/{i['service']}",
        }
    raise AssertionError(f"{type_} is neither reaped nor excused")
