"""What one user sees of another user's jobs in a shared cell: the private parts of a
job (environment, paths, arguments, mail addresses) are left out, never shown with a
false value, and no file the other user can read carries them; the public facts
(uid, gid, job type, state, hosts) are shown with their true values."""

import os
import pwd
import re

from attack_tools import user_py
from condortools import submit, wait_status
from conftest import wait_for

TOKEN = "tok4712secret"
#: a command that runs five minutes with TOKEN among its arguments (as $0 of sh -c)
RUN = f"executable = /bin/sh\narguments = \"-c 'sleep 300' {TOKEN}\"\n"
SHOWN = f"sh -c sleep 300 {TOKEN}"


def _ad(text):
    """name -> value text of a condor_q -l / condor_history -l ad."""
    return dict(line.split(" = ", 1) for line in text.splitlines() if " = " in line)


def test_qstat_j_leaves_private_fields_out_and_shows_true_public_ones(cell, workdir, users):
    alice, bob = users[0], users[1]
    jid = int(cell.qsub("-terse", "-N", "pend", "-h", "-M", f"{alice}@mailhost", "-m", "be", "-R", "y",
                        "-j", "y", "-r", "n", "-notify", "-b", "y", "sleep", TOKEN,
                        user=alice, cwd=workdir).stdout)
    wait_for(lambda: str(jid) in cell.run("qstat", "-u", "*", user=bob).stdout)
    entry = pwd.getpwnam(alice)
    mine = cell.run("qstat", "-j", str(jid), user=alice).stdout
    theirs = cell.run("qstat", "-j", str(jid), user=bob).stdout
    for label, value in (("uid", entry.pw_uid), ("gid", entry.pw_gid), ("job_type", "binary"),
                         ("owner", alice), ("job_name", "pend"), ("reserve", "y"), ("merge", "y"),
                         ("restart", "n"), ("mail_options", "be"), ("notify", "TRUE")):
        line = f"{label + ':':<28}{value}"
        assert line in mine.splitlines() and line in theirs.splitlines(), (label, theirs)
    assert f"mail_list:                  {alice}@mailhost" in mine and f"job_args:                   {TOKEN}" in mine
    assert "script_file:                sleep" in mine
    for label in ("mail_list:", "env_list:", "job_args:", "script_file:", "sge_o_"):
        assert label not in theirs, (label, theirs)
    xml = cell.run("qstat", "-j", str(jid), "-xml", user=bob).stdout
    assert f"<JB_uid>{entry.pw_uid}</JB_uid>" in xml and f"<JB_gid>{entry.pw_gid}</JB_gid>" in xml
    for tag in ("<JB_notify>true</JB_notify>", "<JB_merge_stderr>true</JB_merge_stderr>",
                "<JB_reserve>true</JB_reserve>", "<JB_restart>2</JB_restart>"):
        assert tag in xml, tag
    for tag in ("JB_mail_list", "JB_job_args", "JB_script_file", "JB_env_list"):
        assert tag not in xml, tag
    assert TOKEN not in theirs + xml


def test_condor_q_ad_of_another_users_running_job_holds_only_true_values(cell, workdir, users):
    alice, bob = users[0], users[1]
    cluster = submit(cell, RUN + 'environment = "SECRET=x"\noutput = /dev/null\nnotify_user = a@example.org\n'
                           'output_destination = https://user:token@example.org/out\nqueue\n', cwd=workdir,
                     user=alice)
    ge = int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "sleep", "300",
                       user=alice, cwd=workdir).stdout)
    for job in (cluster, ge):
        wait_status(cell, f"{job}.0", 2, user=bob)
        mine = _ad(cell.run("condor_q", "-l", str(job), user=alice).stdout)
        theirs = _ad(cell.run("condor_q", "-l", str(job), user=bob).stdout)
        shown = mine.get("Args") or mine.get("Arguments")
        assert TOKEN in shown if job == cluster else shown == '"300"', shown
        assert "Cmd" in mine and "Iwd" in mine
        for name in ("Arguments", "Args", "Cmd", "Environment", "Iwd", "Out", "Err", "In", "NotifyUser",
                     "OutputDestination"):
            assert name not in theirs, (job, name)
        if job == cluster:
            assert "NotifyUser" in mine and "OutputDestination" in mine
        # every attribute another user sees has the value its owner sees
        assert {n: v for n, v in theirs.items() if mine.get(n) != v} == {}, job
        for name in ("JobStatus", "CurrentHosts", "RemoteHost", "User", "GlobalJobId", "Owner"):
            assert theirs.get(name) == mine[name], (job, name)
        assert theirs["CurrentHosts"] == "1" and theirs["JobStatus"] == "2"
        af = cell.run("condor_q", str(job), "-af", "Arguments", "CurrentHosts", "Cmd", user=bob).stdout
        assert af == "undefined 1 undefined\n"
    rows = cell.run("condor_q", "-nobatch", str(cluster), user=bob).stdout
    assert re.search(rf"^ *{cluster}\.0 .* sh$", rows, re.M), rows
    rows = cell.run("condor_q", "-nobatch", str(cluster), user=alice).stdout
    assert re.search(rf"^ *{cluster}\.0 .* {SHOWN}$", rows, re.M), rows


