"""The PRE and POST scripts of a DAG's nodes, as the DAG runner runs them.

``NodeScripts`` is a part of ``dagrun.Runner``: it runs a node's script in the
node's folder with DAGMan's macros ($JOB, $RETURN, $DAG_STATUS, ...) put in
its arguments, runs it again after its DEFER time while it exits with its
DEFER status, appends its output to its DEBUG file, and says its start and
end in DAGFILE.dagman.out and the job state log.
"""

import os
import shlex
import subprocess
import time

#: seconds between two looks at the node jobs (and at a deferred script's time)
POLL = 0.5


class _CutShort:
    """The outcome of a script cut short by the manager's own stop (``CUT_SHORT``)."""

    def __repr__(self):
        return "CUT_SHORT"


#: what ``NodeScripts._script`` gives for a script that the manager's stop cut short
CUT_SHORT = _CutShort()


class NodeScripts:
    """The scripts of a Runner's nodes (see the module docstring)."""

    def _script(self, name, when, status):
        """Run a node's PRE or POST script; its exit status, or None without one. A
        script that exits with its DEFER status runs again DEFER time seconds later.
        A script cut short because the manager itself is stopping (held, vacated or
        removed: the signal reaches the script too) gives CUT_SHORT and is recorded
        nowhere, as with HTCondor's DAGMan, whose script reaper never runs then: no
        end in the job state log, no event 016, so a recovering manager runs it again."""
        from gridtools.formats.condor.dag import ScriptWhen
        node = self.dag.nodes[name]
        script = node.scripts.get(ScriptWhen[when])
        if script is None:
            return None
        self.scripting[when].add(name)
        self._count()
        cluster = self.jobs.get(name, (0, 0))[0] if when == "POST" else 0
        job_id = f"{cluster}.0" if cluster else "-"
        self.jobstate.node(name, f"{when}_SCRIPT_STARTED", job_id)
        self.log(f"Running {when} script of Node {name}...")
        try:
            code = self._run_script(name, when, status, node, script)
        finally:
            self.scripting[when].discard(name)
        if code is CUT_SHORT:
            self.log(f"{when} Script of node {name} was cut short: the DAG manager is "
                     + ("being removed" if self.removing else
                        "stopping; it runs again when the DAG is recovered"))
            return CUT_SHORT
        if cluster:
            self.jobstate.node(name, "POST_SCRIPT_TERMINATED", job_id)
        self.jobstate.node(name, f"{when}_SCRIPT_{'SUCCESS' if code == 0 else 'FAILURE'}", job_id)
        return code

    def _stops(self):
        """The manager's stops asked so far (each goes from False to True only once)."""
        return (self.removing, self.stopping)

    def _run_script(self, name, when, status, node, script):
        before = self._stops()              # a FINAL node's scripts run during a removal
        while True:
            words = [self._macro(w, name, when, status) for w in shlex.split(script.command)]
            cwd = os.path.join(self.folder, node.directory) if node.directory else self.folder
            if words and not os.path.isabs(words[0]) and os.path.exists(os.path.join(cwd, words[0])):
                words[0] = os.path.join(cwd, words[0])          # a script beside the DAG
            streams = script.debug_streams if script.debug_file else ""
            pipe = {"stdout": subprocess.PIPE if streams in ("STDOUT", "ALL") else None,
                    "stderr": subprocess.PIPE if streams in ("STDERR", "ALL") else None}
            try:
                done = subprocess.run(words, cwd=cwd, stdin=subprocess.DEVNULL, check=False, **pipe)
            except OSError as exc:
                self.log(f"{when} Script of node {name} could not run: {exc.strerror}")
                return 1
            if self._stops() != before:
                return CUT_SHORT            # its end is the manager's stop, not its own
            code = done.returncode
            if streams:
                self._debug_output(name, when, script, cwd, words, done)
            if script.defer_status is None or code != script.defer_status:
                break
            self.log(f"{when} Script of node {name} exited with its DEFER status {code}: "
                     f"running it again in {script.defer_time} seconds")
            until = time.monotonic() + script.defer_time
            while time.monotonic() < until and self._stops() == before:
                time.sleep(min(POLL, max(0.0, until - time.monotonic())))
            if self._stops() != before:
                return CUT_SHORT            # deferred, not run again: not ended
        if code == 0:
            self.log(f"{when} Script of node {name} completed successfully.")
        else:
            self.log(f"{when} Script of node {name} failed with status {code}")
        return code

    def _debug_output(self, name, when, script, cwd, words, done):
        """SCRIPT DEBUG: append what the script wrote on the chosen streams to its debug
        file (taken relative to the node's folder), after a line saying which run it
        was, as HTCondor's DAGMan writes it: its standard output, then its error."""
        head = (f"*** Node={name} Type={when} Status={done.returncode} "
                f"Completion={int(time.time())} Cmd='{' '.join(words)}'\n").encode()
        path = os.path.join(cwd, script.debug_file)
        try:
            with open(path, "ab") as fh:
                fh.write(head + (done.stdout or b"") + (done.stderr or b""))
        except OSError as exc:
            self.log(f"ERROR: writing the output of the {when} script of node {name} to {path} "
                     f"failed: {exc.strerror}")

    def _macro(self, word, name, when, status):
        """A script argument: a whole-word macro's value (as HTCondor's DAGMan gives
        them; those of the node's job only to POST scripts), else the word as it is."""
        from gridtools.formats.condor.dagstate import exit_code_macros, unreachable
        node = self.dag.nodes[name]
        key = word.upper()
        futile = unreachable(self.dag, self.failed) - self.done - self.failed
        values = {"$JOB": name, "$NODE": name, "$RETRY": str(self.attempts.get(name, 1) - 1),
                  "$MAX_RETRIES": str(node.retry), "$DAG_STATUS": str(self.dag_status()),
                  "$FAILED_COUNT": str(len(self.failed)), "$DONE_COUNT": str(len(self.done)),
                  "$NODE_COUNT": str(len(self.dag.nodes)), "$QUEUED_COUNT": str(len(self.running)),
                  "$FUTILE_COUNT": str(len(futile)), "$DAGID": str(self.own_id)}
        if key in values:
            return values[key]
        if when == "PRE":
            return word
        cluster, procs = self.jobs.get(name, (0, 0))
        pre = self.pre_status.get(name)
        job_values = {"$RETURN": str(status if status is not None else 0),
                      "$PRE_SCRIPT_RETURN": str(pre if pre is not None else -1),
                      "$JOBID": f"{cluster}.{max(procs - 1, 0)}", "$CLUSTERID": str(cluster),
                      "$JOB_COUNT": str(procs), "$SUCCESS": "True" if status == 0 else "False"}
        job_values.update(exit_code_macros(self.exit_codes.get(name, ())))
        return job_values.get(key, word)
