"""A fake `pulumi` for tests: it answers the commands the Automation API issues in a bench with
output shaped like the Go CLI's, keeps stacks in $FAKE_PULUMI_HOME, and takes signals the way
the Go CLI does:

- an update (up, refresh, destroy) cancels on its first SIGINT: it finishes the step under way,
  releases the stack's lock, prints `error: update canceled` and exits 255; a second SIGINT
  ends it at once;
- SIGTERM, SIGPIPE (a write to a closed pipe) and SIGKILL end it at once: the lock stays, and a
  resource being created stays in the state as a pending operation;
- any other command dies on SIGINT, as a Go program without a handler does.

Each process appends JSON lines to $FAKE_PULUMI_HOME/calls.jsonl: `start` (argv, pgid), `step`,
`held`, `signal`, `killed` and `exit` (code, canceled, terminated); one killed by a signal has
no `exit`.

Stacks are named `<name>` or, fully qualified, `organization/trainstack/<name>`, as in the DIY
backend.

Knobs (environment): FAKE_PULUMI_HOLD=<op>:<resource name>[@<stack>] (a step, of any stack or of
that one) or `stack init`: there the
process logs `held` and waits for the file $FAKE_PULUMI_HOME/release, so that a test can signal
while it is under way; FAKE_PULUMI_DIE_AT=<op>:<resource name>: the process SIGKILLs itself as
that step starts (an update killed from outside); FAKE_PULUMI_PROTECT=<resource name>,...: `up`
creates those resources with `protect` set; FAKE_PULUMI_PREVIEW=<JSON [[op, type, name], ...]>:
steps `preview` reports beside those `up` would take (a data store replaced, say).

`destroy` runs as the engine does (pulumi/pulumi@1b59498, pkg/resource/deploy): without
--skip-preview a preview first fails at a protected resource's delete step (step.go:647) and
nothing is deleted; with it, deletes run in layers of reverse dependency order (step_generator.go
ScheduleDeletes), a protected resource's delete fails and the run continues past it
(step_executor.go:447), skipping only what the protected resource depends on
(deployment_executor.go:513), then exits 255 naming it.

`up --event-log <file>` (the Automation API's `on_event`, for a CLI of this version) appends the
engine's events to the file as JSON lines, as the Go CLI does (pulumi/pulumi sdk/go/common/apitype
events.go): a `resourcePreEvent` as each step starts, a `resOutputsEvent` (with the step's op, URN,
type and the resource's inputs) as it ends, and a `cancelEvent` last; `timestamp` in Unix seconds.

Standard library only: it runs as `python -S cli.py ...` behind a `pulumi` shim.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

VERSION = "v3.200.0"
PROJECT = "trainstack"
HOME = Path(os.environ["FAKE_PULUMI_HOME"])
HOLD = os.environ.get("FAKE_PULUMI_HOLD", "")
HOLD_LIMIT_S = 120.0  # as long as the tests wait for an event: one that never releases fails rather than hangs
DIE_AT = os.environ.get("FAKE_PULUMI_DIE_AT", "")
PROTECT = set(filter(None, os.environ.get("FAKE_PULUMI_PROTECT", "").split(",")))
# Steps a preview reports beside `up`'s own (JSON: [[op, type, name], ...]), e.g. a data store replaced.
PREVIEW_STEPS = json.loads(os.environ.get("FAKE_PULUMI_PREVIEW", "[]"))
# (type, name, names of what it depends on) of what `up` creates, in order: the stack, its default
# provider, three cloud resources.
PLAN = [
    ("pulumi:pulumi:Stack", "{project}-{stack}", ()),
    ("pulumi:providers:gcp", "default_8_41_1", ()),
    ("gcp:compute/network:Network", "bench-net", ()),
    ("gcp:container/cluster:Cluster", "bench-cluster", ("bench-net",)),
    ("gcp:container/nodePool:NodePool", "bench-gpus", ("bench-cluster",)),
]
KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n"
# The flags the Automation API passes in a bench; any other is an error, so that a new one is noticed.
VALUE_FLAGS = {"--stack", "--exec-kind", "--page-size", "--page", "--plaintext", "--event-log"}
# The inputs `up` records (what the bench's engine marks read: a GPU node pool by its machine).
INPUTS = {"bench-gpus": {"name": "bench-gpus", "nodeConfig": {"machineType": "a3-ultragpu-8g"}}}
BOOL_FLAGS = {"--non-interactive", "--yes", "--skip-preview", "--json", "--show-secrets", "--diff"}
CONFLICT = "[409] Conflict: Another update is currently in progress."
HEADINGS = {"up": "Updating", "refresh": "Refreshing", "destroy": "Destroying"}
TENSES = {"create": ("creating", "created"), "delete": ("deleting", "deleted")}


class Failed(Exception):
    """A command error: its message goes to stderr as `error: ...`, exit code 255."""


def log(event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, "pid": os.getpid(), "t": time.time(), **fields}) + "\n"
    fd = os.open(HOME / "calls.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def out(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def hold(point: str, stack: str = "") -> None:
    """Wait at `point` while it is the held one (of any stack, or of `stack` as `<point>@<stack>`),
    until the test releases it."""
    if HOLD not in (point, f"{point}@{short(stack)}"):
        return
    log("held", at=point)
    deadline = time.monotonic() + HOLD_LIMIT_S
    while not (HOME / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# ---------------------------------------------------------------------------------------------
# The backend: one JSON file per stack, a lock file while an update runs


def short(stack: str) -> str:
    """A stack's name in this project: `organization/<project>/<name>` (the DIY backend's one
    organization, pulumi/pulumi pkg/backend/diy) is `<name>`."""
    parts = stack.split("/")
    if len(parts) == 1:
        return stack
    if len(parts) != 3 or parts[0] != "organization" or parts[1] != PROJECT:
        raise Failed(f"stack name {stack!r} must be <name> or organization/{PROJECT}/<name>")
    return parts[2]


def path(stack: str, suffix: str = ".json") -> Path:
    return HOME / "stacks" / f"{short(stack)}{suffix}"


def load(stack: str) -> dict[str, Any]:
    if not path(stack).exists():
        raise Failed(f"no stack named '{stack}' found")
    return json.loads(path(stack).read_text())


def save(stack: str, state: dict[str, Any]) -> None:
    temporary = path(stack, ".tmp")
    temporary.write_text(json.dumps(state, indent=1))
    temporary.replace(path(stack))


def urn(stack: str, type_: str, name: str) -> str:
    return f"urn:pulumi:{short(stack)}::{PROJECT}::{type_}::{name}"


def resource(stack: str, type_: str, name: str, needs: tuple[str, ...] = ()) -> dict[str, Any]:
    stack_urn = urn(stack, PLAN[0][0], PLAN[0][1].format(project=PROJECT, stack=short(stack)))
    item: dict[str, Any] = {"urn": urn(stack, type_, name), "custom": type_ != PLAN[0][0], "type": type_}
    if item["custom"]:
        item.update(id=f"{name}-id", inputs=INPUTS.get(name, {}), outputs={}, parent=stack_urn)
    if item["custom"] and not type_.startswith("pulumi:providers:"):
        item["provider"] = f"{urn(stack, PLAN[1][0], PLAN[1][1])}::{PLAN[1][1]}-id"
    types = {n: t for t, n, _ in PLAN}
    if needs:
        item["dependencies"] = [urn(stack, types[n], n) for n in needs]
    if name in PROTECT:
        item["protect"] = True
    return item


def needs(item: dict[str, Any]) -> set[str]:
    """The URNs a resource depends on: its dependencies, parent and provider."""
    return {
        *item.get("dependencies", []),
        *([item["parent"]] if "parent" in item else []),
        *([item["provider"].rsplit("::", 1)[0]] if "provider" in item else []),
    }


def protect_error(item: dict[str, Any]) -> str:
    return (
        f"resource {item['urn']!r} cannot be deleted\nbecause it is protected. To unprotect the resource, either remove the "
        f"`protect` flag from the resource in your Pulumi program and run `pulumi up`, or use the command:\n"
        f"`pulumi state unprotect '{item['urn']}'`"
    )


# ---------------------------------------------------------------------------------------------
# Updates: up, refresh, destroy


class Update:
    """An update holding the stack's lock, cancellable like the Go CLI's."""

    def __init__(self, kind: str, stack: str, event_log: str | None = None):
        self.kind, self.stack, self.state = kind, stack, load(stack)
        self.event_log, self.sequence = event_log, 0
        self.cancelled, self.interrupts, self.changes = False, 0, 0
        signal.signal(signal.SIGINT, self._interrupt)
        if path(stack, ".lock").exists():
            raise Failed(CONFLICT)
        path(stack, ".lock").write_text(str(os.getpid()))
        self.started = now()

    def _interrupt(self, signum: int, frame: FrameType | None) -> None:
        self.interrupts += 1
        log("signal", signal="SIGINT")
        if self.interrupts == 1:
            self.cancelled = True
            out("^C received; cancelling. If you would like to terminate immediately, press ^C again.")
            return
        out("^C received; terminating")
        log("exit", code=255, terminated=True)
        os._exit(255)

    def step(self, symbol: str, op: str, item: dict[str, Any]) -> None:
        """One resource step (op: create or delete), a pending operation in the state while it runs."""
        if self.cancelled:
            raise Canceled
        type_, name = item["type"], item["urn"].rsplit("::", 1)[-1]
        doing, done = TENSES[op]
        pending = {"resource": item, "type": doing}
        self.state["pending_operations"].append(pending)
        save(self.stack, self.state)
        log("step", op=self.kind, urn=item["urn"])
        if f"{self.kind}:{name}" == DIE_AT:
            log("killed", signal="SIGKILL")
            os.kill(os.getpid(), signal.SIGKILL)
        out(f" {symbol}  {type_} {name} {doing} (0s)")
        self.engine_event("resourcePreEvent", op, item)
        hold(f"{self.kind}:{name}", self.stack)
        self.state["pending_operations"].remove(pending)
        resources = self.state["resources"]
        if op == "delete":
            resources.remove(item)
        else:
            resources.append(item)
        save(self.stack, self.state)
        self.changes += 1
        self.engine_event("resOutputsEvent", op, item)
        out(f" {symbol}  {type_} {name} {done} (1s)")

    def engine_event(self, kind: str, op: str = "", item: dict[str, Any] | None = None) -> None:
        """One line of the event log, if there is one."""
        if self.event_log is None:
            return
        body: dict[str, Any] = {}
        if item is not None:
            state = {"type": item["type"], "urn": item["urn"], "custom": item["custom"], "inputs": item.get("inputs", {})}
            body = {"metadata": {"op": op, "urn": item["urn"], "type": item["type"], "provider": "", "new": state}}
        self.sequence += 1
        with open(self.event_log, "a") as log_file:
            log_file.write(json.dumps({"sequence": self.sequence, "timestamp": int(time.time()), kind: body}) + "\n")

    def finish(self, ok: bool) -> None:
        self.state["history"].insert(
            0,
            {
                "kind": self.kind,
                "startTime": self.started,
                "message": "",
                "environment": {"exec.kind": "auto.local"},
                "config": {},
                "result": "succeeded" if ok else "failed",
                "endTime": now(),
                "version": len(self.state["history"]) + 1,
                "resourceChanges": {"same": len(self.state["resources"])} if self.kind == "refresh" else {self.kind: self.changes},
            },
        )
        save(self.stack, self.state)
        path(self.stack, ".lock").unlink()


class Canceled(Exception):
    """The update stops between steps after a SIGINT."""


def run_update(kind: str, stack: str, flags: dict[str, list[Any]]) -> int:
    update = Update(kind, stack, flags.get("--event-log", [None])[-1])
    out(f"{HEADINGS[kind]} ({stack}):")
    try:
        {"up": up, "refresh": refresh, "destroy": destroy}[kind](update, flags)
    except Canceled:
        update.finish(ok=False)
        sys.stderr.write("error: update canceled\n")
        log("exit", code=255, canceled=True)
        return 255
    except Failed as exc:
        update.finish(ok=False)
        sys.stderr.write(f"error: {exc}\n")
        log("exit", code=255, error=str(exc))
        return 255
    update.finish(ok=True)
    update.engine_event("cancelEvent")
    log("exit", code=0)
    return 0


def up(update: Update, flags: dict[str, list[Any]]) -> None:
    have = {item["urn"] for item in update.state["resources"]}
    for type_, name, depends in PLAN:
        item = resource(update.stack, type_, name.format(project=PROJECT, stack=short(update.stack)), depends)
        if item["urn"] not in have:
            update.step("+", "create", item)
    update.state["outputs"] = {"kubeconfig": {"value": KUBECONFIG, "secret": True}}
    out("Outputs:\n    kubeconfig: [secret]\n")
    out(f"Resources:\n    + {update.changes} created\n\nDuration: 1s")


SYMBOLS = {"create": "+", "update": "~", "replace": "+-", "delete": "-"}


def preview(stack: str | None, words: list[str], flags: dict[str, list[Any]]) -> None:
    """What `up` would do, changing nothing and taking no lock: a line a step; with --event-log, the
    engine's events as the Automation API reads them (sdk/python/lib/pulumi/automation/events.py):
    a resourcePreEvent a step, the summaryEvent with its counts by op, and the cancelEvent that
    ends the stream."""
    name = needed(stack)
    have = {item["urn"] for item in load(name)["resources"]}
    steps = []
    for type_, label, depends in PLAN:
        item = resource(name, type_, label.format(project=PROJECT, stack=short(name)), depends)
        steps.append(("same" if item["urn"] in have else "create", type_, item["urn"]))
    steps += [(op, type_, urn(name, type_, label)) for op, type_, label in PREVIEW_STEPS]
    out(f"Previewing update ({name}):")
    counts: dict[str, int] = {}
    for op, type_, item_urn in steps:
        counts[op] = counts.get(op, 0) + 1
        if op != "same":
            out(f" {SYMBOLS[op]}  {type_} {item_urn.rsplit('::', 1)[-1]} {op}")
    out("Resources:\n" + "\n".join(f"    {n} to {op}" for op, n in counts.items() if op != "same"))
    events: list[dict[str, Any]] = [{"resourcePreEvent": {"metadata": {"op": op, "urn": u, "type": t, "provider": ""}}} for op, t, u in steps]
    events += [{"summaryEvent": {"maybeCorrupt": False, "durationSeconds": 1, "resourceChanges": counts, "PolicyPacks": {}}}, {"cancelEvent": {}}]
    for target in flags.get("--event-log", []):
        with open(target, "a", encoding="utf-8") as log_file:
            log_file.writelines(json.dumps({"sequence": sequence, "timestamp": int(time.time()), **event}) + "\n" for sequence, event in enumerate(events))


def refresh(update: Update, flags: dict[str, list[Any]]) -> None:
    """Pending updates and deletes are resolved by reading the resources back; pending creates
    stay (clearing them takes --clear-pending-creates, or an interactive answer)."""
    state = update.state
    creates = [op for op in state["pending_operations"] if op["type"] == "creating"]
    if creates:
        out(f"warning: Attempting to deploy or update resources with {len(creates)} pending operations from previous deployment.")
        for op in creates:
            out(f"  * {op['resource']['urn']}, interrupted while creating")
    state["pending_operations"] = creates
    out(f"Resources:\n    {len(state['resources'])} unchanged\n\nDuration: 1s")


def destroy(update: Update, flags: dict[str, list[Any]]) -> None:
    everything = update.state["resources"]
    guarded = [item for item in everything if item.get("protect")]
    if guarded and "--skip-preview" not in flags:
        out(f"Previewing destroy ({update.stack}):")
        raise Failed(protect_error(guarded[0]))
    by_urn = {item["urn"]: item for item in everything}
    remaining, kept, errors = list(everything), set(), []
    while remaining:
        layer = [item for item in remaining if not any(item["urn"] in needs(other) for other in remaining if other is not item)]
        for item in reversed(layer):
            remaining.remove(item)
            if item["urn"] in kept:
                continue
            if item.get("protect"):
                errors.append(protect_error(item))
                kept |= closure(item, by_urn)
                continue
            update.step("-", "delete", item)
    if errors:
        raise Failed("\n".join(errors))
    update.state["outputs"] = {}
    out(f"Resources:\n    - {update.changes} deleted\n\nDuration: 1s")
    out("The resources in the stack have been deleted, but the history and configuration associated with the stack are still maintained.")
    out(f"If you want to remove the stack completely, run `pulumi stack rm {update.stack}`.")


def closure(item: dict[str, Any], by_urn: dict[str, dict[str, Any]]) -> set[str]:
    """Everything `item` depends on, transitively."""
    found: set[str] = set()
    todo = [u for u in needs(item) if u in by_urn]
    while todo:
        current = todo.pop()
        if current not in found:
            found.add(current)
            todo += [u for u in needs(by_urn[current]) if u in by_urn]
    return found


# ---------------------------------------------------------------------------------------------
# The other commands


def version(stack: str | None, words: list[str], flags: dict[str, list[Any]]) -> None:
    out(VERSION)


def stack_init(stack: str | None, words: list[str], flags: dict[str, list[Any]]) -> None:
    name = words[0]
    if path(name).exists():
        raise Failed(f"stack '{name}' already exists")
    hold("stack init")
    path(name).parent.mkdir(parents=True, exist_ok=True)
    save(name, {"resources": [], "pending_operations": [], "config": {}, "outputs": {}, "history": []})
    out(f"Created stack '{name}'")


def stack_select(stack: str | None, words: list[str], flags: dict[str, list[Any]]) -> None:
    load(needed(stack))


def stack_rm(stack: str | None, words: list[str], flags: dict[str, list[Any]]) -> None:
    name = words[0]
    state = load(name)
    if path(name, ".lock").exists():
        raise Failed(CONFLICT)
    if state["resources"]:
        raise Failed(
            f"'{name}' still has resources; removal rejected. Possible actions:\n"
            f"- Make sure that '{name}' is the stack that you want to destroy\n"
            "- Run `pulumi destroy` to delete the resources, then run `pulumi stack rm`\n"
            "- Run `pulumi stack rm --force` to override this error"
        )
    path(name).unlink()  # pending operations go with it: nothing records them any more
    out(f"Stack '{name}' has been removed!")


def stack_export(stack: str | None, words: list[str], flags: dict[str, list[Any]]) -> None:
    state = load(needed(stack))
    deployment: dict[str, Any] = {"manifest": {"time": now(), "magic": "0" * 64, "version": VERSION}, "secrets_providers": {"type": "service"}}
    if state["resources"]:
        deployment["resources"] = state["resources"]
    if state["pending_operations"]:
        deployment["pending_operations"] = state["pending_operations"]
    out(json.dumps({"version": 3, "deployment": deployment}, indent=4))


def stack_output(stack: str | None, words: list[str], flags: dict[str, list[Any]]) -> None:
    outputs = load(needed(stack))["outputs"]
    shown = "--show-secrets" in flags
    out(json.dumps({k: v["value"] if shown or not v["secret"] else "[secret]" for k, v in outputs.items()}, indent=2))


def stack_history(stack: str | None, words: list[str], flags: dict[str, list[Any]]) -> None:
    history = load(needed(stack))["history"]
    size = int(flags.get("--page-size", [len(history) or 1])[-1])
    page = int(flags.get("--page", [1])[-1])
    out(json.dumps(history[(page - 1) * size : page * size], indent=4))


def config_set_all(stack: str | None, words: list[str], flags: dict[str, list[Any]]) -> None:
    name = needed(stack)
    state = load(name)
    for item in flags.get("--plaintext", []) + flags.get("--secret", []):
        key, _, value = item.partition("=")
        state["config"][key] = value
    save(name, state)


def install(stack: str | None, words: list[str], flags: dict[str, list[Any]]) -> None:
    out("Installing dependencies...")
    out("Finished installing dependencies")


def cancel(stack: str | None, words: list[str], flags: dict[str, list[Any]]) -> None:
    name = needed(stack)
    load(name)
    if not path(name, ".lock").exists():
        raise Failed(f"[400] Bad Request: stack '{name}' has no update in progress")
    path(name, ".lock").unlink()
    out(f"The currently running update for '{name}' has been canceled!")


COMMANDS = {
    ("version",): version,
    ("stack", "init"): stack_init,
    ("stack", "select"): stack_select,
    ("stack", "rm"): stack_rm,
    ("stack", "export"): stack_export,
    ("stack", "output"): stack_output,
    ("stack", "history"): stack_history,
    ("config", "set-all"): config_set_all,
    ("cancel",): cancel,
    ("preview",): preview,
    ("install",): install,
}
UPDATES = ("up", "refresh", "destroy")


def needed(stack: str | None) -> str:
    if stack:
        return stack
    raise Failed("no stack selected; please use `pulumi stack select` to choose one")


def parse(argv: list[str]) -> tuple[list[str], dict[str, list[Any]]]:
    """Positional words and flags (each a list of its values); an unknown flag is an error."""
    words: list[str] = []
    flags: dict[str, list[Any]] = {}
    args = iter(argv)
    for arg in args:
        if arg == "--":
            words.extend(args)
        elif arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name in VALUE_FLAGS:
                flags.setdefault(name, []).append(value if eq else next(args))
            elif name in BOOL_FLAGS:
                flags[name] = [True]
            else:
                raise Failed(f"unknown flag: {name}")
        else:
            words.append(arg)
    return words, flags


def main(argv: list[str]) -> NoReturn:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # die on a closed pipe, as Go does on stdout
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # until an update installs its handler
    signal.signal(signal.SIGTERM, _terminated)
    log("start", argv=argv, pgid=os.getpgrp())
    code = 0
    try:
        words, flags = parse(argv)
        stack = flags.get("--stack", [None])[-1]
        if words[:1] and words[0] in UPDATES:
            code = run_update(words[0], needed(stack), flags)
        else:
            key = tuple(words[:2]) if tuple(words[:2]) in COMMANDS else tuple(words[:1])
            if key not in COMMANDS:
                raise Failed(f"unknown command {' '.join(words)!r} for the fake pulumi")
            COMMANDS[key](stack, words[len(key) :], flags)
            log("exit", code=0)
    except Failed as exc:
        sys.stderr.write(f"error: {exc}\n")
        log("exit", code=255, error=str(exc))
        code = 255
    sys.stdout.flush()
    sys.exit(code)


def _terminated(signum: int, frame: FrameType | None) -> None:
    log("killed", signal="SIGTERM")
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


if __name__ == "__main__":
    main(sys.argv[1:])
