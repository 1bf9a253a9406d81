"""Attacks through the request folder, by real unprivileged users against a root daemon.

Each test plays a hostile user (gtbob) who writes requests by hand instead of
using the commands, and asserts what the victim (gtalice, the other users, the
daemon) sees: no file created outside the spool, no job changed, the daemon
alive with the same pid, commands answering, malformed requests refused with
one line.
"""

import os
import re
import time

import pytest

from attack_tools import (alive, daemon_pid, forge_request, forge_submit, poke, requests_dir,
                          rss_kib, user_py, wait_taken)
from conftest import wait_for


def _held_job(cell, user, workdir):
    proc = cell.qsub("-terse", "-h", "-b", "y", "true", user=user, cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout)


def _jobs_dir(cell):
    return os.path.join(cell.root, "spool", "jobs")


def _queries_work(cell, users):
    for user in (None,) + tuple(users[:2]):
        proc = cell.run("qstat", "-u", "*", user=user, timeout=20)
        assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------- point 1: the job id

@pytest.mark.parametrize("make_id", [
    lambda target, jobs: os.path.relpath(target, jobs),           # ../../../<workdir>/evil
    lambda target, jobs: target,                                  # an absolute path
    lambda target, jobs: "7",                                     # a number as text
    lambda target, jobs: -3,
    lambda target, jobs: 0,
    lambda target, jobs: 10 ** 12,
    lambda target, jobs: True,
    lambda target, jobs: 2.5,
    lambda target, jobs: [1],
])
def test_job_id_from_a_request_never_names_a_path(cell, workdir, users, make_id):
    bob = users[1]
    pid = daemon_pid(cell)
    target = os.path.join(workdir, "evil")
    bad = make_id(target, _jobs_dir(cell))
    _jid, name, answer = forge_submit(cell, bob, {"id": bad}, reply=True)
    assert answer is not None, "no answer to a refused submit"
    code, out, err = answer
    assert code != 0
    assert re.fullmatch(r"error: invalid submit request: [^\n]+\n", err), err
    assert not os.path.lexists(target), "the daemon created files outside its spool"
    assert os.listdir(workdir) == []
    assert not os.path.exists(os.path.join(_jobs_dir(cell), str(bad)))
    assert alive(pid) and daemon_pid(cell) == pid
    _queries_work(cell, users)
    assert "invalid submit request" in open(os.path.join(cell.root, "spool", "messages")).read()


def test_submit_of_an_id_claimed_by_someone_else_is_refused(cell, workdir, users):
    alice, bob = users[0], users[1]
    mine = _held_job(cell, alice, workdir)
    _jid, name, answer = forge_submit(cell, bob, {"id": mine + 1000}, reply=True)
    assert answer[0] != 0 and "was not claimed" in answer[2]
    assert not os.path.exists(os.path.join(_jobs_dir(cell), str(mine + 1000)))
    # an id another user's job holds: that job is left alone
    _jid, name, answer = forge_submit(cell, bob, {"id": mine}, reply=True)
    assert answer[0] != 0
    spec = open(os.path.join(_jobs_dir(cell), str(mine), "job.yaml")).read()
    assert f'owner: "{alice}"' in spec


BAD_FIELDS = [
    {"name": "two\nlines"},
    {"name": "esc\x1b[31mred"},
    {"name": ""},
    {"name": 5},
    {"tasks": "1-5"},
    {"tasks": [0, 5, 1]},
    {"tasks": [5, 1, 1]},
    {"tasks": [1, 5, 0]},
    {"tasks": [1, 2 ** 40, 1]},
    {"tc": -1},
    {"pe": ["smp", "x", 1]},
    {"pe": ["../smp", 1, 1]},
    {"resources": {"hard": {"h_rt": 5}, "soft": {}}},
    {"resources": {"hard": {"h_rt": "abc"}, "soft": {}}},
    {"resources": {"hard": {"h_vmem": "-5G"}, "soft": {}}},
    {"resources": "h_rt=5"},
    {"queues": {"hard": "all.q", "soft": []}},
    {"env": {"A": 5}},
    {"env": {"A=B": "c"}},
    {"env": {"A": "nul\x00byte"}},
    {"cwd": 7},
    {"cwd": "relative/dir"},
    {"stdout": "abc"},
    {"stdout": [[None, 5]]},
    {"priority": 5000},
    {"priority": "5"},
    {"user_hold": "yes"},
    {"hold_jid": "1"},
    {"submit_time": "now"},
    {"args": [1]},
    {"command": None},
    {"job_script": "/etc/shadow"},
    {"account": "a:b"},
    {"start_at": float("nan")},
    {"submit_time": 2 ** 63 - 1},
    {"start_at": 2 ** 62},
    {"deadline": 1e300},
    {"mail_options": "xyz"},
    {"name": "n\u2028forged"},
    {"name": "a\u202eevil"},
    {"account": "ac\u2029ct"},
    {"ar": -1},
    {"gid": "0"},
]


