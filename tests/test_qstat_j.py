"""qstat -j: the long job description and the scheduler's messages, against Grid Engine's texts.

The job descriptions come from the spool; here ``load_spec`` is replaced by
descriptions that reproduce the captured jobs (see test_qstat_format).
"""

import io

import pytest

from gridtools.cli.sge import qstat, qstat_j, qstat_msgs, qstat_usage
from test_qstat_format import at, reference, reference_snapshot, render


def captured_spec(job_id, snap):
    info = snap["jobs"][job_id]
    owner = info["owner"]
    uid = {"alice": 2001, "carol": 2003}[owner]
    home = f"/home/{owner}"
    return {"id": job_id, "name": info["name"], "owner": owner, "uid": uid, "group": owner, "gid": uid,
            "submit_time": info["submit_time"], "account": "sge", "cwd": f"{home}/ref",
            "sge_o": {"HOME": home, "LOGNAME": owner, "SHELL": "/bin/bash", "WORKDIR": f"{home}/ref",
                      "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games",
                      "HOST": "localhost", "MAIL": f"/var/mail/{owner}"},
            "stderr": [[None, "/dev/null"]], "stdout": [[None, "/dev/null"]],
            "mail_list": [f"{owner}@localhost"], "notify": False, "jobshare": 0, "env": {"TERM": ""},
            "args": ["900" if job_id in (51, 52) else "30"], "script_name": "sleep.sh", "binary": False,
            "resources": {"hard": dict(info["hard"]), "soft": {}}, "pe": info["pe"],
            "hold_jid": info["hold_jid"], "predecessors": info["predecessors"], "tasks": info["tasks"],
            "project": info["project"] or None, "priority": info["priority"], "verify": "n"}


@pytest.fixture
def spool(monkeypatch):
    """Job descriptions and task states as the spool would give them."""
    snap = reference_snapshot()
    specs = {j: captured_spec(j, snap) for j in snap["jobs"]}
    states = {51: {"tasks": {"1": {"state": "running", "start_time": at("20:16:28")}}}}
    monkeypatch.setattr(qstat_j, "load_spec", lambda j, s: (specs[j], states.get(j, {})))
    monkeypatch.setattr(qstat_usage, "_job_pid", lambda j, n: 0)
    return snap, specs, states


@pytest.mark.parametrize("name, job_id", [
    ("qstat-j-pending.txt", 53), ("qstat-j-pending-array.txt", 54), ("qstat-j-pending-pe.txt", 56),
    ("qstat-j-pending-resources.txt", 58), ("qstat-j-held-hold_jid.txt", 57),
    ("qstat-j-running.txt", 51), ("qstat-j-other-user-project.txt", 59)])
def test_job_description_layout(spool, name, job_id):
    assert render(["-j", str(job_id)], spool[0]) == reference(name)


def test_global_messages_group_jobs_per_message(spool):
    assert render(["-j"], spool[0]) == reference("qstat-j-all.txt")


def test_job_found_by_name_and_pattern(spool):
    assert render(["-j", "pend_plain"], spool[0]) == reference("qstat-j-pending.txt")
    text = render(["-j", "pend_*"], spool[0])
    assert [line.split()[1] for line in text.splitlines() if line.startswith("job_number:")] == \
        ["53", "54", "55", "56", "57", "58"]


def test_error_state_lines(spool):
    snap, specs, states = spool
    for row in snap["rows"]:
        if row["id"] == 53:
            row["state"] = "Eqw"
    snap["reasons"] = {53: [["error"]]}
    # as the daemon keeps it: the reason, when it happened, the shepherd that found it
    reason = "can't open output file \"/home/alice/envout/\": Is a directory"
    states[53] = {"tasks": {"1": {"state": "error", "error_reason": reason, "end_time": at("20:14:34"),
                                  "error_pid": 3132}}}
    lines = render(["-j", "53"], snap).splitlines()
    want = reference("qstat-j-Eqw.txt").splitlines()
    assert lines[-2:] == want[-2:]
    # a task put in error state before the shepherd's pid was kept: pid 0
    del states[53]["tasks"]["1"]["error_pid"]
    assert render(["-j", "53"], snap).splitlines()[-2] == want[-2].replace("[2001:3132]", "[2001:0]")


def test_times_are_written_as_ctime_pads_the_day(spool):
    """submission_time, execution_time and deadline as C's ctime(): "Wed Dec  2"."""
    snap, specs, _states = spool
    import time
    day = time.mktime(time.strptime("2026-12-02 20:48:25", "%Y-%m-%d %H:%M:%S"))
    specs[53].update(submit_time=day, start_at=day + 60, deadline=day + 120)
    lines = render(["-j", "53"], snap).splitlines()
    assert "submission_time:            Wed Dec  2 20:48:25 2026" in lines
    assert "execution_time:             Wed Dec  2 20:49:25 2026" in lines
    assert "deadline:                   Wed Dec  2 20:50:25 2026" in lines


def test_missing_job_message_and_exit_status(spool, capsys):
    snap = spool[0]
    opts = qstat.parse_args(["-j", "999999"])
    assert qstat_j.show(snap, opts, io.StringIO()) == 1
    assert capsys.readouterr().err == reference("qstat-j-nonexistent.txt", "stderr")


def test_finished_job_does_not_exist_for_j(spool, capsys):
    snap = spool[0]
    for row in snap["rows"]:
        if row["id"] == 58:
            row["state"] = "z"
    opts = qstat.parse_args(["-j", "58"])
    assert qstat_j.show(snap, opts, io.StringIO()) == 1
    assert capsys.readouterr().err.startswith("Following jobs do not exist: \n58")


