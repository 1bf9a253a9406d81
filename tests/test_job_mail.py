"""Mail about jobs, end to end: ``qsub -m``/``-M`` and HTCondor's ``notification``.

The cell's mailer is a script that keeps what it was called with (its user, its
arguments, the message) in a file of its own, as ``mail -s subject address``
would take it.
"""

import glob
import os

from condortools import submit, wait_events
from conftest import wait_for
from qtools import jid_of, set_global

MAILER = """#!/bin/sh
out=$(mktemp {folder}/mail.XXXXXX)
{{ echo "user=$(id -un)"; printf 'arg=%s\\n' "$@"; echo "--"; cat; }} > "$out.part"
mv "$out.part" "$out.txt"; rm -f "$out"
"""


def _mailer(workdir):
    folder = os.path.join(workdir, "mails")
    os.mkdir(folder)
    os.chmod(folder, 0o1777)
    path = os.path.join(workdir, "mailer.sh")
    with open(path, "w") as fh:
        fh.write(MAILER.format(folder=folder))
    os.chmod(path, 0o755)
    return path, folder


def _mails(folder):
    """(user, [arguments], message) of each mail sent so far."""
    found = []
    for path in sorted(glob.glob(os.path.join(folder, "mail.*.txt"))):
        head, _, body = open(path).read().partition("--\n")
        lines = head.splitlines()
        found.append((lines[0][5:], [line[4:] for line in lines[1:]], body))
    return found


def _subjects(folder):
    return sorted(args[1] for _user, args, _body in _mails(folder))


def test_qsub_m_mails_the_start_end_suspension_and_deletion_of_a_job(cell, users, workdir):
    alice = users[0]
    mailer, folder = _mailer(workdir)
    set_global(cell, mailer=mailer)
    host = cell.host
    done = jid_of(cell.qsub("-m", "be", "-M", "alice@example.org,-oQ/tmp/x", "-N", "mailtest", "-b", "y",
                            "true", user=alice, cwd=workdir))
    cell.wait_finished(done)
    wait_for(lambda: len(_mails(folder)) >= 2)
    started, complete = sorted(_mails(folder), key=lambda m: m[1][1], reverse=True)
    assert started[:2] == (alice, ["-s", f"Job {done} (mailtest) Started", "alice@example.org"])
    assert started[2].startswith(f"Job {done} (mailtest) Started\n User       = {alice}\n Queue      = all.q@")
    assert complete[:2] == (alice, ["-s", f"Job {done} (mailtest) Complete", "alice@example.org"])
    lines = complete[2].splitlines()
    assert lines[0] == f"Job {done} (mailtest) Complete"
    assert [line.split("=")[0].strip() for line in lines[1:]] == [
        "User", "Queue", "Host", "Start Time", "End Time", "User Time", "System Time", "Wallclock Time",
        "CPU", "Max vmem", "Exit Status"]
    assert lines[-1] == " Exit Status      = 0"
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert f"job {done}: no mail to '-oQ/tmp/x': not an address" in messages
    # -m s and -m a, to the owner at the submit host by default
    for path in glob.glob(os.path.join(folder, "*")):
        os.unlink(path)
    job = jid_of(cell.qsub("-m", "as", "-N", "sleeper", "-b", "y", "sleep", "60", user=alice, cwd=workdir))
    assert wait_for(lambda: any(row.split()[0] == str(job) and row.split()[4] == "r"
                                for row in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]), timeout=20)
    assert cell.run("qmod", "-sj", str(job), user=alice).returncode == 0
    wait_for(lambda: len(_mails(folder)) == 1)
    assert cell.run("qmod", "-usj", str(job), user=alice).returncode == 0
    wait_for(lambda: len(_mails(folder)) == 2)
    assert cell.run("qdel", str(job), user=alice).returncode == 0
    cell.wait_finished(job)
    wait_for(lambda: len(_mails(folder)) == 3)
    assert _subjects(folder) == [f"Job {job} (sleeper) Continued", f"Job {job} (sleeper) Killed",
                                 f"Job {job} (sleeper) Suspended"]
    assert {args[2] for _user, args, _body in _mails(folder)} == {f"{alice}@{host}"}
    killed = next(body for _user, args, body in _mails(folder) if args[1].endswith("Killed"))
    assert killed == f"Job {job} (sleeper)  was killed by {alice}@{host}\n"
    # no mail without -m
    quiet = jid_of(cell.qsub("-b", "y", "true", user=alice, cwd=workdir))
    cell.wait_finished(quiet)
    assert len(_mails(folder)) == 3


