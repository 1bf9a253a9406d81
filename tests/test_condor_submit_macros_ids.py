"""condor_submit as HTCondor's: the queue (not the description) sets ClusterId and
ProcId; NAME=value arguments are macros defined before the file is read
(if/include/error see them); ``queue 0`` queues nothing, says so, and keeps no cluster
id. (A DAG node's VARS and DIR: test_condor_dag_live.)"""

import os
import re

from condortools import statuses, write
from conftest import wait_for

ECHO = "executable = /bin/echo\n"


def _claims(cell):
    return os.listdir(os.path.join(cell.root, "spool", "jobids"))


def _cluster(proc):
    return int(re.search(r"submitted to cluster (\d+)\.", proc.stdout).group(1))


def test_a_user_cluster_id_or_proc_id_never_replaces_the_queue_s_ids(cell, workdir):
    """As HTCondor's condor_submit sends the job's own ClusterId and ProcId: the job is
    queued under the claimed cluster, with procs 0.., and condor_submit says that cluster."""
    cell.run("qmod", "-d", "all.q", check=True)          # (stays in the queue to be looked at)
    write(os.path.join(workdir, "ids.sub"), ECHO + "+ClusterId = 4242\n+ProcId = 7\nqueue 2\n")
    write(os.path.join(workdir, "plain.sub"), ECHO + "queue\n")
    for args in (("ids.sub",), ("-a", "+ClusterId = 4243", "-a", "+ProcId = 9", "plain.sub")):
        proc = cell.run("condor_submit", *args, cwd=workdir)
        assert proc.returncode == 0, proc.stderr
        cluster = _cluster(proc)
        assert cluster not in (4242, 4243)
        procs = 2 if args == ("ids.sub",) else 1
        assert proc.stdout == f"Submitting job(s){'.' * procs}\n{procs} job(s) submitted to cluster {cluster}.\n"
        wanted = {f"{cluster}.{p}" for p in range(procs)}
        wait_for(lambda: set(statuses(cell, str(cluster))) == wanted)
        shown = cell.run("condor_q", str(cluster), "-af", "ClusterId", "ProcId").stdout.split("\n")
        assert sorted(shown[:-1]) == [f"{cluster} {p}" for p in range(procs)]
        wait_for(lambda: str(cluster) not in _claims(cell))       # (taken in, its claim gone)
    dry = cell.run("condor_submit", "-dry-run", "-", "ids.sub", cwd=workdir)
    assert re.findall(r"^(?:ClusterId|ProcId) = (\d+)$", dry.stdout, re.M) == ["1", "0", "1", "1"]


def test_command_line_macros_are_defined_before_the_file_is_read(idle_cell, workdir):
    write(os.path.join(workdir, "m.sub"), ECHO + "if defined MODE\n arguments = mode-$(MODE)\nelse\n"
                                         " arguments = old\nendif\nqueue\n")
    write(os.path.join(workdir, "part.inc"), "arguments = included\n")
    write(os.path.join(workdir, "i.sub"), ECHO + "include : $(INC)\nif $(LOUD)\n warning : loud $(INC)\n"
                                         "endif\nqueue\n")
    write(os.path.join(workdir, "e.sub"), ECHO + "arguments = x\nif defined STOP\n error : stopped by $(STOP)\n"
                                         "endif\nqueue\n")

    def args_of(*argv):
        proc = idle_cell.run("condor_submit", "-dry-run", "-", *argv, cwd=workdir)
        return proc.returncode, re.findall(r'^Args = "(.*)"$', proc.stdout, re.M), proc.stderr
    assert args_of("m.sub", "MODE=fast") == (0, ["mode-fast"], "")
    assert args_of("m.sub") == (0, ["old"], "")
    assert args_of("i.sub", "INC=part.inc", "LOUD=true") == \
        (0, ["included"], 'Warning "i.sub", Line 4: loud part.inc\n')
    code, found, said = args_of("e.sub", "STOP=me")
    assert (code, found) == (1, []) and 'Line 4: stopped by me' in said
    # a description's own assignment, below, still sets the macro again
    write(os.path.join(workdir, "o.sub"), ECHO + "MODE = file\nif defined MODE\n arguments = $(MODE)\nendif\nqueue\n")
    assert args_of("o.sub", "MODE=cli") == (0, ["file"], "")


def test_queue_0_says_no_jobs_were_queued_and_keeps_no_claim(idle_cell, workdir):
    """HTCondor's condor_submit: "Submitting job(s)" ended by its line break, no cluster
    line, the warning of an empty queue statement on standard error, exit 0."""
    write(os.path.join(workdir, "z.sub"), ECHO + "queue 0\n")
    before = sorted(_claims(idle_cell)) if os.path.isdir(os.path.join(idle_cell.root, "spool", "jobids")) else []
    proc = idle_cell.run("condor_submit", "z.sub", cwd=workdir)
    assert sorted(_claims(idle_cell)) == before
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, "Submitting job(s)\n", '\nWARNING: "z.sub" has only empty "queue" commands -- no jobs queued\n')
    terse = idle_cell.run("condor_submit", "-terse", "z.sub", cwd=workdir)
    assert (terse.returncode, terse.stdout, terse.stderr) == (0, "", "")
    dry = idle_cell.run("condor_submit", "-dry-run", "ads", "z.sub", cwd=workdir)
    assert (dry.returncode, dry.stdout, dry.stderr) == (
        0, "Dry-Run job(s)\n", '\nWARNING: "z.sub" has only empty "queue" commands -- no jobs queued\n')
    assert sorted(_claims(idle_cell)) == before
