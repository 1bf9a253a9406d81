"""A running daemon is not held up by one job: expressions that would take exponential
time or memory are ERROR (the job matches no slot, condor_qedit is answered at once),
and a pass cut short by a job description that makes no sense is logged and the
daemon goes on (and stops when told)."""

import os
import re
import time

from condortools import statuses, submit, write
from conftest import wait_for

REDOS = 'regexp("^(a|aa)*$", "' + "a" * 100 + 'b")'

#: Requirements that cost too much: backtracking, attributes doubling each other that
#: cannot be remembered (A0 meets a cycle through B), a string doubling forty times
COSTLY = {
    "redos": f"requirements = {REDOS}\n",
    "doubling": "+B = A40\n+A0 = isUndefined(B) ? 1 : 1\n"
                + "".join(f"+A{k} = A{k - 1} + A{k - 1}\n" for k in range(1, 41))
                + "requirements = A40 > 0\n",
    "strcat": '+S0 = "' + "x" * 1024 + '"\n'
              + "".join(f"+S{k} = strcat(S{k - 1}, S{k - 1})\n" for k in range(1, 41))
              + "requirements = size(S40) > 0\n",
}


def daemon_pid(cell):
    with open(os.path.join(cell.root, "spool", "daemon.pid")) as fh:
        return int(fh.read())


def _ended(pid):
    from qtools import process_state
    return process_state(pid) in (None, "Z")


def stop_promptly(cell):
    """``gridtools daemon stop`` ends the daemon within a few seconds."""
    pid = daemon_pid(cell)
    began = time.monotonic()
    stopped = cell.run("gridtools", "daemon", "stop")
    assert stopped.returncode == 0 and "daemon stopped" in stopped.stdout, stopped.stdout + stopped.stderr
    wait_for(lambda: _ended(pid), timeout=10)
    assert time.monotonic() - began < 10
    assert cell.run("gridtools", "daemon", "status").returncode == 1


