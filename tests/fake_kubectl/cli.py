"""A fake `kubectl` for tests: the read-only calls `trainstack status` makes, served from a
cluster's objects, as kubectl answers them.

- `kubectl [--kubeconfig F] [--context C] get <resource> -A -o json`: a List of that resource's
  objects (a resource is its kind's plural, lower case, optionally with its API group:
  `workloads.kueue.x-k8s.io`); a resource the cluster's file lists under `absent` fails as
  kubectl does for a type the server does not have (exit 1).
- `get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/<cq>/pendingworkloads`: the
  PendingWorkloadsSummary saved for that queue (the visibility API serves no name: none is sent).
- `logs <pod> -n <ns> --tail=N --all-containers=true`: the last N lines of the saved log.
- any other verb fails: status must change nothing.

The cluster is chosen as kubectl chooses its context: --context, else the kubeconfig's
`current-context:`; its objects are $FAKE_KUBECTL_HOME/<context>.json (a List, with an optional
`absent` list of resources) and its logs <context>.logs/<ns>/<pod>.log. Each call is appended to
calls.jsonl. Standard library only: it runs as `python -S cli.py ...` behind a `kubectl` shim.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, NoReturn

HOME = Path(os.environ["FAKE_KUBECTL_HOME"])


def die(message: str, code: int = 1) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(code)


def context_of(flags: dict[str, str]) -> str:
    if "--context" in flags:
        return flags["--context"]
    if "--kubeconfig" not in flags:
        die("no configuration has been provided")
    text = Path(flags["--kubeconfig"]).read_text()
    found = re.search(r"^current-context:\s*(\S+)", text, re.MULTILINE)
    if not found:
        die("current-context is not set")
    return found.group(1)


def main(argv: list[str]) -> None:
    flags: dict[str, str] = {}
    words: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg in ("--kubeconfig", "--context", "-n", "-o"):
            flags[arg] = next(args)
        elif arg.startswith("--") and "=" in arg:
            key, _, value = arg.partition("=")
            flags[key] = value
        elif arg.startswith("-"):
            flags[arg] = ""
        else:
            words.append(arg)
    with (HOME / "calls.jsonl").open("a") as log:
        log.write(json.dumps(argv) + "\n")
    context = context_of(flags)
    path = HOME / f"{context}.json"
    if not path.is_file():
        die(f'context "{context}" does not exist')
    cluster: dict[str, Any] = json.loads(path.read_text())
    verb = words[0] if words else ""
    if verb == "get" and "--raw" in flags:
        raw_get(cluster, flags["--raw"])
    elif verb == "get" and len(words) == 2 and flags.get("-o") == "json" and "-A" in flags:
        resource = words[1]
        plural = resource.split(".", 1)[0]
        if resource in cluster.get("absent", []):
            die(f'the server doesn\'t have a resource type "{plural}"')
        items = [i for i in cluster["items"] if i.get("kind", "").lower() + "s" == plural]
        print(json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}))
    elif verb == "logs" and len(words) == 2:
        logs(context, flags["-n"], words[1], int(flags.get("--tail", "-1")))
    else:
        die(f"fake kubectl: {' '.join(argv)} is not a read-only call trainstack status makes")


def raw_get(cluster: dict[str, Any], path: str) -> None:
    found = re.fullmatch(r"/apis/visibility\.kueue\.x-k8s\.io/v1beta2/clusterqueues/([^/]+)/pendingworkloads", path)
    summaries = cluster.get("pending", {})
    if not found or found.group(1) not in summaries:
        die(f"the server could not find the requested resource (get {path})")
    print(
        json.dumps({"kind": "PendingWorkloadsSummary", "apiVersion": "visibility.kueue.x-k8s.io/v1beta2", "metadata": {}, "items": summaries[found.group(1)]})
    )


def logs(context: str, namespace: str, pod: str, tail: int) -> None:
    path = HOME / f"{context}.logs" / namespace / f"{pod}.log"
    if not path.is_file():
        die(f'pods "{pod}" not found')
    lines = path.read_text().splitlines()
    print("\n".join(lines[-tail:] if tail >= 0 else lines))


if __name__ == "__main__":
    main(sys.argv[1:])
