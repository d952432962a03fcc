"""The dependency graph a reviewer sees: no needless serialization, and what must wait does."""

from __future__ import annotations

import pytest

from gcp_support import (
    BUCKET,
    BUCKET_MEMBER,
    CLUSTER,
    COMMAND,
    DISK,
    FILESTORE,
    NETWORK,
    NODE_POOL,
    REPOSITORY,
    by_name,
    closure,
    first_gpu_pool,
    of_type,
    render,
)


def cluster_urn(rendered) -> str:
    return by_name(rendered, CLUSTER, "cluster").urn


@pytest.mark.parametrize(
    ("variant", "type_token", "name"),
    [
        ("a3ultra", BUCKET, "bucket"),
        ("a3mega", FILESTORE, "filestore"),
        ("a3mega", REPOSITORY, "image-repository"),
        ("a3mega", COMMAND, "image-build"),
        ("a2", DISK, "nfs-disk"),
        ("a3ultra", NETWORK, "gpu-nics-a3-ultragpu-8g-rdma"),
    ],
)
def test_storage_image_and_networks_do_not_wait_for_the_cluster(variant: str, type_token: str, name: str) -> None:
    rendered = render(variant)
    waited = closure(rendered, by_name(rendered, type_token, name))
    assert cluster_urn(rendered) not in waited
    assert not waited & {p.urn for p in of_type(rendered, NODE_POOL)}


@pytest.mark.parametrize("variant", ["a3ultra", "a3mega", "a2"])
def test_pools_wait_for_the_cluster_but_not_for_each_other(variant: str) -> None:
    rendered = render(variant)
    gpu, cpu = first_gpu_pool(rendered), by_name(rendered, NODE_POOL, "cpu-pool")
    for pool, other in ((gpu, cpu), (cpu, gpu)):
        assert cluster_urn(rendered) in pool.dependencies
        assert other.urn not in closure(rendered, pool)


def test_gpu_pool_waits_for_its_nic_subnets() -> None:
    rendered = render("a3ultra")
    subnets = {s.urn for s in of_type(rendered, "gcp:compute/subnetwork:Subnetwork") if s.name != "network-subnet"}
    assert len(subnets) == 9
    assert subnets <= set(first_gpu_pool(rendered).dependencies)
    assert not subnets & set(by_name(rendered, NODE_POOL, "cpu-pool").dependencies)


def test_cluster_does_not_wait_for_storage_or_the_image() -> None:
    for variant, type_token in (("a3ultra", BUCKET), ("a3mega", FILESTORE), ("a3mega", COMMAND)):
        rendered = render(variant)
        waited = closure(rendered, by_name(rendered, CLUSTER, "cluster"))
        assert not waited & {r.urn for r in of_type(rendered, type_token)}


def test_workload_identity_grant_waits_for_the_cluster() -> None:
    # The principal is valid only once a cluster has created the project's identity pool.
    rendered = render("a3ultra")
    (grant,) = of_type(rendered, BUCKET_MEMBER)
    assert cluster_urn(rendered) in grant.dependencies
