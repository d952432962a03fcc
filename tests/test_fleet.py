"""A fleet stack (Kueue MultiKueue, v0.19.2): the manager mirrors its workers, reaches them with a
credential kept secret, and a job on the fleet is checked against the workers that could run it
and carries what MultiKueue needs to dispatch it."""

from __future__ import annotations

import json
import re
from typing import Any

import pulumi
import pytest
import yaml

from helpers import merge, render_with
from test_upgrade import GOLDEN, snapshot, upgrade_problems
from trainstack.app.deploy.stack_file import FLEET_NAME
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan.cost import gpu_node_hour
from trainstack.app.plan.crdcheck import problems as crd_problems
from trainstack.app.plan.engine import run
from trainstack.app.plan.plan import Plan, render
from trainstack.app.review.diff import JOB as JOB_FINDING
from trainstack.app.review.diff import diff_plans
from trainstack.app.schemas.validate import validate_object
from trainstack.components.gke_cluster import kubeconfig as platform_kubeconfig
from trainstack.components.kueue import FRAMEWORKS, MULTIKUEUE_CONTROLLER
from trainstack.components.multikueue import MultiKueueWorkerAccess, MultiKueueWorkerAccessArgs, access_rules, cluster_of, token_kubeconfig
from trainstack.components.node_pools import gpu_pool_selector
from trainstack.core import catalog
from trainstack.core.errors import ConfigError
from trainstack.core.rules import duration_seconds
from trainstack.core.testing import SECRET
from trainstack.infra import contract
from trainstack.infra import fleet_stack as fleet

FLEET, JOB = "a3ultra-fleet", "a3mega-gpt3-175b-fleet-job"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
JOBSET_CONTROLLER = "jobset.sigs.k8s.io/jobset-controller"  # JobSet v0.12.0 api/jobset/v1alpha2 JobSetControllerName


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    """The fleet, its workers (by worker name) and the job on it."""
    raw = raw_stack_config(FLEET)
    found = {FLEET: render(FLEET, raw), JOB: render(JOB, raw_stack_config(JOB))}
    for worker in raw[fleet.KEY]["workers"]:
        name = worker["stack"].rsplit("/", 1)[-1]
        found[worker["name"]] = render(name, raw_stack_config(name))
    return found


def objects(plan: Plan, kind: str) -> list[dict[str, Any]]:
    return [o for o in plan.kubernetes_objects() if o.get("kind") == kind]


def by_name(plan: Plan, kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects(plan, kind)}


def workers_of_fleet() -> list[str]:
    return [w["name"] for w in raw_stack_config(FLEET)[fleet.KEY]["workers"]]


def queue_machine(plan: Plan, cluster_queue: str) -> set[str]:
    """The accelerators a ClusterQueue's flavors select."""
    flavors = by_name(plan, "ResourceFlavor")
    cq = by_name(plan, "ClusterQueue")[cluster_queue]
    return {flavors[f["name"]]["spec"]["nodeLabels"]["cloud.google.com/gke-accelerator"] for g in cq["spec"]["resourceGroups"] for f in g["flavors"]}


# --- the manager mirrors the workers -----------------------------------------------------------


def test_each_manager_queue_exists_on_exactly_the_workers_of_its_machine(plans: dict[str, Plan]) -> None:
    """Kueue's setup guide: a worker mirrors the manager's namespace and LocalQueue, or the copy
    of a job finds no queue. A worker without the queue's machine is not in its MultiKueueConfig."""
    manager = plans[FLEET]
    configs = by_name(manager, "MultiKueueConfig")
    checks = by_name(manager, "AdmissionCheck")
    assert objects(manager, "LocalQueue")
    for lq in objects(manager, "LocalQueue"):
        cq = by_name(manager, "ClusterQueue")[lq["spec"]["clusterQueue"]]
        (check,) = cq["spec"]["admissionChecksStrategy"]["admissionChecks"]
        dispatched_to = configs[checks[check["name"]]["spec"]["parameters"]["name"]]["spec"]["clusters"]
        where = (lq["metadata"]["namespace"], lq["metadata"]["name"])
        for worker in workers_of_fleet():
            queues = {(q["metadata"]["namespace"], q["metadata"]["name"]): q["spec"]["clusterQueue"] for q in objects(plans[worker], "LocalQueue")}
            if worker in dispatched_to:
                assert where in queues, (worker, where)
                assert queue_machine(plans[worker], queues[where]) == queue_machine(manager, cq["metadata"]["name"]), worker
            else:
                assert not any(queue_machine(plans[worker], q) & queue_machine(manager, cq["metadata"]["name"]) for q in queues.values()), worker
    assert configs["a3-mega-multikueue"]["spec"]["clusters"] == ["a3mega-central", "a3mega-east4"]  # in the stack file's order


