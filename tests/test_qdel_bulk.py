"""Bulk deletes and holds: ``qdel -u``, ``qhold -u``, ``qrls -u`` and many job ids at once.

The daemon picks the jobs of ``-u`` users itself, with the caller's rights, and
changes whole jobs as one set; at least JOURNAL_MIN of them are made durable by
one journal record before the answer (spool/journal), their state files are
written afterwards. A crash right after the answer (or between the record and
the answer) loses no deletion, and a journal replayed after a crash never undoes
a later change.
"""

import os
import re
import signal
import subprocess

import pytest

from conftest import unanswered, wait_for
from qtools import jid_of
from faulttools import daemon_pid, messages
from gridtools.daemon.journal import JOURNAL_MIN

MANY = JOURNAL_MIN + 8


def send(cell, monkeypatch, count, hold=True):
    """Submit ``count`` /bin/true jobs of root through qsub's own code; their ids."""
    monkeypatch.setenv("GRIDTOOLS_ROOT", cell.root)
    from gridtools.cli.sge import options, submit
    from gridtools.spool import ids, requests, wake
    req = options.fresh_request()
    req.update(binary=True, user_hold=hold)
    numbers = list(ids.allocate("job", count))
    for jid in numbers:
        requests.write("submit", {"job": submit.finish_spec(req, jid, "true", "/tmp", [], command="/bin/true")})
    wake.poke()
    return numbers


def queue(cell, monkeypatch, count, hold=True):
    """Submit ``count`` jobs (see ``send``) and wait until qstat shows them; their ids."""
    numbers = send(cell, monkeypatch, count, hold)
    wait_for(lambda: set(numbers) <= set(shown(cell)))
    return numbers


def shown(cell, *args):
    """job id -> state letters of every job plain qstat shows (of every user)."""
    rows = cell.run("qstat", "-u", "*", *args).stdout.splitlines()[2:]
    return {int(line.split()[0]): line.split()[4] for line in rows if line.strip()}


def journal_path(cell):
    return os.path.join(cell.root, "spool", "journal")


def daemon_gone(cell, pid):
    from qtools import process_state
    return process_state(pid) in (None, "Z")


def submit_as(cell, user, count, workdir):
    out = cell.run("sh", "-c", f"for i in $(seq {count}); do qsub -terse -h -b y true; done",
                   user=user, cwd=workdir, check=True).stdout
    return [int(word) for word in out.split()]


# ---------------------------------------------------------------- what users see

def test_qdel_u_deletes_every_job_of_the_user_in_id_order(cell, monkeypatch, workdir):
    running = int(cell.qsub("-terse", "-b", "y", "sleep", "100", cwd=workdir, check=True).stdout)
    wait_for(lambda: shown(cell).get(running) == "r")
    held = queue(cell, monkeypatch, MANY)
    array = int(cell.qsub("-terse", "-h", "-t", "1-3", "-b", "y", "true", cwd=workdir, check=True).stdout.split(".")[0])
    proc = cell.run("qdel", "-u", "root")
    assert proc.returncode == 0, proc.stderr
    want = [f"root has registered the job {running} for deletion"]
    want += [f"root has deleted job {jid}" for jid in held + [array]]
    assert proc.stdout.splitlines() == want
    assert set(shown(cell)) <= {running}            # shown at once: at most the dying job
    wait_for(lambda: not os.path.exists(journal_path(cell)))
    assert {cell.task_states(jid).get(1) for jid in held} == {"finished"}
    assert cell.run("qdel", "-u", "root").stdout in (
        "There is no job registered for the following users: root\n",
        f"root has registered the job {running} for deletion\n")


def test_qdel_of_many_ids_and_of_a_user_without_jobs(cell, monkeypatch):
    held = queue(cell, monkeypatch, MANY)
    proc = cell.run("qdel", *map(str, held[1:]), "999999")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [f"root has deleted job {jid}" for jid in held[1:]] + \
        ['denied: job "999999" does not exist']
    assert set(shown(cell)) == {held[0]}
    proc = cell.run("qdel", "-u", "nosuchuser")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "There is no job registered for the following users: nosuchuser\n", "")
    proc = cell.run("qdel", str(held[0]), "-u", "root")        # named and chosen: once
    assert proc.stdout == f"root has deleted job {held[0]}\n"


