"""Imports every module and name an import-surface file lists (imports-*.txt): the pinned training
code's third-party imports, checked against the versions an image installs.

    python check_imports.py imports-litgpt.txt
"""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path


def main(path: str) -> int:
    warnings.simplefilter("ignore")
    missing = []
    count = 0
    for raw in Path(path).read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        module, _, names = line.partition(":")
        module = module.strip()
        try:
            loaded = importlib.import_module(module)
        except Exception as error:  # any import failure is the finding
            missing.append(f"import {module}: {type(error).__name__}: {error}")
            continue
        count += 1
        for name in filter(None, (n.strip() for n in names.split(","))):
            count += 1
            if not hasattr(loaded, name):
                try:
                    importlib.import_module(f"{module}.{name}")
                except Exception:
                    missing.append(f"from {module} import {name}: no such name")
    for problem in missing:
        print(problem)
    print(f"{path}: {count - len(missing)} of {count} imports resolve")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
