"""The dispatcher daemon: one ``tick()`` is one pass of named phases.

    reload config -> intake -> reap -> schedule (snapshot -> cycle -> start)
    -> purge -> flush -> publish -> settle (answer and remove the requests)

``run()`` repeats ticks whenever something wakes it: a byte in the wake-up
FIFO (a client request, a shepherd that ended), a signal, the end of a
watched shepherd process, the fallback tick (``schedule_interval``), or the
next time-based event (a ``-a`` start time, a retry). A pass that has
nothing to do costs a few system calls. A pass that meets a full or
read-only spool is retried every WRITE_RETRY seconds; a daemon whose cell
vanished exits. A pass cut short by anything else (a defect, a spool item that
reads but makes no sense) is written to spool/messages with where it happened;
the pass's changes are written and the requests it took answered as far as
possible, and the daemon goes on after a rest (``failures``).
"""

import os
import select
import signal
import sys
import time

from gridtools.daemon import apply, arreq, crash, faults, intake, journal, monitor, petask, publish, qcontrol, reap
from gridtools.daemon import condorjob, factory, failures, history, otherremove, suspension, view
from gridtools.daemon.condor import Condor
from gridtools.daemon.dispatch import Dispatcher, LocalExecution
from gridtools.daemon.execd import ExecClient
from gridtools.daemon.probes import Probes
from gridtools.daemon.state import State, load_jobs
from gridtools.errors import GridError, SpoolError
from gridtools.exec import load as host_load
from gridtools.formats import values
from gridtools.spool import daemonctl, files, wake
from gridtools.spool import jobs as jobstore
from gridtools import cell

LOAD_REFRESH = 2.0          # seconds between load samples of this machine
SWEEP_EVERY = 60.0          # seconds between clean-ups of what clients left in the shared folders
DELETE_RETRY = 0.1          # seconds between tries to tell a deleting task's shepherd that is not listening yet
#: most seconds quick passes follow a full one (which redoes every job's reasons)
FULL_PASS_EVERY = 1.0
PUBLISH_EVERY = 0.25        # least seconds between two status snapshots (coalesces bursts)
PUBLISH_SHARE = 0.1         # most share of the time publishing ends and starts may take
PUBLISH_LATEST = 1.0        # ... but never more seconds than this between two of them
WRITE_RETRY = 1.0           # seconds between retries of what a full or read-only spool refused
CELL_CHECK = 5.0            # most seconds between two looks whether the cell still exists
#: seconds from a pass that put off some jobs' matching (an owner's took the evaluation
#: steps a pass gives one owner: sched.evalbudget) to the next pass, which takes them first
PUT_OFF_PAUSE = 1.0
MESSAGES_KEPT = 1000        # log lines kept in memory while spool/messages cannot be written
#: size past which spool/messages is rotated (messages.<time>, as the history is), and the
#: rotated files kept: what users' requests make the daemon note cannot fill the disk
MESSAGES_MAX = 50 << 20
MESSAGES_ROTATIONS = 2
LOCK_TRIES = 50             # times a starting daemon tries its lock, 2 ms apart (see _acquire)


