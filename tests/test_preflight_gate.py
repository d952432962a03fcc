"""The preflight gate: what the job renders, what validate refuses, and the probe's own logic, each
against the rules of the controllers it relies on (JobSet 0.12.0, Kueue 0.19.2, Kubernetes)."""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import of_type, one, raw_config, render
from trainstack.app.deploy import validation
from trainstack.app.deploy.stacks import project_root
from trainstack.core import catalog
from trainstack.core.catalog import preflight as facts
from trainstack.core.errors import ConfigError
from trainstack.workloads import preflight, preflight_probe
from trainstack.workloads.pod import WORKLOAD_CONTAINER
from trainstack.workloads.spec import Preflight
from trainstack.workloads.training_job import pod_hosts

SAMPLES = Path(__file__).parent / "preflight_samples"


def problems(stack: str, **workload: Any) -> list[str]:
    try:
        validation.validate(stack, raw_config(stack, trainstack_workload=workload), project_root())
    except ConfigError as error:
        return error.problems
    return []


@pytest.fixture(scope="module")
def a4() -> Any:
    return render("a4-llama3-70b")


def jobset_of(rendered: Any) -> dict[str, Any]:
    return one(rendered, "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet").inputs["spec"]


def test_the_preflight_runs_in_the_trainers_pods_after_the_gpudirect_containers_with_its_mounts_env_and_gpus(a4: Any) -> None:
    spec = jobset_of(a4)
    job = spec["replicatedJobs"][0]["template"]["spec"]
    pod = job["template"]["spec"]
    names = [c["name"] for c in pod["initContainers"]]
    assert names[-2:] == [preflight.NODE_CONTAINER, preflight.FABRIC_CONTAINER]
    assert names[0] == "nccl-plugin-installer"  # gIB's installer runs first: the fabric test uses its NCCL
    (trainer,) = pod["containers"]
    assert trainer["name"] == WORKLOAD_CONTAINER
    for gate in pod["initContainers"][-2:]:
        assert gate["resources"] == trainer["resources"]
        assert all(m in gate["volumeMounts"] for m in trainer["volumeMounts"])
        nccl = {e["name"]: e.get("value") for e in trainer["env"] if e["name"].startswith("NCCL")}
        assert nccl and {e["name"]: e.get("value") for e in gate["env"] if e["name"].startswith("NCCL")} == nccl
    fabric = pod["initContainers"][-1]
    # The trainer's own NCCL setup (plugin path, gIB's script, the exports after it) runs first.
    prologue = trainer["command"][2].split("echo ")[0]
    assert fabric["command"][2].startswith(prologue)
    hosts = fabric["command"][fabric["command"].index("--hosts") + 1].split(",")
    name = one(a4, "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet").inputs["metadata"]["name"]
    assert hosts == list(pod_hosts(name, "jobset", 8))
    assert fabric["command"][fabric["command"].index("--threshold") + 1] == "250"  # A4's published mark


def test_a_failed_check_fails_the_job_at_once_and_restarts_are_bounded_by_max_restarts_plus_retries(a4: Any) -> None:
    spec = jobset_of(a4)
    job = spec["replicatedJobs"][0]["template"]["spec"]
    rules = job["podFailurePolicy"]["rules"]
    # Kubernetes validates that containerName names a container or init container of the template.
    inits = {c["name"] for c in job["template"]["spec"]["initContainers"]}
    assert {r["onExitCodes"]["containerName"] for r in rules} == {preflight.NODE_CONTAINER, preflight.FABRIC_CONTAINER} <= inits
    assert all(r["action"] == "FailJob" and r["onExitCodes"]["values"] == [facts.FAILED_EXIT_CODE] for r in rules)
    assert job["backoffLimit"] == 0
    assert spec["failurePolicy"]["maxRestarts"] == 0 + Preflight().retries  # the stack's maxRestarts is 0


