"""The shepherd: runs one job task from its plan and writes the task's result.

One shepherd process per running task, in its own session, holding an
exclusive lock on ``shepherd.lock`` in the task's spool folder until the
task's result is delivered (the daemon's proof that it is alive, also after
a daemon restart); a shepherd forked as a spare then waits for another task
(``exec.launch``). It
creates TMPDIR, runs the queue prolog, the PE start procedure, the job (as
the job owner when the shepherd runs as root), the PE stop procedure and the
epilog (what the job leaves running when it ends, in whatever session or
process group, is ended with it and counted in its usage: ``exec.leftovers``);
enforces wall-clock and CPU limits (soft: SIGUSR1 or SIGXCPU, hard:
SIGKILL) and memory limits (setrlimit); records usage (wall clock, CPU,
maximum virtual memory), reporting what the job has used so far in the
task's ``usage`` file as it runs (and, for an HTCondor job that moves its
files, when their copying reached each stage in its ``transfers`` file,
waking the daemon once the input files are in); and finally writes
``result.yaml`` and wakes the daemon. A shepherd whose task was taken away meanwhile (ended
by the daemon without it, or started again elsewhere: ``tasklife.still_mine``)
ends its job when it notices and writes nothing more into the task's
folder. A dispatcher crash does not touch it.

A job whose streams are FIFOs (a qrsh client's) is started by a forked job
process, which may wait long in opening them; the shepherd meanwhile still
obeys its signals. An interactive job is given up, before it runs or while
it runs, when its qrsh client went away, and before it runs when the client
did not take its streams within the handshake time (see ``exec.client``).

Signals the daemon sends to a shepherd: SIGTERM ends the job (qdel), SIGHUP
ends it to requeue it (host flush, qmod -r), SIGQUIT requeues it with the
job killed at once (an HTCondor startd's Killing), SIGUSR1 suspends it,
SIGUSR2 resumes it. With ``-notify`` the job first gets SIGUSR1 (before suspension)
or SIGUSR2 (before being killed) and ``notify`` seconds to react. ``ckpt.CHECKPOINT_NOW``
has an HTCondor job that asked for one (``plan["checkpoint_signal"]``) sent its
checkpoint signal, unless the last one is not answered yet; the job then
promised to exit as its successful checkpoint exit (``success``): it is started
again at once where it ran, and any other exit holds it (the result's
``checkpoint_failure``), as HTCondor's starter does.
"""

import errno
import os
import select
import signal
import stat
import time

from gridtools.errors import SpoolError
from gridtools.exec import ckpt, client, jobproc, leftovers, meter, procedure, tasklife, tmpdir
from gridtools.spool import jobs as jobstore
from gridtools.spool import wake
from gridtools.spool.files import atomic_write

FAILED_PROLOG = 8
FAILED_EPILOG = 15
FAILED_PESTART = 10
FAILED_KILLED = 100
FAILED_STAGE_IN = 26        # an HTCondor job's input files could not be copied in


