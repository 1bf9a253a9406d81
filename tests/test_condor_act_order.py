"""condor_rm, condor_hold, condor_release, condor_vacate_job, condor_prio and condor_qedit:
the order of their lines, and how -name and -pool find the schedd (HTCondor's rm.cpp,
prio.cpp and qedit.cpp)."""

from condortools import statuses, submit
from conftest import wait_for

SLEEP = "executable = /bin/sleep\narguments = 300\n"


def test_job_lines_follow_the_arguments_with_a_blank_line_when_none_acted_on(cell, workdir):
    a = submit(cell, SLEEP + "hold = true\nqueue 3\n", cwd=workdir)
    # (some acted on: no blank line; the lines in the order of the ids)
    held = cell.run("condor_release", f"{a}.2", "999.0", f"{a}.0")
    assert held.stdout == f"Job {a}.2 released\nJob {a}.0 released\n"
    assert held.stderr == "Job 999.0 not found\n" and held.returncode == 1
    # (none acted on: the empty error stack first, then the lines in their order)
    again = cell.run("condor_release", f"{a}.2", "999.0", f"{a}.0")
    assert again.stdout == ""
    assert again.stderr == f"\nJob {a}.2 not held to be released\nJob 999.0 not found\nJob {a}.0 not held to be released\n"
    assert again.returncode == 1
    hold = cell.run("condor_hold", f"{a}.1", f"{a}.0", f"{a}.2")
    assert hold.stdout == f"Job {a}.0 held\nJob {a}.2 held\n"
    assert hold.stderr == f"Job {a}.1 already held\n"
    # (a refused word counts as an error before the ids: the blank line too)
    zero = cell.run("condor_rm", "0.1", f"{a}.2", f"{a}.1")
    assert zero.stdout == f"Job {a}.2 marked for removal\nJob {a}.1 marked for removal\n"
    assert zero.stderr == "Invalid cluster # from 0.1.\n\n" and zero.returncode == 1
    vacate = cell.run("condor_vacate_job", f"{a}.0", "998.0")
    assert (vacate.returncode, vacate.stdout) == (1, "")
    assert vacate.stderr == f"\nJob {a}.0 not running to be vacated\nJob 998.0 not found\n"


def test_constraint_sentence_names_clusters_and_users_in_argument_order(cell, workdir):
    a = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    b = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, name="b.sub")
    me = cell.run("id", "-un").stdout.strip()
    both = cell.run("condor_hold", str(b), me, str(a))
    assert (both.returncode, both.stderr) == (1, "\nCouldn't find/hold all jobs matching constraint "
                                                 f'(ClusterId == {b} || Owner == "{me}" || ClusterId == {a})\n')
    one = cell.run("condor_hold", "-constraint", "true", str(b), "-constraint", "JobStatus == 5", str(a))
    assert one.stderr == ("\nCouldn't find/hold all jobs matching constraint ((true) && (JobStatus == 5) && "
                          f"(ClusterId == {b} || ClusterId == {a}))\n")
    single = cell.run("condor_hold", "-constraint", "true", str(b))
    assert single.stderr == f"\nCouldn't find/hold all jobs matching constraint ((true) && (ClusterId == {b}))\n"
    # (ids come first, each on its line; an earlier failure is named again when the
    # constraint acts on nothing too)
    mixed = cell.run("condor_release", "999.0", str(b), f"{a}.0")
    assert mixed.stdout == f"Job {a}.0 released\nAll jobs in cluster {b} have been released\n"
    assert mixed.stderr == "Job 999.0 not found\n"
    cell.run("condor_rm", "-all", check=True)
    wait_for(lambda: not statuses(cell))
    empty = cell.run("condor_rm", "997.0", str(a))
    assert empty.stderr == ("\nJob 997.0 not found\ncondor_rm:0:There are no jobs in the queue\n"
                            f"Couldn't find/remove all jobs in cluster {a}\n")
    assert empty.returncode == 1


