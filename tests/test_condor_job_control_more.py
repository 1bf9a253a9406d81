"""condor_vacate_job, and more of condor_rm, condor_hold, condor_release, condor_prio,
condor_wait and condor_userprio as HTCondor's tools answer, with a running daemon."""

import os

from condortools import statuses, submit, wait_events, wait_status
from conftest import wait_for

SLEEP = "executable = /bin/sleep\narguments = 300\n"


def test_vacate_job_evicts_and_the_job_runs_again(cell, workdir):
    """A vacated running job goes back to idle (event 004 in its log) and runs again; a
    job that is not running is answered "not running to be vacated" (exit 1)."""
    log = os.path.join(workdir, "v.log")
    cluster = submit(cell, SLEEP + f"log = {log}\nqueue\n", cwd=workdir)
    held = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, name="h.sub")
    jid = f"{cluster}.0"
    assert wait_status(cell, jid, 2)
    done = cell.run("condor_vacate_job", jid, f"{cluster}.5", f"{held}.0")
    assert done.stdout == f"Job {jid} vacated\n"
    assert done.stderr == f"Job {cluster}.5 not found\nJob {held}.0 not running to be vacated\n"
    assert done.returncode == 1
    assert wait_events(log, jid, [0, 1, 4, 1])        # evicted, then running again
    assert statuses(cell, jid)[jid] in (1, 2)
    fast = cell.run("condor_vacate_job", "-fast", str(cluster))
    assert (fast.returncode, fast.stdout) == (0, f"All jobs in cluster {cluster} have been fast-vacated\n")
    assert wait_events(log, jid, [0, 1, 4, 1, 4, 1])
    idle = cell.run("condor_vacate_job", str(held))
    assert idle.returncode == 1 and idle.stderr.endswith(f"Couldn't find/vacate all jobs in cluster {held}\n")
    cell.run("condor_rm", str(cluster), str(held))


def test_vacate_job_rights_options_and_launcher(cell, workdir, users):
    """Another user's job is refused (permission denied, the job keeps running); -fast
    belongs to condor_vacate_job alone; the usage names -fast; -all of a user acts on
    their own running jobs."""
    cluster = submit(cell, SLEEP + "queue\n", cwd=workdir)
    jid = f"{cluster}.0"
    assert wait_status(cell, jid, 2)
    theirs = cell.run("condor_vacate_job", "-long", jid, user=users[0])
    assert theirs.returncode == 1 and theirs.stderr == f"\nPermission denied to vacate job {jid}\n"
    assert theirs.stdout.startswith(f"job_{cluster}_0 = 5\nActionResultType = 1\nJobAction = 5\n")
    fast = cell.run("condor_vacate_job", "-f", "-totals", jid, user=users[0])
    assert fast.stderr == f"\nPermission denied to fast-vacate job {jid}\n" and fast.returncode == 1
    assert statuses(cell, jid)[jid] == 2
    wrong = cell.run("condor_rm", "-fast", jid)
    assert wrong.returncode == 1
    assert wrong.stderr.startswith("-fast is only valid with condor_vacate_job\nUsage: condor_rm ")
    assert statuses(cell, jid)[jid] == 2
    forcex = cell.run("condor_vacate_job", "-forcex", jid)
    assert forcex.returncode == 1 and forcex.stderr.startswith("-forcex is only valid with condor_rm\n")
    helped = cell.run("condor_vacate_job", "-help")
    assert helped.returncode == 0 and "  -fast               Use a fast vacate (hardkill)\n" in helped.stderr
    assert "  cluster.proc        vacate the given job\n" in helped.stderr
    nothing = cell.run("condor_vacate_job", "-all", user=users[0])
    assert nothing.returncode == 1 and nothing.stderr.endswith("Couldn't find/vacate all jobs\n")
    mine = cell.run("condor_vacate_job", "-all")
    assert (mine.returncode, mine.stdout) == (0, "All jobs have been vacated\n")
    cell.run("condor_rm", str(cluster))


def test_words_that_are_no_job_ids_name_users(cell, workdir):
    """``1.2.3``, ``1.5x`` and ``1.`` are user names, as HTCondor reads them: the other
    arguments are still acted on."""
    cluster = submit(cell, SLEEP + "hold = true\nqueue 2\n", cwd=workdir)
    done = cell.run("condor_release", "1.2.3", f"{cluster}.0")
    assert done.stdout == f"Job {cluster}.0 released\n"
    assert done.stderr.endswith('Couldn\'t find/release all jobs of user "1.2.3"\n')
    assert "Invalid cluster" not in done.stderr and done.returncode == 1
    assert wait_for(lambda: statuses(cell, f"{cluster}.0").get(f"{cluster}.0") in (1, 2))
    more = cell.run("condor_hold", f"{cluster}.0", "1.5x", "1.")
    assert more.stdout == f"Job {cluster}.0 held\n" and more.returncode == 1
    assert "Invalid cluster" not in more.stderr
    assert statuses(cell, f"{cluster}.0")[f"{cluster}.0"] == 5
    cell.run("condor_rm", str(cluster))