def test_no_file_another_user_reads_carries_the_arguments(cell, workdir, users):
    """The status snapshot, the job listing and the history hold no argument of a job;
    its owner's views take them from files only the owner reads."""
    alice, bob = users[0], users[1]
    running = submit(cell, RUN + "output = /dev/null\nqueue\n", cwd=workdir, user=alice)
    done = submit(cell, f"executable = /bin/echo\narguments = {TOKEN}\noutput = /dev/null\nqueue\n",
                  cwd=workdir, user=alice, name="done.sub")
    wait_status(cell, f"{running}.0", 2)
    wait_for(lambda: f"{done}.0" in cell.run("condor_history", str(done)).stdout)
    # every file under the cell bob can open
    proc = user_py(cell, bob, f"""
    import os
    for top, dirs, names in os.walk({cell.root!r}):
        for name in names:
            try:
                with open(os.path.join(top, name), "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if {TOKEN.encode()!r} in data:
                print(os.path.join(top, name))
    """, check=True)
    assert proc.stdout == ""
    private = os.path.join(cell.root, "spool", "private", str(pwd.getpwnam(alice).pw_uid))
    st = os.stat(private)
    assert (st.st_uid, st.st_mode & 0o777) == (pwd.getpwnam(alice).pw_uid, 0o400)
    rows = cell.run("condor_q", "-nobatch", user=alice).stdout
    assert re.search(rf"^ *{running}\.0 .* {SHOWN}$", rows, re.M), rows
    rows = cell.run("condor_q", "-nobatch", "-allusers").stdout
    assert re.search(rf"^ *{running}\.0 .* {SHOWN}$", rows, re.M), rows


def test_condor_history_hides_what_condor_q_hides(cell, workdir, users):
    alice, bob = users[0], users[1]
    cluster = submit(cell, f"executable = /bin/echo\narguments = {TOKEN}\noutput = /dev/null\nqueue\n",
                     cwd=workdir, user=alice)
    wait_for(lambda: f"{cluster}.0" in cell.run("condor_history", str(cluster)).stdout)
    for user in (alice, None):
        ad = _ad(cell.run("condor_history", "-l", str(cluster), user=user).stdout)
        assert (ad["Cmd"], ad["Out"], ad["Iwd"]) == ('"/bin/echo"', '"/dev/null"', f'"{workdir}"'), user
        assert TOKEN in (ad.get("Args") or ad.get("Arguments")), user
    theirs = cell.run("condor_history", "-l", str(cluster), user=bob).stdout
    assert f"ClusterId = {cluster}" in theirs and f'Owner = "{alice}"' in theirs
    ad = _ad(theirs)
    for name in ("Cmd", "Arguments", "Args", "Iwd", "Out", "Err", "In", "Environment"):
        assert name not in ad, name
    assert cell.run("condor_history", str(cluster), "-af", "Cmd", "Args", user=bob).stdout == \
        "undefined undefined\n"
    table = cell.run("condor_history", str(cluster), user=bob).stdout.splitlines()
    assert table[1].startswith(f"{cluster}.0") and table[1].endswith(" ") and TOKEN not in table[1]
    mine = cell.run("condor_history", str(cluster), user=alice).stdout.splitlines()
    assert mine[1].endswith(f"echo {TOKEN}")
    # the job epoch history (an ad per run) as well
    for user in (alice, None):
        ad = _ad(cell.run("condor_history", "-epochs", "-l", str(cluster), user=user).stdout)
        assert (ad["Cmd"], ad["RunInstanceID"]) == ('"/bin/echo"', "0"), user
    theirs = _ad(cell.run("condor_history", "-epochs", "-l", str(cluster), user=bob).stdout)
    assert theirs["ClusterId"] == str(cluster) and "Cmd" not in theirs and "Iwd" not in theirs


