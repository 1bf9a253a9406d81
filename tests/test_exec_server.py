"""The exec server, launches taken back, deferred accounting flushes, bulk requests and
the history written in slices.

- the daemon's exec server is a small process with a spare shepherd waiting; killed,
  it is started again by the next start, and a stopped daemon leaves no error behind;
- a launch the daemon withdrew is not run by a shepherd that starts late for it, while
  a current one is;
- accounting records appended beside the pass are in the file, in order, once settled;
- a request naming many jobs travels as JSON and reads back the same;
- a bulk removal's history ads are appended a slice per pass, all of them in the end;
- a shepherd serves one task after another, unless a task set its nice value; it lets
  go of a task only when no signal for it is on its way (the control lock), and a
  signal that came for its last task is dropped, not taken for the next; it never says
  it is ready for another task when it is about to leave;
- emptied job and task folders are kept and become the next jobs' and tasks' folders.
"""

import os
import signal
import threading
import time

from attack_tools import children, daemon_pid, rss_kib
from conftest import wait_for


def test_exec_server_is_small_keeps_a_spare_and_is_started_again(cell, workdir):
    daemon = daemon_pid(cell)
    server = wait_for(lambda: children(daemon))[0]
    assert rss_kib(server) < rss_kib(daemon)
    wait_for(lambda: children(server))                     # the spare shepherd waits
    jid = int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "true", cwd=workdir,
                        check=True).stdout)
    cell.wait_finished(jid)
    os.kill(server, signal.SIGKILL)
    wait_for(lambda: server not in children(daemon))
    out = os.path.join(workdir, "after")
    jid = int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "touch", out, cwd=workdir,
                        check=True).stdout)
    cell.wait_finished(jid)
    assert os.path.exists(out)
    from gridtools.formats.accounting import FIELDS
    record = [r for r in cell.accounting() if r[FIELDS.index("job_number")] == str(jid)][0]
    assert record[FIELDS.index("failed")] == "0"
    cell.stop_daemon()
    with open(os.path.join(cell.root, "spool", "daemon.out")) as fh:
        assert "Traceback" not in fh.read()


def _submit(cell, *args):
    proc = cell.run("qsub", "-terse", *args, cwd="/tmp")
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout)


def _run_shepherd(plan, tdir):
    from gridtools.exec import launch
    pid = launch.spawn(plan, tdir)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_withdrawn_launch_runs_nothing_and_a_current_one_runs(ticking, tmp_path):
    cell, daemon, fake = ticking
    from gridtools.exec import tasklock
    from gridtools.spool import jobs as jobstore
    marks = [tmp_path / "withdrawn.ran", tmp_path / "current.ran"]
    ids = [_submit(cell, "-b", "y", "-o", "/dev/null", "-j", "y", "touch", str(m)) for m in marks]
    daemon.tick()
    plans = {job_id: plan for job_id, _task, plan in fake.launched}
    assert sorted(plans) == sorted(ids)
    for job_id in ids:
        fake.kill(job_id, 1)                     # the lock is free again: no shepherd runs
    tdir = jobstore.task_dir(ids[0], 1)
    tasklock.withdraw(tdir, plans[ids[0]]["launch"])
    assert _run_shepherd(plans[ids[0]], tdir) == 0
    assert not marks[0].exists()
    assert jobstore.read_result(ids[0], 1) is None
    assert _run_shepherd(plans[ids[1]], jobstore.task_dir(ids[1], 1)) == 0
    assert marks[1].exists()
    assert jobstore.read_result(ids[1], 1)["exit_status"] == 0


def test_a_lost_launch_is_withdrawn_under_its_token(ticking):
    cell, daemon, fake = ticking
    from gridtools.daemon import reap
    from gridtools.spool import jobs as jobstore
    job_id = _submit(cell, "-b", "y", "true")
    daemon.tick()
    plan = [p for j, _t, p in fake.launched if j == job_id][0]
    fake.kill(job_id, 1)
    daemon.state.launching.clear()               # as after a restart: nothing was ordered
    monkey_grace = reap.STARTUP_GRACE
    try:
        reap.STARTUP_GRACE = 0.0
        daemon.tick()
    finally:
        reap.STARTUP_GRACE = monkey_grace
    tdir = jobstore.task_dir(job_id, 1)
    assert os.path.exists(os.path.join(tdir, jobstore.withdrawn_name(plan["launch"])))


