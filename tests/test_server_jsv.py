"""The server JSV (sge_conf's jsv_url) in a running cell: the daemon runs it, as the user its
url names, on every Grid Engine job of every user; its corrections reach the job and qsub's
answer, its refusals reach the submitter with Grid Engine's words and queue nothing, its LOG
lines reach the daemon's messages; and while it is set, qalter may change only what
jsv_allowed_mod lists."""

import os
import re

from qtools import set_global

#: a server JSV: notes who runs it and what it was sent, refuses jobs named bad, adds
#: h_rt=100 and renames the others
JSV = """#!/bin/sh
. "$SGE_ROOT/util/resources/jsv/jsv_include.sh"
jsv_on_start() {
    jsv_send_env
}
jsv_on_verify() {
    echo "$(id -un) $(pwd) $(jsv_get_param CONTEXT) $(jsv_get_param CLIENT) $(jsv_get_param JOB_ID)" \\
         "$(jsv_get_param USER) $(jsv_get_env FROM_SUBMITTER)" >> "$(dirname "$0")/seen"
    if [ "$(jsv_get_param N)" = "bad" ]; then
        jsv_reject "no bad jobs here"
        return
    fi
    jsv_log_info "verified job $(jsv_get_param JOB_ID)"
    jsv_sub_add_param l_hard h_rt 100
    jsv_set_param N "checked_$(jsv_get_param N)"
    jsv_correct "corrected"
}
jsv_main
"""


def _jsv(workdir, text=JSV):
    path = os.path.join(workdir, "server.jsv")
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o755)
    seen = os.path.join(workdir, "seen")
    open(seen, "w").close()
    os.chmod(seen, 0o666)
    return path, seen


def _job_ids(cell):
    return [line.split()[0] for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]]


def test_the_server_jsv_corrects_and_refuses_the_jobs_of_every_user(cell, workdir, users):
    path, seen = _jsv(workdir)
    set_global(cell, jsv_url=f"script:{users[2]}@{path}")
    # (an argument with a line break must not pass for a parameter line: USER stays the submitter)
    good = cell.run("qsub", "-h", "-b", "y", "-v", "FROM_SUBMITTER=yes", "-N", "good", "true",
                    "x\nPARAM USER root", user=users[0], cwd=workdir)
    assert good.returncode == 0, good.stderr
    job_id = good.stdout.split()[2]
    assert good.stdout == f'Your job {job_id} ("checked_good") has been submitted\n'
    shown = cell.run("qstat", "-j", job_id).stdout
    assert "job_name:                   checked_good" in shown
    assert "hard resource_list:         h_rt=100" in shown
    bad = cell.run("qsub", "-h", "-b", "y", "-N", "bad", "true", user=users[1], cwd=workdir)
    assert (bad.returncode, bad.stdout, bad.stderr) == (1, "", "Unable to run job: no bad jobs here\nExiting.\n")
    assert _job_ids(cell) == [job_id]
    lines = open(seen).read().splitlines()
    assert lines[0] == f"{users[2]} / server qmaster {job_id} {users[0]} yes"
    assert lines[1] == f"{users[2]} / server qmaster {int(job_id) + 1} {users[1]} "
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert f"|I|server JSV: verified job {job_id}" in messages
    terse = cell.run("qsub", "-terse", "-h", "-b", "y", "-t", "1-3", "true", user=users[0], cwd=workdir)
    assert terse.returncode == 0 and terse.stdout.endswith(".1-3:1\n")


def test_a_jsv_the_daemon_cannot_run_or_that_breaks_the_protocol_refuses_the_job(cell, workdir, users):
    path, _seen = _jsv(workdir, "#!/bin/sh\necho STARTED\nread line\necho oops >&2\nsleep 5\n")
    os.chmod(workdir, 0o700)                    # (the JSV's user cannot reach it)
    try:
        set_global(cell, jsv_url=f"script:{users[2]}@{path}")
        proc = cell.run("qsub", "-h", "-b", "y", "true", cwd=workdir)
        assert (proc.returncode, proc.stderr) == (1, f'Unable to run job: start of JSV "{path}" failed\nExiting.\n')
    finally:
        os.chmod(workdir, 0o777)
    proc = cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "Unable to run job: JSV stderr: oops\nExiting.\n")
    assert _job_ids(cell) == []
    set_global(cell, jsv_url="none")
    proc = cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=workdir)
    assert proc.returncode == 0 and _job_ids(cell) == [proc.stdout.split()[2]]


