"""How long delivery waits when a forge asks it to (a rate limit, a failing server): each
wait bounded by its forge's adapter, all of them together bounded here, each one said."""

from __future__ import annotations

from collections.abc import Callable

from reviewbot.deliver.forge import DeliveryFailed

# One wait longer than this is not waited (each adapter says how it treats one).
MAX_WAIT_S = 120.0
# All the waiting one run may do before it gives up posting.
MAX_TOTAL_WAIT_S = 300.0


def pause(forge: str, seconds: float, waited: float, sleep: Callable[[float], None],
          notice: Callable[[str], None], why: str = "") -> float:
    """Wait `seconds` after `waited` so far, saying why (default: the forge asked to wait);
    the total waited. DeliveryFailed, without waiting, when the total would pass
    MAX_TOTAL_WAIT_S."""
    said = why or f"{forge} asked to wait"
    if waited + seconds > MAX_TOTAL_WAIT_S:
        raise DeliveryFailed(f"{said}, and reviewbot waits at most {MAX_TOTAL_WAIT_S:.0f} s "
                             f"in all ({waited:.0f} s so far)")
    if seconds:
        notice(f"{said}; retrying in {seconds:.0f} s")
    sleep(seconds)
    return waited + seconds
