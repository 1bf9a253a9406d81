"""Rights qsub and qalter check that the daemon checks again: a request written by hand
(a hostile client skips every check of qsub's) gets no more than qsub would give.

Override tickets are an operator's to give; a complex whose ``requestable`` is NO may
not be requested, nor a consumable in a negative amount (it would add to what a host
offers every other user); only an HTCondor job has a universe, the one of its ad;
qalter may not give a job a project its owner may not submit to, nor a deadline to a
user who is no deadline initiation user.
"""

import json
import os

from attack_tools import forge_request, forge_submit, user_py
from conftest import wait_for
from qtools import add_complex, add_object, jid_of

REFUSED = "Unable to run job: {}\nExiting.\n"


def _nothing_queued(cell, claimed):
    assert not os.path.exists(os.path.join(cell.root, "spool", "jobs", str(claimed)))


def test_a_hand_written_submission_gets_nothing_qsub_refuses(cell, users, workdir):
    alice = users[0]
    add_complex(cell, "jcap jc INT <= NO YES 1 0")
    add_complex(cell, "lic lic INT <= YES YES 0 0")
    cases = [({"override_tickets": 999999},
              f'denied: "{alice}" must be operator to change amount of override tickets'),
             ({"resources": {"hard": {"jc": "0"}, "soft": {}}}, 'resource "jcap" configured as non requestable'),
             ({"resources": {"hard": {"lic": "-5"}, "soft": {}}},
              'attribute "lic" is consumable but has a negative value'),
             ({"resources": {"hard": {"lic": "0.001"}, "soft": {}}}, 'attribute "lic" is not a integer value'),
             ({"universe": 12}, "a Grid Engine job has no universe")]
    for overrides, why in cases:
        claimed, _name, answer = forge_submit(cell, alice, overrides, reply=True)
        if "universe" in overrides or why.endswith("integer value"):
            assert answer[0] == 1 and why in answer[2], answer
        else:
            assert answer == [1, "", REFUSED.format(why)], overrides
        _nothing_queued(cell, claimed)
    # qsub's own checks say the same
    for args, why in ((["-l", "jc=0"], 'resource "jcap" configured as non requestable'),
                      (["-l", "lic=-5"], 'attribute "lic" is consumable but has a negative value')):
        proc = cell.qsub(*args, "-b", "y", "true", user=alice, cwd=workdir)
        assert proc.returncode != 0 and why in proc.stderr
    # a manager's job may have override tickets
    claimed, _name, answer = forge_submit(cell, "root", {"override_tickets": 10, "user_hold": True}, reply=True)
    assert answer[0] == 0, answer


def test_an_htcondor_job_has_the_universe_of_its_ad(cell, users, workdir):
    code = f"""
    import json, os, time
    from gridtools.formats.condor import spec as condor_spec
    from gridtools.formats.condor.jobad import SubmitContext
    from gridtools.formats.condor.submit import parse_submit
    from gridtools.cli.condor.submit import submitter
    from gridtools.spool import ids, requests, wake
    os.chdir({workdir!r})
    desc = parse_submit("executable = /bin/sleep\\narguments = 30\\nqueue\\n")
    who = submitter(time.time())
    jid = ids.allocate("job")[0]
    ads = desc.job_ads(jid, SubmitContext(cwd=os.getcwd(), owner=who["owner"], now=int(time.time())))
    spec = condor_spec.cluster_spec(ads, who)
    spec["universe"] = 12               # the local universe: no slot, no queue limit
    name = requests.write("submit", {{"job": spec}}, reply=True)
    wake.poke()
    print(json.dumps([jid, requests.wait_reply(name, 30)]))
    """
    proc = user_py(cell, users[0], code, check=True)
    claimed, answer = json.loads(proc.stdout)
    assert answer[0] == 1 and "the job's universe is not its ad's" in answer[2], answer
    _nothing_queued(cell, claimed)


