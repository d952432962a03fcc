"""Kueue's spec (components/kueue.py `KueueSpec`): each rule between its keys refuses its value
through the one door, the spec's model, which the stack file's `trainstack:kueue` and the Kueue
package inputs both are. One case a rule: with the rule deleted, its case passes the model and the
test fails. The package's deprecated flat requeuing keys read as the spec's for one release."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from helpers import refuses
from trainstack.components.kueue import Kueue, KueueArgs, KueueSpec, Requeuing, WaitForPodsReady
from trainstack.core.errors import ArgsError
from trainstack.infra.stack import StackConfig

# (rule, the spec's model, the keys it refuses, the key the problem names, a text of the rule's message)
CASES: list[tuple[str, type[BaseModel], dict[str, Any], tuple[str | int, ...], str]] = [
    ("backoff", Requeuing, {"backoffBaseSeconds": 120, "backoffMaxSeconds": 60}, ("backoffMaxSeconds",), "must be at least the first backoff (120)"),
    (
        "backoff_nested",
        KueueSpec,
        {"waitForPodsReady": {"requeuingStrategy": {"backoffMaxSeconds": 30}}},
        ("waitForPodsReady", "requeuingStrategy", "backoffMaxSeconds"),
        "must be at least the first backoff (60)",
    ),
    (
        "unique_priority_classes",
        KueueSpec,
        {"priorityClasses": [{"name": "high", "value": 2}, {"name": "high", "value": 1}]},
        ("priorityClasses", 1, "name"),
        "is already used by another priority class",
    ),
    ("always_on", KueueSpec, {"waitForPodsReady": None}, ("waitForPodsReady",), "set its timeout instead of null"),
    ("positive_timeout", WaitForPodsReady, {"timeout": "0s"}, ("timeout",), "Kueue rejects a zero timeout"),
]


@pytest.mark.parametrize(("model", "keys", "key", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_kueue_rule_refuses_its_value_naming_the_key_as_written(model: type[BaseModel], keys: dict[str, Any], key: tuple[str | int, ...], text: str) -> None:
    refuses(model, keys, key, text)


def test_the_defaults_pass_and_the_stack_file_section_is_the_spec() -> None:
    """The spec the cases change is valid; `trainstack:kueue` is this model, so its rules are the stack file's."""
    assert [pc.name for pc in KueueSpec().priority_classes] == ["training-high", "training-low"]
    assert StackConfig.model_fields["kueue"].annotation is KueueSpec


PACKAGE = {
    "clusterQueue": "cq",
    "localQueue": "lq",
    "namespace": "ml",
    "flavors": [{"name": "f", "node_pool": "gpus", "machine_type": "a3-megagpu-8g", "nodes": 2}],
}


def test_the_package_refuses_by_the_specs_rule() -> None:
    with pytest.raises(ArgsError) as refused:
        KueueArgs.checked({**PACKAGE, "priorityClasses": [{"name": "a", "value": 1}, {"name": "a", "value": 2}]}, Kueue, "k")
    assert [(p.key, p.rule) for p in refused.value.problems] == [(("priorityClasses", 1, "name"), "is already used by another priority class")]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"requeueTimestamp": "Creation", "backoffLimitCount": 3}, {"requeuingStrategy": {"timestamp": "Creation", "backoffLimitCount": 3}}),
        (
            {"timeout": "5m", "backoffBaseSeconds": 10, "backoffMaxSeconds": 20},
            {"timeout": "5m", "requeuingStrategy": {"backoffBaseSeconds": 10, "backoffMaxSeconds": 20}},
        ),
        (
            {"backoffMaxSeconds": 20, "requeuingStrategy": {"backoffBaseSeconds": 10}},
            {"requeuingStrategy": {"backoffBaseSeconds": 10, "backoffMaxSeconds": 20}},
        ),
    ],
)
def test_the_packages_deprecated_spelling_reads_as_the_spec(old: dict[str, Any], new: dict[str, Any]) -> None:
    """Kueue's `waitForPodsReady` inputs before the spec's spelling (the requeuing keys flat beside
    the timeout) are read for one release as the `requeuingStrategy` keys they became."""
    deprecated = KueueArgs.checked({**PACKAGE, "waitForPodsReady": old}, Kueue, "k").spec
    assert deprecated == KueueArgs.checked({**PACKAGE, "waitForPodsReady": new}, Kueue, "k").spec
    assert deprecated.wait_for_pods_ready != WaitForPodsReady()  # the old keys were read, not dropped


def test_a_deprecated_input_with_its_new_spelling_is_refused() -> None:
    given = {"backoffMaxSeconds": 20, "requeuingStrategy": {"backoffMaxSeconds": 30}}
    with pytest.raises(ArgsError) as refused:
        KueueArgs.checked({**PACKAGE, "waitForPodsReady": given}, Kueue, "k")
    ((found, _, rule),) = refused.value.problems
    assert found == ("waitForPodsReady", "backoffMaxSeconds") and rule.startswith("is the deprecated spelling of")


def test_a_bad_deprecated_value_is_refused_by_the_specs_rule() -> None:
    """The old spelling goes through the spec's model: its rules hold for it too."""
    with pytest.raises(ArgsError) as refused:
        KueueArgs.checked({**PACKAGE, "waitForPodsReady": {"backoffBaseSeconds": 120, "backoffMaxSeconds": 60}}, Kueue, "k")
    assert [p.key for p in refused.value.problems] == [("waitForPodsReady", "requeuingStrategy", "backoffMaxSeconds")]
