"""Shared fixtures: a real cell in a temporary directory, a real daemon, real users.

``cell`` makes a cell (two slots on one host) as ``gridtools init`` does, by
copying a cell that ``gridtools init`` made once, starts its daemon and
afterwards kills the daemon and whatever job processes are left. Commands are
run as subprocesses through the launchers in bin/, as a user would run them.
Tests that need other Unix users get them from ``users`` (created with
useradd; those tests are skipped when not root).

The suite may run in several processes at once (pytest -n): every cell,
scratch folder and copy of the code is a fresh temporary folder of its own,
and what is machine-wide (the user database, fixed names in /tmp, the test
users' home folders) is used under ``machine_lock``.
"""

import atexit
import compileall
import contextlib
import fcntl
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(REPO, "bin")
TEST_USERS = ("gtalice", "gtbob", "gtcarol")


def _world_readable(path):
    """True when every directory on the way to ``path``, and to the file a symbolic link
    there leads to (a venv's interpreter), lets other users through."""
    path = os.path.abspath(path)
    real = os.path.realpath(path)
    if real != path and not _world_readable(real):
        return False
    while True:
        if not os.stat(path).st_mode & 0o001:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


_USER_BIN = []
#: the libraries the commands import, copied beside the code other users run
DEPENDENCIES = ("click", "lark", "tabulate", "filelock", "psutil", "yaml")