@pytest.mark.parametrize("fields", BAD_FIELDS, ids=[repr(f)[:40] for f in BAD_FIELDS])
def test_malformed_job_descriptions_are_refused(cell, workdir, users, fields):
    bob = users[1]
    pid = daemon_pid(cell)
    jid, name, answer = forge_submit(cell, bob, fields, reply=True)
    code, out, err = answer
    assert code != 0, f"accepted: {fields}"
    assert re.fullmatch(r"error: invalid submit request: [^\n]+\n", err), err
    assert not os.path.exists(os.path.join(_jobs_dir(cell), str(jid)))
    assert alive(pid) and daemon_pid(cell) == pid
    _queries_work(cell, users)


def test_forged_owner_and_unknown_keys(cell, workdir, users):
    """A request that claims another owner gets the file owner's identity; keys the
    daemon does not know are dropped; fields only the daemon sets are replaced."""
    import pwd
    bob = users[1]
    entry = pwd.getpwnam(bob)
    forged = {"owner": "root", "uid": 0, "gid": 0, "group": "root", "predecessors": [1],
              "version": 99, "pe_granted": "evil", "evil_key": {"x": 1},
              "stdout": [[None, os.path.join(workdir, "who")]], "join": True,
              "command": "/usr/bin/id", "args": ["-u"]}
    jid, name, answer = forge_submit(cell, bob, forged, reply=True)
    assert answer[0] == 0, answer
    cell.wait_finished(jid)
    assert open(os.path.join(workdir, "who")).read() == f"{entry.pw_uid}\n"
    spec = open(os.path.join(_jobs_dir(cell), str(jid), "job.yaml")).read()
    assert f'owner: "{bob}"' in spec and f"uid: {entry.pw_uid}" in spec
    assert "evil_key" not in spec and "pe_granted" not in spec and "version" not in spec


def test_the_daemon_sets_the_submission_time_whatever_the_request_says(cell, workdir, users):
    """A forged early submission time would put a job before everybody else's (the
    queue breaks ties on it, waiting time raises urgency): the daemon takes its own."""
    bob = users[1]
    before = time.time()
    jid, name, answer = forge_submit(cell, bob, {"submit_time": 1, "user_hold": True}, reply=True)
    assert answer[0] == 0, answer
    spec = open(os.path.join(_jobs_dir(cell), str(jid), "job.yaml")).read()
    stamp = float(re.search(r"^submit_time: ([0-9.e+]+)$", spec, re.M).group(1))
    assert before - 1 <= stamp <= time.time() + 1
    listing = cell.run("qstat", "-u", "*", check=True).stdout
    assert "01/01/1970" not in listing and time.strftime("%m/%d/%Y") in listing
    qdate = cell.run("condor_q", str(jid), "-af", "QDate", check=True).stdout.split()
    assert qdate and before - 1 <= int(qdate[0]) <= time.time() + 1


