"""condor_history -search (a history file and its time-rotated files, as HTCondor's
findHistoryFiles finds them), the cell's own rotation of its history, and -epochs
(the job epoch history: an ad per run of a job)."""

import json
import os
import subprocess
import time

import pytest

from condortools import history, submit, wait_status
from conftest import unanswered, wait_for

USAGE_HEAD = "Usage: condor_history [options]\n"
HEADING = " ID          OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD\n"


def _ad(cluster, done=100):
    return (f'ClusterId = {cluster}\nProcId = 0\nOwner = "alice"\nJobStatus = 4\nQDate = 1\n'
            f'CompletionDate = {done}\nCmd = "/bin/true"\n'
            f'*** ProcId = 0 ClusterId = {cluster} Owner = "alice" CompletionDate = {done}\n')


def _stamp(when):
    return time.strftime("%Y%m%dT%H%M%S", time.localtime(when))


def test_search_reads_a_file_and_its_time_rotated_files(idle_cell, tmp_path):
    """Newest first: the current file, then its rotations by the time in their names
    (not by the order of their names); files that are not rotations are not read.
    -file reads only the file it names."""
    folder = tmp_path / "h"
    folder.mkdir()
    now = time.time()
    (folder / "hist").write_text(_ad(5))
    (folder / f"hist.{_stamp(now - 100)}").write_text(_ad(4))
    (folder / f"hist.{_stamp(now - 200)}").write_text(_ad(2) + _ad(3))
    (folder / "hist.2026-01-01T00:00:00").write_text(_ad(1))          # the extended form
    for other in ("hist.old", "hist.1", "hist.20260101T000000Z", "history.20260101T000000", "xhist.20260101T000000"):
        (folder / other).write_text(_ad(99))
    base = str(folder / "hist")
    proc = idle_cell.run("condor_history", "-search", base, "-af", "ClusterId")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "5\n4\n3\n2\n1\n", "")
    assert idle_cell.run("condor_history", "-sea", base, "-forwards", "-af", "ClusterId").stdout == "1\n2\n3\n4\n5\n"
    assert idle_cell.run("condor_history", "-search", base, "-limit", "2", "-af", "ClusterId").stdout == "5\n4\n"
    assert idle_cell.run("condor_history", "-file", base, "-af", "ClusterId").stdout == "5\n"
    # as HTCondor's, -file wins over -search
    assert idle_cell.run("condor_history", "-search", base, "-file", base, "-af", "ClusterId").stdout == "5\n"
    # the rotations alone, the current file gone
    os.unlink(base)
    assert idle_cell.run("condor_history", "-search", base, "-af", "ClusterId").stdout == "4\n3\n2\n1\n"


def test_search_errors_as_htcondor(idle_cell, tmp_path):
    """No file of the name: nothing is listed (HTCondor's finder finds none, exit 0);
    a file found that cannot be read: the heading, its error, exit 1; no argument:
    HTCondor's words, exit 1."""
    proc = idle_cell.run("condor_history", "-search", str(tmp_path / "nosuch"))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, HEADING, "")
    proc = idle_cell.run("condor_history", "-search", str(tmp_path / "nosuch" / "history"), "-af", "ClusterId")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "hist").mkdir()                          # a folder of the name: cannot be read as a file
    proc = idle_cell.run("condor_history", "-search", str(folder / "hist"))
    assert (proc.returncode, proc.stdout) == (1, HEADING)
    assert proc.stderr == f"Error opening history file {folder / 'hist'}: Is a directory\n"
    proc = idle_cell.run("condor_history", "-search")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "", "Error: Argument -search requires another parameter\n")
    assert idle_cell.run("condor_history", "-help").stdout.count("-search <path>") == 1


