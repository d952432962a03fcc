"""A fake `gcloud` for tests: the listing and delete commands `trainstack reap` runs, with the flags
their reference pages give (cloud.google.com/sdk/gcloud/reference/<group>/<command>; an unknown
flag, a missing required one or an unknown command fails as gcloud does, exit 2), the API's JSON
fields under --format=json, deletes that wait and print `Deleted [...]`, and the refusals of the
real APIs:

- a network, subnetwork, disk or address still in use by something is refused as Compute Engine
  refuses it ("The <kind> resource '<name>' is already being used by '<user>'");
- a private services access connection is refused while a Managed Lustre instance on its network
  exists ("Producer services ... are still using this connection": hashicorp/
  terraform-provider-google#16275, pulumi/pulumi-gcp#3354);
- deleting a cluster deletes its node pools, and the nodes stop using their disks.

The project lives in $FAKE_GCLOUD_HOME/project.json (lists of API objects by kind); each call is
appended to calls.jsonl. Knobs: FAKE_GCLOUD_FAIL=<name>: deleting that resource fails (500);
FAKE_GCLOUD_NO_ACCOUNT=1: no account is logged in, and every API command fails as gcloud's
credential store refuses it (NO_ACCOUNT, the text gcloud prints).

Standard library only: it runs as `python -S cli.py ...` behind a `gcloud` shim.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

HOME = Path(os.environ["FAKE_GCLOUD_HOME"])
FAIL = os.environ.get("FAKE_GCLOUD_FAIL", "")
NO_ACCOUNT = os.environ.get("FAKE_GCLOUD_NO_ACCOUNT") == "1"
# What gcloud prints without an active account (googlecloudsdk core/credentials/store.py NoActiveAccountException).
NO_ACCOUNT_ERROR = """You do not currently have an active account selected.
Please run:

  $ gcloud auth login

to obtain new credentials.

If you have already logged in with a different account, run:

  $ gcloud config set account ACCOUNT

