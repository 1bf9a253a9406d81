"""qsub's option sources as Grid Engine's clients merge them (sge_request(5), submit(1)):
the cell's sge_request, ~/.sge_request, ./.sge_request, ``-@`` files, ``#$`` directives
and the command line; path aliasing (sge_aliases(5)); -o/-e/-i path expansion."""

import os
import re
import time

from conftest import wait_for
from qtools import add_queue


def fields(proc):
    """qsub -verify's (or qstat -j's) lines as {label: value}."""
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    return {line[:28].rstrip(": "): line[28:] for line in proc.stdout.splitlines()}


def write(path, text, mode=0o644):
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, mode)


def job_id(proc):
    return int(re.search(r"Your job (\d+)", proc.stdout).group(1))


# ---------------------------------------------------------------- merging the sources

def test_q_of_a_higher_source_replaces_every_lower_one(cell, workdir):
    """-q is a union within one source; a higher source's -q discards the -q of all
    lower ones, hard and soft (opt_list_merge_command_lines)."""
    add_queue(cell, "other.q")
    write(os.path.join(cell.root, "etc", "sge_request"), "-q all.q\n")
    write(os.path.join(workdir, ".sge_request"), "-q other.q\n")
    got = fields(cell.qsub("-verify", "-b", "y", "true", cwd=workdir))
    assert got["hard_queue_list"] == "all.q,other.q"
    write(os.path.join(workdir, ".sge_request"), "\n")
    got = fields(cell.qsub("-verify", "-q", "other.q", "-q", "all.q@*", "-b", "y", "true", cwd=workdir))
    assert got["hard_queue_list"] == "other.q,all.q@*"
    script = os.path.join(workdir, "s.sh")
    write(script, "#!/bin/sh\n#$ -q other.q\ntrue\n")
    got = fields(cell.qsub("-verify", script, cwd=workdir))
    assert got["hard_queue_list"] == "other.q"
    got = fields(cell.qsub("-verify", "-soft", "-q", "all.q", script, cwd=workdir))
    assert "hard_queue_list" not in got and got["soft_queue_list"] == "all.q"


def test_path_lists_merge_per_host(cell, workdir):
    """-o, -e, -i and -S lists merge per host across options and sources (FLG_LIST_MERGE):
    a later path for the same host (or none) replaces the earlier, another host's stays."""
    write(os.path.join(workdir, ".sge_request"), "-o nodea:/tmp/a.out -e /tmp/first.err\n")
    got = fields(cell.qsub("-verify", "-o", "/tmp/b.out", "-e", "/tmp/second.err", "-b", "y", "true",
                           cwd=workdir))
    assert (got["stdout_path_list"], got["stderr_path_list"]) == (
        "NONE:nodea:/tmp/a.out,NONE:NONE:/tmp/b.out", "NONE:NONE:/tmp/second.err")


def test_b_y_in_a_request_file_makes_the_command_a_binary(cell, workdir):
    """-b y in a request file counts when the command line has no -b (qsub.c); the
    command line's -b n wins; -b y in the script is refused, saying why."""
    write(os.path.join(workdir, ".sge_request"), "-b y\n")
    got = fields(cell.qsub("-verify", "/bin/echo", "hello", cwd=workdir))
    assert (got["script_file"], got["job_args"], got["job_type"]) == ("/bin/echo", "hello", "binary")
    script = os.path.join(workdir, "s.sh")
    write(script, "#!/bin/sh\n#$ -N fromscript\ntrue\n")
    got = fields(cell.qsub("-verify", "-b", "n", script, cwd=workdir))
    assert (got["job_name"], got["job_type"]) == ("fromscript", "NONE")
    os.unlink(os.path.join(workdir, ".sge_request"))
    write(script, "#!/bin/sh\n#$ -b y\ntrue\n")
    proc = cell.qsub("-h", script, cwd=workdir)
    assert proc.returncode != 0 and proc.stdout == ""
    assert "-b option cannot be embedded in the script file" in proc.stderr, proc.stderr
    assert "field" not in proc.stderr


