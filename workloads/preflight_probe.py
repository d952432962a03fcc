"""The preflight's probe: parses nccl-tests and DCGM output and judges it; also the program the
preflight containers run (`python3 preflight_probe.py node|fabric|warden`).

Standard library only and self-contained: the job mounts this very file from a ConfigMap into its
preflight init containers, and `trainstack metrics preflight` imports it, so the report a user reads and
the verdict that gated the job come from one parser.

Formats, from their sources:
- nccl-tests (NVIDIA/nccl-tests a0b82b2 src/util.cu writeResultHeader, writeResultFooter): a header of
  `#` lines, one row a message size of 13 columns (size, count, type, redop, root, then time, algbw,
  busbw, #wrong out of place and again in place; #wrong is `N/A` where not checked), then
  `# Out of bounds values : N OK|FAILED` and `# Avg bus bandwidth : X`. Logs copied from terminals may
  lose the `#`. The redop column tells the collective: `none` an all-gather, `sum` an all-reduce.
- dcgmi diag (NVIDIA/DCGM 72fa3fe dcgmi/Diag.cpp DIAG_HEADER, DIAG_DATA, HelperDisplayDiagResult): a
  `| Diagnostic | Result |` table; each row names a test and its result (Pass, Fail, Warn, Skip, with
  ` - All` or per-entity rows `GPU3: Fail`), section rows (`-----  Hardware  ---`) between them, and
  wrapped message rows with an empty first column.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

NODE_FILE = "/run/preflight/node"
ALL_NODES = "*"  # the node of a check that spans them all (the warden taints no node for it)
FAILED_EXIT = 3  # a check failed (catalog.preflight.FAILED_EXIT_CODE)
WINDOW = (2 << 30, 8 << 30)  # the sizes the marks are defined over (catalog.preflight.SIZES_BYTES)
REDOPS = {"none": "all_gather", "sum": "all_reduce"}
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)((?:\s+\S+){8})\s*$")
_AVG = re.compile(r"^#?\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+)")
_OOB = re.compile(r"^#?\s*Out of bounds values\s*:\s*(\d+)")
_HEADER = re.compile(r"^#?\s*size\s+count\s+type\s+redop\s+root\s+time\s+algbw\s+busbw")
_CONCLUDED = re.compile(r"Collective test concluded:\s*(\w+)_perf")


class ProbeError(ValueError):
    """Output that is not what nccl-tests or dcgmi print."""


@dataclass(frozen=True)
class NcclRow:
    size: int
    busbw_out: float
    busbw_in: float
    wrong: int  # wrong elements, out of place and in place (0 where unchecked)


@dataclass(frozen=True)
class NcclRun:
    collective: str
    rows: tuple[NcclRow, ...]
    avg_busbw: float | None  # None: the run stopped before its footer
    out_of_bounds: int | None


@dataclass(frozen=True)
class DcgmTest:
    section: str
    name: str
    result: str  # Pass, Fail, Warn, Skip
    detail: str = ""


@dataclass(frozen=True)
class Check:
    """One judged measurement: `verdict` is pass, fail or info (measured, nothing to judge it by)."""

    check: str
    verdict: str
    measured: str
    threshold: str = ""
    node: str = ""


@dataclass
class Report:
    machine: str
    checks: list[Check] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return "fail" if any(c.verdict == "fail" for c in self.checks) else "pass"

    def as_dict(self) -> dict[str, object]:
        return {"machine": self.machine, "verdict": self.verdict, "checks": [asdict(c) for c in self.checks]}


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ProbeError(f"not a number: {text!r}") from None


def _wrong(text: str) -> int:
    return 0 if text == "N/A" else int(_number(text))


def parse_nccl(text: str) -> list[NcclRun]:
    """Every nccl-tests run in `text`, in order (a run starts at its table header)."""
    runs: list[NcclRun] = []
    rows: list[NcclRow] = []
    redop = ""
    started = False

    def close(avg: float | None, oob: int | None, name: str = "") -> None:
        nonlocal rows, started, redop
        collective = name or REDOPS.get(redop, redop or "unknown")
        runs.append(NcclRun(collective, tuple(rows), avg, oob))
        rows, started, redop = [], False, ""

    oob: int | None = None
    for line in text.splitlines():
        if _HEADER.match(line.strip()):
            if started:
                close(None, None)
            started, oob = True, None
            continue
        if not started:
            continue
        if match := _ROW.match(line):
            cells = match.group(6).split()
            redop = match.group(4)
            rows.append(NcclRow(int(match.group(1)), _number(cells[2]), _number(cells[6]), _wrong(cells[3]) + _wrong(cells[7])))
        elif match := _OOB.match(line.strip()):
            oob = int(match.group(1))
        elif match := _AVG.match(line.strip()):
            close(_number(match.group(1)), oob)
    if started:
        close(None, oob)
    if not runs:
        raise ProbeError("no nccl-tests result table (a '# size count type redop root time algbw busbw ...' header)")
    for run in runs:
        if not run.rows and run.avg_busbw is None:
            raise ProbeError(f"an nccl-tests table ({run.collective}) with no rows and no footer")
    return runs


_DCGM_ROW = re.compile(r"^\|\s?(.*?)\s*\|\s?(.*?)\s*\|$")
_SECTION = re.compile(r"^[|+]-+\s+(\w[\w ]*?)\s+-+\+")
RESULTS = ("Pass", "Fail", "Warn", "Skip")


def parse_dcgm(text: str) -> list[DcgmTest]:
    """The tests of a `dcgmi diag` table, with each failure's message rows joined to it."""
    tests: list[DcgmTest] = []
    section = ""
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("| Diagnostic") and "Result" in line:
            inside = True
            continue
        if not inside:
            continue
        if match := _SECTION.match(line):
            section = match.group(1)
            continue
        match = _DCGM_ROW.match(line)
        if not match:
            continue
        name, value = match.group(1), match.group(2)
        result = next((r for r in RESULTS if value.startswith(r) or f": {r}" in value), "")
        if section == "Metadata" or not value:
            continue
        if result and name:
            tests.append(DcgmTest(section, name, result, value[len(result) :].lstrip(" -") if value.startswith(result) else value))
        elif result and tests:  # a per-entity row (`GPU3: Fail`) of the test above
            last = tests[-1]
            worst = "Fail" if "Fail" in (result, last.result) else last.result
            tests[-1] = DcgmTest(last.section, last.name, worst, f"{last.detail} {value}".strip())
        elif tests and tests[-1].result == "Fail":  # `Error`/`Warning` rows and their wrapped lines
            last = tests[-1]
            tests[-1] = DcgmTest(last.section, last.name, last.result, f"{last.detail}{value if last.detail else ' ' + value}".strip())
    if not inside:
        raise ProbeError("no dcgmi diag table (a '| Diagnostic | Result |' header)")
    if not tests:
        raise ProbeError("a dcgmi diag table with no test rows")
    return tests