def test_a_failed_run_is_mailed_with_its_reason(cell, users, workdir):
    mailer, folder = _mailer(workdir)
    set_global(cell, mailer=mailer)
    job = jid_of(cell.qsub("-m", "a", "-wd", "/nonexistent/folder", "-N", "lost", "-b", "y", "true",
                           user=users[0], cwd=workdir))
    owners = lambda: [mail for mail in _mails(folder) if mail[1][2] != "root"]     # (not administrator_mail's)
    (_user, args, body), = wait_for(owners, timeout=20)
    assert args[1] == f"Job {job} (lost) Set in error state"
    assert "failed changing into working directory because:\n" in body
    assert body.endswith('Use "qmod -c <jobid>" to clear job error state\nonce the problem is fixed.\n')


def test_htcondor_notification_mails_the_end_of_a_job(cell, users, workdir):
    folder = _condor_mailer(cell, workdir)
    done = submit(cell, "executable = /bin/true\nnotification = complete\nnotify_user = me@example.org\n"
                        "log = n.log\nqueue\n", cwd=workdir, user=users[0])
    quiet = submit(cell, "executable = /bin/true\nnotification = never\nlog = n.log\nqueue\n",
                   cwd=workdir, user=users[0])
    wait_events(os.path.join(workdir, "n.log"), f"{done}.0", [0, 1, 5])
    wait_events(os.path.join(workdir, "n.log"), f"{quiet}.0", [0, 1, 5])
    (user, args, body), = wait_for(lambda: _mails(folder))
    assert (user, args) == (users[0], ["-s", f"[Condor] Condor Job {done}.0", "me@example.org"])
    lines = body.splitlines()
    assert lines[:5] == ["This is an automated email from the Condor system",
                         f'on machine "{cell.host}".  Do not reply.', "", f"Condor job {done}.0",
                         "\t/bin/true"]
    assert "exited normally with status 0" in lines


def test_an_owner_has_a_few_mailers_running_at_most(cell, users, workdir):
    """Mail of each task of a large array would have the daemon start as many mailers:
    while MOST_RUNNING of an owner's run, a new mail waits for them (it is not lost)."""
    import subprocess
    from gridtools.daemon.jobmail import MOST_RUNNING
    slow = os.path.join(workdir, "slowmailer.sh")
    with open(slow, "w") as fh:
        fh.write("#!/bin/sh\nexec sleep 29.71\n")
    os.chmod(slow, 0o755)
    set_global(cell, mailer=slow)
    job = jid_of(cell.qsub("-t", f"1-{MOST_RUNNING + 3}", "-m", "b", "-b", "y", "true", user=users[0], cwd=workdir))
    try:
        cell.wait_finished(job, tasks=range(1, MOST_RUNNING + 4), timeout=60)

        def noted():
            text = open(os.path.join(cell.root, "spool", "messages")).read()
            return text if text.count(f"job {job}: ") >= MOST_RUNNING + 3 else None
        text = wait_for(noted, timeout=20)
        assert text.count(f"I|job {job}: mail to ") == MOST_RUNNING + 3
        assert text.count("mailers of its user run") == 3
        assert f"job {job}: no mail" not in text
    finally:
        subprocess.run(["pkill", "-u", users[0], "-f", "sleep 29.71"], check=False)


