"""Operations on the command line: `diff`, `up`, `preview`, `destroy`, `bench` and `reap`.

Input errors print one `error: ...` line and exit 2 before anything is created.
Documented start-up laziness (the one exception to module-level imports): the modules that
import pulumi's Automation API or the plan engine load inside the commands that use them.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

import click
import yaml

from trainstack.app.console import PROGRAM, fail
from trainstack.app.deploy.stacks import project_root, raw_stack_config, stack_names
from trainstack.core.errors import TrainstackError, describe

GATE_EXIT = 4  # `diff --fail-on`: distinct from 2 (bad input) and from bench's 3 (resources left)


class Duration(click.ParamType):
    """A duration such as 90m, 6h or 1h30m, as seconds."""

    name = "duration"
    _FORMAT = re.compile(r"(?:\d+(?:\.\d+)?(?:h|m|s))+")

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        from trainstack.core.rules import duration_seconds  # start-up laziness: `--help` needs no rules

        if isinstance(value, float):
            return value
        if not self._FORMAT.fullmatch(str(value)) or duration_seconds(str(value)) <= 0:
            self.fail(f"{value!r} is not a duration such as 90m, 6h or 1h30m", param, ctx)
        return duration_seconds(str(value))


# ---------------------------------------------------------------------------------------------
# diff


@click.command("diff")
@click.argument("stacks", nargs=-1)
@click.option("--base", "base_ref", required=True, metavar="GIT_REF", help="The git ref to compare with, e.g. origin/main.")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
@click.option(
    "--fail-on",
    type=click.Choice(["data", "replace"]),
    help="Exit 4 when the change loses data (replaces or removes a data store) or, with `replace`, replaces anything.",
)
@PROGRAM
def diff_command(stacks: tuple[str, ...], base_ref: str, fmt: str, fail_on: str | None, program: Path | None) -> None:
    """Diff the offline plans of STACK (every stack if none) from GIT_REF to the working tree.
    With --program, STACK is a stack of that program (default its only one), the program at
    GIT_REF of the repository it is in against its working tree.

    Data stores replaced or removed first, then running jobs restarted or shrunk under, applies
    that will fail, protection turned off, replacements (with what they take along), node
    recreations; every property change; the change in GPUs and estimated cost per hour.

    Exit codes: 0 compared; 2 bad input or a stack of the working tree that does not render;
    4 the change crosses --fail-on (the report is still written)."""
    from trainstack.app.review.baseline import compare
    from trainstack.app.review.program_diff import compare_program

    if program is not None and len(stacks) > 1:
        fail("--program diffs one stack of the program at a time")
    try:
        report = compare_program(program, base_ref, stacks[0] if stacks else None) if program else compare(project_root(), base_ref, list(stacks))
    except TrainstackError as exc:
        fail(str(exc))
    click.echo(report.to_json() if fmt == "json" else report.to_markdown(), nl=False)
    if report.head_failed:
        sys.exit(2)
    if fail_on and report.crosses(fail_on):
        click.echo(f"error: the change crosses --fail-on {fail_on}: see the findings above", err=True)
        sys.exit(GATE_EXIT)


# ---------------------------------------------------------------------------------------------
# up, preview, destroy


def _drive(operation: str, stack: str, confirm: str | None = None) -> None:
    from trainstack.app.ops import automation
    from trainstack.app.plan.engine import load_stack

    try:
        automation.require_pulumi()
    except TrainstackError as exc:
        fail(str(exc))
    if confirm:
        click.confirm(confirm, abort=True)
    root = project_root()
    if operation != "destroy":
        try:
            load_stack(stack, root)  # a bad config never reaches an engine
        except TrainstackError as exc:
            fail(str(exc))
    opener = automation.select if operation == "destroy" else automation.create_or_select
    try:
        automation.run(operation, stack, root, opener)
    except TrainstackError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


@click.command("up")
@click.argument("stack")
@click.option("--yes", is_flag=True, help="Deploy without asking (automation); the summary and the preview are still shown.")
def up_command(stack: str, yes: bool) -> None:
    """Deploy STACK with the Pulumi Automation API (the same program as `pulumi up`), safely: first
    its plan's summary (resources, GPUs, cost per hour, warnings, the examples' placeholders), then
    Pulumi's preview of the live stack's changes and what of them loses data or stops the running
    job, then a question.

    Exit codes: 0 deployed (or nothing to change); 1 declined, or the update failed; 2 bad input,
    or no terminal to ask and no --yes (nothing was previewed or changed)."""
    if not yes and not interactive():
        fail(f"`trainstack up {stack}` asks before it changes anything, and there is no terminal to ask: pass --yes to deploy without asking")
    from trainstack.app.deploy.placeholders import placeholders
    from trainstack.app.ops import automation, up
    from trainstack.app.plan.plan import render

    try:
        automation.require_pulumi()
        raw = raw_stack_config(stack)
        plan = render(stack, raw)  # a bad config never reaches an engine
    except TrainstackError as exc:
        fail(str(exc))
    gpus, usd = (plan.job["gpus"], plan.job["usdPerHour"] or 0.0) if plan.job else (plan.cost.gpus, plan.cost.max_usd)
    click.echo(f"stack {stack}: {len(plan.resources)} resources, {gpus} GPUs, est. ${usd:,.2f}/h at full size (list prices, an estimate)")
    for warning in [*plan.warnings(), *(describe(p) for p in placeholders(raw))]:
        click.echo(f"warning: {warning}", err=True)
    try:
        opened = automation.create_or_select(stack, project_root())
        previewed = up.preview(opened)
    except Exception as exc:  # CommandError and its kinds: the CLI already printed the details
        click.echo(f"error: pulumi preview of stack {stack!r} failed: {automation.brief(exc)}", err=True)
        sys.exit(1)
    click.echo(f"changes: {previewed.counts()}")
    for hazard in previewed.hazards():
        click.echo(f"warning: {hazard}", err=True)
    if previewed.unchanged:
        click.echo(f"stack {stack!r} is up to date: nothing to deploy")
        return
    if not yes:
        click.confirm(f"Deploy these changes to stack {stack!r}?", abort=True)
    try:
        automation.run("up", stack, project_root(), lambda name, root: opened)
    except TrainstackError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


def interactive() -> bool:
    """Whether a person can answer a question here (stdin is a terminal)."""
    return sys.stdin.isatty()


@click.command("preview")
@click.argument("stack")
def preview_command(stack: str) -> None:
    """Preview STACK's changes against its live state (`pulumi preview --diff`)."""
    _drive("preview", stack)