def test_usage_line_of_a_running_task(spool):
    text = render(["-j", "51"], spool[0])
    assert "usage         1:            cpu=00:00:00, mem=0.00000 GB s, io=0.00000 GB, vmem=N/A, maxvmem=N/A\n" in text
    assert "binding       1:            NONE\n" in text


def test_ids_wrap_after_eight_per_line():
    assert qstat_j._id_lines([1, 2, 3]) == "\t1,\t2,\t3"
    text = qstat_j._id_lines(list(range(1, 11)))
    assert text == "\t1,\t2,\t3,\t4,\t5,\t6,\t7,\t8,\n\t9,\t10"


@pytest.mark.parametrize("plain, line, number", [
    (["qi_full", "all.q@h"], 'queue instance "all.q@h" dropped because it is full', 37),
    (["all_dropped"], "All queues dropped because of overload or full", 28),
    (["qi_overloaded", "all.q@h", "np_load_avg", 2.0, 1.0, "0.50", 4.0, 2, ">=", "1.75"],
     'queue instance "all.q@h" dropped because it is overloaded: '
     "np_load_avg=2.000000 (= 1.000000 + 0.50 * 4.000000 with nproc=2) >= 1.75", 27),
    (["qi_overloaded", "all.q@h", "mem_free", 1.0e9, 4.0e9, "1G", 3.0, 0, "<=", "2G"],
     'queue instance "all.q@h" dropped because it is overloaded: '
     "mem_free=1000000000.000000 (= 4000000000.000000 - 1G * 3.000000) <= 2G", 27),
    (["qi_overloaded", "all.q@h", "np_load_avg", 2.0, 2.0, "", 0.0, 0, ">=", "1.75"],
     'queue instance "all.q@h" dropped because it is overloaded: '
     "np_load_avg=2.000000 (no load adjustment) >= 1.75", 27),
    (["qi_state", "all.q@h", "DISABLED"], 'queue instance "all.q@h" dropped because it is disabled', 39)])
def test_queue_messages_are_global(plain, line, number):
    msg, is_global = qstat_msgs.render(plain, "alice")
    assert (msg, is_global, qstat_msgs.global_number(msg)) == (line, True, number)


@pytest.mark.parametrize("plain, line, number", [
    (["hold"], "Job is in hold state", 33),
    (["dependency"], "job dropped because of job dependencies", 35),
    (["pe_too_few", "smp", 0], 'cannot run in PE "smp" because it only offers 0 slots', 24),
    (["resource_value", "h_vmem=1G", "all.q@h", "qf", "h_vmem", "500M"],
     '(-l h_vmem=1G) cannot run in queue "all.q@h" because it offers only qf:h_vmem=500M', 17),
    (["user_list", "all.q@h"], 'has no permission for queue "all.q@h"', 1),
    (["xproject_list", "all.q@h", "big"],
     '(project big) is not allowed to run in queue "all.q@h" based on the excluded project list', 4),
    (["host_xproject", "big", "h"],
     '(project big) is not allowed to run in host "h" based on the excluded project list', 4)])
def test_job_messages_have_grid_engine_numbers(plain, line, number):
    msg, is_global = qstat_msgs.render(plain, "alice")
    assert (msg, is_global, qstat_msgs.job_message(msg)[0]) == (line, False, number)


def test_usage_reads_the_process_group(monkeypatch):
    import os
    usage = qstat_usage.group_usage(os.getpgrp())
    assert usage is not None and usage[0] >= 0 and usage[1] > 0
    assert qstat_usage.group_usage(2 ** 22 + 12345) is None
    assert qstat_usage.hms(3723) == "01:02:03"


def test_error_jobs_are_reported_without_scheduler_reasons(spool):
    snap = spool[0]
    snap["reasons"] = {}
    for row in snap["rows"]:
        if row["id"] == 54:
            row["state"] = "Eqw"
    assert render(["-j"], snap) == "Jobs dropped because of error state\n\t54\n"
    assert render(["-j", "54"], snap).splitlines()[-1] == "scheduling info:            Job is in error state"


def test_one_job_s_scheduling_lines_are_those_of_the_whole_listing():
    """qstat -j <id> renders the global lines of every job's reasons but only its own job
    lines: the same lines, in the same order, as rendering every job's."""
    from gridtools.cli.sge import qstat_msgs
    snap = {"rows": [{"id": n, "state": "qw"} for n in (1, 2, 3)] + [{"id": 4, "state": "Eqw"}],
            "jobs": {n: {"owner": "bob"} for n in (1, 2, 3, 4)},
            "reasons": {1: [["qi_full", "all.q@h1"], ["hold"]],
                        2: [["qi_state", "all.q@h2", "DISABLED"], ["qi_full", "all.q@h1"], ["maxujobs", "bob", 2]],
                        3: [["more", "qi_full", 3], ["qi_full", "all.q@h3"], ["dependency"]],
                        4: [["error"]]}}
    whole_global, whole_jobs = qstat_msgs.split(snap)
    assert len(whole_global) == 4 and set(whole_jobs) == {1, 2, 3, 4}
    for job in (1, 2, 3, 4):
        global_lines, per_job = qstat_msgs.split(snap, only={job})
        assert global_lines == whole_global
        assert per_job[job] == whole_jobs[job]