def test_qalter_gives_no_project_deadline_or_request_that_qsub_refuses(cell, users, workdir):
    alice = users[0]
    cell.run("qconf", "-au", users[1], "bonly", check=True)
    add_object(cell, "-Aprj", "name restricted\noticket 0\nfshare 0\nacl bonly\nxacl NONE\n")
    add_complex(cell, "jcap jc INT <= NO YES 1 0")
    add_complex(cell, "lic lic INT <= YES YES 0 0")
    refused = cell.qsub("-P", "restricted", "-b", "y", "true", user=alice, cwd=workdir)
    assert 'no access to project "restricted"' in refused.stderr
    job = jid_of(cell.qsub("-h", "-b", "y", "true", user=alice, cwd=workdir))
    proc = cell.run("qalter", "-P", "restricted", str(job), user=alice, cwd=workdir)
    assert (proc.returncode, proc.stdout) == (1, f'denied: no access to project "restricted" for user "{alice}"\n')
    proc = cell.run("qalter", "-dl", "203001010000", str(job), user=alice, cwd=workdir)
    assert (proc.returncode, proc.stdout) == (1, f'denied: the user "{alice}" is no deadline initiation user\n')
    for hard, why in (({"jc": "0"}, 'resource "jcap" configured as non requestable'),
                      ({"lic": "-100"}, 'attribute "lic" is consumable but has a negative value')):
        _name, answer = forge_request(cell, alice, "alter", {
            "targets": [{"id": job, "tasks": None}], "changes": {"resources": {"hard": hard, "soft": {}}}})
        assert answer[0] == 1 and f"denied: {why}" in answer[1] + answer[2], answer
    shown = cell.run("qstat", "-j", str(job)).stdout
    assert "project:" not in shown and "deadline:" not in shown and "hard resource_list" not in shown, shown
    # the owner of the project's list and a deadline user get what they ask for
    other = jid_of(cell.qsub("-h", "-b", "y", "true", user=users[1], cwd=workdir))
    assert cell.run("qalter", "-P", "restricted", str(other), user=users[1], cwd=workdir).returncode == 0
    cell.run("qconf", "-au", alice, "deadlineusers", check=True)
    assert cell.run("qalter", "-dl", "203001010000", str(job), user=alice, cwd=workdir).returncode == 0
    assert wait_for(lambda: "deadline:" in cell.run("qstat", "-j", str(job)).stdout)


def test_a_part_of_an_int_consumable_counts_as_a_whole_one():
    """An HTCondor job's request_lic = 0.001 (its ad's amount, which the daemon reads
    itself) holds one licence: no part of one stays free for everybody."""
    from gridtools.model.resources import Complex, Consumable, CxType, Relop
    from gridtools.sched.inputs import parse_value
    lic = Complex("lic", "lic", CxType.INT, Relop("<="), consumable=Consumable.YES)
    assert [parse_value(lic, text) for text in ("0.001", "2", "2.5", "3.0")] == [1, 2, 3, 3.0]


def test_a_running_task_ends_when_its_run_limit_says_whatever_qalter_said_since():
    """qalter -l h_rt of a running job changes what its pending tasks ask for; the run keeps
    the limit its shepherd was given, and the scheduler counts on that one (a longer one
    let the job keep a slot reserved for another, a shorter one stopped all backfill)."""
    from gridtools.daemon.apply import _run_limit
    from gridtools.model.job import Task
    from gridtools.sched.inputs import _limit_of_run
    from gridtools.model.resources import INFINITY

    class Req:
        runtime = 9999999.0
    task = Task(1)
    task.run_limit = _run_limit({"resources": {"hard": {"h_rt": "7200"}}})
    assert _limit_of_run(task, Req) == 7200
    task.run_limit = _run_limit({"resources": {"hard": {}}})
    assert _limit_of_run(task, Req) == INFINITY
    task.run_limit = 0.0                     # (a run started before the limit was kept)
    assert _limit_of_run(task, Req) == 9999999.0