def user_bin():
    """The launchers other users run: a world-readable copy of bin/ and src/ with the
    libraries the commands use, run by the system's python3 (other users cannot read a
    checkout in a home directory, nor a virtual environment built on a private interpreter)."""
    if not _USER_BIN:
        import importlib
        copy = tempfile.mkdtemp(prefix="gtcode-", dir="/tmp")
        shutil.copytree(BIN, os.path.join(copy, "bin"), symlinks=True)
        src = os.path.join(copy, "src")
        shutil.copytree(os.path.join(REPO, "src"), src, ignore=shutil.ignore_patterns("__pycache__"))
        for name in DEPENDENCIES:
            module = importlib.import_module(name)
            origin = os.path.dirname(module.__file__) if module.__file__.endswith("__init__.py") \
                else module.__file__
            target = os.path.join(src, os.path.basename(origin))
            if os.path.isdir(origin):
                shutil.copytree(origin, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(origin, target)
        # compiled now, as an installation is: other users cannot write __pycache__ here, and
        # would otherwise compile every module they import on each command
        compileall.compile_dir(src, quiet=1)
        subprocess.run(["chmod", "-R", "a+rX", copy], check=True)
        atexit.register(shutil.rmtree, copy, True)
        _USER_BIN.append(os.path.join(copy, "bin"))
    return _USER_BIN[0]


_USER_PYTHON = []


def user_python():
    """An interpreter other users can run with the runtime libraries importable: the test
    interpreter when they can reach it, else /usr/bin/python3 with a world-readable copy of
    those libraries on PYTHONPATH. Returns (argv0, extra environment)."""
    if not _USER_PYTHON:
        if _world_readable(sys.executable):
            _USER_PYTHON.append((sys.executable, {}))
        else:
            import importlib.util
            site = tempfile.mkdtemp(prefix="gtsite-", dir="/tmp")
            for name in ("click", "yaml", "_yaml", "filelock", "psutil", "lark", "tabulate"):
                spec = importlib.util.find_spec(name)
                if spec is None or not spec.origin:
                    continue
                if spec.submodule_search_locations:
                    src = os.path.dirname(spec.origin)
                    shutil.copytree(src, os.path.join(site, os.path.basename(src)),
                                    ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    shutil.copy(spec.origin, site)
            subprocess.run(["chmod", "-R", "a+rX", site], check=True)
            os.chmod(site, 0o755)
            atexit.register(shutil.rmtree, site, True)
            _USER_PYTHON.append(("/usr/bin/python3", {"PYTHONPATH": site}))
    return _USER_PYTHON[0]


@contextlib.contextmanager
def machine_lock(name):
    """Hold an exclusive lock shared by every test process on the machine (the suite may
    run in several processes at once) while using something machine-wide: the user
    database, fixed names in /tmp, the test users' home directories."""
    path = os.path.join(tempfile.gettempdir(), f"gridtools-tests-{name}.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def run_bare(code, *args):
    """Run ``code`` in a new interpreter started as the launchers start one (no site
    module, no user path) with this checkout's src/ first on its path; ``args`` are its
    sys.argv[1:]. Its CompletedProcess, with text output."""
    return subprocess.run([sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, sys.argv.pop(1))\n"
                           + code, os.path.join(REPO, "src"), *args], capture_output=True, text=True, timeout=60)


def unanswered(root):
    """The names of the requests of the cell at ``root`` not answered yet: queued in
    spool/requests/ or taken by the daemon into spool/taken/ (no hidden leftover)."""
    spool = os.path.join(root, "spool")
    return [name for folder in ("requests", "taken") if os.path.isdir(os.path.join(spool, folder))
            for name in os.listdir(os.path.join(spool, folder)) if not name.startswith(".")]


def wait_for(predicate, timeout=10.0, interval=0.02):
    """Poll ``predicate`` until it returns something true; return that or fail.

    The pause between polls starts at ``interval`` and grows with the time waited, to a
    tenth of it (at most a quarter of a second): a long wait does not spend the machine's
    CPU on polls (many predicates run a command), and a condition is still noticed within
    a tenth of the time it took. The last poll is made at the deadline."""
    began = time.time()
    end = began + timeout
    while True:
        value = predicate()
        if value:
            return value
        now = time.time()
        if now >= end:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(min(max(interval, min(0.25, (now - began) / 10)), end - now))


class Cell:
    """A temporary cell with helpers to run commands in it."""

    def __init__(self, root, host):
        self.root = root
        self.host = host
        self.env = dict(os.environ)
        path = os.pathsep.join([BIN, os.path.dirname(sys.executable), os.environ.get("PATH", "")])
        self.env.update({"GRIDTOOLS_ROOT": root, "PATH": path,
                         "GRIDTOOLS_NO_AUTOSTART": "1", "TZ": os.environ.get("TZ", "UTC"),
                         "GRIDTOOLS_HOST": host})
        self.env.pop("GRIDTOOLS_PYTHON", None)

    def run(self, *args, input=None, user=None, cwd=None, env=None, timeout=60, check=False, text=True):
        """Run a command (argv) in the cell; returns CompletedProcess with text output
        (bytes with ``text=False``)."""
        full_env = dict(self.env)
        if env:
            full_env.update(env)
        kwargs = {}
        if user is not None:
            entry = pwd.getpwnam(user)
            full_env.update({"HOME": entry.pw_dir, "USER": user, "LOGNAME": user})
            full_env["PATH"] = os.pathsep.join([user_bin(), "/usr/local/bin", "/usr/bin", "/bin"])

            def demote():
                os.initgroups(user, entry.pw_gid)
                os.setgid(entry.pw_gid)
                os.setuid(entry.pw_uid)
            kwargs["preexec_fn"] = demote
            cwd = cwd or entry.pw_dir
        proc = subprocess.run(list(args), input=input, capture_output=True, text=text,
                              env=full_env, cwd=cwd or self.root, timeout=timeout, **kwargs)
        if check and proc.returncode != 0:
            raise AssertionError(f"{args} failed ({proc.returncode}): {proc.stderr}{proc.stdout}")
        return proc

    def qsub(self, *args, **kw):
        return self.run("qsub", *args, **kw)

    def job_state(self, job_id):
        """The job's state as a dict, its ended tasks joined in (None when gone)."""
        sys.path.insert(0, os.path.join(REPO, "src"))
        from gridtools.formats import spoolyaml
        folder = os.path.join(self.root, "spool", "jobs", str(job_id))
        found = []
        for name in ("state.yaml", "ended.yaml"):       # an array job's ended tasks
            try:
                with open(os.path.join(folder, name)) as fh:
                    found.append(spoolyaml.load(fh.read()))
            except FileNotFoundError:
                found.append(None)
        state, ended = found
        if ended:
            state = state or {"hold": "", "deleted": False, "tasks": {}}
            state["tasks"] = {**ended, **state["tasks"]}
        return state

    def task_states(self, job_id):
        state = self.job_state(job_id) or {}
        return {int(k): v.get("state") for k, v in (state.get("tasks") or {}).items()}

    def finished(self, job_id, tasks=(1,)):
        states = self.task_states(job_id)
        return all(states.get(t) == "finished" for t in tasks)

    def wait_finished(self, job_id, tasks=(1,), timeout=20):
        return wait_for(lambda: self.finished(job_id, tasks), timeout)

    def accounting(self):
        path = os.path.join(self.root, "spool", "accounting")
        if not os.path.exists(path):
            return []
        with open(path) as fh:
            return [line.rstrip("\n").split(":") for line in fh if not line.startswith("#")]

    def start_daemon(self):
        self.run("gridtools", "daemon", "start", check=True)

    def stop_daemon(self):
        self.run("gridtools", "daemon", "stop")

    def start_execds(self, hosts=None):
        """Run ``gridtools execd --host H`` for each host (default: all of the cell's) and
        wait until each holds its lock; destroy_cell ends them with the cell's processes."""
        hosts = hosts or [n for n in os.listdir(os.path.join(self.root, "etc", "exechosts")) if n != "global"]
        procs = [subprocess.Popen(["gridtools", "execd", "--host", h], env=self.env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for h in hosts]
        for h in hosts:
            wait_for(lambda h=h: os.path.exists(os.path.join(self.root, "spool", "execd", h, "execd.lock")))
        return procs


def _kill_cell_processes(root):
    """Kill every process whose environment points into the cell, and wait until they are
    gone; again until a pass finds none (a shepherd may start a job, in a process group of
    its own, between the pass that lists the processes and the signal that kills it)."""
    for _round in range(20):
        killed = _kill_matching(root)
        wait_for(lambda: all(_gone(proc) for proc in killed))
        if not killed:
            return


def _kill_matching(root):
    import psutil
    me = os.getpid()
    killed = []
    for proc in psutil.process_iter(["pid", "environ", "status"]):
        try:
            if proc.pid == me or proc.info.get("status") == psutil.STATUS_ZOMBIE:
                continue
            env = proc.info.get("environ") or {}
            if root in (env.get("GRIDTOOLS_ROOT"), env.get("SGE_ROOT")):
                proc.send_signal(signal.SIGKILL)
                killed.append(proc)
        except (psutil.Error, OSError):
            continue
    return killed


def _gone(proc):
    """True once the process ended (a zombie waiting for its parent has ended)."""
    import psutil
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def init_cell(root, slots, hosts):
    """``gridtools init`` of a cell at ``root`` (an empty folder)."""
    os.chmod(root, 0o755)
    init = ["gridtools", "init", "--slots", str(slots)]
    for h in hosts:
        init += ["--host", h]
    Cell(root, hosts[0]).run(*init, check=True, cwd="/")


_TEMPLATES = {}


def template_cell(slots, hosts):
    """A cell made by ``gridtools init`` once per test process for each (slots, hosts):
    the cells of the tests are copies of it (see copy_cell)."""
    key = (slots, tuple(hosts))
    if key not in _TEMPLATES:
        root = tempfile.mkdtemp(prefix="gttemplate-", dir="/tmp")
        atexit.register(shutil.rmtree, root, True)
        init_cell(root, slots, hosts)
        _TEMPLATES[key] = root
    return _TEMPLATES[key]


def copy_cell(template, root):
    """Make at ``root`` (an empty folder) what ``gridtools init`` made at ``template``: the
    same folders, files, FIFOs and links with the same modes, the template's path in the files
    replaced by ``root`` (test_fixture_cells checks that this equals an initialised cell)."""
    old, new = template.encode(), root.encode()
    for folder, _dirs, names in os.walk(template):
        target = os.path.normpath(os.path.join(root, os.path.relpath(folder, template)))
        if target != root:
            os.mkdir(target)
        os.chmod(target, stat.S_IMODE(os.stat(folder).st_mode))
        for name in names:
            source, copy = os.path.join(folder, name), os.path.join(target, name)
            mode = os.lstat(source).st_mode
            if stat.S_ISLNK(mode):                  # default/common/accounting
                os.symlink(os.readlink(source), copy)
                continue
            if stat.S_ISFIFO(mode):
                os.mkfifo(copy)
            elif stat.S_ISREG(mode):
                with open(source, "rb") as fh:
                    data = fh.read()
                with open(copy, "xb") as fh:
                    fh.write(data.replace(old, new))
            else:
                raise AssertionError(f"copy_cell: {source} is neither a file nor a FIFO")
            os.chmod(copy, stat.S_IMODE(mode))


def make_cell(slots=2, hosts=None, start=True, execds=False, condor_config=""):
    """A new cell; ``execds``: every host served by its own ``gridtools execd --host``;
    ``condor_config``: lines added to its etc/condor_config before its daemon starts."""
    root = tempfile.mkdtemp(prefix="gtcell-", dir="/tmp")
    hosts = list(hosts or ["testhost"])
    copy_cell(template_cell(slots, hosts), root)
    c = Cell(root, hosts[0])
    if condor_config:
        with open(os.path.join(root, "etc", "condor_config"), "a") as fh:
            fh.write(condor_config)
    # tests must not depend on how busy the test machine is: no load alarm
    queue = os.path.join(root, "etc", "queues", "all.q")
    with open(queue) as fh:
        text = fh.read()
    with open(queue, "w") as fh:
        fh.write(text.replace("np_load_avg=1.75", "NONE"))
    if start:
        c.start_daemon()
        if execds:
            c.start_execds()
    return c


def destroy_cell(c):
    # the cell is thrown away: its daemon is killed with the rest of its processes (a
    # daemon stopped by ``gridtools daemon stop`` leaves the jobs to their shepherds too)
    _kill_cell_processes(c.root)
    shutil.rmtree(c.root, ignore_errors=True)
    # the cell's folder of TMPDIRs (exec.tmpdir) under the default queue tmpdir
    import hashlib
    shutil.rmtree(os.path.join("/tmp", "gridtools." + hashlib.sha256(c.root.encode()).hexdigest()[:16]),
                  ignore_errors=True)


#: the output files Grid Engine jobs write to their owner's home when given no path:
#: NAME.oJOB, NAME.eJOB, NAME.poJOB, NAME.peJOB, with .TASK for an array's tasks
_JOB_OUTPUT = re.compile(r".+\.p?[oe][0-9]+(\.[0-9]+)?")
_HOME_BEFORE = {}


def pytest_sessionstart(session):
    """Note what the home of the user running the suite holds (the jobs of root's cells
    that name no output path write there), once for the whole run: in the process that
    runs the tests, or the one that leads the test processes of ``pytest -n``."""
    if hasattr(session.config, "workerinput"):
        return
    home = pwd.getpwuid(os.getuid()).pw_dir
    try:
        _HOME_BEFORE.update(home=home, names=set(os.listdir(home)), since=time.time())
    except OSError:
        pass


def pytest_sessionfinish(session):
    """Remove from that home the job output files the run's jobs left there: those it did
    not hold at the start, written since (every test process has ended by now)."""
    if hasattr(session.config, "workerinput") or not _HOME_BEFORE:
        return
    home = _HOME_BEFORE["home"]
    for name in set(os.listdir(home)) - _HOME_BEFORE["names"]:
        path = os.path.join(home, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if _JOB_OUTPUT.fullmatch(name) and stat.S_ISREG(st.st_mode) and st.st_mtime >= _HOME_BEFORE["since"] - 1:
            os.unlink(path)


def cell_fixture(scope="function", **options):
    """A ``cell`` fixture made with ``make_cell``'s ``options``, for a module whose tests
    want their cells made otherwise (``cell = cell_fixture(slots=2)``; ``scope``: the
    fixture's, "module" for one cell the module's tests share)."""
    @pytest.fixture(name="cell", scope=scope)
    def made():
        c = make_cell(**options)
        try:
            yield c
        finally:
            destroy_cell(c)
    return made


cell = cell_fixture()


@pytest.fixture
def inproc(monkeypatch):
    """A cell whose daemon runs in this process (FakeExecution); yields (cell, open daemon)."""
    from fakeexec import FakeExecution
    from gridtools.daemon.loop import Daemon
    cell = make_cell(slots=2, start=False)
    monkeypatch.setenv("GRIDTOOLS_ROOT", cell.root)
    monkeypatch.setenv("GRIDTOOLS_HOST", cell.host)
    daemons = []

    def start():
        daemon = Daemon(execution=FakeExecution())
        daemon.open()
        daemons.append(daemon)
        return daemon
    try:
        yield cell, start
    finally:
        for daemon in daemons:
            if daemon.lock.fd is not None:
                daemon.close()
        destroy_cell(cell)


@pytest.fixture
def idle_cell():
    """A cell whose daemon is not started."""
    c = make_cell(start=False)
    try:
        yield c
    finally:
        destroy_cell(c)


def test_user(*names):
    """The password entry of plain user ``names[0]``, each of ``names`` created when
    missing (with a home); skips the test when not running as root. Parallel test
    processes create them one at a time."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create test users")
    with machine_lock("users"):
        for name in names:
            try:
                pwd.getpwnam(name)
            except KeyError:
                subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", name], check=True,
                               capture_output=True)
    return pwd.getpwnam(names[0])


test_user.__test__ = False      # (a helper, not a test)


@pytest.fixture(scope="session")
def users():
    """Plain test users (created once); skips when not running as root."""
    test_user(*TEST_USERS)
    return TEST_USERS


@pytest.fixture
def two_host_pool():
    """Two hosts (hosta, hostb) of two slots, 4096 MB each, whose slot ads leave out this
    machine's load (LoadAvg and CondorLoadAvg 0.0, from a STARTD_FACTS_FILE)."""
    cell = make_cell(slots=2, hosts=["hosta", "hostb"], start=False)
    facts = os.path.join(cell.root, "etc", "facts")
    with open(facts, "w") as fh:
        fh.write("LoadAvg = 0.0\nCondorLoadAvg = 0.0\n")
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(f"STARTD_FACTS_FILE = {facts}\nMEMORY = 4096\n")
    cell.start_daemon()
    try:
        yield cell
    finally:
        destroy_cell(cell)


@pytest.fixture
def workdir(tmp_path):
    """A scratch directory every user may write to."""
    path = tempfile.mkdtemp(prefix="gtwork-", dir="/tmp")
    os.chmod(path, 0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def cell_two_hosts():
    """A cell with execution hosts testhost and node2, one slot each, run by the dispatcher."""
    c = make_cell(slots=1, hosts=["testhost", "node2"])
    try:
        yield c
    finally:
        destroy_cell(c)


from fakeexec import ticking  # noqa: E402,F401 (the in-process daemon fixture of the tick tests)