def judge_nccl(runs: Iterable[NcclRun], threshold: float | None, node: str = "", window: tuple[int, int] = WINDOW) -> list[Check]:
    """Per collective: each message size's in-place bus bandwidth as information, and the average bus
    bandwidth over the sizes in `window` (out of place and in place, as nccl-tests averages its
    "Avg bus bandwidth": src/common.cu BenchTime, `bw[0] /= bw_count[0]`) against the mark, which the
    health checker defines over 2G..8G. Wrong elements, out-of-bounds values, an unfinished run and a
    run without a size in the window fail."""
    checks: list[Check] = []
    mark = f">= {threshold:g} GB/s" if threshold is not None else ""
    low, high = window
    for run in runs:
        name = f"nccl {run.collective}"
        for row in run.rows:
            checks.append(Check(f"{name} {row.size} B", "fail" if row.wrong else "info", f"{row.busbw_in:g} GB/s busbw", node=node))
        measured = [bw for row in run.rows if low <= row.size <= high for bw in (row.busbw_out, row.busbw_in)]
        if run.avg_busbw is None:
            checks.append(Check(f"{name} average", "fail", f"incomplete: the run stopped after {len(run.rows)} sizes", mark, node))
        elif not measured:
            checks.append(Check(f"{name} average", "fail", f"no message size in {low}..{high} B to judge", mark, node))
        else:
            average = round(sum(measured) / len(measured), 2)
            ok = (threshold is None or average >= threshold) and not run.out_of_bounds
            checks.append(Check(f"{name} average", "pass" if ok else "fail", f"{average:g} GB/s busbw over {low}..{high} B", mark, node))
    return checks


