"""The config reference (docs/config-reference.md) is generated from the config models, is
current, documents every key, and shows the rule of every refusal the invalid-config corpus makes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from helpers import present
from trainstack.app.docs import reference, rule_text
from trainstack.components import gke_cluster
from trainstack.components.node_pools import GpuPoolSpec
from trainstack.core import rules
from trainstack.infra import contract
from trainstack.infra import stack as config

DOC = reference.OUTPUT
CORPUS = sorted((Path(__file__).parent / "invalid_configs").glob("*.yaml"))


def test_the_committed_reference_is_the_generators_output() -> None:
    assert DOC.read_text() == reference.render(), "docs/config-reference.md is stale: run python -m trainstack.app.docs.reference"


def test_the_readme_links_the_reference() -> None:
    assert "(docs/config-reference.md)" in (reference.ROOT / "README.md").read_text()


class _Documented(config.Section):
    size: int = 1
    """How big."""
    colour: str = "red"


def test_a_key_without_a_description_is_refused() -> None:
    with pytest.raises(reference.UndocumentedError, match=r"trainstack:thing\.colour \(_Documented\.colour\)"):
        list(reference.rows(_Documented, ["trainstack:thing"]))


def test_a_documented_key_has_its_type_default_description_and_rule() -> None:
    (pools,) = [s for s in reference.sections() if s.model is GpuPoolSpec]
    rows = {row.keys[-1]: row for row in reference.rows(pools.model, pools.paths)}
    name = rows["trainstack:gpuPools[].reservation.name"]
    assert name.keys == ["trainstack:gpuPool.reservation.name", "trainstack:gpuPools[].reservation.name"]
    assert (name.type, name.default) == ("string", "unset")
    assert name.description.startswith("A reservation (also a calendar-mode one")
    assert name.rules == [rules.RESERVATION_NAME.message]
    count = rows["trainstack:gpuPools[].nodeCount"]
    assert count.rules == [rules.NODE_COUNT.message]


def test_an_undocumented_contract_output_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ["platform.clusterName", "platform.clusterLocation"] in [keys for keys, _ in reference.outputs()]
    monkeypatch.setattr(contract.Contract, "__doc__", present(contract.Contract.__doc__).replace("cluster_name, ", ""))
    with pytest.raises(reference.UndocumentedError, match="cluster_name"):
        reference.outputs()


@pytest.mark.parametrize(
    ("start", "end", "recurrence"),
    [("2026-01-03T03:00:00Z", "2026-01-03T05:00:00Z", "FREQ=WEEKLY;BYDAY=SA,SU"), ("2026-01-03T03:00:00Z", "2026-01-03T09:00:00Z", "FREQ=WEEKLY;BYDAY=SA")],
)
def test_a_rule_text_is_read_from_the_rules_own_source(start: str, end: str, recurrence: str) -> None:
    """What a validator reports, read from its source (its rules' messages, values as `…`),
    begins every message it gives, under the key it names."""
    with pytest.raises(ValidationError) as info:
        gke_cluster.MaintenanceWindow.model_validate({"start": start, "end": end, "recurrence": recurrence})
    (error,) = info.value.errors()
    found = rule_text.reports(gke_cluster.MaintenanceWindow._rules, gke_cluster.MaintenanceWindow)
    assert any(r.key == error["loc"] and _begins(r.text, error["msg"]) for r in found), (error, found)


def test_a_rule_text_names_its_key_with_list_indexes() -> None:
    keys = {r.key for r in rule_text.reports(config.ClusterConfig._rules, config.ClusterConfig)}
    assert ("authorizedNetworks", "[]", "cidrBlock") in keys


def _documented() -> list[tuple[str, str]]:
    """(key, rule) of every rule the document shows, as written there (`…` for a value)."""
    text = DOC.read_text().replace("&lt;", "<").replace("\\|", "|")
    found = []
    for line in text.splitlines():
        if line.startswith("- "):
            keys, _, rule = line[2:].partition("`: ") if line.startswith("- `") else ("", "", line[2:])
            found += [(key, rule) for key in (keys.strip("`").split("`, `") if keys else [""])]
        elif line.startswith("| `") and line.count(" | ") >= 4:
            cells = line.split(" | ")
            rules_shown = [r for r in cells[-1].rstrip(" |").split("<br>") if r]
            found += [(key.strip("`"), rule) for key in cells[0].strip("| ").split("<br>") for rule in rules_shown]
    return found


def _begins(shown: str, text: str) -> bool:
    """Whether `text` is the start of a message `shown` (its `…` standing for any value) can give:
    the corpus names a message by its start. The text must hold the rule's own words (a dozen
    characters of them at least, or all), not only values."""
    literal = shown.split(rule_text.VALUE)
    enough = min(12, len("".join(literal)))

    def match(i: int, at: int, words: int) -> bool:
        rest = text[at:]
        if literal[i].startswith(rest):  # the text ends within this part
            return words + len(rest) >= enough
        if not rest.startswith(literal[i]):
            return False
        at, words = at + len(literal[i]), words + len(literal[i])
        if i + 1 == len(literal):
            return at == len(text)
        # A value, then the next part; or the text ends within the value.
        return words >= enough or any(match(i + 1, p, words) for p in range(at, len(text) + 1))

    return match(0, 0, 0)


def _key_matches(shown: str, key: str) -> bool:
    """A key as the reference shows it (`[]` for an index, `…` for a part) names `key`, or its section."""
    pattern = ".*".join(re.escape(p) for p in shown.split(rule_text.VALUE))
    return not shown or bool(re.fullmatch(pattern, key)) or key.startswith(shown + ".")


DOCUMENTED = _documented() if DOC.exists() else []


def _refusals() -> list[tuple[str, str]]:
    """The corpus's messages of a rule: not pydantic's own (a type or a range, which the reference
    shows as the key's type and range; an unknown or missing key) nor the summary line."""
    found = [(case.stem, expected) for case in CORPUS for expected in yaml.safe_load(case.read_text())["expect"]]
    return [(case, expected) for case, expected in found if " = " in expected and ": Input should" not in expected]


@pytest.mark.parametrize(("case", "expected"), _refusals(), ids=[f"{c}-{i}" for i, (c, _) in enumerate(_refusals())])
def test_every_refusal_of_the_corpus_is_in_the_reference(case: str, expected: str) -> None:
    """Each message of tests/invalid_configs (which test_config proves `validate` gives) is one a
    rule the reference lists for its key (or the key's section) can give."""
    key, _, rest = expected.partition(" = ")
    key = re.sub(r"\[\d+\]", "[]", key)
    # The rule follows the value, whose repr may hold ": " itself.
    starts = [m.end() for m in re.finditer(": ", rest)]
    assert any(_key_matches(shown_key, key) and any(_begins(shown, rest[at:]) for at in starts) for shown_key, shown in DOCUMENTED), (
        f"{case}: no rule of docs/config-reference.md gives {expected!r}"
    )