def test_with_a_job_list_u_is_a_filter(cell, workdir, users):
    """As Grid Engine's qmaster applies it: ``qdel '*' -u bob`` deletes bob's jobs, not
    everybody's (the jobs named, then every job of the users, before); qhold alike."""
    alice, bob = users[0], users[1]
    ours = [jid_of(cell.qsub("-h", "-N", "f", "-b", "y", "true", user=who, cwd=workdir)) for who in (alice, bob)]
    mine = jid_of(cell.qsub("-h", "-N", "f", "-b", "y", "true"))
    proc = cell.run("qdel", "*", "-u", "nosuchuser")
    assert (proc.returncode, proc.stdout) == (1, "The job * of user(s) nosuchuser does not exist\n")
    proc = cell.run("qrls", "-u", bob, str(ours[0]), str(mine))                 # (none of bob's named)
    assert (proc.returncode, proc.stdout) == (3, f"The job {ours[0]} of user(s) {bob} does not exist\n"
                                                 f"The job {mine} of user(s) {bob} does not exist\n")
    proc = cell.run("qdel", "*", "-u", bob)
    assert proc.stdout == f"root has deleted job {ours[1]}\n"
    assert {ours[0], mine} <= set(shown(cell)) and ours[1] not in shown(cell)
    proc = cell.run("qdel", "f", "-u", f"{alice},root")
    assert sorted(proc.stdout.splitlines()) == sorted([f"root has deleted job {ours[0]}", f"root has deleted job {mine}"])


def test_qdel_u_as_a_user_deletes_only_the_users_own_jobs(cell, workdir, users):
    alice, bob = users[0], users[1]
    mine = submit_as(cell, alice, MANY, workdir)
    theirs = submit_as(cell, bob, 2, workdir)
    proc = cell.run("qdel", "-u", f"{alice},{bob}", user=bob)
    assert proc.returncode == 1
    denied = [f'{bob} - you do not have the necessary privileges to delete the job "{jid}"' for jid in mine]
    assert proc.stdout.splitlines() == denied + [f"{bob} has deleted job {jid}" for jid in theirs]
    assert set(shown(cell)) == set(mine)
    proc = cell.run("qdel", "-u", "*", user=alice)
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [f"{alice} has deleted job {jid}" for jid in mine]
    assert shown(cell) == {}


def test_qhold_and_qrls_u_change_only_what_the_caller_may(cell, workdir, users):
    alice, bob = users[0], users[1]
    cell.run("qmod", "-d", "all.q", check=True)
    mine = submit_as(cell, alice, MANY, workdir)
    proc = cell.run("qrls", "-u", alice, user=bob)
    assert proc.returncode == 18
    assert proc.stdout.splitlines() == [f'denied: "{bob}" must be at least owner of job {jid} to change job '
                                        "attributes" for jid in mine]
    assert set(shown(cell).values()) == {"hqw"}
    proc = cell.run("qrls", "-u", alice, user=alice)
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [f"modified hold of job {jid}" for jid in mine]
    assert set(shown(cell).values()) == {"qw"}
    proc = cell.run("qhold", "-u", "*")
    assert proc.stdout.splitlines() == [f"modified hold of job {jid}" for jid in mine]
    assert set(shown(cell).values()) == {"hqw"}
    wait_for(lambda: not os.path.exists(journal_path(cell)))
    assert {cell.job_state(jid)["hold"] for jid in mine} == {"u"}


def test_qsub_sync_returns_for_a_job_purged_as_soon_as_it_ended(cell, workdir):
    """Jobs ending (or deleted) in bulk purge others at once: qsub -sync y reads the end
    of a job gone from the job store from its accounting record."""
    _keep_finished(cell, 0)
    proc = cell.run("qsub", "-sync", "y", "-b", "y", "sh", "-c", "'exit 3'", cwd=workdir, timeout=60)
    jid = int(proc.stdout.split()[2])
    assert proc.returncode == 3
    assert f"Job {jid} exited with exit code 3." in proc.stderr
    assert not os.path.exists(os.path.join(cell.root, "spool", "jobs", str(jid)))


def test_the_id_of_a_job_a_killed_daemon_stored_is_not_handed_out_again(cell, workdir):
    """A daemon killed after storing a job but before recording its id leaves the clients'
    id hint behind (here: set back by hand); the next daemon moves it on, so that once
    the job is deleted and purged at once its id does not go to a new job."""
    _keep_finished(cell, 0)
    first = int(cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True).stdout)
    cell.stop_daemon()
    with open(os.path.join(cell.root, "spool", "jobseqnum"), "w") as fh:
        fh.write(f"{first - 1}\n")
    cell.start_daemon()
    assert cell.run("qdel", str(first)).stdout == f"root has deleted job {first}\n"
    wait_for(lambda: not os.path.exists(os.path.join(cell.root, "spool", "jobs", str(first))))
    second = int(cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True).stdout)
    assert second > first