def judge_dcgm(tests: Iterable[DcgmTest], node: str = "") -> list[Check]:
    """Each DCGM test: Fail fails; Pass, Warn and Skip pass (a Warn is kept in `measured`)."""
    return [Check(f"dcgm {t.name}", "fail" if t.result == "Fail" else "pass", f"{t.result} {t.detail}".strip(), node=node) for t in tests]


def report(text: str, machine: str, threshold: float | None) -> Report:
    """Everything `text` holds: nccl-tests runs and dcgmi diag tables; a ProbeError if neither."""
    result = Report(machine)
    found = False
    try:
        result.checks += judge_nccl(parse_nccl(text), threshold)
        found = True
    except ProbeError as nccl_error:
        error = nccl_error
    try:
        result.checks += judge_dcgm(parse_dcgm(text))
        found = True
    except ProbeError:
        pass
    if not found:
        raise ProbeError(f"{error}; and no dcgmi diag table")
    return result


# ---------------------------------------------------------------------------------------------
# In the pod: the node check, the fabric test and the warden.


def _run(command: Sequence[str], timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    print("+", " ".join(command), flush=True)
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def _fail(node: str, checks: list[Check]) -> int:
    """Name each failed check and its node on stdout and in the termination message; FAILED_EXIT."""
    failed = [c for c in checks if c.verdict == "fail"]
    lines = [f"node={c.node or node} check={c.check.replace(' ', '_')} measured={c.measured!r} threshold={c.threshold!r}" for c in failed]
    print("\n".join(["PREFLIGHT FAILED", *lines]), flush=True)
    try:
        with open(os.environ.get("TERMINATION_LOG", "/dev/termination-log"), "w") as out:
            out.write("\n".join(lines)[:4000])
    except OSError:
        pass
    return FAILED_EXIT


def node_checks(gpus: int, smi: str, dcgm_level: int, node: str) -> list[Check]:
    """GPU count, uncorrected ECC errors, pending retired pages or row remaps, NVLink state, and the
    DCGM diagnostic (which also fails on an XID raised while it runs) where dcgmi is installed."""
    checks: list[Check] = []
    query = _run([smi, "--query-gpu=index,ecc.errors.uncorrected.volatile.total,remapped_rows.pending", "--format=csv,noheader,nounits"])
    lines = [line for line in query.stdout.splitlines() if line.strip()]
    checks.append(Check("gpu count", "pass" if query.returncode == 0 and len(lines) == gpus else "fail", f"{len(lines)} GPUs", f"{gpus}", node))
    for line in lines:
        index, ecc, pending = (cell.strip() for cell in [*line.split(","), "", ""][:3])
        bad_ecc = ecc.isdigit() and int(ecc) > 0
        checks.append(Check(f"gpu {index} ecc", "fail" if bad_ecc else "pass", f"{ecc} uncorrected", "0", node))
        if pending.lower() in ("yes", "1"):
            checks.append(Check(f"gpu {index} row remap", "fail", "pending", "none", node))
    links = _run([smi, "nvlink", "--status"])
    down = [line.strip() for line in links.stdout.splitlines() if "inactive" in line.lower()]
    checks.append(Check("nvlink", "fail" if down else "pass", f"{len(down)} links inactive", "0", node))
    if dcgm_level and _which("dcgmi"):
        _run(["nv-hostengine"])
        diag = _run(["dcgmi", "diag", "-r", str(dcgm_level)], timeout=1800)
        print(diag.stdout, flush=True)
        try:
            checks += judge_dcgm(parse_dcgm(diag.stdout), node)
        except ProbeError as error:
            checks.append(Check("dcgm", "fail", f"no result: {error}", node=node))
    return checks


def _which(name: str) -> bool:
    return any(os.access(os.path.join(d, name), os.X_OK) for d in os.environ.get("PATH", "").split(os.pathsep))


def _mpirun(hosts: Sequence[str], gpus: int, collective: str, args: argparse.Namespace) -> str:
    env = [item for name in sorted(os.environ) if name.startswith("NCCL_") for item in ("-x", name)]
    command = [
        # MPI's own traffic on the primary NIC, as the health checker runs it (run-nccl-combined-plugins.sh).
        "mpirun", "--allow-run-as-root", "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "eth0",
        "--mca", "plm_rsh_args", "-p 222 -o StrictHostKeyChecking=no",
        "-np", str(gpus * len(hosts)), "--host", ",".join(f"{h}:{gpus}" for h in hosts),
        "-x", "LD_LIBRARY_PATH", "-x", "PATH", *env,
        os.path.join(args.tests_dir, f"{collective}_perf"),
        "-b", args.min_bytes, "-e", args.max_bytes, "-f", "2", "-g", "1", "-w", str(args.warmup), "-n", str(args.iters),
    ]  # fmt: skip
    result = _run(command, timeout=args.timeout)
    print(result.stdout, result.stderr, sep="\n", flush=True)
    return result.stdout


def fabric_checks(hosts: Sequence[str], nodes: Sequence[str], args: argparse.Namespace) -> list[Check]:
    """Every collective across all hosts; where one fails, locate the bad nodes the health checker's
    way (its two-pass strategy): test disjoint pairs, then pair each node of a failed pair with a
    node of a passed one; a node that fails with a good partner is named."""

    def run(group: Sequence[int], collective: str) -> list[Check]:
        try:
            return judge_nccl(parse_nccl(_mpirun([hosts[i] for i in group], args.gpus, collective, args)), args.threshold)
        except (ProbeError, subprocess.TimeoutExpired) as error:
            return [Check(f"nccl {collective}", "fail", f"no result: {error}")]

    checks: list[Check] = []
    for collective in args.collectives:
        whole = run(range(len(hosts)), collective)
        bad = any(c.verdict == "fail" for c in whole)
        label = ALL_NODES  # a whole-job measurement names no node
        checks += [Check(c.check, c.verdict if not bad else "info", c.measured, c.threshold, label) for c in whole]
        if not bad:
            continue
        suspects = locate(len(hosts), functools.partial(_passes, run, collective))
        if not suspects:  # every pair passes: the fault shows at scale only; the whole set fails
            checks += [Check(c.check, c.verdict, c.measured, c.threshold, label) for c in whole if c.verdict == "fail"]
        checks += [Check(f"nccl {collective} pair", "fail", "fails with a healthy partner", "", nodes[i]) for i in suspects]
    return checks


def _passes(run: Callable[[Sequence[int], str], list[Check]], collective: str, pair: tuple[int, int]) -> bool:
    return not any(c.verdict == "fail" for c in run(pair, collective))


def locate(count: int, passes: Callable[[tuple[int, int]], bool]) -> list[int]:
    """The indexes (of `count` nodes) that fail pairwise: pass 1 tests (0,1), (2,3)...; a node of a
    failed pair is retested with a node of a passed pair, and named if that fails too."""
    pairs = [(i, i + 1) for i in range(0, count - 1, 2)]
    if count % 2:
        pairs.append((count - 1, 0))
    good: list[int] = []
    suspect: list[int] = []
    for pair in pairs:
        (good if passes(pair) else suspect).extend(pair)
    suspect = sorted(set(suspect) - set(good)) if good else sorted(set(suspect))
    if not good:
        return suspect
    partner = good[0]
    return [i for i in suspect if not passes((i, partner))]


def _signal(hosts: Sequence[str], verdict: str) -> None:
    for host in hosts:
        _run(["ssh", "-p", "222", "-o", "StrictHostKeyChecking=no", host, f"echo {verdict} > /run/preflight/verdict"], timeout=60)


def fabric(args: argparse.Namespace) -> int:
    """Rank 0 waits for every host's sshd, runs the collectives and hands each worker its verdict;
    the others serve ssh until they get theirs."""
    os.makedirs("/run/preflight", exist_ok=True)
    with open(NODE_FILE, "w") as out:
        out.write(args.node)
    _run(["bash", "-c", "sed -i 's/#Port 22/Port 222/' /etc/ssh/sshd_config; service ssh start"])
    hosts, node, rank = args.hosts.split(","), args.node, int(os.environ.get("JOB_COMPLETION_INDEX", "0"))
    if rank:
        verdict = "/run/preflight/verdict"
        deadline = time.monotonic() + args.timeout * (2 + 2 * len(args.collectives))
        while not os.path.exists(verdict) and time.monotonic() < deadline:
            time.sleep(5)
        text = Path(verdict).read_text().strip() if os.path.exists(verdict) else "timeout"
        print(f"preflight verdict from rank 0: {text}", flush=True)
        return 0 if text == "pass" else (_fail(node, [Check("fabric", "fail", text)]) if node in text.split(",") or text == "timeout" else 1)
    for host in hosts[1:]:
        while _run(["ssh", "-p", "222", "-o", "StrictHostKeyChecking=no", "-o", "ConnectTimeout=5", host, "true"], timeout=30).returncode:
            time.sleep(5)
    # An ssh session does not inherit the container's environment: each pod leaves its node's name in a file.
    names = [_run(["ssh", "-p", "222", host, "cat", NODE_FILE], timeout=30).stdout.strip() for host in hosts[1:]]
    nodes = [node, *(name or host for name, host in zip(names, hosts[1:], strict=True))]
    checks = fabric_checks(hosts, nodes, args)
    failed = sorted({c.node for c in checks if c.verdict == "fail"})
    _signal(hosts[1:], "pass" if not failed else ",".join(failed))
    print(json.dumps(Report(args.machine, checks).as_dict()), flush=True)
    return _fail(node, checks) if failed else 0


def warden(args: argparse.Namespace) -> int:
    """Taint each node a preflight container named in its termination message (exit FAILED_EXIT),
    NoSchedule with the failed check as the value, so Kueue's TAS replaces it; runs until stopped."""
    tainted: set[str] = set()
    while True:
        pods = _run([args.kubectl, "get", "pods", "-n", args.namespace, "-l", args.selector, "-o", "json"])
        for node, check in failed_nodes(pods.stdout):
            if node in tainted:
                continue
            value = re.sub(r"[^A-Za-z0-9_.-]", "_", check)[:63]
            if _run([args.kubectl, "taint", "node", node, f"{args.taint}={value}:NoSchedule", "--overwrite"]).returncode == 0:
                print(f"tainted node {node}: preflight check {check} failed", flush=True)
                tainted.add(node)
        if args.once:
            return 0
        time.sleep(args.period)


def failed_nodes(pods_json: str) -> list[tuple[str, str]]:
    """(node, check) of every failed preflight container in a `kubectl get pods -o json` list."""
    try:
        items = json.loads(pods_json or "{}").get("items", [])
    except json.JSONDecodeError:
        return []
    found: list[tuple[str, str]] = []
    for pod in items:
        for status in pod.get("status", {}).get("initContainerStatuses", []):
            term = status.get("state", {}).get("terminated") or status.get("lastState", {}).get("terminated") or {}
            if not status.get("name", "").startswith("preflight") or term.get("exitCode") != FAILED_EXIT:
                continue
            for line in (term.get("message") or "").splitlines():
                fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
                if fields.get("node") not in (None, "", ALL_NODES) and fields.get("check"):
                    found.append((fields["node"], fields["check"]))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="preflight_probe")
    sub = parser.add_subparsers(dest="mode", required=True)
    node = sub.add_parser("node")
    node.add_argument("--gpus", type=int, required=True)
    node.add_argument("--dcgm-level", type=int, default=2)
    node.add_argument("--nvidia-smi", default="/usr/local/nvidia/bin/nvidia-smi")
    net = sub.add_parser("fabric")
    net.add_argument("--hosts", required=True)
    net.add_argument("--gpus", type=int, required=True)
    net.add_argument("--machine", default="")
    net.add_argument("--threshold", type=float, default=None)
    net.add_argument("--collectives", type=lambda s: s.split(","), default=["all_gather", "all_reduce"])
    net.add_argument("--tests-dir", default="/third_party/nccl-tests/build")
    net.add_argument("--min-bytes", default="2G")
    net.add_argument("--max-bytes", default="8G")
    net.add_argument("--iters", type=int, default=20)
    net.add_argument("--warmup", type=int, default=5)
    net.add_argument("--timeout", type=float, default=600)
    ward = sub.add_parser("warden")
    ward.add_argument("--namespace", required=True)
    ward.add_argument("--selector", required=True)
    ward.add_argument("--taint", required=True)
    ward.add_argument("--kubectl", default="/scripts/kubectl")
    ward.add_argument("--period", type=float, default=10)
    ward.add_argument("--once", action="store_true")
    for each in (node, net):
        each.add_argument("--node", default=os.environ.get("NODE_NAME", "unknown"))
    args = parser.parse_args(argv)
    if args.mode == "node":
        checks = node_checks(args.gpus, args.nvidia_smi, args.dcgm_level, args.node)
        print(json.dumps(Report("", checks).as_dict()), flush=True)
        return _fail(args.node, checks) if any(c.verdict == "fail" for c in checks) else 0
    if args.mode == "fabric":
        return fabric(args)
    return warden(args)


if __name__ == "__main__":
    sys.exit(main())
