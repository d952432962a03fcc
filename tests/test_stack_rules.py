"""The stack rules (infra/stack.py `stack_*`), the rules between a platform stack file's sections: each
runs on its own, whatever the others find. (Each section's own rules are its spec's, tested through its
one door: tests/test_pool_spec.py, test_cluster_spec.py, test_kueue_spec.py, test_image_spec.py,
test_storage_spec.py.)"""

from __future__ import annotations

import pytest

from trainstack.app.deploy.stack_file import load
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.core.errors import ConfigError, Problem
from trainstack.infra import stack as config

STACK_RULES = sorted(name for name, value in vars(config).items() if name.startswith("stack_") and callable(value))


@pytest.mark.parametrize("name", STACK_RULES)
def test_every_stack_rule_runs_on_its_own(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each stack rule (infra/stack.py `stack_*`) runs on a valid stack, whatever the others find:
    made to refuse, it is reported, and only it."""
    monkeypatch.setattr(config, name, lambda stack: iter([Problem(("trainstack:probe",), None, f"{name} refuses")]))
    with pytest.raises(ConfigError) as caught:
        load("probe", raw_stack_config("a3ultra-405b"))
    assert caught.value.problems == [f"trainstack:probe = None: {name} refuses"]
