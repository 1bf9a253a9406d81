"""The dispatcher daemon: one ``tick()`` is one pass of named phases.

    reload config -> intake -> reap -> schedule (snapshot -> cycle -> start)
    -> purge -> flush -> publish

``run()`` repeats ticks whenever something wakes it: a byte in the wake-up
FIFO (a client request, a shepherd that ended), a signal, or the fallback
tick (``schedule_interval``), or the next time-based event (a ``-a`` start
time, a retry). A pass that has nothing to do costs a few system calls.
"""

import os
import select
import signal
import sys
import time

from gridtools.daemon import arreq, intake, monitor, petask, publish, qcontrol, reap, suspension, view
from gridtools.daemon.dispatch import Dispatcher
from gridtools.daemon.execd import ExecClient
from gridtools.daemon.state import State, load_jobs
from gridtools.errors import GridError
from gridtools.exec import load as host_load
from gridtools.exec import shepherd as _shepherd  # noqa: F401 - loaded once, used by every fork
from gridtools.formats import values
from gridtools.model import transitions as tr
from gridtools.sched.cycle import cycle
from gridtools.spool import files, wake
from gridtools import cell

LOAD_REFRESH = 2.0          # seconds between load samples of this machine
DELETE_RETRY = 0.1          # seconds between termination retries of deleting tasks
PUBLISH_EVERY = 0.25        # least seconds between two status snapshots (coalesces bursts)