@click.command("destroy")
@click.argument("stack")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def destroy_command(stack: str, yes: bool) -> None:
    """Delete every resource of STACK (its config and history stay)."""
    _drive("destroy", stack, confirm=None if yes else f"Delete every resource of stack {stack!r}?")


# ---------------------------------------------------------------------------------------------
# bench


def _parse_sets(sets: tuple[str, ...]) -> list[tuple[str, Any]]:
    pairs = []
    for item in sets:
        key, eq, value = item.partition("=")
        if not eq or not key:
            fail(f"--set {item!r}: expected KEY=VALUE, e.g. trainstack:workload.steps=50")
        pairs.append((key, yaml.safe_load(value) if value else ""))
    return pairs


@click.command("bench")
@click.argument("stack", required=False)
@click.option("--ttl", type=Duration(), default="8h", show_default=True, help="Expiry label for `reap`; at least --timeout + 2h.")
@click.option("--timeout", type=Duration(), default="6h", show_default=True, help="How long to wait for the training job.")
@click.option("--name", help="The bench stack's name (default <stack>-bench-<utc yyyymmddhhmm>-<4 hex>).")
@click.option("--project", help="The GCP project (sets gcp:project).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Config override, repeatable: trainstack:workload.steps=50 (value read as YAML).")
@click.option(
    "--result",
    "result_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("result.json"),
    show_default=True,
    help="Result JSON; the leader's log goes beside it.",
)
@click.option(
    "--baseline",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A result JSON of an earlier bench: exit 4 when a phase of the time to first step regressed from it.",
)
@click.option("--tolerance", type=click.FloatRange(min=0), default=20.0, show_default=True, help="With --baseline: percent a phase may grow.")
@click.option("--slack", type=Duration(), default="30s", show_default=True, help="With --baseline: and seconds it may grow by regardless.")
@click.option(
    "--teardown",
    "teardown_name",
    metavar="NAME",
    help="Instead of a bench: tear down the bench stack NAME a killed run left (none: nothing to do); with a fleet job STACK, every copy of bench NAME.",
)
def bench_command(
    stack: str | None,
    ttl: float,
    timeout: float,
    name: str | None,
    project: str | None,
    sets: tuple[str, ...],
    result_path: Path,
    baseline: Path | None,
    tolerance: float,
    slack: float,
    teardown_name: str | None,
) -> None:
    """Run recipe STACK once on a fresh ephemeral stack; always tear it down. A job on a fleet
    (`trainstack:platform.stack` names a fleet stack) is run on ephemeral copies of the fleet's
    workers and of the fleet too, deployed in order and torn down in reverse.

    Exit codes: 0 the job succeeded; 1 it failed or timed out; 2 bad input (nothing created);
    3 teardown failed and resources are left (named on stderr from the stack's state); 4 the job
    succeeded but a phase of its time to first step regressed from --baseline; 130/143
    interrupted. With --teardown NAME: 0 torn down or no such stack, 3 resources left."""
    from trainstack.app.metrics import timeline
    from trainstack.app.ops import automation, bench, bench_fleet, bench_timeline

    if stack is None and teardown_name is None:
        fail("name a recipe STACK to bench, or a bench stack to tear down with --teardown NAME")
    try:
        automation.require_pulumi()
    except TrainstackError as exc:
        fail(str(exc))
    root = project_root()
    if teardown_name is not None:
        if stack is not None and bench_fleet.is_fleet_job(stack, root):
            _teardown_fleet_only(stack, teardown_name, root)
        _teardown_only(teardown_name, root)
    assert stack is not None
    try:
        base = bench_timeline.read_baseline(baseline) if baseline is not None else None
        raw = raw_stack_config(stack, root)
        on_fleet = bench_fleet.fleet_of(raw, root) is not None
        bench_fleet.refuse_fleet(stack, raw, root)
    except TrainstackError as exc:
        fail(str(exc))
    tools = [("kubectl", "gcloud components install kubectl"), ("gke-gcloud-auth-plugin", "gcloud components install gke-gcloud-auth-plugin")]
    for tool, hint in [*tools, *([("gcloud", "https://cloud.google.com/sdk/docs/install")] if on_fleet else [])]:
        if shutil.which(tool) is None:
            fail(f"{tool} is not installed (the bench watches its job with it): {hint}")
    overrides = _parse_sets(sets) + ([("gcp:project", project)] if project else [])
    if on_fleet and base is not None:
        fail("--baseline: a bench of a job on a fleet records no time-to-first-step timeline to compare")
    if on_fleet:
        _bench_fleet(stack, raw, root, ttl, timeout, name, overrides, result_path)
    try:
        spec = bench.prepare(stack, raw, now=datetime.now(UTC), ttl_s=ttl, timeout_s=timeout, taken=stack_names(root), name=name, sets=overrides)
    except TrainstackError as exc:
        fail(str(exc))
    click.echo(f"bench stack {spec.stack}: cluster {spec.cluster} in {spec.project}, expires {spec.expires:%Y-%m-%d %H:%M} UTC")
    result = bench.run_bench(spec, root, bench.Deps(), log_path=result_path.with_suffix(".leader.log"))
    if base is not None:
        result.regressions = bench_timeline.compare(result.timeline, base, tolerance / 100, slack)
    result_path.write_text(json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n")
    if result.timeline and "phases" in result.timeline:
        click.echo(timeline.format_table(result.timeline))
    click.echo(_summary(spec.stack, result, [result.teardown] if result.teardown else []) + f"; result in {result_path}")
    if result.teardown is not None and not result.teardown.ok:
        click.echo(f"error: {bench.leftovers(spec.stack, result.teardown, root, bench.reap_note(spec))}", err=True)
    sys.exit(result.exit_code)


def _bench_fleet(
    stack: str, raw: dict[str, Any], root: Path, ttl: float, timeout: float, name: str | None, overrides: list[tuple[str, Any]], result_path: Path
) -> NoReturn:
    from trainstack.app.ops import bench_fleet

    try:
        spec = bench_fleet.prepare(stack, raw, root, now=datetime.now(UTC), ttl_s=ttl, timeout_s=timeout, name=name, sets=overrides)
    except TrainstackError as exc:
        fail(str(exc))
    for item in spec.copies:
        click.echo(f"bench stack {item.stack} ({item.role}, a copy of {item.recipe})" + (f": cluster {item.cluster}" if item.cluster else ""))
    click.echo(f"in {spec.project}, expires {spec.expires:%Y-%m-%d %H:%M} UTC")
    result = bench_fleet.run_fleet_bench(spec, root, bench_fleet.FleetDeps(), log_path=result_path.with_suffix(".leader.log"))
    result_path.write_text(json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n")
    click.echo(_summary(spec.name, result, list(result.teardowns.values())) + f"; result in {result_path}")
    for message in bench_fleet.leftovers(result.teardowns, root, bench_fleet.reap_note(spec)):
        click.echo(f"error: {message}", err=True)
    if any(not t.ok for t in result.teardowns.values()):
        click.echo(f"error: tear the rest down with `trainstack bench {stack} --teardown {spec.name}`", err=True)
    sys.exit(result.exit_code)


def _teardown_fleet_only(stack: str, name: str, root: Path) -> NoReturn:
    from trainstack.app.ops import bench_fleet

    torn = bench_fleet.teardown_only(stack, name, root)
    for full, result in torn.items():
        click.echo(
            f"no stack {full!r}: nothing to tear down"
            if result is None
            else f"torn down and removed stack {full!r}"
            if result.ok
            else f"stack {full!r}: teardown failed"
        )
    failed = {full: result for full, result in torn.items() if result is not None and not result.ok}
    for message in bench_fleet.leftovers(failed, root):
        click.echo(f"error: {message}", err=True)
    sys.exit(3 if failed else 0)


def _teardown_only(name: str, root: Path) -> NoReturn:
    from trainstack.app.ops import bench

    result = bench.teardown_only(name, root)
    if result is None:
        click.echo(f"no stack {name!r}: nothing to tear down")
        sys.exit(0)
    if not result.ok:
        click.echo(f"error: {bench.leftovers(name, result, root)}", err=True)
        sys.exit(3)
    click.echo(f"torn down and removed stack {name!r}")
    sys.exit(0)


def _summary(label: str, result: Any, torn: list[Any]) -> str:
    """One line: the job's outcome (and worker), MFU, a signal, an error, whether all was torn down."""
    worker = f" on worker {result.job['worker']}" if result.job.get("worker") else ""
    parts = [f"bench {label}: job{worker} {result.job.get('outcome', 'not run')}"]
    mfu = result.metrics.get("mfu", {})
    if "mfu" in mfu:
        parts.append(f"MFU {mfu['mfu']:.1%}")
    if (result.timeline or {}).get("timeToFirstStepSeconds") is not None:
        parts.append(f"time to first step {result.timeline['timeToFirstStepSeconds'] / 60:.1f} min")
    if result.regressions:
        parts.append(f"REGRESSED from --baseline: {'; '.join(result.regressions)}")
    if result.interrupted:
        parts.append(f"interrupted by {result.interrupted}")
    if result.error:
        parts.append(f"error: {result.error}")
    if torn:
        parts.append("torn down" if all(t.ok for t in torn) else "TEARDOWN FAILED")
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------------
# reap


@click.command("reap")
@click.option("--project", envvar="GOOGLE_CLOUD_PROJECT", required=True, help="The GCP project [env GOOGLE_CLOUD_PROJECT].")
@click.option("--yes", is_flag=True, help="Delete them (without it: only list what would be deleted).")
def reap_command(project: str, yes: bool) -> None:
    """Delete what expired ephemeral stacks left, every kind, in dependency order (a dry run
    without --yes), with gcloud.

    Clusters, Filestore and Lustre instances, disks, buckets, registries and address ranges
    labelled managed-by=trainstack, trainstack-ephemeral=true and trainstack-expires (in the
    past); networks whose bench name has expired, with their subnetworks, firewall rules, routers
    and private services access. Exit 1 if a listing or a deletion failed."""
    from trainstack.app.ops import reap

    try:
        code = reap.reap(project, yes, echo=click.echo, error=lambda line: click.echo(line, err=True))
    except reap.ReapError as exc:
        fail(str(exc))
    sys.exit(code)


COMMANDS = (diff_command, up_command, preview_command, destroy_command, bench_command, reap_command)
