#!/usr/bin/env python3
"""Kill the dispatcher at random moments over a stream of jobs, then prove that nothing
was lost, run twice or accounted twice, that no deleted job ran, and that every
``qsub -sync y``, bulk ``qdel`` and ``qrls`` returned with what it had done.

    python bench/crash_harness.py [--kills 10000] [--jobs 2000] [--seed 7] [--keep]

The daemon runs as a child of this harness (forked from it with everything
imported, so a restart costs what the daemon's own start-up costs, not an
interpreter's). Each life of the daemon is ended by SIGKILL: most often by
itself, at a crash point armed at random (``GRIDTOOLS_CRASH_AT``: intake,
pass, start, reap, publish, journal, answer, startup, the n-th time it gets
there), else by the harness at a random moment. Meanwhile jobs are submitted
through qsub's own code (in this process, to keep the pace), and a few real
``qsub -sync y`` clients wait for theirs. Now and then BULK held jobs are
submitted and one real ``qdel`` deletes them all, or one real ``qrls``
releases them (a bulk request, recorded in the dispatcher's journal); a life
armed for the journal's crash point begins with one. Shepherds are never
killed: they outlive each daemon.

After the last kill a daemon runs undisturbed until every job ended, then the
invariants are checked from the jobs' own output files, the accounting file,
the job spool and what the clients printed: a job qdel said it deleted never
ran and has no record; a job qrls released ran once. Exit status 0 when all
hold; the report says what did not.
"""

import argparse
import collections
import contextlib
import ctypes
import io
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(REPO, "bin")
PHASES = ("intake", "pass", "pass", "start", "start", "reap", "reap", "publish", "publish", "startup",
          "journal", "answer")
#: what a client says when it withdrew its request unanswered
WITHDRAWN = "the request was withdrawn, nothing was done"
BULK = 40                 # jobs of one bulk qdel or qrls (the dispatcher journals 32 or more)
# a bulk client: the command ($0) of the jobs, its output in $1; started again while it finds
# no dispatcher running (it then sent nothing)
BULK_CLIENT = ('out=$1; shift; while :; do "$0" "$@" > "$out" 2> "$out.err"; code=$?; '
               'grep -q "is not running" "$out.err" || exit $code; sleep 0.01; done')
LIFE_MAX = 0.08           # most seconds a daemon life lasts before the harness kills it
ARMED_LIFE_MAX = 0.2      # the same for a life with a crash point armed, counted from the end
                          # of its start-up (a loaded machine can spend longer than that in it)
COVER_LIVES = 30          # most lives added to reach the phases not reached yet
COVER_LIFE_MAX = 3.0      # the same once enough kills were made, for a phase not reached yet
START_UP_MAX = 30.0       # most seconds an armed life may take to start up
FINISH_WAIT = 120.0       # seconds the last daemon has to finish every job
PR_SET_CHILD_SUBREAPER = 36