to select an already authenticated account to use."""
COMPUTE = "https://www.googleapis.com/compute/v1/"


class Refused(Exception):
    """An API error: exit 1 with `ERROR: (gcloud.<command>) <message>`."""


def tail(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def on_network(item: dict[str, Any], network: str) -> bool:
    nets = [item.get("network") or "", *(n["network"] for n in item.get("networks", []))]
    return any(net and tail(net) == network for net in nets)


def load() -> dict[str, list[dict[str, Any]]]:
    return json.loads((HOME / "project.json").read_text())


def save(project: dict[str, list[dict[str, Any]]]) -> None:
    (HOME / "project.json").write_text(json.dumps(project, indent=1))


def take(project: dict[str, list[dict[str, Any]]], kind: str, match: Any, label: str) -> dict[str, Any]:
    found = [item for item in project[kind] if match(item)]
    if not found:
        raise Refused(f"NOT_FOUND: {label} was not found")
    if tail(found[0]["name"]) == FAIL:
        raise Refused(f"INTERNAL: deleting {label} failed")
    project[kind].remove(found[0])
    return found[0]


def in_use(label: str, users: list[str]) -> None:
    if users:
        raise Refused(f"Could not fetch resource:\n - The {label} is already being used by '{users[0]}'")


# ---------------------------------------------------------------------------------------------
# Commands: (words, required flags, optional flags, has a positional NAME) -> handler


def listing(kind: str, where: Any = None) -> Any:
    def run(project: dict[str, Any], name: str | None, flags: dict[str, str]) -> None:
        items = [item for item in project[kind] if where is None or where(item, flags)]
        print(json.dumps(items, indent=2))

    return run


def delete_cluster(project: dict[str, Any], name: str | None, flags: dict[str, str]) -> None:
    cluster = take(project, "clusters", lambda c: c["name"] == name and c["location"] == flags["--location"], f"cluster {name}")
    for disk in project["disks"]:
        disk["users"] = [u for u in disk.get("users", []) if not tail(u).startswith(f"gke-{cluster['name']}")]
    deleted(f"projects/{flags['--project']}/locations/{cluster['location']}/clusters/{name}")


def delete_named(kind: str) -> Any:
    def run(project: dict[str, Any], name: str | None, flags: dict[str, str]) -> None:
        take(project, kind, lambda i: i["name"] == name, f"{kind} {name}")
        deleted(name or "")

    return run


def delete_disk(project: dict[str, Any], name: str | None, flags: dict[str, str]) -> None:
    [disk] = [d for d in project["disks"] if d["name"] == name and tail(d["zone"]) == flags["--zone"]] or [None]
    if disk is not None:
        in_use(f"disk resource 'projects/{flags['--project']}/zones/{flags['--zone']}/disks/{name}'", disk.get("users", []))
    take(project, "disks", lambda d: d is disk, f"disk {name}")
    deleted(f"{COMPUTE}projects/{flags['--project']}/zones/{flags['--zone']}/disks/{name}")


def delete_regional(kind: str) -> Any:
    def run(project: dict[str, Any], name: str | None, flags: dict[str, str]) -> None:
        if kind == "subnetworks":
            in_use(
                f"subnetwork resource 'projects/{flags['--project']}/regions/{flags['--region']}/subnetworks/{name}'",
                [f"projects/{flags['--project']}/locations/{c['location']}/clusters/{c['name']}" for c in project["clusters"] if c.get("subnetwork") == name],
            )
        take(project, kind, lambda i: i["name"] == name and tail(i["region"]) == flags["--region"], f"{kind} {name}")
        deleted(f"{COMPUTE}projects/{flags['--project']}/regions/{flags['--region']}/{kind}/{name}")

    return run


def delete_address(project: dict[str, Any], name: str | None, flags: dict[str, str]) -> None:
    if ("--global" in flags) == ("--region" in flags):
        raise Refused("ERROR: (gcloud.compute.addresses.delete) exactly one of --global, --region must be specified")
    if "--region" in flags:  # a regional address (a NAT's): deleted once its router is, as GCP refuses one in use
        region = flags["--region"]
        users = [r["name"] for r in project["routers"] if tail(r["region"]) == region and name in r.get("natIps", [])]
        in_use(f"address resource 'projects/{flags['--project']}/regions/{region}/addresses/{name}'", users)
        take(project, "addresses", lambda a: a["name"] == name and tail(a.get("region", "")) == region, f"address {name}")
        deleted(f"{COMPUTE}projects/{flags['--project']}/regions/{region}/addresses/{name}")
        return
    users = [f"services/servicenetworking.googleapis.com/{p['network']}" for p in project["peerings"] if name in p.get("reservedPeeringRanges", [])]
    in_use(f"address resource 'projects/{flags['--project']}/global/addresses/{name}'", users)
    take(project, "addresses", lambda a: a["name"] == name, f"address {name}")
    deleted(f"{COMPUTE}projects/{flags['--project']}/global/addresses/{name}")


def delete_network(project: dict[str, Any], name: str | None, flags: dict[str, str]) -> None:
    assert name is not None
    users = [
        f"{kind}/{item.get('name', item.get('peering'))}"
        for kind in ("subnetworks", "firewalls", "routers", "peerings", "addresses", "clusters", "filestore", "lustre")
        for item in project[kind]
        if on_network(item, name)
    ]
    in_use(f"network resource 'projects/{flags['--project']}/global/networks/{name}'", users)
    take(project, "networks", lambda n: n["name"] == name, f"network {name}")
    deleted(f"{COMPUTE}projects/{flags['--project']}/global/networks/{name}")


def delete_peering(project: dict[str, Any], name: str | None, flags: dict[str, str]) -> None:
    network = flags["--network"]
    if any(on_network(i, network) for i in project["lustre"]):
        raise Refused("Failed to delete connection; Producer services (e.g. CloudSQL, Cloud Memstore, etc.) are still using this connection.")
    found = [
        p for p in project["peerings"] if tail(p["network"]) == network and tail(p["service"]) == flags.get("--service", "servicenetworking.googleapis.com")
    ]
    if not found:
        raise Refused(f"NOT_FOUND: no connection on network {network}")
    project["peerings"].remove(found[0])
    print('Operation "operations/pssn.done" finished successfully.', file=sys.stderr)


def remove_bucket(project: dict[str, Any], name: str | None, flags: dict[str, str]) -> None:
    assert name is not None and name.startswith("gs://")
    bucket = name[len("gs://") :].rstrip("/")
    take(project, "buckets", lambda b: b["name"] == bucket, f"bucket {bucket}")
    print(f"Removing {name}...", file=sys.stderr)


def deleted(name: str) -> None:
    print(f"Deleted [{name}].", file=sys.stderr)


WIDE = {"--project", "--format", "--quiet"}
COMMANDS: dict[tuple[str, ...], tuple[set[str], set[str], bool, Any]] = {
    ("container", "clusters", "list"): (set(), set(), False, listing("clusters")),
    ("container", "clusters", "delete"): ({"--location"}, {"--async"}, True, delete_cluster),
    ("filestore", "instances", "list"): (set(), {"--location", "--region", "--zone"}, False, listing("filestore")),
    ("filestore", "instances", "delete"): (set(), {"--location", "--force", "--async"}, True, delete_named("filestore")),
    ("lustre", "instances", "list"): ({"--location"}, set(), False, listing("lustre", lambda i, f: f["--location"] in ("-", i["name"].split("/")[3]))),
    ("lustre", "instances", "delete"): (set(), {"--location", "--async"}, True, delete_named("lustre")),
    ("compute", "disks", "list"): (set(), {"--zones"}, False, listing("disks")),
    ("compute", "disks", "delete"): ({"--zone"}, set(), True, delete_disk),
    ("storage", "buckets", "list"): (set(), {"--raw"}, False, listing("buckets")),
    ("storage", "rm"): (set(), {"--recursive"}, True, remove_bucket),
    ("artifacts", "repositories", "list"): (set(), {"--location"}, False, listing("repositories")),
    ("artifacts", "repositories", "delete"): (set(), {"--location", "--async"}, True, delete_named("repositories")),
    # Without --global, global and regional addresses both (a regional one has its `region`).
    ("compute", "addresses", "list"): (
        set(),
        {"--global", "--regions"},
        False,
        listing("addresses", lambda a, flags: "--global" not in flags or "region" not in a),
    ),
    ("compute", "addresses", "delete"): (set(), {"--global", "--region"}, True, delete_address),
    ("compute", "networks", "list"): (set(), set(), False, listing("networks")),
    ("compute", "networks", "delete"): (set(), set(), True, delete_network),
    ("compute", "networks", "subnets", "list"): (set(), {"--network", "--regions"}, False, listing("subnetworks")),
    ("compute", "networks", "subnets", "delete"): ({"--region"}, set(), True, delete_regional("subnetworks")),
    ("compute", "firewall-rules", "list"): (set(), set(), False, listing("firewalls")),
    ("compute", "firewall-rules", "delete"): (set(), set(), True, delete_named("firewalls")),
    ("compute", "routers", "list"): (set(), {"--regions"}, False, listing("routers")),
    ("compute", "routers", "delete"): ({"--region"}, set(), True, delete_regional("routers")),
    ("compute", "resource-policies", "list"): (set(), {"--regions"}, False, listing("policies")),
    ("compute", "resource-policies", "delete"): ({"--region"}, set(), True, delete_regional("policies")),
    ("services", "vpc-peerings", "list"): ({"--network"}, {"--service"}, False, listing("peerings", lambda p, f: tail(p["network"]) == f["--network"])),
    ("services", "vpc-peerings", "delete"): ({"--network"}, {"--service", "--async"}, False, delete_peering),
}


def usage(message: str) -> NoReturn:
    print(f"ERROR: (gcloud) {message}", file=sys.stderr)
    sys.exit(2)


def main(argv: list[str]) -> NoReturn:
    with open(HOME / "calls.jsonl", "a") as log:
        log.write(json.dumps(argv) + "\n")
    words = [a for a in argv if not a.startswith("--")]
    flags = dict(([*a.split("=", 1), ""])[:2] for a in argv if a.startswith("--"))
    key = next((k for k in sorted(COMMANDS, key=len, reverse=True) if tuple(words[: len(k)]) == k), None)
    if key is None:
        usage(f"Invalid choice: {' '.join(words)!r}")
    required, optional, positional, handler = COMMANDS[key]
    rest = words[len(key) :]
    if unknown := set(flags) - required - optional - WIDE:
        usage(f"unrecognized arguments: {' '.join(sorted(unknown))}")
    if missing := required - set(flags):
        usage(f"argument {min(missing)}: Must be specified.")
    if len(rest) != (1 if positional else 0):
        usage(f"wrong positional arguments: {rest}")
    if "delete" in key and "--quiet" not in flags:
        usage("would prompt for confirmation (run with --quiet)")
    project = load()
    try:
        if NO_ACCOUNT:
            raise Refused(NO_ACCOUNT_ERROR)
        handler(project, rest[0] if rest else None, flags)
    except Refused as exc:
        print(f"ERROR: (gcloud.{'.'.join(key)}) {exc}", file=sys.stderr)
        sys.exit(1)
    save(project)
    sys.exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
