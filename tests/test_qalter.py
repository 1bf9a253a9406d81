"""qalter against a running daemon: what a user sees after changing a job."""

import os
import re
import time

from conftest import wait_for


def jid_of(proc):
    assert proc.returncode == 0, proc.stderr
    return int(re.search(r"(\d+)", proc.stdout).group(1))


def after_a_pass(cell, workdir):
    """Return once a scheduler pass has looked at every job submitted before: a job
    submitted now has been dispatched and has ended (slots permitting)."""
    cell.wait_finished(jid_of(cell.qsub("-b", "y", "true", cwd=workdir)))


def row_of(cell, jid):
    """The qstat columns of a job (None when it is not listed)."""
    for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]:
        fields = line.split()
        if fields and fields[0] == str(jid):
            return fields
    return None


def field_of(cell, jid, label):
    for line in cell.run("qstat", "-j", str(jid)).stdout.splitlines():
        if line.startswith(label + ":"):
            return line.split(":", 1)[1].strip()
    return None


def running(cell, jid):
    return cell.task_states(jid).get(1) == "running"


def fill(cell, workdir):
    """Occupy both slots of the cell with long jobs; returns their ids."""
    ids = [jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir)) for _ in range(2)]
    for jid in ids:
        wait_for(lambda j=jid: running(cell, j))
    return ids


def test_rename_pending_job(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-N", "before", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-N", "renamed_pend", str(jid))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"modified job name of job {jid}\n", "")
    assert row_of(cell, jid)[2] == "renamed_pe"          # the name column is 10 wide
    assert field_of(cell, jid, "job_name") == "renamed_pend"
    assert field_of(cell, jid, "version") == "1"
    cell.run("qalter", "-N", "again", str(jid), check=True)
    assert field_of(cell, jid, "version") == "2"


def test_version_counts_alterations_and_hold_changes_as_in_the_capture(cell, workdir, users):
    """The capture qstat-j-pending-alarm.txt's job reached version 7 by one qalter -N and
    six qhold/qrls that were allowed; qalter -w e/-w v, a denied hold and qmod -sj do not
    count. A hold change that finds the hold already set counts too (Grid Engine counts
    each allowed request); the count survives a restart, in the text and the XML."""
    owner = users[0]
    jid = jid_of(cell.qsub("-b", "y", "-l", "h=nosuchhost", "sleep", "30", cwd=workdir, user=owner))
    assert field_of(cell, jid, "version") is None
    steps = [(owner, "qalter", "-N", "renamed_pend"), (owner, "qalter", "-w", "e"), (owner, "qalter", "-w", "v"),
             (owner, "qhold"), (owner, "qrls"), ("root", "qhold", "-h", "o"), ("root", "qhold", "-h", "s"),
             (owner, "qhold", "-h", "s"), ("root", "qrls", "-h", "o"), ("root", "qrls", "-h", "s"),
             (owner, "qmod", "-sj")]
    for who, *argv in steps:
        cell.run(*argv, str(jid), user=None if who == "root" else who)
    assert field_of(cell, jid, "version") == "7"
    cell.run("qhold", str(jid), user=owner, check=True)
    cell.run("qhold", str(jid), user=owner, check=True)
    assert field_of(cell, jid, "version") == "9"
    cell.stop_daemon()
    cell.start_daemon()
    assert field_of(cell, jid, "version") == "9"
    assert "<JB_version>9</JB_version>" in cell.run("qstat", "-j", str(jid), "-xml").stdout


