"""The files a DAG manager writes for others to follow its DAG: the job state log
(JOBSTATE_LOG), the node status file (NODE_STATUS_FILE), the drawing of the DAG
(DOT) and, when it exits, its metrics (DAGFILE.metrics).

Their form is ``formats.condor.dagjobstate``'s, ``dagnodestatus``'s and ``dagdot``'s;
this module writes them.
A file that cannot be written is noted in DAGFILE.dagman.out and the DAG goes on
(the node status file's is a warning of strictness 1: DAGMAN_USE_STRICT, by
default, makes it end the DAG, as HTCondor's DAGMan).
"""

import os
import time

from gridtools.formats.condor import dagjobstate


class JobstateLog:
    """JOBSTATE_LOG: every node event and the manager's start, recovery and end, one
    line each, appended. Without a file (``path`` empty) it writes nothing."""

    def __init__(self, path, log, tag_of=None):
        self.path, self.log = path, log
        self.tag_of = tag_of or (lambda _name: dagjobstate.NONE)
        self.tags = {}                  # node -> its job tag, read once
        self.sequences = {}             # node -> the sequence number of its current run
        self.next_sequence = 1
        self.recovery = None            # dagjobstate.Recovery while a recovered DAG is followed

    def _read(self):
        from gridtools.ownfiles import read_trusted
        try:
            return read_trusted(self.path)      # (one another user planted is not read)
        except OSError:
            return ""

    def _write(self, line):
        try:
            from gridtools.ownfiles import open_own
            fd = open_own(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644,
                          follow_last=False)
            try:
                os.write(fd, (line + "\n").encode("utf-8", "backslashreplace"))
            finally:
                os.close(fd)
        except OSError as exc:
            self.log(f"Could not write jobstate log file {self.path}: {exc.strerror}")
            self.path = ""              # said once; the DAG goes on without it

    def internal(self, what):
        if self.path:
            self._write(dagjobstate.internal_line(time.time(), what))

    def started(self, job_id):
        self.internal(f"DAGMAN_STARTED {job_id}.0")

    def finished(self, code):
        self.internal(f"DAGMAN_FINISHED {code}")

    def rescue(self):
        """A rescue DAG runs: sequence numbers go on after the highest in the file."""
        if self.path:
            self.next_sequence = dagjobstate.Recovery(self._read()).highest + 1

    def recovery_started(self):
        """Recovery mode: the lines the manager before wrote are not written again; each
        node keeps its sequence number."""
        if not self.path:
            return
        self.internal("RECOVERY_STARTED")
        self.recovery = dagjobstate.Recovery(self._read())
        self.sequences = dict(self.recovery.sequences)
        self.next_sequence = self.recovery.highest + 1

    def recovery_finished(self):
        self.internal("RECOVERY_FINISHED")

    def retried(self, name):
        """A node runs again: its lines get a new sequence number."""
        self.sequences.pop(name, None)

    def node(self, name, event, job_id=dagjobstate.NONE, when=None):
        if not self.path:
            return
        if name not in self.sequences:
            self.sequences[name] = self.next_sequence
            self.next_sequence += 1
        if name not in self.tags:
            self.tags[name] = self.tag_of(name)
        line = dagjobstate.node_line(when or time.time(), name, event, job_id, self.tags[name],
                                     self.sequences[name])
        if self.recovery is not None and self.recovery.written(line):
            return
        self._write(line)


class NodeStatusFile:
    """NODE_STATUS_FILE: the DAG's and each node's status, rewritten whole (through a
    temporary file renamed over it) when a node's status changed, or every time with
    ALWAYS-UPDATE, but not sooner than its min_update_time after the last rewrite;
    the DAG's end (or its manager's hold or removal) is always written."""

    def __init__(self, spec, folder, log, warn=None):
        self.spec, self.log = spec, log
        self.warn = warn or (lambda text, _level: log(text))      # (``dagrun.Runner.warn``)
        self.path = os.path.join(folder, spec.path) if spec is not None else ""
        self.written_at = 0.0
        self.shown = None               # what the file last said, but for its times

    def update(self, dag, progress, details, force=False):
        from gridtools.formats.condor.dagnodestatus import node_statuses, render_node_status
        if not self.path:
            return
        now = time.time()
        shown = (details.outcome, node_statuses(dag, progress, details))
        if not force:
            if shown == self.shown and not self.spec.always:
                return
            if self.spec.min_update > 0 and now - self.written_at < self.spec.min_update:
                return
        text = render_node_status(dag, progress, details, now, self.spec.min_update)
        from gridtools.ownfiles import write_replacing
        try:
            write_replacing(self.path, text)
        except OSError as exc:
            self.warn(f"Warning: can't write node status file '{self.path}': {exc.strerror}", 1)
            return
        self.written_at, self.shown = now, shown


class DotWriter:
    """DOT: the DAG drawn when its manager starts and, with UPDATE, again whenever its
    progress changes; written to a temporary file (FILE.temp) renamed over it. With
    DONT-OVERWRITE each drawing goes to a new file, FILE.N, N the first unused from 0."""

    def __init__(self, spec, folder, log):
        self.spec, self.folder, self.log = spec, folder, log
        self.path = os.path.join(folder, spec.path) if spec is not None else ""
        self.suffix = 0

    def _name(self):
        if self.spec.overwrite:
            return self.path
        while os.path.exists(f"{self.path}.{self.suffix}"):
            self.suffix += 1
        return f"{self.path}.{self.suffix}"

    def _include(self):
        if not self.spec.include:
            return None
        try:
            with open(os.path.join(self.folder, self.spec.include), encoding="utf-8",
                      errors="replace") as fh:
                return self.spec.include, fh.read()
        except OSError:
            self.log(f"Can't open dot include file {self.spec.include}")
            return None

    def write(self, dag, statuses, changed=False):
        """Draw the DAG: at the start, or after a change (``changed``) with UPDATE."""
        from gridtools.formats.condor.dagdot import render_dot
        if not self.path or (changed and not self.spec.update):
            return
        name = self._name()
        from gridtools.ownfiles import write_replacing
        try:
            write_replacing(name, render_dot(dag, statuses, time.time(), self._include()))
        except OSError as exc:
            self.log(f"Can't create dot file '{name}': {exc.strerror}")


def write_metrics(path, metrics, log):
    """DAGFILE.metrics, as HTCondor 24.0's DAGMan writes it when it exits: one JSON
    object, its members in HTCondor's order (``metrics``: name -> value; times as
    seconds with three decimals). Written over, without following a link another user
    planted in a sticky folder on the way (``ownfiles.open_own``)."""
    lines = []
    for name, value in metrics.items():
        if isinstance(value, float):
            text = f"{value:.3f}"
        elif isinstance(value, str):
            text = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        else:
            text = str(int(value))
        lines.append(f'    "{name}":{text}')
    try:
        from gridtools.ownfiles import open_own
        fd = open_own(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK, 0o644, follow_last=False)
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write("{\n" + ",\n".join(lines) + "\n}\n")
        log(f"Wrote metrics file {path}.")
    except OSError as exc:
        log(f"Could not open {path} for writing ({exc.strerror or exc}).")