def test_qrsub_m_mails_the_start_end_and_deletion_of_a_reservation(cell, users, workdir):
    import re
    import time as clock
    mailer, folder = _mailer(workdir)
    set_global(cell, mailer=mailer)
    start = clock.strftime("%Y%m%d%H%M.%S", clock.localtime(clock.time() + 6))
    proc = cell.run("qrsub", "-a", start, "-d", "2", "-N", "soon", "-m", "be", "-M", "ops@example.org")
    assert proc.returncode == 0, proc.stderr        # (its start was still ahead when qrsub ran)
    first = int(re.search(r"advance reservation (\d+)", proc.stdout).group(1))
    later = cell.run("qrsub", "-a", clock.strftime("%Y%m%d%H%M", clock.localtime(clock.time() + 7200)),
                     "-d", "1:0:0", "-N", "later", "-m", "e")
    second = int(re.search(r"advance reservation (\d+)", later.stdout).group(1))
    assert cell.run("qrdel", str(second)).returncode == 0
    wait_for(lambda: len(_mails(folder)) == 3, timeout=20)
    mails = {args[1]: (user, args[2], body) for user, args, body in _mails(folder)}
    assert set(mails) == {f"Advance Reservation {first} (soon) Started", f"Advance Reservation {first} (soon) Finished",
                          f"Advance Reservation {second} (later) Deleted"}
    user, address, body = mails[f"Advance Reservation {first} (soon) Finished"]
    assert (user, address) == ("root", "ops@example.org")
    assert body.startswith(f"Advance Reservation {first} (soon) Finished\n User       = root\n End Time = ")
    assert mails[f"Advance Reservation {second} (later) Deleted"][1] == f"root@{cell.host}"


def _condor_mailer(cell, workdir, extra=""):
    mailer, folder = _mailer(workdir)
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(f"MAIL = {mailer}\n{extra}")
    assert cell.run("condor_reconfig").returncode == 0
    return folder


def test_htcondor_mails_the_holds_and_removals_it_makes_as_notification_asks(cell, users, workdir):
    """HTCondor mails a hold it makes of a running or starting proc, and a removal by the
    job's policy while it runs: Always mails each; Error mails a failed start but not a
    hold by the job's policy after a successful run, nor the owner's condor_hold."""
    folder = _condor_mailer(cell, workdir, "PERIODIC_EXPR_INTERVAL = 1\n")
    user = users[0]
    body = "log = h.log\nnotify_user = me@example.org\n"
    failed = submit(cell, f"executable = /bin/true\noutput = {workdir}/no/such/out\nnotification = error\n"
                          f"{body}queue\n", cwd=workdir, user=user)
    policy = submit(cell, "executable = /bin/sleep\narguments = 300\nnotification = always\n"
                          f"periodic_hold = JobStatus == 2\n{body}queue\n", cwd=workdir, user=user)
    removed = submit(cell, "executable = /bin/sleep\narguments = 300\nnotification = always\n"
                           f"periodic_remove = JobStatus == 2\n{body}queue\n", cwd=workdir, user=user)
    quiet = submit(cell, "executable = /bin/sleep\narguments = 300\nnotification = error\n"
                         f"periodic_hold = JobStatus == 2\n{body}queue\n", cwd=workdir, user=user)
    owners = submit(cell, f"executable = /bin/sleep\narguments = 300\nnotification = always\n{body}queue\n",
                    cwd=workdir, user=user)
    log = os.path.join(workdir, "h.log")
    wait_events(log, f"{owners}.0", [0, 1])
    assert cell.run("condor_hold", str(owners), user=user).returncode == 0
    for cluster, codes in ((failed, [0, 1, 12]), (policy, [0, 1, 12]), (removed, [0, 1, 9]), (quiet, [0, 1, 12]),
                           (owners, [0, 1, 12])):
        wait_events(log, f"{cluster}.0", codes, timeout=30)
    mails = {args[1]: (who, args[2], text) for who, args, text in wait_for(lambda: (
        lambda found: found if len(found) >= 3 else None)(_mails(folder)), timeout=20)}
    assert set(mails) == {f"[Condor] Condor Job {failed}.0 put on hold",
                          f"[Condor] Condor Job {policy}.0 put on hold", f"[Condor] Condor Job {removed}.0 removed"}
    who, address, text = mails[f"[Condor] Condor Job {policy}.0 put on hold"]
    assert (who, address) == (user, "me@example.org")
    lines = text.splitlines()
    assert lines[3:5] == [f"Condor job {policy}.0", "\t/bin/sleep 300"]
    lines = lines[:lines.index("-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=") - 2]     # (before the signature)
    assert lines[-3:] == ["is being put on hold.", "", "The job attribute PeriodicHold expression "
                          "'JobStatus == 2' evaluated to TRUE"]
    assert "is being removed." in mails[f"[Condor] Condor Job {removed}.0 removed"][2]
    assert f"Failed to open '{workdir}/no/such/out' as standard output" in \
        mails[f"[Condor] Condor Job {failed}.0 put on hold"][2]
    for cluster in (removed, policy, quiet, owners, failed):
        cell.run("condor_rm", str(cluster), user=user)
