"""Every name every shipped stack renders, checked against its real limit after every suffix: the
plan is walked (GCP names and account IDs, Kubernetes names, namespaces and labels, and the pod,
Job and Service names the JobSet and Job controllers derive), not a list of chosen names. The
golden plans are the rendered plans (test_plans.py proves it)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from trainstack.app.deploy.stacks import stack_names
from trainstack.core import names, rules

GOLDEN = Path(__file__).resolve().parent / "golden"

# GCP physical names by resource type: the input that holds it and its rule.
GCP_NAMES: dict[str, tuple[str, Callable[[Any], str | None]]] = {
    "gcp:container/cluster:Cluster": ("name", rules.CLUSTER_NAME),
    "gcp:container/nodePool:NodePool": ("name", rules.NODE_POOL_NAME),
    "gcp:serviceaccount/account:Account": ("accountId", rules.ACCOUNT_ID),
    "gcp:storage/bucket:Bucket": ("name", rules.bucket_name),
    "gcp:filestore/instance:Instance": ("name", rules.GCP_NAME),
    "gcp:artifactregistry/repository:Repository": ("repositoryId", rules.REPOSITORY_ID),
}
# Kubernetes apimachinery validation: DNS-1123 subdomains (253), DNS-1035 labels for Services and
# Namespaces' DNS-1123 labels (63); label keys `[prefix/]name` (name 63), values 63.
SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")


def plan(stack: str) -> dict[str, Any]:
    return json.loads((GOLDEN / f"{stack}.json").read_text())


def k8s_objects(resources: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for r in resources:
        obj = r["inputs"]
        if r["custom"] and r["type"].startswith("kubernetes:") and isinstance(obj.get("metadata"), dict) and "kind" in obj:
            yield obj


def name_problems(resources: list[dict[str, Any]]) -> Iterator[str]:
    for r in resources:
        if r["type"] in GCP_NAMES:
            field, rule = GCP_NAMES[r["type"]]
            if message := rule(r["inputs"].get(field)):
                yield f"{r['type']} {field}={r['inputs'].get(field)!r}: {message}"
        elif r["type"].startswith("gcp:compute/") and "name" in r["inputs"] and (message := rules.GCP_NAME(r["inputs"]["name"])):
            yield f"{r['type']} name={r['inputs']['name']!r}: {message}"
    for obj in k8s_objects(resources):
        meta, kind = obj["metadata"], obj["kind"]
        name = meta.get("name", "")
        if kind == "Service":
            message = rules.DNS1035_NAME(name)
        elif kind == "Namespace":
            message = rules.K8S_NAME(name) or rules.workload_namespace(name)
        else:
            message = None if len(name) <= 253 and SUBDOMAIN.fullmatch(name) else "is not a DNS-1123 subdomain"
        if message:
            yield f"{kind}/{name}: {message}"
        for key, value in (meta.get("labels") or {}).items():
            prefix, _, label = key.rpartition("/")
            if len(label) > 63 or not LABEL_NAME.fullmatch(label) or len(prefix) > 253:
                yield f"{kind}/{name}: label key {key!r}"
            if len(str(value)) > 63 or not LABEL_VALUE.fullmatch(str(value)):
                yield f"{kind}/{name}: label {key}={value!r}"
        yield from derived_problems(obj)


def derived_problems(obj: dict[str, Any]) -> Iterator[str]:
    """What the controllers derive: JobSet v0.12.0's Job, pod and Service names (its webhook's
    checks, pkg/webhooks/jobset_webhook.go), an Indexed Job's pod hostnames."""
    kind, name = obj["kind"], obj["metadata"]["name"]
    if kind == "JobSet":
        service = (obj["spec"].get("network") or {}).get("subdomain") or name
        derived = [("headless Service", service)]
        for rjob in obj["spec"]["replicatedJobs"]:
            last_job, last_pod = rjob.get("replicas", 1) - 1, rjob["template"]["spec"]["completions"] - 1
            derived += [("Job", f"{name}-{rjob['name']}-{last_job}"), ("pod", f"{name}-{rjob['name']}-{last_job}-{last_pod}{names.JOBSET_POD_SUFFIX}")]
        for what, derived_name in derived:
            if message := rules.DNS1035_NAME(derived_name):
                yield f"JobSet/{name}: {what} {derived_name!r} {message}"
    if kind == "Job" and obj["spec"].get("completionMode") == "Indexed":
        hostname = f"{name}-{obj['spec']['completions'] - 1}"
        if message := rules.K8S_NAME(hostname):
            yield f"Job/{name}: pod hostname {hostname!r} {message}"