def test_qalter_may_change_only_what_jsv_allowed_mod_lists_while_a_server_jsv_is_set(cell, workdir, users):
    path, _seen = _jsv(workdir, "#!/bin/sh\n. \"$SGE_ROOT/util/resources/jsv/jsv_include.sh\"\n"
                                "jsv_on_verify() {\n    jsv_accept\n}\njsv_main\n")
    proc = cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=workdir)
    job_id = proc.stdout.split()[2]
    assert cell.run("qalter", "-l", "h_rt=50", job_id, user=users[0]).returncode == 0     # (no JSV yet)
    set_global(cell, jsv_url=f"script:{path}")
    refused = cell.run("qalter", "-l", "h_rt=60", "-q", "all.q", job_id, user=users[0])
    assert (refused.returncode, refused.stdout) == (
        1, "rejected due to jsv_allowed_mod configuration which does not allow: l_hard,q_hard\n")
    assert cell.run("qalter", "-l", "h_rt=60", job_id).returncode == 1                   # (root too)
    named = cell.run("qalter", "-N", "renamed", job_id, user=users[0])
    assert (named.returncode, named.stdout) == (0, f"modified job name of job {job_id}\n")
    set_global(cell, jsv_allowed_mod="l_hard")
    assert cell.run("qalter", "-l", "h_rt=70", job_id, user=users[0]).returncode == 0
    assert "h_rt=70" in cell.run("qstat", "-j", job_id).stdout
    set_global(cell, jsv_allowed_mod="none")
    refused = cell.run("qalter", "-N", "again", job_id, user=users[0])
    assert (refused.returncode, refused.stdout) == (
        1, "No job modification allowed due to jsv_allowed_mod configuration\n")


def test_qhold_and_qrls_are_refused_while_jsv_allowed_mod_lacks_h(cell, workdir, users):
    path, _seen = _jsv(workdir, "#!/bin/sh\n. \"$SGE_ROOT/util/resources/jsv/jsv_include.sh\"\n"
                                "jsv_on_verify() {\n    jsv_accept\n}\njsv_main\n")
    job_id = cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=workdir).stdout.split()[2]
    set_global(cell, jsv_url=f"script:{path}")
    held = cell.run("qhold", "-h", "o", job_id)                          # (h is in the default list)
    assert (held.returncode, held.stdout) == (0, f"modified hold of job {job_id}\n")
    set_global(cell, jsv_allowed_mod="N,l_hard")
    refused = cell.run("qrls", job_id, user=users[0])
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        1, "rejected due to jsv_allowed_mod configuration which does not allow: h\n", "")
    assert cell.run("qrls", "-h", "o", job_id).returncode == 1                         # (root too)
    assert cell.run("qhold", job_id, user=users[0]).returncode == 1
    set_global(cell, jsv_allowed_mod="h")
    released = cell.run("qrls", "-h", "o", job_id)          # (the operator hold was kept: it is named)
    assert (released.returncode, released.stdout) == (0, f"modified hold of job {job_id}\n")
    set_global(cell, jsv_allowed_mod="none")
    refused = cell.run("qrls", job_id, user=users[0])
    assert (refused.returncode, refused.stdout) == (
        1, "No job modification allowed due to jsv_allowed_mod configuration\n")
    assert "hqw" in cell.run("qstat", "-u", "*").stdout



#: a server JSV that counts the jobs it verified: names each job after its count and
#: notes its pid and the count; refuses the jobs named bad
COUNTING = """#!/bin/sh
. "$SGE_ROOT/util/resources/jsv/jsv_include.sh"
count=0
jsv_on_start() {
    :
}
jsv_on_verify() {
    count=$((count + 1))
    echo "$$ $count" >> "$(dirname "$0")/seen"
    if [ "$(jsv_get_param N)" = "bad" ]; then
        jsv_reject "no bad jobs here"
        return
    fi
    jsv_set_param N "job$count"
    jsv_correct "counted"
}
jsv_main
"""


def _named(cell, workdir, user, name):
    proc = cell.run("qsub", "-h", "-b", "y", "-N", name, "true", user=user, cwd=workdir)
    return proc.returncode, (proc.stdout.split('("')[1].split('")')[0] if proc.returncode == 0 else proc.stderr)