class Daemon:
    """The dispatcher of one cell."""

    def __init__(self, execution=None):
        """``execution``: the execution layer (default: this machine's shepherds)."""
        self.state = State()
        self.reniced = None          # when running tasks were last reniced by their tickets
        self.state.condor = Condor()
        self.decisions = None        # the last pass's decisions, until the slots followed them
        self.memo = None             # (order epoch, sched.cycle.Memo) of the last full pass
        self.exec = execution if execution is not None else LocalExecution(ExecClient())
        self.dispatcher = Dispatcher(self.state, self.exec)
        self.control = qcontrol.Control(self.state, self.dispatcher)
        self.retry_signals = False
        self.loads = {}
        self.load_time = 0.0
        self.probes = Probes(self.state)     # load sensors and startd cron jobs of this machine's hosts
        self.state.condor.facts.cron = self.probes.cron_ads
        self.state.condor.facts.schedd_cron = self.probes.schedd_attrs
        self.local_hosts = ()        # the execution hosts this machine serves (no execd serves them)
        self.sensed = {}             # the load sensors' values in the loads sampled last
        self.snap_queues = ()
        self.next_event = None
        self.last_pass = 0.0         # when the last scheduling pass ran
        self.profile = False         # the last pass's sched_conf params had PROFILE=1
        self.retry_deletes = False
        self.more_intake = False
        self.rested = True
        self.expiry = None
        self.reaped = 0
        self.feeding = False         # journalled jobs' state files are being written
        self.published = 0.0
        self.publish_cost = 0.0      # seconds the last publication took
        self.loads_shown = 0.0       # when new load values last asked for a publication
        self.usage_saved = 0.0
        self.usage_sampled = 0.0     # when running tasks' usage was last read
        self.swept = 0.0
        self.preened = None           # when the last periodic preen ran (None: not started)
        self.stopping = False
        self.lock = None
        self.spool_id = None         # (device, inode) of the spool whose lock this daemon took
        self.usurped = 0             # pid of a daemon that took this one's cell (then it stops)
        self.fifo = None
        self.sigpipe = None
        self.unsettled = []          # (request, answer) applied, not yet answered and removed
        self.intake_waits = False    # a request waits for the spool to take it
        self.periodic_at = None      # when HTCondor jobs' periodic expressions are looked at next
        self.periodic_last = None    # when they were looked at last
        self.failures = failures.Failures()     # passes in a row cut short, and the rest after
        self.code = None             # upgrade.Watch of the daemon's own code (set by run)
        self.restart = False         # stopped to start again: its code changed

    # ------------------------------------------------------------ life
    def startup(self):
        """Take the daemon lock, recover the spool and open the wake-up FIFO; then write
        spool/daemon.pid, which says start-up is complete. A spool file that cannot
        be read is set aside; a spool that cannot be used at all (read-only, not a
        cell) raises GridError naming it."""
        try:
            self._startup()
        except OSError as exc:
            raise GridError(f"cannot start: {faults.describe(exc)}") from None
        from gridtools.daemon.master import ENV, PID_FILE
        master = os.environ.get(ENV, "")
        if master.isdigit():        # (its master: named by the daemon that holds the cell)
            files.atomic_write(cell.spool(PID_FILE), f"{master}\n", fsync=False)
        files.atomic_write(cell.spool("daemon.pid"), f"{os.getpid()}\n", fsync=False)
        try:
            os.unlink(cell.spool(daemonctl.RESTARTING))
        except FileNotFoundError:
            pass
        crash.point("startup")

    def _startup(self):
        self._take_lock()
        self.recover()
        self.fifo = wake.open_listener()
        self._listen()

    def _take_lock(self):
        from gridtools.spool import cellsetup
        cellsetup.check_owned(cell.root())
        files.makedirs(cell.spool())
        # forked while the daemon is small, and before it holds its lock (a fork made
        # later shares the lock until it closed it, which could outlive a killed daemon)
        self.exec.start()
        self.lock = files.Lock(cell.spool("daemon.lock"), mode=0o600, blocking=False)
        if not self._acquire():
            self.exec.stop()
            raise GridError("a gridtools daemon is already running for this cell")
        # a daemon whose lock file was removed under it holds the removed one: the pid file
        # names it while it lives (Grid Engine's qmaster.pid), and no second one starts
        other = daemonctl.lock_holder()
        if other and other != os.getpid():
            self.lock.release()
            self.lock = None
            self.exec.stop()
            raise GridError(f"a gridtools daemon is already running for this cell (pid {other})")
        self.spool_id = _identity(cell.spool())
        try:                            # written again when start-up is complete
            os.unlink(cell.spool("daemon.pid"))
        except FileNotFoundError:
            pass
        crash.point("startup")

    def _acquire(self, tries=LOCK_TRIES):
        """Take the daemon lock. It is tried again a few times a few milliseconds apart:
        ``gridtools daemon status`` and a start that looks whether a daemon runs take it
        for a moment (a lock another daemon holds stays taken)."""
        for attempt in range(tries):
            if self.lock.acquire():
                return True
            if attempt + 1 < tries:
                time.sleep(0.002)
        return False

    def recover(self):
        """Read the spool into the daemon's state: configuration, jobs, usage, queue states."""
        self._secure_spool()
        faults.restore(self.state)
        self.state.reload_config(force=True)
        load_jobs(self.state)
        journal.replay(self.state)
        history.recover(self.state)
        intake.record_stored_ids(self.state)
        self.state.usage.load(self.state.log)
        self.state.usage.configure(view.config_parts(self.state)["policy_config"], time.time())
        qcontrol.restore(self.state)
        self.state.condor.recover(self.state)
        publish.recover_orders(self.state)
        running = self.state.running_tasks()
        if running:
            self.state.accounted = reap.recent_records({job.id for job, _ in running})

    def _listen(self):
        rfd, wfd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.sigpipe = rfd
        signal.set_wakeup_fd(wfd)
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGHUP, lambda *_: None)
        self.state.log(f"I|daemon started, pid {os.getpid()}, {len(self.state.jobs)} jobs in spool")
        self._write_messages()

    def open(self):
        """Take the cell as ``startup`` does, but without signal handlers: for running
        ticks in the calling process (tests, with an execution layer that runs nothing)."""
        self._take_lock()
        self.recover()
        self.fifo = wake.open_listener()

    def close(self):
        """Release what ``open`` took."""
        self.state.flush()
        self._save_usage(time.time(), force=True)
        qcontrol.persist(self.state)
        self.state.condor.save(self.state, time.time(), force=True)
        history.write(self.state)
        self.probes.stop()
        os.close(self.fifo)
        self.lock.release()

    def _secure_spool(self):
        """Bring the spool to the modes of the security model (a cell made by an older version)."""
        from gridtools.spool import cellsetup
        if os.stat(cell.spool()).st_uid != os.geteuid():
            return
        try:
            cellsetup.secure(cell.root())
        except (OSError, GridError) as exc:
            self.state.log(f"E|cannot set the spool's permissions: {exc}")
        from gridtools.spool import cellcommon
        try:
            cellcommon.ensure_here(cell.root())     # a cell made before it had default/common
        except (OSError, GridError) as exc:
            self.state.log(f"E|cannot make {cellcommon.folder(cell.root())}: {exc}")

    def _sweep(self, now):
        """Remove what clients left behind: old replies, stale id claims, temporary files."""
        if now - self.swept < SWEEP_EVERY:
            return
        from gridtools.daemon import jobmail
        from gridtools.spool import ids, inbox, junk, replies
        self.swept = now
        junk.begin()
        steps = [jobmail.reap, junk.settle, lambda: replies.sweep(now), lambda: inbox.sweep(now),
                 lambda: faults.settle(self.state), lambda: ids.sweep("ar", now)]
        if not self.more_intake:
            steps.append(lambda: ids.sweep("job", now))
        for step in steps:             # (one that fails leaves the others to do their part)
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - junk anybody may leave must not stop the sweeps
                self.state.log(f"E|a sweep of the spool failed: {exc.__class__.__name__}: {exc}")
        junk.end()

    def _preen(self, now):
        """The master's periodic condor_preen, every PREEN_INTERVAL seconds (0: never),
        the first one interval after the daemon started."""
        from gridtools.daemon import preen
        every = preen.interval(self.state)
        if self.preened is None or not every:
            self.preened = now
            return
        if now - self.preened >= every:
            self.preened = now
            preen.periodic(self.state, self.dispatcher, time.time())

    def _on_stop(self, *_):
        self.stopping = True

    def shutdown(self):
        gone = self.vanished() or bool(self.usurped)
        if not gone:
            try:
                self._conclude_pass(time.time())
                journal.feed(self.state, most=None)
                if self.state.flush() and not self.unsettled:
                    journal.retire_if_done(self.state)
                history.write(self.state)
                self._save_usage(time.time(), force=True)
                qcontrol.persist(self.state)
                self.state.condor.save(self.state, time.time(), force=True)
            except Exception as exc:    # (what a failed pass met): the daemon still stops
                self.state.log(f"E|stopping: {failures.describe(exc)}")
        self.exec.stop()
        self.probes.stop()
        server_jsv = sys.modules.get("gridtools.daemon.serverjsv")
        if server_jsv is not None:
            server_jsv.KEPT.release()
        self.state.log("I|daemon stopped; running jobs continue under their shepherds")
        if self.usurped:    # (its spool is there: the messages say what happened)
            self._write_messages()
        if not gone:        # (the files of a cell that replaced this one are another daemon's)
            self._write_messages()
            try:
                os.unlink(cell.spool("daemon.pid"))
            except FileNotFoundError:
                pass
        if self.lock:
            self.lock.release()

    # ------------------------------------------------------------ one pass
    def vanished(self):
        """True when the cell's spool is gone (removed, or replaced by another cell)."""
        return self.lock_replaced() and _identity(cell.spool()) != self.spool_id

    def lock_replaced(self):
        """True when spool/daemon.lock is no longer the file this daemon locked."""
        return self.lock is not None and self.lock.fd is not None and self.lock.replaced()

    def _retake_lock(self):
        """spool/daemon.lock was removed (or replaced) while the spool stayed: the daemon
        locks the file now there, so that a daemon started next finds it running. When
        another process holds that lock and spool/daemon.pid names another live daemon,
        that daemon has the cell: this one stops, writing nothing of the cell's state.
        Another process that holds it for a moment (a look at the lock, a start that
        finds this daemon in the pid file and gives up) only puts it off to the next pass."""
        path = cell.spool("daemon.lock")
        lock = files.Lock(path, mode=0o600, blocking=False)
        try:
            taken = lock.acquire()
        except SpoolError as exc:
            self.state.log(f"E|{path} was removed and cannot be made again: {exc}")
            return
        if taken:
            if lock.replaced():         # (removed again meanwhile: the next pass sees to it)
                lock.release()
                return
            old, self.lock = self.lock, lock
            old.release()
            self.state.log(f"W|{path} was removed or replaced while the daemon ran; "
                           "the daemon locked it again")
            return
        other = daemonctl.pid()
        if other and other != os.getpid() and daemonctl.alive(other):
            self.usurped = other
            self.stopping = True
            self.state.log(f"E|{path} was removed while the daemon ran, and the daemon with pid "
                           f"{other} took the cell; this daemon stops")
            sys.stderr.write(f"gridtools daemon: {path} was removed and the daemon with pid {other} "
                             "took the cell; exiting\n")

    def tick(self, now=None):
        now = now if now is not None else time.time()
        state = self.state
        if self.vanished():
            sys.stderr.write(f"gridtools daemon: the spool {cell.spool()} is gone; exiting\n")
            self.stopping = True
            return
        if self.lock_replaced():
            self._retake_lock()
            if self.stopping:
                return
        generation = state.config_generation
        done, self.intake_waits = intake.run(state, self.dispatcher, now,
                                             skip={req.name for req, _ in self.unsettled})
        self.unsettled.extend(done)
        taken = len(done)
        # (after a rest, or requests taken in: etc/ is looked at, unless this tick's intake
        # looked at it already, before them)
        state.reload_config(force=(self.rested or bool(taken)) and state.config_checked != now)
        if state.config_generation != generation:       # read again here or by a request
            qcontrol.apply_initial_states(state)
            state.usage.configure(view.config_parts(state)["policy_config"], now)
            if not state.condor.refresh(state, now=now):
                state.condor.mark_checks(state)       # (a refresh marks them itself)
        else:
            state.condor.refresh(state, now=now)
        if taken:
            state.need_schedule = True
        self.more_intake = taken >= intake.BATCH
        if arreq.expire(state, self.dispatcher, now):
            state.need_schedule = True
        self.reaped = reap.collect(state, self.dispatcher, now)
        petask.collect(state, now)
        if self.reaped:
            state.need_schedule = True
        if self.next_event is not None and now >= self.next_event:
            state.need_schedule = True
        if now - self.last_pass >= self._interval():
            state.need_schedule = True          # Grid Engine's regular pass: urgency, monitor
        if state.condor.negotiation_due(now):
            state.need_schedule = True          # a negotiation cycle may preempt again
        if state.start_retry_at is not None and now >= state.start_retry_at:
            state.start_retry_at = None
            state.need_schedule = True
        sampled = self._refresh_load(now)
        self.probes.tick(now, self.local_hosts)
        if sampled and self.control.load_blocked:
            state.need_schedule = True          # jobs wait for a load alarm that may be over
        if state.need_schedule or sampled or self.control.due(now):
            self.control.update(now, self.loads, self.load_time + LOAD_REFRESH)
        if state.factories:
            factory.advance_all(state, now)     # (procs that left make room for more)
        if state.need_schedule and state.scheduling:
            if self.schedule(now):
                self.control.update(now, self.loads, self.load_time + LOAD_REFRESH)
        if self.decisions is not None or self.reaped or taken or state.condor.due(now):
            state.condor.follow(state, self.dispatcher, self.loads, now, self.decisions)
            self.decisions = None
        if state.factories:
            factory.advance_all(state, now)     # (procs that started make room for more idle ones)
        self.retry_signals = suspension.resend(state, self.dispatcher)
        self._sample_running(now)
        self._periodic(now)
        if state.other_removals:
            otherremove.carry_out(state, self.dispatcher, now)
        keep, max_age = self._finished_jobs_kept()
        reap.purge(state, keep, max_age, now)
        self.expiry = reap.next_expiry(state, max_age)
        self._conclude_pass(now)

    def _sample_running(self, now):
        """Once every scheduling interval, what running tasks have used so far counts in
        their owners' usage (and so in the share tree's next pass), as Grid Engine counts
        the usage its execution daemons report, and each one's CPU time gives its load on
        its host (``hostfacts.JobLoads``: its slot's CondorLoadAvg). At every pass, the runs
        whose execute event waits for their input files are looked at
        (``condorjob.follow_copying_in``)."""
        state = self.state
        if state.copying_in:
            condorjob.follow_copying_in(state)      # (their execute events, once their input is in)
        if now - self.usage_sampled < self._interval():
            return
        self.usage_sampled = now
        loads, running = state.condor.facts.jobs, set()
        for job, task in state.running_tasks():
            condorjob.note_executing(state, job, task)  # (JobCurrentStartExecutingDate, once a run)
            condorjob.note_copying(state, job, task)    # (TransferInStarted ..., as they happen)
            used = jobstore.read_usage(job.id, task.number)
            if used is not None and state.usage.task_running(job.spec, task.number, used):
                state.need_schedule = True
            condorjob.note_size(state, job, task, used, now)    # (ImageSize ..., as starters report)
            key = f"{job.id}.{task.number - 1}"         # (the job of its slot's claim: ads.Claim)
            running.add(key)
            if used is not None and task.start_time and task.host:
                loads.note(key, task.host, float(task.start_time), used.get("cpu", 0.0), used.get("time") or now)
        loads.keep(running)

    def _periodic(self, now):
        """HTCondor jobs' periodic expressions, every PERIODIC_EXPR_INTERVAL seconds (read
        at every pass: an interval made shorter applies at once, not after the old one);
        the tasks an evaluation left waiting (``condorjob.periodic``) a moment after it."""
        due = None if self.periodic_last is None else self.periodic_last + condorjob.periodic_interval()
        waiting = bool(getattr(self.state, "periodic_resumable", False))
        if due is not None and now < due and not (waiting and now >= self.periodic_at):
            if not waiting:
                self.periodic_at = due
            return
        full = due is None or now >= due
        if condorjob.periodic(self.state, self.dispatcher, now, resume=not full):
            self.state.need_schedule = True
        if full:
            self.periodic_last = now
        self.periodic_at = self.periodic_last + condorjob.periodic_interval()
        if self.state.periodic_resumable:
            self.periodic_at = min(self.periodic_at, time.time() + condorjob.RESUME_AFTER)

    def _conclude_pass(self, now):
        """Write what the pass changed, publish it, then answer the requests it shows."""
        state = self.state
        # the ads of the jobs that left the queue, before their states are written (a daemon
        # killed in between writes them again when it reaps the tasks again: an ad twice in
        # the history, as HTCondor's schedd may leave one, never none) and before the status
        # shows them gone (a client that no longer finds a job in condor_q finds it in
        # condor_history)
        wrote = history.write(state, most=history.SLICE)
        flushed = state.flush()
        if wrote:
            crash.point("history")
        # what clients asked for shows at once; ends and starts are coalesced
        publishing = state.need_publish and (self.unsettled or now >= self._next_publication()) \
            and not state.ends_unsynced          # (their records could not be flushed: later)
        self._save_usage(now, force=state.usage.urgent)       # what a waiting client may read
        state.condor.save(state, now, publishing=publishing)
        self.retry_deletes = reap.pending_deletes(state, self.dispatcher, now)
        self._write_messages()          # before the status and the answers show what they tell of
        if publishing:
            self._publish(now)
        # a request is answered and removed once the status shows what it did
        if self.unsettled and flushed and not state.need_publish and not state.unsynced \
                and journal.durable(state):
            left = intake.settle(self.unsettled)
            if len(left) < len(self.unsettled):
                crash.point("answer")
                kept = {req.name for req, _answer in left}
                intake.forget_settled(state, [item for item in self.unsettled if item[0].name not in kept])
            self.unsettled = left
        self._after_answers()
        self._sweep(now)
        self._preen(now)
        self._write_messages()

    def _after_answers(self):
        """Work kept off the requests' path: the folders of purged jobs go to the trash (the
        exec server empties it), the next slice of journalled jobs is marked for writing,
        and the journal goes once all are written."""
        state = self.state
        if reap.remove_purged(state):
            self.exec.order_trash()
        self.feeding = journal.feed(state)
        if not self.unsettled:
            journal.retire_if_done(state)

    def _save_usage(self, now, force=False):
        """Write the usage record when it changed, at most every PUBLISH_EVERY seconds
        (it is a decayed figure; the accounting file is the record of what was used)."""
        state = self.state
        if not state.usage.dirty or not (force or now - self.usage_saved >= PUBLISH_EVERY):
            return
        try:
            state.usage.save()
            faults.clear(state, (faults.WRITE, "usage"), "usage record written again")
        except SpoolError as exc:
            faults.note(state, (faults.WRITE, "usage"), faults.WRITE,
                        f"cannot write the usage record, retrying: {exc}")
        self.usage_saved = now

    def _next_publication(self):
        """When ends and starts may next be published: PUBLISH_EVERY after the last
        publication, or later when publishing a long status costs more than
        PUBLISH_SHARE of the daemon's time, but at most PUBLISH_LATEST after it (what
        clients asked for is published at once). The cost is the CPU time the daemon
        spent publishing: a machine busy with other work does not stretch the wait."""
        wait = min(PUBLISH_LATEST, max(PUBLISH_EVERY, self.publish_cost / PUBLISH_SHARE))
        return self.published + wait

    def _publish(self, now):
        state = self.state
        crash.point("publish")
        began = time.thread_time()
        try:
            publish.publish(state, self.snap_queues, self.loads, now)
        except SpoolError as exc:
            faults.note(state, (faults.WRITE, "status"), faults.WRITE,
                        f"cannot write the status, retrying: {exc}")
            state.need_publish = True
            return
        self.published = now
        self.publish_cost = time.thread_time() - began
        crash.point("publish")
        faults.clear(state, (faults.WRITE, "status"), "status written again")

    def schedule(self, now):
        state = self.state
        state.need_schedule = False
        self.last_pass = now
        # sched_conf params PROFILE=1, as the last pass read it: time this one (nothing
        # is measured while it is off)
        profile = self.profile
        if profile:
            began, cpu = time.perf_counter(), os.times()
        snap = view.build(state, now, self.loads)
        self.profile = monitor.profiled(snap)
        if arreq.check_errors(state, snap):
            snap = view.build(state, now, self.loads)
        self.snap_queues = snap.queues
        if state.usage.ledger.end_pass():       # (usage counted per pass: this pass read it)
            state.usage.dirty = True
        memo = self._memo(snap)
        decisions = state.condor.decide(state, self.dispatcher, snap, self.loads, now,
                                        memo=memo, pending_of=view.pending_of(state) if memo else None)
        self.decisions = decisions
        if decisions.examined is None:
            self.memo = (view.order_epoch(state), decisions.memo) if decisions.memo is not None else None
        crash.point("pass")
        self.control.load_blocked = decisions.load_alarms
        self.dispatcher.start_all(decisions.starts, now, decisions.slots)
        arreq.kill(state, self.dispatcher, decisions.kills, now)
        self._reject_immediate(decisions, now)
        self._keep(decisions)
        self._renice(snap, decisions, now)
        if state.monitor_next or monitor.wanted(snap):
            monitor.write(snap, decisions, now, runlog=state.monitor_next)
            state.monitor_next = False
        if profile and self.profile:
            spent = os.times()
            state.log(monitor.profile_line(snap, decisions, time.perf_counter() - began,
                                           spent.user - cpu.user, spent.system - cpu.system))
        quick = memo if decisions.examined is not None else None
        self.next_event = _next_start_time(snap, now, arreq.next_event(state, now), quick)
        if state.condor.put_off:
            self.next_event = min(self.next_event or now + PUT_OFF_PAUSE, now + PUT_OFF_PAUSE)
        if state.next_job_start:            # (a start with NextJobStartDelay holds back its owner's next)
            _passed_holds(state, now)
            if state.next_job_start:
                until = min(state.next_job_start.values())
                self.next_event = min(self.next_event or until, until)
        state.need_publish = True
        return len(decisions.starts)

    def _keep(self, decisions):
        """What the status shows of a pass: reasons, and after a full pass the order's
        numbers, the share tree and the reservations (a quick pass changes none)."""
        state = self.state
        state.reasons = _reasons_after(state.reasons, decisions)
        if decisions.examined is not None:
            return
        state.share_tree = decisions.share_tree
        state.reserves = tuple(decisions.reserves)
        # jobs that just started keep the numbers they were dispatched with, and jobs kept
        # back (held, waiting for a start time or another job: the pass gives them none)
        # those they had last, as Grid Engine's qstat shows them
        kept = {jid: o for jid, o in state.orders.items() if jid in state.jobs}
        kept.update(decisions.order)
        state.orders = kept

    def _memo(self, snap):
        """The last full pass's Memo when a quick pass may stand in for a full one."""
        state = self.state
        if self.memo is None or self.memo[0] != view.order_epoch(state):
            return None
        if state.monitor_next or monitor.wanted(snap):
            return None                 # the monitor reports every job at every pass
        memo = self.memo[1]
        return memo if memo.valid(snap, FULL_PASS_EVERY) else None

    def _renice(self, snap, decisions, now):
        """Renice running tasks by their tickets, every reprioritize_interval."""
        from gridtools.sched.policy.renice import due
        config = snap.policy.config
        if not decisions.reprioritize or not due(self.reniced, now, config.reprioritize_interval):
            return
        self.reniced = now
        for order in decisions.reprioritize:
            apply.reprioritize(self.state, self.exec, order.job_id, order.task, order.nice)

    def _reject_immediate(self, decisions, now):
        """Immediate jobs (-now y, qrsh) that did not start in their first pass are removed."""
        for reject in decisions.rejects:
            job = self.state.jobs.get(reject.job_id)
            if job is not None:
                apply.reject(self.state, job, now)

    def _refresh_load(self, now):
        if now - self.load_time < LOAD_REFRESH and self.loads:
            return False
        sample = host_load.sample()
        loads, news, self.state.heard, local = {}, False, {}, []
        sensed = self.probes.load_values()
        changed, relayed = [], {}
        for name in view.exec_hosts(self.state.config):
            reported, cron, others, plugins = _reported(name, self.state.heard, self.state.config, now)
            for host, given in (others or {}).items():
                relayed.setdefault(host, {}).update(given)
            if self.probes.reported(name, cron) or \
                    (self.state.condor is not None and self.state.condor.plugins_reported(name, plugins)):
                changed.append(name)
            if reported is None:
                local.append(name)
                reported = {**sample, **sensed[name]} if name in sensed else sample
            else:
                news = news or reported != self.loads.get(name)
            loads[name] = reported
        for name, given in relayed.items():         # (a sensor's values for another host:
            if name in loads:                       #  under the host's own report's)
                loads[name] = {**given, **loads[name]}
        self.local_hosts = tuple(local)
        self.state.global_load = {**relayed.get("global", {}), **(sensed.get("global") or {})}
        if changed:         # (the startd cron ads an execution daemon reported)
            self.state.condor.machines.changed.update(changed)
            self.state.condor.machines.next_wake = 0.0
            self.state.need_schedule = news = True
        news = news or sensed != self.sensed
        self.sensed = sensed
        # qhost shows an execution daemon's report when it comes, and this machine's
        # own values every load_report_time (as its execution daemon would report them)
        if news or (loads != self.loads and now - self.loads_shown >= self._load_report_time()):
            self.state.need_publish = True
            self.loads_shown = now
        self.loads = self.state.loads = loads
        self.load_time = now
        return True

    def _probed(self, ready):
        """Read what load sensors and startd cron jobs wrote: new load values are sampled
        at the next pass, new slot ads are published and matched."""
        loads, ads = self.probes.pump(ready)
        if loads:
            self.load_time = 0.0
            self.state.need_schedule = True
        if ads:
            self.state.need_publish = self.state.need_schedule = True
            self.state.condor.machines.next_wake = 0.0      # (policies that read them: at once)
            self.state.condor.machines.changed.update(self.local_hosts)    # (their ads: built again)

    def _load_report_time(self):
        from gridtools.daemon import hostreport
        return hostreport.setting(self.state.config, "global", "load_report_time")

    def _finished_jobs_kept(self):
        """(how many, for how long) finished jobs stay visible to qstat -s z: the global
        configuration's finished_jobs and qmaster_params FINISHED_JOBS_TIME (no limit)."""
        from gridtools.formats.sge.conf import parse_params
        gconf = self.state.config.objects["conf"].get("global") or {}
        try:
            keep = int(gconf.get("finished_jobs", 100))
        except (TypeError, ValueError):
            keep = 100
        text = parse_params(gconf.get("qmaster_params")).get("FINISHED_JOBS_TIME")
        try:
            max_age = values.parse_time(text) if text else None
        except GridError:
            max_age = None
        return keep, max_age

    def _interval(self):
        sched = self.state.config.single.get("sched") or {}
        try:
            return max(1.0, values.parse_time(str(sched.get("schedule_interval", "0:0:15"))))
        except GridError:
            return 15.0

    def _write_messages(self):
        messages = self.state.messages
        if not messages:
            return
        path = cell.spool("messages")
        try:
            with open(path, "a", encoding="utf-8", errors="backslashreplace") as fh:
                fh.write("\n".join(messages) + "\n")
                size = fh.tell()
        except OSError:
            del messages[:-MESSAGES_KEPT]        # kept for later while the spool is full
            return
        messages.clear()
        if size > MESSAGES_MAX:
            from gridtools.spool import rotation
            try:
                rotation.rotate(path, MESSAGES_ROTATIONS)
            except OSError:
                pass

    def _retrying(self):
        """True while something the spool refused waits to be written again."""
        return bool(self.unsettled or self.intake_waits or self.state.dirty or self.state.unsynced or any(
            f["kind"] in (faults.WRITE, faults.STORE) for f in self.state.faults.values()))

    # ------------------------------------------------------------ the loop
    def wait(self):
        timeout = min(self._interval(), CELL_CHECK)
        now = time.time()
        if self.state.scheduling:
            timeout = min(timeout, max(0.0, self.last_pass + self._interval() - now))
        if self._retrying():
            timeout = min(timeout, WRITE_RETRY)
        condor = self.state.condor.next_wake()
        for event in (self.next_event, self.control.next_wake, self.expiry, condor, self.state.start_retry_at):
            if event is not None:
                timeout = min(timeout, max(0.0, event - now))
        if self.periodic_at is not None:
            timeout = min(timeout, max(0.0, self.periodic_at - now))
        if self.retry_deletes or self.retry_signals:
            timeout = min(timeout, DELETE_RETRY)
        if self.state.need_schedule and self.state.scheduling:
            timeout = 0.0
        if self.more_intake or self.state.history or self.state.epochs or self.feeding or self.state.other_removals:
            timeout = 0.0                       # (removals a pass's budget left: at once)
        if self.state.need_publish:
            timeout = min(timeout, max(0.0, self._next_publication() - now))
        if self.state.usage.dirty:
            timeout = min(timeout, max(0.0, self.usage_saved + PUBLISH_EVERY - now))
        probing = self.probes.fds()
        if self.probes.next_wake() is not None:
            timeout = min(timeout, max(0.0, self.probes.next_wake() - now))
        began = time.time()
        watched = list(self.dispatcher.watch.fds.values())
        verifying = self._verifying()
        if verifying is not None:
            watched.append(verifying)           # (a job's verification ends: its intake goes on)
        try:
            ready, _, _ = select.select([self.fifo, self.sigpipe] + watched + probing, [], [], timeout)
        except InterruptedError:
            ready = []
        if probing and ready:
            self._probed(set(ready) & set(probing))
        # after a quiet spell the next pass looks at etc/ at once; busy passes look less often
        self.rested = time.time() - began >= 0.25
        for fd in ready:
            if fd in (self.fifo, self.sigpipe):
                wake.drain(fd)
        self.dispatcher.watch.ended(ready)
        mail = sys.modules.get("gridtools.daemon.jobmail")
        if mail is not None and mail.waiting():
            mail.reap()                         # (a mailer ended: the mails waiting for it go)

    @staticmethod
    def _verifying():
        """The descriptor that wakes the loop when the server JSV's verification of a job
        ends (None when none runs)."""
        server_jsv = sys.modules.get("gridtools.daemon.serverjsv")
        return server_jsv.BACKGROUND.fd() if server_jsv is not None else None

    def run(self, once=False):
        self.startup()
        from gridtools.daemon import upgrade
        self.code = upgrade.Watch(time.time())
        try:
            while not self.stopping:
                if self.failures.resume_at is not None and not self._rest(self.failures.resume_at):
                    break
                self.guarded_tick()
                if once:
                    break
                if self.state.restart_requested or self.code.changed(time.time()):
                    if not self.state.restart_requested:
                        self.state.log("I|the daemon's code changed since it started: starting again")
                    self.restart = True
                    files.atomic_write(cell.spool(daemonctl.RESTARTING), f"{os.getpid()}\n",
                                       fsync=False)
                    break
                try:
                    self.wait()
                except Exception as exc:        # (as a pass cut short: logged, then a rest)
                    self._failed_pass(exc)
        finally:
            self.shutdown()

    def guarded_tick(self, now=None):
        """One pass (``tick``); one that meets a full or read-only spool is retried
        later, one cut short by anything else is logged and rested after (see the
        module's docstring). True when the pass ran to its end."""
        try:
            self.tick(now)
            faults.clear(self.state, (faults.WRITE, "pass"))
        except SpoolError as exc:     # a full or read-only spool: try again later
            faults.note(self.state, (faults.WRITE, "pass"), faults.WRITE,
                        f"a pass was cut short, retrying: {exc}")
            self._write_messages()
            return False
        except Exception as exc:
            self._failed_pass(exc)
            return False
        if self.failures.over(self.state.log):
            self._write_messages()
        return True

    def _failed_pass(self, exc):
        """A pass cut short by ``exc``: logged (see ``failures``), what it did is written
        and answered as far as possible, and the next pass waits."""
        new = self.failures.note(exc, self.state.log)
        self.state.need_schedule = True         # (the pass may have stopped before it)
        try:
            self._conclude_pass(time.time())
        except Exception as again:      # (the failure may lie there): what is kept waits
            if new:
                self.state.log(f"E|the pass's changes could not all be written: {failures.describe(again)}")
        self._write_messages()
        self.failures.rest(time.time())

    def _rest(self, until):
        """Wait until ``until`` (after failed passes), woken only by a signal; False when
        the daemon is to stop."""
        while not self.stopping:
            left = until - time.time()
            if left <= 0:
                return True
            try:
                ready, _, _ = select.select([self.sigpipe], [], [], left)
            except InterruptedError:
                ready = []
            if ready:
                wake.drain(self.sigpipe)
        return False


