"""Arm64 on A4X: every image a job runs on the GPU nodes is published for linux/arm64, by the
platforms the catalog records with their source; an amd64-only image, or one whose platforms are
not recorded (unknown), is a config error naming the key that makes it run. amd64 machines keep
accepting unknown images, as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers import merge, raw_config
from test_a4x_pools import a4x_raw
from trainstack.app.validation import validate
from trainstack.core import catalog
from trainstack.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def problems(raw: dict[str, Any]) -> list[str]:
    try:
        validate("a4x", raw, ROOT)
    except ConfigError as error:
        return error.problems
    return []


def on_a4x(**changes: Any) -> dict[str, Any]:
    return merge(a4x_raw(), {k.replace("_", ":", 1): v for k, v in changes.items()})


def test_an_arm64_image_with_gibs_arm64_build_is_accepted() -> None:
    assert problems(on_a4x()) == []


def test_an_amd64_only_image_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(catalog.IMAGES, "x86-only", catalog.Image("nvcr.io/nvidia/pytorch", "99.01-py3", platforms=("linux/amd64",)))
    assert problems(on_a4x(trainstack_image={"prebuilt": "nvcr.io/nvidia/pytorch:99.01-py3"})) == [
        (
            "trainstack:image.prebuilt = 'nvcr.io/nvidia/pytorch:99.01-py3': runs nvcr.io/nvidia/pytorch:99.01-py3 on a4x-highgpu-4g's "
            "linux/arm64 nodes, an image published for linux/amd64 only; use one published for linux/arm64"
        )
    ]


def test_a_cloud_build_image_is_amd64_only() -> None:
    raw = on_a4x(trainstack_image={"prebuilt": None, "build": {"context": "images/nemo-24.07", "imageName": "nemo", "tag": "24.07"}})
    assert problems(raw) == [
        (
            "trainstack:image.build = 'nemo:24.07': runs nemo:24.07 on a4x-highgpu-4g's linux/arm64 nodes, an image published "
            "for linux/amd64 only; use one published for linux/arm64"
        )
    ]


def test_unknown_platforms_are_refused_on_arm_naming_each_key() -> None:
    raw = on_a4x(
        trainstack_image={"prebuilt": "nvcr.io/nvidia/nemo:25.99"},
        trainstack_workload={"dataset": {"source": "gs://bucket/data"}},
    )
    unknown = "an image with no platforms recorded in the catalog (core/catalog/images.py), so unknown, and unknown is refused on Arm"
    assert problems(raw) == [
        f"trainstack:image.prebuilt = 'nvcr.io/nvidia/nemo:25.99': runs nvcr.io/nvidia/nemo:25.99 on a4x-highgpu-4g's linux/arm64 nodes, {unknown}; use one published for linux/arm64",
        f"trainstack:workload.dataset.source = 'gs://bucket/data': runs {catalog.image('cloud-sdk').ref} on a4x-highgpu-4g's linux/arm64 nodes, {unknown}; use one published for linux/arm64",
    ]


def test_the_supervisors_host_monitor_and_a_driver_installer_run_on_the_gpu_nodes_too() -> None:
    raw = on_a4x(
        trainstack_gpuPool={"gpuDriver": "daemonset"},
        trainstack_workload={"resiliency": {"enabled": True, "nodesPerDataParallelReplica": 16, "minDataParallelReplicas": 1}},
    )
    keys = [p.split(" = ")[0] for p in problems(raw)]
    assert sorted(keys) == ["trainstack:gpuPool.gpuDriver", "trainstack:workload.resiliency.enabled"]


def test_amd64_machines_still_accept_images_of_unknown_platforms() -> None:
    assert catalog.image("resiliency").platforms is None
    assert problems(raw_config()) == []  # recipe 000: the resiliency image on A3 Ultra


def test_the_dra_drivers_kubelet_plugin_runs_on_the_a4x_nodes_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(catalog.IMAGES, "nvidia-dra-driver", catalog.Image("nvcr.io/nvidia/k8s-dra-driver-gpu", "v25.3.0"))
    assert problems(on_a4x()) == [
        (
            "trainstack:gpuPool.machineType = 'a4x-highgpu-4g': runs nvcr.io/nvidia/k8s-dra-driver-gpu:v25.3.0 on a4x-highgpu-4g's "
            "linux/arm64 nodes, an image with no platforms recorded in the catalog (core/catalog/images.py), so unknown, and unknown is "
            "refused on Arm; use one published for linux/arm64"
        )
    ]
