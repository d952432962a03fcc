"""Regenerate the golden plans: `python -m tests.regen_golden [STACK ...]`.

A change to a golden file is a reviewed change: read its diff before committing it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from trainstack.app.deploy.stacks import raw_stack_config, stack_names
from trainstack.app.plan.plan import render

GOLDEN = Path(__file__).resolve().parent / "golden"


def golden_path(stack: str) -> Path:
    return GOLDEN / f"{stack}.json"


def main(stacks: list[str]) -> None:
    GOLDEN.mkdir(exist_ok=True)
    for stack in stacks or stack_names():
        golden_path(stack).write_text(render(stack, raw_stack_config(stack)).to_json())
        print(f"wrote {golden_path(stack)}")


if __name__ == "__main__":
    main(sys.argv[1:])