@pytest.mark.parametrize("stack", stack_names())
def test_every_rendered_name_is_within_its_limit(stack: str) -> None:
    resources = plan(stack)["resources"]
    assert list(k8s_objects(resources))
    assert list(name_problems(resources)) == []


def test_the_walk_finds_a_name_over_its_limit() -> None:
    """The walk itself: a JobSet whose longest pod name is 64 characters once its suffix is added."""
    jobset = {
        "kind": "JobSet",
        "metadata": {"name": "j" * 44},
        "spec": {"replicatedJobs": [{"name": "workload", "replicas": 1, "template": {"spec": {"completions": 100}}}]},
    }
    assert list(derived_problems(jobset)) == [f"JobSet/{'j' * 44}: pod '{'j' * 44}-workload-0-99-abcde' must be at most 63 characters"]
    pool = {"type": "gcp:container/nodePool:NodePool", "custom": True, "inputs": {"name": "p" * 41}}
    assert len(list(name_problems([pool]))) == 1


# --- no two stacks make one object on one cluster ------------------------------------------------


def cluster_objects(plan: dict[str, Any]) -> Iterator[tuple[str, tuple[str, str, str]]]:
    """(cluster, (kind, namespace, name)) of every Kubernetes object and Helm release a plan makes,
    by the cluster its provider targets (`clusterIdentifier`, less its instance suffix). A JobSet
    made on a fleet's manager is made again on each worker the job may run on (MultiKueue copies it
    under its own name: Kueue v0.19.2 pkg/controller/jobs/jobset/jobset_multikueue_adapter.go), with
    the headless Service the JobSet controller makes of its subdomain (JobSet v0.12.0
    pkg/controllers/jobset_controller.go)."""
    providers = {r["urn"]: r["inputs"]["clusterIdentifier"].split("#")[0] for r in plan["resources"] if r["type"] == "pulumi:providers:kubernetes"}
    workers = [cluster for urn, cluster in providers.items() if urn.rsplit("::", 1)[1].startswith("worker-")]
    for r in plan["resources"]:
        if not r["custom"] or not r["type"].startswith("kubernetes:") or r.get("provider") not in providers:
            continue
        inputs, cluster = r["inputs"], providers[r["provider"]]
        if r["type"] == "kubernetes:helm.sh/v3:Release":
            yield cluster, ("Release", inputs.get("namespace", ""), inputs["name"])
            continue
        meta = inputs.get("metadata") or {}
        identity = (inputs.get("kind", r["type"]), meta.get("namespace", ""), meta.get("name", ""))
        yield cluster, identity
        if identity[0] == "JobSet":
            service = (inputs["spec"].get("network") or {}).get("subdomain") or identity[2]
            for where in (cluster, *workers):
                yield where, ("Service", identity[1], service)
            for worker in workers:
                yield worker, identity


def test_no_two_shipped_stacks_make_one_object_on_one_cluster() -> None:
    """A second stack's create of an existing object fails (pulumi-kubernetes >= 4.29) or takes it
    over, and either stack's destroy deletes it for both; a JobSet reuses any Service of its
    subdomain's name, so two jobs' pods would share one DNS name."""
    owners: dict[tuple[str, tuple[str, str, str]], set[str]] = {}
    for stack in stack_names():
        plan = json.loads((GOLDEN / f"{stack}.json").read_text())
        for found in set(cluster_objects(plan)):
            owners.setdefault(found, set()).add(stack)
    shared = {f"{cluster}: {identity}": sorted(stacks) for (cluster, identity), stacks in owners.items() if len(stacks) > 1}
    assert not shared, shared
    on_cluster: dict[str, set[str]] = {}
    for (cluster, _), stacks in owners.items():
        on_cluster.setdefault(cluster, set()).update(stacks)
    # Not vacuous: the capacity platform, its job, the fleet (the manager's account) and the fleet's job share one cluster.
    assert len(on_cluster["projects/my-training-project/locations/us-central1/clusters/a3mega-capacity"]) == 4
