"""Offline tests of your own trainstack programs: a fake GCP (and Kubernetes API) for Pulumi's
mock engine, deterministic.

`FakeGcp` fills in what GCP computes (ids, self links, endpoints, the cluster's CA, service
account emails, Filestore and Service IPs) and answers the provider lookups trainstack makes.
Every value derives from a hash of the resource's type and name, so the same program renders
the same values, byte for byte, in the shapes the real APIs return, so code that parses them
behaves as it would against the real cloud. Components also run under a plain echo mock (one
that returns the inputs as outputs); use FakeGcp when your test reads computed values.

Example (pytest)::

    import pulumi
    from trainstack.core.testing import FakeGcp

    pulumi.runtime.set_mocks(FakeGcp("my-project", "us-central1", "us-central1-a"), preview=False)

    import my_program  # your program: GkeCluster, GpuNodePool, Kueue, TrainingJob, ...

    @pulumi.runtime.test
    def test_the_provider_follows_the_cluster():
        def check(identity):
            assert identity.startswith("projects/my-project/locations/us-central1/clusters/")
        return my_program.cluster.identity.apply(check)
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from typing import Any

from pulumi.runtime import mocks

COMPUTE = "https://www.googleapis.com/compute/v1"

# How a secret value reads in a plan, and how a test marks a StackReference output secret.
SECRET = "[secret]"


def digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def fake_ip(prefix: str, *parts: str) -> str:
    """An address under `prefix` (one to three octets), fixed by `parts`."""
    octets = prefix.split(".")
    h = digest(*parts)
    tail = [str(int(h[i : i + 2], 16) % 250 + 2) for i in range(0, 2 * (4 - len(octets)), 2)]
    return ".".join(octets + tail)


class FakeGcp(mocks.Mocks):
    """Fills the computed outputs of gcp and kubernetes resources and answers provider calls."""

    def __init__(self, project: str, region: str, zone: str, stacks: dict[str, dict[str, Any]] | None = None):
        self.project = project
        self.region = region
        self.zone = zone
        self.stacks = stacks or {}  # outputs of the stacks a StackReference may read
        self.project_number = str(int(digest("project", project)[:10], 16) % 10**12).rjust(12, "1")

    # -- resources --------------------------------------------------------------------------

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        state = dict(args.inputs)
        if args.typ == "pulumi:pulumi:StackReference":
            return args.name, self._stack_outputs(args.name)
        name = state.get("name") or f"{args.name}-{digest(args.typ, args.name)[:7]}"
        if args.typ.startswith("gcp:"):
            state.setdefault("name", name)
            state.setdefault("project", self.project)
        fill = _FILLERS.get(args.typ)
        rid = fill(self, args, state, name) if fill else None
        if args.typ.startswith("kubernetes:") and isinstance(state.get("metadata"), dict):
            meta = dict(state["metadata"])
            meta.setdefault("name", f"{args.name}-{digest(args.typ, args.name)[:8]}")
            meta.setdefault("uid", _uuid(args.typ, args.name))
            state["metadata"] = meta
        return rid or state.get("id") or f"{name}-id", state

    # -- provider functions -----------------------------------------------------------------

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        a = dict(args.args)
        if args.token == "pulumi:pulumi:readStackOutputs":  # the engine's read of a stack, as the StackReference's
            return self._stack_outputs(a["name"]), []
        if args.token == "gcp:organizations/getProject:getProject":
            return {"projectId": a.get("projectId", self.project), "number": self.project_number, "name": self.project}, []
        if args.token == "gcp:organizations/getClientConfig:getClientConfig":
            return {"project": self.project, "region": self.region, "zone": self.zone, "accessToken": "fake-token", "id": "fake"}, []
        if args.token == "gcp:container/getCluster:getCluster":
            return self._cluster_state(a.get("name", "cluster"), a.get("location", self.region)), []
        if args.token == "gcp:container/getEngineVersions:getEngineVersions":
            return self._engine_versions(a.get("versionPrefix") or "1.33."), []
        return a, []

    def _stack_outputs(self, name: str) -> dict[str, Any]:
        """Stack `name`'s outputs as the engine reads them (missing: none), secrets named."""
        outputs = self.stacks.get(name, {})
        return {"name": name, "outputs": outputs, "secretOutputNames": sorted(k for k, v in outputs.items() if v == SECRET)}

    def _engine_versions(self, prefix: str) -> dict[str, Any]:
        """The versions GKE offers with `prefix` (as getServerConfig lists them), newest first."""
        h = int(digest("versions", prefix)[:6], 16)
        versions = [f"{prefix}{patch}-gke.{1000000 + h % 900000}" for patch in (h % 7 + 2, h % 7 + 1)]
        return {
            "latestMasterVersion": versions[0],
            "latestNodeVersion": versions[0],
            "validMasterVersions": versions,
            "validNodeVersions": versions,
            "releaseChannelDefaultVersion": {"REGULAR": versions[1], "STABLE": versions[1], "RAPID": versions[0]},
            "releaseChannelLatestVersion": {"REGULAR": versions[0], "STABLE": versions[1], "RAPID": versions[0]},
            "versionPrefix": prefix,
            "id": f"projects/{self.project}/locations/{self.region}",
        }

    def _cluster_state(self, name: str, location: str) -> dict[str, Any]:
        ca = base64.b64encode(f"-----BEGIN CERTIFICATE-----\nFAKE CA {name}\n-----END CERTIFICATE-----\n".encode()).decode()
        return {
            "name": name,
            "location": location,
            "project": self.project,
            "endpoint": fake_ip("34", "cluster", name),
            "masterAuths": [{"clusterCaCertificate": ca}],
            "masterAuth": {"clusterCaCertificate": ca},
            "selfLink": f"https://container.googleapis.com/v1/projects/{self.project}/locations/{location}/clusters/{name}",
            "id": f"projects/{self.project}/locations/{location}/clusters/{name}",
        }


