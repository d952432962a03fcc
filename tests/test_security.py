"""Each least-privilege control, asserted on every shipped stack's plan (the golden plans, which
test_plans keeps equal to the program's), and the options that are off by default."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from helpers import of_type, one, raw_config, render
from trainstack.components.kueue import FRAMEWORKS
from trainstack.components.multikueue import access_rules
from trainstack.components.pod_security import Level, namespace_labels
from trainstack.core import catalog
from trainstack.workloads import preflight, supervisor
from trainstack.workloads.training_job import MASTER_PORT

GOLDEN = Path(__file__).resolve().parent / "golden"
STACKS = sorted(p.stem for p in GOLDEN.glob("*.json"))
# Clusters without GPU NICs (and so without Dataplane V2 unless asked): a2's, and a fleet's CPU-only manager.
NO_GPU_NICS = ("a2-gpt2-deepspeed", "a3ultra-fleet", "g4-llama31-8b")
# Stacks whose GPU NIC networks GKE makes (DRANET with the accelerator network profile): no subnet of theirs.
MANAGED_NICS = ("a4x-llama3-70b",)
POD_OWNERS = {"Deployment", "DaemonSet", "Job", "JobSet"}


def resources(stack: str) -> list[dict[str, Any]]:
    return json.loads((GOLDEN / f"{stack}.json").read_text())["resources"]


def kind(resource: dict[str, Any]) -> str:
    """The Kubernetes kind of a Kubernetes object ('' for anything else)."""
    return resource["type"].rsplit(":", 1)[-1] if resource["type"].startswith("kubernetes:") and resource["custom"] else ""


def pods(stack: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(object name, pod spec) of every pod template the stack renders."""
    for r in resources(stack):
        if kind(r) not in POD_OWNERS:
            continue
        spec = r["inputs"]["spec"]
        templates = [job["template"]["spec"]["template"] for job in spec["replicatedJobs"]] if kind(r) == "JobSet" else [spec["template"]]
        for template in templates:
            yield r["inputs"]["metadata"]["name"], template["spec"]


def containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec["containers"]]


# The two processes of the supervisor that call the Kubernetes API (supervisor.API_CALLS).
API_CALLERS = {"llama31-405b-supervisor-controller", "llama31-405b-supervisor-host-monitor"}


@pytest.mark.parametrize("stack", STACKS)
def test_only_pods_that_call_the_api_mount_a_token(stack: str) -> None:
    for name, spec in pods(stack):
        # The preflight's warden taints the nodes a job's preflight failed on (workloads/preflight.py).
        assert spec["automountServiceAccountToken"] is (name in API_CALLERS or name.endswith("-preflight-warden")), name
    for r in resources(stack):
        if kind(r) == "ServiceAccount":
            assert r["inputs"]["automountServiceAccountToken"] is False


