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
from gridtools.daemon import faults, journal
from gridtools.errors import SpoolError
from gridtools.formats.safetext import escape
from gridtools.model.job import Job
from gridtools.spool import acct
from gridtools.spool import config as spool_config
from gridtools.spool import jobs as jobstore
from gridtools.spool import quarantine


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
        self.start_failures = {}      # (job id, task) -> starts in a row whose shepherd did not start
        self.start_failure_reasons = {}   # (job id, task) -> why the last of them did not
        self.taken_here = set()       # names of the requests this process took in, not yet settled
        self.view_cache = {}          # snapshot parts that change with the configuration only
        self.active_jobs = set()      # ids of jobs that may have running tasks (pruned lazily)
        self._live = None             # cached live_ids()
        self._stale = set()           # ids whose place in the cached live_ids() must be checked
        self.view_stale = set()       # ids whose scheduler record must be made again (daemon.view)
        self.finished_order = []      # ids of finished jobs, oldest first
        self.finished_noted = set()   # the ids in finished_order
        self.ends_unsynced = set()    # ids of jobs whose ended tasks' records may not be on disk yet
        self.other_removals = []      # (job id, task, owner, OtherJobRemoveRequirements) to carry out
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
        self.reserves = ()            # reservations of the last pass (an advance reservation's admission sees them)
        self.faults = {}              # key -> {"kind", "text"[, "job", "path"]} (see daemon.faults)
        self.unreadable = set()       # fault keys of configuration files the last reload could not read
        self.taken_ids = []           # job ids taken in by this intake (the clients' id hint)
        self.unsynced = []            # new jobs whose descriptions a flush to disk failed for
        self.history = []             # (job, task) that left the queue, for the history file
        self.history_kept = False     # spool/history.pending names tasks of ``history`` (daemon.history)
        self.epochs = []              # (ad, spec) of the runs that ended, for the epoch history
        self.ars = None               # advance reservation id -> stored mapping (daemon.arreq)
        self.loads = {}               # host -> last load sample (admission of reservations)
        self.global_load = {}         # name -> value the load sensors reported for ``global``
        self.restart_requested = False    # condor_restart: start again once this pass is answered
        self.heard = {}               # host -> time of its execution daemon's last load report
        self.execd_stopped = False    # qconf -ke stopped an execution daemon: look at the hosts now
        self.unknown_hosts = frozenset()    # hosts whose execution daemon is gone (qcontrol)
        self.start_retry_at = None    # when to try again starts that could not be prepared
        # owner -> time: none of the owner's HTCondor jobs (but the scheduler universe)
        # starts before it, as a task of them started with NextJobStartDelay holds back the
        # owner's next start (HTCondor's schedd throttle, kept per owner so that one user
        # cannot hold back the others; not kept across restarts, as the schedd keeps it
        # not); ``next_job_starter``: owner -> (job id, task) whose start set it. Both are
        # dropped after the first pass past the time (``Daemon.schedule``)
        self.next_job_start = {}
        self.next_job_starter = {}
        self.condor = None            # daemon.condor.Condor: slots, user priorities, negotiator
        self.starting = []            # (job, task number, time) started, their events unwritten
        self.copying_in = {}          # (job id, task number) -> job: its execute event waits for its input
        self.journal = journal.Journal()   # bulk changes recorded in spool/journal (daemon.journal)
        self.purged = []              # ids of jobs purged whose folders are still to be removed
        self.factories = {}           # id -> version last looked at, of clusters materialized late

    # ------------------------------------------------------------ jobs
    def add(self, job):
        """A new job; its initial state follows from its description, so nothing is written."""
        self.jobs[job.id] = job
        self._stale.add(job.id)
        self.view_stale.add(job.id)
        self.names.setdefault(job.spec["name"], set()).add(job.id)
        self.need_schedule = True
        self.need_publish = True

    def forget(self, job_id):
        self._stale.add(job_id)
        self.view_stale.add(job_id)
        job = self.jobs.pop(job_id, None)
        if job is not None:
            ids = self.names.get(job.spec["name"])
            if ids:
                ids.discard(job_id)
        self.dirty.discard(job_id)
        self.reasons.pop(job_id, None)

    def note_finished(self, job_id):
        """Put a job that finished last in ``finished_order`` (purged oldest first), once."""
        if job_id not in self.finished_noted:
            self.finished_noted.add(job_id)
            self.finished_order.append(job_id)

    def touch(self, job):
        job.changed()
        self.dirty.add(job.id)
        self.need_publish = True
        self._stale.add(job.id)
        self.view_stale.add(job.id)

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

    def flush(self, only=None):
        """Write the state of every dirty job (of those in ``only``) to the spool. Returns
        True when all were written; those that could not be (a full disk) stay dirty for
        the next flush."""
        failed = set()
        chosen = self.dirty if only is None else self.dirty & set(only)
        if chosen & self.ends_unsynced and not self.settle_records():
            return False
        stamp = journal.stamp(self)
        for job_id in sorted(chosen):
            job = self.jobs.get(job_id)
            if job is None:
                continue
            data, ended = job.state_parts()
            if stamp is not None:
                data["journal"] = stamp
            try:
                jobstore.write_state(job_id, data, ended)
                job.filed_ended(data, ended)
            except SpoolError as exc:
                if not os.path.isdir(jobstore.job_dir(job_id)):
                    continue                # its folder is gone (set aside): nothing to write
                failed.add(job_id)
                faults.note(self, (faults.WRITE, "state"), faults.WRITE,
                            f"cannot write job states, retrying: {exc}")
        self.dirty = failed if only is None else (self.dirty - chosen) | failed
        journal.written(self, chosen - failed)
        if not failed:
            faults.clear(self, (faults.WRITE, "state"), "job states written again")
        return not failed

    def settle_records(self):
        """Wait for the accounting records of ended tasks to be on disk, which comes
        before any state showing those ends and before their folders go; False (the
        fault noted) when they could not be flushed."""
        try:
            acct.settle()
        except SpoolError as exc:
            faults.note(self, (faults.WRITE, "accounting"), faults.WRITE,
                        f"cannot flush accounting records to disk, retrying: {exc}")
            return False
        self.ends_unsynced.clear()
        return True

    def live_ids(self):
        """Ids of jobs with a task pending, running or in error."""
        if self._live is None:
            self._live = {j.id for j in self.jobs.values() if not j.is_finished()}
        elif self._stale:
            live = set(self._live)          # a new set: callers may hold the last one
            for job_id in self._stale:
                job = self.jobs.get(job_id)
                if job is None or job.is_finished():
                    live.discard(job_id)
                else:
                    live.add(job_id)
            self._live = live
        self._stale.clear()
        return self._live

    def log(self, text):
        """Queue a line for spool/messages; what users wrote cannot break the line."""
        self.messages.append(f"{time.strftime('%m/%d/%Y %H:%M:%S')}|{escape(text)}")

    # ------------------------------------------------------------ config
    def reload_config(self, force=False, now=None, look=False):
        """Re-read etc/ when it changed (looked at most every CONFIG_CHECK seconds
        unless ``force`` or ``look`` asks to look now); returns True when it did."""
        now = now if now is not None else time.time()
        if not force and not look and now - self.config_checked < CONFIG_CHECK:
            return False
        self.config_checked = now
        stamp = spool_config.stamp()
        if stamp == self.config_stamp and self.config is not None:
            return False                # nothing under etc/ changed (also when forced to look)
        self.unreadable = set()
        try:
            self.config = spool_config.load(on_error=self._unreadable_config)
        except Exception as exc:  # noqa: BLE001 - keep the last good configuration
            self.log(f"E|configuration not reloaded: {exc}")
            if self.config is None:
                raise
            return False
        for key, fault in list(self.faults.items()):
            if fault["kind"] == faults.CONFIG and key not in self.unreadable:
                faults.clear(self, key, f"{key[1]} read again")
        faults.settle(self)
        self.config_stamp = stamp
        self.config_generation += 1
        self.need_schedule = True
        self.need_publish = True
        return True


    def _unreadable_config(self, kind, name, path, exc):
        """A configuration file that does not parse: at start-up it is set aside; later
        the version read before is kept (an administrator may be editing it)."""
        why = faults.describe(exc)
        rel = quarantine.relative(path)
        self.unreadable.add((faults.CONFIG, rel))
        if self.config is None:
            faults.set_aside(self, path, rel, why)
            return None
        faults.note(self, (faults.CONFIG, rel), faults.CONFIG,
                    f"{rel} cannot be read, the version read before is kept: {why}", path=rel)
        return self.config.get(kind, name)