def test_name_looks_up_the_schedd_as_htcondor(cell, workdir):
    a = submit(cell, SLEEP + "hold = true\nqueue 2\n", cwd=workdir)
    unknown = cell.run("condor_rm", "-name", "nosuchhost.invalid", f"{a}.0")
    assert (unknown.returncode, unknown.stdout, unknown.stderr) == (1, "", "condor_rm: unknown host nosuchhost.invalid\n")
    other = cell.run("condor_hold", "-name", f"someone@{cell.host}", f"{a}.0")
    assert (other.returncode, other.stderr) == (1, f"Error: cannot get address of schedd {cell.host}\n")
    remote = cell.run("condor_release", "-name", "schedd@elsewhere.invalid", f"{a}.0")
    assert (remote.returncode, remote.stderr) == (1, "Error: cannot get address of schedd elsewhere.invalid\n")
    with_pool = cell.run("condor_rm", "-pool", cell.host, "-name", f"x@{cell.host}", f"{a}.0")
    assert (with_pool.returncode, with_pool.stderr) == (1, f"condor_rm: Can't find address for schedd x@{cell.host}\n")
    assert statuses(cell, f"{a}.0") == {f"{a}.0": 5}              # (nothing was done)
    by_host = cell.run("condor_release", "-name", cell.host, f"{a}.0")
    assert (by_host.returncode, by_host.stdout) == (0, f"Job {a}.0 released\n")
    by_upper = cell.run("condor_hold", "-name", cell.host.upper(), "-pool", f"{cell.host}:9618", f"{a}.0")
    assert (by_upper.returncode, by_upper.stdout) == (0, f"Job {a}.0 held\n")


def test_pool_must_be_this_cells(cell, workdir):
    a = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    jid = f"{a}.0"
    for prog in ("condor_rm", "condor_hold", "condor_release", "condor_vacate_job"):
        bad = cell.run(prog, "-pool", "nosuchpool.invalid:9618", jid)
        assert (bad.returncode, bad.stdout, bad.stderr) == (1, "", f"{prog}: unknown host nosuchpool.invalid\n")
    assert statuses(cell, jid) == {jid: 5}
    for pool in (cell.host, f"{cell.host}:9618", "localhost", "<127.0.0.1:9618>"):
        ok = cell.run("condor_release", "-pool", pool, jid)
        assert (ok.returncode, ok.stdout) == (0, f"Job {jid} released\n"), pool
        cell.run("condor_hold", "-pool", pool, jid, check=True)
    # condor_prio: -pool needs -n, and names the pool the schedd is looked for in
    alone = cell.run("condor_prio", "-pool", cell.host, "-p", "3", str(a))
    assert (alone.returncode, alone.stderr) == (1, "condor_prio: -pool also requires -n to be specified\n")
    far = cell.run("condor_prio", "-pool", "nosuchpool.invalid", "-n", cell.host, "-p", "3", str(a))
    assert (far.returncode, far.stderr) == (1, f"condor_prio: No such schedd named {cell.host} in pool "
                                               "nosuchpool.invalid\n")
    unnamed = cell.run("condor_prio", "-n", f"x@{cell.host}", str(a))         # (found before the priority)
    assert (unnamed.returncode, unnamed.stderr) == (1, f"condor_prio: No such schedd named x@{cell.host} in "
                                                       "local pool\n")
    here = cell.run("condor_prio", "-pool", f"{cell.host}:9618", "-n", cell.host, "-p", "3", str(a))
    assert here.returncode == 0, here.stderr
    # condor_qedit: -pool alone leaves the local schedd; with -name the pool must have it
    edit = cell.run("condor_qedit", "-pool", "nosuchpool.invalid", str(a), "Foo", "2")
    assert edit.returncode == 0, edit.stderr
    far = cell.run("condor_qedit", "-name", cell.host, "-pool", "nosuchpool.invalid", str(a), "Foo", "3")
    assert (far.returncode, far.stderr) == (1, f"condor_qedit: No such schedd named {cell.host} in "
                                               "nosuchpool.invalid pool\n")
    near = cell.run("condor_qedit", "-name", cell.host, "-pool", cell.host, str(a), "Foo", "4")
    assert near.returncode == 0, near.stderr
    assert cell.run("condor_q", jid, "-af", "JobPrio", "Foo").stdout == "3 4\n"
