"""condor_preen: find, and remove, the files of the cell that nothing will use again.

    condor_preen [-mail] [-remove] [-verbose] [-debug] [-log FILE]

The daemon looks (``daemon.preen``: leftovers in the spool, task folders in
the queues' tmpdirs, INVALID_LOG_FILES) and answers with a line per stale
file, ``  <path> - Not Removed`` (or ``- Removed`` / ``- Can't Remove``
with -remove); -verbose lists every file looked at first (``<path> - OK``
or ``- BAD``). With -mail the report goes to PREEN_ADMIN (else
CONDOR_ADMIN) through the cell's mailer instead of standard output, when
there is something to report; exit 2 when it cannot be sent. -debug writes
the run's start and results to standard error, -log to FILE. It needs
ADMINISTRATOR at the MASTER.
"""

import os
import sys
import time

from gridtools import cell
from gridtools.cli.condor import admintool
from gridtools.errors import UsageError

USAGE = "Usage: {prog} [-mail] [-remove] [-verbose] [-debug] [-log <filename>]\n"
OPTIONS = {"mail": 1, "remove": 1, "verbose": 1, "debug": 1, "log": 1, "help": 1, "version": 1}
#: exit status of a report that could not be mailed, as HTCondor's condor_preen
MAIL_FAILED = 2


def parse(argv, prog):
    names, seen = admintool.parse(argv, OPTIONS, USAGE.format(prog=prog), valued=("log",))
    if names:
        raise UsageError(f"ERROR: unexpected argument {names[0]}")
    return {name: (value if name == "log" else True) for name, value in seen}


def run(argv, prog):
    opts = parse(argv, prog)
    debug = _debug_writer(opts)
    debug(f"STARTING: condor_preen PID: {os.getpid()}\n")
    code, out = _ask(opts)
    if code:
        return code
    listing = [line for line in out.splitlines(True) if not line.startswith("  ")]
    report = [line for line in out.splitlines(True) if line.startswith("  ")]
    sys.stdout.write("".join(listing))
    for line in report:
        debug(line[2:])
    debug("Results: " + (f"{len(report)} file{'s' if len(report) > 1 else ''} preened\n" if report
                         else "No files preened\n"))
    status = 0
    if report and opts.get("mail"):
        status = _mail(report)
    elif report:
        sys.stdout.write("".join(report))
    debug(f"ENDING: condor_preen PID: {os.getpid()} STATUS: {status}\n")
    return status


def _ask(opts):
    code, out, _err = admintool.ask("preen", {"dialect": "condor", "remove": bool(opts.get("remove")),
                                              "verbose": bool(opts.get("verbose"))}, shown=False, wait=600.0)
    return code, out


def _debug_writer(opts):
    """A function writing a debug line (with its time) where -debug and -log ask."""
    targets = []
    if opts.get("debug"):
        targets.append(sys.stderr)
    if opts.get("log"):
        try:
            targets.append(open(opts["log"], "a", encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"ERROR: cannot open {opts['log']}: {exc.strerror}") from None

    def write(line):
        stamp = time.strftime("%m/%d/%y %H:%M:%S ")
        for target in targets:
            target.write(stamp + line)
            target.flush()
    return write


def _mail(report):
    """Mail the report to PREEN_ADMIN (else CONDOR_ADMIN) with the cell's mailer; the
    exit status (MAIL_FAILED when it could not be sent)."""
    from gridtools.cli.condor.machineviews import client_config
    conf = client_config()
    admin = conf.get("PREEN_ADMIN") or conf.get("CONDOR_ADMIN")
    host = cell.hostname()
    subject = f"condor_preen results {host}: {len(report)} old file{'s' if len(report) > 1 else ''} found"
    body = (f"The condor_preen process has found the following stale condor files on <{host}>:\n\n"
            + "".join(report))
    if not admin:
        sys.stderr.write("ERROR: neither PREEN_ADMIN nor CONDOR_ADMIN is configured\n")
        return MAIL_FAILED
    from gridtools import mail
    problem = mail.send(admin, subject, body)
    if problem:
        sys.stderr.write(f"Can't do email_open(\"{admin}\", \"{subject}\"): {problem}\n")
        return MAIL_FAILED
    return 0


def main(argv, prog="condor_preen"):
    return admintool.main(run, argv, prog, USAGE.format(prog=prog))