class Daemon:
    """The dispatcher of one cell."""

    def __init__(self):
        self.state = State()
        self.exec = ExecClient()
        self.dispatcher = Dispatcher(self.state, self.exec)
        self.control = qcontrol.Control(self.state, self.dispatcher)
        self.retry_signals = False
        self.loads = {}
        self.load_time = 0.0
        self.snap_queues = ()
        self.next_event = None
        self.retry_deletes = False
        self.more_intake = False
        self.rested = True
        self.expiry = None
        self.reaped = 0
        self.purged = False
        self.published = 0.0
        self.stopping = False
        self.lock = None
        self.fifo = None
        self.sigpipe = None

    # ------------------------------------------------------------ life
    def startup(self):
        """Take the daemon lock, recover the spool and open the wake-up FIFO."""
        files.makedirs(cell.spool())
        self.lock = files.Lock(cell.spool("daemon.lock"), mode=0o644, blocking=False)
        if not self.lock.acquire():
            raise GridError("a gridtools daemon is already running for this cell")
        files.atomic_write(cell.spool("daemon.pid"), f"{os.getpid()}\n", fsync=False)
        self.exec.start()               # forked while the daemon is small
        self.state.reload_config(force=True)
        load_jobs(self.state)
        self.state.usage.load(self.state.log)
        self.state.usage.configure(view.config_parts(self.state)["policy_config"].halftime, time.time())
        qcontrol.restore(self.state)
        if self.state.running_tasks():
            self.state.accounted = reap.recent_records()
        self.fifo = wake.open_listener()
        rfd, wfd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.sigpipe = rfd
        signal.set_wakeup_fd(wfd)
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGHUP, lambda *_: None)
        self.state.log(f"I|daemon started, pid {os.getpid()}, {len(self.state.jobs)} jobs in spool")
        self._write_messages()

    def _on_stop(self, *_):
        self.stopping = True

    def shutdown(self):
        self.exec.stop()
        self.state.flush()
        qcontrol.persist(self.state)
        self.state.log("I|daemon stopped; running jobs continue under their shepherds")
        self._write_messages()
        try:
            os.unlink(cell.spool("daemon.pid"))
        except FileNotFoundError:
            pass
        if self.lock:
            self.lock.release()

    # ------------------------------------------------------------ one pass
    def tick(self, now=None):
        now = now if now is not None else time.time()
        state = self.state
        taken = intake.run(state, self.dispatcher, now)
        if state.reload_config(force=self.rested or bool(taken)):
            qcontrol.apply_initial_states(state)
            state.usage.configure(view.config_parts(state)["policy_config"].halftime, now)
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
        sampled = self._refresh_load(now)
        if sampled and self.control.load_blocked:
            state.need_schedule = True          # jobs wait for a load alarm that may be over
        if state.need_schedule or sampled or self.control.due(now):
            self.control.update(now, self.loads, self.load_time + LOAD_REFRESH)
        if state.need_schedule and state.scheduling:
            if self.schedule(now):
                self.control.update(now, self.loads, self.load_time + LOAD_REFRESH)
        self.retry_signals = suspension.resend(state, self.dispatcher)
        keep, max_age = self._finished_jobs_kept()
        self.purged = reap.purge(state, keep, max_age, now) or self.purged
        self.expiry = reap.next_expiry(state, max_age)
        state.flush()
        state.usage.save()
        self.retry_deletes = reap.pending_deletes(state, self.dispatcher)
        # what clients asked for shows at once; ends and starts are coalesced
        if state.need_publish and (taken or now - self.published >= PUBLISH_EVERY):
            publish.publish(state, self.snap_queues, self.loads, now)
            self.published = now
        if self.purged:
            self.exec.order_trash()
            self.purged = False
        self._write_messages()

    def schedule(self, now):
        state = self.state
        state.need_schedule = False
        snap = view.build(state, now, self.loads)
        if arreq.check_errors(state, snap):
            snap = view.build(state, now, self.loads)
        self.snap_queues = snap.queues
        decisions = cycle(snap)
        self.control.load_blocked = decisions.load_alarms
        self.dispatcher.start_all(decisions.starts, now)
        arreq.kill(state, self.dispatcher, decisions.kills, now)
        self._reject_immediate(decisions, now)
        state.reasons = decisions.reasons
        state.share_tree = decisions.share_tree
        state.reserves = tuple(decisions.reserves)
        # jobs that just started keep the numbers they were dispatched with
        kept = {jid: o for jid, o in state.orders.items() if jid in state.jobs}
        kept.update(decisions.order)
        state.orders = kept
        if state.monitor_next or monitor.wanted(snap):
            monitor.write(snap, decisions, now)
            state.monitor_next = False
        self.next_event = _next_start_time(snap, now, arreq.next_event(state, now))
        state.need_publish = True
        return len(decisions.starts)

    def _reject_immediate(self, decisions, now):
        """Immediate jobs (-now y, qrsh) that did not start in their first pass are removed."""
        for reject in decisions.rejects:
            job = self.state.jobs.get(reject.job_id)
            if job is None:
                continue
            for number in job.pending_numbers():
                tr.delete_pending(job, number, now)
                job.task(number).failed_reason = "immediate job could not be scheduled"
            self.state.touch(job)
            self.state.finished_order.append(job.id)
            self.state.log(f"I|immediate job {job.id} could not be scheduled")

    def _refresh_load(self, now):
        if now - self.load_time < LOAD_REFRESH and self.loads:
            return False
        sample = host_load.sample()
        self.loads = {name: sample for name in view.exec_hosts(self.state.config)}
        self.state.loads = self.loads
        self.load_time = now
        return True

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
        if not self.state.messages:
            return
        with open(cell.spool("messages"), "a", encoding="utf-8") as fh:
            fh.write("\n".join(self.state.messages) + "\n")
        self.state.messages.clear()

    # ------------------------------------------------------------ the loop
    def wait(self):
        timeout = self._interval()
        now = time.time()
        for event in (self.next_event, self.control.next_wake, self.expiry):
            if event is not None:
                timeout = min(timeout, max(0.0, event - now))
        if self.retry_deletes or self.retry_signals:
            timeout = min(timeout, DELETE_RETRY)
        if self.state.need_schedule and self.state.scheduling:
            timeout = 0.0
        if self.more_intake:
            timeout = 0.0
        if self.state.need_publish:
            timeout = min(timeout, max(0.0, self.published + PUBLISH_EVERY - now))
        began = time.time()
        try:
            ready, _, _ = select.select([self.fifo, self.sigpipe], [], [], timeout)
        except InterruptedError:
            ready = []
        # after a quiet spell the next pass looks at etc/ at once; busy passes look less often
        self.rested = time.time() - began >= 0.25
        for fd in ready:
            wake.drain(fd)

    def run(self, once=False):
        self.startup()
        try:
            while not self.stopping:
                self.tick()
                if once:
                    break
                self.wait()
        finally:
            self.shutdown()


def _next_start_time(snap, now, ar_event=None):
    times = [j.start_at for j in snap.jobs if j.start_at and j.start_at > now]
    if ar_event is not None:
        times.append(ar_event)
    return min(times) if times else None


def main(argv=None):
    """``python -m gridtools.daemon.loop``: run the daemon in the foreground."""
    try:
        Daemon().run()
    except GridError as exc:
        sys.stderr.write(f"gridtools daemon: {exc}\n")
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