def test_records_appended_beside_the_pass_are_in_order_once_settled(ticking):
    from gridtools.formats.accounting import FIELDS
    from gridtools.spool import acct
    number = FIELDS.index("job_number")
    acct.append([{"job_number": 7}, {"job_number": 8}], later=True)
    acct.append([{"job_number": 9}], later=True)
    acct.settle()
    acct.settle()                                # nothing left to wait for
    with open(acct.path()) as fh:
        numbers = [line.split(":")[number] for line in fh if not line.startswith("#")]
    assert numbers == ["7", "8", "9"]


def test_a_process_forked_during_a_flush_settles_its_own_records(ticking):
    """A child forked while its parent's records were being flushed (a test harness that
    forks daemons, a daemon that forks shepherds), its descriptors closed: its own
    records settle at once; the parent's order is not its to wait for or flush."""
    from gridtools.spool import acct
    acct.append([{"job_number": 1}], later=True)
    acct.settle()                                   # (the flush thread runs)
    acct.append([{"job_number": 2}], later=True)    # an order of the parent's, maybe unflushed
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.closerange(3, 65536)
            acct.append([{"job_number": 3}], later=True)
            done = threading.Event()
            threading.Thread(target=lambda: (acct.settle(), done.set()), daemon=True).start()
            code = 0 if done.wait(10) else 2
        finally:
            os._exit(code)
    _pid, status = os.waitpid(pid, 0)
    acct.settle()
    assert os.waitstatus_to_exitcode(status) == 0
    with open(acct.path()) as fh:
        assert [line.split(":")[5] for line in fh if not line.startswith("#")] == ["1", "2", "3"]


def test_a_bulk_request_travels_as_json_and_reads_back_the_same(ticking):
    from gridtools.spool import inbox, requests
    many = [{"id": n, "tasks": None} for n in range(1, requests.BULK + 2)]
    few = many[:3]
    folder = os.path.join(os.environ["GRIDTOOLS_ROOT"], "spool", "requests")
    for targets, opening in ((many, b"{"), (few, b"t")):
        name = requests.write("delete", {"targets": targets, "force": False})
        with open(os.path.join(folder, name), "rb") as fh:
            assert fh.read(1) == opening
        req = inbox.read(folder, name)
        assert req.kind == "delete" and req.body["targets"] == targets
        req.remove()


def test_a_bulk_removal_writes_its_history_a_slice_per_pass(ticking, monkeypatch):
    cell, daemon, _fake = ticking
    from gridtools.cli.sge import options, submit
    from gridtools.daemon import history
    from gridtools.spool import ids, requests
    monkeypatch.setattr(history, "SLICE", 5)
    req = options.fresh_request()
    req.update(binary=True, user_hold=True)
    numbers = ids.allocate("job", 12)
    for jid in numbers:
        requests.write("submit", {"job": submit.finish_spec(req, jid, "true", "/tmp", [], command="/bin/true")})
    daemon.tick()
    assert all(n in daemon.state.jobs for n in numbers)
    requests.write("delete", {"targets": [{"id": n, "tasks": None} for n in numbers], "force": False})

    def banners():
        try:
            with open(history.path()) as fh:
                return [line for line in fh if line.startswith("***")]
        except FileNotFoundError:
            return []
    daemon.tick()
    assert len(banners()) == 5
    deadline = time.time() + 10
    while len(banners()) < 12 and time.time() < deadline:
        daemon.tick()
    assert sorted(int(b.split("ClusterId = ")[1].split()[0]) for b in banners()) == sorted(numbers)


