"""What job mail reaches the cell's mailer: every address of a long ``-M`` list, the
administrator's mail about a failed job, ``-m``/``-M`` as Grid Engine's qsub reads
them, and HTCondor's NotifyUser list and signature.

The mailer is a script that keeps its user, its arguments and the message in a
file of its own.
"""

import os

from condortools import submit, wait_events
from conftest import wait_for
from qtools import jid_of, set_global

from test_job_mail import _condor_mailer, _mailer, _mails          # (the mailer that records what it is given)


def test_every_address_of_a_long_mail_list_is_mailed(cell, users, workdir):
    mailer, folder = _mailer(workdir)
    set_global(cell, mailer=mailer)
    addresses = [f"v{n}@example.org" for n in range(1, 11)]
    job = jid_of(cell.qsub("-b", "y", "-m", "e", "-M", ",".join(addresses), "-N", "ten", "true",
                           user=users[0], cwd=workdir))
    cell.wait_finished(job)
    # (eight mailers at once: the other two go as soon as the first ones end)
    mails = wait_for(lambda: (lambda found: found if len(found) >= 10 else None)(_mails(folder)), timeout=20)
    sent = sorted(args[2] for _user, args, _body in mails if args[1] == f"Job {job} (ten) Complete")
    assert sent == sorted(addresses)
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert "no mail to v" not in messages
    # (eight start at once: only the two beyond them are said to wait)
    assert sorted(line.split("mail to ")[1].split()[0] for line in messages.splitlines()
                  if f"job {job}: mail to v" in line and " waits: " in line) == ["v10@example.org", "v9@example.org"]


def test_a_mail_list_too_long_for_execd_is_cut_with_a_message(cell, users, workdir):
    mailer, folder = _mailer(workdir)
    set_global(cell, mailer=mailer)
    addresses = [f"{'x' * 90}{n}@example.org" for n in range(1, 13)]      # 1,200 characters and more
    job = jid_of(cell.qsub("-b", "y", "-m", "e", "-M", ",".join(addresses), "true", user=users[0], cwd=workdir))
    cell.wait_finished(job)
    text = wait_for(lambda: (lambda t: t if "too long" in t else None)(
        open(os.path.join(cell.root, "spool", "messages")).read()), timeout=20)
    assert f"maillist for job {job} too long" in text


def test_the_administrator_is_mailed_about_a_job_that_cannot_start(cell, users, workdir):
    mailer, folder = _mailer(workdir)
    set_global(cell, mailer=mailer, administrator_mail="ops@example.org")
    job = jid_of(cell.qsub("-b", "y", "-wd", "/nonexistent/dir", "-N", "nocwd", "true", user=users[0], cwd=workdir))
    (user, args, body), = wait_for(lambda: _mails(folder), timeout=20)
    assert args == ["-s", f"SGE 8.1.9: Job {job} failed", "ops@example.org"]
    assert user != users[0]                  # (the daemon's user, not the owner)
    lines = body.splitlines()
    assert lines[0] == f"Job {job} caused action: Job {job} set to ERROR"
    assert lines[1] == f" User        = {users[0]}"
    assert lines[2].startswith(" Queue       = all.q@")
    assert lines[5].startswith("failed changing into working directory:")


def test_qsub_m_reads_letters_as_grid_engine_does(cell, users, workdir):
    proc = cell.qsub("-b", "y", "-m", "n,e", "true", user=users[0], cwd=workdir, check=False)
    assert proc.returncode != 0
    assert 'Wrong mail options list format "n,e" specified to -m option' in proc.stderr
    mailer, folder = _mailer(workdir)
    set_global(cell, mailer=mailer)
    quiet = jid_of(cell.qsub("-b", "y", "-m", "ne", "-M", "q@example.org", "true", user=users[0], cwd=workdir))
    loud = jid_of(cell.qsub("-b", "y", "-m", "e", "-M", "x y@example.org", "-N", "blank", "true",
                            user=users[0], cwd=workdir))
    cell.wait_finished(quiet)
    cell.wait_finished(loud)
    (_user, args, _body), = wait_for(lambda: _mails(folder), timeout=20)
    assert args == ["-s", f"Job {loud} (blank) Complete", "x y@example.org"]


def test_htcondor_mails_each_address_of_notify_user_with_its_signature(cell, users, workdir):
    folder = _condor_mailer(cell, workdir, "CONDOR_ADMIN = admin@example.org\n")
    done = submit(cell, "executable = /bin/true\nnotification = always\nnotify_user = x@vm,y@vm a b@vm\n"
                        "log = n.log\nqueue\n", cwd=workdir, user=users[0])
    wait_events(os.path.join(workdir, "n.log"), f"{done}.0", [0, 1, 5])
    (_user, args, body), = wait_for(lambda: _mails(folder), timeout=20)
    assert args == ["-s", f"[Condor] Condor Job {done}.0", "x@vm", "y@vm", "a", "b@vm"]
    assert body.endswith("\n\n-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=\n"
                         "Questions about this message or HTCondor in general?\n"
                         "Email address of the local HTCondor administrator: admin@example.org\n"
                         "The Official HTCondor Homepage is https://htcondor.org/\n")
