"""Asking the daemon: send one request, wait for its answer, print it.

``ask`` serves the commands whose outcome the daemon decides and words
(qalter, qconf, qmod, gridtools host / llctl); ``outcomes`` those that word
the daemon's answer themselves (qdel, qhold, qrls: what was done to each job,
so that what they print is what happened); ``tell`` those that need no
answer (qsub, qrsh). The daemon is started when it is not running and
the caller may start it; otherwise the command fails with one line.
Standard library only: every user runs these.
"""

import sys

from gridtools import cell
from gridtools.errors import GridError
from gridtools.spool import requests, wake

#: seconds to wait for the daemon's answer
REPLY_TIMEOUT = 60.0


def ensure_daemon():
    """Make sure the cell's daemon runs (start it if the caller may), or raise GridError."""
    from gridtools.spool import daemonctl as control
    if control.running():
        return
    if not control.may_autostart():
        raise GridError(f"error: the gridtools daemon of cell {cell.root()} is not running "
                        "(start it with: gridtools daemon start)")
    control.start()


#: the daemon's mark that it checks new jobs against rules a submitting command does
#: not check in full (``spool.daemonconf.CHECKS``)
CHECKS_MARK = "submit_checks"


def checks_marked():
    """True while the daemon marks that it may refuse a new job the submitting command's
    own checks let through (``spool.daemonconf.mark_checks``): then the command waits for
    its word. One look, without loading that module."""
    import posix
    try:
        posix.stat(cell.spool(CHECKS_MARK))
    except OSError:
        return False
    return True


def tell(kind, payload, script=None):
    """Queue a request that needs no answer and wake the daemon (starting it when it is
    not running and the caller may); returns the request's name."""
    name = requests.write(kind, payload, script=script)
    if not wake.poke():
        from gridtools.spool import daemonctl as control
        control.autostart()
    return name


def exchange(kind, payload, timeout=REPLY_TIMEOUT):
    """Send a ``kind`` request and wait for the daemon's answer: (code, stdout, stderr)."""
    ensure_daemon()
    name = requests.write(kind, dict(payload, host=cell.hostname()), reply=True)
    wake.poke()
    return requests.wait_reply(name, timeout)


def ask(kind, payload, timeout=REPLY_TIMEOUT, ordered=False):
    """Send a ``kind`` request, print the daemon's stdout and stderr text; its exit code.
    ``ordered``: the daemon is asked for its answers with the stream of each, in the
    order it gave them (``daemon.confreq``), and they are printed so, standard output
    flushed before each line of standard error."""
    code, out, err = exchange(kind, dict(payload, ordered=True) if ordered else payload, timeout)
    parts = [(1, out), (2, err)]
    if ordered and out.startswith('{"ordered"'):
        try:
            parts = [(stream, str(text)) for stream, text in json_value(out)["ordered"]]
        except (ValueError, KeyError, TypeError):
            pass
    for stream, text in parts:
        if stream == 2:
            if ordered:
                sys.stdout.flush()
            sys.stderr.write(text)
        else:
            sys.stdout.write(text)
    sys.stdout.flush()
    return int(code)


def outcomes(kind, payload, timeout=REPLY_TIMEOUT):
    """Send a ``kind`` request and return the daemon's answer: what it did to each target
    job, in order, one outcome each (see daemon.jobreq.outcome; outcomes that came as one
    with a ``count`` are given one by one). The request's effect is in the published
    status by then."""
    from gridtools.formats import spoolyaml
    code, out, err = exchange(kind, payload, timeout)
    if code or err:
        refused = GridError((err or out or "error: the gridtools daemon refused the request").rstrip("\n"))
        refused.answer = not err and bool(out)     # (the daemon's answer: the command prints it as it is)
        raise refused
    try:
        if out.startswith("{"):
            return _one_by_one(json_value(out).get("outcomes") or [])
        return _one_by_one(spoolyaml.load(out).get("outcomes") or [])
    except (spoolyaml.SpoolFormatError, AttributeError, ValueError, TypeError, KeyError):
        raise GridError("error: the gridtools daemon gave an answer that cannot be read") from None


def _one_by_one(items):
    """Outcomes with a ``count`` (that many consecutive jobs alike) as one per job."""
    found = []
    for item in items:
        count = item.pop("count", 1)
        found.append(item)
        if type(count) is int and count > 1:
            first = item["id"]
            found.extend([dict(item, id=first + n) for n in range(1, count)])
    return found


class _Plain:
    """What the json package's scanner asks its decoder: plain JSON values."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int, parse_constant = float, int, float


def json_value(text):
    """The value of a JSON text (ValueError when it is not one), read by the json
    package's scanner, which is written in C: the package itself imports the regular
    expression machinery, which costs a command more than a third of the interpreter's
    start-up."""
    import _json
    try:
        value, end = _json.make_scanner(_Plain)(text, len(text) - len(text.lstrip()))
    except StopIteration:
        raise ValueError("no JSON value") from None
    if text[end:].strip():
        raise ValueError("extra data after the JSON value")
    return value