#: the load values an execution host keeps while its execution daemon is not heard from
#: (Grid Engine's static load values: they do not change while the machine runs)
STATIC_LOAD = ("arch", "num_proc", "mem_total", "swap_total", "virtual_total")


def _reported(host, heard, conf, now):
    """(load values, startd cron ad rows, what its load sensors gave for other hosts and
    ``global``, what the pool's plugins offer there) the execution daemon serving
    ``host`` reported last (its time goes into ``heard``); (None, None, None, None) when
    no execution daemon serves it (the dispatcher's own machine runs its jobs). While
    the execution daemon that served it is gone, or has not reported for longer than
    the host's max_unheard, only the static values of its last report are kept
    (``STATIC_LOAD``), as Grid Engine's qmaster drops the others of a host it no
    longer hears from: ({static values}, [], {}, None)."""
    from gridtools.daemon import execd, hostreport
    if not os.path.isdir(execd.host_dir(host)):
        return None, None, None, None
    report = hostreport.read(host)
    if report is None:
        return {}, [], {}, None
    if execd.registered(host):
        heard[host] = report[0]
        if not hostreport.unheard(conf, host, report[0], now):
            return report[1], report[2], report[3], report[4]
    return {name: report[1][name] for name in STATIC_LOAD if name in report[1]}, [], {}, None


