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
