"""`trainstack status`: why each training job of a stack is where it is.

Exit codes: 0 every job explained (whatever its state); 2 bad input (a dump that is not a List,
unknown kinds, another Kueue API version, a stack with no live cluster, no such job)."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from trainstack.app.console import fail
from trainstack.app.deploy.stacks import project_root, raw_stack_config

if TYPE_CHECKING:
    from trainstack.app.status import snapshot
    from trainstack.app.status.facts import Finding
from trainstack.core.errors import TrainstackError

WATCH_SECONDS = 30
pause = time.sleep  # between --watch rounds (tests replace it)


@click.command("status")
@click.argument("stack", required=False)
@click.option("--job", "job_name", metavar="NAME", help="Only this job, with its detail.")
@click.option("--from", "source", type=click.Path(path_type=Path), metavar="DUMP", help="Read a dump (a List, or a directory) instead of the live cluster.")
@click.option(
    "--dump",
    "dump_dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Write what the live clusters hold to DIR (read back with --from).",
)
@click.option("--watch", is_flag=True, help=f"Explain again every {WATCH_SECONDS} s until interrupted.")
@click.option("--detail", is_flag=True, help="The detail of every job (with --job: always).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def status(stack: str | None, job_name: str | None, source: Path | None, dump_dir: Path | None, watch: bool, detail: bool, fmt: str) -> None:
    """Explain every training job of STACK (a recipe's job, or every job on a platform or fleet):
    its state (queued, admitted, running, failed, finished), one line of cause, the fix, and
    on request the detail, from Kueue's, the autoscaler's, JobSet's and the kubelet's own
    conditions and events. Reads the live cluster(s) with kubectl (read-only), or a dump."""
    # start-up laziness: the models and the status modules load with the command
    from trainstack.app.status import explain, live, snapshot

    if stack is None and source is None:
        fail("name a STACK (its live cluster is read), or a dump with --from DUMP")
    if source is not None and (dump_dir is not None or watch):
        fail("--from reads a dump once: --dump and --watch need a live cluster (drop --from)")
    try:
        if source is not None:
            read: Callable[[], snapshot.Cluster | snapshot.Fleet] = functools.partial(snapshot.load, source)
            job = job_name or (_stack_job(stack) if stack is not None else None)
        else:
            assert stack is not None
            found = live.target(stack, project_root())
            read, job = functools.partial(live.collect, found), job_name or found.job
        while True:
            data = read()
            if dump_dir is not None:
                click.echo(f"wrote {', '.join(str(p) for p in live.write_dump(data, dump_dir))}")
                return
            now = datetime.now(UTC)
            findings = explain.explain_all(data, now, job)
            if job_name is not None and not findings:
                known = sorted({f.job for f in explain.explain_all(data, now)})
                raise snapshot.StatusError(f"--job {job_name}: no such training job (jobs: {', '.join(known) or 'none'})")
            if watch and fmt == "table":
                click.echo(f"--- {now:%Y-%m-%d %H:%M:%S} UTC")
            if not findings and fmt == "table":
                known = sorted({f.job for f in explain.explain_all(data, now)})
                click.echo(f"no training job {job} here (jobs: {', '.join(known) or 'none'})" if job else "no training job found")
            _echo(findings, fmt, detail or job_name is not None)
            if not watch:
                return
            pause(WATCH_SECONDS)
    except TrainstackError as exc:
        fail(str(exc))
    except KeyboardInterrupt:  # --watch ends with Ctrl-C
        return


def _stack_job(stack: str) -> str | None:
    """The job a recipe or workload stack runs (None: a platform or fleet runs every job)."""
    from trainstack.app.deploy.stack_file import load  # start-up laziness: the providers
    from trainstack.infra import fleet_stack as fleet  # start-up laziness: the config models import pydantic

    raw = raw_stack_config(stack, project_root())
    if fleet.is_fleet(raw):
        return None
    config = load(stack, raw)
    return config.workload.name if config.workload is not None else None


def _echo(findings: list[Finding], fmt: str, detail: bool) -> None:
    if fmt == "json":
        click.echo(json.dumps([f.to_dict() for f in findings], indent=2, default=str))
        return
    for f in findings:
        where = f" on {f.worker}" if f.worker else ""
        click.echo(f"{f.namespace}/{f.job} ({f.kind}{where}): {f.state.upper()}")
        click.echo(f"  cause: {f.cause}")
        click.echo(f"  fix:   {f.fix}")
        if detail:
            for line in f.detail:
                click.echo(f"    {line}")