def test_costly_requirements_match_nothing_and_hold_up_no_other_job(cell, workdir):
    costly = {name: submit(cell, f"executable = /bin/true\n{text}queue\n", cwd=workdir, name=f"{name}.sub")
              for name, text in COSTLY.items()}
    ran = os.path.join(workdir, "ran")
    began = time.monotonic()
    proc = cell.run("qsub", "-terse", "-o", "/dev/null", "-e", "/dev/null", "-b", "y", "touch", ran, cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    wait_for(lambda: os.path.exists(ran), timeout=20)
    assert time.monotonic() - began < 20
    # the costly ones wait (Idle)
    shown = statuses(cell, *(f"{c}.0" for c in costly.values()))
    assert shown == {f"{c}.0": 1 for c in costly.values()}
    # condor_qedit of a costly expression is answered promptly; its value is ERROR
    held = int(cell.run("qsub", "-terse", "-h", "-b", "y", "true", cwd=workdir).stdout)

    def prio():
        return cell.run("condor_q", f"{held}.0", "-af", "JobPrio").stdout.strip()
    assert cell.run("condor_qedit", str(held), "JobPrio", "5").returncode == 0 and prio() == "5"
    began = time.monotonic()
    edit = cell.run("condor_qedit", str(held), "JobPrio", f"ifThenElse({REDOS}, 1, 2)", timeout=30)
    assert edit.returncode == 0, edit.stderr
    assert prio() == "error"
    assert time.monotonic() - began < 10
    # another job still starts at once, and the daemon stops when told
    ran2 = os.path.join(workdir, "ran2")
    cell.run("qsub", "-o", "/dev/null", "-e", "/dev/null", "-b", "y", "touch", ran2, cwd=workdir)
    wait_for(lambda: os.path.exists(ran2), timeout=20)
    stop_promptly(cell)


def test_a_job_description_that_makes_no_sense_does_not_end_the_daemon(cell, workdir):
    held = int(cell.run("qsub", "-terse", "-h", "-b", "y", "true", cwd=workdir).stdout)
    cell.stop_daemon()
    path = os.path.join(cell.root, "spool", "jobs", str(held), "job.yaml")
    with open(path) as fh:
        text = re.sub(r"^user_hold: .*$", "user_hold: false", fh.read(), flags=re.M)
    write(path, re.sub(r"^pe: .*$", "pe: 7", text, flags=re.M), mode=0o600)
    cell.start_daemon()
    messages = os.path.join(cell.root, "spool", "messages")

    def logged():
        with open(messages) as fh:
            return [line for line in fh if "passes in a row were cut short" in line]
    wait_for(logged, timeout=20)                    # (after 2 passes that failed in a row)
    first = [line for line in open(messages) if "a pass was cut short, going on: TypeError" in line]
    assert first and re.search(r"\(at \S+\.py:\d+ \w+", first[0])
    status = cell.run("gridtools", "daemon", "status")
    assert status.returncode == 0 and "daemon running" in status.stdout
    stop_promptly(cell)
    with open(messages) as fh:
        assert "daemon stopped" in fh.read().splitlines()[-1]


def test_a_costly_periodic_expression_is_not_true_and_is_left_alone(cell, workdir):
    """PeriodicHold over the budget is ERROR, which never fires: the job runs to its end,
    the daemon says once that the expression is too costly, and a cheap PeriodicHold of
    another job evaluated at the same passes still holds that one."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("PERIODIC_EXPR_INTERVAL = 1\n")
    gate = os.path.join(workdir, "gate")
    body = f'executable = /bin/sh\narguments = "-c \'while [ ! -e {gate} ]; do sleep 0.1; done\'"\n'
    costly = submit(cell, body + f"periodic_hold = {REDOS}\nqueue\n", cwd=workdir, name="c.sub")
    cheap = submit(cell, body + "periodic_hold = JobStatus == 2\nqueue\n", cwd=workdir, name="h.sub")
    wait_for(lambda: statuses(cell, f"{cheap}.0").get(f"{cheap}.0") == 5, timeout=20)     # held
    messages = os.path.join(cell.root, "spool", "messages")
    warned = f"job {costly}: its periodic expressions cost more than an evaluation may"
    wait_for(lambda: warned in open(messages).read(), timeout=20)
    assert statuses(cell, f"{costly}.0") == {f"{costly}.0": 2}                         # running
    write(gate, "")
    wait_for(lambda: f"{costly}.0" not in statuses(cell, f"{costly}.0"), timeout=20)   # ended
    assert open(messages).read().count(warned) == 1
    stop_promptly(cell)


def test_a_start_expression_reading_a_costly_job_attribute_refuses_that_job_only():
    from conftest import destroy_cell, make_cell
    cell = make_cell(slots=2, start=False)
    workdir = cell.root
    try:
        with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
            fh.write('START = TARGET.Dept =!= "closed"\n')
        cell.start_daemon()
        costly = submit(cell, f'executable = /bin/true\n+Dept = ifThenElse({REDOS}, "a", "b")\nqueue\n',
                        cwd=workdir, name="c.sub")
        plain = submit(cell, '+Dept = "physics"\nexecutable = /bin/true\nqueue\n', cwd=workdir, name="p.sub")
        wait_for(lambda: f"{plain}.0" not in statuses(cell, f"{plain}.0"), timeout=20)        # ran
        wait_for(lambda: "START expression" in cell.run("qstat", "-j", str(costly)).stdout, timeout=15)
        assert statuses(cell, f"{costly}.0") == {f"{costly}.0": 1}
        stop_promptly(cell)
    finally:
        destroy_cell(cell)


def test_infinite_amounts_cut_no_pass_short_and_the_job_holds_its_slot(cell, workdir):
    """request_disk = 1e400 is infinity: a job whose owner made it match anyway runs in
    a slot that says so (condor_status), no pass is cut short; an infinite hold code
    given at submission is stored as 0."""
    cluster = submit(cell, "executable = /bin/sleep\narguments = 60\nrequest_disk = 1e400\n"
                           "hold = true\nqueue\n", cwd=workdir)
    assert cell.run("condor_qedit", str(cluster), "Requirements", "true").returncode == 0
    assert cell.run("condor_release", str(cluster)).returncode == 0
    wait_for(lambda: statuses(cell, str(cluster)).get(f"{cluster}.0") == 2)
    wait_for(lambda: "Claimed" in cell.run("condor_status").stdout)
    held = submit(cell, 'executable = /bin/true\nhold = true\n+HoldReason = "x"\n'
                        '+HoldReasonCode = real("inf")\nqueue\n', cwd=workdir, name="h.sub")
    wait_for(lambda: statuses(cell, str(held)).get(f"{held}.0") == 5)
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert "cut short" not in messages and "OverflowError" not in messages
    cell.run("condor_rm", str(cluster), str(held))


def test_costly_concurrency_limits_keep_their_job_waiting_and_no_other(cell, workdir):
    """A concurrency_limits_expr that needs the machine is evaluated for each host; one over
    its budget is not evaluated again: its job waits on a limit of capacity 0."""
    costly = submit(cell, "executable = /bin/true\nconcurrency_limits_expr = "
                          f'ifThenElse({REDOS}, "a", strcat("lic_", TARGET.Machine))\nqueue\n', cwd=workdir)
    wait_for(lambda: "concurrency limit concurrencylimits-too-costly (0) is reached"
             in cell.run("qstat", "-j", str(costly)).stdout, timeout=20)
    ran = os.path.join(workdir, "ran")
    began = time.monotonic()
    cell.run("qsub", "-o", "/dev/null", "-e", "/dev/null", "-b", "y", "touch", ran, cwd=workdir, check=True)
    wait_for(lambda: os.path.exists(ran), timeout=20)
    assert time.monotonic() - began < 5
    assert statuses(cell, f"{costly}.0") == {f"{costly}.0": 1}
    stop_promptly(cell)


def test_one_users_costly_periodic_expressions_take_a_share_of_a_pass_not_all_of_it(cell, workdir, users):
    """Periodic expressions that cost much (a string doubled to a megabyte and searched as a
    list of 131,072 items) on many jobs of one user: each is over an evaluation's budget
    (ERROR, and left alone), and one user's expressions take at most their share of a
    pass (test_daemon_tick), so another user's request is answered at once and another
    user's cheap periodic hold still holds."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("PERIODIC_EXPR_INTERVAL = 1\n")
    alice, bob = users[0], users[1]
    home = os.path.expanduser(f"~{alice}")
    doubling = '+A0 = "a,b,c,d,e,f,g,h,"\n' + "".join(f"+A{i} = strcat(A{i - 1}, A{i - 1})\n" for i in range(1, 18))
    submit(cell, "executable = /bin/true\nrequirements = False\n" + doubling
           + 'periodic_hold = stringListMember(strcat("zz", MY.ProcId), A17)\n'
           + 'periodic_remove = stringListMember(strcat("zy", MY.ProcId), A17)\nqueue 30\n',
           cwd=home, user=alice, name="costly.sub")
    messages = os.path.join(cell.root, "spool", "messages")
    wait_for(lambda: "periodic expressions cost more than an evaluation may" in open(messages).read(), timeout=60)
    bob_home = os.path.expanduser(f"~{bob}")
    began = time.monotonic()
    cheap = submit(cell, "executable = /bin/true\nrequirements = False\nperiodic_hold = True\nqueue\n",
                   cwd=bob_home, user=bob, name="cheap.sub")
    wait_for(lambda: statuses(cell, f"{cheap}.0", user=bob).get(f"{cheap}.0") == 5, timeout=30)
    took = time.monotonic() - began
    answered = time.monotonic()
    removed = cell.run("condor_rm", str(cheap), user=bob)
    assert removed.returncode == 0, removed.stderr
    assert time.monotonic() - answered < 8 and took < 15, (took, time.monotonic() - answered)
    cell.run("condor_rm", "-all", user=alice)