def test_the_cells_rotated_history_is_read_and_searched(cell, tmp_path):
    """The daemon rotates its history as HTCondor's schedd does (history.<time>, two
    kept); plain condor_history reads the rotations, and so does -search naming the
    cell's history, with the private attributes of the caller's jobs."""
    spool = os.path.join(cell.root, "spool")
    first = submit(cell, "executable = /bin/echo\narguments = one\nqueue\n", cwd=str(tmp_path))
    wait_for(lambda: f"{first}.0" in history(cell))
    # pretend the history grew past its limit long ago, and rotated twice before
    os.rename(os.path.join(spool, "history"), os.path.join(spool, "history.20200101T000000"))
    for old in ("history.20190101T000000", "history.20180101T000000"):
        with open(os.path.join(spool, old), "w") as fh:
            fh.write(_ad(int(old[8:12])))
    from gridtools.daemon import history as daemon_history
    with open(os.path.join(spool, "history.20190101T000000"), "a") as fh:
        fh.write("x" * (daemon_history.MAX_HISTORY + 1) + "\n")      # (no ad: ignored)
    second = submit(cell, "executable = /bin/echo\narguments = two\nqueue\n", cwd=str(tmp_path))
    wait_for(lambda: f"{second}.0" in history(cell))
    for argv in ((), ("-search", os.path.join(spool, "history"))):
        assert history(cell, *argv, "-af", "ClusterId", "Args").splitlines()[:2] == \
            [f"{second} two", f"{first} one"]
    # the current file past its limit is rotated before the next ad: the oldest goes
    with open(os.path.join(spool, "history"), "a") as fh:
        fh.write("\n" * (daemon_history.MAX_HISTORY + 1))
    third = submit(cell, "executable = /bin/echo\narguments = three\nqueue\n", cwd=str(tmp_path))
    wait_for(lambda: f"{third}.0" in history(cell))
    rotated = sorted(n for n in os.listdir(spool) if n.startswith("history.2"))
    assert len(rotated) == 2 and rotated[0] == "history.20200101T000000"
    assert history(cell, "-af", "ClusterId", "Args").splitlines() == \
        [f"{third} three", f"{second} two", f"{first} one"]
    assert history(cell, "-search", os.path.join(spool, "history"), "-af", "ClusterId").split() == \
        [str(third), str(second), str(first)]


def _epochs(cell, *args):
    proc = cell.run("condor_history", "-epochs", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_epochs_an_ad_per_run(cell, tmp_path):
    """A job that ran twice (put back by its exit policy, then let go) leaves two epoch
    ads, newest first; its final ad is in the history, not among the epochs, and the
    epochs are not in the history."""
    text = ("executable = /bin/sh\narguments = \"-c 'exit 3'\"\n"
            "on_exit_remove = NumJobStarts >= 2\nqueue\n")
    cluster = submit(cell, text, cwd=str(tmp_path))
    jid = f"{cluster}.0"
    wait_for(lambda: jid in history(cell), timeout=30)
    rows = _epochs(cell, "-af", "ClusterId", "ProcId", "RunInstanceID", "ExitCode", "EpochAdType", "JobStatus",
                   "NumJobStarts").splitlines()
    assert rows == [f"{cluster} 0 1 3 EPOCH 2 2", f"{cluster} 0 0 3 EPOCH 2 1"]
    assert history(cell, "-af", "ClusterId").split() == [str(cluster)]
    final = json.loads(history(cell, "-json"))[0]
    ads = json.loads(_epochs(cell, "-json"))
    assert [a["RunInstanceID"] for a in ads] == [1, 0]
    for ad in ads:
        assert ad["RemoteHost"] and ad["JobCurrentStartDate"] > 0 and ad["EpochWriteDate"] >= ad["JobCurrentStartDate"]
        assert ad["Arguments"] == final["Arguments"] and ad["Cmd"] == "/bin/sh"     # the owner's private ones
    assert _epochs(cell, "-af", "RunInstanceID", "-limit", "1") == "1\n"
    assert _epochs(cell, "-af", "RunInstanceID", "-forwards") == "0\n1\n"
    assert _epochs(cell, "-af", "RunInstanceID", "-constraint", "RunInstanceID == 0") == "0\n"
    assert _epochs(cell, jid, "-af", "RunInstanceID") == "1\n0\n"
    assert _epochs(cell, str(cluster + 1000), "-af", "RunInstanceID") == ""
    long = _epochs(cell, "-l", "-limit", "1")
    assert "EpochAdType = \"EPOCH\"\n" in long and "RunInstanceID = 1\n" in long
    # the default table is the job table, a row per run
    lines = _epochs(cell).splitlines()
    assert lines[0] + "\n" == HEADING and len(lines) == 3 and all(line.startswith(jid + " ") for line in lines[1:])
    cmd = HEADING.index("CMD")
    assert lines[1][cmd:] == history(cell).splitlines()[1][cmd:] and lines[1][cmd:].startswith("sh -c ")
    # the file is the epoch history, with HTCondor's banner; -file reads it with -epochs only
    path = os.path.join(cell.root, "spool", "epoch_history")
    text = open(path).read()
    assert "Cmd = " not in text and "Arguments = " not in text     # (readable by every user: in the owner's file)
    assert oct(os.stat(path).st_mode & 0o777) == "0o644"
    banners = [line for line in text.splitlines() if line.startswith("***")]
    assert banners[0].startswith(f"*** EPOCH ClusterId={cluster} ProcId=0 RunInstanceId=0 Owner=\"")
    assert cell.run("condor_history", "-file", path, "-af", "ClusterId").stdout == ""
    assert cell.run("condor_history", "-file", path, "-epochs", "-af", "RunInstanceID").stdout == "1\n0\n"
    assert cell.run("condor_history", "-epochs", "-search", path, "-af", "RunInstanceID").stdout == "1\n0\n"


def test_epochs_of_a_removed_run(cell, tmp_path):
    """A run ended by condor_rm leaves its epoch ad (no exit code: it did not exit);
    a job removed before it ran leaves none."""
    running = submit(cell, "executable = /bin/sleep\narguments = 600\nqueue\n", cwd=str(tmp_path))
    wait_status(cell, f"{running}.0", 2)
    waiting = submit(cell, "executable = /bin/sleep\narguments = 1\nhold = true\nqueue\n", cwd=str(tmp_path))
    assert cell.run("condor_rm", str(running), str(waiting)).returncode == 0
    wait_for(lambda: f"{running}.0" in history(cell) and f"{waiting}.0" in history(cell), timeout=30)
    wait_for(lambda: _epochs(cell, "-af", "ClusterId") != "")
    assert _epochs(cell, "-af", "ClusterId", "RunInstanceID", "ExitCode", "JobStatus") == f"{running} 0 undefined 2\n"


def test_epochs_of_a_run_held_at_its_exit(cell, tmp_path):
    """A job its exit policy holds stays in the queue (no final ad in the history) but
    its run left its epoch ad, with its exit."""
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'exit 5'\"\non_exit_hold = true\nqueue\n",
                     cwd=str(tmp_path))
    wait_status(cell, f"{cluster}.0", 5)
    wait_for(lambda: _epochs(cell, "-af", "ClusterId") != "")
    assert _epochs(cell, "-af", "ClusterId", "RunInstanceID", "ExitCode", "ExitBySignal") == f"{cluster} 0 5 false\n"
    assert history(cell, "-af", "ClusterId") == ""


