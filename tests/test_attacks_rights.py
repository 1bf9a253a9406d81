"""Users acting on other users' jobs and on the cell, through the commands and through
requests written by hand: nothing changes, the answer says why.
"""

import os
import re

from attack_tools import forge_request, forge_submit
from conftest import wait_for
from qtools import set_qmaster_params


def _held(cell, user, workdir, *extra):
    proc = cell.qsub("-terse", "-h", "-N", "mine", *extra, "-b", "y", "true", user=user, cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    jid = int(proc.stdout)
    wait_for(lambda: f" {jid} " in f" {cell.run('qstat', '-u', '*').stdout} ")
    return jid


def _spec_text(cell, jid):
    """The daemon's copy of the job's description, once the daemon has taken the job in."""
    path = os.path.join(cell.root, "spool", "jobs", str(jid), "job.yaml")
    wait_for(lambda: os.path.exists(path))
    with open(path) as fh:
        return fh.read()


def _unchanged(cell, jid, before):
    assert _spec_text(cell, jid) == before
    assert cell.task_states(jid).get(1) in (None, "pending")
    assert "hqw" in [line.split()[4] for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]
                     if line.split()[0] == str(jid)]


def test_commands_on_another_users_job_change_nothing(cell, workdir, users):
    alice, bob = users[0], users[1]
    jid = _held(cell, alice, workdir)
    before = _spec_text(cell, jid)
    for argv in (("qalter", "-N", "stolen", str(jid)), ("qalter", "-p", "-5", str(jid)),
                 ("qrls", str(jid)), ("qdel", str(jid)), ("qmod", "-sj", str(jid)),
                 ("qhold", "-h", "s", str(jid))):
        proc = cell.run(*argv, user=bob)
        assert proc.returncode != 0, argv
        assert re.search(r"denied|privileges|no permission", proc.stdout + proc.stderr), (argv, proc.stdout)
    _unchanged(cell, jid, before)


def test_hand_written_requests_on_another_users_job_change_nothing(cell, workdir, users):
    alice, bob = users[0], users[1]
    jid = _held(cell, alice, workdir)
    before = _spec_text(cell, jid)
    target = [{"id": jid, "tasks": None}]
    for kind, body in (("alter", {"targets": target, "changes": {"name": "stolen"}}),
                       ("alter", {"targets": target, "changes": {}, "hold_remove": "u"}),
                       ("hold", {"targets": target, "letters": "u", "on": False}),
                       ("delete", {"targets": target, "force": True}),
                       ("qmod", {"op": "suspend", "scope": "job", "items": [{"word": str(jid), "tasks": None}]})):
        name, answer = forge_request(cell, bob, kind, body)
        assert answer is not None and (answer[0] != 0 or kind in ("hold", "delete")), (kind, answer)
    _unchanged(cell, jid, before)


def test_hand_written_configuration_requests_are_refused(cell, workdir, users):
    bob = users[1]
    managers = open(os.path.join(cell.root, "etc", "managers")).read()
    for kind, body in (("qconf", {"op": "names_add", "object": "managers", "names": [bob]}),
                       ("qconf", {"op": "kill", "target": "m"}),
                       ("qconf", {"op": "delete", "object": "queue", "names": ["all.q"]}),
                       ("host", {"op": "drain", "hosts": ["testhost"]})):
        name, answer = forge_request(cell, bob, kind, body)
        assert answer[0] != 0 and answer[2].startswith("denied"), (kind, answer)
    assert open(os.path.join(cell.root, "etc", "managers")).read() == managers
    assert os.path.exists(os.path.join(cell.root, "etc", "queues", "all.q"))
    assert cell.run("qstat").returncode == 0


def test_an_oversized_script_is_refused(cell, workdir, users):
    alice, bob = users[0], users[1]
    set_qmaster_params(cell, "MAX_SCRIPT_SIZE=64K")
    big = "#!/bin/sh\n" + "# padding\n" * 10000
    proc = cell.qsub("-b", "n", user=alice, cwd=workdir, input=big)
    assert proc.returncode != 0
    assert proc.stderr == f"Unable to run job: the job script is larger than {64 * 1024} bytes " \
                          "(qmaster_params MAX_SCRIPT_SIZE)\nExiting.\n"
    jid, name, answer = forge_submit(cell, bob, {"binary": False}, script=big.encode(), reply=True)
    assert answer[0] != 0 and "larger than 65536 bytes" in answer[2]
    assert not os.path.exists(os.path.join(cell.root, "spool", "jobs", str(jid)))
    ok = cell.qsub("-terse", user=alice, cwd=workdir, input="#!/bin/sh\ntrue\n")
    assert ok.returncode == 0, ok.stderr
