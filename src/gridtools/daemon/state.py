"""The daemon's in-memory state, loaded from the spool and written back to it.

The spool is the record; this is its working copy. Every change to a job
goes through ``model.transitions`` and marks the job dirty; ``flush()``
writes the state file of each dirty job atomically before anything that
depends on it happens (a shepherd is started only after its task's state
says it runs).
"""

import os
import pwd
import time

from gridtools.daemon.usage import Keeper
from gridtools.model.job import Job
from gridtools.spool import config as spool_config
from gridtools.spool import jobs as jobstore


CONFIG_CHECK = 0.25     # seconds between looks at etc/ for changes made outside qconf


class State:
    """Jobs, configuration and bookkeeping of one daemon."""

    def __init__(self):
        self.jobs = {}                # id -> Job
        self.dirty = set()            # ids whose state must be written
        self.config = None            # spool.config.CellConfig
        self.config_stamp = None
        self.config_checked = 0.0
        self.names = {}               # job name -> set of ids (live or finished-but-kept)
        self.launching = {}           # (job id, task) -> time its shepherd was ordered
        self.view_cache = {}          # snapshot parts that change with the configuration only
        self.active_jobs = set()      # ids of jobs that may have running tasks (pruned lazily)
        self._live = None             # cached live_ids()
        self.finished_order = []      # ids of finished jobs, oldest first
        self.need_schedule = True
        self.need_publish = True
        self.reasons = {}             # job id -> tuple of sched.reasons.Reason
        self.orders = {}              # job id -> sched.snapshot.JobOrder of the last pass
        self.load = {}                # host -> (sample time, values)
        self.messages = []            # log lines to append
        self.started = time.time()
        self.queue_states = {}        # "queue@host" -> state letters set by qmod
        self.host_states = {}         # host -> drain/flush/suspend state
        self.derived_states = {}      # "queue@host" -> letters of calendars, subordination, thresholds
        self.queue_messages = {}      # "queue@host" -> {letter: [lines qstat -explain shows]}
        self.known_queues = set()     # queue instances initial_state was applied to
        self.qstates_dirty = False    # queue or host states to write to the spool
        self.host_display = {}        # host -> Idle/Running/Busy/Draining/... (qhost -st)
        self.unsignalled = {}         # (job id, task) -> signal its shepherd has yet to get
        self.accounted = set()         # (job, task, start) already in the accounting file
        self.config_generation = 0     # bumped on every reload (keys caches)
        self.monitor_next = False     # qconf -tsm: write the schedule file after the next pass
        self.scheduling = True        # qconf -ks stops scheduling until the daemon restarts
        self.usage = Keeper()         # decayed usage of users and projects (the share tree's)
        self.share_tree = ()          # share tree report of the last pass (sge_share_mon)
        self.reserves = ()            # reservations of the last pass (qstat -f "resv")
        self.ars = None               # advance reservation id -> stored mapping (daemon.arreq)
        self.loads = {}               # host -> last load sample (admission of reservations)

    # ------------------------------------------------------------ jobs
    def add(self, job):
        """A new job; its initial state follows from its description, so nothing is written."""
        self.jobs[job.id] = job
        self._live = None
        self.names.setdefault(job.spec["name"], set()).add(job.id)
        self.need_schedule = True
        self.need_publish = True

    def forget(self, job_id):
        self._live = None
        job = self.jobs.pop(job_id, None)
        if job is not None:
            ids = self.names.get(job.spec["name"])
            if ids:
                ids.discard(job_id)
        self.dirty.discard(job_id)
        self.reasons.pop(job_id, None)

    def touch(self, job):
        job.changed()
        self.dirty.add(job.id)
        self.need_publish = True
        self._live = None

    def running_tasks(self):
        """(job, task) for every running task, via the index of active jobs."""
        found = []
        for job_id in list(self.active_jobs):
            job = self.jobs.get(job_id)
            tasks = job.running() if job is not None else []
            if not tasks:
                self.active_jobs.discard(job_id)
            found.extend((job, task) for task in tasks)
        return found

    def flush(self):
        """Write the state of every dirty job to the spool."""
        for job_id in sorted(self.dirty):
            job = self.jobs.get(job_id)
            if job is not None and os.path.isdir(jobstore.job_dir(job_id)):
                jobstore.write_state(job_id, job.state_dict())
        self.dirty.clear()

    def live_ids(self):
        """Ids of jobs with a task pending, running or in error."""
        if self._live is None:
            self._live = {j.id for j in self.jobs.values() if not j.is_finished()}
        return self._live

    def log(self, text):
        self.messages.append(f"{time.strftime('%m/%d/%Y %H:%M:%S')}|{text}")

    # ------------------------------------------------------------ config
    def reload_config(self, force=False, now=None):
        """Re-read etc/ when it changed (looked at most every CONFIG_CHECK seconds
        unless forced); returns True when it did."""
        now = now if now is not None else time.time()
        if not force and now - self.config_checked < CONFIG_CHECK:
            return False
        self.config_checked = now
        stamp = spool_config.stamp()
        if not force and stamp == self.config_stamp:
            return False
        try:
            self.config = spool_config.load()
        except Exception as exc:  # noqa: BLE001 - keep the last good configuration
            self.log(f"E|configuration not reloaded: {exc}")
            if self.config is None:
                raise
            return False
        self.config_stamp = stamp
        self.config_generation += 1
        self.need_schedule = True
        self.need_publish = True
        return True


def load_jobs(state):
    """Read every job of the spool into ``state`` (daemon start and restart)."""
    for job_id in jobstore.list_ids():
        spec = jobstore.read_spec(job_id)
        if spec is None:
            continue
        job = Job.from_parts(spec, jobstore.read_state(job_id))
        state.jobs[job.id] = job
        state.names.setdefault(spec["name"], set()).add(job.id)
        if job.running():
            state.active_jobs.add(job.id)
        if job.is_finished():
            state.finished_order.append((_end_time(job), job.id))
    state.finished_order = [jid for _, jid in sorted(state.finished_order)]


def _end_time(job):
    return max((t.end_time for t in job.tasks.values()), default=0.0)


def user_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def running_tasks(state):
    """(job, task) for every task in the RUNNING state."""
    return state.running_tasks()
