"""`trainstack plan/validate --program`: a Pulumi program of the user's own, built from the
components, planned from its folder under the same mock engine as the shipped stacks, and refused
at the key the program wrote when an input is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trainstack.app.cli import main

PROGRAM = """
import pulumi
from trainstack.infra.training_platform import TrainingPlatform, TrainingPlatformArgs
from trainstack.workloads.training_workload import TrainingWorkload, TrainingWorkloadArgs

platform = TrainingPlatform("platform", TrainingPlatformArgs(
    project="my-own-project", region="us-central1", zone="us-central1-b",
    cluster={"name": "research", "versionPrefix": "1.35.", "authorizedNetworks": [{"cidrBlock": "10.0.0.0/8"}]},
    gpu_pool={"name": "a4", "machineType": "a4-highgpu-8g", "NODES": 2, "reservation": {"affinity": "specific", "name": "my-a4"}},
    storage={"kind": "lustre", "lustre": {"capacityGib": 18000}},
    image={"prebuilt": "nvcr.io/nvidia/nemo:25.07"},
))
job = TrainingWorkload("job", TrainingWorkloadArgs(platform=platform, workload={
    "name": "llama31-8b", "framework": "nemo2", "model": "llama3.1-8b", "nodes": 2, "steps": 30,
    "precision": "bf16", "microBatchSize": 1, "globalBatchSize": 128, "seqLength": 8192,
}))
pulumi.export("watch", job.watch_job)
"""


def program(tmp_path: Path, pool_size_key: str = "nodeCount", runtime: str = "python") -> Path:
    folder = tmp_path / "my-training"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text(f"name: my-training\nruntime: {runtime}\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  gcp:project: my-own-project\n  gcp:region: us-central1\n  gcp:zone: us-central1-b\n")
    (folder / "__main__.py").write_text(PROGRAM.replace('"NODES"', f'"{pool_size_key}"'))
    return folder


def test_a_program_of_your_own_is_planned_from_its_folder_with_the_summary(tmp_path: Path) -> None:
    folder = program(tmp_path)
    result = CliRunner().invoke(main, ["plan", "--program", str(folder), "--format", "json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)["summary"]
    assert summary["cost"]["gpus"] == 16 and summary["cost"]["usdPerHourAtMax"] > 0  # 2 x a4-highgpu-8g
    assert summary["criticalPath"]["verdict"]
    plan = json.loads((folder / "build" / "plans" / "dev" / "plan.json").read_text())
    assert any(r["type"] == "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet" for r in plan["resources"])
    assert any(r["type"] == "gcp:container/nodePool:NodePool" and r["inputs"].get("nodeCount") == 2 for r in plan["resources"])


def test_a_misspelled_key_in_a_program_is_refused_at_the_path_it_wrote(tmp_path: Path) -> None:
    folder = program(tmp_path, pool_size_key="nodeCont")
    result = CliRunner().invoke(main, ["validate", "--program", str(folder), "--format", "json"])
    assert result.exit_code == 2, result.output
    report = json.loads(result.stdout)["dev"]
    assert report["problems"] == [{"key": "gpuPool.nodeCont", "value": 2, "rule": "unknown key", "fix": "did you mean gpuPool.nodeCount?"}]
    plain = CliRunner().invoke(main, ["plan", "--program", str(folder)])
    assert plain.exit_code == 2 and "gpuPool.nodeCont: unknown key (value 2); did you mean gpuPool.nodeCount?" in plain.output


@pytest.mark.parametrize("runtime", ["yaml", "nodejs"])
def test_a_program_of_another_runtime_is_sent_through_the_package(tmp_path: Path, runtime: str) -> None:
    result = CliRunner().invoke(main, ["plan", "--program", str(program(tmp_path, runtime=runtime))])
    assert result.exit_code == 2 and f"runtime {runtime!r}: trainstack plans Python programs from their folder" in result.output