def _configure(cell, text):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(text)
    assert cell.run("condor_reconfig").returncode == 0


def _run_one(cell, cwd, word):
    cluster = submit(cell, f"executable = /bin/echo\narguments = {word}\nqueue\n", cwd=cwd)
    wait_for(lambda: f"{cluster}.0" in history(cell))
    return cluster


def _rotations(cell, name):
    spool = os.path.join(cell.root, "spool")
    return sorted(n for n in os.listdir(spool) if n.startswith(name + ".2"))


def test_the_history_rotates_by_the_size_and_count_condor_config_gives(cell, tmp_path):
    """MAX_HISTORY_LOG (an expression, as HTCondor reads an integer knob) and
    MAX_HISTORY_ROTATIONS: an append that would take the history past the size
    rotates it first, and one rotated file is kept; condor_history reads them all.
    The epoch history keeps its own knobs' defaults."""
    _configure(cell, "MAX_HISTORY_LOG = 3 * 1000\nMAX_HISTORY_ROTATIONS = 1\n")
    spool = os.path.join(cell.root, "spool")
    first = _run_one(cell, str(tmp_path), "one")
    size = os.path.getsize(os.path.join(spool, "history"))
    assert 1500 < size <= 3000 and _rotations(cell, "history") == []   # (an ad is over 1500 bytes)
    second = _run_one(cell, str(tmp_path), "two")       # two ads do not fit: the first is rotated
    rotated = _rotations(cell, "history")
    assert len(rotated) == 1
    with open(os.path.join(spool, rotated[0])) as fh:
        assert f"ClusterId = {first}\n" in fh.read()
    assert history(cell, "-af", "ClusterId", "Args").splitlines() == [f"{second} two", f"{first} one"]
    # the rotation named by the time has a second's precision: make the next one another's
    os.rename(os.path.join(spool, rotated[0]), os.path.join(spool, "history.20200101T000000"))
    third = _run_one(cell, str(tmp_path), "three")
    rotated = _rotations(cell, "history")
    assert len(rotated) == 1 and rotated[0] != "history.20200101T000000"   # one kept: the oldest went
    assert history(cell, "-af", "ClusterId").split() == [str(third), str(second)]
    assert _rotations(cell, "epoch_history") == []
    assert _epochs(cell, "-af", "ClusterId").split() == [str(third), str(second), str(first)]