def test_a_job_is_dated_when_its_request_was_queued_which_its_writer_cannot_move_back(cell, workdir, users):
    """The submission time is when the request was queued by the kernel's clock (the last
    change of its file), not when a stopped daemon got to it, nor a time its writer
    chose: setting the file's times back (utime) dates the job when that was done."""
    from attack_tools import continue_process, stop_process
    bob = users[1]
    pid = daemon_pid(cell)
    stop_process(pid)
    try:
        jid, name, _ = forge_submit(cell, bob, {"submit_time": 1, "user_hold": True})
        path = os.path.join(requests_dir(cell), name)
        user_py(cell, bob, f"import os; os.utime({path!r}, (1, 1))", check=True)
        queued = os.lstat(path).st_ctime
        wait_for(lambda: time.time() >= queued + 1.5)       # (the daemon takes it in seconds later)
    finally:
        continue_process(pid)
    wait_taken(cell, name)
    spec = open(os.path.join(_jobs_dir(cell), str(jid), "job.yaml")).read()
    assert float(re.search(r"^submit_time: ([0-9.e+]+)$", spec, re.M).group(1)) == queued
    qdate = cell.run("condor_q", str(jid), "-af", "QDate", check=True).stdout.split()
    assert qdate == [str(int(queued))]


def test_leaving_a_group_takes_it_from_the_next_submission(cell, workdir, users):
    """A job runs with the group its submitter chose only while the submitter belongs to
    it: membership is read again (after intake.ACCOUNT_KEPT seconds), not remembered."""
    import grp
    import subprocess
    import pwd
    from gridtools.daemon.intake import ACCOUNT_KEPT
    bob, group = users[1], "gtrevoked"

    def group_of_a_job_asking_for(gid, name):
        """The group id a job of bob's that asks for group ``gid`` runs with."""
        out = os.path.join(workdir, name)
        jid, _, answer = forge_submit(cell, bob, {"gid": gid, "command": "/usr/bin/id", "args": ["-g"],
                                                  "stdout": [[None, out]]}, reply=True)
        assert answer[0] == 0, answer
        cell.wait_finished(jid)
        return int(open(out).read())
    subprocess.run(["groupadd", "-f", group], check=True)
    try:
        gid = grp.getgrnam(group).gr_gid
        subprocess.run(["usermod", "-aG", group, bob], check=True)
        assert group_of_a_job_asking_for(gid, "first") == gid
        subprocess.run(["gpasswd", "-d", bob, group], check=True, capture_output=True)
        time.sleep(ACCOUNT_KEPT + 0.2)           # the documented time membership is kept
        assert group_of_a_job_asking_for(gid, "second") == pwd.getpwnam(bob).pw_gid
    finally:
        subprocess.run(["groupdel", group], capture_output=True)


# ---------------------------------------------------------------- the other request kinds

BAD_BODIES = [
    ("delete", {"targets": "abc"}),
    ("delete", {"targets": [{"id": "../1"}]}),
    ("delete", {"targets": [{"id": 1, "tasks": [[1, 10 ** 12, 1]]}]}),
    ("delete", {"targets": [{"id": 1, "tasks": "1-2"}]}),
    ("delete", {"targets": [None]}),
    ("hold", {"targets": [{"id": 1}], "letters": 5}),
    ("hold", {"targets": [{"id": 1}], "letters": "x"}),
    ("alter", {"targets": [{"id": None}], "changes": {}}),
    ("alter", {"targets": [{"id": 1}], "changes": []}),
    ("alter", {"targets": [{"id": 1}], "changes": {"name": "a\nb"}}),
    ("alter", {"targets": [{"id": 1}], "changes": {"tasks": [1, 2, 1]}}),
    ("qmod", {"op": "suspend", "scope": "job", "items": "x"}),
    ("qmod", {"op": ["x"], "items": []}),
    ("qmod", {"op": "suspend", "scope": "job", "items": [{"word": 5}]}),
    ("qconf", {"op": "add", "object": ["x"]}),
    ("qconf", {"op": 5}),
    ("host", {"op": "drain", "hosts": "abc"}),
    ("submit", []),
    ("submit", {"job": "x"}),
    ("nonsense", {}),
]