def _reasons_after(reasons, decisions):
    """The jobs' reasons after a pass: a full pass's, or those a quick pass changed on
    top of the last ones (the jobs it did not look at wait for the same reasons)."""
    if decisions.examined is None:
        return decisions.reasons
    found, merged = decisions.reasons, dict(reasons)
    for job_id in decisions.examined:
        why = found.get(job_id)
        if why:
            merged[job_id] = why
        else:
            merged.pop(job_id, None)
    return merged


def _identity(path):
    """(device, inode) of ``path``, or None when it is not there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _passed_holds(state, now):
    """Drop the owners' NextJobStartDelay holds whose time came before this pass (the
    pass has looked at the task that set each after its owner's other jobs, once)."""
    for owner in [owner for owner, until in state.next_job_start.items() if until <= now]:
        del state.next_job_start[owner]
        state.next_job_starter.pop(owner, None)


def _next_start_time(snap, now, ar_event=None, memo=None):
    if memo is not None:                # (the same jobs wait as at the full pass)
        times = [memo.next_time] if memo.next_time < float("inf") else []
    else:
        times = [j.start_at for j in snap.jobs if j.start_at and j.start_at > now]
        times += [until for j in snap.jobs for _task, until in j.resting if until > now]
    if ar_event is not None:
        times.append(ar_event)
    return min(times) if times else None


def main(argv=None, exec_client=None):
    """Run the daemon in the foreground (``exec_client``: its exec server, started
    already; see ``gridtools.daemon.__main__``)."""
    try:
        execution = LocalExecution(exec_client) if exec_client is not None else None
        daemon = Daemon(execution)
        daemon.run()
    except GridError as exc:
        sys.stderr.write(f"gridtools daemon: {exc}\n")
        return exc.exit_code
    if daemon.restart:
        from gridtools.daemon.upgrade import RESTART
        return RESTART
    return 0


if __name__ == "__main__":
    sys.exit(main())
