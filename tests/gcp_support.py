"""Renders of the GCP layer alone, shared by the tests/test_gcp_*.py modules.

Each variant is one stack config (the a3ultra-405b stack with changes) rendered once per test
session through `infra.gcp.build` under the mock engine. The layer's outputs are exported, plus
the kubeconfig unsecreted and the NIC network names, so tests can read resolved values.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pulumi

from helpers import merge, platform_config, raw_config, render_with
from trainstack.app.plan import engine
from trainstack.app.plan.recorder import Registration
from trainstack.infra import gcp

STACK = "a3ultra-405b"
PROJECT = "my-training-project"
REGION = "us-central1"
ZONE = "us-central1-b"

# One stack per machine family and storage kind; each keeps the base stack valid.
VARIANTS: dict[str, dict[str, Any]] = {
    # Recipe 000 as written: A3 Ultra, RDMA, a specific reservation, HNS bucket, prebuilt image.
    "a3ultra": {},
    # A3 Mega (TCPXO), any reservation, Filestore, an image built from images/nemo-24.07.
    "a3mega": {
        "trainstack_gpuPool": {"machineType": "a3-megagpu-8g", "nodeCount": 32, "reservation": {"affinity": "any", "name": None}},
        "trainstack_storage": {"kind": "filestore", "bucket": None, "filestore": {"tier": "ZONAL", "capacityGib": 1024}},
        "trainstack_image": {
            "prebuilt": None,
            "build": {"context": "images/nemo-24.07", "imageName": "nemo-workload", "tag": "24.07", "timeout": "2h"},
        },
        "trainstack_workload": {"nodes": 32, "resiliency": {"enabled": False}, "topology": None},
    },
    # A3 High (TCPX) on spot capacity, an existing primary network, an Enterprise Filestore.
    "a3high": {
        "trainstack_gpuPool": {"machineType": "a3-highgpu-8g", "nodeCount": 4, "provisioning": "spot", "reservation": {"affinity": "none", "name": None}},
        "trainstack_network": {
            "existing": {"network": "shared-net", "subnetwork": "shared-subnet", "podsRangeName": "gke-pods", "servicesRangeName": "gke-services"}
        },
        "trainstack_storage": {"kind": "filestore", "bucket": None, "filestore": {"tier": "ENTERPRISE", "capacityGib": 1024, "shareName": "nemo"}},
        "trainstack_workload": {"nodes": 2, "resiliency": {"enabled": False}, "topology": None},
    },
    # A2 autoscaling from zero, the driver DaemonSet, an NFS disk, no compact placement.
    "a2": {
        "trainstack_gpuPool": {
            "machineType": "a2-highgpu-8g",
            "nodeCount": None,
            "autoscaling": {"minNodes": 0, "maxNodes": 4},
            "gpuDriver": "daemonset",
            "placement": "none",
            "reservation": {"affinity": "none", "name": None},
        },
        "trainstack_storage": {"kind": "nfs", "bucket": None, "nfs": {"diskType": "pd-ssd", "diskSizeGb": 1000}},
        "trainstack_workload": {"nodes": 2, "precision": "fp16", "resiliency": {"enabled": False}, "topology": None},
        # recipe 000 waits 1m for pods; a pool scaling from zero needs the budget (rules.pods_ready_budget)
        "trainstack_kueue": {"waitForPodsReady": {"timeout": "30m"}},
    },
    # Flex-start A3 Mega autoscaling 0..8 (no reservation, no compact placement), a disposable bucket.
    "flex": {
        "trainstack_gpuPool": {
            "machineType": "a3-megagpu-8g",
            "nodeCount": None,
            "autoscaling": {"minNodes": 0, "maxNodes": 8},
            "provisioning": "flex-start",
            "placement": "none",
            "gpuDriver": "default",
            "reservation": {"affinity": "none", "name": None},
        },
        "trainstack_storage": {"disposable": True, "bucket": {"name": "my-scratch-bucket"}},
        "trainstack_workload": {"nodes": 8, "resiliency": {"enabled": False}, "topology": None},
        # recipe 000 waits 1m for pods; a pool scaling from zero needs the budget (rules.pods_ready_budget)
        "trainstack_kueue": {"waitForPodsReady": {"timeout": "30m"}},
    },
}


def raw(variant: str, **more: Any) -> dict[str, Any]:
    """The raw config of `variant`, with further changes (`trainstack_gpuPool=`...) deep-merged in."""
    return merge(raw_config(STACK, **VARIANTS[variant]), {k.replace("_", ":", 1): v for k, v in more.items()})


def _export(layer: Any) -> None:
    for key, value in layer.outputs.items():
        pulumi.export(key, value)
    pulumi.export("_kubeconfig", pulumi.Output.unsecret(layer.cluster.kubeconfig))
    pulumi.export("_kubeconfigSecret", layer.cluster.kubeconfig)
    pulumi.export("_nics", [{"name": n.name, "network": v, "subnetwork": s} for nets in layer.nic_networks.values() for n, v, s in nets])
    pulumi.export("_nodePools", len(layer.node_pools))


@cache
def _render(variant: str, changes: str) -> engine.Rendered:
    return render_with(lambda ctx: _export(gcp.build(ctx, platform_config(ctx.stack_file))), stack=STACK, raw=raw(variant, **json.loads(changes)))


def render(variant: str, **changes: Any) -> engine.Rendered:
    """The GCP layer of `variant` (plus `changes`), rendered once per session."""
    return _render(variant, json.dumps(changes, sort_keys=True))


def by_name(rendered: engine.Rendered, type_token: str, name: str) -> Registration:
    found = [r for r in rendered.registrations if r.type == type_token and r.name == name]
    assert len(found) == 1, f"expected one {type_token} {name!r}, found {len(found)}"
    return found[0]


def first_gpu_pool(rendered: engine.Rendered) -> Registration:
    """The node pool of the first GPU pool in the config (pools register in config order)."""
    return next(r for r in of_type(rendered, NODE_POOL) if "trainstack:gcp:GpuNodePool$" in r.urn)


def of_type(rendered: engine.Rendered, type_token: str) -> list[Registration]:
    return [r for r in rendered.registrations if r.type == type_token]


def closure(rendered: engine.Rendered, reg: Registration) -> set[str]:
    """Every URN `reg` waits for, directly or through what it waits for."""
    by_urn = {r.urn: r for r in rendered.registrations}
    seen: set[str] = set()
    todo = list(reg.dependencies)
    while todo:
        urn = todo.pop()
        if urn not in seen:
            seen.add(urn)
            todo += by_urn[urn].dependencies if urn in by_urn else []
    return seen


CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
NETWORK = "gcp:compute/network:Network"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"
SERVICE = "gcp:projects/service:Service"
BUCKET = "gcp:storage/bucket:Bucket"
BUCKET_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
FILESTORE = "gcp:filestore/instance:Instance"
DISK = "gcp:compute/disk:Disk"
REPOSITORY = "gcp:artifactregistry/repository:Repository"
COMMAND = "command:local:Command"