@pytest.mark.parametrize("kind,body", BAD_BODIES, ids=[f"{k}:{str(b)[:30]}" for k, b in BAD_BODIES])
def test_malformed_requests_of_every_kind_are_refused(cell, workdir, users, kind, body):
    alice, bob = users[0], users[1]
    jid = _held_job(cell, alice, workdir)
    pid = daemon_pid(cell)
    _fill_ids(body, jid)
    began = time.time()
    name, answer = forge_request(cell, bob, kind, body)
    assert answer is not None, "no answer"
    code, out, err = answer
    assert code != 0
    text = out + err
    assert text.count("\n") == 1 and text.startswith(("error: ", "denied: ")), text
    assert not re.search(r"has no attribute|unhashable|object is not|Traceback|Error\b|\w+\(", text), \
        f"a Python error leaked: {text}"
    assert time.time() - began < 20
    assert alive(pid) and daemon_pid(cell) == pid
    assert cell.task_states(jid).get(1) in (None, "pending")
    _queries_work(cell, users)


OWN_BAD_CHANGES = [
    {"resources": {"hard": [1]}},
    {"resources": {"hard": {"slots": [2]}}},
    {"resources": {"soft": "x"}},
    {"resources": ["hard"]},
]


@pytest.mark.parametrize("changes", OWN_BAD_CHANGES, ids=[str(c)[:40] for c in OWN_BAD_CHANGES])
def test_malformed_changes_of_ones_own_job_are_refused_in_one_line(cell, workdir, users, changes):
    """The owner passes the rights check: the shape of each change is refused in words,
    not as an internal failure."""
    alice = users[0]
    jid = _held_job(cell, alice, workdir)
    pid = daemon_pid(cell)
    _name, answer = forge_request(cell, alice, "alter", {
        "targets": [{"id": jid, "tasks": None}], "changes": changes, "context_ops": [],
        "hold_add": "", "hold_remove": ""})
    assert answer is not None, "no answer"
    code, out, err = answer
    text = out + err
    assert code != 0 and text.count("\n") == 1 and text.startswith(("error: ", "denied: ")), text
    assert "could not be applied" not in text and not re.search(r"has no attribute|Traceback", text), text
    assert alive(pid) and daemon_pid(cell) == pid
    assert cell.task_states(jid).get(1) in (None, "pending")


def _fill_ids(body, jid):
    """Point the sample bodies at a real job of the victim."""
    if isinstance(body, dict):
        for target in body.get("targets") or []:
            if isinstance(target, dict) and target.get("id") == 1:
                target["id"] = jid


# ---------------------------------------------------------------- planted entries

def test_fifo_and_other_non_files_in_requests_hang_nothing(cell, workdir, users):
    alice, bob = users[0], users[1]
    pid = daemon_pid(cell)
    folder = requests_dir(cell)
    stamp = time.time_ns()
    user_py(cell, bob, f"""
    import os
    folder = {folder!r}
    os.mkfifo(os.path.join(folder, "{stamp:020d}-1.submit"), 0o666)
    os.mkfifo(os.path.join(folder, "{stamp:020d}-2.delete"), 0o666)
    os.mkfifo(os.path.join(folder, "{stamp:020d}-2.delete.script"), 0o666)
    os.symlink("/dev/zero", os.path.join(folder, "{stamp:020d}-3.submit"))
    os.symlink("/dev/zero", os.path.join(folder, "{stamp:020d}-3.submit.script"))
    os.mkdir(os.path.join(folder, "{stamp:020d}-4.hold"))
    os.mkfifo(os.path.join(folder, "{stamp:020d}-5.alter"), 0o666)
    """, check=True)
    poke(cell)
    for user in (alice, bob, None):
        proc = cell.run("qstat", "-u", "*", user=user, timeout=20)
        assert proc.returncode == 0, proc.stderr
    proc = cell.qsub("-terse", "-b", "y", "true", user=alice, cwd=workdir, timeout=20)
    assert proc.returncode == 0, proc.stderr
    cell.wait_finished(int(proc.stdout), timeout=20)
    wait_for(lambda: not any(n.startswith(f"{stamp:020d}") for n in os.listdir(folder)))
    assert alive(pid) and daemon_pid(cell) == pid


