"""The PRE and POST scripts of a DAG's nodes, as the DAG runner runs them.

``NodeScripts`` is a part of ``dagrun.Runner``. A node's script is queued
(``_queue_script``) with what to do once it ended; the runner's loop starts
queued scripts (``_launch_waiting``), in the order they were queued, while
fewer than -MaxPre PRE scripts (resp. -MaxPost POST scripts) run (0: no
limit; HTCondor's DAGMan's DAGMAN_MAX_PRE_SCRIPTS and DAGMAN_MAX_POST_SCRIPTS
default to 20), and collects those that ended (``_reap_scripts``). A script
runs in the node's folder with its command split as HTCondor's DAGMan splits
it (``script_words``: at spaces and tabs, quotes being ordinary characters)
and DAGMan's macros ($JOB, $RETURN, $DAG_STATUS, ...) put in its arguments,
runs again after its DEFER time while it exits with its DEFER status, appends its output to its DEBUG file, and says its
start and end in DAGFILE.dagman.out and the job state log. While the DAG is
halted no queued PRE script starts. A macro warning (strictness 1) that
DAGMAN_USE_STRICT makes fatal keeps its script from running, and once a warning
was fatal no script starts but the FINAL node's.
"""

import os
import subprocess
import tempfile
import time

#: the macros of a node's job, given to POST (and HOLD) scripts only
JOB_MACROS = ("$JOBID", "$CLUSTERID", "$JOB_COUNT", "$SUCCESS", "$RETURN", "$EXIT_CODES",
              "$EXIT_CODE_COUNTS", "$EXIT_CODE_LIST", "$PRE_SCRIPT_RETURN", "$JOB_ABORT_COUNT")
#: seconds between two looks at the node jobs (and at the scripts)
POLL = 0.5
#: HTCondor's DAGMan's default DAGMAN_MAX_PRE_SCRIPTS and DAGMAN_MAX_POST_SCRIPTS
MAX_SCRIPTS = 20
#: seconds a script the manager's own stop signalled is given to end before it is killed
STOP_GRACE = 5


def script_words(command):
    """The words of a SCRIPT's command as HTCondor's DAGMan splits it: at each run of
    spaces and tabs, with no quoting (a quote is a character of its word, and a word
    is never joined to the next), other white space trimmed from each word's ends."""
    return [w for w in (part.strip() for part in command.replace("\t", " ").split(" ")) if w]


class _CutShort:
    """The outcome of a script cut short by the manager's own stop (``CUT_SHORT``)."""

    def __repr__(self):
        return "CUT_SHORT"


#: what a queued script's continuation is given for a script the manager's stop cut short
CUT_SHORT = _CutShort()


class _Run:
    """A script running now."""

    def __init__(self, name, when, status, proc, words, before, streams):
        self.name, self.when, self.status, self.proc = name, when, status, proc
        self.words, self.before, self.streams = words, before, streams