def test_a_user_who_rewrites_their_private_file_fools_nobody_else(cell, workdir, users):
    """A user owns the file of their jobs' arguments and may rewrite it: root's views
    take from it only what concerns that user's jobs."""
    alice, bob = users[0], users[1]
    mine = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n", cwd=workdir,
                  user=alice)
    theirs = submit(cell, "executable = /bin/sleep\narguments = 301\nhold = true\nqueue\n", cwd=workdir,
                    user=bob, name="bob.sub")
    private = os.path.join(cell.root, "spool", "private", str(pwd.getpwnam(alice).pw_uid))
    wait_for(lambda: os.path.exists(private) and f" {theirs}.0" in cell.run("condor_q", "-nobatch").stdout)
    user_py(cell, alice, f"""
    import marshal, os
    os.chmod({private!r}, 0o600)
    with open({private!r}, "wb") as fh:
        fh.write(marshal.dumps({{{mine}: {{"args": ["{TOKEN}"]}}, {theirs}: {{"args": ["{TOKEN}"]}}}}))
    """, check=True)
    rows = cell.run("condor_q", "-nobatch").stdout
    assert re.search(rf"^ *{theirs}\.0 .* sleep 301$", rows, re.M), rows
    assert re.search(rf"^ *{mine}\.0 .* sleep {TOKEN}$", rows, re.M), rows


#: run counters, hosts and times of a proc's ad: HTCondor shows them to every user
COUNTERS = ("NumJobStarts", "JobCurrentStartDate", "RemoteHost", "JobStatus", "NumJobCompletions",
            "RemoteWallClockTime", "ExitBySignal", "TotalSuspensions", "CommittedTime", "LastRemoteHost",
            "HoldReasonCode", "NumShadowStarts", "JobRunCount")


def test_other_users_see_the_run_counters_the_owner_sees(cell, workdir, users):
    alice, bob = users[0], users[1]
    cluster = submit(cell, RUN + "output = /dev/null\nqueue\n", cwd=workdir, user=alice)
    jid = f"{cluster}.0"

    def both():
        mine = cell.run("condor_q", "-allusers", jid, "-af", *COUNTERS, user=alice).stdout
        theirs = cell.run("condor_q", "-allusers", jid, "-af", *COUNTERS, user=bob).stdout
        return mine, theirs

    wait_status(cell, jid, 2, user=bob)
    mine, theirs = both()
    assert mine.split()[0] == "1" and "undefined" not in mine.split()[:9], mine
    assert mine.split()[-2:] == ["1", "1"] and theirs == mine
    found = cell.run("condor_q", "-allusers", "-const", "NumJobStarts > 0", "-af", "ClusterId", user=bob)
    assert str(cluster) in found.stdout.split()
    full_mine = _ad(cell.run("condor_q", "-l", jid, user=alice).stdout)
    full_theirs = _ad(cell.run("condor_q", "-l", jid, user=bob).stdout)
    private = {"Arguments", "Args", "Cmd", "Environment", "Env", "Iwd", "Out", "Err", "In", "UserLog"}
    assert set(full_mine) - set(full_theirs) <= private, set(full_mine) - set(full_theirs)
    assert not private & set(full_theirs)
    cell.run("condor_hold", jid, user=alice)
    wait_status(cell, jid, 5, user=bob)
    # once the run has left its slot: counted, its slot the last one, as the owner sees it
    wait_for(lambda: both()[0].split()[2] == "undefined" and both()[1] == both()[0])
    mine, theirs = both()
    assert mine.split()[0] == "1" and "@" in mine.split()[-4] and theirs == mine, (mine, theirs)
