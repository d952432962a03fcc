"""Many recipes on one cluster: platform-only stacks, and workload stacks on a trainstack
platform (StackReference) or on an existing GKE cluster."""

from __future__ import annotations

from typing import Any

import grpc
import pulumi
import pytest

from helpers import merge
from trainstack.app.deploy import program, validation
from trainstack.app.deploy.stacks import project_root, raw_stack_config
from trainstack.app.plan import engine
from trainstack.app.plan.plan import Plan, render
from trainstack.core import testing
from trainstack.core.errors import ConfigError
from trainstack.infra import contract, remote

JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
PLATFORM_TYPES = ("gcp:compute/network:Network", "gcp:compute/subnetwork:Subnetwork", "gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool")
REF = "organization/trainstack/a3ultra-platform"


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    names = ("a3ultra-405b", "a3ultra-platform", "a3ultra-405b-job", "toolkit-a3mega-gpt3-175b")
    return {name: render(name, raw_stack_config(name)) for name in names}


def of_type(plan: Plan, type_token: str) -> list[dict]:
    return [r for r in plan.resources if r["type"] == type_token]


def test_platform_only_stack_builds_the_platform_and_exports_the_contract(plans: dict[str, Plan]) -> None:
    plan = plans["a3ultra-platform"]
    assert not of_type(plan, JOBSET)
    assert len(of_type(plan, "gcp:container/cluster:Cluster")) == 1
    terms = plan.outputs[contract.OUTPUT]
    assert terms["version"] == contract.CONTRACT_VERSION
    assert terms["gpuMachineType"] == "a3-ultragpu-8g" and terms["gpuNodes"] == 54 and terms["zone"] == "us-central1-b"
    assert terms["localQueue"] == "a3-ultra" and terms["storageClaim"] == "shared-storage"
    assert terms["networkNames"] == ["gvnic-1", *(f"rdma-{i}" for i in range(8))]
    assert terms["bucket"] == "my-training-project-a3ultra-platform"
    assert plan.outputs[contract.KUBECONFIG_OUTPUT] == "[secret]"


@pytest.mark.parametrize("stack", ["a3ultra-405b-job", "toolkit-a3mega-gpt3-175b"])
def test_workload_stacks_create_no_network_cluster_or_pool(plans: dict[str, Plan], stack: str) -> None:
    plan = plans[stack]
    assert not [r["urn"] for r in plan.resources if r["type"] in PLATFORM_TYPES]
    assert not [r for r in plan.resources if r["type"].startswith("kubernetes:kueue.x-k8s.io")]
    assert len(of_type(plan, "pulumi:providers:kubernetes")) == 1


def test_a_workload_stacks_plan_counts_its_jobs_gpus_and_cost_and_gives_no_platform_verdict(plans: dict[str, Plan]) -> None:
    """The job stack makes no pool, yet its job holds 54 of the platform's A3 Ultra nodes while it
    runs: the plan says so, at the same node-hour price as the whole stack a3ultra-405b's pool, and
    its critical path is not judged against a network, cluster and pool it does not make."""
    job, whole = plans["a3ultra-405b-job"], plans["a3ultra-405b"]
    assert job.cost.gpus == 0  # no pool of its own
    assert job.job is not None and job.job == {
        "nodes": 54,
        "gpus": 432,
        "machineType": "a3-ultragpu-8g",
        "capacity": "reservation",
        "usdPerHour": job.job["usdPerHour"],
    }
    (pool,) = [p for p in whole.cost.pools if p.gpus_per_node]
    assert pool.hourly_usd is not None and job.job["usdPerHour"] == round(54 * pool.hourly_usd, 2)
    assert job.summary()["job"]["gpus"] == 432
    assert job.critical_path.platform is False and job.critical_path.verdict().startswith("No verdict: the stack makes no network")
    assert "ratio" not in job.critical_path.to_table() and "off the essential chain" not in job.critical_path.to_table()
    assert whole.job is None and whole.critical_path.platform is True


def test_workload_stack_provider_comes_from_the_platform_outputs(plans: dict[str, Plan]) -> None:
    plan = plans["a3ultra-405b-job"]
    (reference,) = of_type(plan, "pulumi:pulumi:StackReference")
    assert reference["name"] == REF
    (provider,) = of_type(plan, "pulumi:providers:kubernetes")
    assert provider["propertyDependencies"]["kubeconfig"] == [reference["urn"]]
    assert provider["inputs"]["kubeconfig"] == "[secret]"
    assert provider["inputs"]["deleteUnreachable"] == "false"
    kubernetes = [r for r in plan.resources if r["type"].startswith("kubernetes:") and r["custom"]]
    assert kubernetes and all(r["provider"] == provider["urn"] for r in kubernetes)


