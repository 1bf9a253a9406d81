"""DAGMan review 47: the DIRs of nested SPLICEs add up, for reading the files and for
submitting the jobs; a node job killed by a signal fails with signal N and gives its node
the return value -N; a DAG whose nodes failed lists them before "Aborting DAG..."."""

import os
import re

import pytest

from conftest import cell_fixture
from gridtools.formats.condor.dag import DagError, parse_dag

STAMP = r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d "


def reader(files):
    def read(path):
        if path not in files:
            raise FileNotFoundError(2, "No such file or directory", path)
        return files[path]
    return read


def write(folder, name, text, mode=0o644):
    path = os.path.join(folder, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, mode)
    return path


# ------------------------------------------------------------------ finding 1

def test_a_nested_splice_is_read_in_the_dir_of_its_outer_splice_and_the_dirs_add_up():
    """As DAGMan's parse_splice: the spliced file is read from its DIR, which is taken from
    the folder the splicing file is read in; the files it names too (INCLUDE)."""
    files = {"sub/inner.dag": "SPLICE N inner2.dag DIR deeper\nJOB B b.sub DIR jobs\n",
             "sub/deeper/inner2.dag": "JOB D1 ../../ok.sub\nINCLUDE more.inc\n",
             "sub/deeper/more.inc": "JOB D2 d2.sub\nPARENT D1 CHILD D2\n"}
    dag = parse_dag("JOB A a.sub\nSPLICE S inner.dag DIR sub\nPARENT A CHILD S\n",
                    source="top.dag", read=reader(files))
    assert {name: node.directory for name, node in dag.nodes.items()} == {
        "A": "", "S+N+D1": "sub/deeper", "S+N+D2": "sub/deeper", "S+B": "sub/jobs"}
    assert dag.edges == {("A", "S+N+D1"), ("A", "S+B"), ("S+N+D1", "S+N+D2")}


def test_an_absolute_dir_inside_a_splice_is_taken_as_it_is():
    files = {"sub/inner.dag": "SPLICE N inner2.dag DIR /data/deep\nJOB B b.sub DIR /data/jobs\n",
             "/data/deep/inner2.dag": "JOB D1 d1.sub\n"}
    dag = parse_dag("SPLICE S inner.dag DIR sub\n", source="top.dag", read=reader(files))
    assert {name: node.directory for name, node in dag.nodes.items()} == {
        "S+N+D1": "/data/deep", "S+B": "/data/jobs"}


def test_a_splice_that_splices_its_own_file_through_its_dir_is_still_refused():
    files = {"sub/inner.dag": "SPLICE T inner.dag DIR .\n"}
    with pytest.raises(DagError, match=r"Splice T: recursive splice \(top.dag -> sub/inner.dag -> "
                                        r"sub/inner.dag\)"):
        parse_dag("SPLICE S inner.dag DIR sub\n", source="top.dag", read=reader(files))


def test_condor_submit_dag_reads_the_reviewers_nested_splice(tmp_path, monkeypatch):
    """The DAG of the review: condor_submit_dag said "No such file or directory:
    ./deeper/inner2.dag"."""
    from gridtools.cli.condor.submit_dag import check_dags
    write(tmp_path, "top.dag", "SPLICE S inner.dag DIR sub\n")
    write(tmp_path, "sub/inner.dag", "SPLICE N inner2.dag DIR deeper\n")
    write(tmp_path, "sub/deeper/inner2.dag", "JOB D1 ../../ok.sub\n")
    monkeypatch.chdir(tmp_path)
    dag = check_dags(["top.dag"])
    node = dag.nodes["S+N+D1"]
    assert os.path.normpath(os.path.join(node.directory, node.submit_file)) == "ok.sub"


# ------------------------------------------------------------- live DAG runs

cell = cell_fixture(slots=2)


def run_dag(cell, folder, dag="top.dag"):
    """condor_submit_dag DAG in ``folder``; DAGMan's exit status and its dagman.out."""
    proc = cell.run("condor_submit_dag", dag, cwd=folder)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    manager = int(re.search(r"submitted to cluster (\d+)\.", proc.stdout).group(1))
    cell.wait_finished(manager, timeout=90)
    record = [r for r in cell.accounting() if int(r[5]) == manager]
    with open(os.path.join(folder, dag + ".dagman.out")) as fh:
        return record[0][12], fh.read()