def _uuid(*parts: str) -> str:
    h = digest(*parts)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _cluster(fake: FakeGcp, args: mocks.MockResourceArgs, state: dict[str, Any], name: str) -> str:
    computed = fake._cluster_state(name, state.get("location", fake.region))
    state.update({k: v for k, v in computed.items() if k != "masterAuths"})
    state["masterVersion"] = state.get("minMasterVersion") or "1.32.4-gke.1106006"
    return computed["id"]


def _compute(kind: str, scope: str, extra: Callable[[dict[str, Any]], dict[str, Any]] | None = None):
    """A filler for a Compute Engine resource: its id and self link under `scope`
    (`global`, `regions` or `zones`), plus any `extra` computed fields."""

    def fill(fake: FakeGcp, args: mocks.MockResourceArgs, state: dict[str, Any], name: str) -> str:
        where = {
            "global": "global",
            "regions": f"regions/{state.get('region', fake.region)}",
            "zones": f"zones/{state.get('zone', fake.zone)}",
        }[scope]
        rid = f"projects/{fake.project}/{where}/{kind}/{name}"
        state["selfLink"] = f"{COMPUTE}/{rid}"
        state.update(extra(state) if extra else {})
        return rid

    return fill


def _gateway(state: dict[str, Any]) -> dict[str, Any]:
    network = state.get("ipCidrRange", "10.0.0.0/20").split("/")[0]
    return {"gatewayAddress": network.rsplit(".", 1)[0] + ".1"}


def _service_account(fake: FakeGcp, args: mocks.MockResourceArgs, state: dict[str, Any], name: str) -> str:
    account = state.get("accountId", name)
    email = f"{account}@{fake.project}.iam.gserviceaccount.com"
    state.update(email=email, member=f"serviceAccount:{email}", uniqueId=str(int(digest("sa", account)[:15], 16)))
    state["name"] = f"projects/{fake.project}/serviceAccounts/{email}"
    return state["name"]


def _bucket(fake: FakeGcp, args: mocks.MockResourceArgs, state: dict[str, Any], name: str) -> str:
    state.update(url=f"gs://{name}", selfLink=f"https://www.googleapis.com/storage/v1/b/{name}")
    return name


def _filestore(fake: FakeGcp, args: mocks.MockResourceArgs, state: dict[str, Any], name: str) -> str:
    networks = [dict(n) for n in state.get("networks", [{}])]
    for n in networks:
        n["ipAddresses"] = [fake_ip("10.200", "filestore", name)]
    state["networks"] = networks
    return f"projects/{fake.project}/locations/{state.get('location', fake.zone)}/instances/{name}"


def _global_address(fake: FakeGcp, args: mocks.MockResourceArgs, state: dict[str, Any], name: str) -> str:
    """A private services access range: the start of an aligned block of its prefix length."""
    state["address"] = "10.232.0.0" if state.get("purpose") == "VPC_PEERING" else fake_ip("34.120", "address", name)
    state["selfLink"] = f"{COMPUTE}/projects/{fake.project}/global/addresses/{name}"
    return f"projects/{fake.project}/global/addresses/{name}"


def _lustre(fake: FakeGcp, args: mocks.MockResourceArgs, state: dict[str, Any], name: str) -> str:
    instance = state.get("instanceId", name)
    state["mountPoint"] = f"{fake_ip('10.232', 'lustre', instance)}@tcp:/{state.get('filesystem', 'lustrefs')}"
    return f"projects/{fake.project}/locations/{state.get('location', fake.zone)}/instances/{instance}"


def _repository(fake: FakeGcp, args: mocks.MockResourceArgs, state: dict[str, Any], name: str) -> str:
    repo = state.get("repositoryId", name)
    location = state.get("location", fake.region)
    state["registryUri"] = f"{location}-docker.pkg.dev/{fake.project}/{repo}"
    state["name"] = repo
    return f"projects/{fake.project}/locations/{location}/repositories/{repo}"


def _service(fake: FakeGcp, args: mocks.MockResourceArgs, state: dict[str, Any], name: str) -> None:
    spec = dict(state.get("spec") or {})
    if spec.get("clusterIP") != "None":
        spec["clusterIP"] = fake_ip("10.8", "service", args.name)
    state["spec"] = spec


_FILLERS = {
    "gcp:container/cluster:Cluster": _cluster,
    "gcp:compute/network:Network": _compute("networks", "global"),
    "gcp:compute/subnetwork:Subnetwork": _compute("subnetworks", "regions", _gateway),
    "gcp:compute/router:Router": _compute("routers", "regions"),
    # A regional external address: GCP picks it from its public ranges, fixed here by its name.
    "gcp:compute/address:Address": _compute("addresses", "regions", lambda state: {"address": fake_ip("34.121", "address", state["name"])}),
    "gcp:compute/firewall:Firewall": _compute("firewalls", "global"),
    "gcp:compute/resourcePolicy:ResourcePolicy": _compute("resourcePolicies", "regions"),
    "gcp:compute/disk:Disk": _compute("disks", "zones"),
    "gcp:serviceaccount/account:Account": _service_account,
    "gcp:storage/bucket:Bucket": _bucket,
    "gcp:filestore/instance:Instance": _filestore,
    "gcp:compute/globalAddress:GlobalAddress": _global_address,
    "gcp:lustre/instance:Instance": _lustre,
    "gcp:artifactregistry/repository:Repository": _repository,
    "kubernetes:core/v1:Service": _service,
}