# ---------------------------------------------------------------- crashes

def _crashing_daemon(cell, phase):
    """Restart the daemon armed to crash at the first crash point of ``phase``. The
    submissions are answered first: qstat shows jobs not taken in yet, and a new daemon
    answering those would crash before the request under test is answered."""
    wait_for(lambda: not unanswered(cell.root))
    cell.stop_daemon()
    cell.run("gridtools", "daemon", "start", env={"GRIDTOOLS_CRASH_AT": f"{phase}:1"}, check=True)
    return daemon_pid(cell)


def _keep_finished(cell, count):
    """Set the global configuration's finished_jobs (how many finished jobs qstat -s z shows)."""
    path = os.path.join(cell.root, "etc", "conf", "global")
    with open(path) as fh:
        text = re.sub(r"^finished_jobs\s+\d+$", f"finished_jobs {count}", fh.read(), flags=re.M)
    with open(path, "w") as fh:
        fh.write(text)


def test_a_crash_right_after_the_answer_keeps_the_jobs_deleted(cell, monkeypatch, workdir):
    _keep_finished(cell, 0)                         # purged in the pass that deletes them
    cell.run("qmod", "-d", "all.q", check=True)
    waiting = queue(cell, monkeypatch, MANY, hold=False)
    pid = _crashing_daemon(cell, "answer")
    proc = cell.run("qdel", "-u", "root")
    assert proc.stdout.splitlines() == [f"root has deleted job {jid}" for jid in waiting]
    wait_for(lambda: daemon_gone(cell, pid))
    assert os.path.exists(journal_path(cell))       # the answer came before any state file
    assert os.path.isdir(os.path.join(cell.root, "spool", "jobs", str(waiting[0])))
    proc = cell.run("qstat")                        # no daemon: what it published, and the spool
    assert "is not running" in proc.stderr and proc.stdout == ""
    cell.start_daemon()
    assert shown(cell) == {}
    cell.run("qmod", "-e", "all.q", check=True)
    last = cell.run("qsub", "-terse", "-sync", "y", "-b", "y", "true", cwd=workdir, timeout=60)
    assert last.returncode == 0
    assert {int(rec[5]) for rec in cell.accounting()} == {int(last.stdout.split()[0])}
    wait_for(lambda: not os.path.exists(journal_path(cell)))
    assert not any(os.path.exists(os.path.join(cell.root, "spool", "jobs", str(jid))) for jid in waiting)


def test_a_crash_right_after_deleting_one_job_keeps_it_deleted(cell, monkeypatch, workdir):
    """Below the journal's threshold, a job purged in the pass that deleted it leaves the
    job store before the answer: nothing else would say it was deleted."""
    _keep_finished(cell, 0)
    cell.run("qmod", "-d", "all.q", check=True)
    jid = queue(cell, monkeypatch, 1, hold=False)[0]
    pid = _crashing_daemon(cell, "answer")
    assert cell.run("qdel", str(jid)).stdout == f"root has deleted job {jid}\n"
    wait_for(lambda: daemon_gone(cell, pid))
    assert not os.path.exists(os.path.join(cell.root, "spool", "jobs", str(jid)))
    cell.start_daemon()
    cell.run("qmod", "-e", "all.q", check=True)
    last = cell.run("qsub", "-terse", "-sync", "y", "-b", "y", "true", cwd=workdir, timeout=60)
    assert {int(rec[5]) for rec in cell.accounting()} == {int(last.stdout.split()[0])}


def test_a_crash_between_the_record_and_the_answer_answers_the_deletion(cell, monkeypatch):
    """Killed after the record, and again at the end of the next start-up (after the
    replay): the third daemon still answers that the jobs were deleted."""
    held = queue(cell, monkeypatch, MANY)
    pid = _crashing_daemon(cell, "journal")
    client = subprocess.Popen(["qdel", "-u", "root"], env=cell.env, stdout=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: daemon_gone(cell, pid))
        assert client.poll() is None                 # not answered: the daemon died first
        cell.run("gridtools", "daemon", "start", env={"GRIDTOOLS_CRASH_AT": "startup:2"})
        wait_for(lambda: daemon_gone(cell, daemon_pid(cell)))
        assert client.poll() is None
        cell.start_daemon()
        out, _ = client.communicate(timeout=60)
    finally:
        if client.poll() is None:
            client.send_signal(signal.SIGKILL)
    assert client.returncode == 0
    assert out.splitlines() == [f"root has deleted job {jid}" for jid in held]
    assert shown(cell) == {}