def test_the_daemon_keeps_its_server_jsv_running_from_job_to_job_until_it_changes(cell, workdir, users):
    from conftest import wait_for
    from qtools import program_processes
    path, seen = _jsv(workdir, COUNTING)
    set_global(cell, jsv_url=f"script:{users[2]}@{path}")
    assert _named(cell, workdir, users[0], "a") == (0, "job1")
    assert _named(cell, workdir, users[1], "bad") == (1, "Unable to run job: no bad jobs here\nExiting.\n")
    assert _named(cell, workdir, users[1], "c") == (0, "job3")      # (kept after its refusal too)
    pids = {line.split()[0] for line in open(seen).read().splitlines()}
    assert len(pids) == 1
    (running,) = program_processes(path)
    assert str(running.pid) in pids and running.username() == users[2]
    with open(path, "a") as fh:                         # (a JSV whose file changed starts again)
        fh.write("# changed\n")
    assert _named(cell, workdir, users[0], "d") == (0, "job1")
    assert wait_for(lambda: not running.is_running(), timeout=10)
    (running,) = program_processes(path)
    running.kill()                                      # (one that left is started again)
    assert _named(cell, workdir, users[0], "e") == (0, "job1")
    (running,) = program_processes(path)
    cell.stop_daemon()                                  # (the daemon asks it to leave as it stops)
    assert wait_for(lambda: not running.is_running(), timeout=10)
    cell.start_daemon()
    assert _named(cell, workdir, users[0], "f") == (0, "job1")
    (running,) = program_processes(path)
    set_global(cell, jsv_url="none")
    assert _named(cell, workdir, users[0], "g") == (0, "g")
    assert wait_for(lambda: not running.is_running(), timeout=10)
    assert len(open(seen).read().splitlines()) == 6


#: a server JSV that notes the USER of each job and refuses gtbob's
POLICY = """#!/bin/sh
. "$SGE_ROOT/util/resources/jsv/jsv_include.sh"
jsv_on_start() {
    jsv_send_env
}
jsv_on_verify() {
    echo "$(jsv_get_param USER)" >> "$(dirname "$0")/seen"
    if [ "$(jsv_get_param USER)" = "{banned}" ]; then
        jsv_reject "user {banned} is banned"
        return
    fi
    jsv_accept "ok"
}
jsv_main
"""


def test_a_variable_name_cannot_speak_for_the_submitter_to_the_server_jsv(cell, workdir, users):
    path, seen = _jsv(workdir, POLICY.replace("{banned}", users[1]))
    set_global(cell, jsv_url=f"script:{path}")
    name = f"X\nPARAM USER {users[0]}\nBEGIN\nENV ADD Y"
    # -V leaves a variable whose name holds a line break out: the JSV sees the submitter
    proc = cell.run("qsub", "-V", "-h", "-b", "y", "true", user=users[1], cwd=workdir, env={name: "1"})
    assert (proc.returncode, proc.stderr) == (1, f"Unable to run job: user {users[1]} is banned\nExiting.\n")
    # -v naming one is refused before any JSV sees it
    proc = cell.run("qsub", "-v", f"{name}=1", "-h", "-b", "y", "true", user=users[1], cwd=workdir)
    assert proc.returncode != 0 and "control character" in proc.stderr
    assert open(seen).read().splitlines() == [users[1]]
    # (the next jobs of another user get their own verdicts)
    for _ in range(3):
        proc = cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=workdir)
        assert proc.returncode == 0, proc.stderr
    assert open(seen).read().splitlines() == [users[1]] + [users[0]] * 3


def test_what_a_kept_server_jsv_wrote_beyond_its_verdict_never_answers_for_the_next_job(cell, workdir, users):
    path, seen = _jsv(workdir, """#!/bin/sh
. "$SGE_ROOT/util/resources/jsv/jsv_include.sh"
jsv_on_start() {
    :
}
jsv_on_verify() {
    echo "$(jsv_get_param N)" >> "$(dirname "$0")/seen"
    jsv_accept "ok"
    if [ "$(jsv_get_param N)" = "twice" ]; then
        jsv_reject "an answer for nobody"
    fi
}
jsv_main
""")
    set_global(cell, jsv_url=f"script:{path}")
    assert _named(cell, workdir, users[1], "twice") == (0, "twice")
    assert _named(cell, workdir, users[0], "next") == (0, "next")
    assert _named(cell, workdir, users[0], "last") == (0, "last")