@pytest.mark.parametrize("stack", STACKS)
def test_unprivileged_containers_drop_everything_and_privileged_ones_add_nothing(stack: str) -> None:
    for name, spec in pods(stack):
        assert spec["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}, name
        for c in containers(spec):
            context = c.get("securityContext") or {}
            if context.get("privileged"):
                assert "capabilities" not in context, (name, c["name"])
                continue
            assert context["allowPrivilegeEscalation"] is False, (name, c["name"])
            assert context["capabilities"]["drop"] == ["ALL"], (name, c["name"])
            assert context["seccompProfile"] == {"type": "RuntimeDefault"}, (name, c["name"])
            # Capabilities added back: the TCPXO receive daemon's, as GKE's manifests add them; the preflight's
            # sshd's privilege separation (all in Pod Security's baseline list).
            allowed = set(preflight.SSHD_CAPABILITIES) if c["name"] == preflight.FABRIC_CONTAINER else {"NET_ADMIN", "NET_BIND_SERVICE"}
            assert set(context["capabilities"].get("add", [])) <= allowed, (name, c["name"])


@pytest.mark.parametrize("stack", STACKS)
def test_no_role_grants_more_than_the_supervisor_calls(stack: str) -> None:
    """Or, on a fleet's worker, than MultiKueue does there (components.multikueue: the rules of
    Kueue's create-multikueue-kubeconfig.sh for the integrations enabled)."""
    for r in resources(stack):
        if kind(r) == "ClusterRole" and r["type"].startswith("kubernetes:") and "MultiKueueWorkerAccess" in r["urn"]:
            assert r["inputs"]["rules"] == access_rules(list(FRAMEWORKS)), r["urn"]
        elif kind(r) in ("Role", "ClusterRole") and "PreflightWarden" in r["urn"]:  # reads the job's pods, taints nodes
            assert r["inputs"]["rules"] == (preflight.WARDEN_CLUSTER_ROLE_RULES if kind(r) == "ClusterRole" else preflight.WARDEN_ROLE_RULES), r["urn"]
        elif kind(r) in ("Role", "ClusterRole"):
            for rule in r["inputs"]["rules"]:
                for res in rule["resources"]:
                    for verb in rule["verbs"]:
                        assert (res, verb) in supervisor.API_CALLS, (r["urn"], res, verb)
                        assert (kind(r) == "ClusterRole") == (res == "nodes")


@pytest.mark.parametrize("stack", STACKS)
def test_network_policies_deny_ingress_where_dataplane_v2_enforces_them(stack: str) -> None:
    """Clusters with GPU NICs run Dataplane V2 (multi-networking needs it), so their jobs get
    policies; a2 (no extra NICs, Dataplane V2 off unless asked) gets none."""
    policies = {r["inputs"]["metadata"]["name"]: r["inputs"]["spec"] for r in resources(stack) if kind(r) == "NetworkPolicy"}
    jobs = [r["inputs"] for r in resources(stack) if kind(r) in ("JobSet", "Job")]
    clusters = [r["inputs"] for r in resources(stack) if r["type"] == "gcp:container/cluster:Cluster"]
    enforced = clusters[0].get("datapathProvider") == "ADVANCED_DATAPATH" if clusters else True  # workload stacks: multi-NIC platforms
    assert enforced == (stack not in NO_GPU_NICS)
    if not (jobs and enforced):
        assert not policies
        return
    job = jobs[0]
    name = job["metadata"]["name"]
    owner = "jobset.sigs.k8s.io/jobset-name" if job["kind"] == "JobSet" else "batch.kubernetes.io/job-name"
    if job["metadata"]["namespace"] == "default":  # shared with other workloads: only the job's own pods are isolated
        assert f"{name}-deny-ingress" not in policies
    else:
        assert policies[f"{name}-deny-ingress"] == {"podSelector": {}, "policyTypes": ["Ingress"]}
    selector = {"matchLabels": {owner: name}}
    assert policies[f"{name}-training"]["podSelector"] == selector
    assert policies[f"{name}-training"]["ingress"] == [{"from": [{"podSelector": selector}]}]
    # A supervised job (its supervisor's Deployments are in the plan) has the supervisor's policy, and only then.
    supervised = any(kind(r) == "Deployment" and r["inputs"]["metadata"]["name"].startswith(f"{name}-supervisor-") for r in resources(stack))
    assert supervised == (f"{name}-supervisor" in policies)
    if supervised:
        (rule,) = policies[f"{name}-supervisor"]["ingress"]
        assert sorted(p["port"] for p in rule["ports"]) == sorted(supervisor.SERVICES.values())


@pytest.mark.parametrize("stack", STACKS)
def test_workload_identity_binds_exactly_the_jobs_service_account(stack: str) -> None:
    """Workload Identity Federation for GKE as its guide documents it
    (cloud.google.com/kubernetes-engine/docs/how-to/workload-identity): the cluster's workload pool
    is <project>.svc.id.goog, every node pool runs the GKE metadata server (GKE_METADATA, which
    gives a pod its Kubernetes service account's credentials), and IAM grants the bucket to the
    principal principal://iam.googleapis.com/projects/<number>/locations/global/workloadIdentityPools/
    <pool>/subject/ns/<namespace>/sa/<name>: the namespace and account the job's pods run as, and
    no other. No Google service account is impersonated, so no account carries the
    iam.gke.io/gcp-service-account annotation (that is the other documented path)."""
    clusters = [r["inputs"] for r in resources(stack) if r["type"] == "gcp:container/cluster:Cluster"]
    pools = [r["inputs"] for r in resources(stack) if r["type"] == "gcp:container/nodePool:NodePool"]
    for pool in pools:
        assert pool["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}, pool["name"]
    accounts = {
        (r["inputs"]["metadata"]["namespace"], r["inputs"]["metadata"]["name"]): r["inputs"]["metadata"]
        for r in resources(stack)
        if kind(r) == "ServiceAccount"
    }
    for meta in accounts.values():
        assert "iam.gke.io/gcp-service-account" not in meta.get("annotations", {}), meta["name"]
    grants = [
        r["inputs"] for r in resources(stack) if r["type"] == "gcp:storage/bucketIAMMember:BucketIAMMember" and r["inputs"]["member"].startswith("principal://")
    ]
    jobsets = [r["inputs"] for r in resources(stack) if kind(r) == "JobSet"]
    principal = re.compile(
        r"principal://iam\.googleapis\.com/projects/(\d+)/locations/global/workloadIdentityPools/([a-z0-9-]+\.svc\.id\.goog)/subject/ns/([^/]+)/sa/([^/]+)"
    )
    for grant in grants:
        match = principal.fullmatch(grant["member"])
        assert match, grant["member"]
        _, pool, namespace, account = match.groups()
        for cluster in clusters:
            assert cluster["workloadIdentityConfig"] == {"workloadPool": pool}
        assert (namespace, account) in accounts
        for jobset in jobsets:
            pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
            assert (jobset["metadata"]["namespace"], pod["serviceAccountName"]) == (namespace, account)


# Pod Security Standards (kubernetes.io/docs/concepts/security/pod-security-standards): what
# `baseline` admits of a container's added capabilities, and the volume types `restricted` admits.
BASELINE_CAPABILITIES = {
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
}
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}


def pod_security_level(spec: dict[str, Any]) -> Level:
    """The lowest Pod Security Standard that admits the pod `spec`."""
    contexts = [c.get("securityContext") or {} for c in containers(spec)]
    host = any(spec.get(f) for f in ("hostNetwork", "hostPID", "hostIPC")) or any("hostPath" in v for v in spec.get("volumes", []))
    ports = any(p.get("hostPort") for c in containers(spec) for p in c.get("ports", []))
    added = {cap for ctx in contexts for cap in ctx.get("capabilities", {}).get("add", [])}
    if host or ports or any(ctx.get("privileged") for ctx in contexts) or not added <= BASELINE_CAPABILITIES:
        return "privileged"
    restricted = all(
        ctx.get("allowPrivilegeEscalation") is False
        and ctx.get("capabilities", {}).get("drop") == ["ALL"]
        and set(ctx["capabilities"].get("add", [])) <= {"NET_BIND_SERVICE"}
        and (ctx.get("runAsNonRoot") or (spec.get("securityContext") or {}).get("runAsNonRoot"))
        and (ctx.get("seccompProfile") or (spec.get("securityContext") or {}).get("seccompProfile", {})).get("type") in ("RuntimeDefault", "Localhost")
        for ctx in contexts
    ) and all(set(v) - {"name"} <= RESTRICTED_VOLUMES for v in spec.get("volumes", []))
    return "restricted" if restricted else "baseline"


LEVELS: list[Level] = ["restricted", "baseline", "privileged"]
WORKLOAD_STACKS = [s for s in STACKS if "trainstack:workload" in raw_config(s)]


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_a_job_namespace_enforces_the_lowest_level_its_pods_need(stack: str) -> None:
    """The stack as a new one (no namespace written): its job and supervisor land in a namespace
    that enforces exactly the highest level any of its pods needs, and warns and audits at
    `restricted`; a job stack on a platform uses the platform's namespace and creates none."""
    raw = raw_config(stack)
    raw["trainstack:workload"].pop("namespace", None)
    plan = render(stack, raw)
    controllers = {catalog.DRA_DRIVER_CHART.namespace}  # a controller's own namespace (A4X's DRA driver)
    namespaces = {
        r.inputs["metadata"]["name"]: r.inputs["metadata"]["labels"]
        for r in of_type(plan, "kubernetes:core/v1:Namespace")
        if r.inputs["metadata"]["name"] not in controllers
    }
    if "trainstack:platform" in raw or stack.startswith("toolkit-"):  # the platform's (or existing cluster's) namespace
        assert not namespaces
        return
    ((name, labels),) = namespaces.items()
    needed: dict[str, Level] = {}
    for r in plan.registrations:
        if r.type.startswith("kubernetes:") and r.custom and r.type.rsplit(":", 1)[-1] in POD_OWNERS and r.inputs["metadata"].get("namespace") == name:
            spec = r.inputs["spec"]
            templates = [j["template"]["spec"]["template"] for j in spec["replicatedJobs"]] if r.type.endswith(":JobSet") else [spec["template"]]
            for template in templates:
                needed[r.inputs["metadata"]["name"]] = max(
                    needed.get(r.inputs["metadata"]["name"], "restricted"), pod_security_level(template["spec"]), key=LEVELS.index
                )
    assert needed
    assert {k: v for k, v in labels.items() if k.startswith("pod-security")} == namespace_labels(max(needed.values(), key=LEVELS.index))


def test_a_new_stacks_job_runs_in_its_own_namespace_with_pod_security_labels() -> None:
    raw = raw_config("a3ultra-405b")
    del raw["trainstack:workload"]["namespace"]
    plan = render("a3ultra-405b", raw)
    namespace = one(plan, "kubernetes:core/v1:Namespace").inputs["metadata"]
    assert namespace["name"] == "trainstack"
    assert {k: v for k, v in namespace["labels"].items() if k.startswith("pod-security")} == namespace_labels("privileged")
    assert namespace_labels("privileged")["pod-security.kubernetes.io/warn"] == "restricted"
    assert {
        r.inputs["metadata"]["namespace"]
        for r in plan.registrations
        if r.type.startswith("kubernetes:") and r.custom and "namespace" in r.inputs.get("metadata", {})
    } == {"trainstack"}
    (grant,) = of_type(plan, "gcp:storage/bucketIAMMember:BucketIAMMember")
    assert grant.inputs["member"].endswith("/subject/ns/trainstack/sa/trainstack-workload")
    # Its own namespace: every other pod there is denied ingress too.
    deny = [r.inputs for r in of_type(plan, "kubernetes:networking.k8s.io/v1:NetworkPolicy") if r.inputs["metadata"]["name"].endswith("-deny-ingress")]
    assert [d["spec"] for d in deny] == [{"podSelector": {}, "policyTypes": ["Ingress"]}]


CLUSTER_STACKS = [s for s in STACKS if any(r["type"] == "gcp:container/cluster:Cluster" for r in resources(s))]


@pytest.mark.parametrize("stack", CLUSTER_STACKS)
def test_gcp_hardening_is_off_by_default_and_applies_when_asked(stack: str) -> None:
    """CMEK secrets encryption, Binary Authorization (the project's policy, which the stack
    documents keeping in dry run) and VPC flow logs on every GPU NIC subnet that flow logs can see
    (gVNIC; not RoCE, which they do not see, nor the cluster's own subnet)."""
    cluster = next(r["inputs"] for r in resources(stack) if r["type"] == "gcp:container/cluster:Cluster")
    assert "databaseEncryption" not in cluster and "binaryAuthorization" not in cluster
    assert not [r for r in resources(stack) if r["type"] == "gcp:compute/subnetwork:Subnetwork" and r["inputs"].get("logConfig")]
    raw = raw_config(stack)
    key = "projects/p/locations/us-central1/keyRings/gke/cryptoKeys/secrets"
    raw["trainstack:cluster"] |= {"databaseEncryptionKey": key, "binaryAuthorization": "audit"}
    raw.setdefault("trainstack:network", {})["flowLogs"] = True
    plan = render(stack, raw)
    cluster = one(plan, "gcp:container/cluster:Cluster").inputs
    assert cluster["databaseEncryption"] == {"state": "ENCRYPTED", "keyName": key}
    assert cluster["binaryAuthorization"] == {"evaluationMode": "PROJECT_SINGLETON_POLICY_ENFORCE"}
    roce = {
        f"projects/{r.inputs['project']}/global/networks/{r.inputs['name']}"
        for r in of_type(plan, "gcp:compute/network:Network")
        if "vpc-roce" in r.inputs.get("networkProfile", "")
    }
    subnets = of_type(plan, "gcp:compute/subnetwork:Subnetwork")
    visible = sorted(r.inputs["name"] for r in subnets if r.inputs["name"] != cluster["subnetwork"] and r.inputs["network"] not in roce)
    assert sorted(r.inputs["name"] for r in subnets if r.inputs.get("logConfig")) == visible
    assert bool(visible) == (stack not in NO_GPU_NICS + MANAGED_NICS)


def test_dataplane_v2_on_a_cluster_without_gpu_nics_enforces_the_jobs_policies() -> None:
    raw = raw_config("a2-gpt2-deepspeed")
    raw["trainstack:cluster"] |= {"dataplaneV2": True}
    plan = render("a2-gpt2-deepspeed", raw)
    assert one(plan, "gcp:container/cluster:Cluster").inputs["datapathProvider"] == "ADVANCED_DATAPATH"
    assert [r.inputs["metadata"]["name"] for r in of_type(plan, "kubernetes:networking.k8s.io/v1:NetworkPolicy")] == [
        "nfs-server",
        "gpt2-micro-training",
    ]  # `default`: no namespace-wide deny


def writable(grants: list[dict[str, Any]], bucket: str, path: str) -> bool:
    """Whether any of the grants lets its member write object `path` of `bucket`: an objectUser
    grant, unconditional or with a condition of startsWith terms the object's name matches."""
    name = f"projects/_/buckets/{bucket}/objects/{path}"
    for grant in grants:
        if grant["role"] != "roles/storage.objectUser":
            continue
        condition = grant.get("condition")
        if condition is None:
            return True
        prefixes = re.findall(r'resource\.name\.startsWith\("([^"]+)"\)', condition["expression"])
        assert condition["expression"] == " || ".join(f'resource.name.startsWith("{p}")' for p in prefixes)
        if any(name.startswith(p) for p in prefixes):
            return True
    return False


def test_two_jobs_on_one_platform_cannot_write_each_others_data() -> None:
    """Three job stacks on one platform, two of whose names share a prefix: each may write under
    its own <job>/ only, never under another's nor the bucket's top level."""
    rendered = {}
    for job in ("team-a", "team-b", "team-ab"):
        raw = raw_config("a3ultra-405b-job")
        raw["trainstack:workload"] |= {"name": job, "ownIdentity": True}
        rendered[job] = render("a3ultra-405b-job", raw)
    for job, plan in rendered.items():
        account = one(plan, "kubernetes:core/v1:ServiceAccount", "job-identity-service-account").inputs["metadata"]
        assert account["name"] == f"{job}-trainer"
        pod = one(plan, "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet").inputs["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == f"{job}-trainer"
        grants = [r.inputs for r in of_type(plan, "gcp:storage/bucketIAMMember:BucketIAMMember")]
        # The member is exactly the job's KSA (Workload Identity's principal for ns/<namespace>/sa/<name>).
        assert {g["member"].split("/subject/")[1] for g in grants} == {f"ns/{account['namespace']}/sa/{job}-trainer"}
        (bucket,) = {g["bucket"] for g in grants}
        assert f"/{job}/checkpoints" in json.dumps(pod)
        assert writable(grants, bucket, f"{job}/checkpoints/step-20/shard-0")
        for other in set(rendered) - {job}:
            assert not writable(grants, bucket, f"{other}/checkpoints/step-20/shard-0"), (job, other)
        assert not writable(grants, bucket, "checkpoints/step-20/shard-0")


@pytest.mark.parametrize("stack", STACKS)
def test_nodes_pull_from_the_stacks_repository_only(stack: str) -> None:
    project_roles = {r["inputs"]["role"] for r in resources(stack) if r["type"] == "gcp:projects/iAMMember:IAMMember"}
    assert "roles/artifactregistry.reader" not in project_roles
    readers = [
        r["inputs"]
        for r in resources(stack)
        if r["type"] == "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember" and r["inputs"]["role"] == "roles/artifactregistry.reader"
    ]
    accounts = [
        r["inputs"]["accountId"] for r in resources(stack) if r["type"] == "gcp:serviceaccount/account:Account" and r["inputs"]["accountId"].endswith("-nodes")
    ]
    repositories = [r for r in resources(stack) if r["type"] == "gcp:artifactregistry/repository:Repository"]
    if repositories and not stack.startswith("toolkit-"):  # an existing cluster's nodes are its own to grant
        (reader,) = readers
        assert reader["member"].startswith("serviceAccount:") and reader["member"].split(":")[1].split("@")[0].endswith("-nodes")
        assert not accounts or reader["member"].split(":")[1].startswith(accounts[0] + "@")
    else:
        assert not readers


def test_with_dataplane_v2_the_nfs_server_admits_nfs_from_the_nodes() -> None:
    raw = raw_config("a2-gpt2-deepspeed")
    raw["trainstack:cluster"] |= {"dataplaneV2": True}
    (policy,) = [
        r.inputs
        for r in of_type(render("a2-gpt2-deepspeed", raw), "kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if r.inputs["metadata"]["name"] == "nfs-server"
    ]
    (rule,) = policy["spec"]["ingress"]
    assert rule["from"] == [{"ipBlock": {"cidr": "0.0.0.0/0"}}]
    assert sorted(p["port"] for p in rule["ports"]) == [111, 2049, 20048]


# Stacks whose jobs run under NetworkPolicies (Dataplane V2 enforces them).
POLICED = [s for s in STACKS if any(kind(r) == "NetworkPolicy" for r in resources(s))]


def test_some_shipped_stacks_run_their_jobs_under_network_policies() -> None:
    assert len(POLICED) >= 3, POLICED


@pytest.mark.parametrize("stack", POLICED)
def test_the_launchers_rendezvous_is_admitted(stack: str) -> None:
    """Each job's pods reach its first pod's rendezvous port (torchrun, NeMo, DeepSpeed render
    MASTER_PORT; NCCL and Gloo then pick ephemeral ports): the job's own policy admits its pods on
    every port, and nothing else selects them."""
    policies = [r["inputs"] for r in resources(stack) if kind(r) == "NetworkPolicy"]
    jobs = [(name, spec) for name, spec in pods(stack) if any(c["name"] == "workload" for c in spec["containers"])]
    assert jobs
    for name, spec in jobs:
        (workload,) = [c for c in spec["containers"] if c["name"] == "workload"]
        env = {e["name"]: e.get("value") for e in workload["env"]}
        assert env["MASTER_PORT"] == str(MASTER_PORT)
        ports = re.findall(r"--master[_-]port[= ](\d+)", " ".join(workload["args"]))
        assert set(ports) <= {str(MASTER_PORT)}
        trainings = [p for p in policies if p["metadata"]["name"] == f"{name}-training"]  # one a worker, on a fleet
        assert trainings and all("ports" not in t["spec"]["ingress"][0] for t in trainings)


EXCEPTIONS = Path(__file__).resolve().parent.parent / "docs" / "security-exceptions.md"


def images_left_on_tags() -> set[str]:
    """The images docs/security-exceptions.md lists as left on their tags (first cell of each row)."""
    table = EXCEPTIONS.read_text().split("Left on their tags", 1)[1]
    return set(re.findall(r"^\| `([^`]+)` \|", table, flags=re.MULTILINE))


def unpinned(images: set[str]) -> set[str]:
    return {i for i in images if "@sha256:" not in i}


def test_every_catalog_image_is_pinned_by_digest_or_listed_with_why() -> None:
    """The catalog's images (installers, sidecars, the NFS server, TensorBoard, build bases and the
    builder) each carry a digest, or docs/security-exceptions.md says why not; a listed image that
    gained a digest leaves the list."""
    images = {i.ref for i in catalog.IMAGES.values()}
    images |= {i.ref for g in catalog.GPUDIRECT_IMAGES.values() for i in (getattr(g, f.name) for f in fields(g)) if i}
    images |= {m.nccl_plugin.ref for m in catalog.MACHINES.values() if m.nccl_plugin}
    listed = images_left_on_tags()
    assert unpinned(images) <= listed, sorted(unpinned(images) - listed)
    for image in images - unpinned(images):
        assert image not in listed and image.split("@")[0] not in listed, image


@pytest.mark.parametrize("stack", STACKS)
def test_every_third_party_image_a_stack_runs_is_pinned_by_digest_or_listed(stack: str) -> None:
    """Every container image in the plan but the stack's own build (pushed to the Artifact
    Registry repository the stack creates, pinned by the build's digest at `pulumi up`) carries a
    digest or is listed with why."""
    own = tuple(
        f"{r['inputs']['location']}-docker.pkg.dev/{r['inputs']['project']}/{r['inputs']['repositoryId']}/"
        for r in resources(stack)
        if r["type"] == "gcp:artifactregistry/repository:Repository"
    )
    images = {c["image"] for _, spec in pods(stack) for c in containers(spec) if not c["image"].startswith(own)}
    listed = images_left_on_tags()
    assert unpinned(images) <= listed, sorted(unpinned(images) - listed)


def test_a_new_unpinned_image_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(catalog.IMAGES, "busybox", catalog.Image("busybox", "1.37"))
    with pytest.raises(AssertionError, match=re.escape("busybox:1.37")):
        test_every_catalog_image_is_pinned_by_digest_or_listed_with_why()
