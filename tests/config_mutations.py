"""Mutations of a stack's raw config, for the property-based tests and benchmarks/fuzz_config.py:
one key anywhere in the config (or a whole section) set to a value of another kind, an edge of
its own kind, removed, or renamed to a key that is no string (YAML `1:`, `true:`, `null:`)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

# Values of every kind a YAML file or `pulumi config set --path` can hold, edges included.
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, -1, 1, 2, 7, 255, 2**31, 2**63, 10**6]),
    st.sampled_from([0.5, -1.5, 1e300, float("inf")]),
    st.sampled_from(
        [
            "",
            " ",
            "x",
            "-x",
            "1abc",
            "A=B",
            "0.0.0.0/0",
            "10.0.0.0/33",
            "999.1.1.1/32",
            "172.16.0.33/28",
            "goog-bucket",
            "a" * 300,
            "ñ",
            "../etc",
            "1.32.2-gke.1",
            "gpt3-999b",
            "fp8",
            "none",
            "null",
            "true",
            "us-central1-ai1a",
            "asia-northeast1-b",
            "us-central1-f",
            "europe-west4",
        ]
    ),
    st.text(max_size=20),
    st.lists(st.sampled_from(["a", 1, None]), max_size=3),
    st.dictionaries(st.sampled_from(["a", "name", "cidrBlock", "secure"]), st.sampled_from(["x", 1, None]), max_size=2),
)

# Keys a YAML mapping can hold that are no strings.
KEYS = st.sampled_from([1, 0, -1, 1.5, True, False, None])


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path into `value` (dict keys and list indices), outermost first."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, child in value.items():
            found += paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found += paths(child, (*prefix, i))
    return found


def mutate(raw: dict[str, Any], path: tuple, value: Any, delete: bool) -> dict[str, Any]:
    """A copy of `raw` with the value at `path` replaced by `value`, or deleted."""
    out = copy.deepcopy(raw)
    node: Any = out
    for step in path[:-1]:
        node = node[step]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = copy.deepcopy(value)
    return out


def rename(raw: dict[str, Any], path: tuple, key: Any) -> dict[str, Any]:
    """A copy of `raw` with the mapping key at `path` replaced by `key`, its value kept."""
    out = copy.deepcopy(raw)
    node: Any = out
    for step in path[:-1]:
        node = node[step]
    if isinstance(node, dict):
        node[key] = node.pop(path[-1])
    return out


@st.composite
def mutated(draw: st.DrawFn, raw: dict[str, Any]) -> dict[str, Any]:
    """One mutation of `raw`: mostly a value, one in eight a key."""
    path = draw(st.sampled_from(paths(raw)))
    if draw(st.integers(0, 7)) == 0:
        return rename(raw, path, draw(KEYS))
    return mutate(raw, path, draw(VALUES), draw(st.booleans()) and draw(st.booleans()))