def test_oversized_request_is_refused(cell, workdir, users):
    """A request of more than MAX_REQUEST (8 MiB) is not read (the client refuses to
    write one; bob writes it by hand)."""
    bob = users[1]
    jid = _held_job(cell, bob, workdir)
    pid = daemon_pid(cell)
    before = rss_kib(pid)
    name = "%020d-7.delete" % time.time_ns()
    user_py(cell, bob, f"""
    import os
    folder = {requests_dir(cell)!r}
    body = 'kind: "delete"\\ntargets:\\n  -\\n    id: {jid}\\n    tasks: null\\n'
    body += 'pad: "' + "x" * (9 << 20) + '"\\n'
    with open(os.path.join(folder, ".big"), "w") as fh:
        fh.write(body)
    os.rename(os.path.join(folder, ".big"), os.path.join(folder, {name!r}))
    """, check=True)
    poke(cell)
    wait_taken(cell, name)
    # (refused and said so: the daemon is done with it)
    wait_for(lambda: "too large" in open(os.path.join(cell.root, "spool", "messages")).read())
    assert cell.task_states(jid).get(1) in (None, "pending"), "an oversized request was applied"
    assert alive(pid) and rss_kib(pid) - before < 20_000


def test_request_swapped_for_a_symlink_is_never_applied(cell, workdir, users):
    """bob keeps swapping his request for a symlink to a file of alice's that holds a
    delete request for alice's job: the daemon must not take it as alice's."""
    alice, bob = users[0], users[1]
    jid = _held_job(cell, alice, workdir)
    bait = os.path.join(workdir, "alice-notes.yaml")
    cell.run("sh", "-c", f"printf 'kind: \"delete\"\\ntargets:\\n  -\\n    id: {jid}\\n    tasks: null\\n"
             f"force: false\\n' > {bait}", user=alice, check=True)
    folder = requests_dir(cell)
    user_py(cell, bob, f"""
    import os, time
    folder, bait = {folder!r}, {bait!r}
    end = time.time() + 2.0
    i = 0
    while time.time() < end:
        i += 1
        name = os.path.join(folder, "%020d-9.delete" % time.time_ns())
        tmp = os.path.join(folder, ".swap%d" % i)
        with open(tmp, "w") as fh:
            fh.write('kind: "delete"\\ntargets: []\\n')
        os.rename(tmp, name)
        link = os.path.join(folder, ".link%d" % i)
        os.symlink(bait, link)
        os.rename(link, name)
        fd = os.open(os.path.join(folder, "..", "wakeup"), os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"!")
        os.close(fd)
    """, check=True)
    wait_for(lambda: not [n for n in os.listdir(folder) if n.endswith("-9.delete")])
    assert cell.task_states(jid).get(1) in (None, "pending"), "alice's job was deleted"


def test_bad_script_companions(cell, workdir, users):
    """A submit whose script companion is missing, a FIFO, a link or too large is refused."""
    bob = users[1]
    pid = daemon_pid(cell)
    jid, name, answer = forge_submit(cell, bob, {"binary": False}, reply=True)
    assert answer[0] != 0 and "script" in answer[2]
    assert not os.path.exists(os.path.join(_jobs_dir(cell), str(jid)))
    assert alive(pid)


def test_a_grid_engine_job_cannot_ask_to_hold_its_consumables_once(cell, workdir, users):
    """per_job_requests is an HTCondor job's (the daemon sets it aside for any other): a
    forged qsub request -pe smp 2 -l gpu=1 that claims it still needs a GPU per slot,
    and waits on a host with one."""
    cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=1", "testhost", check=True)
    jid, _name, answer = forge_submit(cell, users[0], {"pe": ["smp", 2, 2], "per_job_requests": ["gpu"],
                                                       "resources": {"hard": {"gpu": "1"}, "soft": {}}},
                                      reply=True)
    assert answer[0] == 0, answer
    assert not re.search(r"per_job", open(os.path.join(_jobs_dir(cell), str(jid), "job.yaml")).read())
    wait_for(lambda: "cannot run in PE" in cell.run("qstat", "-j", str(jid)).stdout)


