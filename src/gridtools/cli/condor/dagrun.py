"""The DAG runner's loop: start ready nodes, follow their jobs, retry, abort, rescue.

See ``cli.condor.dagman`` for what a run does; ``Runner.run`` is the loop,
the choice of what may run is ``formats.condor.dagstate``'s, node job ends
come from ``dagwatch``, SERVICE and PROVISIONER nodes are ``dagservice``'s, the
warnings DAGMAN_USE_STRICT makes fatal end the DAG as an abort does (``warn``,
``dagstrict``). A
node whose submit description is written in the DAG file (``dagdesc``) is
submitted from that text as from a file in its folder.
"""

import os
import re
import time

from gridtools.cli.condor.dagrecover import NodesLog
from gridtools.cli.condor.dagscripts import CUT_SHORT, POLL, NodeScripts
from gridtools.cli.condor.dagservice import ServiceNodes
from gridtools.errors import GridError
from gridtools.formats.condor.dag import NodeKind, ScriptWhen

#: the exit status of a DAG with failed nodes (or halted, or whose FINAL node failed)
EXIT_FAILED = 1
#: the exit status of a DAG removed with condor_rm (HTCondor's DAGMan's EXIT_ABORT)
EXIT_REMOVED = 2
#: the exit status of a manager stopped by condor_hold (not 0-2: its job stays queued)
EXIT_STOPPED = 3
#: the most rescue DAGs kept (DAGMAN_MAX_RESCUE_NUM)
MAX_RESCUE = 100
#: the $RETURN a POST script gets for a node whose PRE script failed or whose job was removed
RETURN_NO_JOB = -1004
#: a POST script's $RETURN when its node's job could not be submitted (DAG_ERROR_CONDOR_SUBMIT_FAILED)
RETURN_SUBMIT_FAILED = -1001
#: the DAG's status once a warning was fatal (HTCondor's DAG_STATUS_ERROR)
STATUS_ERROR = 1
#: the return value of a node that has none yet (HTCondor's Node's first retval)
NO_RETURN_VALUE = -1
#: what DAGMan writes before the failed nodes it lists as a failed DAG shuts down; after
#: the FINAL node failed, its other words
FAILED_NODES = "ERROR: the following Node(s) failed:"
FAILED_AFTER_FINAL = "ERROR: the following job(s) failed:"


#: the reason DAGMan removes its node jobs with (condor_rm -reason: RemoveReason, with the
#: schedd's " (by user NAME)"), when the DAG was removed and when it aborts
REMOVED_REASON = "DAG Removed: User removed scheduler job from queue."
ABORT_REASON = "DAG Abort: DAG is exiting and writing rescue file."
#: the reason a node job is removed with when DAGMAN_MAX_JOB_HOLDS of its procs are held
HOLDS_REASON = "DAG Limit: Max number of held jobs was reached."


def _job_error(cluster, codes):
    """Why a node's jobs failed, as the node status file words it: the first proc that
    exited with a status other than 0, was killed by a signal, or left the queue without
    one."""
    for proc, code in enumerate(codes):
        if code is None:
            return f"HTCondor reported ULOG_JOB_ABORTED event for job proc ({cluster}.{proc}.0)"
        if code != 0:
            return f"Job proc ({cluster}.{proc}.0) {_how_failed(code)}"
    return ""


def _how_failed(code):
    """``failed with status N``, or ``failed with signal N`` for a proc a signal killed."""
    from gridtools.cli.condor.dagwatch import Signal
    if isinstance(code, Signal):
        return f"failed with signal {code.number}"
    return f"failed with status {code}"


def _node_dump(dag, name, failed):
    """The lines HTCondor's DAGMan writes of a node in DAGFILE.dagman.out (Node::Dump):
    ``failed`` gives its return value, why it failed, its job's id ((cluster, procs) or
    None) and whether it waits for a parent."""
    retval, error, job, waiting = failed
    node = dag.nodes[name]
    lines = ["---------------------- Node ----------------------", f"      Node Name: {name}",
             f"           Noop: {str(node.noop).lower()}", f"         NodeID: {list(dag.nodes).index(name)}",
             "    Node Status: STATUS_ERROR    ", f"Node return val: {retval}", f"          Error: {error}",
             f"Job Submit File: {node.submit_file}"]
    lines += [f"{when.value:>8} Script: {node.scripts[when].command}" for when in ScriptWhen
              if when in node.scripts]
    if node.retry > 0:
        lines.append(f"          Retry: {node.retry}")
    lines.append(f" HTCondor Job ID: ({job[0]}.0.0)" if job else " HTCondor Job ID: [not yet submitted]")
    parents, children = dag.parents(name), dag.children(name)
    lines.append(f"PARENTS: {' '.join(n for n in dag.nodes if n in parents)} WAITING: {int(waiting)} "
                 f"CHILDREN: {' '.join(n for n in dag.nodes if n in children)}")
    return lines


def _parent_dag():
    """The id of the DAG manager whose SUBDAG node this manager's job is (its ad's
    DAGManJobId, read from the job's ad file), or ""."""
    from gridtools.classad import ClassAdSyntaxError, parse_ad
    path = os.environ.get("_CONDOR_JOB_AD")
    try:
        with open(path or "", encoding="utf-8", errors="replace") as fh:
            found = parse_ad(fh.read()).eval("DAGManJobId")
    except (OSError, ClassAdSyntaxError):
        return ""
    return str(found) if type(found) in (int, str) else ""


def _created(t):
    """The time a rescue DAG says it was made, as HTCondor's DAGMan writes it (12/6/2026 04:52:03)."""
    return f"{t.tm_mon}/{t.tm_mday}/{t.tm_year} {t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"


