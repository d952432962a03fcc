"""A4X (a4x-highgpu-4g, GB200 NVL72): what is derived from its catalog record (core/catalog/machines.py)
and its sources: per-GPU peaks, NIC networks, the arm64 plugin, the NVLink domain, its price."""

from __future__ import annotations

from helpers import present
from trainstack.app.plan.cost import CostEstimate, PoolSize
from trainstack.core import catalog

A4X = catalog.machine("a4x-highgpu-4g")


def test_gb200_peaks_are_nvl72_rack_figures_per_gpu_dense() -> None:
    # nvidia.com GB200 NVL72 specifications: 360 PF BF16 and 720 PF FP8 per 72 GPUs, with sparsity.
    assert A4X.gpu.peak("bf16") == 360_000 / 72 / 2
    assert A4X.gpu.peak("fp8") == 720_000 / 72 / 2


def test_nics_are_one_extra_gvnic_and_four_rdma_nics_on_the_a3_ultra_path() -> None:
    # gpu-network-bandwidth: 2 Titanium + 4 CX-7 NICs; Toolkit gke-a4x before DRANET
    # (d1236e228^): gke-a4x-net-1 and a 4-subnet RoCE VPC; MTU 8896 (gpu-rdma-vpc default).
    nets = catalog.nic_networks(A4X, "10.128.0.0/16")
    assert [(n.name, n.interface) for n in nets] == [("gvnic-1", "eth1"), ("rdma-0", "eth2"), ("rdma-1", "eth3"), ("rdma-2", "eth4"), ("rdma-3", "eth5")]


def test_gib_is_the_arm64_build_the_recipe_and_toolkit_pin() -> None:
    # gpu-recipes 2e1fd5e a4x llama3_70b values.yaml network.gibVersion; Toolkit gke-a4x gib template_vars.
    plugin = present(A4X.gpudirect_images).nccl_plugin
    assert plugin.ref == "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-arm64:v1.1.0"
    assert plugin.runs_on("arm64") and plugin.runs_on("amd64") is False
    # A3 Ultra keeps its own gIB build.
    assert present(catalog.machine("a3-ultragpu-8g").gpudirect_images).nccl_plugin.repository.endswith("/nccl-plugin-gib")


def test_nvlink_domain_is_72_gpus_or_18_nodes() -> None:
    # Toolkit 1047080 examples/gke-a4x/gke-a4x.yaml workload_policy accelerator_topology "1x72".
    assert A4X.nvlink_domain_nodes == 18
    # A4X Max: the same 1x72 domain of 18 nodes (Toolkit c765092 examples/gke-a4x-max-bm workload_policy).
    assert catalog.machine("a4x-maxgpu-4g-metal").nvlink_domain_nodes == 18
    assert all(m.nvlink_domain_nodes is None for m in catalog.MACHINES.values() if m.accelerator_topology is None)


def test_a4x_is_not_priced_and_the_estimate_says_so() -> None:
    cost = CostEstimate([PoolSize("a4x", A4X.name, 18, 18, 4, None), PoolSize("cpu", "e2-standard-8", 2, 2, 0, 0.268)])
    assert cost.max_usd == round(2 * 0.268, 2)
    assert cost.to_dict()["notPriced"] == ["a4x"]
    assert "notPriced" not in CostEstimate([PoolSize("cpu", "e2-standard-8", 2, 2, 0, 0.268)]).to_dict()


def test_image_platforms_are_recorded_only_where_sourced() -> None:
    assert catalog.image("nemo-26.02").runs_on("arm64") and catalog.image("nemo-26.02").runs_on("amd64")
    assert catalog.image("resiliency").runs_on("arm64") is None  # no source: unknown
