"""The fleet manager's egress: reserved and exported by the fleet, admitted by the workers that name
the fleet (`trainstack:cluster.admitFleets`), read from the fleet stack with no address copied by
hand; `validate` refuses a worker that does not admit the fleet it serves."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import pulumi
import pytest

from helpers import merge
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan import plan, report
from trainstack.app.plan.engine import run
from trainstack.core.errors import ConfigError
from trainstack.infra import contract, remote
from trainstack.infra import fleet_stack as fleet

FLEET = "a3ultra-fleet"
FLEET_STACK = f"organization/trainstack/{FLEET}"
ADDRESS = "gcp:compute/address:Address"
NAT = "gcp:compute/routerNat:RouterNat"
CLUSTER = "gcp:container/cluster:Cluster"


def one(rendered: Any, type_token: str) -> dict[str, Any]:
    (found,) = [r.inputs for r in rendered.registrations if r.type == type_token]
    return found


def authorized(rendered: Any) -> list[dict[str, Any]]:
    return one(rendered, CLUSTER)["masterAuthorizedNetworksConfig"]["cidrBlocks"]


def worker_stacks() -> list[str]:
    return [w["stack"].rsplit("/", 1)[-1] for w in raw_stack_config(FLEET)[fleet.KEY]["workers"]]


def two_worker_fleet() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The shipped fleet narrowed to its first two workers, and their outputs as the fleet reads them."""
    raw = raw_stack_config(FLEET)
    workers = raw[fleet.KEY]["workers"][:2]
    references = {w["stack"]: run(w["stack"].rsplit("/", 1)[-1], raw_stack_config(w["stack"].rsplit("/", 1)[-1])).outputs for w in workers}
    return {**raw, fleet.KEY: {**raw[fleet.KEY], "workers": workers}}, references


def test_the_fleet_reserves_its_egress_address_and_exports_it() -> None:
    raw, references = two_worker_fleet()
    manager = run(FLEET, raw, references)
    address, nat = one(manager, ADDRESS), one(manager, NAT)
    assert (address["addressType"], address["region"]) == ("EXTERNAL", raw["gcp:region"])
    (link,) = nat["natIps"]
    assert nat["natIpAllocateOption"] == "MANUAL_ONLY" and link.endswith(f"/regions/{raw['gcp:region']}/addresses/{address['name']}")
    (cidr,) = manager.outputs[fleet.EGRESS_OUTPUT]
    assert ipaddress.ip_network(cidr).prefixlen == 32 and ipaddress.ip_network(cidr).is_global


def test_a_fleet_of_two_workers_is_admitted_by_both_without_a_hand_edit() -> None:
    """Each worker names the fleet stack; its cluster's authorized networks carry the fleet's exported
    egress (read from the fleet's outputs), after its own, and its contract says it admits the fleet."""
    raw, references = two_worker_fleet()
    manager = run(FLEET, raw, references)
    egress = manager.outputs[fleet.EGRESS_OUTPUT]
    for worker in raw[fleet.KEY]["workers"]:
        name = worker["stack"].rsplit("/", 1)[-1]
        own = raw_stack_config(name)
        rendered = run(name, own, {FLEET_STACK: manager.outputs})
        blocks = authorized(rendered)
        written = [n["cidrBlock"] for n in own["trainstack:cluster"]["authorizedNetworks"]]
        assert [b["cidrBlock"] for b in blocks] == [*written, *egress], name
        assert blocks[-1]["displayName"] == fleet.egress_name(FLEET_STACK)
        assert rendered.outputs[contract.OUTPUT]["admittedFleets"] == [FLEET_STACK]
    # Without the key, the worker's networks are its own: the egress comes from the key alone.
    name = worker_stacks()[0]
    own = raw_stack_config(name)
    bare = {**own, "trainstack:cluster": {k: v for k, v in own["trainstack:cluster"].items() if k != "admitFleets"}}
    assert [b["cidrBlock"] for b in authorized(run(name, bare, {FLEET_STACK: manager.outputs}))] == [
        n["cidrBlock"] for n in own["trainstack:cluster"]["authorizedNetworks"]
    ]


def test_the_shipped_workers_plan_the_egress_the_shipped_fleet_exports() -> None:
    """Planned offline from their stack files, the fleet and each worker agree: the fleet is rendered
    for the worker and the worker for the fleet, without either rendering the other forever."""
    egress = run(FLEET, raw_stack_config(FLEET)).outputs[fleet.EGRESS_OUTPUT]
    for name in worker_stacks():
        assert [b["cidrBlock"] for b in authorized(run(name, raw_stack_config(name)))][-1:] == egress, name


def test_a_fleet_without_a_stack_file_here_is_refused_offline_naming_the_key() -> None:
    """Offline, a worker reads its fleet from the fleet's stack file, as a job reads its platform's."""
    name = worker_stacks()[0]
    raw = merge(raw_stack_config(name), {"trainstack:cluster": {"admitFleets": ["organization/trainstack/no-such-fleet"]}})
    with pytest.raises(ConfigError, match=r"trainstack:cluster.admitFleets\[0\] = .*no stacks/Pulumi.no-such-fleet.yaml here to render that fleet offline"):
        run(name, raw)


