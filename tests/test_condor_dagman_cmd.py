"""The DAGMan job condor_submit_dag submits runs the condor_dagman command (bin/condor_dagman,
a link to the launcher), as HTCondor's runs its condor_dagman: the job's Cmd is that path in
condor_q and condor_history, a constraint on Cmd finds the DAG's manager, and its arguments
are those HTCondor's condor_submit_dag writes (DaemonCore's -p 0 -f -l ., then the DAG's)."""

import os
import re
import subprocess
import sys

from conftest import BIN, REPO, user_bin, wait_for


def write(folder, name, text, mode=0o755):
    path = os.path.join(folder, name)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, mode)
    return path


def gated_dag(folder):
    """diamond.dag: node A waits for the file ``go``, then B runs; each appends its name to
    ``order``."""
    for name in "AB":
        wait = f"while [ ! -e {folder}/go ]; do sleep 0.05; done\n" if name == "A" else ""
        write(folder, f"{name}.sh", f"#!/bin/sh\n{wait}echo {name} >> {folder}/order\n")
        write(folder, f"{name}.sub", f"executable = {name}.sh\noutput = {name}.out\nerror = {name}.err\nqueue\n")
    write(folder, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\n")


def submit_dag(cell, folder, user=None):
    proc = cell.run("condor_submit_dag", "diamond.dag", cwd=folder, user=user)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return int(re.search(r"submitted to cluster (\d+)\.", proc.stdout).group(1))


def order(folder):
    path = os.path.join(folder, "order")
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        return fh.read().split()


def ids(out):
    return sorted(int(word) for word in out.split())


def test_the_dagman_jobs_cmd_is_condor_dagman_in_the_queue_and_the_history(cell, workdir):
    gated_dag(workdir)
    dag = submit_dag(cell, workdir)
    launcher = os.path.join(BIN, "condor_dagman")
    # the submit file names it, with HTCondor's arguments (no interpreter, no module)
    with open(os.path.join(workdir, "diamond.dag.condor.sub")) as fh:
        sub = fh.read()
    assert f"executable\t= {launcher}\n" in sub
    assert re.search(r'^arguments\t= "-p 0 -f -l \. -Lockfile diamond\.dag\.lock .*-Dag diamond\.dag', sub, re.M), sub
    # while it runs (node A waits for "go"): its Cmd, and a constraint on it
    wait_for(lambda: cell.run("condor_q", "-af", "ClusterId", "DAGNodeName").stdout.strip()
             .endswith(f"{dag + 1} A"), timeout=30)
    assert cell.run("condor_q", str(dag), "-af", "Cmd").stdout == f"{launcher}\n"
    assert cell.run("condor_q", str(dag), "-af", "Cmd").stdout.rstrip("\n").endswith("/condor_dagman")
    found = cell.run("condor_q", "-constraint", 'regexp("condor_dagman", Cmd)', "-af", "ClusterId")
    assert (found.returncode, ids(found.stdout)) == (0, [dag])
    row = [line for line in cell.run("condor_q", "-nobatch").stdout.splitlines()
           if line.lstrip().startswith(f"{dag}.0 ")]
    assert len(row) == 1 and " condor_dagman -p 0 -f -l . -Lockfile diamond.dag.lock " in row[0], row
    write(workdir, "go", "")
    cell.wait_finished(dag, timeout=60)
    assert order(workdir) == ["A", "B"]
    assert [r[12] for r in cell.accounting() if int(r[5]) == dag] == ["0"]        # (its exit status)
    wait_for(lambda: cell.run("condor_history", str(dag), "-af", "Cmd").stdout.strip(), timeout=20)
    shown = cell.run("condor_history", str(dag), "-af", "Cmd").stdout
    assert shown == f"{launcher}\n" and shown.rstrip("\n").endswith("/condor_dagman")
    found = cell.run("condor_history", "-constraint", 'regexp("condor_dagman", Cmd)', "-af", "ClusterId")
    assert (found.returncode, ids(found.stdout)) == (0, [dag])


def test_a_held_dagman_job_keeps_its_cmd(cell, workdir):
    gated_dag(workdir)
    dag = submit_dag(cell, workdir)
    wait_for(lambda: "A" in cell.run("condor_q", "-af", "DAGNodeName").stdout.split(), timeout=30)
    assert cell.run("condor_hold", str(dag)).returncode == 0
    wait_for(lambda: cell.run("condor_q", str(dag), "-af", "JobStatus").stdout == "5\n", timeout=20)
    assert cell.run("condor_q", str(dag), "-af", "Cmd").stdout == f"{os.path.join(BIN, 'condor_dagman')}\n"
    held = cell.run("condor_q", "-constraint", 'regexp("condor_dagman", Cmd) && JobStatus == 5', "-af", "ClusterId")
    assert ids(held.stdout) == [dag]


def test_another_users_dagman_job_runs_the_launcher_they_submitted_with(cell, users, workdir):
    """The job runs as the submitting user: the condor_dagman beside the commands they ran
    (a copy of bin/ and src/ they can read), which runs the DAG's nodes as them."""
    gated_dag(workdir)
    write(workdir, "go", "")
    dag = submit_dag(cell, workdir, user=users[0])
    cell.wait_finished(dag, timeout=60)
    assert order(workdir) == ["A", "B"]
    assert {r[3] for r in cell.accounting()} == {users[0]}
    assert [r[12] for r in cell.accounting() if int(r[5]) == dag] == ["0"]
    wait_for(lambda: cell.run("condor_history", str(dag), "-af", "Cmd").stdout.strip(), timeout=20)
    assert cell.run("condor_history", str(dag), "-af", "Cmd").stdout == f"{os.path.join(user_bin(), 'condor_dagman')}\n"


def test_condor_dagman_is_a_command(cell, workdir):
    """bin/condor_dagman is the launcher's link; without a DAG file it says so and fails."""
    assert os.readlink(os.path.join(BIN, "condor_dagman")) == "gridtools-env"
    proc = cell.run("condor_dagman", "-p", "0", "-f", "-l", ".", cwd=workdir)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "condor_dagman: -Dag DAGFILE is required\n")


def test_without_a_condor_dagman_beside_the_package_nothing_is_submitted(cell, workdir, tmp_path):
    """A gridtools with no folder of commands (a package found through a link in a folder
    without bin/, run by an interpreter with no launchers beside it) refuses the DAG, in
    HTCondor's words, before it touches the files of an earlier run (-f would remove
    them) and submits nothing."""
    os.mkdir(tmp_path / "src")
    os.symlink(os.path.join(REPO, "src", "gridtools"), tmp_path / "src" / "gridtools")
    os.mkdir(tmp_path / "python")
    python = str(tmp_path / "python" / "python3")
    os.symlink(os.path.realpath(sys.executable), python)
    gated_dag(workdir)
    write(workdir, "diamond.dag.condor.sub", "# an earlier run's\n", mode=0o644)
    env = {k: v for k, v in cell.env.items() if k != "PYTHONPATH"}
    code = "import sys; sys.path.insert(0, sys.argv.pop(1)); from gridtools.cli.entry import run; " \
           "sys.exit(run('condor_submit_dag', sys.argv[1:]))"
    proc = subprocess.run([python, "-c", code, str(tmp_path / "src"), "-f", "diamond.dag"],
                          cwd=workdir, env=env, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "ERROR: Failed to locate condor_dagman executable in PATH\n"
    with open(os.path.join(workdir, "diamond.dag.condor.sub")) as fh:
        assert fh.read() == "# an earlier run's\n"
    assert cell.run("condor_q", "-af", "ClusterId").stdout == ""
