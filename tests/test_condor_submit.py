"""condor_submit against a running daemon: messages, options, the job it queues."""

import os
import re
import time

import pytest

from condortools import events, history, statuses, submit, wait_events, wait_status, write
from conftest import unanswered, wait_for

SLEEP = "executable = /bin/sleep\narguments = 30\n"


def test_messages_and_cluster_as_clients_parse_them(cell, workdir):
    write(os.path.join(workdir, "a.sub"), SLEEP + "queue 3\n")
    proc = cell.run("condor_submit", "a.sub", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"Submitting job(s)...\n3 job(s) submitted to cluster {_cluster(proc)}.\n"
    # parsl: the 6th word with its dot; ipyparallel: the output ends with "<N>."
    line = [ln for ln in proc.stdout.splitlines() if ln[:1].isdigit()][0]
    assert line.split(" ")[5] == f"{_cluster(proc)}." and int(line[0]) == 3
    assert re.search(r"(\d+)\.$", proc.stdout.strip())


def _cluster(proc):
    return int(re.search(r"cluster (\d+)\.", proc.stdout).group(1))


def test_one_cluster_is_one_job_proc_p_is_task_p_plus_one(cell, workdir):
    cell.run("qmod", "-d", "all.q", check=True)     # pending, qstat shows the array on one line
    cluster = submit(cell, SLEEP + "queue 2\n", cwd=workdir)
    out = cell.run("qstat").stdout
    row = [ln for ln in out.splitlines() if ln.split()[:1] == [str(cluster)]]
    assert row and row[0].split()[-1] == "1,2"             # an array job of two tasks
    assert set(statuses(cell, str(cluster))) == {f"{cluster}.0", f"{cluster}.1"}
    assert cell.run("qdel", str(cluster)).returncode == 0
    wait_for(lambda: not statuses(cell, str(cluster)))


def test_terse_dry_run_append_queue_batch_name_and_macros(cell, workdir):
    write(os.path.join(workdir, "b.sub"), "executable = /bin/echo\narguments = $(word)\n")
    proc = cell.run("condor_submit", "-terse", "-a", "output = o.$(Process)", "-batch-name", "mine",
                    "word=hello", "b.sub", "-queue", "2", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    cluster = int(proc.stdout.split(".")[0])
    assert proc.stdout == f"{cluster}.0 - {cluster}.1\n"
    wait_for(lambda: all(os.path.exists(os.path.join(workdir, f"o.{p}")) and
                         open(os.path.join(workdir, f"o.{p}")).read() == "hello\n" for p in (0, 1)))
    batch = cell.run("condor_q", str(cluster), "-af", "JobBatchName").stdout
    assert set(batch.split()) <= {"mine"}
    dry = cell.run("condor_submit", "-dry-run", "ads.txt", "b.sub", "-queue", "1", cwd=workdir)
    assert dry.returncode == 0 and dry.stdout == "Dry-Run job(s).\n1 job(s) dry-run to cluster 1.\n"
    text = open(os.path.join(workdir, "ads.txt")).read()
    assert 'Cmd = "/bin/echo"' in text and "ClusterId = 1" in text and text.endswith("\n\n")


def test_dump_writes_the_ads_and_queues_nothing(cell, workdir):
    """-dump FILE writes the job ads (long form, a blank line after each; clusters from 1)
    instead of submitting: "Storing job ClassAd(s)" with a dot per proc and HTCondor's
    "submitted" line, or -terse's ranges; -dump - writes only the ads; with -dry-run, or
    a file it cannot open, it is refused in HTCondor's words."""
    write(os.path.join(workdir, "d.sub"), SLEEP + "queue 2\n")
    before = cell.run("condor_q", "-af", "ClusterId").stdout
    dumped = cell.run("condor_submit", "-dump", "ads.txt", "d.sub", cwd=workdir)
    assert (dumped.returncode, dumped.stdout, dumped.stderr) == (
        0, "Storing job ClassAd(s)..\n2 job(s) submitted to cluster 1.\n", "")
    text = open(os.path.join(workdir, "ads.txt")).read()
    ads = text.split("\n\n")
    assert ads[2:] == [""] and ["ClusterId = 1" in ad and f"ProcId = {n}" in ad for n, ad in enumerate(ads[:2])] == [True] * 2
    assert cell.run("condor_q", "-af", "ClusterId").stdout == before       # nothing queued
    terse = cell.run("condor_submit", "-terse", "-dump", "ads.txt", "d.sub", cwd=workdir)
    assert terse.stdout == "1.0 - 1.1\n"
    to_stdout = cell.run("condor_submit", "-dump", "-", "d.sub", cwd=workdir)

    def undated(ads):                   # (a second may have passed between the two)
        return re.sub(r"^(QDate|EnteredCurrentStatus) = \d+$", r"\1 = T", ads, flags=re.M)
    assert undated(to_stdout.stdout) == undated(text)
    both = cell.run("condor_submit", "-dump", "a", "-dry-run", "b", "d.sub", cwd=workdir)
    assert (both.returncode, both.stderr) == (1, "condor_submit: -dry-run <file> and -dump <file> cannot be used together\n")
    nowhere = cell.run("condor_submit", "-dump", "no/such/dir/ads", "d.sub", cwd=workdir)
    assert nowhere.returncode == 1
    assert nowhere.stderr.endswith("ERROR: Failed to open file to dump ClassAds into (No such file or directory)\n")


def test_dump_and_dry_run_files_are_not_written_through_another_users_link(cell, workdir, users):
    """In a folder every user may write (sticky, as /tmp), a link another user planted
    where root's -dump or -dry-run file goes is not followed: the file it names keeps
    what it held, and the command says it cannot open the file."""
    shared = os.path.join(workdir, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    victim = os.path.join(workdir, "victim")
    write(victim, "root's own\n")
    os.chmod(victim, 0o600)
    write(os.path.join(workdir, "d.sub"), SLEEP + "queue\n")
    for option, name in (("-dump", "dump.ad"), ("-dry-run", "dry.ad")):
        planted = os.path.join(shared, name)
        cell.run("ln", "-s", victim, planted, user=users[0], check=True)
        done = cell.run("condor_submit", option, planted, "d.sub", cwd=workdir)
        assert done.returncode == 1 and "Permission denied" in done.stderr, (option, done.stderr)
        assert open(victim).read() == "root's own\n"


def test_command_line_settings_stand_at_the_top_of_the_description(cell, workdir):
    write(os.path.join(workdir, "s.sub"), "executable = /bin/echo\nrequest_memory = 5\nqueue\n")
    dry = cell.run("condor_submit", "-dry-run", "-", "MY.Foo=3", "request_memory=77", "arguments=x",
                   "request_disk=2048", "s.sub", cwd=workdir)
    assert dry.returncode == 0, dry.stderr
    assert "Foo = 3\n" in dry.stdout and 'Args = "x"\n' in dry.stdout
    assert "RequestMemory = 5\n" in dry.stdout               # the file sets it again
    assert "RequestDisk = 2048\n" in dry.stdout
    alone = cell.run("condor_submit", "executable=/bin/echo", "arguments=from_the_line", "output=alone.out",
                     "-queue", "1", input="", cwd=workdir)
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout.startswith("Submitting job(s).\n1 job(s) submitted to cluster ")
    out = os.path.join(workdir, "alone.out")
    wait_for(lambda: os.path.exists(out) and open(out).read() == "from_the_line\n")


def test_stdin_dash_is_verbose_and_no_file_reads_stdin(cell, workdir):
    proc = cell.run("condor_submit", "-", input=SLEEP + "queue\n", cwd=workdir)
    assert proc.returncode == 0 and "** Proc " in proc.stdout and 'Cmd = "/bin/sleep"' in proc.stdout
    plain = cell.run("condor_submit", input=SLEEP + "queue\n", cwd=workdir)
    assert plain.returncode == 0 and plain.stdout.startswith("Submitting job(s).\n")


@pytest.mark.parametrize("text, args, message", [
    ("executable = /bin/true\n", (), "doesn't contain any \"queue\" commands"),
    ("executable = /nonexistent/x\nqueue\n", (),
     "ERROR: Can't access executable file /nonexistent/x: No such file or directory"),
    ("universe = grid\nexecutable = /bin/true\nqueue\n", (), "I don't know about the 'grid' universe."),
    ("executable = /bin/true\nqueue\n", ("-name", "nowhere.example"), "Can't find address of schedd"),
    ("executable = /bin/true\nthis is wrong\nqueue\n", (), "Submit file syntax error"),
    # a cluster materialized late has one queue statement, and nothing after it but comments
    ("executable = /bin/true\nmax_materialize = 2\nqueue 2\n# more\n\narguments = x\nqueue\n", (),
     "ERROR: on Line 6 of bad.sub: Extra data found after queue statement"),
    ("executable = /bin/true\nmax_idle = 1\nqueue 2\nqueue\n", (),
     "ERROR: on Line 4 of bad.sub: Extra data found after queue statement"),
    ("executable = /bin/true\nqueue\narguments = x\nqueue\n", ("-factory",),
     "ERROR: on Line 3 of bad.sub: Extra data found after queue statement"),
    ("executable = /bin/true\nqueue\narguments = x\nqueue\n", ("_CONDOR_SUBMIT_PREVENT_MULTI_QUEUE=true",),
     "ERROR: on Line 3 of bad.sub: Extra data found after queue statement"),
])
def test_bad_input_one_line_and_nothing_queued(cell, workdir, text, args, message):
    before = cell.run("qstat", "-u", "*").stdout
    write(os.path.join(workdir, "bad.sub"), text)
    env = dict(arg.split("=", 1) for arg in args if arg.startswith("_CONDOR_"))
    args = [arg for arg in args if arg not in env and "=" not in arg]
    proc = cell.run("condor_submit", *args, "bad.sub", cwd=workdir, env=env)
    assert proc.returncode == 1 and message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert cell.run("qstat", "-u", "*").stdout == before


def test_queue_argument_conflicts_with_a_queue_statement(cell, workdir):
    """HTCondor's text names the line of the file's queue statement."""
    write(os.path.join(workdir, "q.sub"), "executable = /bin/true\n\nqueue 3\n")
    proc = cell.run("condor_submit", "q.sub", "-queue", "2", cwd=workdir)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "ERROR: on Line 3 of q.sub: -queue argument conflicts with queue statement in submit file\n"


def test_missing_file(cell, workdir):
    proc = cell.run("condor_submit", "nosuch.sub", cwd=workdir)
    assert proc.returncode == 1
    assert proc.stderr.strip() == "ERROR: Failed to open command file (nosuch.sub) (No such file or directory)"


def test_description_the_daemon_schedules(cell, workdir):
    """request_cpus > 1 takes a PE, memory a mem_free request, hold a held job."""
    cluster = submit(cell, "executable = /bin/sleep\narguments = 1\nrequest_cpus = 2\n"
                           "request_memory = 10M\nhold = true\npriority = 3\nqueue\n", cwd=workdir)
    job = cell.run("qstat", "-j", str(cluster)).stdout
    assert re.search(r"parallel environment:\s+smp range: 2", job)
    assert "mem_free=10M" in job
    ad = cell.run("condor_q", f"{cluster}.0", "-af", "JobStatus", "HoldReasonCode", "JobPrio",
                  "RequestCpus", "RequestMemory").stdout.split()
    assert ad == ["5", "15", "3", "2", "10"]
    assert cell.run("condor_release", str(cluster)).returncode == 0
    wait_status(cell, f"{cluster}.0", (2, 3, 4))


def test_requests_given_as_expressions_are_read_by_the_daemon(cell, workdir):
    """dask-jobqueue's kind of description: RequestCpus and RequestMemory are expressions
    over attributes of the ad. condor_submit leaves them to the daemon, which takes the
    job in with the PE and the memory request they evaluate to; the job runs."""
    cluster = submit(cell, "executable = /bin/true\nMY.Cores = 2\nMY.Mem = 1073741824\n"
                           "RequestCpus = MY.Cores\nRequestMemory = floor(MY.Mem / 1048576)\n"
                           "hold = true\nqueue\n", cwd=workdir)
    found = {}

    def described():
        found["job"] = cell.run("qstat", "-j", str(cluster)).stdout
        return re.search(r"parallel environment:\s+smp range: 2", found["job"])
    wait_for(described)
    assert "mem_free=1024M" in found["job"]
    ad = cell.run("condor_q", f"{cluster}.0", "-af", "RequestCpus", "RequestMemory").stdout.split()
    assert ad == ["2", "1024"]
    assert cell.run("condor_release", str(cluster)).returncode == 0
    wait_for(lambda: history(cell, f"{cluster}.0", "-af", "JobStatus", "ExitCode").split() == ["4", "0"])


def test_local_universe_runs_on_the_submit_host(cell, workdir):
    cluster = submit(cell, "universe = local\nexecutable = /bin/hostname\noutput = h.out\nqueue\n",
                     cwd=workdir)
    job = cell.run("qstat", "-j", str(cluster)).stdout
    assert "hostname=testhost" in job
    wait_for(lambda: os.path.exists(os.path.join(workdir, "h.out")))


def test_local_universe_jobs_run_while_start_local_universe_allows(cell, workdir):
    """Local universe jobs hold no slot, but no more run at once than
    START_LOCAL_UNIVERSE allows; the others wait and say why."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("START_LOCAL_UNIVERSE = TotalLocalJobsRunning < 2\n")
    assert cell.run("condor_reconfig").returncode == 0
    cluster = submit(cell, "universe = local\nexecutable = /bin/sleep\narguments = 60\nqueue 4\n",
                     cwd=workdir)
    wait_for(lambda: sorted(statuses(cell, str(cluster)).values()) == [1, 1, 2, 2])
    why = wait_for(lambda: re.search(r"START_LOCAL_UNIVERSE \(TotalLocalJobsRunning < 2\) is false",
                                     cell.run("qstat", "-j", str(cluster)).stdout))
    assert why
    assert cell.run("condor_rm", str(cluster)).returncode == 0


def test_parallel_universe_takes_machine_count_slots(cell, workdir):
    cluster = submit(cell, "universe = parallel\nmachine_count = 2\nexecutable = /bin/sh\n"
                           "arguments = \"-c 'echo $NSLOTS > n.out'\"\nqueue\n", cwd=workdir)
    assert re.search(r"parallel environment:\s+mpi range: 2", cell.run("qstat", "-j", str(cluster)).stdout)
    wait_for(lambda: os.path.exists(os.path.join(workdir, "n.out")) and
             open(os.path.join(workdir, "n.out")).read().strip() == "2")


def test_any_machine_count_or_request_cpus_is_taken_as_condor_submit_takes_it(cell, workdir):
    """condor_submit reads machine_count as C's atoi and takes any request_cpus: none is
    refused. A count of 0 or below runs on one node; more nodes (or CPUs) than the cell
    has wait, with the ad as HTCondor makes it."""
    counts = {}
    for text in ("0", "-3", "99999999999", "2 nodes"):
        proc = cell.run("condor_submit", cwd=workdir, input="universe = parallel\nexecutable = /bin/true\n"
                        f"machine_count = {text}\nqueue\n")
        assert proc.returncode == 0 and proc.stderr == "" and "1 job(s) submitted" in proc.stdout, proc.stderr
        counts[text] = _cluster(proc)
    proc = cell.run("condor_submit", cwd=workdir, input="executable = /bin/true\nrequest_cpus = 99999999999\n"
                    "queue\n")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    many = _cluster(proc)
    shown = cell.run("condor_q", str(counts["99999999999"]), "-af", "MinHosts").stdout
    assert shown.split() == ["1215752191"]                      # (the 32 bits atoi keeps; it waits)
    done = [f"{counts[text]}.0" for text in ("0", "-3", "2 nodes")]
    wait_for(lambda: all(jid in history(cell) for jid in done), timeout=30)
    assert history(cell, str(counts["0"]), "-af", "MinHosts", "ExitCode") == "0 0\n"
    assert history(cell, str(counts["2 nodes"]), "-af", "MinHosts") == "2\n"
    assert statuses(cell, str(counts["99999999999"])) == {f"{counts['99999999999']}.0": 1}
    assert statuses(cell, str(many)) == {f"{many}.0": 1}
    cell.run("condor_rm", str(counts["99999999999"]), str(many), check=True)


def test_per_proc_arguments_environment_and_streams(cell, workdir):
    cluster = submit(cell, 'executable = /bin/sh\narguments = "-c \'echo $(Item) $GT_X >&2\'"\n'
                           'environment = "GT_X=got"\nerror = e.$(Item)\nlog = l.log\n'
                           "queue Item in (red, green)\n", cwd=workdir)
    for item in ("red", "green"):
        path = os.path.join(workdir, f"e.{item}")
        wait_for(lambda p=path: os.path.exists(p) and open(p).read() == f"{os.path.basename(p)[2:]} got\n")
    log = os.path.join(workdir, "l.log")
    wait_events(log, f"{cluster}.1", [0, 1, 5])


def test_a_shell_command_line_runs_through_sh_without_an_executable(cell, workdir):
    """HTCondor's shell command: /bin/sh -c the line, over any executable and arguments."""
    cluster = submit(cell, "shell = echo $((6 * 7)) > answer.$(Process) && echo done\n"
                           "arguments = ignored\noutput = out.$(Process)\nqueue 2\n", cwd=workdir)
    cell.wait_finished(cluster, (1, 2))
    for proc in (0, 1):
        assert open(os.path.join(workdir, f"answer.{proc}")).read() == "42\n"
        assert open(os.path.join(workdir, f"out.{proc}")).read() == "done\n"
    shown = cell.run("condor_history", str(cluster), "-af", "Cmd", "Arguments", "TransferExecutable").stdout
    assert sorted(shown.splitlines()) == [f"/bin/sh -c echo' '$((6' '*' '7))' '>' 'answer.{p}' '&&' 'echo' 'done false"
                                          for p in (0, 1)]


def test_file_transfer_runs_in_a_scratch_folder_with_the_inputs(cell, workdir):
    write(os.path.join(workdir, "in.txt"), "payload\n")
    write(os.path.join(workdir, "script.sh"), "cat in.txt > made.txt; pwd > where.txt\n")
    cluster = submit(cell, "executable = /bin/sh\narguments = script.sh\nshould_transfer_files = YES\n"
                           "transfer_input_files = in.txt, script.sh\nqueue\n", cwd=workdir)
    cell.wait_finished(cluster)          # its output files are copied back before it ends
    made = os.path.join(workdir, "made.txt")
    assert open(made).read() == "payload\n"
    assert open(os.path.join(workdir, "where.txt")).read().strip() != workdir


def test_submit_of_another_user_runs_as_that_user(cell, workdir, users):
    user = users[0]
    cluster = submit(cell, "executable = /usr/bin/id\narguments = -un\noutput = who.out\nlog = u.log\n"
                           "queue\n", cwd=workdir, user=user)
    path = os.path.join(workdir, "who.out")
    wait_for(lambda: os.path.exists(path) and open(path).read() == f"{user}\n")
    wait_events(os.path.join(workdir, "u.log"), f"{cluster}.0", [0, 1, 5])
    import pwd
    assert os.stat(os.path.join(workdir, "u.log")).st_uid == pwd.getpwnam(user).pw_uid
    assert events(os.path.join(workdir, "u.log"))


def test_write_level_refuses_a_submitter_visibly_and_the_daemon_checks_again(cell, workdir, users):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("DENY_WRITE = gtbob@*/*\n")
    assert cell.run("condor_reconfig").returncode == 0
    write(os.path.join(workdir, "w.sub"), SLEEP + "hold = true\nqueue\n")
    proc = cell.run("condor_submit", "w.sub", cwd=workdir, user="gtbob")
    assert proc.returncode == 1 and proc.stdout == ""
    first, second = proc.stderr.splitlines()
    assert first == "ERROR: Failed to connect to local queue manager"
    assert re.fullmatch(r'SECMAN:2010:Received "DENIED" from server for user gtbob@\S+ using method FS\.', second)
    assert not statuses(cell)
    # a caller who points CONDOR_CONFIG elsewhere passes the command's own check, not the
    # daemon's, and the command, reading another configuration, waits for its verdict
    open_config = write(os.path.join(workdir, "open_config"), "ALLOW_WRITE = *\n")
    proc = cell.run("condor_submit", "w.sub", cwd=workdir, user="gtbob", env={"CONDOR_CONFIG": open_config})
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.splitlines()[0] == "ERROR: Failed to connect to local queue manager"
    assert proc.stderr.splitlines()[1] == second
    messages = os.path.join(cell.root, "spool", "messages")
    assert "PERMISSION DENIED to gtbob" in open(messages).read()
    assert "for request submit (SCHEDD)" in open(messages).read()
    assert not statuses(cell)
    allowed = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, user="gtalice", name="a.sub")
    assert set(statuses(cell)) == {f"{allowed}.0"}


def test_usage_an_unknown_option_and_what_the_cell_lacks(cell, workdir):
    """-help prints the usage; an unknown option prints it and one error line (exit 1);
    a cluster asking for more CPUs than one slot, or for GPUs, in a cell without the smp
    parallel environment or the gpu complex is refused and nothing is queued."""
    shown = cell.run("condor_submit", "-help")
    assert shown.returncode == 0 and shown.stdout.startswith("Usage: condor_submit [options]")
    bad = cell.run("condor_submit", "-bogus", "x.sub", cwd=workdir)
    assert bad.returncode == 1 and bad.stderr.startswith("Usage: condor_submit [options]")
    assert bad.stderr.splitlines()[-1] == "condor_submit: unknown option -bogus"
    os.remove(os.path.join(cell.root, "etc", "pe", "smp"))
    complexes = os.path.join(cell.root, "etc", "complex")
    with open(complexes) as fh:
        kept = [line for line in fh if not line.startswith("gpu ")]
    with open(complexes, "w") as fh:
        fh.writelines(kept)
    before = cell.run("qstat", "-u", "*").stdout
    for request, message in (("request_cpus = 2", 'this cell has no parallel environment "smp"'),
                             ("request_gpus = 1", "this cell has no GPUs")):
        write(os.path.join(workdir, "lacks.sub"), f"executable = /bin/true\n{request}\nqueue\n")
        proc = cell.run("condor_submit", "lacks.sub", cwd=workdir)
        assert proc.returncode == 1 and message in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert cell.run("qstat", "-u", "*").stdout == before


def test_maxjobs_and_single_cluster_refuse_a_larger_submission_whole(cell, workdir):
    # (submit.cpp: "Number of submitted jobs would exceed -maxjobs (N)", "... clusters would
    # exceed 1 and -single-cluster was specified"; nothing queued)
    write(os.path.join(workdir, "two.sub"), "executable = /bin/true\nhold = true\nqueue 2\n")
    write(os.path.join(workdir, "split.sub"), "executable = /bin/true\nhold = true\nqueue\n"
                                              "executable = /bin/echo\nqueue\n")
    before = cell.run("qstat", "-u", "*").stdout
    proc = cell.run("condor_submit", "-maxjobs", "1", "two.sub", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "\nERROR: Number of submitted jobs would exceed -maxjobs (1)\n")
    proc = cell.run("condor_submit", "-single-cluster", "split.sub", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (
        1, "\nERROR: Number of submitted clusters would exceed 1 and -single-cluster was specified\n")
    proc = cell.run("condor_submit", "-maxjobs", "two", "two.sub", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "Error: Unable to convert argument (two) to a number for -maxjobs.\n")
    assert cell.run("qstat", "-u", "*").stdout == before
    proc = cell.run("condor_submit", "-single", "-maxjobs", "2", "two.sub", cwd=workdir)
    assert proc.returncode == 0 and re.fullmatch(r"Submitting job\(s\)\.\.\n2 job\(s\) submitted to cluster \d+\.\n",
                                                 proc.stdout)


def test_stdout_and_stderr_keys_write_the_job_streams(cell, workdir):
    """stdout/stderr are HTCondor's other names of output/error, StreamOut its name of
    stream_output: the job's streams reach the files, and the ad says so."""
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'echo out; echo err >&2'\"\n"
                           "stdout = so.txt\nstderr = se.txt\nStreamOut = true\nqueue\n", cwd=workdir)
    for name, text in (("so.txt", "out\n"), ("se.txt", "err\n")):
        path = os.path.join(workdir, name)
        wait_for(lambda p=path, t=text: os.path.exists(p) and open(p).read() == t)
    proc = cell.run("condor_q", str(cluster), "-af", "Out", "Err", "StreamOut", cwd=workdir)
    if not proc.stdout.strip():         # it left the queue already
        wait_for(lambda: cell.run("condor_history", str(cluster), "-af", "Out", cwd=workdir).stdout.strip())
        proc = cell.run("condor_history", str(cluster), "-af", "Out", "Err", "StreamOut", cwd=workdir)
    assert proc.stdout.split() == ["so.txt", "se.txt", "true"]


_ITEMDATA = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import htcondor2
print(json.dumps(list(htcondor2.Submit(sys.stdin.read()).itemdata())))
"""


def _htcondor_items(text, cwd):
    """The items HTCondor's own submit code (htcondor2) reads from a description, or None
    where it is not installed."""
    import subprocess
    import sys
    import json
    env = dict(os.environ, CONDOR_CONFIG="/dev/null")
    if subprocess.run([sys.executable, "-c", "import htcondor2"], capture_output=True,
                      env=env).returncode != 0:
        return None
    proc = subprocess.run([sys.executable, "-c", _ITEMDATA], input=text, capture_output=True,
                          text=True, cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _dry_args(cell, workdir, name, user=None):
    """(exit status, the Args of each dry-run ad, stderr) of ``condor_submit -dry-run``."""
    proc = cell.run("condor_submit", "-dry-run", "-", name, cwd=workdir, user=user)
    return proc.returncode, re.findall(r'^Args = "(.*)"$', proc.stdout, re.M), proc.stderr


#: what HTCondor 24's condor_submit writes to standard error for a description with
#: more than one queue statement
MULTI_QUEUE = """
Warning: Use of multiple queue statements in a single submit file is deprecated.
         This functionality will be removed in the 25.x feature series. To see
         how multiple queue statements can be converted into one visit:
https://htcondor.readthedocs.io/en/latest/auto-redirect.html?category=example&tag=convert-multi-queue-statements
"""


def test_more_than_one_queue_statement_is_deprecated_on_standard_error(cell, workdir):
    write(os.path.join(workdir, "two.sub"), "executable = /bin/true\nhold = true\nqueue\nqueue 2\n")
    write(os.path.join(workdir, "one.sub"), "executable = /bin/true\nhold = true\nqueue 3\n")
    two = cell.run("condor_submit", "two.sub", cwd=workdir)
    assert (two.returncode, two.stderr) == (0, MULTI_QUEUE)
    assert re.fullmatch(r"Submitting job\(s\)\.\.\.\n3 job\(s\) submitted to cluster \d+\.\n", two.stdout)
    one = cell.run("condor_submit", "one.sub", cwd=workdir)
    assert (one.returncode, one.stderr) == (0, "")


def test_comment_lines_of_an_inline_item_list_are_skipped(idle_cell, workdir):
    text = ("executable = /bin/echo\narguments = $(Item)\nqueue from (\n  one\n  # left out\n"
            "#two\n  three\n)\nqueue in (\n  a b\n  # c d\n)\n")
    write(os.path.join(workdir, "c.sub"), text)
    assert _dry_args(idle_cell, workdir, "c.sub") == (0, ["one", "three", "a", "b"], MULTI_QUEUE)
    oracle = _htcondor_items(text.split("queue in")[0], workdir)
    if oracle is not None:
        assert [row["Item"] for row in oracle] == ["one", "three"]


def test_queue_from_a_command_takes_its_output_as_items(idle_cell, workdir, users):
    text = "executable = /bin/echo\narguments = $(a)-$(b)\nqueue a,b from seq -s, 3 2 7 |\n"
    write(os.path.join(workdir, "p.sub"), text)
    assert _dry_args(idle_cell, workdir, "p.sub") == (0, ["3-5,7"], "")
    oracle = _htcondor_items(text, workdir)
    if oracle is not None:
        assert oracle == [{"a": "3", "b": "5,7"}]
    # run by condor_submit, that is as the user who submits, in the submit folder
    write(os.path.join(workdir, "u.sub"), "executable = /bin/echo\narguments = $(who)\n"
                                          "queue who from id -un |\nqueue who from pwd |\n")
    assert _dry_args(idle_cell, workdir, "u.sub", user="gtalice") == (0, ["gtalice", workdir], MULTI_QUEUE)


def test_an_items_source_that_cannot_be_read_is_an_error_at_its_line(idle_cell, workdir):
    write(os.path.join(workdir, "n.sub"), "executable = /bin/echo\n\nqueue a from nothere.txt\n")
    write(os.path.join(workdir, "m.sub"), "executable = /bin/echo\nqueue a from no-such-program x |\n")
    assert _dry_args(idle_cell, workdir, "n.sub") == (
        1, [], "ERROR: on Line 3 of n.sub: can't open file nothere.txt: No such file or directory\n")
    assert _dry_args(idle_cell, workdir, "m.sub") == (
        1, [], "ERROR: on Line 2 of m.sub: not a valid command, errno=2 : No such file or directory\n")


def test_a_condor_config_that_does_not_read_keeps_its_deny_lists_closed(cell, workdir, users):
    """A broken etc/condor_config with a DENY list: the tools refuse to run on it, as
    HTCondor's do, and a daemon that starts on it does not take the built-in defaults
    for its ALLOW and DENY lists (they would let everybody in)."""
    cell.stop_daemon()
    config = os.path.join(cell.root, "etc", "condor_config")
    with open(config) as fh:
        good = fh.read()
    with open(config, "a") as fh:
        fh.write("DENY_WRITE = gtbob@*/*\noops no equals sign\n")
    cell.start_daemon()
    messages = os.path.join(cell.root, "spool", "messages")
    wait_for(lambda: "condor_config not read, the built-in defaults stand in" in open(messages).read())
    write(os.path.join(workdir, "w.sub"), SLEEP + "hold = true\nqueue\n")
    proc = cell.run("condor_submit", "w.sub", cwd=workdir, user="gtbob")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines()[0] == f"Configuration Error while reading config source {config}"
    assert "expected NAME = value" in proc.stderr.splitlines()[1]
    # past the tool's own check, the daemon refuses too: nothing is queued
    open_config = write(os.path.join(workdir, "open_config"), "ALLOW_WRITE = *\n")
    proc = cell.run("condor_submit", "w.sub", cwd=workdir, user="gtbob", env={"CONDOR_CONFIG": open_config})
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.splitlines()[0] == f"Configuration Error while reading config source {config}"
    assert "condor_config cannot be read" in open(messages).read()
    assert not statuses(cell)
    # repaired and read again: the DENY list holds, and others submit
    with open(config, "w") as fh:
        fh.write(good + "DENY_WRITE = gtbob@*/*\n")
    assert cell.run("condor_reconfig").returncode == 0
    assert cell.run("condor_submit", "w.sub", cwd=workdir, user="gtbob").returncode == 1
    allowed = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, user="gtalice", name="a.sub")
    assert set(statuses(cell)) == {f"{allowed}.0"}


def test_a_submission_makes_at_most_max_jobs_per_submission(cell, workdir):
    """HTCondor's schedd refuses a submission of more procs than MAX_JOBS_PER_SUBMISSION
    (20,000 by default); a count at or above INT_MAX is out of range before any proc is
    made (it used to make them, for ever)."""
    write(os.path.join(workdir, "huge.sub"), SLEEP + "hold = true\nqueue 3000000000\n")
    proc = cell.run("condor_submit", "huge.sub", cwd=workdir, timeout=20)
    assert (proc.returncode, proc.stderr) == (1, "ERROR: on Line 4 of huge.sub: Queue count out of range\n")
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("MAX_JOBS_PER_SUBMISSION = 25\n")
    write(os.path.join(workdir, "many.sub"), SLEEP + "hold = true\nqueue 20\nqueue 6\n")
    proc = cell.run("condor_submit", "many.sub", cwd=workdir)
    assert proc.returncode == 1
    assert proc.stderr == ("ERROR: Failed to create proc\n"
                           "Number of submitted jobs would exceed MAX_JOBS_PER_SUBMISSION\n")
    cluster = submit(cell, SLEEP + "hold = true\nqueue 25\n", cwd=workdir, name="fits.sub")
    wait_for(lambda: len(statuses(cell)) == 25)
    assert all(s.startswith(f"{cluster}.") for s in statuses(cell))
    # the daemon holds to the cell's limit whatever the submitter's own configuration says
    assert cell.run("condor_reconfig").returncode == 0
    write(os.path.join(workdir, "more.sub"), SLEEP + "hold = true\nqueue 30\n")
    proc = cell.run("condor_submit", "more.sub", cwd=workdir,
                    env={"_CONDOR_MAX_JOBS_PER_SUBMISSION": "100"})
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "ERROR: Failed to create proc\nNumber of submitted jobs would exceed MAX_JOBS_PER_SUBMISSION\n"
    messages = os.path.join(cell.root, "spool", "messages")
    assert "would exceed MAX_JOBS_PER_SUBMISSION" in open(messages).read()
    wait_for(lambda: not unanswered(cell.root))        # (answered before it leaves the spool)
    assert len(statuses(cell)) == 25


ADMIN_KNOBS = """SUBMIT_ATTRS = Site, +Forced, Broken
SUBMIT_EXPRS = Tier
Site = "north"
Forced = 7
Tier = 2 + 1
Broken = "unclosed
APPEND_REQUIREMENTS = (TARGET.Memory > 1)
APPEND_REQ_VANILLA = TARGET.HasVanilla
APPEND_RANK = TARGET.Mips
DEFAULT_RANK = TARGET.KFlops
JOB_DEFAULT_REQUESTMEMORY = 2G
JOB_DEFAULT_REQUESTCPUS = 2
SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES = yes
SUBMIT_ALLOW_GETENV = false
"""


def _dry(cell, workdir, text, name):
    write(os.path.join(workdir, name), text)
    proc = cell.run("condor_submit", "-dry-run", "-", name, cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    return dict(line.split(" = ", 1) for line in proc.stdout.splitlines() if " = " in line)


def test_the_configuration_s_submit_knobs_shape_every_job_ad(idle_cell, workdir):
    """SUBMIT_ATTRS / SUBMIT_EXPRS put the knobs they name into every job ad (the
    description may set them again; +Name forces one; a value that does not read is
    left out); APPEND_REQUIREMENTS (APPEND_REQ_VANILLA for the vanilla universe) joins
    the job's Requirements as the user's own would; DEFAULT_RANK and APPEND_RANK make
    Rank; JOB_DEFAULT_REQUEST<name> stands for a request the description leaves out;
    SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES for should_transfer_files; SUBMIT_ALLOW_GETENV =
    false refuses getenv = true."""
    with open(os.path.join(idle_cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(ADMIN_KNOBS)
    ad = _dry(idle_cell, workdir, 'executable = /bin/true\nrequirements = TARGET.Cpus > 0\n+Site = "mine"\n'
                                  '+Forced = 1\nqueue\n', "a.sub")
    assert (ad["Site"], ad["Forced"], ad["Tier"], ad["RequestCpus"], ad["RequestMemory"]) == \
        ('"mine"', "1", "2 + 1", "2", "2048")
    assert "Broken" not in ad
    assert ad["Requirements"].startswith("(TARGET.Cpus > 0) && (TARGET.HasVanilla) && (TARGET.Arch == ")
    assert "TARGET.Cpus >= RequestCpus" not in ad["Requirements"]          # (the user's asks for Cpus)
    assert ad["Rank"] == "(TARGET.KFlops) + (TARGET.Mips)"
    assert (ad["ShouldTransferFiles"], ad["WhenToTransferOutput"]) == ('"YES"', '"ON_EXIT"')
    ad = _dry(idle_cell, workdir, "executable = /bin/true\nshould_transfer_files = NO\ngetenv = HOME\nqueue\n",
              "c.sub")
    assert ad["ShouldTransferFiles"] == '"NO"'
    write(os.path.join(workdir, "e.sub"), "executable = /bin/true\ngetenv = true\nqueue\n")
    proc = idle_cell.run("condor_submit", "-dry-run", "-", "e.sub", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "ERROR: getenv = true command not allowed because administrator "
                                                 "has set SUBMIT_ALLOW_GETENV = false\n")
    ad = _dry(idle_cell, workdir, "executable = /bin/true\nuniverse = local\nrank = 5\nrequest_cpus = 1\n"
                                  "queue\n", "b.sub")
    assert (ad["Site"], ad["Forced"], ad["RequestCpus"], ad["Rank"]) == ('"north"', "7", "1", "(5) + (TARGET.Mips)")
    assert ad["Requirements"].startswith("((TARGET.Memory > 1)) && (TARGET.Arch == ")


def test_max_jobs_per_owner_and_max_jobs_submitted_keep_the_queue_within_bounds(cell, workdir, users):
    """MAX_JOBS_PER_OWNER: a submission that would give its owner more procs in the
    queue is refused (condor_submit's words, nothing queued); MAX_JOBS_SUBMITTED: the
    same for the whole queue; the daemon holds to the cell's limits whatever the
    submitter's configuration says."""
    user = users[0]
    os.chmod(workdir, 0o777)
    assert not os.path.exists(os.path.join(cell.root, "spool", "submit_checks"))   # (no rule: qsub waits for nothing)
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("MAX_JOBS_PER_OWNER = 3\nMAX_JOBS_SUBMITTED = 5\n")
    assert cell.run("condor_reconfig").returncode == 0
    mine = submit(cell, SLEEP + "hold = true\nqueue 2\n", cwd=workdir, user=user)
    wait_for(lambda: len(statuses(cell)) == 2)
    write(os.path.join(workdir, "two.sub"), SLEEP + "hold = true\nqueue 2\n")
    proc = cell.run("condor_submit", "two.sub", cwd=workdir, user=user)
    assert (proc.returncode, proc.stderr) == (1, "ERROR: Failed to create proc\n"
                                                 "Number of submitted jobs would exceed MAX_JOBS_PER_OWNER\n")
    other = submit(cell, SLEEP + "hold = true\nqueue 3\n", cwd=workdir, name="o.sub")        # (root's)
    wait_for(lambda: len(statuses(cell)) == 5)
    proc = cell.run("condor_submit", "two.sub", cwd=workdir)
    assert (proc.returncode, proc.stderr.splitlines()[-1]) == \
        (1, "Number of submitted jobs would exceed MAX_JOBS_SUBMITTED")
    # the daemon's own check, when the submitter's configuration lifts the limit
    proc = cell.run("condor_submit", "two.sub", cwd=workdir, user=user, env={"_CONDOR_MAX_JOBS_PER_OWNER": "100",
                                                                             "_CONDOR_MAX_JOBS_SUBMITTED": "100"})
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr in ("ERROR: Failed to create proc\nNumber of submitted jobs would exceed MAX_JOBS_PER_OWNER\n",
                           "ERROR: Failed to create proc\nNumber of submitted jobs would exceed MAX_JOBS_SUBMITTED\n")
    messages = os.path.join(cell.root, "spool", "messages")
    assert f" of {user} refused: Number of submitted jobs would exceed" in open(messages).read()
    wait_for(lambda: not unanswered(cell.root))        # (answered before it leaves the spool)
    assert sorted(statuses(cell)) == sorted([f"{mine}.0", f"{mine}.1", f"{other}.0", f"{other}.1", f"{other}.2"])
    # a Grid Engine job counts, and is held to the limits the configuration sets, its
    # tasks as procs: qsub gets around neither (it waits for the daemon's word, as the
    # daemon marks in the spool that it checks new jobs)
    from gridtools.cli.ask import CHECKS_MARK
    from gridtools.spool.daemonconf import CHECKS
    assert CHECKS_MARK == CHECKS and os.path.exists(os.path.join(cell.root, "spool", CHECKS))

    def refused_qsub(limit):
        proc = cell.run("qsub", "-h", "-b", "y", "-t", "1-2", "true", cwd=workdir, user=user)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            1, "", f"Unable to run job: Number of submitted jobs would exceed {limit}\nExiting.\n")
    refused_qsub("MAX_JOBS_SUBMITTED")
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("MAX_JOBS_SUBMITTED = 100\n")
    assert cell.run("condor_reconfig").returncode == 0
    refused_qsub("MAX_JOBS_PER_OWNER")
    assert sorted(statuses(cell)) == sorted([f"{mine}.0", f"{mine}.1", f"{other}.0", f"{other}.1", f"{other}.2"])


SUBMIT_RULES = """SUBMIT_REQUIREMENT_NAMES = SmallMemory, Named
SUBMIT_REQUIREMENT_SmallMemory = RequestMemory <= 1024
SUBMIT_REQUIREMENT_SmallMemory_REASON = strcat("asks for ", JOB.RequestMemory, " MB: at most 1024, please")
SUBMIT_REQUIREMENT_Named = JobBatchName isnt undefined
SUBMIT_REQUIREMENT_Named_IS_WARNING = true
"""


def test_submit_requirements_refuse_or_warn_as_htcondor_s_schedd_does(cell, workdir):
    """SUBMIT_REQUIREMENT_NAMES: a job a rule refuses is not queued (condor_submit's
    words, its reason, exit 1, its cluster id free again); a rule that only warns lets
    it in with a warning; the daemon applies the cell's rules whatever the submitter's
    own configuration says."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(SUBMIT_RULES)
    assert cell.run("condor_reconfig").returncode == 0
    write(os.path.join(workdir, "big.sub"), SLEEP + "request_memory = 2G\nhold = true\nqueue\n")
    proc = cell.run("condor_submit", "big.sub", cwd=workdir)
    assert (proc.returncode, proc.stdout) == (1, "Submitting job(s).")
    assert proc.stderr == ("\nERROR: Failed to commit job submission into the queue.\n"
                           "ERROR: asks for 2048 MB: at most 1024, please\n")
    small = submit(cell, SLEEP + "request_memory = 512\nhold = true\nqueue\n", cwd=workdir, name="s.sub")
    proc = cell.run("condor_submit", "s.sub", cwd=workdir)
    assert proc.returncode == 0
    assert proc.stdout == f"Submitting job(s).\n1 job(s) submitted to cluster {small + 1}.\n"
    assert proc.stderr == ("\nWARNING: Committed job submission into the queue with the following warning(s):\n"
                           "WARNING: Submit requirement Named not met.\n\n")
    proc = cell.run("condor_submit", "-batch-name", "b", "s.sub", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (0, "")
    wait_for(lambda: len(statuses(cell)) == 3)
    # the daemon holds to the cell's rules whatever the submitter's own configuration says,
    # and condor_submit, reading another, waits for its verdict
    proc = cell.run("condor_submit", "big.sub", cwd=workdir, env={"_CONDOR_SUBMIT_REQUIREMENT_NAMES": ""})
    assert (proc.returncode, proc.stdout) == (1, "Submitting job(s)."), proc.stderr
    assert proc.stderr == ("\nERROR: Failed to commit job submission into the queue.\n"
                           "ERROR: asks for 2048 MB: at most 1024, please\n")
    messages = os.path.join(cell.root, "spool", "messages")
    assert " of root refused: asks for 2048 MB" in open(messages).read()
    wait_for(lambda: not unanswered(cell.root))        # (answered before it leaves the spool)
    assert len(statuses(cell)) == 3
    # they are rules every job of the queue meets: a Grid Engine job too (its ad as condor_q
    # shows it); the daemon turns away one that does not
    proc = cell.run("qsub", "-h", "-l", "h_vmem=2G", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "Unable to run job: asks for 2048 MB: at most 1024, please\n"
                                                 "Exiting.\n")
    fits = int(cell.run("qsub", "-terse", "-h", "-l", "h_vmem=512M", "-b", "y", "true", cwd=workdir,
                        check=True).stdout)
    wait_for(lambda: len(statuses(cell)) == 4)
    assert f"{fits}.0" in statuses(cell)
    assert cell.run("condor_q", str(fits), "-af", "RequestMemory").stdout == "512\n"


def test_submit_requirements_see_the_schedd_s_job_counts(cell, workdir):
    """A submit requirement's MY is the schedd's ad as condor_status -schedd shows it:
    its job counts (TotalJobAds ...) refuse a submission once the queue holds two jobs,
    in condor_submit and in the daemon, which reads its ad again every second."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("SUBMIT_REQUIREMENT_NAMES = Room\nSUBMIT_REQUIREMENT_Room = MY.TotalJobAds < 2\n"
                 'SUBMIT_REQUIREMENT_Room_REASON = strcat("the queue holds ", MY.TotalJobAds, " jobs")\n')
    assert cell.run("condor_reconfig").returncode == 0
    write(os.path.join(workdir, "h.sub"), SLEEP + "hold = true\nqueue\n")
    for count in (1, 2):
        proc = cell.run("condor_submit", "h.sub", cwd=workdir)
        assert proc.returncode == 0, proc.stderr
        wait_for(lambda: cell.run("condor_status", "-schedd", "-af", "TotalJobAds").stdout == f"{count}\n")
    proc = cell.run("condor_submit", "h.sub", cwd=workdir)
    assert (proc.returncode, proc.stderr.splitlines()[-1]) == (1, "ERROR: the queue holds 2 jobs")
    time.sleep(1.1)                     # (the daemon's copy of its ad is a second old at most)
    proc = cell.run("condor_submit", "h.sub", cwd=workdir, env={"_CONDOR_SUBMIT_REQUIREMENT_NAMES": ""})
    assert (proc.returncode, proc.stderr.splitlines()[-1]) == (1, "ERROR: the queue holds 2 jobs")
    assert " of root refused: the queue holds 2 jobs" in open(os.path.join(cell.root, "spool", "messages")).read()
    assert len(statuses(cell)) == 2


def test_assign_accounting_group_maps_each_owner_to_its_group(cell, workdir, users):
    """use FEATURE : AssignAccountingGroup(map file): each job's AccountingGroup comes
    from its owner's line of the map (the group it asks for when the map gives it that
    one), set by the daemon's transform; a group it may not have, or an owner the map
    does not know, refuses the job in the feature's words."""
    groups = os.path.join(cell.root, "etc", "groups.map")
    write(groups, "* root physics,chem\n")
    os.chmod(groups, 0o644)
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(f"use FEATURE : AssignAccountingGroup({groups})\n")
    assert cell.run("condor_reconfig").returncode == 0
    plain = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    chosen = submit(cell, SLEEP + "accounting_group = chem\nhold = true\nqueue\n", cwd=workdir, name="c.sub")
    wait_for(lambda: len(statuses(cell)) == 2)
    shown = cell.run("condor_q", "-af", "ClusterId", "AccountingGroup", "AcctGroupUser").stdout.splitlines()
    assert shown == [f"{plain} physics.root root", f"{chosen} chem.root root"]
    write(os.path.join(workdir, "bad.sub"), SLEEP + "accounting_group = bio\nhold = true\nqueue\n")
    proc = cell.run("condor_submit", "bad.sub", cwd=workdir)
    assert (proc.returncode, proc.stderr.splitlines()[-1]) == (1, "ERROR: Permission denied setting accounting_group to bio")
    os.chmod(workdir, 0o777)
    write(os.path.join(workdir, "u.sub"), SLEEP + "hold = true\nqueue\n")
    proc = cell.run("condor_submit", "u.sub", cwd=workdir, user=users[0])
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == "ERROR: Submit requirement AssignAccountingGroup not met."
    assert len(statuses(cell)) == 2


def test_a_user_who_cannot_read_a_user_map_waits_for_the_daemons_verdict(cell, workdir, users):
    """A map only root may read: condor_submit cannot check the submit requirements
    itself, so it waits for the daemon to take each cluster in, and says a refusal in
    its own words (exit 1, nothing queued) instead of a submission that never appears."""
    groups = os.path.join(cell.root, "etc", "secret.map")
    write(groups, f"* {users[1]} physics\n")
    os.chmod(groups, 0o600)
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(f"use FEATURE : AssignAccountingGroup({groups})\n")
    assert cell.run("condor_reconfig").returncode == 0
    os.chmod(workdir, 0o777)
    write(os.path.join(workdir, "u.sub"), SLEEP + "hold = true\nqueue\n")
    proc = cell.run("condor_submit", "u.sub", cwd=workdir, user=users[0])
    assert proc.returncode == 1
    assert proc.stdout == "Submitting job(s)."
    assert proc.stderr == ("\nERROR: Failed to commit job submission into the queue.\n"
                           "ERROR: Submit requirement AssignAccountingGroup not met.\n")
    proc = cell.run("condor_submit", "u.sub", cwd=workdir, user=users[1])
    assert proc.returncode == 0, proc.stderr
    cluster = int(re.search(r"1 job\(s\) submitted to cluster (\d+)\.", proc.stdout).group(1))
    # (taken in before condor_submit said so: no wait here)
    assert cell.run("condor_q", "-allusers", "-af", "ClusterId", "AccountingGroup").stdout == \
        f"{cluster} physics.{users[1]}\n"


TRANSFORMS = """JOB_TRANSFORM_NAMES = Mem, Tag, Broken
JOB_TRANSFORM_Mem @=end
   # too little memory asked for: give it some
   REQUIREMENTS RequestMemory < 100
   SET RequestMemory 256
@end
JOB_TRANSFORM_Tag @=end
   site = north
   SET Site "$(site)"
   EVALSET Who strcat(Owner, "@$(site)")
   DEFAULT JobBatchName "tagged"
   COPY Cmd OriginalCmd
   DELETE Junk
@end
JOB_TRANSFORM_Broken = SET
SUBMIT_REQUIREMENT_NAMES = Sited
SUBMIT_REQUIREMENT_Sited = Site =?= "north"
"""


def test_job_transforms_change_new_jobs_as_htcondor_s_schedd_does(cell, workdir):
    """JOB_TRANSFORM_NAMES: each new job's ads go through the transforms whose
    requirements they meet, in order (SET, DEFAULT, EVALSET, COPY, DELETE, macros and
    $(name)); what the job asks for follows its transformed ad (its memory request, its
    name); a transform that does not read is left out and said in the messages; submit
    requirements see the transformed ad, in condor_submit as in the daemon."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(TRANSFORMS)
    assert cell.run("condor_reconfig").returncode == 0
    small = submit(cell, SLEEP + "request_memory = 50\n+Junk = 1\nhold = true\nqueue 2\n", cwd=workdir)
    big = submit(cell, SLEEP + "request_memory = 500\nbatch_name = mine\nhold = true\nqueue\n", cwd=workdir,
                 name="b.sub")
    wait_for(lambda: len(statuses(cell)) == 3)
    shown = cell.run("condor_q", "-af", "ClusterId", "ProcId", "RequestMemory", "Site", "Who", "JobBatchName",
                     "OriginalCmd", "Junk").stdout.splitlines()
    assert shown == [f"{small} 0 256 north root@north tagged /bin/sleep undefined",
                     f"{small} 1 256 north root@north tagged /bin/sleep undefined",
                     f"{big} 0 500 north root@north mine /bin/sleep undefined"]
    names = cell.run("qstat", "-u", "*").stdout
    assert "tagged" in names and "mine" in names
    memory = cell.run("qstat", "-j", str(small)).stdout
    assert "256" in [word for line in memory.splitlines() if "resource_list" in line
                     for word in line.replace("=", " ").replace(",", " ").replace("M", " ").split()]
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert "JOB_TRANSFORM_Broken macro stream malformed, ignoring." in messages


def test_a_minus_sign_before_digits_makes_a_negative_literal_as_htcondor_prints_it(idle_cell, workdir):
    """HTCondor's ClassAd lexer reads ``-1`` as one negative number (printed ``-1``) and
    ``- 1`` as a negation (printed `` -1``, its unparser's blank before the operator)."""
    write(os.path.join(workdir, "n.sub"), "executable = /bin/echo\nrequest_cpus = -1\n+Lit = -3\n"
                                          "+Neg = - 3\n+Product = 2*-3\nqueue\n")
    proc = idle_cell.run("condor_submit", "-dry-run", "-", "n.sub", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for line in ("RequestCpus = -1", "Lit = -3", "Neg =  -3", "Product = 2 * -3"):
        assert line in lines


def test_without_transfer_output_files_only_what_the_job_made_or_changed_comes_back(cell, workdir):
    os.makedirs(os.path.join(workdir, "sub"))
    write(os.path.join(workdir, "sub", "in2.txt"), "in2\n")         # fresh: made just before it runs
    write(os.path.join(workdir, "sub", "chg.txt"), "old\n")
    cluster = submit(cell, "executable = /bin/sh\n"
                           "arguments = \"-c 'echo res > result.txt; echo more >> chg.txt'\"\n"
                           "should_transfer_files = YES\nwhen_to_transfer_output = ON_EXIT\n"
                           "transfer_input_files = sub/in2.txt, sub/chg.txt\nlog = t.log\nqueue\n", cwd=workdir)
    wait_events(os.path.join(workdir, "t.log"), f"{cluster}.0", [0, 40, 40, 1, 40, 40, 5])
    assert sorted(os.listdir(workdir)) == ["chg.txt", "job.sub", "result.txt", "sub", "t.log"]
    assert open(os.path.join(workdir, "result.txt")).read() == "res\n"
    assert open(os.path.join(workdir, "chg.txt")).read() == "old\nmore\n"


def test_each_start_empties_the_output_files_whatever_append_files_says(cell, workdir):
    for name in ("t.out", "a.err", "g.out"):
        write(os.path.join(workdir, name), "old content\n")
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'echo new; echo err >&2'\"\n"
                           "output = t.out\nerror = a.err\nappend_files = a.err, t.out\nlog = t.log\nqueue\n",
                     cwd=workdir)
    wait_events(os.path.join(workdir, "t.log"), f"{cluster}.0", [0, 1, 5])
    # the job has left the queue (or is leaving it): its history ad keeps AppendFiles as written
    wait_for(lambda: cell.run("condor_history", str(cluster), "-af", "AppendFiles").stdout == "a.err, t.out\n")
    assert open(os.path.join(workdir, "t.out")).read() == "new\n"
    assert open(os.path.join(workdir, "a.err")).read() == "err\n"       # (as HTCondor 24's starter)
    # a Grid Engine job appends to its output file, as qsub's always did
    job = cell.run("qsub", "-terse", "-b", "y", "-o", os.path.join(workdir, "g.out"), "-j", "y", "echo", "new",
                   cwd=workdir, check=True).stdout.strip()
    cell.wait_finished(job)
    assert open(os.path.join(workdir, "g.out")).read() == "old content\nnew\n"


def test_bytes_that_are_not_utf8_reach_the_job_as_written(cell, workdir):
    # HTCondor hands a submit file's bytes to the job unchanged, as qsub does its arguments
    word = b"a\xff\xfe"
    with open(os.path.join(workdir, "bytes.sub"), "wb") as fh:
        fh.write(b"executable = /bin/sh\narguments = \"-c 'printf %s,%s $0 $V' " + word + b"\"\n"
                 b"environment = \"V=x\xffy\"\noutput = condor.out\nqueue\n")
    proc = cell.run("condor_submit", "bytes.sub", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    proc = cell.qsub("-cwd", "-b", "y", "-o", "sge.out", "-j", "y", "printf", "%s,%s", os.fsdecode(word),
                     os.fsdecode(b"x\xffy"), cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    outputs = [os.path.join(workdir, name) for name in ("condor.out", "sge.out")]
    wait_for(lambda: all(os.path.exists(p) and os.path.getsize(p) for p in outputs), timeout=30)
    assert [open(p, "rb").read() for p in outputs] == [b"a\xff\xfe,x\xffy"] * 2


def test_default_clauses_follow_the_references_and_keywords_after_a_dot_are_refused(cell, workdir):
    """condor_submit adds the OpSys, Arch, Cpus and file transfer clauses by what the
    user's requirements refer to, as HTCondor does: OpSysAndVer checks the OS, a name in
    a string refers to nothing, MY.Arch is a reference; MY.true and adjacent strings are
    parse errors, MY.parent prints bare."""
    write(os.path.join(workdir, "r.sub"), "executable = /bin/true\nrequest_cpus = 2\n"
          'requirements = OpSysAndVer == "AlmaLinux9" && TARGET.OpSysName != "Arch" && Name != "Cpus" '
          '&& regexp("HasFileTransfer", Name) && MY.Arch =!= undefined\nqueue\n')
    dry = cell.run("condor_submit", "-dry-run", "-", "r.sub", cwd=workdir)
    assert dry.returncode == 0, dry.stderr
    line = [ln for ln in dry.stdout.splitlines() if ln.startswith("Requirements = ")][0]
    assert "TARGET.OpSys ==" not in line and "TARGET.Arch ==" not in line
    assert "(TARGET.Cpus >= RequestCpus)" in line and "(TARGET.HasFileTransfer)" in line
    for body, shown in (("requirements = MY.true", "Requirements = (MY.true)"),
                        ("+Foo = TARGET.error", "Foo = TARGET.error"), ('+Foo = "a" "b"', 'Foo = "a" "b"'),
                        ('requirements = "a" "b"', 'Requirements = ("a" "b")')):
        write(os.path.join(workdir, "k.sub"), f"executable = /bin/true\n{body}\nqueue\n")
        bad = cell.run("condor_submit", "-dry-run", "-", "k.sub", cwd=workdir)
        assert (bad.returncode, bad.stdout, bad.stderr) == (1, "", f"ERROR: Parse error in expression: {shown}\n")
    write(os.path.join(workdir, "p.sub"), "executable = /bin/true\n+Foo = MY.parent\nqueue\n")
    dry = cell.run("condor_submit", "-dry-run", "-", "p.sub", cwd=workdir)
    assert "\nFoo = MY.parent\n" in dry.stdout


def test_forced_requirements_override_a_circular_requirements(cell, workdir):
    """+Requirements overrides the requirements command, which condor_submit then does not
    check: the job is queued with the forced Requirements, and a WARNING ends stderr."""
    write(os.path.join(workdir, "f.sub"), SLEEP + "requirements = TARGET.Requirements\n"
          "+Requirements = (TARGET.Memory > 0)\nqueue\n")
    proc = cell.run("condor_submit", "f.sub", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ("WARNING: Use of MY.Requirements or +Requirements  overrides requirements. "
                           "You should remove one of these statements from your submit file.\n")
    cluster = _cluster(proc)
    shown = cell.run("condor_q", f"{cluster}.0", "-af:r", "Requirements").stdout
    assert shown == "(TARGET.Memory > 0)\n"
    assert cell.run("condor_rm", str(cluster)).returncode == 0


def test_a_container_job_waits_for_a_container_runtime(cell, workdir):
    """This cell's machines have no container runtime: a container job is queued as
    HTCondor queues it and waits, and the analysis names the term no machine meets."""
    cluster = submit(cell, "universe = container\ncontainer_image = docker://debian:12\nqueue\n", cwd=workdir)
    shown = cell.run("condor_q", str(cluster), "-af", "WantContainer", "ContainerImageSource", "JobStatus").stdout
    assert shown == "true docker 1\n"
    wait_for(lambda: "the job's Requirements are false" in cell.run("qstat", "-j", str(cluster)).stdout)
    assert cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout == "1\n"      # looked at, still idle
    analysis = cell.run("condor_q", "-better-analyze", f"{cluster}.0").stdout
    assert "TARGET.HasContainer" in analysis and "No machines matched" in analysis
    proc = cell.run("condor_submit", cwd=workdir, input="universe = docker\nqueue\n")
    assert (proc.returncode, proc.stderr) == (1, "ERROR: docker jobs require a docker_image\n")


def test_a_folder_named_with_a_trailing_slash_sends_its_contents_whether_relative_or_absolute(cell, workdir):
    """transfer_input_files: ``dir`` sends the folder, ``dir/`` what it holds (HTCondor's
    rule), for a name relative to the initial directory as for an absolute one."""
    for name in ("rel", "abs", "whole"):
        os.makedirs(os.path.join(workdir, name, "in"))
        write(os.path.join(workdir, name, "in", f"{name}.txt"), f"{name}\n")
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'find . -name ''*.txt'' | sort > found'\"\n"
                           "should_transfer_files = YES\ntransfer_output_files = found\n"
                           f"transfer_input_files = rel/in/, {workdir}/abs/in/, whole/in\nlog = t.log\nqueue\n",
                     cwd=workdir)
    wait_events(os.path.join(workdir, "t.log"), f"{cluster}.0", [0, 40, 40, 1, 40, 40, 5])
    assert open(os.path.join(workdir, "found")).read() == "./abs.txt\n./in/whole.txt\n./rel.txt\n"