def test_existing_cluster_is_looked_up_not_created(plans: dict[str, Plan]) -> None:
    plan = plans["toolkit-a3mega-gpt3-175b"]
    (provider,) = of_type(plan, "pulumi:providers:kubernetes")
    # The cluster path plus the fingerprint of the CA the lookup found: the provider follows the
    # cluster instance, not only its name.
    path, fingerprint = provider["inputs"]["clusterIdentifier"].split("#")
    assert path == "projects/my-training-project/locations/us-central1/clusters/a3mega-toolkit"
    assert len(fingerprint) == 16 and fingerprint != "unknown"
    assert provider["inputs"]["kubeconfig"] == "[secret]"
    (job,) = of_type(plan, "kubernetes:batch/v1:Job")
    pod = job["inputs"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"]["cloud.google.com/gke-nodepool"] == "a3-megagpu-pool"
    assert job["inputs"]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "a3-mega"
    claims = [v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"] if "persistentVolumeClaim" in v]
    assert claims == ["training-bucket"]


def test_job_on_the_platform_equals_the_job_of_the_whole_stack(plans: dict[str, Plan]) -> None:
    (whole,) = of_type(plans["a3ultra-405b"], JOBSET)
    (on_platform,) = of_type(plans["a3ultra-405b-job"], JOBSET)
    assert on_platform["inputs"] == whole["inputs"]


def test_workload_that_does_not_fit_the_platform_pool_is_rejected_naming_the_platform() -> None:
    raw = merge(raw_stack_config("a3ultra-405b-job"), {"trainstack:workload": {"nodes": 72}})
    terms = render("a3ultra-platform", raw_stack_config("a3ultra-platform")).outputs[contract.OUTPUT]
    with pytest.raises(ConfigError) as info:
        validate_stack("a3ultra-405b-job", raw, terms)
    assert info.value.problems == [f"trainstack:workload.nodes = 72: exceeds the GPU pool's maximum of 54 nodes (platform stack {REF})"]


def test_workload_that_does_not_fit_an_existing_cluster_is_rejected() -> None:
    raw = merge(raw_stack_config("toolkit-a3mega-gpt3-175b"), {"trainstack:workload": {"nodes": 40}})
    with pytest.raises(ConfigError) as info:
        validate_stack("toolkit", raw)
    # Named by the keys the user wrote: the workload's, and the existing cluster's description.
    assert info.value.problems[0] == (
        "trainstack:workload.nodes = 40: exceeds the GPU pool's maximum of 32 nodes (trainstack:platform.existingCluster.nodeCount)"
    )


def test_missing_or_old_contract_is_reported_naming_stack_and_output() -> None:
    raw = raw_stack_config("a3ultra-405b-job")
    with pytest.raises(ConfigError, match=rf"platform stack '{REF}': output 'platform' is missing"):
        validate_stack("job", raw, None)
    with pytest.raises(ConfigError, match=rf"platform stack '{REF}': output 'platform' has contract version 0, older than 1"):
        validate_stack("job", raw, {"version": 0})
    terms = render("a3ultra-platform", raw_stack_config("a3ultra-platform")).outputs[contract.OUTPUT]
    partial = {k: v for k, v in terms.items() if k not in ("localQueue", "storageClaim")}
    with pytest.raises(ConfigError, match=r"output 'platform' lacks localQueue, storageClaim"):
        validate_stack("job", raw, partial)
    with pytest.raises(ConfigError, match=r"output 'platform' names storage kind 'parallelstore', not one of gcs, filestore, nfs, lustre"):
        validate_stack("job", raw, {**terms, "storageKind": "parallelstore"})


def test_platform_reference_needs_exactly_one_kind_and_no_platform_sections() -> None:
    raw = merge(
        raw_stack_config("a3ultra-405b-job"),
        {"trainstack:platform": {"existingCluster": raw_stack_config("toolkit-a3mega-gpt3-175b")["trainstack:platform"]["existingCluster"]}},
    )
    with pytest.raises(ConfigError, match=r"trainstack:platform.stack = .*set exactly one of stack"):
        validate_stack("job", raw, None)
    with_pool = merge(raw_stack_config("a3ultra-405b-job"), {"trainstack:gpuPool": {"machineType": "a3-ultragpu-8g", "nodeCount": 2}})
    with pytest.raises(ConfigError, match=r"trainstack:gpuPool: unknown key"):
        validate_stack("job", with_pool, None)


def test_workload_namespace_must_be_the_platforms() -> None:
    raw = merge(raw_stack_config("toolkit-a3mega-gpt3-175b"), {"trainstack:workload": {"namespace": "research"}})
    with pytest.raises(ConfigError, match=r"trainstack:workload.namespace = 'research': the platform's storage and service account are in 'default'"):
        validate_stack("toolkit", raw)


def test_offline_plan_names_a_platform_it_cannot_render() -> None:
    raw = merge(raw_stack_config("a3ultra-405b-job"), {"trainstack:platform": {"stack": "org/proj/elsewhere"}})
    with pytest.raises(ConfigError, match=r"no stacks/Pulumi.elsewhere.yaml here to render that platform offline"):
        render("job", raw)


def test_existing_cluster_can_have_kueue_and_jobset_installed_by_trainstack() -> None:
    changes = {"trainstack:platform": {"existingCluster": {"installKueue": True, "installJobSet": True}}}
    plan = render("toolkit", merge(raw_stack_config("toolkit-a3mega-gpt3-175b"), changes))
    releases = {r["inputs"]["chart"].rsplit("/", 1)[1]: r for r in of_type(plan, "kubernetes:helm.sh/v3:Release")}
    assert set(releases) == {"kueue", "jobset"}
    for release in releases.values():
        assert "system" in str(release["inputs"]["values"])  # controllers pinned to the named CPU pool
    queues = [r for r in plan.resources if r["type"].startswith("kubernetes:kueue.x-k8s.io/")]
    assert {r["type"].rsplit(":", 1)[1] for r in queues} >= {"ClusterQueue", "LocalQueue", "ResourceFlavor"}
    kueue_release = releases["kueue"]["urn"]
    assert all(kueue_release in r["dependencies"] for r in queues)
    (job,) = of_type(plan, "kubernetes:batch/v1:Job")
    assert releases["jobset"]["urn"] in job["dependencies"]
    assert not [r for r in plan.resources if r["type"] in PLATFORM_TYPES]


def validate_stack(stack: str, raw: dict, platform_output: object = None):
    return validation.validate(stack, raw, project_root(), platform_output)


def test_a_platform_stack_the_engine_cannot_read_is_one_clean_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The platform stack is read at once through the engine's readStackOutputs function (public
    `pulumi.runtime.invoke`); when the engine refuses the read (no such stack, no access), one error
    names the stack and the engine's reason, a RunError with no traceback, before anything registers."""
    call = testing.FakeGcp.call

    class Refused(grpc.RpcError):
        """The engine's answer to an invoke whose function failed: a gRPC error with its details."""

        def code(self) -> grpc.StatusCode:
            return grpc.StatusCode.UNKNOWN

        def details(self) -> str:
            return "invocation of pulumi:pulumi:readStackOutputs returned an error: stack 'organization/trainstack/a3ultra-platform' not found"

    def refusing(self: testing.FakeGcp, args: Any) -> Any:
        if args.token == remote.READ_STACK_OUTPUTS:
            raise Refused()
        return call(self, args)

    monkeypatch.setattr(testing.FakeGcp, "call", refusing)
    ctx = engine.load_stack("a3ultra-405b-job")
    with pytest.raises(pulumi.RunError) as info:
        engine.execute(ctx, raw_stack_config("a3ultra-405b-job"), program.main, references={})
    message = str(info.value)
    assert "trainstack:platform.stack = 'organization/trainstack/a3ultra-platform': cannot read that stack (" in message
    assert "not found" in message and "Traceback" not in message


def test_a_platform_stack_without_its_contract_is_one_clean_error() -> None:
    """Under `pulumi up`, a platform stack that was never deployed (or is not trainstack's) has no
    contract output: one error naming the stack, a RunError (no traceback), before anything else
    registers. (A stack the engine cannot read at all is reported the same way, by
    infra.remote.read_platform_stack.)"""
    raw = raw_stack_config("a3ultra-405b-job")
    ctx = engine.load_stack("a3ultra-405b-job")
    with pytest.raises(pulumi.RunError) as info:
        engine.execute(ctx, raw, program.main, references={})
    message = str(info.value)
    assert "platform stack 'organization/trainstack/a3ultra-platform': output 'platform' is missing" in message
    assert "Traceback" not in message