def make_cell(slots):
    """A scratch cell tuned for many restarts: no load alarm, few finished jobs kept."""
    root = tempfile.mkdtemp(prefix="gtcrash-", dir="/tmp")
    os.chmod(root, 0o755)
    env = dict(os.environ, GRIDTOOLS_ROOT=root, GRIDTOOLS_HOST="crashhost", GRIDTOOLS_NO_AUTOSTART="1",
               PATH=os.pathsep.join([BIN, os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
    subprocess.run(["gridtools", "init", "--slots", str(slots), "--host", "crashhost"], env=env,
                   check=True, capture_output=True, cwd="/")
    _edit(os.path.join(root, "etc", "queues", "all.q"), "np_load_avg=1.75", "NONE")
    _edit(os.path.join(root, "etc", "conf", "global"), None, None, ("finished_jobs", "20"))
    return root, env


def _edit(path, old, new, attr=None):
    with open(path) as fh:
        text = fh.read()
    if old is not None:
        text = text.replace(old, new)
    if attr is not None:
        lines = [line for line in text.splitlines() if line.split()[:1] != [attr[0]]]
        text = "\n".join(lines + [f"{attr[0]} {attr[1]}"]) + "\n"
    with open(path, "w") as fh:
        fh.write(text)


class Job:
    """What the harness expects of one submitted job."""

    def __init__(self, jid, tasks, status, sync=None):
        self.id = jid
        self.tasks = tasks
        self.status = status
        self.sync = sync           # pid of its qsub -sync y client, if any


class Harness:
    def __init__(self, kills, jobs, syncs, seed, slots=4):
        self.rand = random.Random(seed)
        self.want_kills = kills
        self.want_jobs = jobs
        self.want_syncs = syncs
        self.root, self.env = make_cell(slots)
        self.work = os.path.join(self.root, "work")
        os.makedirs(self.work)
        os.chmod(self.work, 0o777)
        self.log = os.path.join(self.work, "ran.log")
        self.jobs = {}
        self.daemon = 0
        self.life_end = 0.0
        self.kills = {"crash point": 0, "harness": 0}
        self.lives = 0
        self.covered_from = None    # lives lived when enough kills were made
        self.armed = ""             # the phase armed in the current life
        self.starting = False       # the current armed life has not completed its start-up
        self.phases = collections.Counter()   # phase -> kills at its crash points
        self.killing = False        # the harness sent the current daemon SIGKILL
        self.timed_out = False
        self.kill_time = 0.0
        self.syncs = {}             # client pid -> (job placeholder, stdout path, stderr path)
        self.sync_status = {}       # client pid -> wait status
        self.sync_jobs = []         # Job objects waited for by clients, in start order
        self.want_bulks = max(2, kills // 40)
        self.bulks = {}             # client pid -> (qdel or qrls, job ids, stdout path)
        self.bulk_status = {}       # client pid -> wait status
        self.deleted = set()        # ids of the jobs given to a bulk qdel
        self.gave_up = 0            # bulk clients that stopped waiting for their answer
        self.withdrawn_problems = {}  # bulk client pid -> what its withdrawn request changed
        self.left = []              # what was left unfinished when the last daemon timed out

    # ------------------------------------------------------------ the daemon
    def _fork_daemon(self, crash_spec):
        from gridtools.daemon import crash
        from gridtools.daemon.loop import main as daemon_main
        out = os.open(os.path.join(self.root, "spool", "daemon.out"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.setsid()
                os.dup2(out, 1)
                os.dup2(out, 2)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                os.closerange(3, 65536)
                for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
                    signal.signal(sig, signal.SIG_DFL)
                crash.arm(crash_spec)
                code = daemon_main()
            finally:
                os._exit(code)
        os.close(out)
        return pid

    def _new_life(self, armed=True):
        """Fork a daemon: most lives with a crash point armed (and a longer limit, to
        reach it), the others to be killed by the harness at a random moment."""
        spec, limit = "", self.rand.uniform(0.002, LIFE_MAX)
        missing = self._missing_phases() if self._enough_kills() else []
        if armed and (missing or self.rand.random() < 0.75):
            phase = self.rand.choice(missing or PHASES)
            spec, limit = f"{phase}:{self.rand.randint(1, 2)}", START_UP_MAX
            if phase == "journal" and not self._bulk_waits():
                self._bulk()
        self.daemon = self._fork_daemon(spec)
        self.armed = spec.partition(":")[0]
        self.starting = bool(spec)          # ARMED_LIFE_MAX runs once its start-up is complete
        self.life_end = time.time() + (limit if armed else 1e12)
        self.lives += 1

    def _started(self):
        """True once the current daemon completed its start-up (it wrote its pid)."""
        try:
            with open(os.path.join(self.root, "spool", "daemon.pid")) as fh:
                return fh.read().strip() == str(self.daemon)
        except OSError:
            return False

    def _reap(self):
        """waitpid every ended child (this harness is the subreaper of shepherds and jobs)."""
        from gridtools.exec.launch import ended_children
        for pid, status in ended_children():
            if pid == self.daemon:
                self.daemon = 0
                if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
                    if self.killing:
                        self.kills["harness"] += 1
                    else:
                        self.kills["crash point"] += 1
                        self.phases[self.armed] += 1
                self.killing = False
            elif pid in self.syncs:
                self.sync_status[pid] = status
            elif pid in self.bulks:
                self.bulk_status[pid] = status

    # ------------------------------------------------------------ the jobs
    def _submit(self, sync=False, held=False):
        """Submit a job (``held``: with a user hold, never an array); returns its id."""
        jid_hint = len(self.jobs) + len(self.sync_jobs)
        status = self.rand.choice((0, 0, 0, 1, 3, 42))
        array = not sync and not held and self.rand.random() < 0.15
        sleep = self.rand.choice(("0", "0", "0.05", "0.2"))
        argv = ["-b", "y", "-o", os.path.join(self.work, "$JOB_ID.$TASK_ID.out"), "-j", "y"]
        if array:
            argv += ["-t", f"1-{self.rand.randint(2, 6)}"]
        if held:
            argv.insert(0, "-h")
        argv += ["sh", "-c", f"'echo $JOB_ID.$SGE_TASK_ID >> {self.log}; echo ran; sleep {sleep}; exit {status}'"]
        if sync:
            return self._sync_client(argv, status, jid_hint)
        from gridtools.cli.sge import qsub
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = qsub.main(["-terse"] + argv)
        if code != 0:
            raise RuntimeError(f"qsub failed ({code}): {out.getvalue()}")
        jid = int(out.getvalue().split(".")[0])
        tasks = list(range(1, int(argv[argv.index("-t") + 1].split("-")[1]) + 1)) if array else [1]
        self.jobs[jid] = Job(jid, tasks, status)
        return jid

    def _bulk(self):
        """Submit BULK held jobs and start one qdel of them all, or one qrls, in turn."""
        command = ("qdel", "qrls")[len(self.bulks) % 2]
        ids = [self._submit(held=True) for _ in range(BULK)]
        if command == "qdel":
            for jid in ids:
                del self.jobs[jid]
            self.deleted.update(ids)
        out = os.path.join(self.work, f"bulk{len(self.bulks)}.out")
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)]
        pid = os.posix_spawn("/bin/sh", ["sh", "-c", BULK_CLIENT, command, out] + [str(j) for j in ids],
                             self.env, file_actions=actions)
        self.bulks[pid] = (command, ids, out)

    def _bulk_waits(self):
        return len(self.bulk_status) < len(self.bulks)

    def _sync_client(self, argv, status, hint):
        out = os.path.join(self.work, f"sync{hint}.out")
        err = os.path.join(self.work, f"sync{hint}.err")
        actions = [(os.POSIX_SPAWN_OPEN, 1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
                   (os.POSIX_SPAWN_OPEN, 2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
                   (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)]
        qsub = shutil.which("qsub", path=self.env["PATH"])
        pid = os.posix_spawn(qsub, ["qsub", "-sync", "y"] + argv, self.env, file_actions=actions)
        job = Job(None, None, status, sync=pid)
        self.syncs[pid] = (job, out, err)
        self.sync_jobs.append(job)

    # ------------------------------------------------------------ the run
    def run(self):
        """Kill daemons until enough kills were made, then finish; returns the problems found."""
        os.environ.update(GRIDTOOLS_ROOT=self.root, GRIDTOOLS_HOST="crashhost", GRIDTOOLS_NO_AUTOSTART="1")
        os.chdir(self.work)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        try:
            return self._run()
        finally:
            libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)

    def _run(self):
        from gridtools.daemon import loop  # noqa: F401 - imported once, before the forks
        began = time.time()
        sync_at = sorted(self.rand.sample(range(self.want_kills), min(self.want_syncs, self.want_kills)))
        bulk_at = sorted(self.rand.sample(range(self.want_kills), min(self.want_bulks, self.want_kills)))
        while not self._enough_kills() or self._cover_more():
            self._reap()
            done = sum(self.kills.values())
            if not self.daemon:
                self._new_life()
            elif self.starting and self._started():
                self.starting = False
                # A life armed for a phase no kill has reached yet waits longer
                # for it: on a loaded machine a pass may take longer than usual.
                wait = COVER_LIFE_MAX if self._enough_kills() else ARMED_LIFE_MAX
                self.life_end = time.time() + wait
            elif time.time() >= self.life_end and not self.killing:
                self.killing = True
                os.kill(self.daemon, signal.SIGKILL)
            while len(self.jobs) < self.want_jobs * (done + 1) / self.want_kills:
                self._submit()
            while sync_at and sync_at[0] <= done:
                sync_at.pop(0)
                self._submit(sync=True)
            while bulk_at and bulk_at[0] <= done:
                bulk_at.pop(0)
                self._bulk()
            time.sleep(0.001)
        self.kill_time = time.time() - began
        return self._finish()

    def _enough_kills(self):
        return sum(self.kills.values()) >= self.want_kills

    def _cover_more(self):
        """After enough kills: go on, for at most COVER_LIVES lives, while a phase's
        crash points were never reached."""
        if self.covered_from is None:
            self.covered_from = self.lives
        return bool(self._missing_phases()) and self.lives - self.covered_from < COVER_LIVES

    def _missing_phases(self):
        """The phases whose crash points no kill has reached yet."""
        return sorted(set(PHASES) - set(self.phases))

    def _finish(self):
        """The last daemon runs undisturbed until every job and every -sync client ended."""
        if self.daemon:
            self.killing = True
            os.kill(self.daemon, signal.SIGKILL)
        while self.daemon:
            self._reap()
            time.sleep(0.005)
        self._new_life(armed=False)
        self._redo_withdrawn()
        end = time.time() + FINISH_WAIT
        while time.time() < end and not (self._all_ended() and len(self.sync_status) == len(self.syncs)
                                         and not self._bulk_waits()):
            self._reap()
            time.sleep(0.05)
        self.timed_out = time.time() >= end
        if self.timed_out:          # (looked at while the last daemon still runs)
            self.left = self._leftovers()
        os.kill(self.daemon, signal.SIGTERM)
        while self.daemon:
            self._reap()
            time.sleep(0.01)
        return self.check()

    def _redo_withdrawn(self):
        """A bulk client whose dispatcher stayed down longer than a client waits for one to
        come back (a busy machine) withdrew its request and said nothing was done: its
        jobs must still wait with their holds, even after the dispatcher replayed its
        journal. Checked once the last daemon started; then the command is run again,
        undisturbed, so that the jobs end."""
        end = time.time() + FINISH_WAIT
        while time.time() < end and not (self._started() and all(pid in self.bulk_status for pid in self.bulks)):
            self._reap()
            time.sleep(0.01)
        for pid, (command, ids, out) in self.bulks.items():
            if pid not in self.bulk_status or WITHDRAWN not in open(out + ".err").read():
                continue
            touched = [jid for jid in ids if not _still_held(jid)]
            if touched:
                self.withdrawn_problems[pid] = [f"{command} of jobs {ids[0]}-{ids[-1]} said nothing was "
                                                f"done, yet jobs {touched[:3]} changed"]
            subprocess.run([command] + [str(jid) for jid in ids], env=self.env, capture_output=True)

    def _all_ended(self):
        from gridtools.spool import jobs as jobstore
        for jid in list(self.jobs) + [j.id for j in self.sync_jobs if j.id] + sorted(self.deleted):
            state = jobstore.read_state(jid) if os.path.isdir(jobstore.job_dir(jid)) else None
            if os.path.isdir(jobstore.job_dir(jid)) and not _finished(state):
                return False
        if _queued_requests(self.root):
            return False
        return True

    # ------------------------------------------------------------ what was left
    def _leftovers(self):
        """Lines that say what keeps the last daemon from finishing: every job in the
        spool (or expected) that did not finish, with what its files say and whether
        its shepherd lives, the messages that name it; every qsub -sync y client still
        waiting and on what; the requests not answered, the journal, the daemon."""
        from gridtools.spool import jobs as jobstore
        lines = [f"daemon pid {self.daemon} ({'started' if self._started() else 'not started'}), "
                 f"{self.lives} lives, armed {self.armed or 'nothing'} in its life"]
        messages = _read_lines(os.path.join(self.root, "spool", "messages"))
        expected = set(self.jobs) | {j.id for j in self.sync_jobs if j.id} | self.deleted
        unfinished = []
        for jid in sorted(expected | set(jobstore.list_ids())):
            if not os.path.isdir(jobstore.job_dir(jid)):
                continue
            try:
                state = jobstore.read_state(jid)
            except Exception as exc:  # noqa: BLE001 - a state file that cannot be read is a finding
                state = {"unreadable": repr(exc)}
            if not _finished(state):
                unfinished.append(jid)
                lines += _describe_job(jid, state, messages, jid in self.deleted)
        claims = _id_claims(self.root)
        waiting = [pid for pid in self.syncs if pid not in self.sync_status]
        for pid in waiting:
            _job, out, err = self.syncs[pid]
            jid = _sync_job_id(out)
            if jid is None:
                what = "no job id printed yet (still submitting)"
            else:
                where = "unfinished, above" if jid in unfinished else \
                    "finished" if os.path.isdir(jobstore.job_dir(jid)) else "gone from the spool"
                what = f"job {jid} ({where}; its id claim {'is left' if jid in claims else 'is gone'})"
            requests = [n for n in _queued_requests(self.root) if f"-{pid}." in n]
            lines.append(f"qsub -sync y pid {pid} still waits on {what}; alive: {_alive(pid)}; "
                         f"its requests in the spool: {requests or 'none'}; "
                         f"stderr: {_read_text(err)[-300:]!r}")
        for pid, (command, ids, _out) in self.bulks.items():
            if pid not in self.bulk_status:
                lines.append(f"{command} pid {pid} of jobs {ids[0]}-{ids[-1]} still waits; "
                             f"stderr: {_read_text(_out + '.err')[-300:]!r}")
        left = _queued_requests(self.root)
        if left:
            lines.append(f"requests not answered: {left[:10]}")
        if os.path.exists(os.path.join(self.root, "spool", "journal")):
            lines.append("the journal is there")
        if claims:
            lines.append(f"job id claims: {claims[:20]}")
        if not unfinished and not waiting:
            lines.append("no job unfinished and no -sync client waiting (a bulk client or a request)")
        lines.append("last daemon messages: " + " | ".join(messages[-8:]))
        return lines

    # ------------------------------------------------------------ the invariants
    def check(self):
        """Problems found (an empty list when every invariant holds)."""
        problems = []
        self._read_syncs(problems)
        self._read_bulks(problems)
        expected = {}
        for job in list(self.jobs.values()) + [j for j in self.sync_jobs if j.id]:
            for task in job.tasks:
                expected[(job.id, task)] = job.status
        ran = collections.Counter()
        with open(self.log) as fh:
            for line in fh:
                jid, _, task = line.strip().partition(".")
                ran[(int(jid), int(task) if task.isdigit() else 1)] += 1
        accounted = collections.defaultdict(list)
        for rec in _accounting(self.root):
            accounted[(int(rec[5]), int(rec[35]) or 1)].append(rec)
        for key, status in sorted(expected.items()):
            label = f"{key[0]}.{key[1]}"
            if ran[key] != 1:
                problems.append(f"task {label} ran {ran[key]} times")
            outputs = _output_lines(self.work, key)
            if outputs != 1:
                problems.append(f"task {label} wrote its output {outputs} times")
            recs = accounted.get(key, [])
            if len(recs) != 1:
                problems.append(f"task {label} accounted {len(recs)} times")
            elif (int(recs[0][11]), int(recs[0][12])) != (0, status):
                problems.append(f"task {label} accounted as failed {recs[0][11]} exit {recs[0][12]}, "
                                f"expected exit {status}")
        for key in set(ran) - set(expected):
            problems.append(f"{'deleted' if key[0] in self.deleted else 'unknown'} task {key} ran")
        for rec in _accounting(self.root):
            if int(rec[5]) in self.deleted:
                problems.append(f"deleted job {rec[5]} was accounted")
        problems.extend(self._spool_problems())
        return problems

    def _read_syncs(self, problems):
        for pid, (job, out, err) in self.syncs.items():
            status = self.sync_status.get(pid)
            text = open(out).read()
            words = text.split()
            if len(words) >= 3 and words[2].isdigit():
                job.id = int(words[2])
                job.tasks = [1]
            if status is None:
                problems.append(f"qsub -sync y (pid {pid}) did not return")
            elif not os.WIFEXITED(status) or os.WEXITSTATUS(status) != job.status:
                problems.append(f"qsub -sync y of job {job.id} ended with {status}, expected exit {job.status}: "
                                f"{open(err).read().strip()}")
            elif f"Job {job.id} exited with exit code {job.status}." not in \
                    open(out if job.status == 0 else err).read():       # 0 on stdout, others on stderr
                problems.append(f"qsub -sync y of job {job.id} did not report its exit code")

    def _read_bulks(self, problems):
        """Each bulk qdel and qrls returned 0 and said, for each of its jobs in order, that
        it deleted it or changed its hold; or it gave up waiting for an answer (while
        the dispatcher is killed over and over on a busy machine, its 60 seconds can
        pass): then its request is applied later all the same, which the jobs' own
        invariants check."""
        for pid, (command, ids, out) in self.bulks.items():
            status = self.bulk_status.get(pid)
            said, err = open(out).read().splitlines(), open(out + ".err").read()
            if not said and "no answer from the gridtools daemon" in err:
                self.gave_up += 1
                continue
            if not said and WITHDRAWN in err:
                self.gave_up += 1
                problems.extend(self.withdrawn_problems.get(pid, ()))
                continue
            if command == "qdel":
                want = [f"root has deleted job {jid}" for jid in ids]
            else:
                want = [f"modified hold of job {jid}" for jid in ids]
            if status is None:
                problems.append(f"{command} of jobs {ids[0]}-{ids[-1]} (pid {pid}) did not return")
            elif not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0 or said != want:
                wrong = [line for line in said if line not in want] + [line for line in want if line not in said]
                problems.append(f"{command} of jobs {ids[0]}-{ids[-1]} ended with {status}: {wrong[:3]} "
                                f"{open(out + '.err').read().strip()}")

    def _spool_problems(self):
        from gridtools.spool import jobs as jobstore
        found = []
        for jid in jobstore.list_ids():
            if not _finished(jobstore.read_state(jid)):
                found.append(f"job {jid} did not finish: {jobstore.read_state(jid)}")
        quarantine = os.path.join(self.root, "spool", "quarantine")
        if os.path.exists(quarantine):
            found.append(f"the spool has quarantined objects: {os.listdir(quarantine)}")
        left = _queued_requests(self.root)
        if left:
            found.append(f"requests left in the spool: {left[:5]}")
        claims = _id_claims(self.root)
        if claims:          # (every submit was answered: a claim left keeps a -sync y client waiting)
            found.append(f"{len(claims)} job id claims left in the spool, of jobs {claims[:10]}")
        if os.path.exists(os.path.join(self.root, "spool", "journal")):
            found.append("the journal was left behind by the last dispatcher")
        return found

    def report(self, problems):
        total = sum(self.kills.values())
        lines = [f"{total} kills of the dispatcher in {self.kill_time:.1f} s "
                 f"({self.kills['crash point']} at crash points, {self.kills['harness']} by the harness), "
                 f"{self.lives} daemon lives; crash points: "
                 + ", ".join(f"{phase} {n}" for phase, n in sorted(self.phases.items())),
                 f"{len(self.jobs) + len(self.sync_jobs)} jobs ({len(self.sync_jobs)} with qsub -sync y), "
                 f"{sum(len(j.tasks or ()) for j in self.jobs.values())} tasks without -sync, "
                 f"{len(self.bulks)} bulk qdel/qrls of {BULK} jobs each"
                 + (f" ({self.gave_up} gave up waiting for their answer)" if self.gave_up else "")]
        if self.timed_out:
            lines.append(f"the last daemon did not finish every job in {FINISH_WAIT:g} s; left then:")
            lines += ["  " + line for line in self.left] or ["  (nothing found unfinished)"]
        lines += problems or ["0 lost, 0 run twice, 0 accounted twice, 0 deleted ran, every -sync y, "
                              "qdel and qrls returned"]
        return "\n".join(lines)

    def cleanup(self):
        _kill_cell(self.root)
        shutil.rmtree(self.root, ignore_errors=True)


def _queued_requests(root):
    """The requests not answered yet: waiting in the cell's queue, or taken by a dispatcher
    (hidden files are half-written leftovers the dispatcher sweeps later)."""
    spool = os.path.join(root, "spool")
    return [n for folder in ("taken", "requests") if os.path.isdir(os.path.join(spool, folder))
            for n in os.listdir(os.path.join(spool, folder)) if not n.startswith(".")]


def _read_text(path):
    try:
        with open(path, errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _read_lines(path):
    return _read_text(path).splitlines()


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):      # (a zombie: ended, not waited for yet)
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] != "Z"
    return True


def _sync_job_id(out):
    """The job id a qsub -sync y client printed ("Your job N (...) has been submitted")."""
    words = _read_text(out).split()
    return int(words[2]) if len(words) >= 3 and words[2].isdigit() else None


def _describe_job(jid, state, messages, deleted):
    """What the spool says of an unfinished job: its state, the files of its folder and of
    each task's, its shepherd's lock (held or not, its pid alive or not), the lines of the
    daemon's messages that name it."""
    from gridtools.exec import tasklock
    from gridtools.spool import jobs as jobstore
    from gridtools.spool.files import is_locked
    folder = jobstore.job_dir(jid)
    state = state or {}
    lines = [f"job {jid}{' (given to qdel)' if deleted else ''}: hold {state.get('hold')!r}, "
             f"deleted {state.get('deleted')!r}, files {sorted(os.listdir(folder))}"
             + (f", state unreadable: {state['unreadable']}" if "unreadable" in state else "")]
    tasks = state.get("tasks") or {}
    numbers = sorted({str(n) for n in tasks if str(n).isdigit()} | {n for n in os.listdir(folder) if n.isdigit()},
                     key=int)
    for number in numbers:
        task = tasks.get(number) or {}
        tdir = jobstore.task_dir(jid, int(number))
        desc = f"  task {jid}.{number}: state {task.get('state')!r}"
        desc += "".join(f", {key} {task[key]!r}" for key in ("host", "start_time", "end_time", "exit_status",
                                                             "restarted", "deleting") if task.get(key) is not None)
        if os.path.isdir(tdir):
            record = tasklock.read_lock(tdir)
            held = is_locked(os.path.join(tdir, jobstore.SHEPHERD_LOCK))
            desc += (f"; folder {sorted(os.listdir(tdir))}; shepherd lock {'held' if held else 'free'}"
                     + (f", shepherd pid {record.pid} alive {_alive(record.pid)}" if record else
                        ", no shepherd record"))
            try:
                result = jobstore.read_result(jid, int(number))
            except Exception as exc:  # noqa: BLE001
                result = f"unreadable: {exc!r}"
            if result is not None:
                desc += f"; result {result!r}"[:400]
        else:
            desc += "; no task folder"
        lines.append(desc)
    named = [line for line in messages if _names_job(line, jid)]
    lines += [f"  message: {line}" for line in named[-10:]]
    return ["  " + line if i else line for i, line in enumerate(lines)]


def _names_job(line, jid):
    """True when a line of the messages (after its time stamp) names job ``jid``, alone or
    as ``jid.task`` (not a pid, nor a part of another number)."""
    import re
    text = line.split("|", 1)[-1]
    return re.search(rf"(?<![\w.])(?<!pid ){jid}(?:\.\d+)?(?![\w])", text) is not None


def _id_claims(root):
    """The job ids claimed in the spool (a claim goes once its job is stored and on disk)."""
    try:
        return sorted(int(n) for n in os.listdir(os.path.join(root, "spool", "jobids")) if n.isdigit())
    except OSError:
        return []


def _still_held(jid):
    """True when job ``jid`` is in the spool, user-held, and none of its tasks started."""
    from gridtools.spool import jobs as jobstore
    state = jobstore.read_state(jid) if os.path.isdir(jobstore.job_dir(jid)) else None
    if state is None:
        return os.path.isdir(jobstore.job_dir(jid))     # (no state yet: only arrived)
    return "u" in (state.get("hold") or "") and not state.get("deleted") and \
        all(task.get("state") == "pending" for task in (state.get("tasks") or {}).values())


def _finished(state):
    tasks = (state or {}).get("tasks") or {}
    return bool(tasks) and all(t.get("state") == "finished" for t in tasks.values())


def _accounting(root):
    path = os.path.join(root, "spool", "accounting")
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        return [line.rstrip("\n").split(":") for line in fh if not line.startswith("#")]


def _output_lines(work, key):
    jid, task = key
    # (a job that is no array keeps "$TASK_ID" in its output path, as Grid Engine's execd does)
    for name in (f"{jid}.{task}.out", f"{jid}.$TASK_ID.out"):
        path = os.path.join(work, name)
        if os.path.exists(path):
            with open(path) as fh:
                return fh.read().count("ran\n")
    return 0


def _kill_cell(root):
    import psutil
    for proc in psutil.process_iter(["pid", "environ"]):
        try:
            if (proc.info.get("environ") or {}).get("GRIDTOOLS_ROOT") == root and proc.pid != os.getpid():
                proc.kill()
        except (psutil.Error, OSError):
            continue


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10000)
    parser.add_argument("--jobs", type=int, default=None, help="jobs to submit (default: kills / 5)")
    parser.add_argument("--syncs", type=int, default=20, help="qsub -sync y clients")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the cell for inspection")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.join(REPO, "src"))
    harness = Harness(args.kills, args.jobs or max(20, args.kills // 5), args.syncs, args.seed)
    try:
        problems = harness.run()
        print(harness.report(problems))
    finally:
        if not args.keep:
            harness.cleanup()
        else:
            print(f"cell kept in {harness.root}")
    return 1 if problems or harness.timed_out else 0


if __name__ == "__main__":
    sys.exit(main())
