"""How the command line talks to a person: bad input as one clear `error:` block on stderr (exit
code 2), and progress on a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from trainstack.core.errors import ABSENT, ConfigError, Problem, TrainstackError

T = TypeVar("T")

PROGRAM = click.option(
    "--program",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A Pulumi program of your own (a Python program's folder, its Pulumi.yaml and stack files) instead of this project's stacks.",
)
"""`plan`, `validate` and `diff`'s option for a program of your own (app/plan/program_dir.py)."""


def fail(message: str) -> NoReturn:
    """One clear line (or block) on stderr and exit code 2: bad input, nothing was created."""
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def terminal() -> bool:
    """Whether stderr is a terminal a person watches (progress is shown only there)."""
    return sys.stderr.isatty()


def progress(items: Sequence[T], doing: str) -> Iterator[T]:
    """Each of `items`; on a terminal, a line `<doing> 3/15: <item>` on stderr while it is worked on
    (rewritten in place; clear_progress erases it), for commands that take a while over many stacks."""
    shown = terminal() and len(items) > 1
    for number, item in enumerate(items, 1):
        if shown:
            click.echo(f"\r\033[K{doing} {number}/{len(items)}: {item}", err=True, nl=False)
        yield item
    clear_progress()


def clear_progress() -> None:
    """Erase the progress line, before output of the work it stood for."""
    if terminal():
        click.echo("\r\033[K", err=True, nl=False)


def problem_objects(exc: TrainstackError) -> list[dict[str, Any]]:
    """The problems of `exc` as `--format json` gives them: each its key as written, the value,
    the rule and the fix; an error of no one key (an unreadable file) is one with key ``."""
    details = exc.details if isinstance(exc, ConfigError) else [Problem((), ABSENT, str(exc))]
    return [p.to_json() for p in details]
