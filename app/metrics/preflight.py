"""`trainstack metrics preflight LOG --machine M`: a preflight's nccl-tests and DCGM output, judged.

The parser and the verdict are the probe's own (workloads/preflight_probe.py, the code the preflight
containers run); the mark is the machine's (core/catalog/preflight.py). Exit 0 pass, 4 a check failed,
2 bad input (an unknown machine, a log holding neither tool's output).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from trainstack.core import catalog
from trainstack.core.catalog import preflight as marks
from trainstack.core.errors import CatalogError

if TYPE_CHECKING:
    from trainstack.workloads import preflight_probe as probe

GATE_EXIT = 4


def read(text: str, machine_name: str, threshold: float | None = None) -> probe.Report:
    """The report of `text` against the machine's mark (or `threshold`, GB/s); ProbeError on garbage,
    CatalogError on an unknown machine."""
    machine = catalog.machine(machine_name)
    if threshold is None and (mark := marks.threshold(machine)) is not None:
        threshold = mark.gbytes
    from trainstack.workloads import preflight_probe as probe  # start-up laziness: the package imports the providers

    return probe.report(text, machine.name, threshold)


def render(report: probe.Report) -> str:
    """One line a check: verdict, check, node, measured, mark; then the overall verdict."""
    rows = [(c.verdict.upper(), c.check, c.node, c.measured, c.threshold) for c in report.checks]
    widths = [max(len(row[i]) for row in rows) for i in range(5)] if rows else [0] * 5
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join([*lines, f"preflight on {report.machine}: {report.verdict.upper()}"])


@click.command("preflight")
@click.argument("log", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--machine", required=True, help="The GPU machine the log is from (its mark is the catalog's).")
@click.option("--threshold", type=click.FloatRange(min=0, min_open=True), help="Judge by this bus bandwidth (GB/s) instead.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def preflight_command(log: Path, machine: str, threshold: float | None, fmt: str) -> None:
    """Judge a preflight log (nccl-tests tables, dcgmi diag tables): exit 0 pass, 4 fail, 2 bad input."""
    from trainstack.workloads import preflight_probe as probe  # start-up laziness: the package imports the providers

    try:
        report = read(log.read_text(errors="replace"), machine, threshold)
    except (probe.ProbeError, CatalogError) as error:
        click.echo(f"Error: {log}: {error}", err=True)
        sys.exit(2)
    click.echo(json.dumps(report.as_dict(), indent=2) if fmt == "json" else render(report))
    sys.exit(0 if report.verdict == "pass" else GATE_EXIT)