class Shepherd:
    """Carries out one plan."""

    def __init__(self, plan, task_dir, reuse=False):
        self.plan = plan
        self.dir = task_dir
        self.reuse = reuse              # this process serves another task next (a spare)
        self.flags = []
        self.result = {"start_time": time.time(), "failed": 0, "failed_reason": "",
                       "exit_status": 0, "signal": 0, "deleted": False, "requeue": False,
                       "error_state": False, "error_reason": "", "usage": {}}
        self.killed_by = None
        self.checkpointing = False      # the job was sent its checkpoint signal, and has not exited
        self.trace_lines = []           # steps noted before the trace file was made
        self.trace_fd = None
        self.timers = meter.Timers(time.time(), {}, 0)
        self.lock = None
        self.taken = False              # the task is no longer this shepherd's (tasklife.still_mine)
        self.transfers = {}             # when its file copying reached each stage (_note_transfer)
        self.earlier_usage = {}         # CPU times of the runs before a self-checkpoint's restart
        self.cgroup = None              # the job's memory cgroup (exec.cgroups), once made
        self.tracker = None             # the task's cgroup that no process of the job leaves (leftovers)
        self.transferring = False       # its files are being copied (a removal ends the copying)
        self.reaped = leftovers.Usage()  # what the job's orphans used, waited for while it ran
        self.cpu_before = None          # the CPU time of the task's cgroup when the run began

    def record_group(self, pgid):
        """Note in the lock the process group this shepherd runs (the job, a prolog ...;
        the last one stays noted, its leftovers included), so that a daemon finding the
        shepherd killed can kill it too."""
        if self.lock is not None:
            try:
                tasklife.write_pid(self.lock, pgid)
            except OSError:
                pass

    def trace(self, text):
        """Note a step in the task's ``trace`` file, a line as Grid Engine's shepherd
        writes one: ``MM/DD/YYYY HH:MM:SS [euid:pid]: text`` (kept until the file is
        made, then written at once)."""
        line = f"{time.strftime('%m/%d/%Y %H:%M:%S')} [{os.geteuid()}:{os.getpid()}]: {text}\n"
        if self.trace_fd is None:
            self.trace_lines.append(line)
            return
        try:
            os.write(self.trace_fd, line.encode("utf-8", "replace"))
        except OSError:
            pass

    def _open_trace(self):
        """The ``trace`` file of the task's folder, with the steps noted so far."""
        fd = self._own_file("trace")
        if fd is not None:
            self.trace_fd = fd
            lines, self.trace_lines = self.trace_lines, []
            try:
                os.write(fd, "".join(lines).encode("utf-8", "replace"))
            except OSError:
                pass

    def close_trace(self):
        if self.trace_fd is not None:
            os.close(self.trace_fd)
            self.trace_fd = None

    def _own_file(self, name, text=None):
        """Create (empty) a file of the task's folder, mode 0600 and owned by the job's
        owner as Grid Engine's execd keeps its per-job files; ``text``: write it and
        close the file (returns None), else the open descriptor."""
        path = os.path.join(self.dir, name)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            self.trace(f"cannot write {name}: {exc}")
            return None
        try:
            os.fchmod(fd, 0o600)
            if os.geteuid() == 0 and self.plan["uid"] != 0:
                os.fchown(fd, self.plan["uid"], self.plan["gid"])
            if text is not None:
                os.write(fd, text.encode("utf-8", "replace"))
        except OSError as exc:
            self.trace(f"cannot write {name}: {exc}")
        if text is None:
            return fd
        os.close(fd)
        return None

    # ------------------------------------------------------------ signals
    def _on_signal(self, signum, _frame):
        self.flags.append(signum)
        if self.transferring and signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT) \
                and self.tracker is not None:
            self.tracker.kill()         # (the copying, and a plugin that would not end, end now)

    def _install_handlers(self):
        for sig in tasklife.CONTROL:
            signal.signal(sig, self._on_signal)

    # ------------------------------------------------------------ phases
    def run(self):
        self._install_handlers()
        leftovers.become_subreaper()    # (what the task's processes leave stays below this process)
        self._make_tracker()
        plan = self.plan
        jobproc.resolve_streams(plan)
        self._open_trace()
        self._own_file("pid", f"{os.getpid()}\n")
        self._own_file("error", "")
        made = self._make_tmpdir()
        self._write_ad_files(made)
        self._keep_file("environment", "".join(f"{k}={v}\n" for k, v in plan["env"].items()
                                               if "\n" not in f"{k}{v}"))
        try:
            if self._stage_in(made) and self._procedure("prolog", FAILED_PROLOG) and \
                    self._procedure("pe_start", FAILED_PESTART) and self._deferred():
                ckpt.prepare_restart(plan)
                ran = self._run_job()
                while ran and self._self_checkpointed():
                    ran = self._run_job()
                ckpt.clean(plan, self.result)
                # (a job held for its checkpoint keeps the last one; one killed for its memory
                # gets nothing back, as from HTCondor's starter)
                if ran and not self.result.get("checkpoint_failure") and not self.result.get("memory_exceeded"):
                    self._stage_out()
                self._procedure("pe_stop", 13)
                self._procedure("epilog", FAILED_EPILOG)
        finally:
            leftovers.end_all(tracker=self.tracker)     # (what a transfer or a procedure left running)
            leftovers.adopt(None)
            if self.tracker is not None:
                if not self.tracker.remove():
                    self.trace(f"cannot remove the cgroup {self.tracker.path}")
                self.tracker = None
            if self.cgroup is not None:
                self.plan.pop("cgroup_procs", None)
                if not self.cgroup.remove():
                    self.trace(f"cannot remove the cgroup {self.cgroup.path}")
                self.cgroup = None
            if made:
                self._remove_tmpdir(made)
            if plan.get("interactive"):
                self._remove_client_folder()
        self.result["end_time"] = time.time()
        return self.result

    def _remove_client_folder(self):
        """The FIFOs of an interactive job whose client went away go with the job."""
        try:
            if client.remove_folder(self.plan):
                self.trace(f"removed the folder of the gone client: {client.stream_folder(self.plan)}")
        except OSError as exc:
            self.trace(f"cannot remove the folder of the gone client: {exc}")

    def _make_tmpdir(self):
        """Create the task's TMPDIR (see exec.tmpdir); its path, or None when it failed."""
        plan = self.plan
        spec = plan.get("tmpdir")
        if not isinstance(spec, dict):
            return None
        try:
            path = tmpdir.make(spec, plan["uid"], plan["gid"])
        except OSError as exc:
            self.trace(f"cannot create TMPDIR {spec.get('path')}: {exc}")
            return None
        for env in (plan["env"], plan.get("proc_env")):
            if env is not None:
                if env.get("_CONDOR_SCRATCH_DIR") and env["_CONDOR_SCRATCH_DIR"] == env.get("TMPDIR"):
                    env["_CONDOR_SCRATCH_DIR"] = path   # (a fallback folder: the scratch dir too)
                env["TMPDIR"] = env["TMP"] = path
        return path

    def _write_ad_files(self, made):
        """An HTCondor job's ad files (``plan["ad_files"]``) in its TMPDIR ``made``
        (``tmpdir.write_files``); the variables that name them are set for those written."""
        files = self.plan.get("ad_files")
        if files and made:
            written, faults = tmpdir.write_files(made, files, self.plan["uid"], self.plan["gid"])
            self.plan["env"].update(written)
            for fault in faults:
                self.trace(fault)

    def _stage_in(self, made):
        """An HTCondor job that transfers files runs in its TMPDIR with copies of its
        input files (see exec.transfer); False when they could not be copied. When the
        copying began and ended is the result's ``transfer_input`` (whole seconds)."""
        if not self.plan.get("scratch"):
            return True
        from gridtools.exec import transfer
        self._checkpoint_store()
        self._evict_store()
        if made:
            self.plan["cwd"] = made
            self.plan["env"].update(PWD=made, _CONDOR_SCRATCH_DIR=made)
            self._run_from_scratch(made)
        began = self._note_transfer("in_started")
        self.transferring = True
        try:
            done, why, status = transfer.stage_in(self.plan)
        finally:
            self.transferring = False
        # (noted for the daemon only when the files are in: then the job executes)
        self.result["transfer_input"] = [began, self._note_transfer("in_finished") if done else int(time.time())]
        if not done and self._stopped_meanwhile():
            self.trace("ended while its input files were copied")
            return False
        if not done:           # (a failed plugin's exit status is the hold's subcode, as HTCondor's)
            self.result.update(failed=FAILED_STAGE_IN, failed_reason=why, exit_status=1,
                               error_state=True, error_reason=why,
                               start_failure={"step": transfer.STEP_INPUT, "path": "", "errno": status})
        return done

    def _checkpoint_store(self):
        """The folder of the task that keeps an HTCondor job's self-checkpoints between
        its runs (``self_checkpoint`` in the task's folder, the job owner's, mode 0700):
        made when missing, named in the plan for ``transfer``."""
        spec = self.plan.get("self_checkpoint")
        if spec and not self.plan.get("result_dir"):
            store = self._task_store(SELF_CHECKPOINT)
            if store:
                spec["store"] = store

    def _evict_store(self):
        """The folder of the task that keeps the output sandbox of an HTCondor job of
        ON_EXIT_OR_EVICT from its eviction to its next run (``evicted_sandbox`` in the
        task's folder in the daemon's spool, the job owner's, mode 0700: no other user
        reads it; it goes with the job's folder when the job leaves the queue): named in
        the plan's ``scratch`` for ``transfer``."""
        scratch = self.plan["scratch"]
        if scratch.get("on_evict") and not self.plan.get("result_dir"):
            scratch["evict_store"] = self._task_store(jobstore.EVICTED_SANDBOX)

    def _run_from_scratch(self, made):
        """A job whose executable is transferred (``scratch["executable"]``) runs the copy
        in its scratch folder ``made``, as HTCondor's starter runs it (Cmd is left as
        submitted); its output and error files kept in the sandbox (``scratch["streams"]``)
        are written there."""
        for key, (name, _where) in (self.plan["scratch"].get("streams") or {}).items():
            self.plan[key] = os.path.join(made, name)     # (copied to where they go at the exit)
        program = self.plan["scratch"].get("executable")
        if program:
            copy = os.path.join(made, os.path.basename(program))
            argv = list(self.plan["argv"])
            if program in argv:             # (the job's program: first, or after a queue's starter_method)
                argv[argv.index(program)] = copy
            self.plan["argv"] = argv
            if self.plan["exec"] == program:
                self.plan["exec"] = copy

    def _task_store(self, name):
        """The folder ``name`` of the task's folder, the job owner's, mode 0700 (made when
        missing; a thing of that name that is not a folder of the owner's or of this
        process's is not used): its path, or None."""
        store = os.path.join(self.dir, name)
        try:
            os.mkdir(store, 0o700)
            if os.geteuid() == 0:
                os.chown(store, self.plan["uid"], self.plan["gid"])
        except FileExistsError:
            pass
        except OSError as exc:
            self.trace(f"cannot make the folder {name}: {exc}")
            return None
        info = os.lstat(store)
        if stat.S_ISDIR(info.st_mode) and info.st_uid in (self.plan["uid"], os.geteuid()):
            return store
        return None

    def _self_checkpointed(self):
        """An HTCondor job that exited with its checkpoint_exit_code (and was not being
        ended): its checkpoint files are kept (``transfer.save_checkpoint``) and it starts
        again at once, in the same folder with the same arguments, as HTCondor's starter
        starts it again; True then. Its CPU times add up over the runs."""
        spec = self.plan.get("self_checkpoint")
        res = self.result
        if self.checkpointing:
            return self._signalled_checkpoint(spec)
        if not spec or res["signal"] or res["exit_status"] != spec["code"]:
            return False
        if self.killed_by or res["deleted"] or res["requeue"] or self.flags_stop():
            return False
        return self._again(spec, f"job checkpointed (exit code {spec['code']}): starting it again")

    def _signalled_checkpoint(self, spec):
        """The exit of a job sent its checkpoint signal: as it promised
        (``checkpoint_signal["success"]``: [by a signal, its number or exit code]), it
        starts again as a self-checkpointing job does (True); else, unless it was being
        ended, the result's ``checkpoint_failure`` (what was promised, how it exited)."""
        self.checkpointing = False
        res = self.result
        if self.killed_by or res["deleted"] or res["requeue"] or self.flags_stop():
            return False
        wanted = self.plan["checkpoint_signal"]
        by_signal, value = bool(wanted["success"][0]), int(wanted["success"][1])
        if (res["signal"] == value) if by_signal else (not res["signal"] and res["exit_status"] == value):
            return self._again(spec, "job checkpointed when sent its checkpoint signal: starting it again")
        actual = [True, res["signal"]] if res["signal"] else [False, res["exit_status"]]
        res["checkpoint_failure"] = {"promised": list(wanted["promised"]), "actual": actual,
                                     "status": res["signal"] or res["exit_status"] << 8}
        self.trace("job did not exit as promised when sent its checkpoint signal")
        return False

    def _again(self, spec, why):
        """The job is to start again at once after a checkpoint: its checkpoint files kept
        (with ``spec``, its self_checkpoint, when they are kept), its CPU times added up."""
        res = self.result
        if spec and spec.get("store"):
            from gridtools.exec import transfer
            saved, fault = transfer.save_checkpoint(self.plan, spec["store"])
            if not saved:
                self.trace(f"checkpoint not kept: {fault or 'copying failed'}")
        self._note_checkpoint(res)
        for name in ("ru_utime", "ru_stime"):
            self.earlier_usage[name] = self.earlier_usage.get(name, 0.0) + float(res["usage"].get(name) or 0.0)
        self.trace(why)
        return True

    def _note_checkpoint(self, res):
        """Count a checkpoint of the run, and the seconds it committed (since the run's
        start or its last checkpoint), as HTCondor's starter tells its shadow
        (CheckpointNumber, JobLastCheckpointTime, NewlyCommittedTime); noted in the
        task's folder (``checkpoints``: count, time, committed seconds) for the queries
        while the job runs on, and in the result for the run's end."""
        now = time.time()
        res["checkpoints"] = res.get("checkpoints", 0) + 1
        res["committed"] = res.get("committed", 0.0) + max(0.0, now - res.get("last_checkpoint", res["start_time"]))
        res["last_checkpoint"] = now
        try:
            atomic_write(os.path.join(self.dir, "checkpoints"),
                         f"{res['checkpoints']} {int(now)} {int(res['committed'])}\n", fsync=False)
        except SpoolError:
            pass                            # (only for the queries: the result has them)

    def _evicted(self):
        """True when the job did not exit on its own: it was removed, held, vacated,
        requeued or killed."""
        res = self.result
        return bool(self.killed_by or res["deleted"] or res["requeue"] or self.flags_stop())

    def _stage_out(self):
        """Copy the job's output files back (see exec.transfer), only when it exited on
        its own, as HTCondor's ON_EXIT and ON_EXIT_OR_EVICT send them: a job removed,
        held, vacated or killed gets nothing back (but the sandbox of one of
        ON_EXIT_OR_EVICT that is not removed is spooled for its next run:
        ``_spool_sandbox``). A file it was to leave that is not there is the result's
        ``output_failure`` (the step, the path and the errno); when the copying began
        and ended, its ``transfer_output``. A job whose output comes back only on
        success (``scratch["on_success"]``: the exit code that is one) that exited
        otherwise, or by a signal, gets nothing back, and no failure."""
        if not self.plan.get("scratch"):
            return
        usage = self.result["usage"]          # (what the job left, as the starter says)
        usage["disk"], usage["files"] = tmpdir.folder_usage(self.plan["cwd"])
        if self._evicted():
            self._spool_sandbox()
            return
        success = self.plan["scratch"].get("on_success")
        if success is not None and (self.result["signal"] or self.result["exit_status"] != success):
            self.trace("output files not copied back: the job did not succeed (ON_SUCCESS)")
            return
        from gridtools.exec import transfer
        began = self._note_transfer("out_started")
        self.transferring = True
        try:
            done, missing = transfer.stage_out(self.plan)
        finally:
            self.transferring = False
        self.result["transfer_output"] = [began, self._note_transfer("out_finished")]
        if not done:
            self.trace("cannot copy output files back to the job's Iwd")
        if missing is not None and not self._evicted():
            self.result["output_failure"] = dict(missing, step=transfer.STEP_OUTPUT)
        if done and self.plan["scratch"].get("evict_store"):
            jobstore.drop_spooled_sandbox(self.dir)     # (its files are in Iwd now)

    def _spool_sandbox(self):
        """An evicted job of ON_EXIT_OR_EVICT (not removed: a removed job's spool goes
        with it) has its output sandbox kept in its task's folder for its next run
        (``transfer.spool_sandbox``); any other evicted job's output is dropped."""
        scratch = self.plan["scratch"]
        store = scratch.get("evict_store")
        if self.taken:
            return                          # (the task's folder is another run's now)
        if not store or self.result["deleted"]:
            self.trace("output files not copied back: the job did not exit on its own")
            if store:
                jobstore.drop_spooled_sandbox(self.dir)     # (a removed job's spool goes with it)
            return
        from gridtools.exec import transfer
        self.transferring = True
        try:
            kept, fault = transfer.spool_sandbox(self.plan, store)
        finally:
            self.transferring = False
        self.trace("output sandbox spooled for the next run" if kept else
                   f"output sandbox not spooled: {fault or 'copying failed'}")

    def _note_transfer(self, stage):
        """Now (whole seconds), noted in the task's ``transfers`` file as when the run
        reached ``stage`` of its file copying (``jobstore.TRANSFER_STAGES``): the daemon
        reads it while the task runs."""
        now = int(time.time())
        self.transfers[stage] = now
        if not self.taken:
            jobstore.write_transfers(self.dir, self.transfers)
            if stage == "in_finished":
                wake.poke()             # (the job's execute event waits for its input files)
        return now

    def _remove_tmpdir(self, path):
        tmpdir.remove_files(path, self.plan.get("ad_files"))    # (a folder left empty is kept)
        try:
            tmpdir.remove(self.plan["tmpdir"], path, keep=self.reuse)
        except OSError as exc:
            self.trace(f"cannot remove TMPDIR {path}: {exc}")

    def _procedure(self, which, failed_code):
        """Run procedure ``which``; False when it failed (``failed_code``). A job asked to
        stop before it started runs no prolog or pe_start; one stopped while it ran still
        has its pe_stop and epilog run, as Grid Engine's shepherd runs them after the job
        (the clean-up a site's MPI needs)."""
        spec = self.plan.get(which)
        if not spec or (self.flags_stop() and which in ("prolog", "pe_start")):
            return True
        outputs = ("pe_stdout", "pe_stderr") if which.startswith("pe_") else ("stdout", "stderr")
        ran = procedure.run_procedure(self.plan, spec, on_start=self.record_group, outputs=outputs)
        if ran.failure is not None:
            # (as the job's own start: the job goes to the error state, the queue stays;
            # an earlier failure, the job's own say, is the one the task keeps)
            reason = f"{which}: {ran.failure['reason']}"
            self.trace(f"{which} could not be started: {ran.failure['reason']}")
            if not self.result["failed"]:
                self.result.update(failed=failed_code, failed_reason=reason, exit_status=1,
                                   error_state=True, error_reason=reason)
            return False
        status = ran.status
        if status != 0:
            self.result["failed"] = failed_code
            self.result["failed_reason"] = f"{which} failed with exit status {status}"
            self.result["exit_status"] = status
            self.result.update(procedure_failure(which, status, ran.owner))
            if self.result["usage"]:
                self.result["ran"] = True       # after the job's run: its record keeps its times
            return False
        return True

    def _deferred(self):
        """An HTCondor job with a deferral time (``plan["not_before"]``) begins to execute
        then, not before, as HTCondor's starter keeps it; True once it may. Meanwhile
        the shepherd obeys removal and requeueing (False: the job never ran)."""
        when = self.plan.get("not_before")
        if not when or time.time() >= when:
            return True
        self.trace(f"deferred until {when}")
        rfd, wfd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wfd)
        try:
            while True:
                self._stopped_meanwhile()
                self.flags = [sig for sig in self.flags
                              if sig not in (signal.SIGUSR1, signal.SIGUSR2, ckpt.CHECKPOINT_NOW)]
                if self.flags:
                    self.trace("ended before its deferral time")
                    return False
                left = when - time.time()
                if left <= 0:
                    return True
                select.select([rfd], [], [], left)
                _drain(rfd)
        finally:
            signal.set_wakeup_fd(-1)
            os.close(rfd)
            os.close(wfd)

    def _stopped_meanwhile(self):
        """True when the task was removed or requeued (a control signal came) while the
        shepherd did something else than run the job (waited for its deferral time,
        copied its files): noted in the result, instead of a failure of what was
        stopped."""
        for sig in self.flags:
            if sig in (signal.SIGTERM, signal.SIGINT):
                self.result["deleted"] = True
            elif sig in (signal.SIGHUP, signal.SIGQUIT):
                self.result["requeue"] = True
        return bool(self.result["deleted"] or self.result["requeue"])

    def flags_stop(self):
        return any(s in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGINT) for s in self.flags)

    def _run_job(self):
        """Start the job and see it to its end; False when it could not be started."""
        self.trace("starting job")
        pid = failure = errpipe = None
        self._make_cgroup()
        leftovers.become_subreaper()    # (what the job leaves running stays below this process)
        self._make_tracker()
        entered = self.tracker is not None and self.tracker.enter()     # (the job starts in it)
        self.cpu_before = self.tracker.cpu() if entered else None       # (a run before it counted its own)
        try:
            if self.cgroup is None and jobproc.can_spawn_directly(self.plan):
                pid, failure = jobproc.spawn_directly(self.plan)
            if pid is None and failure is None:
                pid, errpipe = jobproc.spawn_job(self.plan)
        finally:
            if entered:
                self.tracker.leave()
        if failure is None and errpipe is not None:
            self.record_group(pid)
            failure = self._await_start(pid, errpipe)
        self.trace(f"job pid {pid} " + ("failed to start" if failure else "executing"))
        if failure is not None:
            if pid is not None:
                os.waitpid(pid, 0)
            self._own_file("error", failure["reason"] + "\n")
            self.result.update(failed=failure["code"], failed_reason=failure["reason"], exit_status=1)
            if failure.get("queue"):
                # the queue's shell is missing: the queue instance is at fault, the job waits again
                self.result.update(queue_error=failure["reason"], requeue=True, exit_status=0)
                return False
            # (an interactive job's streams are its client's: without them, nothing to retry)
            if failure["code"] in (jobproc.FAILED_CHDIR, jobproc.FAILED_OPEN, jobproc.FAILED_SHELL) and \
                    not self.plan.get("interactive"):
                # the job never ran: Grid Engine accounts it with exit status 0 (and qsub
                # -sync y tells it from a run by its start time of 0)
                self.result.update(error_state=True, error_reason=failure["reason"], exit_status=0,
                                   start_failure={k: failure[k] for k in ("step", "path", "errno")})
            return False
        self.record_group(pid)
        try:
            atomic_write(os.path.join(self.dir, "job_pid"), f"{pid}\n", fsync=False)
        except SpoolError:
            pass                            # only for qstat's usage; the lock has the pid
        if self.plan.get("not_before"):
            wake.poke()                     # (a deferred job began: its execute event follows)
        status, rusage, left = self._supervise(pid)
        self.trace(f"job exited with status {status}" + (f"; {left.count} of its processes left were ended"
                                                           if left.count else ""))
        self._record_exit(status, rusage, left)
        return True

    def _make_tracker(self):
        """Make the task's cgroup (``leftovers.Tracker``), once, and make it the one the
        processes forked for the task enter (``leftovers.join``)."""
        if self.tracker is None:
            self.tracker = leftovers.Tracker.make(leftovers.group_name(self.plan['job_id'], self.plan['task'],
                                                                       os.getpid()))
            leftovers.adopt(self.tracker)

    def _make_cgroup(self):
        """Make the job's cgroup (``exec.cgroups``: its memory limit, its share of the
        CPUs), once: the job process joins it (``plan["cgroup_procs"]``) before it
        executes the job."""
        wanted = self.plan.get("cgroup")
        if self.cgroup is not None or not isinstance(wanted, dict) or os.geteuid() != 0:
            return
        from gridtools.exec import cgroups
        limit = self.plan.get("memory_limit") or {}
        name = cgroups.leaf_name(self.plan["env"].get("_CONDOR_SLOT"), os.getpid())
        mb, low = limit.get("mb"), limit.get("low_mb")
        self.cgroup = cgroups.make(str(wanted.get("base") or ""), name, int(mb) << 20 if mb else None,
                                   int(low) << 20 if low else None, bool(limit.get("no_swap", True)),
                                   cpus=int(wanted.get("cpus") or 1))
        if self.cgroup is None:
            self.trace("no cgroup: the job's memory is sampled")
            return
        self.plan["cgroup_procs"] = self.cgroup.procs_files
        self.trace(f"job's memory cgroup: {self.cgroup.path}")

    def _await_start(self, pid, errpipe):
        """Wait until the forked job process executed the job (None) or failed before
        it (the failure, see ``jobproc.read_spawn_failure``). Opening its streams may
        wait for long: a FIFO's open waits for its other end, a qrsh client's.
        Meanwhile the shepherd obeys qdel and requeueing (the job process is killed,
        and ``_supervise`` ends the task as it ends a running one), and gives up an
        interactive job whose client went away or did not take the job's streams
        within the handshake time (unless the job process executed the job meanwhile:
        then the job runs, and the client check of a running job ends it)."""
        interactive = self.plan.get("interactive") or {}
        started = time.time()
        rfd, wfd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wfd)
        try:
            while True:
                given_up = _handshake_failed(interactive, started) if interactive else None
                if given_up and select.select([errpipe], [], [], 0)[0]:
                    # it executed the job meanwhile: a running job, whose client check ends it
                    return self._spawn_failure(errpipe)
                if given_up or self.flags_stop():
                    self.trace("job process killed before it executed the job")
                    os.kill(pid, signal.SIGKILL)        # our child, not waited for yet
                    os.close(errpipe)
                    return given_up
                wait = client.CHECK_EVERY if interactive else None
                ready, _, _ = select.select([errpipe, rfd], [], [], wait)
                if errpipe in ready:
                    return self._spawn_failure(errpipe)
                _drain(rfd)
        finally:
            signal.set_wakeup_fd(-1)
            for fd in (rfd, wfd):
                os.close(fd)

    def _spawn_failure(self, errpipe):
        """How the job process failed before its job ran, or None. A shell the plan
        checks (``shell_check``: the job is run by it) that is not there is Grid
        Engine's "unable to find shell" (its shepherd stats the shell first), not a job
        that ran and exited 127; one that is there but cannot be executed (not
        executable, the job's environment too large) is the job's failure."""
        shell_check = self.plan.get("shell_check")
        failure = jobproc.read_spawn_failure(errpipe, strict=bool(self.plan.get("strict_exec") or shell_check))
        if failure and shell_check and failure["step"] == jobproc.STEP_EXEC \
                and failure["errno"] in (errno.ENOENT, errno.ENOTDIR):
            failure.update(code=jobproc.FAILED_SHELL, reason=f'unable to find shell "{failure["path"]}"')
            if shell_check == "queue":
                failure["queue"] = True
        return failure

    def _keep_file(self, name, text):
        """A file of the task's spool folder ($SGE_JOB_SPOOL_DIR) as Grid Engine's execd
        keeps one beside a job (``environment``: the job's NAME=value lines, those with
        a line break left out; ``exit_status``), readable by the job's owner alone."""
        if self.plan.get("result_dir"):
            return                          # (a task inside a parallel job: not its folder)
        path = os.path.join(self.dir, name)
        try:
            atomic_write(path, text, mode=0o600, fsync=False)
            if os.geteuid() == 0 and self.plan["uid"] != 0:
                os.chown(path, self.plan["uid"], self.plan["gid"])
        except (OSError, SpoolError) as exc:
            self.trace(f"cannot write {name}: {exc}")

    def _record_exit(self, status, rusage, left):
        """The job's exit and its usage: its own process's (``rusage``) and that of what
        it left running (``left``, ``leftovers.Usage``)."""
        res = self.result
        if os.WIFSIGNALED(status):
            res["signal"] = os.WTERMSIG(status)
            res["exit_status"] = 128 + res["signal"]
        else:
            res["exit_status"] = os.WEXITSTATUS(status)
        self._keep_file("exit_status", f"{res['exit_status']}\n")
        if self.killed_by:
            res["failed"] = FAILED_KILLED
            res["failed_reason"] = self.killed_by
        usage = res["usage"]
        utime, stime = rusage.ru_utime + left.ru_utime, rusage.ru_stime + left.ru_stime
        if left.cgroup_cpu is not None and sum(left.cgroup_cpu) > utime + stime:
            utime, stime = left.cgroup_cpu      # (children nobody waited for counted too)
        usage["ru_utime"] = utime + self.earlier_usage.get("ru_utime", 0.0)
        usage["ru_stime"] = stime + self.earlier_usage.get("ru_stime", 0.0)
        usage["ru_maxrss"] = int(max(rusage.ru_maxrss, left.ru_maxrss))
        for name in leftovers.Usage.FIELDS:
            usage[name] = int(getattr(rusage, name)) + int(getattr(left, name))

    # ------------------------------------------------------------ supervision
    def _supervise(self, pid):
        plan = self.plan
        start = time.time()
        lim = plan.get("limits") or {}
        timers = self.timers = meter.Timers(start, lim, plan.get("notify", 0))
        checkpoint = plan.get("checkpoint") or {}
        if checkpoint.get("interval"):
            timers.pending["checkpoint"] = start + float(checkpoint["interval"])
        if (plan.get("interactive") or {}).get("client"):
            timers.pending["client"] = start + client.CHECK_EVERY
        scratch = plan.get("scratch") or {}
        limit = plan.get("memory_limit") or {}
        group = self.cgroup if self.cgroup is not None and pid in self.cgroup.pids() else None
        if self.cgroup is not None and group is None:
            self.trace("the job is not in its memory cgroup: its memory is sampled")
        sampled = int(limit["mb"]) << 20 if limit.get("mb") and group is None else None
        monitor = meter.UsageMonitor(pid, plan["cwd"], scratch.get("measure"), sampled,
                                     often=group is not None and limit.get("mb"))
        oom = group.oom_events() if group is not None and limit.get("mb") else None
        pidfd = os.pidfd_open(pid)
        rfd, wfd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wfd)
        chld = signal.signal(signal.SIGCHLD, _woken)    # (an orphan of the job that ended wakes it)
        waited = [pidfd, rfd] + ([oom] if oom is not None else [])
        try:
            while True:
                leftovers.reap_others(pid, self.reaped)
                timeout = max(0.0, min(timers.next_due(), monitor.next_due()) - time.time())
                ready, _, _ = select.select(waited, [], [], timeout)
                if rfd in ready:
                    _drain(rfd)
                if oom is not None and oom in ready:
                    group.drain()
                self._handle_flags(pid)
                self._handle_timers(pid, timers)
                if group is not None and limit.get("mb"):
                    self._kernel_killed(pid, group, exited=pidfd in ready)
                if monitor.sample(self.result["usage"]) and not self.taken:
                    if monitor.over and not self.result.get("memory_exceeded"):
                        self._out_of_memory(pid, monitor.over)
                    if self.lock is None or self.plan.get("result_dir") or tasklife.still_mine(self.lock, self.dir):
                        jobstore.write_usage(self.dir, self.result["usage"])
                    else:
                        self.taken = True
                        self.trace("the task is no longer this shepherd's: its job is ended")
                        self._end(pid, "task taken away")
                # (looked for after every look at the flags: signals that keep coming never
                # keep a job that ended from being collected)
                done, status, rusage = os.wait4(pid, os.WNOHANG)
                if done:
                    monitor.sample(self.result["usage"], final=True)
                    if group is not None and limit.get("mb"):
                        self._kernel_killed(None, group, exited=True)
                    if group is not None:
                        group.kill_all()        # (what the job left running ends with it)
                    return status, rusage, self._end_leftovers()
        finally:
            signal.signal(signal.SIGCHLD, chld)
            signal.set_wakeup_fd(-1)
            for fd in (pidfd, rfd, wfd):
                os.close(fd)

    def _end_leftovers(self):
        """End what the job left running (``leftovers.end_all``); the usage of all its
        processes but its own: those ended now, those waited for while it ran, and,
        from its cgroup, the CPU time of those nobody waited for."""
        if self.tracker is not None and self.tracker.frozen:
            self.tracker.freeze(False)  # (ended while suspended: its epilog may run in it)
        left = leftovers.end_all(tracker=self.tracker)
        left.merge(self.reaped)
        self.reaped = leftovers.Usage()
        if left.stuck:
            leftovers.STRAYS.append(self.plan["job_id"])
            self.trace("some processes the job left could not be ended")
        now = self.tracker.cpu() if self.tracker is not None else None
        if now is not None and self.cpu_before is not None:
            left.cgroup_cpu = (now[0] - self.cpu_before[0], now[1] - self.cpu_before[1])
        return left

    def _kernel_killed(self, pid, group, exited=False):
        """The kernel killed a process of the job in its cgroup for going over its limit:
        the job is over (its other processes are killed, ``pid`` None when it ended),
        as when the sampling monitor sees it go over (``_out_of_memory``)."""
        if self.result.get("memory_exceeded") or not group.oom_kills():
            return
        self._out_of_memory(pid, group.peak() or int(self.plan["memory_limit"]["mb"]) << 20)
        if not exited:
            group.kill_all()

    def _handle_flags(self, pid):
        """Carry out the control signals that came since the last look, each once: the
        flags are taken as they are now (what comes meanwhile waits for the next look,
        after the job was looked for: ``_supervise``), a signal repeated in a row is
        carried out once, and a delete once per run (its terminate, or the -notify
        warning, was done: one told again changes nothing)."""
        batch, self.flags = self.flags, []
        for sig in _coalesced(batch):
            if sig == signal.SIGUSR1:
                if not self._warned(pid, signal.SIGUSR1, "notify_stop"):
                    procedure.suspend(self.plan, pid)
            elif sig == signal.SIGUSR2:
                if self.timers.pending.pop("notify_stop", None) is None:
                    procedure.resume(self.plan, pid)
            elif sig in (signal.SIGTERM, signal.SIGINT):
                if self.result["deleted"]:
                    continue                # (deleted already: being ended)
                self.result["deleted"] = True
                self._end(pid, "job deleted", removal=True)
            elif sig == signal.SIGQUIT:
                self._kill_now(pid)
            elif sig == ckpt.CHECKPOINT_NOW:
                self._send_checkpoint_signal(pid)
            elif sig == signal.SIGHUP:
                self.result["requeue"] = True
                if ckpt.migrates(self.plan) and ckpt.migrate(self.plan, pid):
                    self.killed_by = "job requeued"       # after its own checkpoint, if it lingers
                    self.timers.pending["notify_kill"] = time.time() + ckpt.SIGNAL_GRACE
                else:
                    self._end(pid, "job requeued")

    def _send_checkpoint_signal(self, pid):
        """condor_checkpoint, PERIODIC_CHECKPOINT: the job's checkpoint signal, when it asked
        for one, is not being ended, and answered the last one (HTCondor's starter sends
        no other meanwhile)."""
        wanted = self.plan.get("checkpoint_signal")
        if not wanted or self.checkpointing or self.killed_by:
            return
        jobproc.signal_job(pid, jobproc.signal_named(wanted["signal"], signal.SIGTERM))
        self.checkpointing = True
        self.trace(f"job sent its checkpoint signal ({wanted['signal']})")

    def _warned(self, pid, warning, event):
        """-notify: send the warning signal now and do the real thing ``notify`` seconds later."""
        notify = float(self.plan.get("notify") or 0)
        if not self.plan.get("notify_job") or notify <= 0:
            return False
        jobproc.signal_job(pid, warning)
        self.timers.pending[event] = time.time() + notify
        return True

    def _end(self, pid, why, removal=False):
        """End the job (qdel, requeue), after the -notify warning when one was asked for.
        An HTCondor job stopped (removed, held, vacated: its starter's graceful shutdown)
        that has a RemoveKillSig gets that signal at once instead (and SIGKILL
        ``kill_after`` seconds later); one whose plan has a ``stop_method`` (a scheduler
        universe job, which its schedd signals by the action) gets its RemoveKillSig only
        when removed, and that signal (its HoldKillSig; None: its KillSig) otherwise; one
        removed whose plan says it wants no graceful removal (``graceful`` false) gets
        SIGKILL at once."""
        self.killed_by = why
        if "notify_kill" in self.timers.pending:
            return
        self.timers.pending.pop("notify_stop", None)
        procedure.cont(pid)             # (a suspended job, its cgroup frozen, too)
        if removal and self.plan.get("graceful") is False:
            jobproc.signal_job(pid, signal.SIGKILL)
            return
        method = self.plan.get("remove_method")
        if not removal and "stop_method" in self.plan:
            method = self.plan["stop_method"]
        if method:
            jobproc.signal_job(pid, jobproc.signal_named(method, signal.SIGTERM))
            self._kill_later()
            return
        if not self._warned(pid, signal.SIGUSR2, "notify_kill"):
            procedure.terminate(self.plan, pid)
            self._kill_later()

    def _kill_now(self, pid):
        """Requeue the task, its job killed at once: no warning, no SIGCONT, no soft
        signal (HTCondor's Killing activity)."""
        self.result["requeue"] = True
        self.killed_by = "job killed"
        for event in ("notify_stop", "notify_kill"):
            self.timers.pending.pop(event, None)
        jobproc.signal_job(pid, signal.SIGKILL)

    def _out_of_memory(self, pid, used):
        """The job's processes went over its memory limit (``used``: their resident bytes):
        they are killed at once, as the kernel kills a cgroup's that goes over its
        limit, and the result's ``memory_exceeded`` says so (the daemon holds the job:
        ``condorjob.memory_hold``)."""
        self.result["memory_exceeded"] = dict(self.plan.get("memory_limit") or {}, used_mb=-(-used // (1 << 20)))
        self.killed_by = "memory limit exceeded"
        for event in ("notify_stop", "notify_kill"):
            self.timers.pending.pop(event, None)
        if pid is not None:
            jobproc.signal_job(pid, signal.SIGKILL)
        self.trace(f"job killed: its memory ({used} bytes) went over its limit")

    def _kill_later(self):
        """A job ended with a gentler signal (an HTCondor job's KillSig) gets SIGKILL
        when it has not ended ``kill_after`` seconds later (0: at once)."""
        after = self.plan.get("kill_after")
        if after is not None and "force_kill" not in self.timers.pending:
            self.timers.pending["force_kill"] = time.time() + float(after)

    def _terminate(self, pid, why):
        self.killed_by = why
        procedure.terminate(self.plan, pid)
        self._kill_later()

    def _check_client(self, pid, timers):
        """An interactive job whose client went away is ended: nobody reads its output
        nor writes its input any more."""
        if not client.gone(self.plan["interactive"]["client"]):
            timers.pending["client"] = time.time() + client.CHECK_EVERY
        elif not self.killed_by:
            self._end(pid, "the qrsh client went away")

    def _checkpoint(self, pid):
        """Periodic checkpoint (min_cpu_interval): the environment's command, else its signal."""
        checkpoint = self.plan.get("checkpoint") or {}
        if checkpoint.get("command"):
            procedure.run_method(self.plan, checkpoint["command"], pid)
        elif checkpoint.get("signal"):
            jobproc.signal_job(pid, jobproc.signal_named(checkpoint["signal"], signal.SIGUSR1))
        self.timers.pending["checkpoint"] = time.time() + float(checkpoint["interval"])

    def _handle_timers(self, pid, timers):
        for event in timers.due(time.time()):
            if event == "s_rt":
                jobproc.signal_job(pid, signal.SIGUSR1)
            elif event == "notify_stop":
                procedure.suspend(self.plan, pid)
            elif event == "notify_kill":
                procedure.terminate(self.plan, pid)
                self._kill_later()
            elif event == "checkpoint":
                self._checkpoint(pid)
            elif event == "force_kill":
                jobproc.signal_job(pid, signal.SIGKILL)
            elif event == "client":
                self._check_client(pid, timers)
            elif event in ("h_rt", "kill"):
                self._terminate(pid, "wallclock limit (h_rt) exceeded" if event == "h_rt" else "killed")
                self.killed_by = "h_rt limit exceeded" if event == "h_rt" else self.killed_by


def _coalesced(flags):
    """The control signals ``flags`` in the order they came, a signal repeated in a row
    (another look of the daemon's at the same wish) taken once, and a delete (SIGTERM,
    SIGINT) once in all."""
    ends = (signal.SIGTERM, signal.SIGINT)
    taken = []
    for sig in flags:
        if (taken and taken[-1] == sig) or (sig in ends and any(s in ends for s in taken)):
            continue
        taken.append(sig)
    return taken


def _handshake_failed(interactive, started):
    """The failure (as ``jobproc.read_spawn_failure`` gives one) when an interactive job
    whose process started waiting for its client's FIFOs at ``started`` is to be given
    up, else None."""
    who = interactive.get("client")
    limit = float(interactive.get("handshake_timeout") or client.HANDSHAKE_TIMEOUT)
    if client.gone(who):
        reason = f"the qrsh client (pid {who['pid']}) went away"
    elif time.time() - started >= limit:
        reason = f"the qrsh client did not take the job's input and output within {limit:g} s"
    else:
        return None
    return {"code": jobproc.FAILED_BEFORE_JOB, "reason": reason, "step": "", "path": "", "errno": 0}


def procedure_failure(which, status, owner=False):
    """What a prolog, epilog or PE procedure failing with ``status`` means. As in
    Grid Engine, 99 requeues the job and 100 puts it into the error state. Any other
    status of a procedure that ran as the job owner with the job's environment (which
    the job's owner chooses, and so its exit status) puts the job into the error
    state; of one that ran with a clean environment (as root, say), Grid Engine's
    rule: the queue goes into the error state and the job is requeued (except
    after pe_stop, when the job has ended)."""
    if status == 99:        # (with the rest a job's own exit 99 gets: not again at once, for ever)
        return {"requeue": True, "rest": True}
    if status == 100:
        return {"error_state": True}
    if owner:
        return {"error_state": True, "error_reason": f"{which} failed with exit status {status}"}
    return {"queue_error": f"{which} failed with exit status {status}", "requeue": which != "pe_stop"}


def _drain(fd):
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


#: the folder of a task that keeps an HTCondor job's self-checkpoints (exec.transfer)
SELF_CHECKPOINT = "self_checkpoint"


def reusable(plan):
    """True when this process may serve another task after ``plan``'s: nothing of the
    task changed it for good (a job started directly takes the shepherd's nice value),
    and no job of it left processes that could not be ended (``leftovers.STRAYS``)."""
    return not plan.get("nice") and not leftovers.STRAYS


def _woken(_signum, _frame):
    """SIGCHLD while a job runs: the wake-up descriptor has its byte; nothing else."""


def main(plan, task_dir, reuse=False):
    """Run a plan to the end in this process; returns the process exit code.

    The control signals are held back until the task's lock carries this process's
    record, and from before that lock is let go (``reuse``: until the next task's
    record): a signal the daemon sent for an earlier task of a shepherd that serves
    one after another (see ``exec.launch``) is dropped, never taken for the next
    task's. The daemon signals a task only while it holds the task's control lock and
    finds the shepherd's lock held (``daemon.dispatch``); a shepherd lets go of its
    task only while holding that control lock."""
    signal.pthread_sigmask(signal.SIG_BLOCK, tasklife.CONTROL)
    shepherd = Shepherd(plan, task_dir, reuse)
    shepherd._install_handlers()
    tasklife.drop_pending()
    lock = tasklife.take_lock(task_dir)
    if lock is None:
        return 1                        # (its parent leaves an obituary: the daemon looks at once)
    if not tasklife.current(plan, task_dir):
        lock.release()
        return 0
    tasklife.write_pid(lock)
    shepherd.lock = lock
    signal.pthread_sigmask(signal.SIG_UNBLOCK, tasklife.CONTROL)
    if not plan.get("result_dir"):
        jobstore.reserve_result(plan["job_id"], plan["task"])
    shepherd.trace("shepherd started")
    try:
        result = shepherd.run()
    except Exception as exc:  # noqa: BLE001 - report any failure as the task's result
        result = dict(shepherd.result, failed=18, failed_reason=f"shepherd error: {exc}",
                      exit_status=1, end_time=time.time())
    if not plan.get("result_dir") and (shepherd.taken or not tasklife.still_mine(lock, task_dir)):
        shepherd.close_trace()
        lock.release()                  # another run's folder now: nothing of this one goes there
        return 0
    shepherd.trace("writing result")
    shepherd.close_trace()
    if plan.get("result_dir"):          # a task started inside a parallel job (qrsh -inherit)
        from gridtools.formats import spoolyaml
        # (the qrsh -inherit client, run by the job's owner, reads it too)
        atomic_write(os.path.join(plan["result_dir"], jobstore.RESULT_FILE), spoolyaml.dump(result),
                     mode=jobstore.RESULT_MODE, reader=plan["uid"])
        tasklife.let_go(lock, task_dir, reuse)
        wake.poke()
    else:
        tasklife.deliver(plan, task_dir, result)     # the daemon is woken as soon as the result is in place
        tasklife.let_go(lock, task_dir, reuse)
    return 0