def load_jobs(state):
    """Read every job of the spool into ``state`` (daemon start and restart); a job
    whose files cannot be read is set aside into quarantine."""
    for job_id in jobstore.list_ids():
        try:
            job = _read_job(job_id)
        except _Unreadable as bad:
            faults.set_aside(state, jobstore.job_dir(job_id), faults.job_what(job_id),
                             faults.describe(bad.exc, bad.path), job=job_id)
            continue
        if job is None:
            continue
        state.jobs[job.id] = job
        state.names.setdefault(job.spec["name"], set()).add(job.id)
        if job.condor and "materialized" in job.condor:
            from gridtools.daemon import factory
            factory.note_loaded(state, job)
        if job.running():
            state.active_jobs.add(job.id)
        if job.is_finished():
            state.finished_order.append((_end_time(job), job.id))
    state.finished_order = [jid for _, jid in sorted(state.finished_order)]
    state.finished_noted = set(state.finished_order)


class _Unreadable(Exception):
    def __init__(self, path, exc):
        super().__init__(str(exc))
        self.path = path
        self.exc = exc


def _read_job(job_id):
    """The stored job ``job_id`` (None while its description is not written yet);
    raises _Unreadable naming the file that is empty, garbled or inconsistent."""
    folder = jobstore.job_dir(job_id)
    path = os.path.join(folder, jobstore.JOB_FILE)
    try:
        if not os.path.exists(path):
            return None
        spec = jobstore.read_spec(job_id)
        if not isinstance(spec, dict) or spec.get("id") != job_id or not isinstance(spec.get("name"), str):
            raise ValueError("empty, or not the description of this job")
        path = os.path.join(folder, jobstore.STATE_FILE)
        stored = jobstore.read_state(job_id)
        if stored is not None and not (isinstance(stored, dict) and isinstance(stored.get("tasks"), dict)):
            raise ValueError("empty, or not the state of a job")
        job = Job.from_parts(spec, stored)
        job.is_finished()               # the task range and task states make sense
        return job
    except Exception as exc:  # noqa: BLE001 - any damage sets the job aside
        raise _Unreadable(path, exc) from None


def _end_time(job):
    return max([t.end_time for t in job.tasks.values()] + [job.deleted_at])


def user_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def running_tasks(state):
    """(job, task) for every task in the RUNNING state."""
    return state.running_tasks()