class NodeScripts:
    """The scripts of a Runner's nodes (see the module docstring)."""

    def _init_scripts(self):
        self.waiting = []                   # (name, when, status, first run) to start, in order
        self.deferred = []                  # (when due, name, when, status): DEFER
        self.active = {}                    # node -> _Run
        self.then = {}                      # node -> what to do with its script's exit status

    def _queue_script(self, name, when, status, then):
        """Run the node's PRE or POST script (``when``) when a place is free, then
        ``then(code)``: its exit status, or CUT_SHORT. A node without that script goes on
        at once: ``then(None)``."""
        from gridtools.formats.condor.dag import ScriptWhen
        if self.node_of(name).scripts.get(ScriptWhen[when]) is None:
            then(None)
            return
        self.scripting[when].add(name)
        self.then[name] = then
        self.waiting.append((name, when, status, True))
        self._count()
        self._launch_waiting()

    def script_limit(self, when):
        value = self.opts.get("maxpre" if when == "PRE" else "maxpost")
        return MAX_SCRIPTS if value is None else int(value)

    def _launch_waiting(self):
        """Start the queued scripts that may run now (deferred ones whose time came join
        the queue's end), in order, under the -MaxPre and -MaxPost limits."""
        now = time.monotonic()
        for entry in [d for d in self.deferred if d[0] <= now]:
            self.deferred.remove(entry)
            self.waiting.append(entry[1:] + (False,))
        for entry in list(self.waiting):
            name, when, status, first = entry
            if when == "PRE" and first and self.halted and name != self._final_name():
                continue
            if self.fatal_warnings and name != self._final_name():
                continue                    # (the DAG ends: cut short by ``_stop_scripts``)
            limit = self.script_limit(when)
            if limit and sum(1 for r in self.active.values() if r.when == when) >= limit:
                continue
            self.waiting.remove(entry)
            self._launch(name, when, status, first)

    def _scripts_busy(self):
        """Whether a script runs, is deferred, or waits for a place and may take one."""
        return bool(self.active or self.deferred or any(
            not (e[1] == "PRE" and e[3] and self.halted) for e in self.waiting))

    def _launch(self, name, when, status, first):
        from gridtools.formats.condor.dag import ScriptWhen
        node = self.node_of(name)
        script = node.scripts[ScriptWhen[when]]
        if first:
            cluster = self.jobs.get(name, (0, 0))[0] if when == "POST" else 0
            self.jobstate.node(name, f"{when}_SCRIPT_STARTED", f"{cluster}.0" if cluster else "-")
            self.log(f"Running {when} script of Node {name}...")
        fatal = self.fatal_warnings
        words = []
        for word in script_words(script.command):
            words.append(self._macro(word, name, when, status))
            if self.fatal_warnings != fatal:
                self._script_done(name, when, CUT_SHORT)        # never run: the DAG ends
                return
        cwd = self._cwd(node)
        if words and not os.path.isabs(words[0]) and os.path.exists(os.path.join(cwd, words[0])):
            words[0] = os.path.join(cwd, words[0])          # a script beside the DAG
        streams = script.debug_streams if script.debug_file else ""
        out = tempfile.TemporaryFile() if streams in ("STDOUT", "ALL") else None
        err = tempfile.TemporaryFile() if streams in ("STDERR", "ALL") else None
        try:
            proc = subprocess.Popen(words, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        except OSError as exc:
            self.log(f"{when} Script of node {name} could not run: {exc.strerror}")
            self._script_done(name, when, 1)
            return
        self.active[name] = _Run(name, when, status, proc, words, self._stops(), (out, err))

    def _cwd(self, node):
        return os.path.join(self.workdir, node.directory) if node.directory else self.workdir

    def _reap_scripts(self):
        """The scripts that ended: their DEBUG output, DEFER, their end said and acted on.
        A script that ended after the manager's own stop (hold, vacate, removal: the
        signal reaches the script too) is CUT_SHORT and recorded nowhere, as with
        HTCondor's DAGMan, whose script reaper never runs then: no end in the job state
        log, no event 016, so a recovering manager runs it again."""
        for name, run in list(self.active.items()):
            code = run.proc.poll()
            if code is None:
                continue
            del self.active[name]
            self._ended_script(run, code)

    def _ended_script(self, run, code):
        from gridtools.formats.condor.dag import ScriptWhen
        name, when = run.name, run.when
        script = self.node_of(name).scripts[ScriptWhen[when]]
        if self._stops() != run.before:     # its end is the manager's stop, not its own
            self._script_done(name, when, CUT_SHORT)
            return
        if script.debug_file:
            self._debug_output(name, when, script, run, code)
        if script.defer_status is not None and code == script.defer_status:
            self.log(f"{when} Script of node {name} exited with its DEFER status {code}: "
                     f"running it again in {script.defer_time} seconds")
            self.deferred.append((time.monotonic() + script.defer_time, name, when, run.status))
            return
        if code == 0:
            self.log(f"{when} Script of node {name} completed successfully.")
        else:
            # (HTCondor's words: "Node" for a PRE script)
            self.log(f"{when} Script of {'Node' if when == 'PRE' else 'node'} {name} failed with status {code}")
        cluster = self.jobs.get(name, (0, 0))[0] if when == "POST" else 0
        job_id = f"{cluster}.0" if cluster else "-"
        if cluster:
            self.jobstate.node(name, "POST_SCRIPT_TERMINATED", job_id)
        self.jobstate.node(name, f"{when}_SCRIPT_{'SUCCESS' if code == 0 else 'FAILURE'}", job_id)
        self._script_done(name, when, code)

    def _script_done(self, name, when, code):
        self.scripting[when].discard(name)
        then = self.then.pop(name)
        if code is CUT_SHORT:
            self.log(f"{when} Script of node {name} was cut short: the DAG manager is "
                     + ("being removed" if self.removing else
                        "ending: a warning was fatal (DAGMAN_USE_STRICT)" if self.fatal_warnings else
                        "stopping; it runs again when the DAG is recovered"))
        then(code)

    def _stop_scripts(self, keep=None):
        """The manager stops (held, vacated, removed, aborted): the scripts that run (but
        node ``keep``'s) are given STOP_GRACE seconds to end (the stop's signal reached
        them) and are then killed, and are cut short; queued and deferred ones (but
        ``keep``'s) are dropped unrun, and cut short as well."""
        doomed = [r for n, r in self.active.items() if n != keep]
        until = time.monotonic() + STOP_GRACE
        for run in doomed:
            try:
                run.proc.wait(max(0.0, until - time.monotonic()))
            except subprocess.TimeoutExpired:
                run.proc.kill()
                run.proc.wait()
            del self.active[run.name]
            self._script_done(run.name, run.when, CUT_SHORT)
        for entry in [e for e in self.waiting if e[0] != keep]:
            self.waiting.remove(entry)
            self._script_done(entry[0], entry[1], CUT_SHORT)
        for entry in [e for e in self.deferred if e[1] != keep]:
            self.deferred.remove(entry)
            self._script_done(entry[1], entry[2], CUT_SHORT)

    def _drop_waiting_pre(self):
        """A halted DAG ends: the PRE scripts still queued do not run (their nodes are not
        done; the rescue DAG runs them)."""
        for entry in [e for e in self.waiting if e[1] == "PRE"]:
            self.waiting.remove(entry)
            self.scripting["PRE"].discard(entry[0])
            self.then.pop(entry[0], None)
            self.log(f"Node {entry[0]}: its PRE script did not run: the DAG is halted")

    def _stops(self):
        """The manager's stops asked so far (each goes from False to True only once)."""
        return (self.removing, self.stopping)

    def _debug_output(self, name, when, script, run, code):
        """SCRIPT DEBUG: append what the script wrote on the chosen streams to its debug
        file (taken relative to the node's folder), after a line saying which run it
        was, as HTCondor's DAGMan writes it: its standard output, then its error."""
        head = (f"*** Node={name} Type={when} Status={code} "
                f"Completion={int(time.time())} Cmd='{' '.join(run.words)}'\n").encode()
        path = os.path.join(self._cwd(self.node_of(name)), script.debug_file)
        texts = []
        for stream in run.streams:
            if stream is not None:
                stream.seek(0)
                texts.append(stream.read())
                stream.close()
        from gridtools.ownfiles import open_text
        try:
            with open_text(path, "a", binary=True) as fh:
                fh.write(head + b"".join(texts))
        except OSError as exc:
            self.log(f"ERROR: writing the output of the {when} script of node {name} to {path} "
                     f"failed: {exc.strerror}")

    def _macro(self, word, name, when, status):
        """A script argument: a whole-word macro's value (as HTCondor's DAGMan gives
        them, in any case; those of the node's job only to POST scripts), else the word
        as it is. As DAGMan, a job's macro in a PRE script and a word that begins with
        $ but is no macro are warned of in DAGFILE.dagman.out and passed on as they are."""
        from gridtools.formats.condor.dagstate import exit_code_macros, unreachable
        node = self.node_of(name)
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
            if key in JOB_MACROS:
                self.warn(f"Warning: {key} macro should not be used as a PRE script argument!", 1)
            elif word.startswith("$"):
                self.warn(f"Warning: unrecognized macro {word} in node {name} PRE script arguments", 1)
            return word
        cluster, procs = self.jobs.get(name, (0, 0))
        pre = self.pre_status.get(name)
        job_values = {"$RETURN": str(status if status is not None else 0),
                      "$PRE_SCRIPT_RETURN": str(pre if pre is not None else -1),
                      "$JOBID": f"{cluster}.{max(procs - 1, 0)}", "$CLUSTERID": str(cluster),
                      "$JOB_COUNT": str(procs), "$SUCCESS": "True" if status == 0 else "False"}
        job_values.update(exit_code_macros(self.exit_codes.get(name, ())))
        if key not in job_values and word.startswith("$"):
            self.warn(f"Warning: unrecognized macro {word} in node {name} {when} script arguments", 1)
        return job_values.get(key, word)