def test_a_recorded_request_is_still_answered_to_a_client_that_may_not_start_a_daemon(cell, monkeypatch):
    """Killed after the record and before the answer, with no daemon back within the five
    seconds a client that may not start one waits before it withdraws a queued request:
    the daemon had taken this one (spool/taken/), so the client cannot withdraw it and
    goes on waiting; the next daemon carries it out once and answers it."""
    from gridtools.spool.requests import COME_BACK
    held = queue(cell, monkeypatch, MANY)
    pid = _crashing_daemon(cell, "journal")
    client = subprocess.Popen(["qdel", "-u", "root"], env=dict(cell.env, GRIDTOOLS_NO_AUTOSTART="1"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: daemon_gone(cell, pid))
        assert os.path.exists(journal_path(cell))       # the deletion was recorded
        assert [n for n in os.listdir(os.path.join(cell.root, "spool", "taken")) if n.endswith(".delete")]
        with pytest.raises(subprocess.TimeoutExpired):
            client.wait(timeout=COME_BACK + 1)           # it does not give up
        cell.start_daemon()
        out, err = client.communicate(timeout=60)
    finally:
        if client.poll() is None:
            client.send_signal(signal.SIGKILL)
    assert (client.returncode, err) == (0, "")
    assert out.splitlines() == [f"root has deleted job {jid}" for jid in held]
    assert shown(cell) == {}
    assert "withdrawn" not in "".join(messages(cell))


def test_a_bulk_delete_on_a_full_disk_is_answered_once_its_record_is_written(monkeypatch, workdir):
    """The journal's record cannot be written: the request waits (qdel too), then is
    answered once there is room; the jobs are deleted and nothing is left behind."""
    from conftest import destroy_cell, make_cell
    from faulttools import fill, small_spool
    cell = make_cell(start=False)
    try:
        with small_spool(cell, 2048) as spool:
            cell.start_daemon()
            held = queue(cell, monkeypatch, MANY)
            # stored, not only shown: no submit queued or taken and not yet applied
            wait_for(lambda: not any(n.endswith(".submit") for n in unanswered(cell.root)))
            pid = daemon_pid(cell)
            os.kill(pid, signal.SIGSTOP)
            try:
                client = subprocess.Popen(["qdel", "-u", "root"], env=cell.env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True)
                wait_for(lambda: any(n.endswith(".delete") for n in os.listdir(os.path.join(spool, "requests"))))
                _room_for_messages(os.path.join(spool, "messages"))
                filler = fill(os.path.join(spool, "filler"))
            finally:
                os.kill(pid, signal.SIGCONT)
            # the daemon tried and could not write the record: nothing is answered meanwhile
            wait_for(lambda: any("cannot write the journal" in line for line in messages(cell)), timeout=30)
            assert client.poll() is None
            os.unlink(filler)
            out, err = client.communicate(timeout=60)
            assert client.returncode == 0, err
            assert out.splitlines() == [f"root has deleted job {jid}" for jid in held]
            assert shown(cell) == {}
            wait_for(lambda: not os.path.exists(os.path.join(spool, "journal")))
            assert {cell.task_states(jid).get(1) for jid in held} == {"finished"}
    finally:
        destroy_cell(cell)


def _room_for_messages(path):
    """Pad the daemon's log (it is stopped) with blank lines to just past a page, so that
    its next lines fit in the page the small spool's file system already gave it: the
    line saying that the journal could not be written is then written although the
    disk is full."""
    size = os.path.getsize(path) if os.path.exists(path) else 0
    with open(path, "a") as fh:
        fh.write("\n" * ((1 - size) % 4096))


# ---------------------------------------------------------------- the journal itself

def _ask(cell, daemon, *argv):
    proc = subprocess.Popen(list(argv), env=cell.env, stdout=subprocess.PIPE, text=True, cwd="/tmp")
    while proc.poll() is None:
        daemon.tick()
    return proc.communicate()[0]


def test_a_replayed_journal_does_not_undo_a_later_change(inproc, monkeypatch):
    """Released by a journalled qrls -u, then held again alone: after a crash the replay
    releases the others, not that one (its state file was written after the record)."""
    from gridtools.daemon import journal
    cell, start = inproc
    daemon = start()
    monkeypatch.setattr(journal, "feed", lambda state, most=None: False)    # states stay unwritten
    _ask(cell, daemon, "qmod", "-d", "all.q")
    numbers = send(cell, monkeypatch, MANY)
    daemon.tick()
    assert _ask(cell, daemon, "qrls", "-u", "root").count("modified hold") == MANY
    again = numbers[3]
    assert _ask(cell, daemon, "qhold", str(again)) == f"modified hold of job {again}\n"
    assert os.path.exists(journal_path(cell))
    daemon.lock.release()                           # killed: nothing more is written
    os.close(daemon.fifo)
    monkeypatch.undo()
    monkeypatch.setenv("GRIDTOOLS_ROOT", cell.root)
    monkeypatch.setenv("GRIDTOOLS_HOST", cell.host)
    second = start()
    holds = {jid: second.state.jobs[jid].hold for jid in numbers}
    assert holds == {jid: "u" if jid == again else "" for jid in numbers}
    second.tick()
    assert not os.path.exists(journal_path(cell))
    assert {jid: cell.job_state(jid)["hold"] for jid in numbers} == holds


def test_journal_records_read_back_and_a_torn_tail_ends_them(tmp_path, monkeypatch):
    from gridtools.spool import journal
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    os.makedirs(tmp_path / "spool")
    first = {"seq": 1, "op": "delete", "at": 5.0, "jobs": [[1, 9, 2]], "req": "r1"}
    second = {"seq": 2, "op": "hold", "at": 6.0, "jobs": [[3, 3, 1]], "letters": "u", "on": False, "req": "r2"}
    journal.append("t1", [first], begin=True)
    journal.append("t1", [second])
    assert journal.read() == ("t1", [first, second])
    assert os.stat(journal.path()).st_mode & 0o777 == 0o600
    with open(journal.path(), "a") as fh:
        fh.write('{"seq":3,"op":"del')
    assert journal.read() == ("t1", [first, second])
    journal.append("t2", [second], begin=True)          # a new journal replaces a left one
    assert journal.read() == ("t2", [second])
    journal.retire()
    assert journal.read() == (None, [])


def test_the_daemon_wakes_only_a_fifo_of_the_requester(tmp_path, monkeypatch):
    """The reply folder's ``wake`` entry is written only when it is a FIFO of the
    requester's: never a file, nor what a link leads to."""
    from gridtools.spool import replies
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    os.makedirs(tmp_path / "spool" / "replies")
    target = tmp_path / "target"
    target.write_text("keep\n")
    for name, plant in (("a", lambda p: os.symlink(target, p)), ("b", lambda p: p.write_text("keep\n"))):
        box = tmp_path / "spool" / "replies" / name
        os.mkdir(box, 0o700)
        plant(box / replies.WAKE)
        assert replies.answer(name, os.getuid(), 0, "out", "")
        assert replies.wait(name, timeout=5) == (0, "out", "")
    assert target.read_text() == "keep\n"
    replies.prepare("c")
    listen = os.open(tmp_path / "spool" / "replies" / "c" / replies.WAKE, os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert replies.answer("c", os.getuid(), 0, "out", "")
        assert os.read(listen, 8) == b"!"
    finally:
        os.close(listen)


def test_a_job_taken_in_while_qdel_looks_for_it_is_found(inproc, monkeypatch):
    """qdel finds no description of a job just submitted, and before it looks for the
    submit request the daemon has taken the job in (written it, answered, removed the
    request): the job is still one qdel acts on, not one that "does not exist"."""
    from gridtools.cli.sge import jobsel
    cell, start = inproc
    daemon = start()
    [jid] = send(cell, monkeypatch, 1)
    real = jobsel._submit_pending
    seen = []

    def taken_in_meanwhile(number):
        daemon.tick()
        seen.append(real(number))
        return seen[-1]
    monkeypatch.setattr(jobsel, "_submit_pending", taken_in_meanwhile)
    assert jobsel.live_in_spool(jid) is True
    assert seen == [False]                          # the request was gone when it looked
    assert jobsel.live_in_spool(jid + 1) is False   # (no such job, nothing pending)
    assert _ask(cell, daemon, "qdel", str(jid)) == f"root has deleted job {jid}\n"


def test_a_job_taken_in_while_qalter_w_v_looks_for_it_is_verified(inproc, monkeypatch):
    """The same moment for ``qalter -w v``: the job is verified, not "does not exist"."""
    from gridtools.cli.sge import qalter_verify
    from gridtools.spool import inbox
    cell, start = inproc
    daemon = start()
    [jid] = send(cell, monkeypatch, 1)
    real = inbox.pending_submits

    def taken_in_meanwhile():
        daemon.tick()
        return real()
    monkeypatch.setattr(inbox, "pending_submits", taken_in_meanwhile)
    spec = qalter_verify._spec(jid, {}, {})
    assert spec is not None and spec["id"] == jid
    assert real() == []                             # it was taken in when it looked
