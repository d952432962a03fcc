"""The modelled time to first step: every job's plan lists the phases after the deploy, with and
without image streaming and preloading; the cuts are stack choices with their rules, they render on
the GPU pools, and `diff` shows what a change does to the model (a new disk image replaces the pools)."""

from __future__ import annotations

import pytest

from helpers import merge, raw_config
from trainstack.app.deploy.stacks import project_root, raw_stack_config, stack_names
from trainstack.app.plan import first_step
from trainstack.app.plan.critical_path import critical_path
from trainstack.app.plan.engine import run
from trainstack.app.plan.plan import Plan, render
from trainstack.app.review import diff
from trainstack.app.review.diff import diff_plans
from trainstack.app.review.semantics import REPLACE
from trainstack.core import catalog, models
from trainstack.core.errors import ConfigError
from trainstack.infra.stack import StackConfig
from trainstack.workloads import preflight

DISK_IMAGE = "projects/my-training-project/global/images/nemo2412-layers"
CUTS = {"trainstack:image": {"streaming": True, "preload": {"diskImage": DISK_IMAGE}}, "trainstack:cluster": {"versionPrefix": "1.33."}}
PHASES = ["nodes", "drivers", "imagePull", "mounts", "preflight", "restore", "framework"]


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    return {name: render(name, raw_stack_config(name)) for name in ("a3ultra-405b", "a3ultra-405b-job", "a2-gpt2-deepspeed", "a3ultra-platform")}


def model(plan: Plan) -> first_step.FirstStepModel:
    assert plan.first_step is not None
    return plan.first_step


def test_a3ultra_405b_with_and_without_the_cuts(plans: dict[str, Plan]) -> None:
    m = model(plans["a3ultra-405b"])
    none, streaming, both, _ = m.scenarios
    pull = 29e9 / catalog.COLD_PULL_BYTES_PER_S
    assert none.phases["imagePull"] == pytest.approx(pull) and m.size_source and "Speech#11824" in m.size_source
    assert streaming.phases["imagePull"] == pytest.approx(pull * catalog.STREAMED_FRACTION)
    assert both.phases["imagePull"] == 0
    assert {**m.configured.phases, "restore": none.phases["restore"]} == none.phases, "the shipped stack takes no image cut"
    assert m.configured.phases["restore"] == m.with_all.phases["restore"], "its bucket's file cache downloads in parallel"
    path = critical_path(plans["a3ultra-405b"].resources)
    assert m.deploy_seconds == path.jobset_ready and path.jobset_ready is not None and path.jobset_ready < path.total_seconds
    # From `up`, the cluster and the GPU pool dominate and the cuts leave them: not halved, and the
    # closing note says why; on a warm platform the cuts do halve it.
    assert both.seconds > none.seconds / 2 and "Not halved from `up`" in m.verdict() and "secondary boot disks" in m.verdict()
    assert both.warm_seconds <= none.warm_seconds / 2
    assert m.deploy_seconds > both.seconds / 2, "more than half of the cut time is the deploy the cuts do not touch"


def test_a_job_on_a_warm_platform_is_at_least_halved_by_the_cuts(plans: dict[str, Plan]) -> None:
    m = model(plans["a3ultra-405b-job"])
    none, both = m.without, m.with_all
    assert none.phases["nodes"] == none.phases["drivers"] == 0
    assert both.seconds <= none.seconds / 2 and "Not halved" not in m.verdict()


def test_a_pool_created_empty_waits_for_its_nodes_and_drivers(plans: dict[str, Plan]) -> None:
    m = model(plans["a2-gpt2-deepspeed"])
    assert m.without.phases["nodes"] == 900 - 90 and m.without.phases["drivers"] == first_step.DRIVERS_SECONDS
    assert m.without.phases["imagePull"] is None and m.size_source is None and "no pinned size" in m.verdict()


def test_every_job_lists_the_phases_and_platforms_none() -> None:
    for name in stack_names():
        rendered = run(name, raw_stack_config(name))
        plan_model = first_step.model([], critical_path([]), rendered.context, 0.0)
        if rendered.context.workload is None:
            assert plan_model is None, name
        else:
            assert plan_model is not None and list(plan_model.without.phases) == PHASES, name