def test_manager_queues_admit_through_a_multikueue_check_made_before_them(plans: dict[str, Plan]) -> None:
    manager = plans[FLEET]
    resources = {r["inputs"]["metadata"]["name"]: r for r in manager.resources if r["type"] == f"{KUEUE}AdmissionCheck"}
    queues = [r for r in manager.resources if r["type"] == f"{KUEUE}ClusterQueue"]
    assert queues
    for cq in queues:
        (check,) = cq["inputs"]["spec"]["admissionChecksStrategy"]["admissionChecks"]
        ac = resources[check["name"]]
        assert ac["inputs"]["spec"]["controllerName"] == MULTIKUEUE_CONTROLLER
        assert ac["urn"] in cq["dependencies"]  # deleted after it: Kueue keeps a check in use (resource-in-use finalizer)


def test_one_multikueue_cluster_per_worker_reading_its_secret_in_kueues_namespace(plans: dict[str, Plan]) -> None:
    manager = plans[FLEET]
    clusters = by_name(manager, "MultiKueueCluster")
    assert sorted(clusters) == sorted(workers_of_fleet())
    secrets = {(s["metadata"]["namespace"], s["metadata"]["name"]) for s in objects(manager, "Secret")}
    for cluster in clusters.values():
        source = cluster["spec"]["clusterSource"]["kubeConfig"]
        assert source["locationType"] == "Secret" and (catalog.KUEUE_CHART.namespace, source["location"]) in secrets


def test_manager_quota_is_the_workers_together_and_its_tas_follows_theirs(plans: dict[str, Plan]) -> None:
    """The manager's quota should equal the workers' total (Kueue's MultiKueue concept page);
    its flavor is topology-aware where every worker flavor of the machine is (TAS runs on the
    worker; Kueue delays it on the manager)."""
    manager = plans[FLEET]
    flavors = by_name(manager, "ResourceFlavor")

    def gpus_and_tas(plan: Plan, cluster_queue: str) -> tuple[int, list[bool]]:
        cq = by_name(plan, "ClusterQueue")[cluster_queue]
        own = by_name(plan, "ResourceFlavor")
        entries = [f for g in cq["spec"]["resourceGroups"] for f in g["flavors"]]
        gpus = sum(int(r["nominalQuota"]) for f in entries for r in f["resources"] if r["name"] == "nvidia.com/gpu")
        return gpus, ["topologyName" in own[f["name"]]["spec"] for f in entries]

    for lq in objects(manager, "LocalQueue"):
        name = lq["metadata"]["name"]
        total, tas = 0, list[bool]()
        for worker in workers_of_fleet():
            for q in objects(plans[worker], "LocalQueue"):
                if q["metadata"]["name"] == name:
                    gpus, flags = gpus_and_tas(plans[worker], q["spec"]["clusterQueue"])
                    total, tas = total + gpus, tas + flags
        gpus, (manager_tas,) = gpus_and_tas(manager, lq["spec"]["clusterQueue"])
        assert gpus == total and manager_tas == all(tas), name
    assert any("topologyName" in f["spec"] for f in flavors.values()) and not all("topologyName" in f["spec"] for f in flavors.values())


