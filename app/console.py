"""How the command line reports bad input: one clear `error:` block on stderr, exit code 2."""

from __future__ import annotations

import sys
from typing import NoReturn

import click


def fail(message: str) -> NoReturn:
    """One clear line (or block) on stderr and exit code 2: bad input, nothing was created."""
    click.echo(f"error: {message}", err=True)
    sys.exit(2)
