"""List and spot prices per machine, each with its source (us-central1, per node-hour).

CALCULATOR: Cyclenerd/google-cloud-pricing-cost-calculator dac3128 pricing.yml (generated
2026-08-20): a2-highgpu-8g 29.38708 / spot 16.96648, a2-ultragpu-8g 40.55038 / 23.42302,
a3-highgpu-8g 88.49 / 53.09362. SNAPSHOT: skypilot-org/skypilot-catalog 2c3d7ea catalogs/v9/gcp/
vms.csv, VM row plus GPU row: a3-megagpu-8g spot 5.15632 + 8 x 5.6299, a3-ultragpu-8g spot
6.68552 + 8 x 5.1215, a4-highgpu-8g 8 x 11.277 / spot 8 x 4.7183 (one SKU for the whole node).
"""

from __future__ import annotations

import pytest

from trainstack.core import catalog


@pytest.mark.parametrize(
    ("machine", "vm", "gpu"),
    [("a3-megagpu-8g", 5.15632, 5.6299), ("a3-ultragpu-8g", 6.68552, 5.1215), ("a4-highgpu-8g", 0.0, 4.7183)],
)
def test_snapshot_spot_prices_are_the_vm_row_plus_eight_gpu_rows(machine: str, vm: float, gpu: float) -> None:
    m = catalog.machine(machine)
    assert m.spot_price_source == catalog.SNAPSHOT_PRICES_SOURCE
    assert m.spot_hourly_usd == round(vm + 8 * gpu, 2)


def test_a4s_on_demand_price_is_eight_b200_rows_from_the_snapshot() -> None:
    a4 = catalog.machine("a4-highgpu-8g")
    assert (a4.hourly_usd, a4.price_source) == (round(8 * 11.277, 2), catalog.SNAPSHOT_PRICES_SOURCE)


def test_the_calculators_prices_round_to_the_catalogs() -> None:
    """pricing.yml's us-central1 `hour` and spot figures (CALCULATOR) round to the catalog's list and spot prices."""
    for name, hour, spot in (
        ("a2-highgpu-8g", 29.38708, 16.96648),
        ("a2-ultragpu-8g", 40.5503831232877, 23.42302),
        ("a3-highgpu-8g", 88.4899999025753, 53.09362),
    ):
        m = catalog.machine(name)
        assert (round(hour, 2), m.price_source) == (m.hourly_usd, catalog.PRICES_SOURCE), name
        assert (round(spot, 2), m.spot_price_source) == (m.spot_hourly_usd, catalog.CALCULATOR_PRICES_SOURCE), name
