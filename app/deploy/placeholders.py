"""The shipped stacks' placeholders: values that make a stack valid to plan but are not a user's.

A stack copied from stacks/ plans offline as it is; deployed, it would aim at a project named
`my-training-project`, reservations of the examples' names, and a control plane open only to a
documentation address range. `validate` and `up` warn about each, at the key that holds it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Any

from trainstack.core.errors import Problem

PROJECT = "my-training-project"
"""The project id every shipped stack names."""

RESERVATIONS = frozenset({"a3-mega-reservation", "a3-ultra-reservation", "a4-reservation", "a4x-reservation", "a4x-max-reservation"})
"""The reservation names of the shipped stacks (tests/test_cli.py checks they are all here)."""

DOCUMENTATION_RANGES = tuple(ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"))
"""Address ranges reserved for documentation (RFC 5737, RFC 3849): no client is ever in them."""


def placeholders(raw: dict[str, Any]) -> list[Problem]:
    """Each placeholder in a stack's raw config (keys as the file writes them), with what to set instead."""
    return list(_walk(raw, ()))


def _walk(value: Any, key: tuple[str | int, ...]) -> Iterator[Problem]:
    if isinstance(value, dict):
        for name, item in value.items():
            yield from _walk(item, (*key, name))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, (*key, i))
    elif isinstance(value, str):
        yield from _placeholder(value, key)


def _placeholder(value: str, key: tuple[str | int, ...]) -> Iterator[Problem]:
    last = key[-1] if key else ""
    if value == PROJECT:
        yield Problem(key, value, "is the shipped examples' placeholder project", "set your own project id")
    elif last == "name" and key[-2:-1] == ("reservation",) and value in RESERVATIONS:
        yield Problem(key, value, "is a shipped example's reservation name", "set the name of your reservation (gcloud compute reservations list)")
    elif last == "cidrBlock" and _documentation(value):
        yield Problem(key, value, "is an address range reserved for documentation (RFC 5737): no real client is in it", "set your own network's range")


def _documentation(cidr: str) -> bool:
    try:
        network = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return False
    return any(network.version == r.version and network.subnet_of(r) for r in DOCUMENTATION_RANGES)  # type: ignore[arg-type]