def test_the_preflight_hook_adds_the_jobs_preflight(plans: dict[str, Plan]) -> None:
    rendered = run("a3ultra-405b", raw_stack_config("a3ultra-405b"))
    resources = plans["a3ultra-405b"].resources
    base = first_step.model(resources, critical_path(resources), rendered.context, 0.0)
    checked = first_step.model(resources, critical_path(resources), rendered.context, 240.0)
    assert base is not None and checked is not None
    assert [s.seconds - b.seconds for s, b in zip(checked.scenarios, base.scenarios, strict=True)] == pytest.approx([240.0] * 4)
    assert plans["a3ultra-405b"].preflight == {"llama31-405b": None}  # off (the recipe's 1m pods-ready budget)
    assert model(plans["a3ultra-405b"]).configured.phases["preflight"] == 0
    on = run("a3mega-gpt3-175b", raw_stack_config("a3mega-gpt3-175b")).context
    assert on.workload is not None and on.workload.preflight.enabled
    expected = preflight.expected_seconds(on.workload.preflight, on.machine, on.workload.nodes)[0]
    planned = render("a3mega-gpt3-175b", raw_stack_config("a3mega-gpt3-175b"))
    assert expected > 0 and model(planned).configured.phases["preflight"] == expected
    assert planned.preflight is not None and planned.preflight[on.workload.name]["seconds"] == expected


def test_the_plan_summary_and_report_carry_the_model(plans: dict[str, Plan]) -> None:
    summary = plans["a3ultra-405b"].summary()["timeToFirstStep"]
    assert set(summary["scenarios"]) == {"no cuts", "streaming", "streaming + preload", "+ parallel downloads"} and summary["estimate"] is True
    assert summary["scenarios"]["+ parallel downloads"]["cuts"] == ["streaming", "preload", "parallelDownloads"]
    assert "timeToFirstStep" not in plans["a3ultra-platform"].summary()
    assert "| imagePull | 13.1 | 0.8 | 0.0 | 0.0 |" in model(plans["a3ultra-405b"]).to_markdown()


def test_the_cuts_render_on_the_gpu_pools_and_enable_the_container_file_system_api() -> None:
    plan = render("a3ultra-405b", merge(raw_stack_config("a3ultra-405b"), CUTS))
    pools = [r for r in plan.resources if r["type"] == "gcp:container/nodePool:NodePool" and r["name"].endswith("a3-ultra")]
    node_config = pools[0]["inputs"]["nodeConfig"]
    assert node_config["gcfsConfig"] == {"enabled": True}
    assert node_config["secondaryBootDisks"] == [{"diskImage": DISK_IMAGE, "mode": "CONTAINER_IMAGE_CACHE"}]
    services = {r["inputs"].get("service") for r in plan.resources if r["type"] == "gcp:projects/service:Service"}
    assert catalog.CONTAINER_FILESYSTEM_API in services
    m = model(plan)
    assert m.configured.seconds == m.with_all.seconds, "streaming, preload and (with the file cache) parallel downloads"


