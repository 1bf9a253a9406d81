"""What the DAG runner writes to the nodes log of its own, and reads back in recovery.

``NodesLog`` is a part of ``dagrun.Runner``. Besides the node jobs' events
(which the daemon writes), the nodes log DAGFILE.nodes.log gets, as
HTCondor's DAGMan writes them: the end of each POST script (event 016), and
for a NOOP node a submit event and a termination event (return value 0) of a
job that never was, numbered ``000.2147483647.N`` (cluster 0, proc INT_MAX,
N counting the NOOP nodes' runs), noted ``DAG Node: NAME``. A manager that
takes over a DAG whose manager is gone (``recover``) reads them back: a
node's job is followed again, a NOOP node that ran is done (or its POST
script runs, when it had not ended), a POST script that ended is not run
again, a SERVICE node's job is followed again (and removed at the DAG's end), not
submitted twice. A node whose PRE script exited with its PRE_SKIP value gets a PRE_SKIP event
(034, numbered as a NOOP node's fake job, noted ``DAG Node: NAME``): recovered, it is
done. A node whose PRE script failed has nothing in the log (HTCondor's
DAGMan writes no event for it either) and runs again.
"""

import os
import time

#: the proc of the events the manager writes for a NOOP node (HTCondor's NOOP_NODE_PROCID)
NOOP_PROC = 2147483647


def _post_status(info):
    """The exit status of a POST script as its event 016 gives it (minus the signal)."""
    if info.get("TerminatedNormally", True):
        return int(info.get("ReturnValue", 0))
    return -int(info.get("TerminatedBySignal", 0))


def _node_of(note):
    """The node a ``DAG Node: NAME`` note names (None for another note)."""
    note = str(note or "")
    return note.split(":", 1)[1].strip() if note.startswith("DAG Node:") else None