def test_a_server_jsv_that_takes_too_long_over_a_job_holds_the_daemon_no_longer_than_jsv_timeout(
        cell, workdir, users):
    import time
    path, _seen = _jsv(workdir, "#!/bin/sh\necho STARTED\nexec sleep 60\n")      # (never reads)
    set_global(cell, jsv_url=f"script:{path}", qmaster_params="JSV_TIMEOUT=2")
    began = time.monotonic()
    words = [str(n) for n in range(100000, 130000)]                     # (more than a pipe holds)
    proc = cell.run("qsub", "-h", "-b", "y", "true", *words, user=users[1], cwd=workdir)
    assert (proc.returncode, proc.stderr) == (
        1, f'Unable to run job: got no response from JSV script "{path}"\nExiting.\n')
    assert time.monotonic() - began < 15
    set_global(cell, jsv_url="none")
    assert cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=workdir).returncode == 0


def test_the_daemon_goes_on_with_its_passes_while_the_server_jsv_verifies_a_job(cell, workdir, users):
    """The verification runs beside the daemon's loop: a job that ends while the JSV takes
    its time over another job is reaped (its accounting record written) before that
    verification ends, and the verified job is then taken in with its corrections."""
    import subprocess
    import time
    from conftest import BIN, wait_for
    from qtools import wait_state
    slow = JSV.replace('jsv_on_verify() {\n', 'jsv_on_verify() {\n    sleep 6\n')
    path, seen = _jsv(workdir, slow)
    first = int(cell.qsub("-terse", "-b", "y", "sleep", "2", cwd=workdir, check=True).stdout)
    wait_state(cell, first, "r")
    set_global(cell, jsv_url=f"script:{path}", qmaster_params="JSV_TIMEOUT=30")
    began = time.monotonic()
    waiting = subprocess.Popen([os.path.join(BIN, "qsub"), "-terse", "-h", "-N", "later", "-b", "y", "true"],
                               env=cell.env, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        assert wait_for(lambda: any(r[5] == str(first) for r in cell.accounting()), timeout=20)
        reaped = time.monotonic() - began
        assert waiting.poll() is None, waiting.communicate()     # (still being verified)
        out, err = waiting.communicate(timeout=60)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert (waiting.returncode, err) == (0, ""), err
    assert reaped < time.monotonic() - began
    later = int(out)
    assert cell.run("qstat", "-j", str(later)).stdout.count("checked_later") == 1
    assert open(seen).read().count(f" {later} ") == 1


def test_a_jsv_started_while_the_daemon_acts_as_a_job_owner_still_runs_as_the_daemons_user(
        tmp_path, monkeypatch, users):
    """The daemon takes a job owner's identity for a moment (to write the owner's files):
    a verification beside it waits, to start its JSV (and to end one) with the daemon's
    own identity, never the owner's. (In process: the daemon's thread holds the owner's
    identity while the verification starts.)"""
    import pwd
    import sys
    import threading
    import time
    from gridtools.cli.sge import options, submit
    from gridtools.daemon import serverjsv
    from gridtools.exec.jobproc import owner_rights
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    req = options.fresh_request()
    req["binary"] = True
    spec = submit.finish_spec(req, 5, "true", str(tmp_path), [], command="true")
    seen = tmp_path / "euid"
    path = tmp_path / "who.jsv"
    path.write_text(f"#!{sys.executable}\nimport os\nopen({str(seen)!r}, 'w').write(str(os.geteuid()))\n")
    path.chmod(0o755)
    serverjsv._preload()
    alice = pwd.getpwnam(users[0])
    found = []
    with owner_rights({"owner": users[0], "uid": alice.pw_uid, "gid": alice.pw_gid}):
        thread = threading.Thread(target=lambda: found.append(serverjsv._verify(spec, f"script:{path}", 3, [])))
        thread.start()
        time.sleep(0.5)                 # (the verification starts meanwhile, as it may in the daemon)
        assert os.geteuid() == alice.pw_uid
    thread.join(timeout=30)
    serverjsv.KEPT.release()
    assert found and "does not exist" not in str(found[0][1]), found     # (it was found, and started:)
    assert seen.read_text() == str(os.geteuid())                        # (with the daemon's identity)


def test_jsv_allowed_mod_holds_for_a_grid_engine_job_changed_with_htcondor_commands(cell, workdir, users):
    path, _seen = _jsv(workdir, "#!/bin/sh\n. \"$SGE_ROOT/util/resources/jsv/jsv_include.sh\"\n"
                                "jsv_on_verify() {\n    jsv_accept\n}\njsv_main\n")
    job_id = cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=workdir).stdout.split()[2]
    set_global(cell, jsv_url=f"script:{path}")
    set_global(cell, jsv_allowed_mod="none")
    refusal = "No job modification allowed due to jsv_allowed_mod configuration\n"
    for args in (("condor_release", job_id), ("condor_hold", job_id), ("condor_prio", "-p", "-7", job_id),
                 ("condor_qedit", job_id, "Cmd", '"/bin/false"')):
        proc = cell.run(*args, user=users[0])
        assert (proc.returncode, proc.stderr) == (1, refusal), args
    assert "hqw" in cell.run("qstat", "-u", "*").stdout
    assert "/bin/false" not in cell.run("condor_q", "-l", job_id).stdout
    set_global(cell, jsv_allowed_mod="h")
    proc = cell.run("condor_qedit", job_id, "JobPrio", "3", user=users[0])
    assert (proc.returncode, proc.stderr) == (
        1, "rejected due to jsv_allowed_mod configuration which does not allow: p\n")
    assert cell.run("condor_release", job_id, user=users[0]).returncode == 0


