"""The daemon checks again what a client that skipped its own checks sent: queues, PEs,
checkpointing environments and resources the cell does not have are refused at submit
(qsub, qrsh) and at qalter with Grid Engine's words, and nothing is queued. A later
proc of an HTCondor cluster is held as its own submitted ad says."""

import os
import re

from attack_tools import forge_request, user_src
from conftest import unanswered, wait_for

#: a qsub (or qrsh) whose own checks are all skipped, as a user may run one; with
#: WAIT, it waits for the daemon's word as it does while the daemon marks checks
FORGE = """import sys
sys.path.insert(0, {src!r})
from gridtools.cli import ask
from gridtools.cli.sge import qsub, submit, cellfacts
qsub.check = lambda req: None
submit.check_request = submit.check_spec = submit.check_like_daemon = lambda *a, **k: None
cellfacts.refusal = lambda *a, **k: None
if {wait!r}:
    ask.checks_marked = lambda: True
from gridtools.cli.sge.{prog} import main
sys.exit(main(sys.argv[1:]))
"""

REFUSALS = [
    (("-l", "bogus=1"), 'unknown resource "bogus"'),
    (("-pe", "nope", "2"), 'job rejected: the requested parallel environment "nope" does not exist'),
    (("-q", "nosuch.q"), 'Job was rejected because job requests unknown queue "nosuch.q"'),
    (("-q", "all.q@nosuchhost"), 'Job was rejected because job requests unknown queue "all.q@nosuchhost"'),
    (("-masterq", "all.q"), "job rejected: specification of master queue is not allowed for non-parallel jobs"),
    (("-ckpt", "nockpt"), 'job rejected: the requested checkpointing environment "nockpt" does not exist'),
]


def _forge(workdir, prog="qsub", wait=False):
    path = os.path.join(workdir, f"forge-{prog}-{int(wait)}.py")
    with open(path, "w") as fh:
        fh.write(FORGE.format(src=user_src(), wait=wait, prog=prog))
    os.chmod(path, 0o644)
    return path


def _messages(cell):
    with open(os.path.join(cell.root, "spool", "messages")) as fh:
        return fh.read()


def _nothing_queued(cell):
    return cell.run("qstat", "-u", "*").stdout == ""


def test_forged_qsub_naming_what_the_cell_lacks_is_refused(cell, users, workdir):
    """The report's forged qsub: each job is refused by the daemon (the refusal in the
    messages), nothing is queued, and qsub's own words are the daemon's."""
    user = users[0]
    forge = _forge(workdir)
    for args, why in REFUSALS:
        honest = cell.run("qsub", *args, "-b", "y", "sleep", "100", user=user, cwd=workdir)
        assert (honest.returncode, honest.stderr) == (1, f"Unable to run job: {why}\nExiting.\n"), args
        proc = cell.run("python3", forge, *args, "-b", "y", "sleep", "100", user=user, cwd=workdir)
        assert proc.returncode == 0, proc.stderr
        job = re.search(r"Your job (\d+)", proc.stdout).group(1)
        line = f"job {job} of {user} refused: {why}"
        assert wait_for(lambda: line in _messages(cell)), args
        assert not os.path.exists(os.path.join(cell.root, "spool", "jobs", job))
    assert wait_for(lambda: _nothing_queued(cell))


def test_forged_qsub_that_waits_hears_the_refusal(cell, users, workdir):
    forge = _forge(workdir, wait=True)
    for args, why in REFUSALS:
        proc = cell.run("python3", forge, *args, "-b", "y", "sleep", "100", user=users[0], cwd=workdir)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", f"Unable to run job: {why}\nExiting.\n"), args
    assert _nothing_queued(cell)