def test_a_node_of_a_nested_splice_is_submitted_from_the_dirs_added_up(cell, workdir):
    write(workdir, "ok.sh", "#!/bin/sh\npwd\n", 0o755)
    write(workdir, "ok.sub", f"executable = {workdir}/ok.sh\noutput = where.out\nerror = where.err\nqueue\n")
    write(workdir, "top.dag", "SPLICE S inner.dag DIR sub\n")
    write(workdir, "sub/inner.dag", "SPLICE N inner2.dag DIR deeper\n")
    write(workdir, "sub/deeper/inner2.dag", "JOB D1 ../../ok.sub\n")
    code, out = run_dag(cell, workdir)
    assert code == "0", out
    assert "Node S+N+D1 completed successfully." in out
    with open(os.path.join(workdir, "sub", "deeper", "where.out")) as fh:
        assert fh.read().strip() == os.path.join(workdir, "sub", "deeper")


def test_a_node_job_killed_by_a_signal_returns_minus_the_signal(cell, workdir):
    """K: RETRY 2 UNLESS-EXIT -15 does not retry it; P: its POST script gets $RETURN -15;
    A: ABORT-DAG-ON A -15 RETURN 2 aborts the DAG."""
    write(workdir, "killed.sh", f"#!/bin/sh\necho $1 >> {workdir}/order\nkill -TERM $$\nsleep 5\n", 0o755)
    write(workdir, "killed.sub", "executable = killed.sh\narguments = $(n)\noutput = $(n).out\n"
                                 "error = $(n).err\nqueue\n")
    write(workdir, "post.sh", f"#!/bin/sh\necho post $1 $2 >> {workdir}/order\nexit 0\n", 0o755)
    write(workdir, "top.dag", "JOB K killed.sub\nRETRY K 2 UNLESS-EXIT -15\n"
                              "JOB P killed.sub\nSCRIPT POST P post.sh $JOB $RETURN\n"
                              "JOB A killed.sub\nABORT-DAG-ON A -15 RETURN 2\nPARENT P CHILD A\n"
                              "VARS K n=\"K\"\nVARS P n=\"P\"\nVARS A n=\"A\"\n")
    code, out = run_dag(cell, workdir)
    assert code == "2", out
    with open(os.path.join(workdir, "order")) as fh:
        ran = fh.read().split("\n")
    assert ran.count("K") == 1 and "post P -15" in ran
    for name in "KPA":
        assert re.search(rf"^{STAMP}Node {name} job proc \(\d+\.0\.0\) failed with signal 15\.$", out, re.M)
    assert "failed with status 1." not in out
    assert re.search(rf"^{STAMP}Node K failed with status -15\.$", out, re.M)
    assert "Retrying node K" not in out
    assert "Node P completed successfully." in out
    assert "Aborting DAG because we got the ABORT exit value from a job" in out


# ------------------------------------------------------------------ finding 10

def test_the_failed_nodes_are_listed_before_aborting_dag(cell, workdir):
    write(workdir, "fail.sh", "#!/bin/sh\nexit 3\n", 0o755)
    write(workdir, "ok.sh", "#!/bin/sh\nexit 0\n", 0o755)
    write(workdir, "fail.sub", "executable = fail.sh\noutput = f.out\nerror = f.err\nqueue\n")
    write(workdir, "ok.sub", "executable = ok.sh\noutput = o.out\nerror = o.err\nqueue\n")
    write(workdir, "top.dag", "JOB A ok.sub\nJOB B fail.sub\nJOB C ok.sub\nJOB D ok.sub\n"
                              "PARENT A CHILD B C\nPARENT B C CHILD D\n")
    code, out = run_dag(cell, workdir)
    assert code == "1", out
    lines = [line[18:] for line in out.splitlines()]
    at = lines.index("ERROR: the following Node(s) failed:")
    cluster = re.search(r"^Node B job proc \((\d+)\.0\.0\) failed with status 3\.$", "\n".join(lines), re.M)
    assert lines[at + 1:at + 13] == [
        "---------------------- Node ----------------------",
        "      Node Name: B",
        "           Noop: false",
        "         NodeID: 1",
        "    Node Status: STATUS_ERROR    ",
        "Node return val: 3",
        f"          Error: Job proc ({cluster.group(1)}.0.0) failed with status 3",
        "Job Submit File: fail.sub",
        f" HTCondor Job ID: ({cluster.group(1)}.0.0)",
        "PARENTS: A WAITING: 0 CHILDREN: D",
        "---------------------------------------\t<END>",
        "Aborting DAG...",
    ]
    assert lines.count("Aborting DAG...") == 1
