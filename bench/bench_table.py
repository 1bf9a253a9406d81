#!/usr/bin/env python3
"""The performance table: gridtools beside Grid Engine and task-spooler, in one run.

    python bench/bench_table.py [--quick] [--reps N] [--bin DIR] [--only NAMES] [--json FILE]

Every row is measured for each system in turn (interleaved, so that a busy
spell of a shared machine touches all of them alike), and the table gives the
median of the repetitions, the ratio of gridtools to each other system and
the target. The systems:

- gridtools: a scratch cell with 2 slots and no load threshold, commands
  from ``--bin`` (default: the checkout's bin/; give a venv's bin/ to measure
  an installed copy)
- Son of Grid Engine, when ``$SGE_BIN/qsub`` exists (default
  /usr/lib/gridengine) and ``SGE_ROOT`` names a running cell with a queue
  ``all.q`` of 2 slots
- task-spooler, when ``tsp`` is on the PATH: a private server
  (``TS_SOCKET``) with 2 slots

The rows (``--quick`` divides the job counts by 10):

1. one held submit (``qsub -h -b y true``), median of 50; beside it a bare
   ``python3 -c pass`` with the launcher's interpreter and the floor
   ``python3 -I -S -c pass``
2. submit -> start on an idle cell: from the submit call to the moment the
   job's first command ran (the job writes its start time), median of 20
3. dispatch throughput: 1,000 ``/bin/true`` queued while the queue is
   disabled (task-spooler: behind two blocking jobs), then let go at once:
   seconds until the last one ended, and jobs per second
4. 1,000 submits in a shell loop, until all of them ran
5. ``qstat`` with 10,000 pending (held) jobs, median of 20
6. ``qdel -u`` of those 10,000 jobs, until ``qstat`` shows none
7. the daemon's peak resident memory (VmHWM) after all of the above, and
   beside it its helper (gridtools: the exec server)

Prints; asserts nothing. The machine's load average is printed with the table.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))

STAMP = "#!/bin/sh\ndate +%s.%N > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"\n"
POLL = 0.002              # seconds between looks while waiting for something
WAIT = 600.0              # most seconds any one wait lasts


def wait_until(predicate, timeout=WAIT, interval=POLL):
    end = time.time() + timeout
    while time.time() < end:
        if predicate():
            return True
        time.sleep(interval)
    return False


def timed(args, env=None, **kw):
    t0 = time.perf_counter()
    subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    return time.perf_counter() - t0


def peak_rss(pid):
    """VmHWM of ``pid`` in MiB (None when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def pids_named(name):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as fh:
                    if fh.read().strip() == name:
                        found.append(int(entry))
            except OSError:
                continue
    return found


class Counter:
    """Lines appended to a file since it was opened (jobs ended, by their records)."""

    def __init__(self, path, skip_comments=True):
        self.path = path
        self.skip = skip_comments
        self.offset = os.path.getsize(path) if os.path.exists(path) else 0
        self.count = 0
        self.rest = b""

    def read(self):
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return self.count
        self.offset += len(data)
        lines = (self.rest + data).split(b"\n")
        self.rest = lines.pop()
        self.count += sum(1 for line in lines if line and not (self.skip and line.startswith(b"#")))
        return self.count


# ---------------------------------------------------------------- the systems

class Spooled:
    """What gridtools and Grid Engine share: jobs end with an accounting record."""

    def wait_ended(self, counter, count):
        wait_until(lambda: counter.read() >= count)

    def run_loop(self, count):
        subprocess.run(["bash", "-c", self.loop(count)], env=self.env, check=True, cwd="/tmp")



class Gridtools(Spooled):
    name = "gridtools"

    def __init__(self, bin_dir):
        self.bin = bin_dir
        self.root = tempfile.mkdtemp(prefix="gtbench-")
        os.chmod(self.root, 0o755)
        self.env = dict(os.environ, GRIDTOOLS_ROOT=self.root, GRIDTOOLS_NO_AUTOSTART="1",
                        PATH=os.pathsep.join([bin_dir, os.path.dirname(sys.executable),
                                              os.environ.get("PATH", "")]))
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.cmd("gridtools", "init", "--slots", "2", check=True)
        queue = os.path.join(self.root, "etc", "queues", "all.q")
        with open(queue) as fh:
            text = fh.read().replace("np_load_avg=1.75", "NONE")
        with open(queue, "w") as fh:
            fh.write(text)
        os.environ["GRIDTOOLS_ROOT"] = self.root
        self.cmd("gridtools", "daemon", "start", check=True)

    def cmd(self, *args, check=False):
        return subprocess.run(list(args), env=self.env, capture_output=True, text=True, check=check, cwd="/tmp")

    def interpreter(self):
        """The interpreter the qsub launcher runs with: a shell launcher's (sh or bash)
        python3 beside it, else python3 on the PATH; otherwise its #! line."""
        qsub = shutil.which("qsub", path=self.env["PATH"])
        with open(qsub) as fh:
            words = fh.readline()[2:].split()
        if words and os.path.basename(words[0]) in ("sh", "bash"):
            beside = os.path.join(os.path.dirname(qsub), "python3")
            return beside if os.access(beside, os.X_OK) else shutil.which("python3", path=self.env["PATH"])
        if words and os.path.basename(words[0]) == "env":
            words = [w for w in words[1:] if not w.startswith("-")][:1]
            return shutil.which(words[0], path=self.env["PATH"])
        return words[0]

    def held_submit(self):
        return timed(["qsub", "-h", "-b", "y", "true"], self.env, cwd="/tmp")

    def submit_stamp(self, script, out):
        subprocess.run(["qsub", "-b", "y", "-o", "/dev/null", "-j", "y", script, out], env=self.env,
                       stdout=subprocess.DEVNULL, cwd="/tmp", check=True)

    def ended(self):
        return Counter(os.path.join(self.root, "spool", "accounting"))

    def queue_off(self, on=False):
        self.cmd("qmod", "-e" if on else "-d", "all.q", check=True)

    def queue_many(self, count, hold=False):
        """Queue ``count`` /bin/true jobs through qsub's own code, in this process."""
        from gridtools.cli.sge import options, submit
        from gridtools.spool import ids, requests, wake, status
        req = options.fresh_request()
        req.update(binary=True, user_hold=hold)
        first = ids.allocate("job", count)
        for jid in first:
            spec = submit.finish_spec(req, jid, "true", "/tmp", [], command="/bin/true")
            requests.write("submit", {"job": spec})
        wake.poke()
        want = set(first)
        wait_until(lambda: want <= set((status.read() or {}).get("jobs", {})), interval=0.1)
        folder = os.path.join(self.root, "spool", "requests")
        wait_until(lambda: not [n for n in os.listdir(folder) if not n.startswith(".")], interval=0.1)

    def release(self):
        self.queue_off(on=True)

    def loop(self, count):
        return f"for i in $(seq {count}); do qsub -b y true > /dev/null; done"

    def query(self):
        return ["qstat"]

    def delete_all(self):
        return ["qdel", "-u", os.environ.get("USER") or "root"]

    def rss(self):
        import psutil
        from gridtools.spool import daemonctl
        pid = daemonctl.pid()
        try:
            kids = [c.pid for c in psutil.Process(pid).children()]
        except psutil.Error:
            kids = []
        helpers = [peak_rss(c) for c in kids]
        return peak_rss(pid), max([h for h in helpers if h] or [0.0])

    def close(self):
        self.cmd("gridtools", "daemon", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


class GridEngine(Spooled):
    """A running Son of Grid Engine cell (it is not set up here)."""
    name = "SGE 8.1.9"

    def __init__(self, bin_dir):
        self.bin = bin_dir
        self.env = dict(os.environ, PATH=os.pathsep.join([bin_dir, os.environ.get("PATH", "")]))
        cell = os.environ.get("SGE_CELL", "default")
        self.acct = os.path.join(os.environ["SGE_ROOT"], cell, "common", "accounting")

    @staticmethod
    def available(bin_dir):
        return os.path.exists(os.path.join(bin_dir, "qsub")) and bool(os.environ.get("SGE_ROOT"))

    def cmd(self, *args, check=False):
        return subprocess.run(list(args), env=self.env, capture_output=True, text=True, check=check, cwd="/tmp")

    def interpreter(self):
        return None

    def held_submit(self):
        return timed(["qsub", "-h", "-b", "y", "true"], self.env, cwd="/tmp")

    def submit_stamp(self, script, out):
        self.cmd("qsub", "-b", "y", "-o", "/dev/null", "-j", "y", script, out, check=True)

    def ended(self):
        return Counter(self.acct)

    def queue_off(self, on=False):
        self.cmd("qmod", "-e" if on else "-d", "all.q", check=True)

    def queue_many(self, count, hold=False):
        flags = "-h " if hold else ""
        subprocess.run(["bash", "-c", f"for i in $(seq {count}); do qsub {flags}-b y /bin/true > /dev/null; done"],
                       env=self.env, check=True, cwd="/tmp")

    def release(self):
        self.queue_off(on=True)

    def loop(self, count):
        return f"for i in $(seq {count}); do qsub -b y true > /dev/null; done"

    def query(self):
        return ["qstat"]

    def delete_all(self):
        return ["qdel", "-u", os.environ.get("USER") or "root"]

    def rss(self):
        masters = pids_named("sge_qmaster")
        return (peak_rss(masters[0]) if masters else None), None

    def close(self):
        self.cmd("qdel", "-u", os.environ.get("USER") or "root")


class TaskSpooler:
    """A private task-spooler server with 2 slots (it has no hold, no query of 10,000
    queued jobs and no deletion by user: those rows stay empty). Each queued job waits
    as a client process connected to the server, which serves at most 1,000 clients
    (TS_MAXCONN cannot raise that): the throughput row queues MOST_QUEUED jobs behind
    its two blocking ones and scales the time to the row's count."""
    name = "task-spooler"
    query = delete_all = None
    MOST_QUEUED = 990

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="tsbench-")
        self.env = dict(os.environ, TS_SOCKET=os.path.join(self.dir, "socket"), TS_MAXFINISHED="10",
                        TMPDIR=self.dir)
        self.env.pop("TS_SAVELIST", None)
        self.cmd("tsp", "-S", "2", check=True)
        self.gate = os.path.join(self.dir, "gate")
        self.last = []

    @staticmethod
    def available():
        return shutil.which("tsp") is not None

    def cmd(self, *args, check=False):
        return subprocess.run(list(args), env=self.env, capture_output=True, text=True, check=check)

    def interpreter(self):
        return None

    def held_submit(self):
        # no hold: the nearest thing is a job queued behind the two blocking ones
        return timed(["tsp", "true"], self.env)

    def submit_stamp(self, script, out):
        self.last = [int(self.cmd("tsp", script, out, check=True).stdout)]

    def ended(self):
        return None

    def wait_ended(self, _counter, _count):
        for jid in self.last:
            self.cmd("tsp", "-w", str(jid))

    def queue_off(self, on=False):
        try:
            os.unlink(self.gate)
        except FileNotFoundError:
            pass
        for _ in range(2):
            self.cmd("tsp", "sh", "-c", f"while [ ! -e {self.gate} ]; do sleep 0.005; done", check=True)

    def _loop(self, count):
        out = subprocess.run(["bash", "-c", self.loop(count)], env=self.env, check=True,
                             capture_output=True, text=True).stdout.split()
        self.last = [int(n) for n in out[-2:]]

    def queue_many(self, count, hold=False):
        self._loop(count)

    def release(self):
        open(self.gate, "w").close()

    def loop(self, count):
        return f"for i in $(seq {count}); do tsp /bin/true; done"

    def run_loop(self, count):
        self._loop(count)

    def rss(self):
        found = [peak_rss(p) for p in pids_named("tsp") if self.env["TS_SOCKET"] in _environ(p)]
        return (found[0] if found else None), None

    def close(self):
        self.release()
        self.cmd("tsp", "-K")
        shutil.rmtree(self.dir, ignore_errors=True)


def _environ(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


# ---------------------------------------------------------------- the rows

def row_submit(systems, reps, results):
    for _ in range(reps):
        for s in systems:
            results.setdefault(s.name, []).append(s.held_submit())


def row_floor(gridtools, reps):
    """(launcher's interpreter -c pass, the same with -I -S) medians."""
    python = gridtools.interpreter()
    plain, floor = [], []
    for _ in range(reps):
        plain.append(timed([python, "-c", "pass"]))
        floor.append(timed([python, "-I", "-S", "-c", "pass"]))
    return python, statistics.median(plain), statistics.median(floor)


def start_latency(system, work):
    """Seconds from the submit call to the job's first command (it writes the time)."""
    out = os.path.join(work, f"stamp.{system.name.split()[0]}.{time.time_ns()}")
    script = os.path.join(work, "stamp.sh")
    counter = system.ended()
    t0 = time.time()
    system.submit_stamp(script, out)
    wait_until(lambda: os.path.exists(out), timeout=60)
    with open(out) as fh:
        started = float(fh.read())
    system.wait_ended(counter, 1)
    return started - t0


def throughput(system, count):
    """Seconds for ``count`` queued jobs to run (scaled from fewer for a system that
    cannot queue that many at once)."""
    queued = min(count, getattr(system, "MOST_QUEUED", count))
    system.queue_off()
    system.queue_many(queued)
    counter = system.ended()
    t0 = time.time()
    system.release()
    system.wait_ended(counter, queued)
    return (time.time() - t0) * count / queued


def shell_loop(system, count):
    counter = system.ended()
    t0 = time.time()
    system.run_loop(count)
    system.wait_ended(counter, count)
    return time.time() - t0


def query_pending(system, count, reps):
    system.queue_many(count, hold=True)
    return statistics.median(timed(system.query(), system.env) for _ in range(reps))


def delete_pending(system):
    t0 = time.time()
    subprocess.run(system.delete_all(), env=system.env, capture_output=True, cwd="/tmp")
    wait_until(lambda: not subprocess.run(system.query(), env=system.env, capture_output=True,
                                          cwd="/tmp").stdout.strip(), interval=0)
    return time.time() - t0


def measure(systems, quick, reps):
    """Every row for every system, interleaved; {row key: {system name: value}}."""
    scale = 10 if quick else 1
    n_jobs, n_pending = 1000 // scale, 10_000 // scale
    work = tempfile.mkdtemp(prefix="gtbench-work-")
    os.chmod(work, 0o755)
    with open(os.path.join(work, "stamp.sh"), "w") as fh:
        fh.write(STAMP)
    os.chmod(os.path.join(work, "stamp.sh"), 0o755)
    res = {}
    try:
        submits = {}
        row_submit(systems, reps["submit"], submits)
        res["submit"] = {k: statistics.median(v) * 1000 for k, v in submits.items()}
        for s in systems:
            if s.delete_all:
                subprocess.run(s.delete_all(), env=s.env, capture_output=True, cwd="/tmp")
        res["floor"] = row_floor(systems[0], reps["submit"])
        lat = {}
        for _ in range(reps["start"]):
            for s in systems:
                lat.setdefault(s.name, []).append(start_latency(s, work))
        res["start"] = {k: statistics.median(v) * 1000 for k, v in lat.items()}
        res["throughput"] = {s.name: throughput(s, n_jobs) for s in systems}
        res["loop"] = {s.name: shell_loop(s, n_jobs) for s in systems}
        queried = [s for s in systems if s.query]
        res["qstat"] = {s.name: query_pending(s, n_pending, reps["query"]) * 1000 for s in queried}
        res["qdel"] = {s.name: delete_pending(s) for s in queried}
        res["rss"] = {s.name: s.rss() for s in systems}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return res, n_jobs, n_pending


# ---------------------------------------------------------------- the table

TARGETS = {"submit": 9.0, "start": 12.0, "throughput": 2.0, "loop": 9.0, "qstat": 30.0, "qdel": 0.3,
           "rss": 60.0}


def _cell(key, value, n_jobs):
    if value is None:
        return "—"
    if key == "throughput":
        return f"{n_jobs / value:.0f} jobs/s ({value:.2f} s)"
    if key == "rss":
        main, helper = value
        if main is None:
            return "—"
        return f"{main:.0f} MiB" + (f" (+{helper:.0f} MiB)" if helper else "")
    unit = "s" if key in ("loop", "qdel") else "ms"
    return f"{value:.{2 if unit == 's' else 1}f} {unit}"


def _ratio(key, ours, theirs):
    if ours is None or theirs is None:
        return ""
    if key == "rss":
        ours, theirs = ours[0], theirs[0]
        if not ours or not theirs:
            return ""
    return f"×{ours / theirs:.2f}" if theirs else ""


def render(res, names, n_jobs, n_pending):
    from tabulate import tabulate
    python, plain, floor = res["floor"]
    labels = {
        "submit": "one held submit, median",
        "start": "submit -> start, idle, from the submit call",
        "throughput": f"dispatch throughput, {n_jobs:,} queued /bin/true on 2 slots",
        "loop": f"{n_jobs:,} submits in a shell loop, until all ran",
        "qstat": f"qstat with {n_pending:,} pending jobs",
        "qdel": f"qdel -u of {n_pending:,} pending jobs, until qstat is empty",
        "rss": f"daemon peak RSS after {n_pending:,} jobs",
    }
    header = ["measure"] + names + [f"gridtools / {n}" for n in names[1:]] + ["target"]
    rows = []
    for key, label in labels.items():
        values = res.get(key, {})
        ours = values.get(names[0])
        target = TARGETS[key]
        unit = {"throughput": f"≤ {target:.0f} s", "rss": f"≤ {target:.0f} MiB", "loop": f"≤ {target:.0f} s",
                "qdel": f"≤ {target} s"}.get(key, f"≤ {target:.0f} ms")
        rows.append([label] + [_cell(key, values.get(n), n_jobs) for n in names]
                    + [_ratio(key, ours, values.get(n)) for n in names[1:]] + [unit])
    table = tabulate(rows, headers=header, tablefmt="github")
    note = (f"\n{python} -c pass: {plain * 1000:.1f} ms; with -I -S: {floor * 1000:.1f} ms"
            f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return table + note


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the jobs, fewer repetitions")
    parser.add_argument("--reps", type=int, default=0, help="repetitions of the short measures")
    parser.add_argument("--bin", default=os.path.join(REPO, "bin"), help="gridtools' commands")
    parser.add_argument("--sge-bin", default=os.environ.get("SGE_BIN", "/usr/lib/gridengine"))
    parser.add_argument("--only", default="", help="comma-separated: gridtools,sge,tsp")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    wanted = set(args.only.split(",")) if args.only else {"gridtools", "sge", "tsp"}
    reps = {"submit": args.reps or (20 if args.quick else 50), "start": args.reps or (10 if args.quick else 20),
            "query": args.reps or (10 if args.quick else 20)}
    systems = [Gridtools(os.path.abspath(args.bin))]
    try:
        if "sge" in wanted and GridEngine.available(args.sge_bin):
            systems.append(GridEngine(args.sge_bin))
        if "tsp" in wanted and TaskSpooler.available():
            systems.append(TaskSpooler())
        res, n_jobs, n_pending = measure(systems, args.quick, reps)
    finally:
        for s in systems:
            s.close()
    print(render(res, [s.name for s in systems], n_jobs, n_pending))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"results": res, "load": os.getloadavg()}, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
