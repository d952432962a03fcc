"""Reports on stacks and runs: cost, deploy critical path, MFU and goodput."""

from __future__ import annotations

from trainstack.core.errors import TrainstackError


class ReportError(TrainstackError, ValueError):
    """Input a report cannot be computed from (unreadable log, unknown model, missing figures)."""
