"""The DAG runner's loop: start ready nodes, follow their jobs, retry, abort, rescue.

See ``cli.condor.dagman`` for what a run does; ``Runner.run`` is the loop,
the choice of what may run is ``formats.condor.dagstate``'s, node job ends
come from ``dagwatch``.
"""

import os
import shlex
import subprocess
import time

from gridtools.errors import GridError

#: seconds between two looks at the node jobs
POLL = 0.5
#: the exit status of a DAG with failed nodes (or removed)
EXIT_FAILED = 1
#: the most rescue DAGs kept (DAGMAN_MAX_RESCUE_NUM)
MAX_RESCUE = 100
#: the $RETURN a POST script gets for a node whose PRE script failed or whose job was removed
RETURN_NO_JOB = -1004


class Runner:
    """One run of a DAG."""

    def __init__(self, dag_file, dag, opts, log):
        from gridtools.cli.condor.dagwatch import Watcher
        self.dag_file, self.dag, self.opts, self.log = dag_file, dag, opts, log
        self.folder = os.path.dirname(os.path.abspath(dag_file))
        self.nodes_log = os.path.abspath(dag_file) + ".nodes.log"
        self.watcher = Watcher(self.nodes_log)
        self.done = {n for n, node in dag.nodes.items() if node.done}
        self.failed, self.running, self.attempts = set(), {}, {}
        self.removing = False
        self.abort_code = None
        self.own_id = int(os.environ.get("JOB_ID", "0") or 0)
        self.counted = None                 # the node counts the manager's job ad shows

    # ------------------------------------------------------------ the loop
    def run(self):
        from gridtools.formats.condor.dagstate import ready_nodes
        self.log(f"DAG {self.dag_file}: {len(self.dag.nodes)} nodes, {len(self.done)} done before")
        while True:
            if self.removing or self.abort_code is not None:
                self._remove_running()
                break
            limit = int(self.opts.get("maxjobs") or 0)
            for name in ready_nodes(self.dag, self.done, self.failed, self.running):
                if limit and len(self.running) >= limit:
                    break
                self._start(name)
            if not self.running and not ready_nodes(self.dag, self.done, self.failed, self.running):
                break
            self._count()
            time.sleep(POLL)
            self._follow(time.time())
        self._count()
        return self._finish()

    def _count(self):
        """Show the DAG's node counts in the manager's job ad (DAG_NodesTotal,
        DAG_NodesDone, DAG_NodesFailed, as HTCondor's DAGMan keeps them up to date):
        condor_q's batch view counts the DAG's row by them. Only changes are sent."""
        counts = (len(self.dag.nodes), len(self.done), len(self.failed))
        if not self.own_id or counts == self.counted:
            return
        from gridtools.cli.ask import outcomes
        attrs = {"DAG_NodesTotal": str(counts[0]), "DAG_NodesDone": str(counts[1]),
                 "DAG_NodesFailed": str(counts[2])}
        try:
            outcomes("condor_qedit", {"targets": [{"id": self.own_id, "tasks": None}], "attrs": attrs})
            self.counted = counts
        except GridError as exc:
            self.log(f"WARNING: showing the node counts in job {self.own_id} failed: {exc}")

    def remove_requested(self, *_):
        """condor_rm / qdel of the DAGMan job: stop, remove the node jobs, leave a rescue DAG."""
        self.removing = True

    # ------------------------------------------------------------ starting a node
    def _start(self, name):
        node = self.dag.nodes[name]
        self.attempts[name] = self.attempts.get(name, 0) + 1
        if node.noop:
            self.log(f"Node {name}: NOOP, done")
            self._ended(name, 0, job=False)
            return
        pre = self._script(name, "PRE", None)
        if pre is not None and pre != 0:
            self.log(f"PRE Script of node {name} failed with status {pre}")
            self._node_failed(name, pre, job=False)
            return
        try:
            submitted = self._submit(name, node)
        except (GridError, OSError) as exc:
            self.log(f"ERROR: submitting the job of node {name} failed: {exc}")
            self._node_failed(name, RETURN_NO_JOB, job=False)
            return
        self.running[name] = (submitted.cluster, submitted.procs)
        self.log(f"Submitting HTCondor Node {name} job(s)... {submitted.procs} job(s) submitted to "
                 f"cluster {submitted.cluster}.")

    def _submit(self, name, node):
        from gridtools.cli.condor import jobsubmit
        cwd = os.path.join(self.folder, node.directory) if node.directory else self.folder
        path = os.path.join(cwd, node.submit_file)
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        extra = {"DAGManJobId": self.own_id, "DAGNodeName": name, "DAGManNodesLog": self.nodes_log,
                 "SubmitEventNotes": f"DAG Node: {name}",
                 "DAGParentNodeNames": ",".join(sorted(self.dag.parents(name)))}
        if node.priority:
            extra["JobPrio"] = int(node.priority)
        variables = dict(node.vars)
        variables.setdefault("DAGManJobId", str(self.own_id))
        variables.setdefault("JOB", name)
        return jobsubmit.submit_text(text, cwd, source=path, variables=variables, extra=extra,
                                     batch_name=self.opts.get("batch_name"))

    # ------------------------------------------------------------ following jobs
    def _follow(self, now):
        self.watcher.refresh(now)
        for name, (cluster, procs) in list(self.running.items()):
            codes = self.watcher.outcome(cluster, procs)
            if codes is None:
                continue
            del self.running[name]
            bad = [c for c in codes if c != 0]
            status = RETURN_NO_JOB if bad and any(c is None for c in bad) else (bad[0] if bad else 0)
            self.log(f"Node {name} job(s) (cluster {cluster}) ended with status {status}")
            self._ended(name, status)

    def _ended(self, name, status, job=True):
        post = self._script(name, "POST", status)
        final = post if post is not None else status
        if final == 0:
            self.done.add(name)
            self.log(f"Node {name} completed successfully.")
            return
        self._node_failed(name, final, job)

    def _node_failed(self, name, status, job=True):
        from gridtools.formats.condor.dagstate import abort_status, should_retry
        node = self.dag.nodes[name]
        aborted = abort_status(node, status)
        if aborted is not None:
            self.log(f"Aborting DAG because node {name} exited with status {status} (ABORT-DAG-ON)")
            self.failed.add(name)
            self.abort_code = aborted
            return
        if should_retry(node, self.attempts[name], status):
            self.log(f"Node {name} failed with status {status}; retrying "
                     f"({self.attempts[name]} of {node.retry} retries)")
            return                          # ready again: started by the next round
        self.failed.add(name)
        self.log(f"Node {name} failed with status {status}.")

    def _script(self, name, when, status):
        """Run a node's PRE or POST script; its exit status, or None without one."""
        from gridtools.formats.condor.dag import ScriptWhen
        node = self.dag.nodes[name]
        script = node.scripts.get(ScriptWhen[when])
        if script is None:
            return None
        values = {"$JOB": name, "$RETRY": str(self.attempts.get(name, 1) - 1),
                  "$MAX_RETRIES": str(node.retry), "$RETURN": str(status if status is not None else 0),
                  "$DAG_STATUS": "0", "$FAILED_COUNT": str(len(self.failed))}
        words = shlex.split(script.command)
        words = [_substitute(w, values) for w in words]
        cwd = os.path.join(self.folder, node.directory) if node.directory else self.folder
        if words and not os.path.isabs(words[0]) and os.path.exists(os.path.join(cwd, words[0])):
            words[0] = os.path.join(cwd, words[0])          # a script beside the DAG
        try:
            done = subprocess.run(words, cwd=cwd, stdin=subprocess.DEVNULL, check=False)
        except OSError as exc:
            self.log(f"{when} Script of node {name} could not run: {exc.strerror}")
            return 1
        self.log(f"{when} Script of node {name} completed with status {done.returncode}")
        return done.returncode

    # ------------------------------------------------------------ ending
    def _remove_running(self):
        from gridtools.cli.ask import outcomes
        if not self.running:
            return
        targets = [{"id": cluster, "tasks": None} for cluster, _procs in self.running.values()]
        try:
            outcomes("delete", {"targets": targets, "force": False, "dialect": "condor"})
        except GridError as exc:
            self.log(f"ERROR: removing the running node jobs failed: {exc}")
        for name in self.running:
            self.failed.add(name)
            self.log(f"Node {name}: its job was removed")
        self.running.clear()

    def _finish(self):
        if self.failed or self.removing or self.abort_code is not None:
            self._write_rescue()
        if self.abort_code is not None:
            return int(self.abort_code)
        if self.failed or self.removing:
            return EXIT_FAILED
        self.log("All jobs Completed!")
        return 0

    def _write_rescue(self):
        from gridtools.formats.condor import dagstate
        base = os.path.basename(self.dag_file)
        last = dagstate.latest_rescue(base, os.listdir(self.folder))[1]
        number = min(last + 1, MAX_RESCUE)
        name = dagstate.rescue_name(self.dag_file, number)
        created = time.strftime("%m/%d/%y %H:%M:%S", time.gmtime())
        text = dagstate.render_rescue(self.dag_file, self.dag, self.done, self.failed, created)
        with open(name, "w", encoding="utf-8") as fh:
            fh.write(text)
        self.log(f"Writing Rescue DAG file {name}")


def _substitute(word, values):
    for key in sorted(values, key=len, reverse=True):
        word = word.replace(key, values[key])
    return word