def test_a_hash_ends_the_line_of_a_request_file_or_directive(cell, workdir):
    """As parse_script_file: a line is cut at its first #, even inside a word; quotes
    are dropped."""
    write(os.path.join(workdir, ".sge_request"), "-N foo#bar -l h_rt=5\n")
    script = os.path.join(workdir, "s.sh")
    write(script, "#!/bin/sh\n#$ -v Z=a#b\n#$ -A 'acct'\ntrue\n")
    got = fields(cell.qsub("-verify", script, cwd=workdir))
    assert got["job_name"] == "foo" and "hard resource_list" not in got
    assert "Z=a" in got["env_list"].split(",") and got["account"] == "acct"


def test_sge_o_host_is_HOST_when_set(cell, workdir):
    got = fields(cell.qsub("-verify", "-b", "y", "true", cwd=workdir, env={"HOST": "customhost"}))
    assert got["sge_o_host"] == "customhost"


# ---------------------------------------------------------------- -@ files

def test_at_file_errors_in_grid_engines_words(cell, workdir):
    proc = cell.qsub("-@", "nosuch", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode != 0, proc.stderr) == (True, "error opening nosuch: No such file or directory\n")
    binary = os.path.join(workdir, "bin.opts")
    with open(binary, "wb") as fh, open("/bin/ls", "rb") as src:
        fh.write(src.read(200000))
    proc = cell.qsub("-@", binary, "-b", "y", "true", cwd=workdir)
    assert proc.returncode != 0 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and len(proc.stderr) < 200, proc.stderr[:300]


def test_at_file_of_dev_zero_is_refused_in_bounded_memory(cell, workdir):
    proc = cell.run("sh", "-c", "ulimit -v 800000; exec qsub -@ /dev/zero -b y true", cwd=workdir, timeout=60)
    assert proc.returncode != 0 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr[-500:]
    assert proc.stderr.startswith("error reading /dev/zero: ")


def test_a_long_option_file_is_read_in_linear_time(cell, workdir):
    path = os.path.join(workdir, "m.opts")
    write(path, "".join(f"-l h_rt={i}\n" for i in range(200000)))
    began = time.time()
    got = fields(cell.qsub("-@", path, "-verify", "-b", "y", "true", cwd=workdir, timeout=40))
    assert got["hard resource_list"] == "h_rt=199999"
    assert time.time() - began < 40
    job = cell.qsub("-h", "-b", "y", "true", cwd=workdir).stdout.split()[2]
    began = time.time()
    altered = cell.run("qalter", "-@", path, job, cwd=workdir, timeout=40)         # (qalter's too)
    assert altered.returncode == 0, altered.stderr
    assert "h_rt=199999" in cell.run("qstat", "-j", job).stdout and time.time() - began < 40


# ---------------------------------------------------------------- files of one's own

def test_a_linked_request_file_of_ones_own_is_read(cell, workdir, users):
    """~/.sge_request and ~/.sge_qstat that link to the user's own files (a dotfile
    manager's) are read; a link another user could have made or changed is not."""
    alice, bob = users[0], users[1]
    home = os.path.expanduser(f"~{alice}")
    dots = os.path.join(home, "gtdots")
    try:
        cell.run("sh", "-c", f"mkdir -p {dots} && echo '-N ownlink' > {dots}/req && echo '-ext' > {dots}/qst"
                 f" && ln -sf {dots}/req ~/.sge_request && ln -sf {dots}/qst ~/.sge_qstat",
                 user=alice, check=True)
        proc = cell.run("qsub", "-h", "-b", "y", "true", user=alice, cwd=workdir)
        assert (proc.stderr, '("ownlink") has been submitted' in proc.stdout) == ("", True)
        proc = cell.run("qstat", user=alice, cwd=workdir)
        assert (proc.stderr, proc.stdout.split()[:3]) == ("", ["job-ID", "prior", "ntckts"])
        # a link in a folder others may write without the sticky bit: refused
        loose = os.path.join(workdir, "loose")
        cell.run("sh", "-c", f"mkdir {loose} && chmod 777 {loose} && ln -s {dots}/req {loose}/.sge_request",
                 user=alice, check=True)
        cell.run("rm", "-f", os.path.join(home, ".sge_request"), user=alice, check=True)
        proc = cell.run("qsub", "-h", "-b", "y", "true", user=alice, cwd=loose)
        assert '("true")' in proc.stdout and "not read" in proc.stderr
        # another user's link to the caller's own file, in a sticky shared folder: refused
        shared = os.path.join(workdir, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)
        cell.run("ln", "-s", f"{dots}/req", f"{shared}/.sge_request", user=bob, check=True)
        proc = cell.run("qsub", "-h", "-b", "y", "true", user=alice, cwd=shared)
        assert '("true")' in proc.stdout and "not read" in proc.stderr
    finally:
        cell.run("rm", "-rf", dots, os.path.join(home, ".sge_request"), os.path.join(home, ".sge_qstat"))
        cell.run("qdel", "-u", alice)