def test_forcex_counts_a_removed_job_once(cell, workdir):
    """parsl's cancel (condor_rm; condor_rm -forcex) of a held job exits 0; a later
    -forcex of the job forced out finds it no more (exit 1), as HTCondor's schedd."""
    cluster = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    cancel = cell.run("sh", "-c", f"condor_rm {jid}; condor_rm -forcex {jid}")
    assert (cancel.returncode, cancel.stderr) == (0, "")
    assert cancel.stdout.endswith(f"Job {jid} removed locally (remote state unknown)\n")
    again = cell.run("condor_rm", "-forcex", jid)
    assert (again.returncode, again.stdout, again.stderr) == (1, "", f"\nJob {jid} not found\n")
    kept = submit(cell, "executable = /bin/true\nleave_in_queue = TRUE\nqueue\n", cwd=workdir, name="k.sub")
    kid = f"{kept}.0"
    assert wait_status(cell, kid, 4)
    cell.run("condor_rm", kid, check=True)
    first = cell.run("condor_rm", "-forcex", kid)
    assert (first.returncode, first.stdout) == (0, f"Job {kid} removed locally (remote state unknown)\n")
    second = cell.run("condor_rm", "-forcex", kid)
    assert (second.returncode, second.stderr) == (1, f"\nJob {kid} not found\n")


def test_error_texts_of_rm_hold_prio_and_qedit(cell, workdir):
    """A constraint that finds nothing to act on: HTCondor's error stack (an empty line)
    before "Couldn't find/..."; an empty queue: ``condor_rm:0:There are no jobs in the
    queue`` (exit 0); -constraint with a job id warns that it is ignored for the id; an
    unknown schedd of condor_prio and condor_qedit is named with the program."""
    cluster = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    held = cell.run("condor_hold", str(cluster))
    assert (held.returncode, held.stderr) == (1, f"\nCouldn't find/hold all jobs in cluster {cluster}\n")
    warned = cell.run("condor_release", f"{cluster}.0", "-constraint", "false")
    assert warned.stderr.startswith("Warning, -constraint is ignored for fully qualified job ids\n")
    assert warned.stdout.startswith(f"Job {cluster}.0 released\n")
    prio = cell.run("condor_prio", "-n", "nosuchhost.invalid", "-p", "4", str(cluster))
    assert (prio.returncode, prio.stderr) == (1, "condor_prio: No such schedd named nosuchhost.invalid in local pool\n")
    qedit = cell.run("condor_qedit", "-name", "nosuchhost.invalid", str(cluster), "Foo", "2")
    assert (qedit.returncode, qedit.stderr) == (1, "condor_qedit: No such schedd named nosuchhost.invalid in "
                                                   "local pool\n")
    cell.run("condor_rm", str(cluster), check=True)
    assert wait_for(lambda: not statuses(cell))
    empty = cell.run("condor_rm", "nobodyuser")
    assert (empty.returncode, empty.stderr) == (0, "condor_rm:0:There are no jobs in the queue\n")


def test_prio_wraps_to_32_bits(cell, workdir):
    """condor_prio adds in a C int: 2147483647 + 1 is -2147483648."""
    cluster = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    cell.run("condor_prio", "-p", "2147483647", str(cluster), check=True)
    cell.run("condor_prio", "+1", str(cluster), check=True)
    shown = cell.run("condor_q", str(cluster), "-af", "JobPrio")
    assert shown.stdout == "-2147483648\n"
    cell.run("condor_rm", str(cluster))


def test_userprio_edit_without_its_arguments_gives_the_usage(cell):
    proc = cell.run("condor_userprio", "-setfactor")
    assert proc.returncode == 1 and proc.stderr.startswith("usage: condor_userprio [options]")
    assert "requires another parameter" not in proc.stderr


def test_wait_with_a_negative_time_has_expired(cell, workdir):
    log = os.path.join(workdir, "w.log")
    cluster = submit(cell, f"executable = /bin/true\nlog = {log}\nqueue\n", cwd=workdir)
    assert wait_events(log, f"{cluster}.0", [0, 1, 5])
    proc = cell.run("condor_wait", "-wait", "-5", log)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "Time expired.\n", "")