def test_a_history_not_rotated_and_knobs_that_cannot_be_read(cell, tmp_path):
    """ENABLE_HISTORY_ROTATION = false: the history grows past MAX_HISTORY_LOG and is
    never rotated; the epoch history still is, by its own knobs. A rotation count below
    1 is refused in HTCondor's words in the daemon's messages, and its default kept."""
    _configure(cell, "MAX_HISTORY_LOG = 100\nENABLE_HISTORY_ROTATION = false\n"
                     "MAX_EPOCH_HISTORY_LOG = 100\nMAX_EPOCH_HISTORY_ROTATIONS = 0\n")
    first = _run_one(cell, str(tmp_path), "one")
    second = _run_one(cell, str(tmp_path), "two")
    third = _run_one(cell, str(tmp_path), "three")
    assert _rotations(cell, "history") == []
    assert history(cell, "-af", "ClusterId").split() == [str(third), str(second), str(first)]
    wait_for(lambda: len(_rotations(cell, "epoch_history")) == 2)    # (the default: two kept)
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert ("MAX_EPOCH_HISTORY_ROTATIONS in the condor configuration is too low (0).  Please set it "
            "to an integer expression in the range 1 to 9223372036854775807 (default 2). "
            "The default, 2, is used.") in messages


def test_a_history_rotated_daily(cell, tmp_path):
    """ROTATE_HISTORY_DAILY: a history last written on an earlier day (local time) is
    rotated before the next ad, whatever its size; one written today is not."""
    _configure(cell, "ROTATE_HISTORY_DAILY = True\n")
    spool = os.path.join(cell.root, "spool")
    first = _run_one(cell, str(tmp_path), "one")
    second = _run_one(cell, str(tmp_path), "two")
    assert _rotations(cell, "history") == []
    yesterday = time.time() - 86400
    os.utime(os.path.join(spool, "history"), (yesterday, yesterday))
    third = _run_one(cell, str(tmp_path), "three")
    rotated = _rotations(cell, "history")
    assert len(rotated) == 1
    with open(os.path.join(spool, rotated[0])) as fh:
        assert [int(line.split()[-1]) for line in fh if line.startswith("ClusterId = ")] == [first, second]
    fourth = _run_one(cell, str(tmp_path), "four")
    assert len(_rotations(cell, "history")) == 1
    assert history(cell, "-af", "ClusterId").split() == [str(fourth), str(third), str(second), str(first)]


def test_rotations_within_one_second_never_replace_each_other(tmp_path):
    """Three rotations in the same second: each keeps its own file (``.1``, ``.2`` after
    the first), they read as rotated at that time, in the order they were made; the
    oldest go past ``keep``."""
    from gridtools.spool import rotation
    path = str(tmp_path / "history")
    when = time.mktime((2026, 12, 1, 10, 10, 10, 0, 0, -1))
    for n in range(3):
        with open(path, "w") as fh:
            fh.write(f"ad {n}\n")
        rotation.rotate(path, keep=5, now=when)
    names = [os.path.basename(p) for p in rotation.find(path)]
    assert names == ["history.20261201T101010", "history.20261201T101010.1", "history.20261201T101010.2"]
    assert [open(p).read() for p in rotation.find(path)] == ["ad 0\n", "ad 1\n", "ad 2\n"]
    assert {rotation.when_rotated(name, "history") for name in names} == {when}
    with open(path, "w") as fh:
        fh.write("ad 3\n")
    rotation.rotate(path, keep=2, now=when + 1)
    assert [os.path.basename(p) for p in rotation.find(path)] == ["history.20261201T101010.2",
                                                                   "history.20261201T101011"]
    # past ``keep`` within the second: the newest are kept (a name the pruning freed is not
    # taken again, where it would sort first and go at once)
    for n in range(4, 8):
        with open(path, "w") as fh:
            fh.write(f"ad {n}\n")
        rotation.rotate(path, keep=2, now=when + 2)
    assert [open(p).read() for p in rotation.find(path)] == ["ad 6\n", "ad 7\n"]


