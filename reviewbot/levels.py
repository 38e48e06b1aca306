"""Severity levels, named once: the run's records, the config and the command line use them,
and the command line must stay cheap to import (an empty change is answered before the
records' library is loaded)."""

from __future__ import annotations

from typing import Literal, get_args

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
SEVERITY_RANK: dict[Severity, int] = {"info": 0, "warning": 1, "error": 2}