def test_name_survives_a_daemon_restart_and_finds_dependants(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    cell.run("qalter", "-N", "kept", str(jid), check=True)
    cell.stop_daemon()
    cell.start_daemon()
    wait_for(lambda: row_of(cell, jid) and row_of(cell, jid)[2] == "kept")
    dep = jid_of(cell.qsub("-hold_jid", "kept", "-b", "y", "true", cwd=workdir))
    assert field_of(cell, dep, "jid_predecessor_list") == str(jid)


def test_hard_resource_list_of_running_job(cell, workdir):
    jid = jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir))
    wait_for(lambda: running(cell, jid))
    proc = cell.run("qalter", "-l", "h_rt=1:0:0", str(jid))
    assert (proc.returncode, proc.stdout) == (0, f"modified hard resource list of job {jid}\n")
    assert field_of(cell, jid, "hard resource_list") == "h_rt=3600"    # (in seconds, as accounting-file-raw)
    assert running(cell, jid)


def test_resource_request_makes_pending_job_runnable(cell, workdir):
    jid = jid_of(cell.qsub("-l", "hostname=nosuchhost", "-b", "y", "true", cwd=workdir))
    # (a pass has looked at it: its reason is shown)
    wait_for(lambda: "(-l hostname=nosuchhost) cannot run" in (field_of(cell, jid, "scheduling info") or ""))
    assert row_of(cell, jid)[4] == "qw"
    cell.run("qalter", "-l", f"hostname={cell.host}", str(jid), check=True)
    cell.wait_finished(jid)


def test_resource_request_makes_pending_job_unrunnable(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    cell.run("qalter", "-l", "arch=no-such-arch", "-h", "U", str(jid), check=True)
    wait_for(lambda: "(-l arch=no-such-arch) cannot run" in (field_of(cell, jid, "scheduling info") or ""))
    assert row_of(cell, jid)[4] == "qw"


def test_priority_reorders_pending_jobs(cell, workdir):
    """The job given the lower priority goes behind the other, in qstat and when a slot frees.
    No waiting-time urgency: it counts whole seconds, and two jobs submitted on either side
    of a second's turn would differ by one second of it, which outweighs a priority of -100
    (the urgency is normalized over the jobs, the priority over -1023..1024)."""
    text = re.sub(r"(?m)^weight_priority .*$", "weight_priority 1",
                  cell.run("qconf", "-ssconf", check=True).stdout)   # (Grid Engine's default: 0)
    text = re.sub(r"(?m)^weight_waiting_time .*$", "weight_waiting_time 0", text)
    path = os.path.join(workdir, "sched_conf")
    with open(path, "w") as fh:
        fh.write(text)
    cell.run("qconf", "-Msconf", path, check=True)
    busy = fill(cell, workdir)
    first = jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir))
    second = jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir))
    def listed():
        return [int(line.split()[0]) for line in cell.run("qstat").stdout.splitlines()[2:]]
    assert listed().index(first) < listed().index(second)
    proc = cell.run("qalter", "-p", "-100", str(first))
    assert proc.stdout == f"root@{cell.host} sets scheduling priority of job {first} to -100\n"
    assert field_of(cell, first, "priority") == "-100"
    wait_for(lambda: listed().index(second) < listed().index(first), timeout=30)
    cell.run("qdel", str(busy[0]), check=True)
    # the pass that sees the freed slot starts one of them: the other waits for the next slot
    started = wait_for(lambda: [jid for jid in (first, second) if running(cell, jid)])
    assert started == [second]


def test_hold_jid_added_and_removed(cell, workdir):
    blocker = jid_of(cell.qsub("-N", "blocker", "-b", "y", "sleep", "300", cwd=workdir))
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-hold_jid", "blocker,999999", "-h", "U", str(jid))
    assert proc.stdout.splitlines() == [
        f"modified hold of job {jid}", f"modified job id hold list of job {jid}",
        f"   blocking jobs: {blocker}", "   exited jobs:   999999"]
    after_a_pass(cell, workdir)
    assert row_of(cell, jid)[4] == "hqw"
    assert field_of(cell, jid, "jid_predecessor_list (req)") == "blocker,999999"
    assert field_of(cell, jid, "jid_predecessor_list") == str(blocker)
    proc = cell.run("qalter", "-hold_jid", "NONE", str(jid))
    assert "   blocking jobs: NONE" in proc.stdout
    cell.wait_finished(jid)
    assert running(cell, blocker)