class Runner(NodeScripts, NodesLog, ServiceNodes):
    """One run of a DAG."""

    def __init__(self, dag_file, dag, opts, log):
        from gridtools.cli.condor.dagstrict import DEFAULT, Strictness
        from gridtools.cli.condor.dagwatch import Watcher
        self.dag_file, self.dag, self.opts, self.log = dag_file, dag, opts, log
        self.strict = Strictness(opts.get("use_strict", DEFAULT), log)
        self.fatal_warnings = 0             # warnings DAGMAN_USE_STRICT made fatal: the DAG ends
        self.folder = os.path.dirname(os.path.abspath(dag_file))
        # (where the DAG's relative paths start: the folder condor_submit_dag ran in, which is
        # the manager's, or with -usedagdir the DAG file's, as HTCondor's DAGMan takes them)
        self.workdir = self.folder if opts.get("use_dag_dir") else os.getcwd()
        self.nodes_log = os.path.abspath(dag_file) + ".nodes.log"
        self.watcher = Watcher(self.nodes_log)
        self.done = {n for n, node in dag.nodes.items() if node.done}
        self.done_before = set(self.done)   # (the metrics count the nodes this run ran)
        self.started_at = time.time()
        self.failed, self.running, self.attempts = set(), {}, {}
        self.removed = set()                # nodes whose jobs the DAG's end removed: still
                                            # queued in its counts, as HTCondor's DAGMan
                                            # leaves them (not failed, as its rescue DAG says)
        self.removing = False
        self.stopping = False               # held or vacated: leave, the node jobs run on
        self.shut_down = False              # the lines of HTCondor's shutdown were written
        self.rescue_file = None             # the rescue DAG this run wrote (written again over)
        self.abort_code = None
        self.pre_status = {}                # node -> its PRE script's last exit status
        self.jobs = {}                      # node -> (cluster, procs) of its last job
        self.noops, self.noop_runs = {}, 0  # NOOP node -> the subproc of its last fake job
        self.exit_codes = {}                # node -> each proc's exit status (None: aborted)
        self.own_id = int(os.environ.get("JOB_ID", "0") or 0)
        self.counted = None                 # the progress attributes the manager's job ad shows
        self.scripting = {"PRE": set(), "POST": set()}     # nodes queued for or running that script
        self._init_scripts()
        self.parked = []                    # nodes whose PRE script ended, their jobs waiting
                                            # for the DAG to resume or for -MaxJobs/-MaxIdle
        self.in_recovery = False
        self.hold_next = set()              # nodes whose next job is submitted on hold
        self.submit_tries = {}              # node -> its job's failed submissions in a row
        self.next_submit_at, self.submit_wait = 0.0, 1      # (DAGMAN_MAX_SUBMIT_ATTEMPTS' backoff)
        self.no_retry = set()               # nodes whose RETRY a failed submission used up
        self.procs_held = {}                # node -> the procs of its job held now
        self.jobs_submitted = self.jobs_completed = 0       # procs, in this run
        self.halt_file = os.path.abspath(dag_file) + ".halt"
        self.halted = False                 # the halt file exists
        self.halt_exit = False              # the run ended because the DAG was halted
        from gridtools.cli.condor.dagfiles import JobstateLog
        jobstate = os.path.join(self.workdir, dag.jobstate_log) if dag.jobstate_log else ""
        self.jobstate = JobstateLog(jobstate, log, self._job_tag)
        from gridtools.cli.condor.dagfiles import NodeStatusFile
        self.status_file = NodeStatusFile(dag.status_file, self.workdir, log, self.warn)
        self.errors = {}                    # node -> why it failed (the node status file's details)
        self.return_values = {}             # node -> its return value when it last failed
        from gridtools.cli.condor.dagfiles import DotWriter
        self.dot = DotWriter(dag.dot, self.workdir, log)
        self.counts_shown = None            # the node counts when the progress last changed
        self._init_services()

    def begin(self):
        """The run's start in the job state log (before a recovery); a rescue DAG's run
        numbers its nodes' runs on from the last run's."""
        from gridtools.formats.condor.dagnodestatus import plain_statuses
        self.jobstate.started(self.own_id)
        if self.opts.get("rescue_run"):
            self.jobstate.rescue()
        self.dot.write(self.dag, plain_statuses(self.dag, self._progress()))

    def _job_tag(self, name):
        """The job tag of a node's lines in the job state log, from its submit file."""
        from gridtools.formats.condor.dagjobstate import NONE, job_tag
        from gridtools.formats.condor.dag import description_of
        node = self.node_of(name)
        text = description_of(self.dag, node)
        if text is not None:
            return job_tag(text)
        cwd = os.path.join(self.workdir, node.directory) if node.directory else self.workdir
        try:
            with open(os.path.join(cwd, node.submit_file), encoding="utf-8", errors="replace") as fh:
                return job_tag(fh.read())
        except OSError:
            return NONE

    # ------------------------------------------------------------ the loop
    def run(self):
        from gridtools.formats.condor.dagstate import ready_nodes
        problem = self._claim_nodes_log()
        if problem:
            self.log(f"ERROR: {problem}")
            return 1
        self.log(f"DAG {self.dag_file}: {len(self.dag.nodes)} nodes, {len(self.done)} done before")
        if not self.fatal_warnings:
            self.start_services()
        while True:
            if self.stopping or self.provisioner_lost:
                break
            if self.removing or self.abort_code is not None or self.fatal_warnings:
                # as HTCondor's DAGMan: the rescue DAG before the node jobs are removed (a
                # removed job's node is not a failed node of it) and the FINAL node runs
                self._shutdown_lines(self.write_rescue)
                self._remove_running()
                if self.active:
                    self.log("Removing running scripts...")
                self._stop_scripts()
                self._run_final()
                break
            for name in self._startable():      # (into the queue of jobs to submit, ``parked``,
                if self._stops() != (False, False):     # before it is served)
                    break
                if name == self._final_name() and self.failed - {name}:
                    self._shutdown_lines(self.write_rescue, FAILED_NODES)   # (the DAG failed: before FINAL)
                self._start(name)
            while self.parked and not self.check_halt() and not self._held_back() \
                    and self._stops() == (False, False) and time.time() >= self.next_submit_at:
                name = next((n for n in self.parked if not self._category_full(n)), None)
                if name is None:
                    break
                self.parked.remove(name)
                self._submit_node(name)
            if not self.running and not self._scripts_busy() and not self._startable() \
                    and (not self.parked or self.halted):
                break
            self._count()
            time.sleep(POLL)
            self._follow(time.time())
        if self.stopping:
            self._stop_scripts()
        if self.provisioner_lost:
            return self._lost()
        self._drop_waiting_pre()
        if self.halted and not self.stopping and not self.fatal_warnings \
                and ready_nodes(self.dag, self.done, self.failed, set(self.running) | self.removed):
            self.halt_exit = True
            self.log("Exiting because DAG is halted and no jobs or scripts are running")
            self._shutdown_lines(self.write_rescue, FAILED_NODES)
            self._run_final()
        if not self.stopping:
            self.follow_services(scripts=False)
            self.remove_services()
        self._count()
        code = self._finish()
        self._count(self._outcome(code), finished=not self.stopping)
        self.jobstate.finished(code)
        if not self.stopping:
            self.write_metrics(code)
        return code

    def _claim_nodes_log(self):
        """Make the nodes log now when it is missing, so that it is the DAG's owner's
        before any node job writes to it (in a folder others may write to, another user
        could make it first); why the DAG cannot run when it is not a regular file of
        the owner's (what it says is not taken), else None."""
        from gridtools.ownfiles import claim
        try:
            claim(self.nodes_log)
        except PermissionError:
            return f"the nodes log {self.nodes_log} is not a file of yours: what it says is not taken"
        except OSError as exc:
            return f"the nodes log {self.nodes_log} cannot be opened: {exc.strerror}"
        return None

    def write_metrics(self, code):
        """DAGFILE.metrics as HTCondor 24.0's DAGMan writes it at its exit: when it ran, its
        exit status, its id (and its parent DAG's, for a SUBDAG), the rescue DAG it ran,
        and its nodes (JOB and FINAL ones, SUBDAG ones) in all, failed and succeeded in
        this run."""
        from gridtools.cli.condor.dagfiles import write_metrics
        from gridtools.formats.condor import VERSION
        subdags = {n for n, node in self.dag.nodes.items() if node.kind is NodeKind.SUBDAG}
        succeeded = self.done - self.done_before
        counts = {}
        for kind, names in (("jobs", set(self.dag.nodes) - subdags), ("dag_jobs", subdags)):
            counts[kind] = len(names)
            counts[kind + "_failed"] = len(self.failed & names)
            counts[kind + "_succeeded"] = len(succeeded & names)
        ended = time.time()
        metrics = {"client": "condor_dagman", "version": VERSION.split()[1], "type": "metrics",
                   "start_time": self.started_at, "end_time": ended, "duration": ended - self.started_at,
                   "exitcode": code, "dagman_id": str(self.own_id), "parent_dagman_id": _parent_dag(),
                   "rescue_dag_number": int(self.opts.get("rescue_number") or 0), **counts,
                   "total_jobs": counts["jobs"] + counts["dag_jobs"],
                   "total_jobs_run": len(self.failed) + len(succeeded & set(self.dag.nodes)),
                   "DagStatus": self.dag_status()}
        write_metrics(os.path.abspath(self.dag_file) + ".metrics", metrics, self.log)

    def _lost(self):
        """The end of a DAG whose PROVISIONER node's job left the queue before it
        provisioned: at once, exit status 1, no rescue DAG and no FINAL node."""
        self.remove_services()
        self._count("failed", finished=True)
        self.jobstate.finished(EXIT_FAILED)
        return EXIT_FAILED

    def warn(self, text, level):
        """A warning of the run, of strictness ``level``: when DAGMAN_USE_STRICT makes it
        fatal, no node starts and no script runs any more (but the FINAL node's), and the
        loop ends the DAG (``run``). True when it was fatal."""
        self.log(text)
        if self.strict.fatal(level):
            self.fatal_warnings += 1
            return True
        return False

    def _outcome(self, code=None):
        """How the DAG stands for the node status file: "" while it runs, else held,
        success, removed, aborted or failed (``code``: the manager's exit status, at its end)."""
        if self.stopping:
            return "held"
        if code == 0:
            return "success"
        if self.removing:
            return "removed"
        if self.abort_code is not None and not self.fatal_warnings:
            return "aborted"
        return "failed" if code is not None else ""

    def _held_back(self):
        """Whether no further node job may be submitted now: -MaxJobs nodes have jobs in
        the queue, or -MaxIdle (DAGMAN_MAX_JOBS_IDLE) or more of the DAG's job procs are
        idle, as the last look at the queue showed them. As in HTCondor's DAGMan these
        throttle submissions only: a ready node's PRE script runs (within -MaxPre), and its
        job then waits in ``parked`` for its turn."""
        limit = int(self.opts.get("maxjobs") or 0)
        if limit and len(self.running) >= limit:
            return True
        idle = int(self.opts.get("maxidle") or 0)
        return bool(idle and self.watcher.proc_states(c for c, _procs in self.running.values())[0] >= idle)

    def _category_full(self, name):
        """Whether node ``name``'s category has as many nodes with jobs in the queue as its
        MAXJOBS allows: as HTCondor's DAGMan, the limit throttles the submission of the
        category's jobs, not its nodes' PRE scripts (the node's job waits in ``parked``)."""
        category = self.dag.nodes[name].category
        limit = self.dag.maxjobs.get(category) if category else None
        return limit is not None and sum(self.dag.nodes[n].category == category for n in self.running) >= limit

    def _startable(self):
        """The ready nodes the manager may start now: none but the FINAL node while the
        DAG is halted (``check_halt``)."""
        from gridtools.formats.condor.dagstate import ready_nodes
        ready = ready_nodes(self.dag, self.done, self.failed,
                            set(self.running) | (set(self.then) - set(self.dag.services)) | set(self.parked),
                            by_category=False,
                            provisioned=self.check_provisioner())
        if self.check_halt():
            final = self._final_name()
            return [n for n in ready if n == final]
        return ready

    def check_halt(self):
        """Whether the DAG is halted: its halt file (DAGFILE.halt) exists, as HTCondor's
        DAGMan halts. A halted DAG starts no node (no PRE script, no job: the job of a
        node whose PRE script ends then waits in ``parked``); running jobs and POST
        scripts go on. Removing the file resumes it. Only a halt file of the DAG's owner
        (or root) counts: one another user put in a shared folder does not halt it."""
        try:
            halted = os.lstat(self.halt_file).st_uid in (os.geteuid(), 0)
        except OSError:
            halted = False
        if halted != self.halted:
            self.log(f"DAG halted: {self.halt_file} exists; no new node is started" if halted
                     else f"DAG resumed: {self.halt_file} is gone")
            self.halted = halted
        return halted

    def _count(self, outcome=None, finished=False):
        """Show the DAG's progress in the node status file (``outcome`` given: its last
        rewrite, forced) and in the manager's job ad (``dagprogress``: DAG_Status,
        DAG_InRecovery, DAG_Nodes*, DAG_Jobs*, as HTCondor's DAGMan publishes them):
        condor_q's batch view counts the DAG's row by them. Only changes are sent."""
        from gridtools.formats.condor.dagprogress import progress_attrs
        progress = self._progress()
        self._changed(progress)
        self.status_file.update(self.dag, progress, self._details(outcome, finished),
                                force=outcome is not None)
        if not self.own_id:
            return
        attrs = progress_attrs(self.dag, progress)
        if attrs == self.counted:
            return
        from gridtools.cli.ask import outcomes
        sent = dict(attrs, DAG_AdUpdateTime=str(int(time.time())))
        try:
            outcomes("condor_qedit", {"targets": [{"id": self.own_id, "tasks": None}], "attrs": sent})
            self.counted = attrs
        except GridError as exc:
            self.warn(f"WARNING: showing the DAG's progress in job {self.own_id} failed: {exc}", 3)

    def _changed(self, progress):
        """When the node counts (or the held procs) changed: the progress table in
        DAGFILE.dagman.out, the DAG drawn again (DOT UPDATE)."""
        from gridtools.formats.condor.dagnodestatus import plain_statuses
        from gridtools.formats.condor.dagprogress import node_counts
        counts = dict(node_counts(self.dag, progress), held=progress.jobs_held)
        if counts == self.counts_shown:
            return
        self.counts_shown = counts
        self._print_status(counts)
        self.dot.write(self.dag, plain_statuses(self.dag, progress), changed=True)

    def _print_status(self, counts):
        """The DAG's progress table in DAGFILE.dagman.out, as HTCondor's DAGMan prints it."""
        self.log(f"Of {counts['Total']} nodes total:")
        self.log(" Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile")
        self.log("  ===     ===      ===     ===     ===        ===      ===      ===")
        self.log("{:5d}   {:5d}    {:5d}   {:5d}   {:5d}      {:5d}    {:5d}    {:5d}".format(
            *(counts[key] for key in ("Done", "Prerun", "Queued", "Postrun", "Ready", "Unready",
                                      "Failed", "Futile"))))
        self.log(f"{counts['held']} job proc(s) currently held")

    def _details(self, outcome, finished):
        """What the node status file says besides the progress counts."""
        from gridtools.formats.condor.dagnodestatus import Details
        if not self.status_file.path:
            return None
        final = self._final_name()
        procs = {}
        for name, (cluster, _procs) in self.running.items():
            idle, held, running = self.watcher.proc_states([cluster])
            procs[name] = (idle + held + running, held, running)
        return Details(dag_files=list(self.opts.get("dags") or [self.dag_file]),
                       outcome=self._outcome() if outcome is None else outcome,
                       final_pending=final is not None and final not in self.done | self.failed,
                       finished=finished, retries={n: max(a - 1, 0) for n, a in self.attempts.items()},
                       procs=procs, errors=dict(self.errors))

    def _progress(self):
        from gridtools.formats.condor.dagprogress import Progress
        idle, held, running = self.watcher.proc_states(c for c, _procs in self.running.values())
        return Progress(done=set(self.done), failed=set(self.failed),
                        queued=set(self.running) | (self.removed - self.failed),
                        prerun=self.scripting["PRE"] - set(self.dag.services),
                        postrun=self.scripting["POST"] - set(self.dag.services),
                        status=self.dag_status(), in_recovery=self.in_recovery,
                        jobs_submitted=self.jobs_submitted, jobs_completed=self.jobs_completed,
                        jobs_idle=idle, jobs_held=held, jobs_running=running)

    def remove_requested(self, *_):
        """condor_rm / qdel of the DAGMan job: stop, write the rescue DAG, remove the node
        jobs, run the FINAL node."""
        if not self.removing:
            self.log("Received SIGUSR1")
        self.removing = True

    def stop_requested(self, *_):
        """condor_hold (or a vacate) of the DAGMan job: submit nothing more and leave;
        the node jobs run on, and the next start recovers the DAG."""
        self.stopping = True

    # ------------------------------------------------------------ starting a node
    def _start(self, name):
        node = self.dag.nodes[name]
        self.attempts[name] = self.attempts.get(name, 0) + 1
        self.exit_codes.pop(name, None)         # a retry's macros are of its own jobs
        if self.attempts[name] > 1:
            self.jobstate.retried(name)
        if node.save_file and self.attempts[name] == 1:
            self._write_save(name, node)
        self._queue_script(name, "PRE", None, lambda pre: self._after_pre(name, pre))

    def _after_pre(self, name, pre):
        """A node's PRE script ended (``pre``: its exit status, None without one): submit
        its job, unless the script failed (then, with -AlwaysRunPost, its POST script
        runs with $RETURN -1004)."""
        node = self.dag.nodes[name]
        if pre is CUT_SHORT:
            self._cut_short(name, "PRE")
            return
        self.pre_status[name] = pre
        if pre is not None and pre != 0 and pre == node.pre_skip:
            self.log(f"PRE_SKIP return value {pre} indicates we are done (successfully) with node {name}")
            self._note_pre_skip(name)       # a recovering manager takes it as done
            self.done.add(name)
            return
        if pre is not None and pre != 0:
            if self.opts.get("always_run_post") and ScriptWhen.POST in node.scripts:
                self.log(f"PRE Script of node {name} failed: running its POST script (-AlwaysRunPost)")
                self._ended(name, RETURN_NO_JOB, job=False)
                return
            self.errors[name] = f"PRE Script failed with status {pre}"
            self._node_failed(name, pre, job=False)
            return
        if self.fatal_warnings and name != self._final_name():
            self.parked.append(name)        # (never submitted: the DAG ends)
            return
        if self.halted and name != self._final_name():
            self.log(f"Node {name}: its job waits: the DAG is halted")
            self.parked.append(name)        # submitted once the DAG resumes (``run``)
            return
        first = self.opts.get("depth_first") or (self.opts.get("retry_node_first") and self.attempts[name] > 1)
        if name != self._final_name() and (self.parked or self._held_back() or self._category_full(name) or first):
            # submitted in its turn (``run``): at the head of the queue with DAGMAN_SUBMIT_DEPTH_FIRST
            # (and a retry with DAGMAN_RETRY_NODE_FIRST), as HTCondor's DAGMan queues ready nodes;
            # the FINAL node at once
            self.parked.insert(0 if first else len(self.parked), name)
            return
        self._submit_node(name)

    def _submit_node(self, name):
        """A node whose PRE script succeeded (or that has none): its job submitted (a NOOP
        node's faked)."""
        node = self.dag.nodes[name]
        if node.noop:
            self.log(f"Node {name}: NOOP, its job is not submitted")
            self._note_noop(name)
            self._ended(name, 0, job=False)
            return
        try:
            submitted = self._submit(name, node)
        except (GridError, OSError, ArithmeticError, ValueError, TypeError) as exc:  # (the node fails, not the DAG)
            from gridtools.cli.condor.jobsubmit import NotTaken
            self.log(f"ERROR: submitting the job of node {name} failed: {exc}")
            self.jobstate.node(name, "SUBMIT_FAILURE")
            self._submit_failed(name, isinstance(exc, NotTaken))
            return
        self.submit_tries.pop(name, None)
        self.next_submit_at, self.submit_wait = 0.0, 1
        self.running[name] = (submitted.cluster, submitted.procs)
        if submitted.factory:
            self.watcher.factories.add(submitted.cluster)
        self.jobs[name] = (submitted.cluster, submitted.procs)
        self.jobs_submitted += submitted.procs
        self.log(f"Submitting HTCondor Node {name} job(s)...")
        self.log(f"\tassigned HTCondor ID ({submitted.cluster}.0.0)")
        self.log(f"{submitted.procs} job(s) submitted to cluster {submitted.cluster}.")

    def _submit_failed(self, name, again):
        """Node ``name``'s job was not submitted. One the daemon did not take in (``again``)
        is tried again, up to DAGMAN_MAX_SUBMIT_ATTEMPTS times in all (2 while the DAG is
        being removed), after a wait that doubles at each failure (1 s, 2 s, 4 s ...; no
        node is submitted meanwhile), at the head of the queue of jobs to submit
        (DAGMAN_RETRY_SUBMIT_FIRST) or at its end; one that cannot be submitted (its
        description) is not. A node out of tries fails without using its RETRY, its POST
        script run with $RETURN -1001, as HTCondor's DAGMan."""
        tries = self.submit_tries[name] = self.submit_tries.get(name, 0) + 1
        most = int(self.opts.get("max_submit_attempts") or 6) if again else 0
        if self.removing and self.dag.nodes[name].kind is not NodeKind.FINAL:
            most = min(most, 2)
        wait = self.submit_wait
        self.next_submit_at, self.submit_wait = time.time() + wait, wait * 2
        if tries < most:
            self.log(f"Job submit try {tries}/{most} failed, will try again in >= {wait} "
                     f"second{'' if wait == 1 else 's'}.")
            self.parked.insert(0 if self.opts.get("retry_submit_first", True) else len(self.parked), name)
            return
        self.next_submit_at, self.submit_wait = 0.0, 1
        self.submit_tries.pop(name, None)
        self.log(f"Node submit failed after {tries} tr{'y' if tries == 1 else 'ies'}.")
        self.log(f"Shortcutting node {name} retries because of submit failure(s)")
        self.errors[name] = "Job submit failed"
        self.no_retry.add(name)
        if ScriptWhen.POST in self.dag.nodes[name].scripts:
            self._ended(name, RETURN_SUBMIT_FAILED, job=False)
        else:
            self._node_failed(name, RETURN_SUBMIT_FAILED, job=False)

    def dag_status(self):
        """HTCondor's DAG status: 0 ok, 1 a warning was fatal (DAGMAN_USE_STRICT), 2 a node
        failed, 3 aborted (ABORT-DAG-ON), 4 removed, 6 halted."""
        if self.removing:
            return 4
        if self.fatal_warnings:
            return STATUS_ERROR
        if self.abort_code is not None:
            return 3
        if self.halted or self.halt_exit:
            return 6
        return 2 if self.failed else 0

    def _submit(self, name, node):
        from gridtools.cli.condor import jobsubmit
        from gridtools.formats.condor.dag import description_of
        from gridtools.formats.condor.dagdesc import with_queue
        cwd = os.path.join(self.workdir, node.directory) if node.directory else self.workdir
        path = os.path.join(cwd, node.submit_file)
        inline = description_of(self.dag, node)
        if node.kind is NodeKind.SUBDAG:
            path, text = self._subdag(name, path, self._priority(node))
        elif inline is not None:            # (before a file of the same name, as DAGMan)
            path, text = node.submit_file or f"{name}-InlineDesc", with_queue(inline)
        else:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        extra = {"DAGManJobId": self.own_id, "DAGNodeName": name, "DAGManNodesLog": self.nodes_log,
                 "SubmitEventNotes": f"DAG Node: {name}",
                 "DAGParentNodeNames": ",".join(sorted(self.dag.parents(name)))}
        if self.opts.get("suppress_notification", True):
            extra["JobNotification"] = 0        # never: DAGMAN_SUPPRESS_NOTIFICATION
        if node.kind is NodeKind.SERVICE:
            extra["DAGLifetimeJob"] = True
        prio = self._priority(node)
        if prio:
            extra["JobPrio"] = prio
        retry = self.attempts.get(name, 1) - 1
        if retry > 0 and "RETRY" in re.split(r"[,\s]+", (self.opts.get("node_record_info") or "").upper()):
            extra["DAGManNodeRetry"] = retry      # DAGMAN_NODE_RECORD_INFO = RETRY
        variables, appended = dict(node.prepend_vars), dict(node.append_vars)
        (appended if self.opts.get("append_vars") else variables).update(node.vars)
        if name in self.hold_next:              # DAGMAN_PUT_FAILED_JOBS_ON_HOLD
            variables["hold"] = "true"
        if self.dag.children(name) and self.opts.get("hold_claim_time"):
            variables["keep_claim_idle"] = str(self.opts["hold_claim_time"])   # DAGMAN_HOLD_CLAIM_TIME
        variables.setdefault("DAGManJobId", str(self.own_id))
        variables.setdefault("JOB", name)
        variables.setdefault("RETRY", str(retry))
        variables.setdefault("DAG_STATUS", str(self.dag_status()))
        variables.setdefault("FAILED_COUNT", str(len(self.failed)))
        parents = ",".join(sorted(self.dag.parents(name)))
        if parents:
            variables.setdefault("DAG_PARENT_NAMES", parents)
        if self.opts.get("submit_delay"):
            time.sleep(self.opts["submit_delay"])   # DAGMAN_SUBMIT_DELAY, before each submission
        return jobsubmit.submit_text(text, cwd, source=path, variables=variables, extra=extra,
                                     batch_name=self.opts.get("batch_name"), appended=appended,
                                     late=node.kind is not NodeKind.SUBDAG,
                                     one_proc=bool(self.opts.get("prohibit_multi_jobs")))

    def _priority(self, node):
        """The JobPrio of a node's jobs (and a SUBDAG node's -priority): its PRIORITY plus
        the DAG's own (-priority, DAGMAN_DEFAULT_PRIORITY, or the priority of the node
        that runs this DAG as a nested DAG), as HTCondor's DAGMan adds them up."""
        return int(node.priority or 0) + int(self.opts.get("priority") or 0)

    def _subdag(self, name, dag, priority=0):
        """(submit file, its text) of a SUBDAG EXTERNAL node: a DAG manager job of its
        own for the inner DAG file, written as condor_submit_dag -no_submit writes it
        (the node is done when that DAG succeeds); with DAGMAN_GENERATE_SUBDAG_SUBMITS
        False, the one there (none: the submission fails). The inner DAG gets the options
        this DAG's command line passes on (``submit_dag.DEEP``: -AutoRescue, -DoRescueFrom,
        -outfile_dir, ...; -force on the node's first attempt only) and the node's priority
        as its -priority; not -maxjobs and the other throttles, which are this DAG's own."""
        from gridtools.cli.condor import submit_dag
        sub = submit_dag.files_of(dag)["sub"]
        if not self.opts.get("generate_subdag_submits", True):      # -do_recurse wrote it
            self.log(f"Node {name}: the sub-DAG {dag} runs from {sub} as it is "
                     "(DAGMAN_GENERATE_SUBDAG_SUBMITS is False)")
            with open(sub, encoding="utf-8", errors="replace") as fh:
                return sub, fh.read()
        parsed = submit_dag.check_dag(dag)
        deep = dict(self.opts.get("inherit") or {})
        first = self.attempts.get(name, 1) <= 1
        deep["force"] = bool(deep.get("force")) and first
        opts = submit_dag.sub_options(deep, priority)
        submit_dag.check_options(opts, dag, parsed)         # its own CONFIG file
        if opts.force:
            submit_dag.force_nested(dag, opts.outfile_dir)
        text = submit_dag.submit_description(opts, dag, parsed)
        from gridtools.ownfiles import open_text
        with open_text(sub) as fh:
            fh.write(text)
        self.log(f"Node {name}: the sub-DAG {dag} runs in a manager job of its own")
        return sub, text

    # ------------------------------------------------------------ following jobs
    def _follow(self, now):
        from gridtools.cli.condor.dagwatch import SIGNALED_EXIT_CODE, Signal
        self.watcher.refresh(now)
        self._relay_events()
        self.follow_services()
        self._reap_scripts()
        self._launch_waiting()
        stops = self._stops()
        for name, (cluster, procs) in list(self.running.items()):
            if self._stops() != stops:
                break                       # stopped or removed: no further POST script
            codes = self.watcher.outcome(cluster, procs)
            if codes is None:
                continue
            if name == self.provisioner and not self.check_provisioner():
                del self.running[name]
                self.lose_provisioner(name)
                break
            del self.running[name]
            self.jobs_completed += sum(1 for c in codes if c is not None)
            self.exit_codes[name] = [SIGNALED_EXIT_CODE if isinstance(c, Signal) else c for c in codes]
            bad = [c for c in codes if c != 0]
            # (a proc killed by a signal: the node's return value is minus the signal, which
            # $RETURN, RETRY UNLESS-EXIT and ABORT-DAG-ON see, as in HTCondor's DAGMan)
            status = RETURN_NO_JOB if bad and any(c is None for c in bad) else (int(bad[0]) if bad else 0)
            for proc, code in enumerate(codes):
                if code is not None:
                    self.log(f"Node {name} job proc ({cluster}.{proc}.0) " + (
                        "completed successfully." if code == 0 else f"{_how_failed(code)}."))
            self.log(f"Node {name} job(s) (cluster {cluster}) ended with status {status}")
            self.jobstate.node(name, "JOB_SUCCESS" if status == 0 else "JOB_FAILURE", str(status))
            if bad:
                self.errors[name] = _job_error(cluster, codes)
            self._ended(name, status)

    def _relay_events(self):
        """The node jobs' events new in the nodes log, to DAGFILE.dagman.out ("Event:
        ULOG_EXECUTE for HTCondor Node A (12.0.0) {TIME}", as HTCondor's DAGMan says them)
        and to the job state log under their user log names (SUBMIT, EXECUTE,
        JOB_TERMINATED, JOB_HELD, ...); there the POST script events the manager writes
        itself are logged when the script ends (``dagscripts``)."""
        from gridtools.formats.condor.userlog import EventType
        nodes = {cluster: name for name, (cluster, _procs) in self.jobs.items()}
        for event in self.watcher.fresh:
            name = nodes.get(event.cluster)
            if name is None or not isinstance(event.type, EventType):
                continue
            stamp = time.strftime("%m/%d/%y %H:%M:%S", time.localtime(event.timestamp))
            self.log(f"Event: ULOG_{event.type.name} for HTCondor Node {name} "
                     f"({event.cluster}.{event.proc}.{event.subproc}) {{{stamp}}}")
            if event.type is not EventType.POST_SCRIPT_TERMINATED:
                self.jobstate.node(name, event.type.name, f"{event.cluster}.{event.proc}",
                                   event.timestamp)
            if event.type in (EventType.JOB_HELD, EventType.JOB_RELEASED):
                self._count_hold(name, event)

    def _count_hold(self, name, event):
        """DAGMAN_MAX_JOB_HOLDS: once that many procs of a node's job are held at once, the
        job is removed (the node then fails, or is retried), as HTCondor's DAGMan does."""
        from gridtools.formats.condor.userlog import EventType
        held = self.procs_held.setdefault(name, set())
        if event.type is EventType.JOB_RELEASED:
            held.discard(event.proc)
            return
        limit = int(self.opts.get("max_job_holds") or 0)
        held.add(event.proc)
        running = self.running.get(name)
        if not limit or len(held) < limit or running is None or running[0] != event.cluster:
            return
        from gridtools.cli.ask import outcomes
        self.log(f"Total hold count for job {event.cluster} (node {name}) has reached DAGMAN_MAX_JOB_HOLDS "
                 f"({limit}); all job proc(s) for this node will now be removed")
        held.clear()
        try:
            outcomes("condor_rm", {"targets": [{"id": event.cluster, "tasks": None}], "force": False,
                                   "reason": HOLDS_REASON})
        except GridError as exc:
            self.log(f"ERROR: removing the job of node {name} failed: {exc}")

    def _ended(self, name, status, job=True):
        self._queue_script(name, "POST", status, lambda post: self._after_post(name, status, job, post))

    def _after_post(self, name, status, job, post):
        if post is CUT_SHORT:
            self._cut_short(name, "POST")
            return
        if post is not None and (job or name in self.noops):
            self._note_post(name, post)
        final = post if post is not None else status
        if post:
            job_part = f"Job exited with status {status} and " if job and status else ""
            self.errors[name] = f"{job_part}POST Script failed with status {post}"
        if final == 0:
            self.done.add(name)
            self.log(f"Node {name} completed successfully.")
            return
        self._node_failed(name, final, job, "POST script" if post is not None else None)

    def _cut_short(self, name, when):
        """A node whose script the manager's own stop cut short: neither done nor failed
        when the manager was held or vacated (the next start recovers it and runs the
        script again); not done when it was removed (the rescue DAG runs it again)."""
        if self.removing and not self.stopping:
            self.failed.add(name)
            self.errors[name] = f"{when} Script cut short: the DAG was removed"

    def _node_failed(self, name, status, job=True, source=None):
        """A node ended with a non-zero status: the DAG aborts (ABORT-DAG-ON), the node
        runs again (RETRY) or it failed. ``source``: what gave the status (job, PRE
        script, POST script), as DAGMan names it when the DAG aborts."""
        from gridtools.formats.condor.dagstate import abort_status, should_retry
        node = self.dag.nodes[name]
        self.return_values[name] = status
        source = source or ("job" if job else "PRE script")
        aborted = abort_status(node, status)
        if aborted is not None:
            self.log(f"Aborting DAG because we got the ABORT exit value from a {source}")
            self.failed.add(name)
            self.abort_code = aborted
            return
        if name not in self.no_retry and should_retry(node, self.attempts[name], status):
            self.log(f"Node {name} failed with status {status}; retrying "
                     f"({self.attempts[name]} of {node.retry} retries)")
            self.log(f"Retrying node {name} (retry #{self.attempts[name]} of {node.retry})...")
            return                          # ready again: started by the next round
        if job and self.opts.get("hold_failed_jobs") and ScriptWhen.POST not in node.scripts:
            # DAGMAN_PUT_FAILED_JOBS_ON_HOLD: one retry more, its job submitted on hold
            node.retry = self.attempts[name]
            self.hold_next.add(name)
            self.log(f"Node {name} failed with status {status}; its job is submitted again on hold "
                     "(DAGMAN_PUT_FAILED_JOBS_ON_HOLD)")
            return
        self.failed.add(name)
        if self.attempts.get(name, 1) > 1 and name in self.errors:
            self.errors[name] += f" (after {self.attempts[name] - 1} node retries)"
        if node.retry_unless_exit is not None and status == node.retry_unless_exit \
                and self.attempts[name] <= node.retry:
            self.log(f"Aborting further retries of node {name} (last attempt returned {status})")
        self.log(f"Node {name} failed with status {status}.")

    # ------------------------------------------------------------ ending
    def _final_name(self):
        return next((n for n, node in self.dag.nodes.items() if node.kind is NodeKind.FINAL), None)

    def _run_final(self):
        """After ABORT-DAG-ON or condor_rm: the FINAL node still runs, to its end."""
        final = self._final_name()
        if final is None or final in self.done or final in self.failed:
            return
        # (while the FINAL node runs, HTCondor's DAGMan reads the abort events of the
        # removed jobs: their nodes fail)
        self.failed |= self.removed
        if final not in self.running:
            self.log(f"Running the FINAL node {final}")
            self._start(final)
        while (final in self.running or final in self.then) and not self.stopping:
            self._count()
            time.sleep(POLL)
            self._follow(time.time())
        if final not in self.done and final not in self.running:
            self.failed.add(final)

    def _shutdown_lines(self, between=None, failed=""):
        """What HTCondor's DAGMan writes, once, as a DAG that does not succeed shuts down
        (removed, aborted, halted, failed): it then asks condor_rm for every job of the
        DAG, whether or not it knows of one left (``_remove_running``); ``between``: what
        is done after the first line (the rescue DAG written); ``failed``: the line before
        the failed nodes listed first (a DAG that ends as nodes failed, or halted)."""
        if self.shut_down:
            return
        self.shut_down = True
        if failed:
            self._list_failed(failed)
        self.log("Aborting DAG...")
        if between is not None:
            between()
        self.log("Removing submitted jobs...")
        self.log("Removing any/all submitted HTCondor jobs...")

    def _list_failed(self, heading):
        """``heading``, then each failed node as HTCondor's DAGMan dumps it, in the DAG's order."""
        self.log(heading)
        for name in self.dag.nodes:
            if name in self.failed:
                waiting = bool(self.dag.parents(name) - self.done)
                failed = (self.return_values.get(name, NO_RETURN_VALUE), self.errors.get(name, ""),
                          self.jobs.get(name), waiting)
                for line in _node_dump(self.dag, name, failed):
                    self.log(line)
        self.log("---------------------------------------\t<END>")

    def _remove_running(self):
        from gridtools.cli.ask import outcomes
        final = self._final_name()
        doomed = {n: job for n, job in self.running.items() if n != final}
        if not doomed:
            return
        targets = [{"id": cluster, "tasks": None} for cluster, _procs in doomed.values()]
        reason = REMOVED_REASON if self.removing else ABORT_REASON
        try:
            outcomes("condor_rm", {"targets": targets, "force": False, "reason": reason})
        except GridError as exc:
            self.log(f"ERROR: removing the running node jobs failed: {exc}")
        for name, (cluster, _procs) in doomed.items():
            self.removed.add(name)
            self.errors[name] = f"HTCondor reported ULOG_JOB_ABORTED event for job proc ({cluster}.0.0)"
            self.log(f"Node {name}: its job was removed")
            del self.running[name]

    def _finish(self):
        if self.stopping:
            self.log(f"Stopped (held or vacated): {len(self.running)} node job(s) left to run; "
                     "the next start recovers the DAG")
            return EXIT_STOPPED
        final = self._final_name()
        if self.failed or self.removing or self.abort_code is not None or self.halt_exit \
                or self.fatal_warnings:
            # (a DAG whose nodes failed lists them first, in other words once its FINAL
            # node failed)
            listing = FAILED_AFTER_FINAL if final in self.failed else FAILED_NODES
            if not self.shut_down:      # (HTCondor writes the rescue DAG between the lines)
                self._shutdown_lines(self.write_rescue, listing if self.failed else "")
            elif final in self.failed:
                # a FINAL node that failed: HTCondor's DAGMan shuts down once more, writing
                # the rescue DAG over with how the DAG stands now (a FINAL node that
                # succeeded leaves the one written before it ran)
                self.shut_down = False
                self._shutdown_lines(self.write_rescue, listing)
        if final is not None and final in self.done:
            self.log(f"FINAL node {final} succeeded: the DAG succeeds")
            return 0
        if final is not None and final in self.failed:
            return EXIT_FAILED              # (HTCondor's DAGMan shut down again: EXIT_ERROR)
        if self.fatal_warnings:
            return EXIT_FAILED              # (HTCondor's EXIT_ERROR)
        if self.abort_code is not None:
            return int(self.abort_code)
        if self.removing:
            return EXIT_REMOVED
        if self.failed or self.halt_exit:
            return EXIT_FAILED
        self.log("All jobs Completed!")
        return 0

    def _write_save(self, name, node):
        """SAVE_POINT_FILE: the first time the node starts, the DAG's progress so far in a
        partial rescue DAG's form (``dagstate.save_path`` says where); a file of that
        name is kept as ``.old`` (an older ``.old`` goes), as HTCondor's DAGMan does."""
        from gridtools.formats.condor import dagstate
        path = dagstate.save_path(self.dag_file, node.save_file)
        created = _created(time.gmtime())
        final = {self._final_name()}
        text = dagstate.render_rescue(self.dag_file, self.dag, self.done - final, self.failed - final,
                                      created, self._retries())
        try:
            from gridtools.ownfiles import makedirs_own, move_aside_own, open_text
            makedirs_own(os.path.dirname(path) or ".")
            move_aside_own(path, path + ".old")
            with open_text(path) as fh:
                fh.write(text)
        except OSError as exc:
            self.log(f"ERROR: writing the save point file {path} of node {name} failed: {exc.strerror}")
            return
        self.log(f"Node {name}: wrote save point file {path}")

    def _retries(self):
        """node -> (retries performed, its last return value), for the rescue DAG."""
        return {name: (max(runs - 1, 0), self.return_values.get(name))
                for name, runs in self.attempts.items()}

    def _next_rescue(self, most):
        """The name of this run's rescue DAG: the one after the caller's own latest (the
        last one, DAGMAN_MAX_RESCUE_NUM, written over), passing over a name another user
        took with a file of theirs (``submit_dag.own_files``: it is no rescue DAG of the
        caller's, and it is not written through)."""
        from gridtools.cli.condor.submit_dag import own_files
        from gridtools.formats.condor import dagstate
        base = dagstate.rescue_base(self.dag_file, len(self.opts.get("dags") or ()) > 1)
        names = os.listdir(self.folder)
        own = set(own_files(self.folder, names))
        last = dagstate.latest_rescue(os.path.basename(base), own)[1]
        for number in range(min(last + 1, most), most + 1):
            name = dagstate.rescue_name(base, number)
            if os.path.basename(name) not in names or os.path.basename(name) in own:
                return name
        return dagstate.rescue_name(base, min(last + 1, most))

    def write_rescue(self):
        from gridtools.formats.condor import dagstate
        most = self.opts.get("max_rescue", MAX_RESCUE)
        if not most:
            self.log("No rescue DAG written because DAGMAN_MAX_RESCUE_NUM is 0")
            return
        name = self.rescue_file             # (one rescue DAG a run: written again over)
        if name is None:
            name = self.rescue_file = self._next_rescue(most)
        created = _created(time.gmtime())
        final = {self._final_name()}        # the FINAL node runs again with the rescue DAG
        text = dagstate.render_rescue(self.dag_file, self.dag, self.done - final, self.failed, created,
                                      self._retries(), keep_retries=not self.opts.get("reset_retries", True))
        from gridtools.ownfiles import open_text
        with open_text(name) as fh:
            fh.write(text)
        self.log(f"Writing Rescue DAG file {name}")

