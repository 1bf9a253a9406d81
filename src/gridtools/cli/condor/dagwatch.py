"""How the DAG runner learns that a node's job ended, and how it ended.

A node job's end is read from the node log (``DAGFILE.nodes.log``, the log
every node job writes to besides its own) when it holds the job's terminated (005) or
aborted (009) events; otherwise from the cell itself: the published status
says when the job has no task left waiting or running, and the accounting
file (readable by everybody) gives each task's exit status. The events new at
each look are kept (``fresh``) for the job state log. A job that left
the queue without an accounting record (removed before it ran) ended
without a status (``REMOVED``). A proc the node log says was killed by a
signal ended with a ``Signal``. A cluster materialized late (its ClusterSubmit
event, 035, is in the node log, or the runner says so: ``factories``) ends, as
HTCondor's DAGMan reads it, with its ClusterRemove event (036), whose count of
the procs made is the count of its procs; until then, even with no proc of it
in the queue for a moment, it has more to come (it is taken as ended when it
has left the queue for good without one). Nothing here writes.
"""

import os

from gridtools.spool import status as spool_status

#: the outcome of a job removed before it could report an exit status
REMOVED = None
#: seconds a finished job's accounting records may lag behind its state
RECORD_GRACE = 5.0
#: the exit code of a proc killed by a signal in $EXIT_CODES and the like (the ReturnValue
#: HTCondor's terminated event is read with then)
SIGNALED_EXIT_CODE = -1


class Signal(int):
    """The end of a proc killed by a signal: as a number, the return value its node
    gets, minus the signal's number (-15 for SIGTERM), as HTCondor's DAGMan sets it."""

    @property
    def number(self):
        return -int(self)


class Watcher:
    """Follows the ends of node jobs (see the module docstring)."""

    def __init__(self, nodes_log=None, accounting=None):
        from gridtools import cell
        self.nodes_log = nodes_log
        self.accounting = accounting or cell.spool("accounting")
        self.offset = _size(self.accounting)     # node jobs are all submitted after this
        self.records = {}          # job id -> {task number: (exit status, failed)}
        self.log_offset = 0
        self.log_events = {}       # (cluster, proc) -> ("terminated", return value) or ("aborted", None)
        self.events_read = 0       # how many events of the node log were read before
        self.fresh = []            # the node log's events new at the last look, in log order
        self.rows = {}             # job id -> [row states] of the last status read
        self.finished_at = {}      # job id -> when it was first seen without live tasks
        self.procs = {}            # job id -> [(row state, procs in the row)] of the last status read
        self.factories = set()     # clusters materialized late
        self.made = {}             # cluster materialized late -> procs made, from its ClusterRemove event

    def refresh(self, now):
        """Read what changed since the last look."""
        self._read_accounting()
        self._read_log()
        snap = spool_status.read() or {}
        rows, procs = {}, {}
        for row in snap.get("rows") or []:
            state = row.get("state", "")
            rows.setdefault(row["id"], []).append(state)
            procs.setdefault(row["id"], []).append((state, _row_procs(row)))
        self.rows, self.procs = rows, procs
        self.now = now

    def _read_accounting(self):
        from gridtools.formats import accounting
        parse = accounting.parser(("job_number", "task_number", "exit_status", "failed"))
        try:
            with open(self.accounting, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return
        complete = data.rfind(b"\n") + 1
        self.offset += complete
        for line in data[:complete].decode("utf-8", "surrogateescape").splitlines():
            if not line or line.startswith("#"):
                continue
            try:
                rec = parse(line)
            except Exception:  # noqa: BLE001 - a line another writer garbled is skipped
                continue
            task = rec["task_number"] or 1
            self.records.setdefault(rec["job_number"], {})[task] = (rec["exit_status"], rec["failed"])

    def _read_log(self):
        self.fresh = []
        if not self.nodes_log or not os.path.exists(self.nodes_log):
            return
        from gridtools.formats.condor import userlog
        from gridtools.ownfiles import read_trusted
        try:
            text = read_trusted(self.nodes_log)         # (one of another user's is not taken)
            events = userlog.parse_events(text)
        except Exception:  # noqa: BLE001 - a log being written may end mid-event
            return
        self.fresh, self.events_read = events[self.events_read:], len(events)
        for event in events:
            key = (event.cluster, event.proc)
            if event.type is userlog.EventType.JOB_TERMINATED:
                self.log_events[key] = ("terminated", _return_value(event.info))
            elif event.type is userlog.EventType.JOB_ABORTED:
                self.log_events[key] = ("aborted", None)
            elif event.type is userlog.EventType.CLUSTER_SUBMIT:
                self.factories.add(event.cluster)
            elif event.type is userlog.EventType.CLUSTER_REMOVE:
                made = event.info.get("NextProcId")
                self.made[event.cluster] = made if isinstance(made, int) else 0

    def proc_states(self, clusters):
        """(idle, held, running) procs of the ``clusters`` in the queue, as the last status
        read shows them (a proc that ended is in none)."""
        idle = held = running = 0
        for cluster in clusters:
            for state, count in self.procs.get(cluster, ()):
                if state.startswith("z"):
                    continue
                if "h" in state:
                    held += count
                elif "r" in state and "q" not in state:
                    running += count
                else:
                    idle += count
        return idle, held, running

    def outcome(self, cluster, procs):
        """None while the job has live tasks; else a list with each proc's exit status
        (REMOVED for a proc that ended without one, a ``Signal`` for one killed by one)."""
        if cluster in self.factories and cluster not in self.made:
            if self.rows.get(cluster):
                self.finished_at.pop(cluster, None)
                return None                 # (more procs to come)
            gone = self.finished_at.setdefault(cluster, self.now)
            if self.now - gone < RECORD_GRACE:
                return None
        procs = max(procs, self.made.get(cluster, 0))
        from_log = [self.log_events.get((cluster, p)) for p in range(procs)]
        if all(from_log):
            return [value for _kind, value in from_log]
        states = self.rows.get(cluster, [])
        if any(not s.startswith("z") for s in states):
            return None
        records = self.records.get(cluster, {})
        if len(records) < procs:
            first = self.finished_at.setdefault(cluster, self.now)
            if self.now - first < RECORD_GRACE:
                return None
        return [_status(records.get(task)) for task in range(1, procs + 1)]


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _return_value(info):
    """How a terminated event (005) says its proc ended: its exit status, or the
    ``Signal`` that killed it (1 when it says neither)."""
    signal = info.get("TerminatedBySignal")
    if info.get("TerminatedNormally") is False and isinstance(signal, int):
        return Signal(-signal)
    value = info.get("ReturnValue")
    return value if isinstance(value, int) else 1


def _row_procs(row):
    """How many procs a status row stands for (a row of waiting tasks may group several)."""
    runs = row.get("tasks")
    if not isinstance(runs, list):
        return 1
    return sum((last - first) // step + 1 for first, last, step in runs) or 1


def _status(record):
    if record is None:
        return REMOVED
    exit_status, failed = record
    if failed and not exit_status:
        return 1
    return exit_status