def test_hold_jid_release_follows_the_predecessor(cell, workdir):
    blocker = jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir))
    jid = jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir))
    wait_for(lambda: running(cell, jid))
    waiting = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    cell.run("qalter", "-hold_jid", str(blocker), "-h", "U", str(waiting), check=True)
    cell.run("qdel", str(jid), check=True)
    cell.wait_finished(jid)
    after_a_pass(cell, workdir)          # (in the slot freed: a pass passed it over)
    assert cell.task_states(waiting).get(1) in (None, "pending")
    cell.run("qdel", str(blocker), check=True)
    cell.wait_finished(waiting)


def test_dependency_on_itself_or_in_a_cycle_is_refused(cell, workdir):
    a = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    b = jid_of(cell.qsub("-h", "-hold_jid", str(a), "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-hold_jid", str(a), str(a))
    assert (proc.returncode, proc.stdout) == (1, f'denied: job "{a}" may not be it\'s own jobnet predecessor\n')
    proc = cell.run("qalter", "-hold_jid", str(b), str(a))
    assert proc.returncode == 1
    assert proc.stdout == f"job {a} dependency change would generate a dependency cycle with job {b}\n"
    assert field_of(cell, a, "jid_predecessor_list (req)") is None


def test_other_users_job_is_refused(cell, workdir, users):
    alice, bob = users[0], users[1]
    jid = jid_of(cell.qsub("-h", "-N", "mine", "-b", "y", "true", user=alice, cwd=workdir))
    proc = cell.run("qalter", "-N", "hijack", str(jid), user=bob, cwd=workdir)
    assert proc.returncode == 1
    assert proc.stdout == f'denied: "{bob}" must be at least owner of job {jid} to change job attributes\n'
    assert row_of(cell, jid)[2] == "mine"
    proc = cell.run("qalter", "-w", "v", str(jid), user=bob, cwd=workdir)
    assert proc.returncode == 1 and "must be at least owner" in proc.stdout
    assert cell.run("qalter", "-N", "by_root", str(jid)).returncode == 0
    assert row_of(cell, jid)[2] == "by_root"


def test_users_may_lower_but_not_raise_priority(cell, workdir, users):
    alice = users[0]
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", user=alice, cwd=workdir))
    proc = cell.run("qalter", "-p", "-20", str(jid), user=alice, cwd=workdir)
    assert proc.returncode == 0 and "sets scheduling priority" in proc.stdout
    proc = cell.run("qalter", "-p", "-10", "-N", "up", str(jid), user=alice, cwd=workdir)
    assert (proc.returncode, proc.stdout) == (1, f'denied: "{alice}" must be operator to increase job priority\n')
    assert field_of(cell, jid, "priority") == "-20"
    assert field_of(cell, jid, "job_name") == "true"


def test_hold_letters_and_rights(cell, workdir, users):
    alice = users[0]
    jid = jid_of(cell.qsub("-b", "y", "sleep", "300", user=alice, cwd=workdir))
    wait_for(lambda: running(cell, jid))
    pending = jid_of(cell.qsub("-l", "hostname=nowhere", "-b", "y", "true", user=alice, cwd=workdir))
    proc = cell.run("qalter", "-h", "s", str(pending), user=alice, cwd=workdir)
    assert (proc.returncode, proc.stdout) == (1, f'denied: "{alice}" must be manager to set manager hold\n')
    assert cell.run("qalter", "-h", "u", str(pending), user=alice, cwd=workdir).stdout == \
        f"modified hold of job {pending}\n"
    assert row_of(cell, pending)[4] == "hqw"
    cell.run("qalter", "-h", "s", str(pending), check=True)
    proc = cell.run("qalter", "-h", "n", str(pending), user=alice, cwd=workdir)
    assert proc.stdout == f'denied: "{alice}" must be manager to remove manager hold\n'
    cell.run("qalter", "-h", "n", str(pending), check=True)
    assert row_of(cell, pending)[4] == "qw"


def test_array_task_holds(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-t", "1-3", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-h", "U", str(jid), "-t", "2")
    assert proc.stdout == f"modified hold of job-array task {jid}.2\n"
    wait_for(lambda: cell.finished(jid, (2,)))
    assert cell.task_states(jid).get(1) in (None, "pending")


def test_override_tickets_need_an_operator_and_show_in_xml(cell, workdir, users):
    alice = users[0]
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", user=alice, cwd=workdir))
    proc = cell.run("qalter", "-ot", "100", str(jid), user=alice, cwd=workdir)
    assert (proc.returncode, proc.stdout) == (
        1, f'denied: "{alice}" must be operator to change amount of override tickets\n')
    proc = cell.run("qalter", "-ot", "100", str(jid))
    assert (proc.returncode, proc.stdout) == (0, f"root@{cell.host} sets override tickets of job {jid} to 100\n")
    xml = cell.run("qstat", "-j", str(jid), "-xml").stdout
    assert "<JB_override_tickets>100</JB_override_tickets>" in xml
    assert "<JB_version>1</JB_version>" in xml
    ext = [line.split() for line in cell.run("qstat", "-ext", "-u", "*").stdout.splitlines()[2:]]
    assert [f[8:10] for f in ext if f[0] == str(jid)] == [["0", "100"]]      # tckts, ovrts
    assert "<JB_override_tickets>100</JB_override_tickets>" in cell.run("qstat", "-ext", "-u", "*", "-xml").stdout


def test_new_output_arguments_and_environment_are_used(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-b", "y", "echo", "old", cwd=workdir))
    out = os.path.join(workdir, "new.out")
    proc = cell.run("qalter", "-o", out, "-j", "y", "-v", "GREETING=hi", "-b", "y", str(jid))
    assert proc.returncode == 2 and '"-b"' in proc.stderr
    proc = cell.run("qalter", "-o", out, "-j", "y", "-S", "/bin/sh", "-h", "U", str(jid), "--", "$GREETING", "new")
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.splitlines() == [
        f"modified hold of job {jid}", f"modified output merge behaviour of job {jid}",
        f"modified stdout path list of job {jid}", f"modified shell list of job {jid}",
        f"modified script arguments of job {jid}"]
    cell.wait_finished(jid)
    with open(out) as fh:
        assert fh.read() == "new\n"


def test_environment_and_working_directory(cell, workdir):
    sub = os.path.join(workdir, "sub")
    os.mkdir(sub)
    jid = jid_of(cell.qsub("-h", "-cwd", "-N", "envjob", cwd=workdir, input="echo $GREETING $(pwd)\n"))
    proc = cell.run("qalter", "-v", "GREETING=hello", "-cwd", "-h", "U", str(jid), cwd=sub)
    assert f"modified environment of job {jid}" in proc.stdout
    assert f"modified working directory of job {jid}" in proc.stdout
    cell.wait_finished(jid)
    with open(os.path.join(sub, f"envjob.o{jid}")) as fh:
        assert fh.read() == f"hello {sub}\n"


def test_context_is_edited(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-ac", "keep=1", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-ac", "a=1,b=2", "-dc", "b", str(jid))
    assert proc.stdout == f"modified context of job {jid}\n"
    assert field_of(cell, jid, "context") == "keep=1,a=1"
    cell.run("qalter", "-sc", "only=x", str(jid), check=True)
    assert field_of(cell, jid, "context") == "only=x"


def test_verify_pe_larger_than_the_cell(cell, workdir):
    big = jid_of(cell.qsub("-pe", "smp", "4", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-w", "v", str(big))
    assert proc.returncode == 1
    assert proc.stdout == (f'Job {big} cannot run in PE "smp" because it only offers 0 slots\n'
                           "verification: no suitable queues\n")
    later = time.strftime("%Y%m%d%H%M", time.localtime(time.time() + 3600))
    fits = jid_of(cell.qsub("-pe", "smp", "2", "-a", later, "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-w", "v", str(fits))
    assert (proc.returncode, proc.stdout) == (0, "verification: found possible assignment with 2 slots\n")
    proc = cell.run("qalter", "-w", "v", "-pe", "smp", "4", str(fits))
    assert "verification: no suitable queues" in proc.stdout
    assert field_of(cell, fits, "parallel environment") == "smp range: 2"


def test_verify_running_held_and_poke(cell, workdir):
    busy = fill(cell, workdir)
    proc = cell.run("qalter", "-w", "v", str(busy[0]))
    assert (proc.returncode, proc.stdout) == (0, "verification: job is already running or is held\n")
    held = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    assert cell.run("qalter", "-w", "v", str(held)).stdout == "verification: job is already running or is held\n"
    waiting = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-w", "v", str(waiting))
    assert (proc.returncode, proc.stdout) == (0, "verification: found suitable queue(s)\n")
    proc = cell.run("qalter", "-w", "p", str(waiting))
    # as capture qalter-w-p-pending.txt words a full queue
    assert (proc.returncode, proc.stdout) == (
        1, f'Job {waiting} (-l NONE) cannot run in queue "all.q@testhost" because it offers only '
           "qc:slots=0.000000\nverification: no suitable queues\n")
    asking = jid_of(cell.qsub("-l", "h_vmem=1G", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-w", "p", str(asking))
    assert proc.stdout.splitlines()[0] == (f'Job {asking} (-l h_vmem=1G) cannot run in queue '
                                           '"all.q@testhost" because it offers only qc:slots=0.000000')


def test_verify_error_mode_refuses_the_change(cell, workdir):
    fill(cell, workdir)
    jid = jid_of(cell.qsub("-pe", "smp", "1", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-w", "e", "-pe", "smp", "4", str(jid))
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "error: no suitable queues\n")
    assert field_of(cell, jid, "parallel environment") == "smp range: 1"
    proc = cell.run("qalter", "-w", "w", "-pe", "smp", "4", str(jid))
    assert proc.returncode == 0 and proc.stderr == "warning: no suitable queues\n"
    assert f"modified slot range of job {jid}" in proc.stdout
    assert cell.run("qalter", "-w", "e", str(jid)).returncode == 1


def test_running_job_keeps_project_and_consumables(cell, workdir):
    with open(os.path.join(cell.root, "etc", "complex"), "a") as fh:
        fh.write("lic                 lic        INT       <=    YES         YES        0        0\n")
    cell.run("qconf", "-aattr", "exechost", "complex_values", "lic=4", cell.host, check=True)
    jid = jid_of(cell.qsub("-l", "lic=1", "-b", "y", "sleep", "300", cwd=workdir))
    wait_for(lambda: running(cell, jid))
    proc = cell.run("qalter", "-l", "lic=2", str(jid))
    assert (proc.returncode, proc.stdout) == (
        1, "denied: can't change consumable resource request \"lic\" of running job\n")
    proc = cell.run("qalter", "-l", "h_rt=100", str(jid))
    assert "lacks in new resource request" in proc.stdout and proc.returncode == 1
    assert cell.run("qalter", "-l", "lic=1,h_rt=100", str(jid)).returncode == 0
    proc = cell.run("qalter", "-ar", "1", str(jid))
    assert (proc.returncode, proc.stdout) == (1, f"job {jid} can't modify running jobs\n")
    proc = cell.run("qalter", "-soft", "-l", "lic=1", str(jid))
    assert 'soft requests on consumables like "lic" are not supported' in proc.stdout


def test_unknown_jobs_names_and_users(cell, workdir):
    proc = cell.run("qalter", "-N", "x", "9999999")
    assert (proc.returncode, proc.stdout) == (1, 'denied: job "9999999" does not exist\n')
    a = jid_of(cell.qsub("-h", "-N", "grp", "-b", "y", "true", cwd=workdir))
    b = jid_of(cell.qsub("-h", "-N", "grp", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-A", "proj1", "grp")
    assert proc.stdout == f"modified account of job {a}\nmodified account of job {b}\n"
    assert field_of(cell, b, "account") == "proj1"
    proc = cell.run("qalter", "-u", "root", "-m", "e")
    assert proc.stdout == f"modified mail options of job {a}\nmodified mail options of job {b}\n"
    # (as Grid Engine's qalter: -u stands in place of the job list given with it)
    proc = cell.run("qalter", "-u", "root", "-m", "b", str(a))
    assert (proc.returncode, proc.stdout) == (
        0, f"modified mail options of job {a}\nmodified mail options of job {b}\n")


def test_answers_come_in_the_order_of_the_job_list(cell, workdir):
    """As Grid Engine's qmaster answers the jobs of one qalter in order, on standard
    output (refusals too, as 8.1.9's qalter prints every answer), exit status 1 when
    one job was refused; a name matching no job is answered last."""
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-N", "x", "9999999", str(jid), "9999998", "nosuchname")
    assert (proc.returncode, proc.stderr) == (1, "")
    assert proc.stdout == ('denied: job "9999999" does not exist\n'
                           f"modified job name of job {jid}\n"
                           'denied: job "9999998" does not exist\n'
                           'denied: job "nosuchname" does not exist\n')
    assert row_of(cell, jid)[2] == "x"


def test_bad_command_lines(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-badopt", str(jid))
    assert (proc.returncode, proc.stderr) == (2, 'qalter: invalid option argument "-badopt"\n')
    proc = cell.run("qalter", "-pe", "nosuchpe", "2", str(jid))
    assert (proc.returncode, proc.stderr) == (
        1, 'denied: parallel environment "nosuchpe" does not exist\n')
    proc = cell.run("qalter", "-p", "5000", str(jid))
    assert (proc.returncode, proc.stderr) == (
        7, 'qalter: invalid priority "5000".  Must be an integer from -1023 to 1024\n')
    assert cell.run("qalter", str(jid)).returncode == 1
    assert cell.run("qalter", "-N", "x").returncode == 1
    assert field_of(cell, jid, "version") is None
    help_text = cell.run("qalter", "-help")
    assert help_text.returncode == 0 and "-ot override_tickets" in help_text.stdout


def test_an_unknown_queue_is_refused_in_qsubs_words(cell, workdir):
    """-q and -masterq naming no queue: Grid Engine's qmaster checks qalter's new list as
    qsub's, with the same message."""
    jid = jid_of(cell.qsub("-h", "-pe", "smp", "1", "-b", "y", "true", cwd=workdir))
    for opt, name in (("-q", "nosuch.q"), ("-masterq", "nosuch.q"), ("-masterq", "all.q@nosuchhost")):
        proc = cell.run("qalter", opt, name, str(jid))
        assert (proc.returncode, proc.stderr) == (
            1, f'Job was rejected because job requests unknown queue "{name}"\n')
    assert field_of(cell, jid, "master_hard_queue_list") is None
    assert cell.run("qalter", "-masterq", "all.q", str(jid)).returncode == 0
    assert field_of(cell, jid, "master_hard_queue_list") == "all.q"


def test_qsub_refuses_qalters_override_tickets_and_ignores_its_users(cell, workdir):
    """As Grid Engine's qsub: its option parser takes both, the job has no place for -ot
    (refused after all options are read, exit 5) and keeps -u without effect."""
    proc = cell.qsub("-ot", "1", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (5, "qsub: Unknown option -ot 1\n\n")
    proc = cell.qsub("-u", "1", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (0, "")


def test_start_time_and_task_concurrency(cell, workdir):
    later = time.strftime("%Y%m%d%H%M", time.localtime(time.time() + 3600))
    jid = jid_of(cell.qsub("-a", later, "-t", "1-4", "-tc", "1", "-b", "y", "true", cwd=workdir))
    after_a_pass(cell, workdir)
    assert cell.task_states(jid) == {}
    proc = cell.run("qalter", "-tc", "2", "-a", time.strftime("%Y%m%d%H%M"), str(jid))
    assert proc.stdout == f"modified start time of job {jid}\nmodified task concurrency of job {jid}\n"
    cell.wait_finished(jid, (1, 2, 3, 4))


def test_running_job_renamed_at_once(cell, workdir):
    jid = jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir))
    wait_for(lambda: running(cell, jid))
    cell.run("qalter", "-N", "moved", str(jid), check=True)
    assert row_of(cell, jid)[2] == "moved" and row_of(cell, jid)[4] == "r"


def test_qstat_j_shows_the_predecessors_of_a_job_the_daemon_has_not_taken_yet(cell, workdir):
    """A job qsub queued while no daemon runs is shown by qstat -j with the predecessors
    its -hold_jid names (by name and by id), resolved as the daemon resolves them."""
    first = jid_of(cell.qsub("-h", "-N", "first", "-b", "y", "true", cwd=workdir))
    other = jid_of(cell.qsub("-h", "-N", "other", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: row_of(cell, other))
    cell.stop_daemon()
    quiet = {"GRIDTOOLS_NO_AUTOSTART": "1"}
    dep = jid_of(cell.run("qsub", "-hold_jid", f"fir*,{other}", "-b", "y", "true", cwd=workdir, env=quiet))
    shown = {line.split(":", 1)[0]: line.split(":", 1)[1].strip()
             for line in cell.run("qstat", "-j", str(dep), env=quiet).stdout.splitlines() if ":" in line}
    assert shown["job_number"] == str(dep) and shown["jid_predecessor_list"] == f"{first},{other}"
    cell.start_daemon()
    wait_for(lambda: row_of(cell, dep))
    assert field_of(cell, dep, "jid_predecessor_list") == f"{first},{other}"


def test_condor_qedit_and_prio_keep_what_qalter_changed(cell, workdir):
    """An HTCondor job altered with qalter keeps its new limits, paths, PE and
    environment when condor_qedit or condor_prio later changes an attribute that makes
    none of them; an edit of what a request reads still changes that request."""
    from condortools import submit
    cluster = submit(cell, "executable = /bin/sleep\narguments = 20\nMY.Mem = 100\n"
                     "request_memory = MY.Mem\nhold = true\nqueue 2\n", cwd=workdir)
    out = os.path.join(workdir, "alt.out")
    cell.run("qalter", "-l", "h_rt=3,mem_free=100M", "-o", out, "-pe", "smp", "2", "-v", "FOO=bar",
             str(cluster), check=True)
    cell.run("condor_qedit", str(cluster), "Foo", "1", check=True)
    cell.run("condor_prio", "-p", "4", str(cluster), check=True)
    shown = cell.run("qstat", "-j", str(cluster)).stdout
    assert "hard resource_list:         h_rt=3,mem_free=100M" in shown, shown
    assert f"stdout_path_list:           NONE:NONE:{out}" in shown
    assert "parallel environment:  smp range: 2" in shown and "FOO=bar" in shown
    assert cell.run("condor_q", str(cluster), "-af", "JobPrio", "RequestCpus").stdout == "4 2\n4 2\n"
    cell.run("condor_qedit", str(cluster), "Mem", "300", check=True)
    assert "h_rt=3,mem_free=300M" in cell.run("qstat", "-j", str(cluster)).stdout
    cell.run("condor_rm", str(cluster), check=True)


def test_qalter_of_a_cluster_with_per_proc_requests(cell, workdir):
    """qalter -l of other resources leaves each proc's own GPU request as its ad says;
    qalter -pe smp N makes every proc's RequestCpus N, as its slots are."""
    from condortools import submit
    cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=2", "testhost", check=True)
    cluster = submit(cell, "executable = /bin/true\nrequest_gpus = ifThenElse(ProcId == 1, 1, 0)\n"
                     "request_cpus = ifThenElse(ProcId == 1, 1, 2)\nhold = true\nqueue 3\n", cwd=workdir)
    wait_for(lambda: cell.run("condor_q", str(cluster), "-af", "RequestGPUs").stdout == "0\n1\n0\n")
    cell.run("qalter", "-l", "h_rt=100", str(cluster), check=True)
    shown = cell.run("condor_q", str(cluster), "-af", "RequestGPUs", "RequestCpus").stdout
    assert shown == "0 2\n1 1\n0 2\n"
    cell.run("qalter", "-pe", "smp", "3", str(cluster), check=True)
    assert cell.run("condor_q", str(cluster), "-af", "RequestCpus").stdout == "3\n3\n3\n"
    cell.run("condor_rm", str(cluster), check=True)


def test_qalter_changes_no_protected_request_of_an_htcondor_job(cell, workdir, users):
    """An HTCondor job's request that PROTECTED_JOB_ATTRS protects (condor_qedit refuses
    it) is not changed by qalter either, for a user who is no queue super user: qalter
    -pe smp 4 is refused with condor_qedit's words and the job keeps its RequestCpus;
    root (a queue super user) may change it."""
    from condortools import submit
    user = users[0]
    os.chmod(workdir, 0o777)
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("PROTECTED_JOB_ATTRS = RequestCpus RequestMemory\n")
    assert cell.run("condor_reconfig").returncode == 0
    cluster = submit(cell, "executable = /bin/true\nhold = true\nqueue\n", cwd=workdir, user=user)
    wait_for(lambda: cell.run("condor_q", str(cluster), "-af", "RequestCpus").stdout == "1\n")
    proc = cell.run("condor_qedit", str(cluster), "RequestCpus", "4", user=user)
    assert 'Update of protected attribute "RequestCpus" is not allowed.' in proc.stdout + proc.stderr
    proc = cell.run("qalter", "-pe", "smp", "4", str(cluster), user=user, cwd=workdir)
    assert proc.returncode == 1
    assert f'denied: job {cluster}: Update of protected attribute "RequestCpus" is not allowed.' in proc.stdout
    assert cell.run("condor_q", str(cluster), "-af", "RequestCpus").stdout == "1\n"
    assert "parallel environment" not in cell.run("qstat", "-j", str(cluster)).stdout
    cell.run("qalter", "-pe", "smp", "4", str(cluster), check=True)
    assert cell.run("condor_q", str(cluster), "-af", "RequestCpus").stdout == "4\n"
    cell.run("condor_rm", str(cluster), check=True)


def test_poke_verification_weighs_the_resource_quotas(cell, workdir):
    """-w p verifies against the cell as it is, its resource quota sets too (as the pass
    that would schedule the job); -w v against an empty cell."""
    from qtools import add_object
    add_object(cell, "-Arqs", "{\n   name         closed\n   description  NONE\n   enabled      TRUE\n"
                              "   limit        users * to slots=0\n}\n")
    waiting = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-w", "p", str(waiting))
    assert (proc.returncode, proc.stdout) == (
        1, f'Job {waiting} cannot run because it exceeds limit "/////" in rule "closed/1"\n'
           "verification: no suitable queues\n")
    proc = cell.run("qalter", "-w", "v", str(waiting))
    assert (proc.returncode, proc.stdout) == (0, "verification: found suitable queue(s)\n")