def test_off_leaves_the_job_as_it_was() -> None:
    rendered = render("a4-llama3-70b", raw_config("a4-llama3-70b", trainstack_workload={"preflight": False}))
    spec = jobset_of(rendered)
    job = spec["replicatedJobs"][0]["template"]["spec"]
    assert "podFailurePolicy" not in job
    assert not [c for c in job["template"]["spec"]["initContainers"] if c["name"].startswith("preflight")]
    assert spec["failurePolicy"]["maxRestarts"] == 0
    assert not [r for r in of_type(rendered, "kubernetes:apps/v1:Deployment") if "warden" in r.name]
    assert not [r for r in of_type(rendered, "kubernetes:core/v1:ConfigMap") if r.name.endswith("-preflight")]


def test_a_single_node_job_gets_the_node_checks_only() -> None:
    rendered = render("a4-llama3-70b", raw_config("a4-llama3-70b", trainstack_workload={"nodes": 1, "memoryCheck": "off", "parallelism": None}))
    pod = jobset_of(rendered)["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["initContainers"] if c["name"].startswith("preflight")] == [preflight.NODE_CONTAINER]


def test_the_warden_may_read_the_jobs_pods_and_patch_nodes_and_nothing_else(a4: Any) -> None:
    (deployment,) = [r for r in of_type(a4, "kubernetes:apps/v1:Deployment") if r.name.endswith("preflight-warden")]
    pod = deployment.inputs["spec"]["template"]["spec"]
    name = one(a4, "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet").inputs["metadata"]["name"]
    assert pod["serviceAccountName"] == f"{name}-preflight-warden" and pod["automountServiceAccountToken"] is True
    (role,) = [r for r in of_type(a4, "kubernetes:rbac.authorization.k8s.io/v1:Role") if "warden" in r.name]
    (cluster_role,) = [r for r in of_type(a4, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole") if "warden" in r.name]
    assert role.inputs["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]
    assert cluster_role.inputs["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]
    command = pod["containers"][0]["command"]
    assert command[command.index("--selector") + 1] == f"jobset.sigs.k8s.io/jobset-name={name}"
    # The trainer's pods still carry no token: the job's identity gains nothing.
    trainer = jobset_of(a4)["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert trainer["automountServiceAccountToken"] is False


def tolerates(toleration: dict[str, Any], taint: dict[str, str]) -> bool:
    """Kubernetes' Toleration.ToleratesTaint (k8s.io/api core/v1 toleration.go), which Kueue 0.19.2's
    TAS node controller applies to the workload's pod sets (pkg/controller/tas/node_controller.go
    checkTaintTolerations): the effect matches or is empty, the key matches or is empty with Exists,
    Exists matches any value, Equal (the default) the same value."""
    if toleration.get("effect") and toleration["effect"] != taint["effect"]:
        return False
    if toleration.get("key") and toleration["key"] != taint["key"]:
        return False
    if toleration.get("operator") == "Exists":
        return True
    return bool(toleration.get("key")) and toleration.get("value", "") == taint.get("value", "")


@pytest.mark.parametrize("stack", ["a4-llama3-70b", "a3mega-gpt3-175b"])
def test_kueue_sees_the_wardens_taint_as_untolerated_so_it_replaces_the_node(stack: str) -> None:
    """Kueue 0.19.2 counts a node failed for a workload only for a NoSchedule or NoExecute taint its pods
    do not tolerate (hasSchedulingTaints, classifyTaints); tolerating it would leave the job on the node."""
    plan = json.loads((Path(__file__).parent / "golden" / f"{stack}.json").read_text())
    jobs = [r for r in plan["resources"] if r["type"] in ("kubernetes:jobset.x-k8s.io/v1alpha2:JobSet", "kubernetes:batch/v1:Job")]
    (job,) = jobs
    spec = job["inputs"]["spec"]
    template = spec["replicatedJobs"][0]["template"]["spec"]["template"] if "replicatedJobs" in spec else spec["template"]
    taint = {"key": facts.TAINT_KEY, "value": "nccl_all_gather_pair", "effect": "NoSchedule"}
    assert not any(tolerates(t, taint) for t in template["spec"]["tolerations"])
    assert tolerates(
        {"key": "cloud.google.com/impending-node-termination", "operator": "Exists"}, {**taint, "key": "cloud.google.com/impending-node-termination"}
    )


def test_validate_refuses_a_mark_above_the_line_rate_and_a_fabric_test_without_gpudirect() -> None:
    found = problems("a4-llama3-70b", preflight={"busBandwidth": 401})
    assert found == ["trainstack:workload.preflight.busBandwidth = 401.0: must not exceed a4-highgpu-8g's GPU NIC line rate, 400 GB/s"]
    assert problems("a4-llama3-70b", preflight={"busBandwidth": 400}) == []
    (wrong,) = problems("a2-gpt2-deepspeed", preflight={"fabric": True})
    assert wrong.startswith("trainstack:workload.preflight.fabric = True: the NCCL test runs over the pool's GPUDirect profile; a2-highgpu-8g has no GPUDirect")


def test_validate_refuses_a_preflight_longer_than_kueues_pods_ready_budget() -> None:
    """Recipe 000's 1m timeout and recoveryTimeout (counted from admission and from a restart) cannot
    hold a preflight of about five minutes."""
    found = problems("a3ultra-405b", preflight=True)
    assert [p.split(": must finish within ")[1].split(" (")[0] for p in found] == [
        "trainstack:kueue.waitForPodsReady.timeout",
        "trainstack:kueue.waitForPodsReady.recoveryTimeout",
    ]
    assert problems("a3ultra-405b", preflight={"enabled": False}) == []


def test_expected_seconds_add_up_from_the_dcgm_level_and_the_mark() -> None:
    mega = catalog.machine("a3-megagpu-8g")
    seconds, derivation = preflight.expected_seconds(Preflight(), mega, 32)
    ranks = 32 * 8
    transfer = sum(facts.SIZES_BYTES) / 150e9 * (facts.NCCL_ITERATIONS + facts.NCCL_WARMUP) * (ranks - 1) / ranks
    assert seconds == round(30 + 120 + 2 * 60 + transfer * (1 + 2))
    assert "DCGM level 2 120 s" in derivation and "at 150 GB/s" in derivation
    assert preflight.expected_seconds(Preflight(enabled=False), mega, 32) == (0, "preflight off")
    single, _ = preflight.expected_seconds(Preflight.model_validate({"dcgmLevel": 1}), mega, 1)
    assert single == 30 + 30


def test_the_probe_names_the_node_that_fails_with_a_healthy_partner() -> None:
    bad = {2}
    tested: list[tuple[int, int]] = []

    def passes(pair: tuple[int, int]) -> bool:
        tested.append(pair)
        return not bad & set(pair)

    assert preflight_probe.locate(5, passes) == [2]
    assert tested[:3] == [(0, 1), (2, 3), (4, 0)]  # disjoint pairs; an odd node pairs with the first
    assert preflight_probe.locate(4, lambda pair: False) == [0, 1, 2, 3]  # no healthy partner: every node is suspect


def test_the_fabric_run_reports_the_bad_node_from_real_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole-job run below the mark; pair runs pass unless they hold node 1: node 1 is named."""
    good = (SAMPLES / "nccl_all_gather_a4_pass.txt").read_text()
    slow = (SAMPLES / "nccl_all_gather_a3high_fail.txt").read_text()

    def mpirun(hosts: list[str], gpus: int, collective: str, args: Any) -> str:
        return slow if "h1" in hosts else good

    monkeypatch.setattr(preflight_probe, "_mpirun", mpirun)
    args = argparse.Namespace(collectives=["all_gather"], threshold=250.0, gpus=8)
    checks = preflight_probe.fabric_checks(["h0", "h1", "h2", "h3"], ["n0", "n1", "n2", "n3"], args)
    failed = [(c.node, c.check) for c in checks if c.verdict == "fail"]
    assert failed == [("n1", "nccl all_gather pair")]


def fake_tool(directory: Path, name: str, script: str) -> Path:
    path = directory / name
    path.write_text(f"#!{sys.executable}\n{script}")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_the_node_check_fails_on_a_missing_gpu_and_uncorrected_ecc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    smi = fake_tool(
        tmp_path,
        "nvidia-smi",
        "import sys\nif 'nvlink' in sys.argv: print('GPU 0: NVIDIA H100\\n\\t Link 0: 26.562 GB/s\\n\\t Link 1: <inactive>')\n"
        "else: print('0, 0, No\\n1, 4, No\\n2, 0, Yes')\n",
    )
    monkeypatch.setenv("PATH", str(tmp_path))  # no dcgmi here: the DCGM diagnostic is left out
    checks = preflight_probe.node_checks(8, str(smi), 2, "gke-node-7")
    failed = {c.check: c.measured for c in checks if c.verdict == "fail"}
    assert failed == {"gpu count": "3 GPUs", "gpu 1 ecc": "4 uncorrected", "gpu 2 row remap": "pending", "nvlink": "1 links inactive"}
    assert {c.node for c in checks} == {"gke-node-7"}


def test_a_failure_is_named_in_the_termination_message_and_the_warden_taints_that_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "termination-log"
    monkeypatch.setenv("TERMINATION_LOG", str(log))
    code = preflight_probe._fail("gke-node-7", [preflight_probe.Check("gpu 1 ecc", "fail", "4 uncorrected", "0", "gke-node-7")])
    assert code == facts.FAILED_EXIT_CODE
    assert log.read_text().startswith("node=gke-node-7 check=gpu_1_ecc")
    pods = {
        "items": [
            {
                "status": {
                    "initContainerStatuses": [
                        {"name": preflight.NODE_CONTAINER, "state": {"terminated": {"exitCode": facts.FAILED_EXIT_CODE, "message": log.read_text()}}},
                        {"name": "nccl-plugin-installer", "state": {"terminated": {"exitCode": 0}}},
                    ]
                }
            },
            {
                "status": {
                    "initContainerStatuses": [{"name": preflight.FABRIC_CONTAINER, "state": {"terminated": {"exitCode": 1, "message": "node=x check=y"}}}]
                }
            },
        ]
    }
    calls = tmp_path / "calls"
    kubectl = fake_tool(
        tmp_path,
        "kubectl",
        f"import sys\nopen({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\nif sys.argv[1] == 'get': print({json.dumps(json.dumps(pods))})\n",
    )
    argv = ["warden", "--namespace", "ns", "--selector", "jobset.sigs.k8s.io/jobset-name=job", "--taint", facts.TAINT_KEY, "--kubectl", str(kubectl), "--once"]
    assert preflight_probe.main(argv) == 0
    made = calls.read_text().splitlines()
    # Only the check that failed (exit FAILED_EXIT_CODE) taints; a broken container (exit 1) does not.
    assert made[1:] == [f"taint node gke-node-7 {facts.TAINT_KEY}=gpu_1_ecc:NoSchedule --overwrite"]


def test_the_probe_mounted_in_the_pods_is_this_module(a4: Any) -> None:
    (probe,) = [r for r in of_type(a4, "kubernetes:core/v1:ConfigMap") if r.name.endswith("-preflight")]
    assert probe.inputs["data"][preflight.PROBE_FILE] == Path(preflight_probe.__file__).read_text()
    assert os.path.basename(preflight_probe.__file__) == preflight.PROBE_FILE


def test_a_fault_only_at_scale_fails_the_job_but_taints_no_node(monkeypatch: pytest.MonkeyPatch) -> None:
    good = (SAMPLES / "nccl_all_gather_a4_pass.txt").read_text()
    slow = (SAMPLES / "nccl_all_gather_a3high_fail.txt").read_text()
    monkeypatch.setattr(preflight_probe, "_mpirun", lambda hosts, gpus, collective, args: slow if len(hosts) > 2 else good)
    args = argparse.Namespace(collectives=["all_gather"], threshold=250.0, gpus=8)
    checks = preflight_probe.fabric_checks(["h0", "h1", "h2", "h3"], ["n0", "n1", "n2", "n3"], args)
    assert {c.node for c in checks if c.verdict == "fail"} == {preflight_probe.ALL_NODES}
    message = "\n".join(f"node={c.node} check={c.check.replace(' ', '_')}" for c in checks if c.verdict == "fail")
    pods = {
        "items": [{"status": {"initContainerStatuses": [{"name": preflight.FABRIC_CONTAINER, "state": {"terminated": {"exitCode": 3, "message": message}}}]}}]
    }
    assert preflight_probe.failed_nodes(json.dumps(pods)) == []
