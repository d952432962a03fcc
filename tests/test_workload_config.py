"""The workload section's rules: each bad value is rejected with one message naming its key."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import load_platform, raw_config, workload_of
from trainstack.app.deploy import validation
from trainstack.app.deploy.stack_file import load
from trainstack.app.deploy.stacks import project_root
from trainstack.core.errors import ConfigError
from trainstack.workloads.spec import WorkloadSpec


def problems(stack: str = "a3ultra-405b", **workload: Any) -> list[str]:
    """Every problem the one validation entry point reports for the stack with `workload` changes."""
    try:
        validation.validate(stack, raw_config(stack, trainstack_workload=workload), project_root())
    except ConfigError as error:
        return error.problems
    return []


@pytest.mark.parametrize(
    ("stack", "workload", "message"),
    [
        (
            "a3ultra-405b",
            {"controller": "job"},
            "trainstack:workload.controller = 'job': the resiliency supervisor acts on JobSets; use controller: jobset",
        ),
        (
            "a3mega-gpt3-175b",
            {"parallelism": {"tensor": 4, "pipeline": 1, "virtualPipeline": 2}},
            "trainstack:workload.parallelism.virtualPipeline = 2: interleaving needs pipeline > 1",
        ),
        (
            "a3mega-gpt3-175b",
            {"parallelism": {"tensor": 1, "pipeline": 8, "virtualPipeline": None, "sequenceParallel": True}},
            "trainstack:workload.parallelism.sequenceParallel = True: sequence parallelism needs tensor > 1",
        ),
        (
            "a3high-litgpt",
            {"dataset": {"source": "s3://bucket/data"}},
            "trainstack:workload.dataset.source = 's3://bucket/data': must be a gs:// URI",
        ),
        (
            "a3mega-gpt3-175b",
            {"topology": {"level": "kubernetes.io/hostname"}},
            (
                "trainstack:workload.topology = 'kubernetes.io/hostname': the queue has no Topology Aware Scheduling "
                "(a3-megagpu-8g nodes carry no GKE topology labels), so Kueue would never admit a job asking for a topology; set topology: null"
            ),
        ),
        (
            "a3mega-gpt3-175b",
            {"name": "g" * 61},
            (
                f"trainstack:workload.name = '{'g' * 56}...: is too long for 32 nodes: pod hostname '{'g' * 61}-31' has 64 characters, "
                "over 63 (a pod hostname is a DNS-1123 label (Kubernetes ValidatePodSpec))"
            ),
        ),
    ],
)
def test_rule(stack: str, workload: dict[str, Any], message: str) -> None:
    assert problems(stack, **workload) == [message]


REPLICA_CASES = [
    (
        {"nodesPerDataParallelReplica": 20},
        (("resiliency", "nodesPerDataParallelReplica"), 20, "must divide nodes (54) into whole data-parallel replicas"),
        "trainstack:workload.resiliency.nodesPerDataParallelReplica = 20: must divide nodes (54) into whole data-parallel replicas",
    ),
    (
        {"minDataParallelReplicas": 4},
        (("resiliency", "minDataParallelReplicas"), 4, "must not exceed the 3 replicas 54 nodes hold"),
        "trainstack:workload.resiliency.minDataParallelReplicas = 4: must not exceed the 3 replicas 54 nodes hold",
    ),
]


@pytest.mark.parametrize(("resiliency", "problem", "message"), REPLICA_CASES)
def test_replicas_must_fit_the_nodes(resiliency: dict[str, Any], problem: tuple[Any, ...], message: str) -> None:
    raw = raw_config(trainstack_workload={"resiliency": resiliency})["trainstack:workload"]
    assert WorkloadSpec.model_validate(raw).replica_problems() == [problem]


@pytest.mark.parametrize(("resiliency", "problem", "message"), REPLICA_CASES)
def test_stack_validation_reports_replicas_that_do_not_fit(resiliency: dict[str, Any], problem: tuple[Any, ...], message: str) -> None:
    assert problems(resiliency=resiliency) == [message]


def test_a_node_count_over_the_pool_reports_the_pool_first() -> None:
    assert problems(nodes=64) == ["trainstack:workload.nodes = 64: exceeds the GPU pool's maximum of 54 nodes (trainstack:gpuPool)"]


def test_a_jobset_pod_name_counts_its_replicated_job_and_the_webhooks_suffix() -> None:
    """JobSet v0.12.0 pkg/webhooks/jobset_webhook.go: GenPodName(<jobset>, <rjob>, <last job>,
    <last pod>) + "-abcde" must be a DNS-1035 label (63)."""
    name = "j" * 43  # `<name>-workload-0-31-abcde` is 63 characters
    assert problems("a3mega-gpt3-175b", name=name, controller="jobset") == []
    too_long = problems("a3mega-gpt3-175b", name=name + "j", controller="jobset")[0]
    assert f"pod name '{name}j-workload-0-31-abcde' has 64 characters" in too_long


def test_the_supervisors_service_names_bound_the_workload_name() -> None:
    """a3ultra-405b runs the resiliency supervisor: `<name>-supervisor-controller` is a Service name (DNS-1035, 63)."""
    name = "j" * 41
    assert problems("a3ultra-405b", name=name) == []
    assert f"supervisor Service '{name}j-supervisor-controller' has 64 characters" in problems("a3ultra-405b", name=name + "j")[0]


def test_the_tensorboard_service_name_bounds_the_workload_name() -> None:
    name = "j" * 51  # `<name>-tensorboard` is 63 characters
    assert problems("a3high-nemo-gpt5b", name=name, controller="job") == []
    assert f"TensorBoard Service '{name}j-tensorboard' has 64 characters" in problems("a3high-nemo-gpt5b", name=name + "j", controller="job")[0]


def test_resiliency_defaults_to_one_replica_of_every_node() -> None:
    config = load_platform("a3high-litgpt", raw_config("a3high-litgpt"))
    assert workload_of(config).nodes_per_data_parallel_replica == 8
    assert workload_of(config).data_parallel_replicas == 1


def test_topology_can_be_switched_off() -> None:
    raw = raw_config("a3high-litgpt")
    raw["trainstack:workload"]["topology"] = None  # YAML `topology: null`
    assert workload_of(load("a3high-litgpt", raw)).topology is None