def test_an_htcondor_job_cannot_ask_to_hold_any_consumable_once(cell, workdir, users):
    """An HTCondor job's per_job_requests is the daemon's own (its gpu request and the
    machine resources it asks for, as condor_submit makes it): a forged condor_submit
    request of two CPUs (smp 2) asking scratch=1G, a MEMORY consumable, that claims to
    hold it once for both slots still needs 1G per slot, and waits on a host that
    offers 1G; a machine resource it asks for (licence) is still held once."""
    from qtools import add_complex
    add_complex(cell, "scratch sc MEMORY <= YES YES 0 0")
    add_complex(cell, "licence lic INT <= YES YES 0 0")
    cell.run("qconf", "-mattr", "exechost", "complex_values", "scratch=1G,licence=1", "testhost", check=True)
    ad = 'Cmd = "/bin/true"\nJobUniverse = 5\nRequestCpus = 2\nIwd = "/tmp"\n'

    def forged(hard, claimed):
        jid, _name, answer = forge_submit(cell, users[0], {"pe": ["smp", 2, 2], "per_job_requests": claimed,
                                                           "resources": {"hard": hard, "soft": {}},
                                                           "condor_ad": ad}, reply=True)
        assert answer[0] == 0, answer
        import yaml
        with open(os.path.join(_jobs_dir(cell), str(jid), "job.yaml")) as fh:
            return jid, yaml.safe_load(fh).get("per_job_requests")
    jid, held_once = forged({"scratch": "1G"}, ["scratch"])
    assert held_once is None
    wait_for(lambda: "cannot run in PE" in cell.run("qstat", "-j", str(jid)).stdout)
    assert cell.task_states(jid).get(1) in (None, "pending")
    cell.run("qdel", str(jid), user=users[0], check=True)
    jid, held_once = forged({"licence": "1"}, ["licence", "scratch"])
    assert held_once == ["licence"]
    cell.wait_finished(jid)


def test_an_htcondor_job_meets_the_write_level_whatever_its_request_says(cell, users, workdir):
    """With DENY_WRITE naming bob, condor_submit refuses him; his own client, leaving out
    the mark of an HTCondor command's request (and the tool's own check), is refused by
    the daemon as well, because the job it queues is an HTCondor one. qsub still works
    for him: Grid Engine's rules apply to Grid Engine jobs."""
    bob = users[1]
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("DENY_WRITE = gtbob@*/*\n")
    assert cell.run("condor_reconfig").returncode == 0
    sub = os.path.join(workdir, "w.sub")
    with open(sub, "w") as fh:
        fh.write("executable = /bin/true\nhold = true\nqueue\n")
    assert cell.run("condor_submit", sub, cwd=workdir, user=bob).returncode == 1
    code = f"""
    from gridtools.spool import requests
    original = requests.write
    def write(kind, body, **kw):
        if isinstance(body, dict):
            body.pop("dialect", None)
        return original(kind, body, **kw)
    requests.write = write
    from gridtools.cli.condor import submit
    submit.check_write = lambda: None
    submit.daemon_may_refuse = lambda knobs: True      # (the daemon's answer is waited for)
    sys.exit(submit.main([{sub!r}]))
    """
    proc = user_py(cell, bob, code)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "PERMISSION DENIED" in proc.stderr or "DENIED" in proc.stderr, proc.stderr
    assert cell.run("condor_q", "-allusers", "-af", "ClusterId").stdout == ""
    assert cell.qsub("-h", "-b", "y", "true", user=bob, cwd=workdir).returncode == 0


AR_BAD = [
    {"users": ["alice\nowner                          root"]},
    {"users": ["two words"]},
    {"mail_list": ["x@y\n--------\nid                             77"]},
    {"mail_options": "e\nm: forged"},
    {"mail_options": "x"},
    {"ckpt": "c\nk"},
    {"queues": ["all.q\nx"]},
    {"masterq": ["a b"]},
    {"resources": {"h_rt": "60\nowner root"}},
]


@pytest.mark.parametrize("fields", AR_BAD, ids=[repr(f)[:40] for f in AR_BAD])
def test_malformed_reservation_fields_are_refused(cell, workdir, users, fields):
    """A reservation request written by hand may not carry what qrsub would not write:
    every entry that qrstat shows on a line of its own to every user is one line (user
    and queue names one word), mail options are letters of qrsub -m."""
    bob = users[1]
    cell.run("qconf", "-au", bob, "arusers", check=True)
    body = {"id": 0, "verify": "v", "duration": 60, **fields}
    _name, answer = forge_request(cell, bob, "ar_submit", body)
    code, _out, err = answer
    assert code == 1 and re.fullmatch(r"error: invalid [^\n]+\n", err), answer
