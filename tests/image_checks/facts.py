"""Facts of an image build context (images/<ctx>/base-image.txt) for the image checks.

    python facts.py images/litgpt python          -> 3.10
    python facts.py images/litgpt --check-from    -> the Dockerfile's FROM is base-image.txt's `image`,
                                                     and it uses every requirements file of the context
    python facts.py images/litgpt --constraints   -> pip constraints for what the base preinstalls

Standard library only: it runs under any Python.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def read(context: Path) -> dict[str, str]:
    facts: dict[str, str] = {}
    for line in (context / "base-image.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            facts[key.strip()] = value.strip()
    return facts


def dockerfile_bases(context: Path) -> list[str]:
    return re.findall(r"^FROM\s+(\S+)", (context / "Dockerfile").read_text(), flags=re.MULTILINE | re.IGNORECASE)


def constraints(facts: dict[str, str]) -> str:
    """The base image's preinstalled packages as pip constraints, in their PyPI form."""
    lines = []
    if "torch-public" in facts:
        lines.append(f"torch=={facts['torch-public']}")
    if "numpy" in facts:
        lines.append(f"numpy{facts['numpy']}")
    return "".join(line + "\n" for line in lines)


def main(argv: list[str]) -> int:
    context, what = Path(argv[0]), argv[1]
    facts = read(context)
    if what == "--check-from":
        bases = dockerfile_bases(context)
        if bases != [facts["image"]]:
            print(f"{context}/Dockerfile starts from {bases}; base-image.txt says {facts['image']}")
            return 1
        print(f"{context}: FROM {facts['image']} as base-image.txt records")
        # One definition: every requirements file of the context is the one the Dockerfile installs.
        dockerfile = (context / "Dockerfile").read_text()
        unused = [p.name for p in sorted(context.glob("*.txt")) if p.name != "base-image.txt" and p.name not in dockerfile]
        if unused:
            print(f"{context}/Dockerfile does not use {unused}")
            return 1
        return 0
    if what == "--constraints":
        sys.stdout.write(constraints(facts))
        return 0
    if what not in facts:
        print(f"{context}/base-image.txt has no {what}", file=sys.stderr)
        return 1
    print(facts[what])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