def test_a_server_jsv_that_says_too_much_is_cut_short(cell, workdir, users):
    """The daemon keeps at most MOST_LOGGED LOG lines of one verification (one line says the
    rest were left out), refuses a job the JSV gives more arguments than a job may have
    before it makes them, and takes a JSV that sends endless text for broken."""
    from gridtools.cli.sge.jsv import MOST_LOGGED
    flood = ("#!/bin/sh\n. \"$SGE_ROOT/util/resources/jsv/jsv_include.sh\"\n"
             "jsv_on_start() {\n    :\n}\njsv_on_verify() {\n    i=0\n    while [ $i -lt 5000 ]; do echo \"LOG INFO line $i\"; i=$((i+1)); done\n"
             "    jsv_accept\n}\njsv_main\n")
    path, _seen = _jsv(workdir, flood)
    set_global(cell, jsv_url=f"script:{path}")
    proc = cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    with open(os.path.join(cell.root, "spool", "messages")) as fh:
        logged = [line for line in fh if "|server JSV: " in line]
    assert len(logged) == MOST_LOGGED + 1
    assert logged[-1].endswith(f"|W|server JSV: the JSV's LOG lines after the first {MOST_LOGGED} were left out\n")
    many = ("#!/bin/sh\n. \"$SGE_ROOT/util/resources/jsv/jsv_include.sh\"\n"
            "jsv_on_start() {\n    :\n}\njsv_on_verify() {\n    echo 'PARAM CMDARGS 300000000'\n    jsv_correct\n}\njsv_main\n")
    path, _seen = _jsv(workdir, many)
    proc = cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "Unable to run job: too many job arguments (more than 131072)\n"
                                                 "Exiting.\n")
    endless = "#!/bin/sh\nwhile :; do printf 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; done\n"
    path, _seen = _jsv(workdir, endless)
    proc = cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=workdir)
    assert (proc.returncode, proc.stderr) == (
        1, "Unable to run job: JSV sent a line longer than 1048576 bytes\nExiting.\n")


def test_a_jsv_url_that_could_verify_no_job_is_refused_when_it_is_set(cell, workdir):
    text = cell.run("qconf", "-sconf", "global", check=True).stdout
    path = os.path.join(workdir, "global")
    for url, why in (("bogus:/bin/true", 'type "bogus" in JSV URL is invalid'),
                     ("script:/nonexistent/x.jsv", 'JSV file "/nonexistent/x.jsv" does not exist'),
                     ("script:nosuchuser@/bin/true", 'unknown user "nosuchuser" in JSV URL'),
                     (f"script:{workdir}", f'JSV "{workdir}" is either not a file or not executable')):
        with open(path, "w") as fh:
            fh.write(re.sub(r"(?m)^jsv_url\s.*$", f"jsv_url {url}", text))
        proc = cell.run("qconf", "-Mconf", path)
        assert (proc.returncode, proc.stderr) == (1, f"denied: jsv_url: {why}\n"), url
    assert "jsv_url                      none" in cell.run("qconf", "-sconf", "global").stdout
    proc = cell.run("qsub", "-h", "-b", "y", "true", cwd=workdir)
    assert proc.returncode == 0