# ---------------------------------------------------------------- running jobs

def _aliases(cell, text):
    write(os.path.join(cell.root, "etc", "sge_aliases"), text)


def test_aliases_apply_only_with_cwd(cell, workdir, users):
    """Without -cwd the job runs in the owner's home, unaliased (sge_aliases(5)); with it
    the working directory and SGE_O_WORKDIR are the aliased path (job_initialize_env)."""
    alice = users[0]
    home = os.path.expanduser(f"~{alice}")
    target = os.path.join(workdir, "target")
    os.mkdir(target)
    os.chmod(target, 0o777)
    _aliases(cell, f"{home}/ * * {target}/\n")
    proc = cell.run("qsub", "-sync", "y", "-N", "gtnocwd", "-j", "y", "-b", "y", "sh", "-c", "pwd",
                    user=alice, cwd=home)
    jid = job_id(proc)
    out = os.path.join(home, f"gtnocwd.o{jid}")
    try:
        assert os.listdir(target) == [] and open(out).read() == home + "\n"
    finally:
        if os.path.exists(out):
            os.unlink(out)
    sub = os.path.join(workdir, "sub")
    os.mkdir(sub)
    os.chmod(sub, 0o777)
    _aliases(cell, f"{sub}/ * * {target}/\n")
    write(os.path.join(sub, "w.sh"), "#!/bin/sh\necho $PWD $SGE_O_WORKDIR\n")
    proc = cell.run("qsub", "-sync", "y", "-cwd", "-N", "gtcwd", "-j", "y", "w.sh", user=alice, cwd=sub)
    jid = job_id(proc)
    assert open(os.path.join(target, f"gtcwd.o{jid}")).read() == f"{target} {target}\n"


def test_tilde_in_an_output_path_is_the_owners_home(cell, workdir, users):
    """~ and ~user start an -o/-e/-i path as in csh (submit(1), expand_path); another
    user's ~ only names a path: the file is opened with the owner's rights."""
    alice, bob = users[0], users[1]
    home = os.path.expanduser(f"~{alice}")
    out = os.path.join(home, "gttilde.out")
    try:
        proc = cell.run("qsub", "-sync", "y", "-j", "y", "-o", "~/gttilde.out", "-b", "y", "echo", "hi",
                        user=alice, cwd=workdir, timeout=30)
        assert proc.returncode == 0, proc.stderr
        assert open(out).read() == "hi\n"
    finally:
        if os.path.exists(out):
            os.unlink(out)
    bobs = os.path.expanduser(f"~{bob}")
    os.chmod(bobs, 0o755)
    proc = cell.run("qsub", "-j", "y", "-o", f"~{bob}/gtstolen.out", "-b", "y", "echo", "hi",
                    user=alice, cwd=workdir)
    jid = job_id(proc)
    reason = wait_for(lambda: re.search(r"error reason.*", cell.run("qstat", "-j", str(jid)).stdout), 20)
    assert f"{bobs}/gtstolen.out" in reason.group(0)
    assert not os.path.exists(os.path.join(bobs, "gtstolen.out"))
    cell.run("qdel", str(jid))


def test_task_id_of_a_job_that_is_no_array_stays_as_written(cell, workdir):
    proc = cell.qsub("-sync", "y", "-cwd", "-N", "pv", "-o", "$JOB_NAME.$TASK_ID.o", "-j", "y",
                     "-b", "y", "echo", "hi", cwd=workdir, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert open(os.path.join(workdir, "pv.$TASK_ID.o")).read() == "hi\n"
