"""Passes of the daemon cut short by an unexpected exception (a defect, a spool item
that reads but makes no sense): what spool/messages says of them, and how long the
daemon rests before the next pass.

The first failure is logged with the exception and the last three places it went
through; the same failure again only after 2, 4, 8... passes in a row, so that a
failure at every pass does not fill the log. The next pass waits FAILED_REST seconds,
doubled for each failed pass in a row, up to FAILED_REST_MOST.
"""

import os

FAILED_REST = 0.5           # seconds before the pass after one that failed
FAILED_REST_MOST = 10.0     # most seconds between passes that keep failing


class Failures:
    """The passes in a row cut short (``count``), what the last one met, and when the
    next pass may come (``resume_at``, None when the last pass ran to its end)."""

    def __init__(self):
        self.count = 0
        self.last = None            # (type, message, place) of the last failure
        self.resume_at = None

    def note(self, exc, log):
        """A pass cut short by ``exc``: logged through ``log`` as the module says; True
        when it is not the failure the pass before met."""
        met = (type(exc), str(exc), place(exc))
        new = met != self.last
        self.count += 1
        self.last = met
        if new:
            log(f"E|a pass was cut short, going on: {describe(exc)}")
        elif self.count & (self.count - 1) == 0:
            log(f"E|{self.count} passes in a row were cut short, the last by the same: {describe(exc)}")
        return new

    def rest(self, now):
        """The next pass waits: FAILED_REST, doubled for each failed pass in a row."""
        self.resume_at = now + min(FAILED_REST * 2 ** min(self.count - 1, 16), FAILED_REST_MOST)

    def over(self, log):
        """A pass ran to its end: True when passes before it had failed (logged)."""
        if not self.count:
            return False
        log(f"I|a pass ran to its end again, after {self.count} cut short")
        self.count, self.last, self.resume_at = 0, None, None
        return True


def place(exc):
    """Where ``exc`` was raised: the last three frames, as ``module.py:line function``."""
    import traceback
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    return " < ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in reversed(frames))


def describe(exc):
    """``exc`` for spool/messages: its type, its message and where it was raised."""
    return f"{type(exc).__name__}: {exc} (at {place(exc)})"