class NodesLog:
    """The runner's own events in the nodes log and its recovery (module docstring)."""

    def _write_events(self, events, what):
        from gridtools.formats.condor import userlog
        text = "".join(userlog.render_event(e) for e in events)
        try:
            fd = os.open(self.nodes_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            try:
                os.write(fd, text.encode("utf-8", "backslashreplace"))
            finally:
                os.close(fd)
        except OSError as exc:
            self.log(f"WARNING: writing the {what} to {self.nodes_log} failed: {exc}")

    def _note_noop(self, name):
        """A NOOP node's fake job: its submit and termination events."""
        from gridtools.formats.condor import userlog
        self.noop_runs += 1
        subproc = self.noops[name] = self.noop_runs
        now = time.time()
        self._write_events([
            userlog.Event(userlog.EventType.SUBMIT, 0, NOOP_PROC, subproc, now,
                          {"SubmitHost": "<dummy-submit-for-noop-job>", "LogNotes": f"DAG Node: {name}"}),
            userlog.Event(userlog.EventType.JOB_TERMINATED, 0, NOOP_PROC, subproc, now,
                          {"TerminatedNormally": True, "ReturnValue": 0})], f"events of NOOP node {name}")

    def _note_pre_skip(self, name):
        """A node whose PRE script exited with its PRE_SKIP value: event 034, numbered as a
        NOOP node's fake job (HTCondor's DAGMan numbers both from one counter), noted
        ``DAG Node: NAME``, so that a manager that recovers the DAG takes the node as done."""
        from gridtools.formats.condor import userlog
        self.noop_runs += 1
        self._write_events([userlog.Event(userlog.EventType.PRE_SKIP, 0, NOOP_PROC, self.noop_runs,
                                          time.time(), {"SkipEventLogNotes": f"DAG Node: {name}"})],
                           f"PRE_SKIP event of node {name}")

    def _note_post(self, name, code):
        """Write the end of a node's POST script to the nodes log (event 016, as HTCondor's
        DAGMan writes it), for a manager that recovers the DAG later (``recover``)."""
        from gridtools.formats.condor import userlog
        if name in self.noops:
            cluster, proc, subproc = 0, NOOP_PROC, self.noops[name]
        else:
            cluster, proc, subproc = self.jobs.get(name, (0, 0))[0], 0, 0
            if not cluster:
                return
        info = {"TerminatedNormally": True, "ReturnValue": code, "DAGNodeName": name} if code >= 0 \
            else {"TerminatedNormally": False, "TerminatedBySignal": -code, "DAGNodeName": name}
        self._write_events([userlog.Event(userlog.EventType.POST_SCRIPT_TERMINATED, cluster, proc,
                                          subproc, time.time(), info)],
                           f"POST script event of node {name}")

    def recover(self, since):
        """Recovery mode: restore what the manager that ran before knew from the nodes
        log (from offset ``since``, where the DAG's run began): each node whose job was
        submitted is followed again from its last submitted cluster (its job may still
        be queued or running, or may have ended: then its end is taken as it is), and
        counts the submits as its attempts. No node job is submitted twice; a NOOP node
        that ran is not run again."""
        from gridtools.formats.condor import userlog
        self.in_recovery = True
        self.jobstate.recovery_started()
        self._count()
        from gridtools.ownfiles import read_trusted
        try:
            text = read_trusted(self.nodes_log, binary=True)[since:].decode("utf-8", "replace")
        except OSError:
            text = ""
        try:
            events = userlog.parse_events(text)
        except Exception:  # noqa: BLE001 - a log being written may end mid-event
            events = []
        clusters, procs, posts, noops, skipped, services = {}, {}, {}, {}, [], {}
        for event in events:
            if event.type is userlog.EventType.PRE_SKIP:
                self.noop_runs = max(self.noop_runs, event.subproc)
                name = _node_of(event.info.get("SkipEventLogNotes"))
                if name in self.dag.nodes and name not in self.done and name not in skipped:
                    skipped.append(name)
                continue
            if event.type is userlog.EventType.POST_SCRIPT_TERMINATED:
                posts[(event.cluster, event.subproc, event.info.get("DAGNodeName"))] = event.info
                continue
            if event.type is not userlog.EventType.SUBMIT:
                continue
            name = _node_of(event.info.get("LogNotes"))
            if name in self.dag.services:
                cluster, count = services.get(name, (event.cluster, 0))
                services[name] = (event.cluster, event.proc + 1 if cluster != event.cluster
                                  else max(count, event.proc + 1))
                continue
            if name not in self.dag.nodes or name in self.done:
                continue
            if event.cluster == 0 and event.proc == NOOP_PROC:
                noops.setdefault(name, []).append(event.subproc)
                continue
            seen = clusters.setdefault(name, [])
            if event.cluster not in seen:
                seen.append(event.cluster)
            procs[event.cluster] = max(procs.get(event.cluster, 0), event.proc + 1)
        for name, (cluster, count) in services.items():
            self.recover_service(name, cluster, count)
        for name in skipped:            # its PRE script skipped it: done, whatever ran before
            noops.pop(name, None)
            for cluster in clusters.pop(name, []):
                self.jobs_submitted += procs[cluster]
            self.done.add(name)
            self.log(f"Recovery: node {name}'s PRE script exited with its PRE_SKIP value; "
                     "the node is done")
        ended, again = [], []
        for name, runs in noops.items():
            self.attempts[name] = len(runs)
            self.noops[name] = runs[-1]
            post = posts.get((0, runs[-1], name))
            if post is not None:
                ended.append((name, _post_status(post)))
            else:
                again.append(name)
        self.noop_runs = max([self.noop_runs] + [s for runs in noops.values() for s in runs])
        for name, seen in clusters.items():
            self.jobs_submitted += sum(procs[c] for c in seen)
            self.attempts[name] = len(seen)
            self.jobs[name] = (seen[-1], procs[seen[-1]])
            post = posts.get((seen[-1], 0, name))
            if post is not None:
                ended.append((name, _post_status(post)))
                continue
            self.running[name] = self.jobs[name]
            self.log(f"Recovery: node {name} has job(s) in cluster {seen[-1]}; following it")
        for name, status in ended:      # its last job ended and its POST script ran
            self.log(f"Recovery: node {name}'s POST script already ran (status {status}); "
                     "it is not run again")
            if status == 0:
                self.done.add(name)
            else:
                self._node_failed(name, status)
        for name in again:              # a NOOP node that ran: its POST script (if any) is left
            self.log(f"Recovery: NOOP node {name} ran; it is not run again")
            self._ended(name, 0, job=False)
        self.log(f"Recovery mode: {len(self.running)} node(s) with submitted job(s) restored "
                 f"from {self.nodes_log}")
        self.jobstate.recovery_finished()
        self.in_recovery = False
