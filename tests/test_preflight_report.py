"""`trainstack metrics preflight`: real nccl-tests and dcgmi output (tests/preflight_samples/SOURCES.md),
judged against the catalog's marks; exit 0 pass, 4 fail, 2 bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from trainstack.app.metrics.cli import metrics
from trainstack.core import catalog
from trainstack.core.catalog import preflight as marks
from trainstack.workloads import preflight_probe as probe

SAMPLES = Path(__file__).parent / "preflight_samples"


def sample(name: str) -> str:
    return (SAMPLES / f"{name}.txt").read_text()


def invoke(name: str, *args: str) -> Result:
    return CliRunner().invoke(metrics, ["preflight", str(SAMPLES / f"{name}.txt"), *args])


def test_a_table_is_read_row_by_row_with_its_collective_and_footer():
    (run,) = probe.parse_nccl(sample("nccl_all_gather_a4_pass"))
    assert run.collective == "all_gather"  # redop `none`
    assert len(run.rows) == 24 and run.rows[0].size == 1024 and run.rows[-1].size == 8 << 30
    assert (run.rows[-1].busbw_out, run.rows[-1].busbw_in) == (260.03, 259.25)
    assert run.avg_busbw == 59.3638 and run.out_of_bounds == 0


def test_the_mark_is_judged_over_2g_to_8g_as_the_health_checker_does_not_over_the_printed_average():
    """The A4 run's printed average (59 GB/s) spans 1 KiB..8 GiB; over 2G..8G (out of place and in place)
    it is 261.95 GB/s, above A4's 250."""
    checks = probe.judge_nccl(probe.parse_nccl(sample("nccl_all_gather_a4_pass")), 250.0)
    (average,) = [c for c in checks if c.check.endswith("average")]
    assert average.verdict == "pass" and average.measured.startswith("261.95 GB/s")
    assert probe.judge_nccl(probe.parse_nccl(sample("nccl_all_gather_a4_pass")), 262.0)[-1].verdict == "fail"


def test_a3_high_below_its_published_mark_fails_and_the_report_names_both_figures():
    result = invoke("nccl_all_gather_a3high_fail", "--machine", "a3-highgpu-8g", "--format", "json")
    assert result.exit_code == 4, result.output
    report = json.loads(result.output)
    (average,) = [c for c in report["checks"] if c["check"] == "nccl all_gather average"]
    assert report["verdict"] == "fail" and average["verdict"] == "fail"
    assert average["measured"].startswith("50.29 GB/s") and average["threshold"] == ">= 60 GB/s"


def test_a4_passes_on_its_mark_and_the_table_ends_with_the_verdict():
    result = invoke("nccl_all_gather_a4_pass", "--machine", "a4-highgpu-8g")
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == "preflight on a4-highgpu-8g: PASS"


def test_a_truncated_run_fails_rather_than_passing_on_the_sizes_it_reached():
    (run,) = probe.parse_nccl(sample("nccl_all_gather_a4_truncated"))
    assert run.avg_busbw is None and len(run.rows) == 8
    result = invoke("nccl_all_gather_a4_truncated", "--machine", "a4-highgpu-8g", "--format", "json")
    assert result.exit_code == 4
    assert "incomplete: the run stopped after 8 sizes" in result.output


def test_wrong_elements_fail_the_size_they_occur_at():
    text = sample("nccl_all_gather_a4_pass").replace("30970  277.36  260.03      0", "30970  277.36  260.03     12")
    checks = probe.judge_nccl(probe.parse_nccl(text), 250.0)
    assert [c.check for c in checks if c.verdict == "fail"] == ["nccl all_gather 8589934592 B"]


def test_two_runs_in_one_log_are_judged_each_and_named_by_their_redop():
    all_reduce = sample("nccl_all_gather_a4_pass").replace("float    none", "float     sum")
    runs = probe.parse_nccl(sample("nccl_all_gather_a4_pass") + "\n" + all_reduce)
    assert [r.collective for r in runs] == ["all_gather", "all_reduce"]


def test_dcgm_pass_and_fail_with_the_message_of_the_failed_test():
    assert {t.result for t in probe.parse_dcgm(sample("dcgm_diag_r2_pass"))} == {"Pass"}
    (failed,) = [t for t in probe.parse_dcgm(sample("dcgm_diag_r1_fail")) if t.result == "Fail"]
    assert failed.name == "Persistence Mode" and failed.detail.startswith("Persistence mode for GPU 0 is currently disab")
    result = invoke("dcgm_diag_r1_fail", "--machine", "a3-megagpu-8g")
    assert result.exit_code == 4 and "FAIL  dcgm Persistence Mode" in result.output


def test_dcgm_per_gpu_rows_fold_into_their_test():
    text = sample("dcgm_diag_r2_pass").replace(
        "| GPU Memory                | Pass - All                                     |",
        "| GPU Memory                | Pass                                           |\n|                           | GPU3: Fail                                     |",
    )
    (memory,) = [t for t in probe.parse_dcgm(text) if t.name == "GPU Memory"]
    assert memory.result == "Fail" and "GPU3: Fail" in memory.detail


@pytest.mark.parametrize("args", [("garbage", "--machine", "a4-highgpu-8g"), ("nccl_all_gather_a4_pass", "--machine", "h100-box")])
def test_bad_input_is_one_error_line_and_exit_2(args):
    result = invoke(*args)
    assert result.exit_code == 2
    assert result.output.count("Error:") == 1 and "Traceback" not in result.output


def test_every_published_mark_is_below_its_machines_line_rate():
    """The marks and the line rates come from different sources; a mark above the line rate would be a
    wrong record."""
    for name, mark in marks.BUS_BANDWIDTH_GBYTES.items():
        rate = marks.line_rate_gbytes(catalog.machine(name))
        assert rate is not None and mark < rate, name


def test_a_machine_without_a_published_mark_falls_back_to_the_derived_share_of_its_line_rate(monkeypatch):
    ultra = catalog.machine("a3-ultragpu-8g")
    monkeypatch.delitem(marks.BUS_BANDWIDTH_GBYTES, "a3-ultragpu-8g")
    derived = marks.threshold(ultra)
    assert derived is not None and derived.gbytes == 8 * 400 / 8 * marks.DERIVED_EFFICIENCY
    assert derived.source.startswith("derived")
    assert marks.threshold(catalog.machine("a2-highgpu-8g")) is None  # no GPUDirect NICs: nothing to derive from