def test_manager_is_cpu_only_with_jobset_and_the_dispatcher_in_kueues_configuration(plans: dict[str, Plan]) -> None:
    manager = plans[FLEET]
    assert manager.cost.gpu_nodes == 0 and manager.cost.cpu_nodes > 0
    releases = {r["inputs"]["chart"].rsplit("/", 1)[-1]: r["inputs"] for r in manager.resources if r["type"] == "kubernetes:helm.sh/v3:Release"}
    assert {"jobset", "kueue"} <= set(releases)
    configuration = yaml.safe_load(releases["kueue"]["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert configuration["multiKueue"] == {
        "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
        "incrementalDispatcherConfig": {"stepSize": 1},
        "origin": "multikueue-a3ultra-fleet",
    }
    assert "jobset.x-k8s.io/jobset" in configuration["integrations"]["frameworks"]


def test_every_multikueue_object_passes_its_v0_19_2_crd(plans: dict[str, Plan]) -> None:
    manager = plans[FLEET]
    kinds = {"MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck"}
    rendered = [o for o in manager.kubernetes_objects() if o["kind"] in kinds]
    assert {o["kind"] for o in rendered} == kinds
    assert all(validate_object(o) == [] for o in rendered)
    # The CRDs are registered, so a wrong one is caught: an empty cluster list is under minItems.
    bad = merge(by_name(manager, "MultiKueueConfig")["a3-mega-multikueue"], {"spec": {"clusters": []}})
    assert any("clusters" in p for p in validate_object(bad))


# --- the credential ---------------------------------------------------------------------------


def test_no_credential_reaches_the_plan(plans: dict[str, Plan]) -> None:
    manager = plans[FLEET]
    for secret in objects(manager, "Secret"):
        if secret["metadata"]["namespace"] == catalog.KUEUE_CHART.namespace and secret.get("type") == "Opaque":
            assert secret["stringData"] == SECRET
    tokens = [s for s in objects(manager, "Secret") if s.get("type") == "kubernetes.io/service-account-token"]
    assert len(tokens) == len(workers_of_fleet()) and all("data" not in t and "stringData" not in t for t in tokens)
    assert all(manager.outputs[fleet.kubeconfig_output(w)] == SECRET for w in workers_of_fleet())
    text = manager.to_json()
    assert "certificate-authority-data" not in text and '"token"' not in text


def test_the_managers_kubeconfig_is_one_kueue_accepts_and_stays_secret() -> None:
    """Kueue v0.19.2 refuses a MultiKueueCluster kubeconfig with an exec plugin, an auth
    provider, basic auth, a token or CA file, or TLS off (multikueuecluster.go
    validateKubeconfig); a trainstack platform's own kubeconfig runs gke-gcloud-auth-plugin."""
    worker = platform_kubeconfig("gke_p_us-central1_w", "10.0.0.2", "Q0EK")
    assert "exec" in yaml.safe_load(worker)["users"][0]["user"]  # what the manager must not get
    made = yaml.safe_load(token_kubeconfig("w", *cluster_of(worker), "t0ken"))
    (user,) = made["users"]
    assert user["user"] == {"token": "t0ken"}
    (cluster,) = made["clusters"]
    assert cluster["cluster"] == {"server": "https://10.0.0.2", "certificate-authority-data": "Q0EK"}
    assert made["contexts"][0]["context"] == {"cluster": "w", "user": user["name"]} and made["current-context"] == "w"

    def body(ctx: Any) -> None:
        access = MultiKueueWorkerAccess("w", MultiKueueWorkerAccessArgs(worker="w", account="multikueue-f", worker_kubeconfig=worker))
        pulumi.export("made", access.kubeconfig)

    assert render_with(body).outputs["made"] == SECRET


def test_the_worker_account_may_do_only_what_multikueue_does_for_the_integrations_enabled(plans: dict[str, Plan]) -> None:
    (role,) = {json.dumps(r["rules"], sort_keys=True) for r in objects(plans[FLEET], "ClusterRole")}
    rules = json.loads(role)
    assert rules == access_rules(list(FRAMEWORKS))
    granted = {(g, r): set(rule["verbs"]) for rule in rules for g in rule["apiGroups"] for r in rule["resources"]}
    assert granted[("jobset.x-k8s.io", "jobsets")] >= {"create", "delete", "get", "watch"}
    assert {"update", "patch"} <= granted[("kueue.x-k8s.io", "workloads")]
    assert ("", "pods") not in granted and all("*" not in v for v in granted.values())


# --- a job on the fleet -----------------------------------------------------------------------


def test_a_jobset_queued_on_the_manager_carries_what_multikueue_needs(plans: dict[str, Plan]) -> None:
    manager, job = plans[FLEET], plans[JOB]
    (jobset,) = objects(job, "JobSet")
    queue = jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    assert (jobset["metadata"]["namespace"], queue) in {(q["metadata"]["namespace"], q["metadata"]["name"]) for q in objects(manager, "LocalQueue")}
    # Kueue's webhook sets spec.managedBy only if it is unset or JobSet's own (v0.19.2
    # pkg/controller/jobs/jobset/jobset_controller.go CanDefaultManagedBy).
    assert jobset["spec"].get("managedBy") in (None, JOBSET_CONTROLLER)
    pods = [rj["template"]["spec"]["template"]["spec"] for rj in jobset["spec"]["replicatedJobs"]]
    terms = contract.for_queue(contract.from_output(FLEET, manager.outputs[contract.OUTPUT]), queue)
    assert terms is not None and len({p["worker"] for p in terms.pools}) > 1
    for pod in pods:
        assert "affinity" not in pod or "nodeAffinity" not in pod["affinity"]
        for pool in terms.pools:  # every worker pool of the queue satisfies the selector
            assert pod["nodeSelector"].items() <= gpu_pool_selector(pool["name"], catalog.machine(pool["machineType"])).items(), pool


def test_a_jobs_files_and_policies_are_made_on_each_worker_that_could_run_it(plans: dict[str, Plan]) -> None:
    job = plans[JOB]
    (jobset,) = [r for r in job.resources if r["type"].endswith(":JobSet")]
    files = [r for r in job.resources if r["type"] in ("kubernetes:core/v1:ConfigMap", "kubernetes:networking.k8s.io/v1:NetworkPolicy")]
    providers = {r["provider"].split("::")[-1].split("::")[0] for r in files}
    assert providers == {"worker-a3mega-central", "worker-a3mega-east4"}  # the A3 Mega workers, never the A3 Ultra one
    assert all(r["provider"] != jobset["provider"] for r in files)


def test_plan_lists_the_worker_pools_that_could_take_the_job_with_their_cost(plans: dict[str, Plan]) -> None:
    job, raw = plans[JOB], raw_stack_config(JOB)
    nodes = raw["trainstack:workload"]["nodes"]
    found = job.summary()["fleet"]
    terms = contract.from_output(FLEET, plans[FLEET].outputs[contract.OUTPUT])
    queue = raw["trainstack:workload"]["queue"]
    expected = [p for p in terms.pools if p["queue"] == queue and int(p["nodes"]) >= nodes]
    assert [(c["worker"], c["pool"]) for c in found] == [(p["worker"], p["name"]) for p in expected]
    assert len(expected) < len([p for p in terms.pools if p["queue"] == queue])  # a pool too small is left out
    for c in found:
        price, _, _ = gpu_node_hour(catalog.machine(c["machineType"]), c["capacity"])
        assert c["usdPerHour"] == round(nodes * price, 2)
    assert {c["capacity"] for c in found} >= {"reservation", "queued", "spot"}


def job_raw(**workload: Any) -> dict[str, Any]:
    return merge(raw_stack_config(JOB), {"trainstack:workload": workload})


def test_a_job_no_worker_can_hold_is_refused_against_the_largest() -> None:
    with pytest.raises(ConfigError, match=r"trainstack:workload.nodes = 33: exceeds the GPU pool's maximum of 32 nodes"):
        run(JOB, job_raw(nodes=33, parallelism={"tensor": 4, "pipeline": 11, "virtualPipeline": None}))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"resiliency": {"enabled": True}}, r"trainstack:workload.resiliency.enabled = True: .*fleet: the supervisor would run on the manager"),
        ({"controller": "job"}, r"trainstack:workload.controller = 'job': .*a JobSet makes its own on the worker"),
        ({"ownIdentity": True}, r"trainstack:workload.ownIdentity = True: .*runs as each worker's"),
    ],
)
def test_what_a_fleet_cannot_dispatch_is_refused(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run(JOB, job_raw(**changes))


# --- the workers must mirror one another, and each is one entry ---------------------------------


def worker_outputs() -> dict[str, Any]:
    raw = raw_stack_config(FLEET)
    return {
        w["stack"]: run(w["stack"].rsplit("/", 1)[-1], raw_stack_config(w["stack"].rsplit("/", 1)[-1])).outputs[contract.OUTPUT]
        for w in raw[fleet.KEY]["workers"]
    }


def test_workers_that_do_not_mirror_each_other_are_refused_naming_the_worker() -> None:
    outputs = worker_outputs()
    config = fleet.load(FLEET, raw_stack_config(FLEET))
    east = config.fleet.workers[2].stack
    renamed = {**outputs[east], "pools": [{**p, "queue": "mega"} for p in outputs[east]["pools"]]}
    found = list(fleet.problems(fleet.workers_of(config, {**outputs, east: renamed})))
    assert found and all(key == (fleet.KEY, "workers", 2, "stack") for key, _, _ in found)
    assert "a3-megagpu-8g jobs in 'mega', a3mega-central in 'a3-mega'" in found[0][2]
    moved = {**outputs[east], "namespace": "research"}
    (problem,) = fleet.problems(fleet.workers_of(config, {**outputs, east: moved}))
    assert "runs jobs in namespace 'research'" in problem[2]
    assert list(fleet.problems(fleet.workers_of(config, outputs))) == []


def test_a_worker_whose_stack_is_not_deployed_is_named() -> None:
    config = fleet.load(FLEET, raw_stack_config(FLEET))
    with pytest.raises(ConfigError, match=r"trainstack:fleet.workers\[0\].stack = 'organization/trainstack/a3ultra-platform': .*output 'platform' is missing"):
        fleet.workers_of(config, {})


def test_a_worker_named_twice_is_refused() -> None:
    raw = raw_stack_config(FLEET)
    workers = raw[fleet.KEY]["workers"]
    with pytest.raises(ConfigError, match=r"trainstack:fleet.workers\[1\].name = 'a3ultra': names a worker twice"):
        fleet.load(FLEET, merge(raw, {fleet.KEY: {"workers": [workers[0], {**workers[1], "name": "a3ultra"}]}}))


def test_a_fleet_makes_its_managers_own_network() -> None:
    existing = {"network": "n", "subnetwork": "s", "podsRangeName": "p", "servicesRangeName": "v"}
    with pytest.raises(ConfigError, match=r"trainstack:network.existing = 'n': a fleet makes its manager's own VPC"):
        fleet.load(FLEET, merge(raw_stack_config(FLEET), {"trainstack:network": {"existing": existing}}))


def test_the_manager_does_not_block_admission_the_workers_do(plans: dict[str, Plan]) -> None:
    """On the manager admission is dispatch; blocking it would send one job at a time to the fleet."""

    def wait(plan: Plan) -> dict[str, Any]:
        (release,) = [r["inputs"] for r in plan.resources if r["type"] == "kubernetes:helm.sh/v3:Release" and r["inputs"]["chart"].endswith("/kueue")]
        return yaml.safe_load(release["values"]["managerConfig"]["controllerManagerConfigYaml"])["waitForPodsReady"]

    assert wait(plans[FLEET])["blockAdmission"] is False
    assert all(wait(plans[w])["blockAdmission"] is True for w in workers_of_fleet())


def identities(plan: Plan) -> dict[str, tuple[str, str, str, str]]:
    """URN -> (provider, kind, namespace, name) of every Kubernetes object the plan applies."""
    return {
        r["urn"]: (r.get("provider") or "", r["inputs"].get("kind", r["type"]), r["inputs"]["metadata"].get("namespace", ""), r["inputs"]["metadata"]["name"])
        for r in plan.resources
        if r["custom"] and isinstance(r["inputs"].get("metadata"), dict)
    }


@pytest.mark.parametrize("order", [[1, 2], [0, 2], [0, 1], [2, 0, 1], [1, 0, 2]], ids=lambda o: "-".join(map(str, o)))
def test_adding_removing_or_reordering_a_worker_touches_only_that_worker(plans: dict[str, Plan], order: list[int]) -> None:
    """Every object is keyed by its own name, never its position: on any edit of the worker list,
    each URN both plans have names the same object, no object changes URN (pulumi-kubernetes >= 4.29
    creates refuse an existing object; before, the old URN's delete removed the live one), and what
    goes is the removed worker's alone. Read backwards, the same diff adds a worker."""
    raw = raw_stack_config(FLEET)
    workers = raw[fleet.KEY]["workers"]
    edited = render(FLEET, merge(raw, {fleet.KEY: {"workers": [workers[i] for i in order]}}))
    before, after = identities(plans[FLEET]), identities(edited)
    for urn in set(before) & set(after):
        assert before[urn] == after[urn], urn
    owner = {identity: urn for urn, identity in before.items()}
    assert all(owner.get(identity, urn) == urn for urn, identity in after.items())
    assert set(after) <= set(before)
    removed = {w["name"] for i, w in enumerate(workers) if i not in order}
    gone = set(before) - set(after)
    assert all(any(name in urn for name in removed) for urn in gone), gone
    assert bool(gone) == bool(removed)
    # The diff says what the removal does to the worker's jobs, and nothing of the others'.
    findings = diff_plans(FLEET, plans[FLEET].to_dict(), edited.to_dict()).findings
    told = {f.text.split(" ", 2)[1] for f in findings if f.cls == JOB_FINDING and "leaves the fleet" in f.text}
    assert told == removed, findings
    kept = [w["name"] for w in workers if w["name"] not in removed]
    was = {r["urn"]: r for r in plans[FLEET].resources}
    for resource in edited.resources:
        if any(f"worker-{name}" in resource["urn"] for name in kept):
            assert resource["inputs"] == was[resource["urn"]]["inputs"], resource["urn"]


def test_the_fleets_custom_resources_pass_the_checks_validate_runs() -> None:
    rendered = run(FLEET, raw_stack_config(FLEET))
    assert crd_problems(rendered.registrations) == []


# --- the manager waits as long as its workers, tells its copies apart and reaches its workers ---


def kueue_configuration(plan: Plan) -> dict[str, Any]:
    (release,) = [r["inputs"] for r in plan.resources if r["type"] == "kubernetes:helm.sh/v3:Release" and r["inputs"]["chart"].endswith("/kueue")]
    return yaml.safe_load(release["values"]["managerConfig"]["controllerManagerConfigYaml"])


def fleet_references() -> dict[str, dict[str, Any]]:
    """Each worker stack's outputs, as the fleet's StackReferences read them."""
    return {
        w["stack"]: run(w["stack"].rsplit("/", 1)[-1], raw_stack_config(w["stack"].rsplit("/", 1)[-1])).outputs
        for w in raw_stack_config(FLEET)[fleet.KEY]["workers"]
    }


def test_the_manager_waits_for_a_jobs_pods_at_least_as_long_as_any_worker(plans: dict[str, Plan]) -> None:
    """The manager's waitForPodsReady timer runs from the worker's admission and, at its end, evicts
    the job and withdraws the worker's copy (Kueue v0.19.2 workload_controller.go, multikueue
    workload.go): a manager shorter than a worker kills every job still scaling up there."""
    seconds = {w: duration_seconds(kueue_configuration(plans[w])["waitForPodsReady"]["timeout"]) for w in workers_of_fleet()}
    manager = duration_seconds(kueue_configuration(plans[FLEET])["waitForPodsReady"]["timeout"])
    assert manager == max(seconds.values()) and min(seconds.values()) < manager  # the longest, not the first or a default
    assert plans[FLEET].outputs[contract.OUTPUT]["podsReadyTimeout"] == kueue_configuration(plans[FLEET])["waitForPodsReady"]["timeout"]


def test_the_managers_budget_is_settable_and_never_shorter_than_a_workers() -> None:
    raw = raw_stack_config(FLEET)
    references = fleet_references()
    longer = run(FLEET, merge(raw, {fleet.KEY: {"podsReadyTimeout": "45m"}}), references)
    (release,) = [r.inputs for r in longer.registrations if r.type == "kubernetes:helm.sh/v3:Release" and r.inputs["chart"].endswith("/kueue")]
    assert yaml.safe_load(release["values"]["managerConfig"]["controllerManagerConfigYaml"])["waitForPodsReady"]["timeout"] == "45m"
    with pytest.raises(
        ConfigError, match=r"trainstack:fleet.podsReadyTimeout = '10m': is shorter than a3mega-central's 30m, a3mega-east4's 30m .*set at least 30m"
    ):
        run(FLEET, merge(raw, {fleet.KEY: {"podsReadyTimeout": "10m"}}), references)


def test_a_worker_contract_without_a_budget_gets_the_scale_up_budget() -> None:
    config = fleet.load(FLEET, raw_stack_config(FLEET))
    outputs = {name: {k: v for k, v in out.items() if k != "podsReadyTimeout"} for name, out in worker_outputs().items()}
    assert fleet.pods_ready_timeout(config, fleet.workers_of(config, outputs)) == f"{catalog.SCALE_UP_BUDGET_SECONDS // 60}m"


def test_each_fleet_marks_its_copies_with_an_origin_of_its_own(plans: dict[str, Plan]) -> None:
    """A manager's garbage collector deletes every copy of its origin on a worker that has no local
    counterpart (Kueue v0.19.2 multikueuecluster.go runGC): fleets sharing a worker need two origins."""
    raw = raw_stack_config(FLEET)
    origin = kueue_configuration(plans[FLEET])["multiKueue"]["origin"]
    # The workers admit the second fleet too (trainstack:cluster.admitFleets), as a shared worker must.
    shared = {
        name: {
            **out,
            contract.OUTPUT: {**out[contract.OUTPUT], "admittedFleets": [*out[contract.OUTPUT]["admittedFleets"], "organization/trainstack/another-fleet"]},
        }
        for name, out in fleet_references().items()
    }
    other = run("another-fleet", raw, shared)
    (release,) = [r.inputs for r in other.registrations if r.type == "kubernetes:helm.sh/v3:Release" and r.inputs["chart"].endswith("/kueue")]
    assert yaml.safe_load(release["values"]["managerConfig"]["controllerManagerConfigYaml"])["multiKueue"]["origin"] not in (origin, "multikueue")
    assert re.fullmatch(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", origin) and len(origin) <= 63  # content.IsLabelValue
    with pytest.raises(ConfigError, match=r"trainstack:fleet.origin = 'Not A Label': must be a DNS-1123 label"):
        fleet.load(FLEET, merge(raw, {fleet.KEY: {"origin": "Not A Label"}}))


def test_a_worker_the_manager_cannot_reach_is_refused() -> None:
    config = fleet.load(FLEET, raw_stack_config(FLEET))
    outputs = worker_outputs()
    east = config.fleet.workers[2].stack
    (problem,) = fleet.reach_problems(config, fleet.workers_of(config, {**outputs, east: {**outputs[east], "privateEndpoint": True}}), FLEET)
    assert problem[0] == (fleet.KEY, "workers", 2, "stack") and "has no public endpoint" in problem[2]
    assert list(fleet.reach_problems(config, fleet.workers_of(config, outputs), FLEET)) == []
    with pytest.raises(ConfigError, match=r"trainstack:cluster.privateNodes = False: a fleet's manager reaches its workers from its Cloud NAT addresses"):
        fleet.load(FLEET, merge(raw_stack_config(FLEET), {"trainstack:cluster": {"privateNodes": False}}))


def test_a_fleet_made_before_queues_were_keyed_by_name_keeps_every_queue() -> None:
    """The live state of an earlier release, whose first queue's objects were unsuffixed
    (`kueue-cluster-queue`, ...): each is taken over by its queue's keyed resource through its
    alias, as the engine matches them (app/plan/aliases.py), and nothing is deleted or replaced."""
    resources = json.loads((GOLDEN / f"{FLEET}.json").read_text())["resources"]
    first = fleet.queues(fleet.workers_of(fleet.load(FLEET, raw_stack_config(FLEET)), worker_outputs()))[0].name
    keyed = {f"{FLEET_NAME}-kueue-{role}-{first}": f"{FLEET_NAME}-kueue-{role}" for role in ("cluster-queue", "local-queue", "multikueue-check")}
    assert keyed.keys() <= {r["name"] for r in resources}
    earlier = snapshot({"resources": [{**r, "urn": r["urn"].rsplit("::", 1)[0] + "::" + keyed[r["name"]]} if r["name"] in keyed else r for r in resources]})
    assert set(earlier) != {r["urn"] for r in resources}
    assert upgrade_problems(earlier, resources) == []
    unaliased = [{**r, "options": {**r["options"], "aliases": []}} if r["name"] in keyed else r for r in resources]
    assert len([p for p in upgrade_problems(earlier, unaliased) if p.startswith("deleted:")]) == len(keyed)