def test_forged_qsub_with_names_the_cell_has_is_taken(cell, users, workdir):
    """Wildcards, a queue instance, a resource's shortcut: what exists is let in."""
    forge = _forge(workdir, wait=True)
    args = ("-q", "all*@" + cell.host, "-l", "h_rt=100,mf=1M", "-h", "-b", "y", "true")
    proc = cell.run("python3", forge, *args, user=users[0], cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    job = re.search(r"Your job (\d+)", proc.stdout).group(1)
    assert cell.run("qstat", "-j", job).returncode == 0


def test_forged_qrsh_is_refused(cell, users, workdir):
    forge = _forge(workdir, prog="qrsh")
    for args, why in REFUSALS[:3]:
        proc = cell.run("python3", forge, *args, "true", user=users[0], cwd=workdir, timeout=60)
        assert proc.returncode == 1, (args, proc.stderr)
        assert f"Unable to run job: {why}\n" in proc.stderr, args
    assert _nothing_queued(cell)


def test_forged_qalter_is_refused_with_qalters_words(cell, users, workdir):
    user = users[0]
    job = re.search(r"Your job (\d+)", cell.qsub("-h", "-b", "y", "true", user=user, cwd=workdir).stdout).group(1)
    cases = [
        ({"pe": ["nope", 1, 1]}, ("-pe", "nope", "1")),
        ({"queues": {"hard": ["nosuch.q"]}}, ("-q", "nosuch.q")),
        ({"resources": {"hard": {"bogus": "1"}}}, ("-l", "bogus=1")),
        ({"ckpt": "nockpt"}, ("-ckpt", "nockpt")),
    ]
    for changes, args in cases:
        honest = cell.run("qalter", *args, job, user=user, cwd=workdir)
        said = honest.stdout + honest.stderr
        assert honest.returncode == 1 and said.strip(), args
        _name, answer = forge_request(cell, user, "alter", {"targets": [{"id": int(job)}], "changes": changes})
        assert answer == [1, said, ""], args
    shown = cell.run("qstat", "-j", job).stdout
    assert not [word for word in ("nope", "nosuch.q", "bogus", "nockpt") if word in shown]
    _name, answer = forge_request(cell, user, "alter",
                                  {"targets": [{"id": int(job)}], "changes": {"queues": {"hard": ["all.q"]}}})
    assert answer[0] == 0, answer


def _procs(cell, workdir, user, text):
    with open(os.path.join(workdir, "h.sub"), "w") as fh:
        fh.write(text)
    proc = cell.run("condor_submit", "h.sub", user=user, cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    cluster = re.search(r"cluster (\d+)", proc.stdout).group(1)

    def rows():
        out = cell.run("condor_q", cluster, "-af", "ProcId", "JobStatus", "HoldReasonCode", "HoldReason").stdout
        return out.splitlines()
    assert wait_for(lambda: os.path.exists(os.path.join(cell.root, "spool", "jobs", cluster))
                    and not unanswered(cell.root))     # (taken in: its holds are the daemon's)
    assert wait_for(lambda: len(rows()) == 2)
    return rows()


def test_a_later_proc_is_held_as_its_own_ad_was_submitted(cell, users, workdir):
    """hold = true before a later queue statement holds that statement's procs with
    "submitted on hold at user's request" (code 15), the procs before stay idle; a
    +JobStatus = 5 line sets the proc's initial status alone, which HTCondor's schedd
    takes as it is (held, without that reason)."""
    found = _procs(cell, workdir, users[0], "executable = /bin/sleep\narguments = 30\nqueue\nhold = true\nqueue\n")
    assert found[0].split()[:2] in (["0", "1"], ["0", "2"])
    assert found[1] == "1 5 15 submitted on hold at user's request"
    found = _procs(cell, workdir, users[0], "executable = /bin/sleep\narguments = 30\nqueue\n+JobStatus = 5\nqueue\n")
    assert found[0].split()[:2] in (["0", "1"], ["0", "2"])
    assert found[1].split()[:2] == ["1", "5"] and "submitted on hold" not in found[1]
