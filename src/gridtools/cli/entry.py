"""Command dispatch for the launchers in bin/.

Maps a command name to the module that implements it and imports only that
module, so each command pays at start-up for exactly what it uses (the
launchers reach ``run`` through ``gridtools.launch``). Every
command but qrsh (which relays its job's own output) writes through
``formats.safetext.SafeStream``: what users put into job names, paths,
environments and arguments can never send control sequences to the
terminal of whoever reads the output.
"""

import sys

from gridtools.errors import GridError
from gridtools.formats.safetext import SafeStream

# command name -> module under gridtools.cli; each module has main(argv) -> int
COMMANDS = {
    "gridtools": "admin",
    "qsub": "sge.qsub",
    "qstat": "sge.qstat",
    "qselect": "sge.qselect",
    "qdel": "sge.qdel",
    "qhold": "sge.qhold",
    "qrls": "sge.qhold",
    "qhost": "sge.qhost",
    "qacct": "sge.qacct",
    "qrsh": "sge.qrsh",
    "qlogin": "sge.qrsh",
    "qconf": "sge.qconf",
    "qmod": "sge.qmod",
    "qalter": "sge.qalter",
    "llctl": "hostctl",
    "condor_config_val": "condor.config_val",
    "condor_submit": "condor.submit",
    "condor_q": "condor.q",
    "condor_rm": "condor.act",
    "condor_hold": "condor.act",
    "condor_release": "condor.act",
    "condor_vacate_job": "condor.act",
    "condor_prio": "condor.edit",
    "condor_qedit": "condor.edit",
    "condor_history": "condor.history",
    "condor_wait": "condor.wait",
    "condor_ssh_to_job": "condor.ssh_to_job",
    "condor_version": "condor.version",
    "condor_vacate": "condor.vacate",
    "condor_checkpoint": "condor.checkpoint",
    "condor_fetchlog": "condor.fetchlog",
    "condor_reschedule": "condor.reschedule",
    "condor_preen": "condor.preen",
    "condor_off": "condor.onoff",
    "condor_on": "condor.onoff",
    "condor_restart": "condor.onoff",
    "condor_status": "condor.status",
    "condor_userprio": "condor.userprio",
    "condor_reconfig": "condor.reconfig",
    "condor_submit_dag": "condor.submit_dag",
    "condor_dagman": "condor.dagman",
    "sge_share_mon": "sge.share_mon",
    "qquota": "sge.qquota",
    "qrsub": "sge.qrsub",
    "qrstat": "sge.qrstat",
    "qrdel": "sge.qrdel",
}

#: commands whose standard output is their job's, passed on unchanged
RAW_OUTPUT = frozenset({"qrsh", "qlogin", "condor_ssh_to_job"})

#: commands whose work is done before they report it: a report that cannot be written
#: (a closed or full standard output) does not make them fail, as a caller that took the
#: failure for a refusal would submit again
REPORT_AFTER = frozenset({"qsub", "condor_submit", "qrsub", "condor_submit_dag"})

#: commands that look at or act on the queue: in a cell that was never made they would
#: show an empty queue, or find no job, and succeed (others read files a user names, or
#: make the cell, and say so themselves)
ON_THE_QUEUE = frozenset({"qstat", "qselect", "qhost", "qquota", "qdel", "qhold", "qrls", "qalter", "qmod",
                          "qrstat", "qrdel", "condor_q", "condor_status", "condor_rm", "condor_hold",
                          "condor_release", "condor_vacate_job", "condor_prio", "condor_qedit", "condor_userprio", "sge_share_mon"})


#: the commands of the cell's records, which read another file instead when given one
ON_THE_RECORDS = {"qacct": "-f", "condor_history": "-file"}


def _missing_cell(name, argv):
    """The one-line error of a queue command run in a cell GRIDTOOLS_ROOT names that is
    not there (a mistyped path: no spool folder), or None: it would show an empty queue
    and succeed, as if the user's jobs were gone. (The personal cell is made on first use.)"""
    if "-help" in argv or "--help" in argv:
        return None
    if name not in ON_THE_QUEUE and (name not in ON_THE_RECORDS or ON_THE_RECORDS[name] in argv):
        return None
    from gridtools import cell, ospaths
    if cell.is_personal() or ospaths.isdir(cell.spool()):
        return None
    return f"error: {cell.root()} is not an initialised gridtools cell (run: gridtools init)"


def command_module(name):
    """The module that runs command ``name`` (imported), or None for an unknown name."""
    module = COMMANDS.get(name)
    return None if module is None else __import__("gridtools.cli." + module, fromlist=["main"])


def run(name, argv=None):
    """Run command ``name`` with ``argv`` (default sys.argv[1:]); return its exit code."""
    if argv is None:
        argv = sys.argv[1:]
    if name not in COMMANDS:
        sys.stderr.write(f"gridtools: unknown command {name!r}\n")
        return 1
    if sys.stdin is None or sys.stdout is None or sys.stderr is None:
        _standard_streams()
    for stream in (sys.stdout, sys.stderr):
        # names from the file system may hold bytes that are not UTF-8: write them back as
        # they came, as Grid Engine's programs do, whatever the locale's error handling
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="surrogateescape")
    if name not in RAW_OUTPUT:
        sys.stdout = SafeStream(sys.stdout, keep_going=name in REPORT_AFTER)
        sys.stderr = SafeStream(sys.stderr, keep_going=True)
    missing = _missing_cell(name, argv)
    if missing is not None:
        sys.stderr.write(missing + "\n")
        return 1
    mod = command_module(name)
    try:
        code = mod.main(argv, prog=name) or 0
        sys.stdout.flush()
        if name in REPORT_AFTER and sys.stdout.lost is not None:
            sys.stderr.write(f"{name}: cannot write to standard output: "
                             f"{sys.stdout.lost.strerror or sys.stdout.lost}\n")
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 141
    except OSError as exc:          # the cell's files: a read-only or full spool, ...
        where = f": {exc.filename}" if exc.filename else ""
        sys.stderr.write(f"{name}: error: {exc.strerror or exc}{where}\n")
        return 1
    except GridError as exc:        # one line, never a traceback
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code


def _standard_streams():
    """Open /dev/null in place of a standard stream the command was started without (a
    closed descriptor 0, 1 or 2, as some daemons and cron set-ups leave them): reading it
    finds nothing, writing to it goes nowhere, and no file the command opens takes its
    descriptor."""
    import posix
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is None:
            null = posix.open("/dev/null", posix.O_RDWR)
            if null != fd:
                posix.dup2(null, fd)
                posix.close(null)
            setattr(sys, name, open(fd, "r" if fd == 0 else "w", closefd=False))


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], sys.argv[2:]))
