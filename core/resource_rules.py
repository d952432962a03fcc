"""The rules between the fields of one resource (Kueue and its requeuing, storage), each defined once: the component's Args (`components/`) and the stack config's section (`infra/stack.py`) call the same
function, so both doors refuse the same values with the same words.

A rule reads the resource through a Protocol named with the Args' field names and returns the
Problems it finds, keyed by the Args field path (`("authorized_networks", 0, "cidr_block")`); the
config re-keys them to the key as the user writes it (`authorizedNetworks[0].cidrBlock`).
Each rule is independent of the others: `check` runs every rule of a resource, in any order.
A rule's text names other keys in words, not by either door's spelling.

The node pools, the cluster and the primary network own their specs and their rules (components/). Rules that span sections of a stack (zones in the region, address ranges, NIC families, queues,
the workload against its pool) are not here: they are the stack's own (`infra/stack.py`
StackConfig, `stack_*`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from trainstack.core import rules
from trainstack.core.errors import Problem

Check = Callable[..., Iterable[Problem]]
# The rules of each resource, by resource and rule name (`check` looks them up as it runs).
RULES: dict[str, dict[str, Check]] = {}


def rule(resource: str) -> Callable[[Check], Check]:
    """Register a function as one of `resource`'s rules."""

    def register(func: Check) -> Check:
        RULES.setdefault(resource, {})[func.__name__] = func
        return func

    return register


def check(resource: str, item: object) -> Iterator[Problem]:
    """Every Problem of `item` under each of `resource`'s rules."""
    for found in RULES[resource].values():
        yield from found(item)


# --- views: what each rule reads, named as the Args name it ------------------------------------


class NamedView(Protocol):
    @property
    def name(self) -> str: ...


class KueueView(Protocol):
    @property
    def priority_classes(self) -> Sequence[NamedView]: ...


class RequeuingView(Protocol):
    @property
    def backoff_base_seconds(self) -> int: ...
    @property
    def backoff_max_seconds(self) -> int: ...


# --- Kueue -------------------------------------------------------------------------------------


@rule("requeuing")
def backoff(requeuing: RequeuingView) -> Iterator[Problem]:
    """Kueue's requeuing backoff: the longest not below the first."""
    if wrong := rules.at_least(requeuing.backoff_max_seconds, requeuing.backoff_base_seconds):
        yield Problem(("backoff_max_seconds",), requeuing.backoff_max_seconds, wrong)


@rule("kueue")
def unique_priority_classes(kueue: KueueView) -> Iterator[Problem]:
    """Kueue object names are unique: one WorkloadPriorityClass a name."""
    seen: set[str] = set()
    for i, priority_class in enumerate(kueue.priority_classes):
        if priority_class.name in seen:
            yield Problem(("priority_classes", i, "name"), priority_class.name, rules.duplicate("priority class"))
        seen.add(priority_class.name)