def test_the_epoch_ads_of_a_pass_are_all_appended_at_its_end(ticking, monkeypatch):
    """Epoch ads are made when the runs end: all those a pass noted are appended at its
    end (a history slice holds back final ads only, which are made when written), so a
    crash after the pass wrote the tasks' states loses none of them."""
    _cell, daemon, _fake = ticking
    from gridtools.classad import ClassAd
    from gridtools.daemon import history
    monkeypatch.setattr(history, "SLICE", 5)
    state = daemon.state
    for proc in range(12):
        ad = ClassAd({"ClusterId": 7, "ProcId": proc, "RunInstanceID": 0, "Owner": "root",
                      "EpochWriteDate": 1700000000})
        state.epochs.append((ad, {"uid": None}))
    assert history.write(state, most=history.SLICE)
    with open(history.epoch_path()) as fh:
        procs = [int(line.split("ProcId=")[1].split()[0]) for line in fh if line.startswith("*** EPOCH")]
    assert procs == list(range(12)) and state.epochs == []


# ---------------------------------------------------------------- shepherds serve again

def _shepherd_of(cell, jid):
    from gridtools.exec import tasklock
    record = tasklock.read_lock(os.path.join(cell.root, "spool", "jobs", str(jid), "1"))
    return record.pid if record is not None else 0


def _lock_path(cell, jid, name="shepherd.lock"):
    return os.path.join(cell.root, "spool", "jobs", str(jid), "1", name)


def _run(cell, workdir, *argv):
    jid = int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", *argv, cwd=workdir,
                        check=True).stdout)
    assert cell.wait_finished(jid)
    return jid


def _waits_for_a_lock(pid):
    with open(f"/proc/{pid}/wchan") as fh:
        return "lock" in fh.read()


def _released(cell, jid):
    from gridtools.spool.files import is_locked
    return not is_locked(_lock_path(cell, jid))


def test_a_shepherd_serves_the_next_task_unless_its_task_set_a_nice_value(cell, workdir):
    from gridtools.spool.files import is_locked
    shepherds = []
    for _ in range(4):                  # (a task may meet the spare forked ahead instead)
        jid = _run(cell, workdir, "true")
        wait_for(lambda: not is_locked(_lock_path(cell, jid)))
        shepherds.append(_shepherd_of(cell, jid))
    assert len(set(shepherds)) < len(shepherds)
    cell.run("qconf", "-mattr", "queue", "priority", "5", "all.q", check=True)
    niced = _run(cell, workdir, "true")
    wait_for(lambda: _shepherd_of(cell, niced) not in children(children(daemon_pid(cell))[0]))
    after = [_shepherd_of(cell, _run(cell, workdir, "true")) for _ in range(3)]
    assert _shepherd_of(cell, niced) not in after


def test_a_shepherd_lets_go_of_its_task_only_outside_the_control_lock(cell, workdir):
    from gridtools.spool.files import Lock, is_locked
    jid = int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "sleep", "0.5", cwd=workdir,
                        check=True).stdout)
    wait_for(lambda: is_locked(_lock_path(cell, jid)))
    control = Lock(_lock_path(cell, jid, "control.lock"))
    control.acquire()                   # as the daemon holds it while it signals the task
    try:
        result = os.path.join(cell.root, "spool", "jobs", str(jid), "1", "result.yaml")
        wait_for(lambda: os.path.exists(result))
        shepherd = _shepherd_of(cell, jid)
        wait_for(lambda: _waits_for_a_lock(shepherd))   # it waits for the control lock ...
        assert is_locked(_lock_path(cell, jid))         # ... still holding its task's
    finally:
        control.release()
    wait_for(lambda: not is_locked(_lock_path(cell, jid)))
    assert cell.wait_finished(jid)


