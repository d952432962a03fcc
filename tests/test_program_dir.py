"""`trainstack plan/validate --program`: a Pulumi program of the user's own, built from the
components, planned from its folder under the same mock engine as the shipped stacks, and refused
at the key the program wrote when an input is wrong."""

from __future__ import annotations

import json
import subprocess
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


def program(tmp_path: Path, pool_size_key: str = "nodeCount", runtime: str = "python", job: str = "") -> Path:
    """The program in `tmp_path`/my-training; `job` adds keys to its workload section (Python source)."""
    folder = tmp_path / "my-training"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text(f"name: my-training\nruntime: {runtime}\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  gcp:project: my-own-project\n  gcp:region: us-central1\n  gcp:zone: us-central1-b\n")
    (folder / "__main__.py").write_text(PROGRAM.replace('"NODES"', f'"{pool_size_key}"').replace('"seqLength": 8192,', f'"seqLength": 8192, {job}'))
    return folder


# Llama 3.1 70B on 16 B200s without tensor or pipeline parallelism: about 545 GB a GPU of 180 (the
# key follows the 8B model in the section's dict literal, so it is the one the job gets).
MISFIT = '"model": "llama3.1-70b",'


def test_a_program_of_your_own_is_planned_from_its_folder_with_the_summary(tmp_path: Path) -> None:
    folder = program(tmp_path)
    result = CliRunner().invoke(main, ["plan", "--program", str(folder), "--format", "json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)["summary"]
    assert summary["cost"]["gpus"] == 16 and summary["cost"]["usdPerHourAtMax"] > 0  # 2 x a4-highgpu-8g
    assert summary["criticalPath"]["verdict"]
    assert summary["memory"]["fits"] is True and summary["memory"]["gpu_memory"] > summary["memory"]["total"]
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


def test_a_job_of_a_program_that_does_not_fit_is_refused_as_a_stacks_is(tmp_path: Path) -> None:
    """memoryCheck error (the default): validate exits 2 naming the misfit, as for a shipped stack."""
    folder = program(tmp_path, job=MISFIT)
    result = CliRunner().invoke(main, ["validate", "--program", str(folder), "--format", "json"])
    assert result.exit_code == 2, result.output
    (problem,) = json.loads(result.stdout)["dev"]["problems"]
    assert "llama3.1-70b on 16 x b200" in str(problem["value"]) and "needs about" in problem["rule"]


def test_a_job_that_does_not_fit_under_memory_check_warn_is_reported_with_its_estimate(tmp_path: Path) -> None:
    folder = program(tmp_path, job=MISFIT + ' "memoryCheck": "warn",')
    result = CliRunner().invoke(main, ["validate", "--program", str(folder), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["dev"]
    assert report["gpuMemory"]["fits"] is False and report["gpuMemory"]["total"] > 500
    assert any(w.startswith(f"needs about {report['gpuMemory']['total']} GB per GPU") for w in report["warnings"])
    plan = CliRunner().invoke(main, ["plan", "--program", str(folder)])
    assert plan.exit_code == 0 and "DOES NOT FIT" in plan.output


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args], check=True, capture_output=True)


def test_a_program_is_diffed_from_a_git_ref_to_its_working_tree(tmp_path: Path) -> None:
    """The program committed, then its pool grown from 2 to 3 nodes: the diff names the pool's change
    and the GPUs and cost it adds, as `trainstack diff` does for a shipped stack."""
    repo = tmp_path / "repo"
    repo.mkdir()
    folder = program(repo)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "my program")
    main_py = folder / "__main__.py"
    main_py.write_text(main_py.read_text().replace('"nodeCount": 2', '"nodeCount": 3'))
    result = CliRunner().invoke(main, ["diff", "--program", str(folder), "--base", "HEAD", "--format", "json"])
    assert result.exit_code == 0, result.output
    (stack,) = json.loads(result.stdout)["stacks"]
    assert stack["stack"] == "dev" and stack["status"] == "changed"
    (pool,) = [c for c in stack["changed"] if c["type"] == "gcp:container/nodePool:NodePool"]
    assert {"path": "nodeCount", "kind": "input", "effect": "update", "old": 2, "new": 3} in pool["changes"]
    totals = stack["totals"]
    assert (totals["base"]["gpus"], totals["head"]["gpus"]) == (16, 24) and totals["delta"]["usdPerHourAtMax"] > 0
    assert totals["base"]["fits"] is True and totals["head"]["fits"] is True
    markdown = CliRunner().invoke(main, ["diff", "--program", str(folder), "--base", "HEAD"])
    assert markdown.exit_code == 0 and "| GPUs | 16 | 24 | +8 |" in markdown.output


def test_a_program_the_base_ref_does_not_have_is_new_and_a_bad_ref_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("a repository before the program\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    folder = program(repo)
    result = CliRunner().invoke(main, ["diff", "--program", str(folder), "--base", "HEAD", "--format", "json"])
    assert result.exit_code == 0, result.output
    (stack,) = json.loads(result.stdout)["stacks"]
    assert stack["status"] == "new" and stack["totals"]["head"]["gpus"] == 16 and stack["removed"] == []
    bad = CliRunner().invoke(main, ["diff", "--program", str(folder), "--base", "no-such-ref"])
    assert bad.exit_code == 2 and "unknown git ref 'no-such-ref'" in bad.output


def test_a_base_ref_whose_program_does_not_render_is_reported_not_a_failure_of_the_change(tmp_path: Path) -> None:
    """The misspelled key fixed in the working tree: the base's own error is shown (exit 0), as diff does for a stack."""
    repo = tmp_path / "repo"
    repo.mkdir()
    folder = program(repo, pool_size_key="nodeCont")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "a misspelled pool size")
    main_py = folder / "__main__.py"
    main_py.write_text(main_py.read_text().replace('"nodeCont"', '"nodeCount"'))
    result = CliRunner().invoke(main, ["diff", "--program", str(folder), "--base", "HEAD", "--format", "json"])
    assert result.exit_code == 0, result.output
    (stack,) = json.loads(result.stdout)["stacks"]
    assert (stack["status"], stack["errorIn"]) == ("error", "base")
    assert "gpuPool.nodeCont: unknown key (value 2); did you mean gpuPool.nodeCount?" in stack["error"]


@pytest.mark.parametrize(("command", "verb"), [("validate", "validates"), ("plan", "plans")])
def test_plan_and_validate_refuse_several_stacks_of_a_program_alike(tmp_path: Path, command: str, verb: str) -> None:
    result = CliRunner().invoke(main, [command, "--program", str(tmp_path), "a", "b"])
    assert result.exit_code == 2 and f"--program {verb} one stack of the program at a time" in result.output


def test_a_folder_that_is_no_program_is_bad_input_and_validate_json_says_so_as_problems(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    plan = CliRunner().invoke(main, ["plan", "--program", str(tmp_path)])
    assert plan.exit_code == 2 and "no Pulumi.yaml" in plan.output
    validate = CliRunner().invoke(main, ["validate", "--program", str(tmp_path), "--format", "json"])
    assert validate.exit_code == 2
    report = json.loads(validate.output)["dev"]
    assert report["valid"] is False and "no Pulumi.yaml" in json.dumps(report["problems"])