def test_diff_shows_the_model_and_that_a_new_disk_image_replaces_the_pool() -> None:
    base = render("a3ultra-405b", merge(raw_stack_config("a3ultra-405b"), CUTS)).to_dict()
    moved = merge(CUTS, {"trainstack:image": {"preload": {"diskImage": DISK_IMAGE + "-v2"}}})
    head = render("a3ultra-405b", merge(raw_stack_config("a3ultra-405b"), moved)).to_dict()
    replaced = [c for c in diff_plans("a3ultra-405b", base, head).changed if c.effect == REPLACE]
    assert [c.resource.type for c in replaced] == ["gcp:container/nodePool:NodePool"]
    assert any(p.path == "nodeConfig.secondaryBootDisks[0].diskImage" for p in replaced[0].changes)
    plain = render("a3ultra-405b", raw_stack_config("a3ultra-405b")).to_dict()
    markdown = "\n".join(diff._stack_markdown(diff_plans("a3ultra-405b", plain, base)))
    assert "| modelled time to first step | 45.4 min | 32.4 min | -13.1 min |" in markdown


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"trainstack:image": {"streaming": True, "prebuilt": "nvcr.io/nvidia/nemo:24.12"}},
            "trainstack:image.streaming = True: GKE image streaming serves only images in Artifact Registry",
        ),
        ({"trainstack:image": {"preload": {"diskImage": DISK_IMAGE}}}, "trainstack:image.preload = " + repr(DISK_IMAGE) + ": GKE preloads container images"),
        (
            {"trainstack:image": {"streaming": True, "preload": {"diskImage": DISK_IMAGE}}},
            "trainstack:cluster.versionPrefix = None: container images preloaded",
        ),
        ({"trainstack:image": {"streaming": True, "preload": {"diskImage": "nemo-layers"}}}, "must be a disk image path"),
    ],
)
def test_the_cuts_rules(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        run("a3ultra-405b", merge(raw_stack_config("a3ultra-405b"), changes))
    assert message in str(caught.value)


def test_a_workload_stack_cannot_choose_the_platforms_pools() -> None:
    with pytest.raises(ConfigError, match="configures the GPU node pools, which a workload stack does not make"):
        run("a3ultra-405b-job", raw_config("a3ultra-405b-job", trainstack_image={"streaming": True}))


def test_pods_ready_later_than_kueues_timeout_is_a_warning(plans: dict[str, Plan]) -> None:
    m = model(plans["a3ultra-405b"])
    assert m.pods_ready == ("trainstack:kueue.waitForPodsReady.timeout", 60) and m.configured.pods_ready_seconds > 13 * 60
    (warning,) = m.warnings()
    assert "later than trainstack:kueue.waitForPodsReady.timeout (1.0 min): Kueue evicts and requeues it while nodes pull its image" in warning
    assert "WARNING: the job's pods" in m.to_table()
    patient = render("a3ultra-405b", merge(raw_stack_config("a3ultra-405b"), {"trainstack:kueue": {"waitForPodsReady": {"timeout": "5m"}}}))
    (fits,) = model(patient).warnings()
    assert fits.endswith("streaming and streaming + preload would fit it")
    assert model(plans["a3ultra-405b-job"]).warnings() == [], "a workload stack does not know its platform's timeout"


def test_the_model_reads_kueues_timeout_as_rendered_like_the_preflight_refusal() -> None:
    """Unset on a stack whose pool waits for the autoscaler, the timeout is raised to the scale-up budget:
    the first-step model's warning and the preflight's refusal read that one accessor."""
    raw = raw_stack_config("a2-gpt2-deepspeed")
    del raw["trainstack:kueue"]["waitForPodsReady"]
    plan = render("a2-gpt2-deepspeed", raw)
    config = run("a2-gpt2-deepspeed", raw).context.stack_file
    assert isinstance(config, StackConfig) and config.pods_ready_budgets == [
        ("trainstack:kueue.waitForPodsReady.timeout", f"{catalog.SCALE_UP_BUDGET_SECONDS // 60}m")
    ]
    assert model(plan).pods_ready == ("trainstack:kueue.waitForPodsReady.timeout", catalog.SCALE_UP_BUDGET_SECONDS)


def test_a_resumed_job_restores_its_checkpoint_faster_with_parallel_downloads(plans: dict[str, Plan]) -> None:
    """a3ultra-405b checkpoints: a resume reads Llama 3.1 405B's weights and Adam states (bf16 weights,
    fp32 masters and moments: 14 B a parameter) in 54 shares, at a ninth of gcsfuse's rate without
    parallel downloads; its bucket's file cache turns them on."""
    m = model(plans["a3ultra-405b"])
    share = models.model_shape("llama3.1-405b").params * 14 / 54
    none, cut = m.without.phases["restore"], m.with_all.phases["restore"]
    assert cut is not None and cut == pytest.approx(share / catalog.GCSFUSE_READ_BYTES_PER_S)
    assert none == pytest.approx(cut * catalog.GCSFUSE_PARALLEL_SPEEDUP)
    assert m.configured.phases["restore"] == cut
    off = merge(raw_stack_config("a3ultra-405b"), {"trainstack:storage": {"bucket": {"parallelDownloads": False}}})
    plan = render("a3ultra-405b", off)
    assert model(plan).configured.phases["restore"] == none
    (volume,) = [r for r in plan.resources if r["type"] == "kubernetes:core/v1:PersistentVolume"]
    options = volume["inputs"]["spec"]["mountOptions"]
    assert "file-cache:enable-parallel-downloads:false" in options and "file-cache:max-size-mb:-1" in options
    no_checkpoints = render("a3ultra-405b", merge(raw_stack_config("a3ultra-405b"), {"trainstack:workload": {"checkpointInterval": None}}))
    assert all(s.phases["restore"] == 0 for s in model(no_checkpoints).scenarios)


def test_parallel_downloads_need_the_file_cache() -> None:
    changes = {"trainstack:storage": {"bucket": {"fileCache": False, "parallelDownloads": True}}}
    with pytest.raises(ConfigError, match=r"trainstack:storage\.bucket\.parallelDownloads = True: gcsfuse downloads in parallel into its file cache"):
        run("a3ultra-405b", merge(raw_stack_config("a3ultra-405b"), changes))


def test_the_readme_states_the_models_figures(plans: dict[str, Plan]) -> None:
    readme = " ".join((project_root() / "README.md").read_text().split())
    m, job = model(plans["a3ultra-405b"]), model(plans["a3ultra-405b-job"])
    minutes = first_step._min
    assert f"{minutes(m.without.seconds)} min without cuts, {minutes(m.with_all.seconds)} with all ({minutes(m.configured.seconds)} as shipped" in readme
    assert f"on a warm platform {minutes(m.without.warm_seconds)} min without and {minutes(m.with_all.warm_seconds)} with all" in readme
    assert f"(`a3ultra-405b-job`) {minutes(job.without.seconds)} and {minutes(job.with_all.seconds)}." in readme
    assert (
        f"The restore is {minutes(m.without.phases['restore'] or 0)} min without parallel downloads and {minutes(m.with_all.phases['restore'] or 0)}" in readme
    )