def test_a_signal_for_a_shepherds_last_task_is_not_taken_for_its_next(cell, workdir):
    from gridtools.formats.accounting import FIELDS
    for _ in range(10):                 # until the next task meets the shepherd signalled
        first = _run(cell, workdir, "true")
        wait_for(lambda: _released(cell, first))
        shepherd = _shepherd_of(cell, first)
        os.kill(shepherd, signal.SIGTERM)       # late: its task has ended
        second = _run(cell, workdir, "sleep", "0.2")
        if _shepherd_of(cell, second) == shepherd:
            break
    else:
        raise AssertionError("no task met the shepherd of the task before it")
    record = [r for r in cell.accounting() if r[FIELDS.index("job_number")] == str(second)][0]
    assert (record[FIELDS.index("failed")], record[FIELDS.index("exit_status")]) == ("0", "0")


def test_a_shepherd_on_its_last_task_leaves_without_saying_it_is_done(ticking, monkeypatch):
    """A spare that would say "done" and then leave could be handed a task on its way out,
    which nobody would run."""
    cell, daemon, fake = ticking
    from gridtools.exec import launch
    from gridtools.spool import jobs as jobstore
    jid = _submit(cell, "-b", "y", "-o", "/dev/null", "-j", "y", "true")
    daemon.tick()
    (job_id, task, plan), = fake.launched
    fake.kill(job_id, task)                      # the lock is free again for a real shepherd
    for most, says in ((2, launch.DONE), (1, b"")):
        monkeypatch.setattr(launch, "REUSE_MOST", most)
        pid, sock = launch.fork_spare()
        try:
            assert launch.hand(sock, jobstore.task_dir(job_id, task), plan)
            heard = os.read(sock, 64)            # "done", or the end of a spare that left
            assert heard == says
        finally:
            os.close(sock)
            os.waitpid(pid, 0)
        assert jobstore.read_result(jid, 1)["exit_status"] == 0
        os.unlink(os.path.join(jobstore.task_dir(jid, 1), jobstore.RESULT_FILE))


def test_emptied_folders_are_kept_and_become_new_job_and_task_folders(ticking, monkeypatch):
    cell, daemon, fake = ticking
    from gridtools.spool import jobs as jobstore
    ids = [_submit(cell, "-b", "y", "-o", "/dev/null", "-j", "y", "true") for _ in range(2)]
    daemon.tick()
    for job_id, task, _plan in fake.launched:
        fake.finish(job_id, task)
    daemon.tick()
    folders = [jobstore.job_dir(j) for j in ids] + [jobstore.task_dir(j, 1) for j in ids]
    inodes = {os.stat(f).st_ino for f in folders}
    odd = os.path.join(jobstore.job_dir(ids[0]), "odd")        # not a folder the spool makes
    os.mkdir(odd, 0o755)
    open(os.path.join(odd, "f"), "w").close()
    assert jobstore.remove(*ids) == []
    monkeypatch.setattr(jobstore, "FRESH_MOST", 3)
    monkeypatch.setattr(jobstore, "FRESH_LOOK_EVERY", 0)     # (the daemon found none a moment ago)
    jobstore.empty_trash()
    fresh = os.path.join(cell.root, "spool", jobstore.FRESH)
    kept = {}
    for name in os.listdir(fresh):
        st = os.lstat(os.path.join(fresh, name))
        assert os.listdir(os.path.join(fresh, name)) == []
        assert st.st_mode & 0o7777 == 0o711 and st.st_uid == os.geteuid()
        assert st.st_ino in inodes
        kept[st.st_ino] = name
    assert len(kept) == 3                                     # at most FRESH_MOST
    assert os.listdir(os.path.join(cell.root, "spool", "trash")) == []
    new = _submit(cell, "-b", "y", "-o", "/dev/null", "-j", "y", "true")
    daemon.tick()
    assert [j for j, _t, _p in fake.launched][-1] == new
    taken = {kept[os.stat(jobstore.job_dir(new)).st_ino], kept[os.stat(jobstore.task_dir(new, 1)).st_ino]}
    assert sorted(os.listdir(fresh)) == sorted(set(kept.values()) - taken)
    fake.finish(new, 1)
    daemon.tick()
    assert cell.job_state(new)["tasks"]["1"]["exit_status"] == 0