def test_a_worker_before_its_fleet_is_deployed_plans_without_its_egress() -> None:
    """The first deployment: the workers go up before the fleet exists (or before an earlier fleet
    exports its egress); each admits nothing for it yet and converges at its next `up`."""
    name = worker_stacks()[0]
    own = raw_stack_config(name)
    rendered = run(name, own, {})
    assert [b["cidrBlock"] for b in authorized(rendered)] == [n["cidrBlock"] for n in own["trainstack:cluster"]["authorizedNetworks"]]


def test_the_fleet_refuses_a_worker_that_does_not_admit_it() -> None:
    raw, references = two_worker_fleet()
    first = raw[fleet.KEY]["workers"][0]["stack"]
    terms = references[first][contract.OUTPUT]
    closed = {**references, first: {**references[first], contract.OUTPUT: {**terms, "admittedFleets": ["organization/trainstack/another-fleet"]}}}
    with pytest.raises(ConfigError, match=r"trainstack:fleet.workers\[0\].stack = .*does not admit this fleet's manager.*admitFleets"):
        run(FLEET, raw, closed)
    # Open to any address, or a contract from before it said (addresses listed by hand): accepted.
    anyone = {**references, first: {**references[first], contract.OUTPUT: {**terms, "admittedFleets": [], "anyAddress": True}}}
    older = {**references, first: {**references[first], contract.OUTPUT: {k: v for k, v in terms.items() if k not in ("admittedFleets", "anyAddress")}}}
    for accepted in (anyone, older):
        assert run(FLEET, raw, accepted).outputs[fleet.EGRESS_OUTPUT]


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        ({"privateEndpoint": True}, r"admitFleets = \[.*\]: a fleet's manager reaches a worker at its public endpoint"),
        ({"admitFleets": [FLEET_STACK, FLEET_STACK]}, r"admitFleets\[1\] = .*names a fleet twice"),
        ({"admitFleets": ["a3ultra-fleet"]}, r"admitFleets\[0\] = 'a3ultra-fleet': must be a fully qualified stack name"),
        (
            {"authorizedNetworks": [{"cidrBlock": f"10.{i}.0.0/16"} for i in range(50)]},
            r"admitFleets = .*with authorizedNetworks lists 51 networks; GKE takes at most 50",
        ),
    ],
)
def test_a_worker_admitting_a_fleet_it_cannot_is_refused(cluster: dict[str, Any], message: str) -> None:
    name = worker_stacks()[0]
    with pytest.raises(ConfigError, match=message):
        run(name, merge(raw_stack_config(name), {"trainstack:cluster": cluster}), {})


def _read(monkeypatch: pytest.MonkeyPatch, outcome: Any) -> list[str] | None:
    def invoke(token: str, args: dict[str, Any]) -> Any:
        assert (token, args) == (remote.READ_STACK_OUTPUTS, {"name": FLEET_STACK})
        if isinstance(outcome, Exception):
            raise outcome
        return type("Read", (), {"value": {"outputs": outcome}})()

    monkeypatch.setattr(pulumi.runtime, "invoke", invoke)
    return remote.read_fleet_egress("trainstack:cluster.admitFleets[0]", FLEET_STACK)


def test_reading_a_fleets_egress(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's `unknown stack` (a fleet not deployed yet) and an older fleet's missing output
    admit nothing yet; any other read error, or an output that is no list of CIDRs, is refused at the key."""
    assert _read(monkeypatch, {fleet.EGRESS_OUTPUT: ["34.1.2.3/32"]}) == ["34.1.2.3/32"]
    assert _read(monkeypatch, Exception(f'unknown stack "{FLEET_STACK}"')) is None
    assert _read(monkeypatch, {"platform": {}}) is None
    with pytest.raises(ConfigError, match=r"admitFleets\[0\] = .*cannot read that stack \(403 forbidden\)"):
        _read(monkeypatch, Exception("403 forbidden"))
    for wrong in ("34.1.2.3/32", ["not a cidr"], ["34.1.2.3/32", "34.1.2.4/32"]):
        with pytest.raises(ConfigError, match=r"is it a trainstack fleet stack\?"):
            _read(monkeypatch, {fleet.EGRESS_OUTPUT: wrong})


def test_a_workers_plan_says_which_fleets_it_admits_and_what_is_missing() -> None:
    """The plan's summary and report name each admitted fleet with the egress read from it, or say
    the fleet is not deployed yet and which `up` brings its address (the first deployment's order)."""
    name = worker_stacks()[0]
    own = raw_stack_config(name)
    egress = run(FLEET, raw_stack_config(FLEET)).outputs[fleet.EGRESS_OUTPUT]
    deployed = plan.from_rendered(run(name, own, {FLEET_STACK: {fleet.EGRESS_OUTPUT: egress}}))
    assert deployed.summary()["admitsFleets"] == [{"stack": FLEET_STACK, "egress": egress}]
    first = plan.from_rendered(run(name, own, {}))
    assert first.summary()["admitsFleets"] == [{"stack": FLEET_STACK, "egress": []}]
    assert f"{FLEET_STACK}: no egress yet (the fleet is not deployed): up the fleet, then this stack again" in report.describe(
        first, Path("plan.json"), "table"
    )
    bare = {**own, "trainstack:cluster": {k: v for k, v in own["trainstack:cluster"].items() if k != "admitFleets"}}
    assert "admitsFleets" not in plan.from_rendered(run(name, bare, {})).summary()
