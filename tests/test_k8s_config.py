"""`trainstack:kueue` rules: each bad value rejected with one message naming the key."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import load_platform, raw_config
from trainstack.app.deploy.stack_file import load
from trainstack.core.errors import ConfigError


def problems(**kueue: Any) -> list[str]:
    with pytest.raises(ConfigError) as error:
        load("a3ultra-405b", raw_config(trainstack_kueue=kueue))
    return error.value.problems


def test_zero_timeout_is_rejected() -> None:
    assert problems(waitForPodsReady={"timeout": "0s"}) == [
        "trainstack:kueue.waitForPodsReady.timeout = '0s': must be longer than 0s; Kueue rejects a zero timeout"
    ]


def test_backoff_maximum_below_base_is_rejected() -> None:
    assert problems(waitForPodsReady={"requeuingStrategy": {"backoffBaseSeconds": 120, "backoffMaxSeconds": 60}}) == [
        "trainstack:kueue.waitForPodsReady.requeuingStrategy.backoffMaxSeconds = 60: must be at least the first backoff (120)"
    ]


def test_duplicate_priority_class_is_rejected() -> None:
    classes = [{"name": "high", "value": 10}, {"name": "high", "value": 5}]
    assert problems(priorityClasses=classes) == ["trainstack:kueue.priorityClasses[1].name = 'high': is already used by another priority class"]


def test_recipe_000_settings_load() -> None:
    wait = load_platform("a3ultra-405b", raw_config()).kueue.wait_for_pods_ready
    assert (wait.timeout, wait.recovery_timeout, wait.block_admission) == ("1m", "1m", True)


def test_wait_for_pods_ready_cannot_be_turned_off_by_omission_or_null() -> None:
    """Kueue 0.19.2 applies it anyway, so the config may not pretend otherwise."""
    raw = raw_config()
    del raw["trainstack:kueue"]["waitForPodsReady"]
    assert load_platform("a3ultra-405b", raw).kueue.wait_for_pods_ready.timeout == "10m"  # what Kueue will run, stated
    raw["trainstack:kueue"]["waitForPodsReady"] = None  # `waitForPodsReady: null` in the stack file
    with pytest.raises(ConfigError) as error:
        load("a3ultra-405b", raw)
    assert error.value.problems == [
        (
            "trainstack:kueue.waitForPodsReady = None: Kueue 0.19.2 applies waitForPodsReady whatever the config says "
            "(its defaults fill it in); set its timeout instead of null"
        )
    ]