def test_an_empty_history_is_rotated_as_one_that_holds_ads(tmp_path):
    """An existing history that is empty is rotated as HTCondor's schedd rotates one
    (MaybeRotateHistory looks at its size and time, not whether it holds an ad): by an
    ad that would take it past the size, and on a later day when rotated daily; a
    missing one is only begun."""
    from gridtools.daemon import history as daemon_history
    from gridtools.spool import rotation
    path = str(tmp_path / "history")
    daemon_history._append(path, "ad one\n", (4, 2, False, False))     # none yet: begun
    assert rotation.rotations(path) == [] and open(path).read() == "ad one\n"
    open(path, "w").close()
    daemon_history._append(path, "ad two\n", (4, 2, False, False))     # past 4 bytes
    assert [open(p).read() for p in rotation.rotations(path)] == [""]
    assert open(path).read() == "ad two\n"
    daily = str(tmp_path / "daily")
    open(daily, "w").close()
    yesterday = time.time() - 86400
    os.utime(daily, (yesterday, yesterday))
    daemon_history._append(daily, "ad three\n", (1 << 20, 2, True, False))
    assert [open(p).read() for p in rotation.rotations(daily)] == [""]
    assert open(daily).read() == "ad three\n"
    daemon_history._append(daily, "ad four\n", (1 << 20, 2, True, False))    # today: kept
    assert len(rotation.rotations(daily)) == 1 and open(daily).read() == "ad three\nad four\n"


def _dead(pid):
    """True once process ``pid`` (a daemon killed at a crash point) ended."""
    from qtools import process_state
    return process_state(pid) in (None, "Z")


def test_a_daemon_killed_once_a_job_left_the_queue_has_its_ad_in_the_history(cell, tmp_path):
    """The dispatcher appends the ads of the jobs that left the queue before it writes
    their states: killed right after the pass that wrote them, the next daemon finds
    the job gone and its ad in the history, once."""
    from faulttools import daemon_pid
    cell.stop_daemon()
    cell.run("gridtools", "daemon", "start", env={"GRIDTOOLS_CRASH_AT": "history:1"}, check=True)
    pid = daemon_pid(cell)
    cluster = submit(cell, "executable = /bin/echo\narguments = one\nqueue\n", cwd=str(tmp_path))
    wait_for(lambda: _dead(pid), timeout=30)
    assert history(cell, "-af", "ClusterId", "Args").splitlines() == [f"{cluster} one"]
    cell.start_daemon()
    wait_for(lambda: cell.run("condor_q", str(cluster), "-af", "ClusterId").stdout == "")
    assert history(cell, "-af", "ClusterId", "Args").splitlines() == [f"{cluster} one"]


@pytest.mark.parametrize("crash_at", ["journal:1", "answer:1"])
def test_a_daemon_killed_during_a_bulk_removal_leaves_every_ad_in_the_history_once(cell, tmp_path, crash_at):
    """qdel of 40 waiting Grid Engine jobs (one journal record) and a cluster of 600
    procs: the first pass appends 500 ads, the rest are named in history.pending. A
    daemon killed once the removal is in the journal (journal:1), or once the pass
    answered it (answer:1), leaves the next daemon to write the ads still missing:
    each of the 640 is in the history exactly once, and the pending list is gone."""
    from faulttools import daemon_pid
    jobs = []
    for _ in range(40):
        proc = cell.run("qsub", "-h", "-b", "y", "/bin/true", check=True)
        jobs.append(int(proc.stdout.split()[2]))
    cluster = submit(cell, "executable = /bin/true\nhold = true\nqueue 600\n", cwd=str(tmp_path))
    wanted = {(jid, 0) for jid in jobs} | {(cluster, proc) for proc in range(600)}
    listed = lambda: len(cell.run("condor_q", "-af", "ClusterId").stdout.split())     # noqa: E731
    wait_for(lambda: listed() == 640 and not unanswered(cell.root))   # (not a submission's answer)
    cell.stop_daemon()
    cell.run("gridtools", "daemon", "start", env={"GRIDTOOLS_CRASH_AT": crash_at}, check=True)
    pid = daemon_pid(cell)
    remover = subprocess.Popen(["qdel", "-u", "*"], env=cell.env, cwd=cell.root, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)      # (answered by the next daemon)
    wait_for(lambda: _dead(pid), timeout=30)
    cell.start_daemon()
    assert remover.wait(timeout=60) == 0, remover.stderr.read()
    pending = os.path.join(cell.root, "spool", "history.pending")
    wait_for(lambda: listed() == 0 and not os.path.exists(pending), timeout=60)
    found = [tuple(int(x) for x in line.split()) for line in history(cell, "-af", "ClusterId", "ProcId").splitlines()]
    assert len(found) == 640 and set(found) == wanted

