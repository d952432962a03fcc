"""Render the plans of a base ref's tree, run as a script (`python base_render.py ARGS`) inside a
worktree of that ref by `baseline.start_base_render`.

It imports nothing of trainstack at module level: `main` first puts a meta-path finder before the
editable install's, which maps every `trainstack*` module to the base tree's folders and refuses
(rather than falls through to the working tree's code) any module the base tree does not have.
The renderer's modules are looked up where each era of trainstack kept them.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from typing import Any

# Where the renderer's names live, newest layout first: the foundation under trainstack.core since
# imports mirror folders (at the top of trainstack before), the application under trainstack.app
# since the foundation/application split (at the top before); the stack files under trainstack.app.deploy since
# the application's split by concern.
ERRORS = ("trainstack.core.errors", "trainstack.errors")
PLAN = ("trainstack.app.plan.plan", "trainstack.plan.plan")
STACKS = ("trainstack.app.deploy.stacks", "trainstack.app.stacks", "trainstack.stacks")


class BaseTreeFinder:
    """Finds `trainstack*` modules in the base tree's package folders (`mapping`: import name -> folder)."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target: object = None) -> ModuleSpec | None:
        if fullname != "trainstack" and not fullname.startswith("trainstack."):
            return None
        spec: ModuleSpec | None
        if fullname in self.mapping:
            init = os.path.join(self.mapping[fullname], "__init__.py")
            spec = importlib.util.spec_from_file_location(fullname, init, submodule_search_locations=[self.mapping[fullname]]) if os.path.isfile(init) else None
        else:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            raise ModuleNotFoundError(f"No module named {fullname!r} at the base ref", name=fullname)
        return spec


def first_module(names: Sequence[str]) -> Any:
    """The first of `names` the base tree has."""
    for name in names[:-1]:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    return importlib.import_module(names[-1])


def main(argv: Sequence[str]) -> None:
    """Render the stacks named in `argv[0]` (JSON: mapping, stacks, out) into the file `out`."""
    args = json.loads(argv[0])
    sys.meta_path.insert(0, BaseTreeFinder(args["mapping"]))
    failure = first_module(ERRORS).TrainstackError
    render = first_module(PLAN).render
    stacks = first_module(STACKS)
    known = stacks.stack_names()
    result: dict[str, dict[str, Any]] = {"plans": {}, "errors": {}}
    for name in args["stacks"] or known:
        if name not in known:
            continue
        try:
            result["plans"][name] = render(name, stacks.raw_stack_config(name)).to_dict()
        except Exception as exc:  # reported per stack; the others still compare
            result["errors"][name] = str(exc) if isinstance(exc, failure) else f"{type(exc).__name__}: {exc}"
    with open(args["out"], "w") as out:
        json.dump(result, out)


if __name__ == "__main__":
    main(sys.argv[1:])
