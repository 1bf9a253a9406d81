"""Where qsub's and qrsh's options come from, and the client JSV's place among them: the
JSV before the cell's checks, the default job name it is sent, ACCEPT after changes,
bad -jsv urls, directives and option files read a line at a time, -sync y from any
source, the first -C, and qrsh dropping the request-file options it does not take."""

import os
import re

from conftest import wait_for

from test_qsub_jsv import make_jsv, queued, sent

#: a JSV that repairs the requests the cell would refuse: it drops -l, -q and -ckpt,
#: -pe's name and the project, and corrects the job
REPAIRER = r"""#!/bin/sh
while IFS= read -r line; do
  case "$line" in
    START) echo STARTED ;;
    BEGIN) echo "PARAM l_hard"; echo "PARAM q_hard"; echo "PARAM ckpt"; echo "PARAM P";
           echo "PARAM pe_name"; echo "RESULT STATE CORRECT" ;;
    QUIT) exit 0 ;;
  esac
done
"""


def write(path, text, mode=0o644):
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, mode)
    return path


def request_file(cell, text):
    return write(os.path.join(cell.root, "etc", "sge_request"), text)


def test_the_client_jsv_runs_before_the_cells_checks_and_can_repair_the_job(cell, workdir):
    """As in Grid Engine, whose qmaster checks what a job names after the client's JSV
    changed it: a JSV can drop an unknown resource, queue, project, checkpointing or
    parallel environment, and the job is submitted; without the JSV it is refused."""
    jsv = write(os.path.join(workdir, "repair.jsv"), REPAIRER, 0o755)
    for request in (["-l", "nosuchres=1"], ["-q", "nosuchq"], ["-P", "nosuchp"], ["-ckpt", "nosuch"],
                    ["-pe", "nosuchpe", "2"]):
        proc = cell.qsub("-terse", "-h", *request, "-b", "y", "true", cwd=workdir)
        assert proc.returncode == 1 and proc.stderr.startswith("Unable to run job: "), request
        proc = cell.qsub("-terse", "-h", "-jsv", jsv, *request, "-b", "y", "true", cwd=workdir)
        assert (proc.returncode, proc.stderr) == (0, ""), request
        assert re.fullmatch(r"\d+\n", proc.stdout), request


def test_the_jsv_is_sent_the_default_job_name(cell, workdir):
    """Without -N the JSV is sent N as Grid Engine names the job before it runs: the
    script's file name, or STDIN; a JSV building on it names the job so."""
    path, log = make_jsv(workdir, "names.sh")
    script = write(os.path.join(workdir, "jd.sh"), "#!/bin/sh\ntrue\n")
    assert cell.qsub("-h", "-jsv", path, script, cwd=workdir).returncode == 0
    assert "PARAM N jd.sh" in sent(log)
    write(log, "")
    assert cell.qsub("-h", "-jsv", path, cwd=workdir, input="#!/bin/sh\ntrue\n").returncode == 0
    assert "PARAM N STDIN" in sent(log)
    jsv = write(os.path.join(workdir, "suffix.jsv"), r"""#!/bin/sh
. "$SGE_ROOT/util/resources/jsv/jsv_include.sh"
jsv_on_start() { :; }
jsv_on_verify() { jsv_set_param N "$(jsv_get_param N)_cmd"; jsv_correct; }
jsv_main
""", 0o755)
    proc = cell.qsub("-terse", "-clear", "-h", "-jsv", jsv, script, cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert queued(cell, int(proc.stdout))["job_name"] == "jd.sh_cmd"


def test_accept_after_param_lines_keeps_the_changes(cell, workdir):
    path, _log = make_jsv(workdir, "accept.sh", on_begin="PARAM N renamed2|RESULT STATE ACCEPT")
    proc = cell.qsub("-h", "-jsv", path, "-b", "y", "true", cwd=workdir)
    assert proc.returncode == 0 and '("renamed2")' in proc.stdout, proc.stdout


def test_a_bad_jsv_url_is_refused_as_the_option_is_read(cell, workdir):
    """Grid Engine's parser: ``qsub: JSV "..." is either not a file or not executeable``,
    exit 3, for a missing file and for one that cannot run alike."""
    for path in ("/nonexist", "/etc/passwd"):
        proc = cell.qsub("-jsv", path, "-h", "-b", "y", "true", cwd=workdir)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            3, "", f'qsub: JSV "{path}" is either not a file or not executeable\n')


def test_directive_lines_are_parsed_one_at_a_time(cell, workdir):
    """An option at the end of a directive line does not take the next line's words;
    a quoted empty argument stays an argument."""
    proc = cell.qsub("-verify", cwd=workdir, input="#!/bin/sh\n#$ -N\n#$ spanned\n")
    assert (proc.returncode, proc.stderr) == (
        2, "Unable to read script file because of error: ERROR! -N option must have argument\n")
    proc = cell.qsub("-verify", cwd=workdir, input="#!/bin/sh\n#$ -l\necho hi\n#$ h_rt=7\n")
    assert (proc.returncode, proc.stderr) == (
        2, "Unable to read script file because of error: ERROR! -l option must have argument\n")
    proc = cell.qsub("-verify", cwd=workdir, input='#!/bin/sh\n#$ -C "#PBS"\n#$ -l h_rt=5\n')
    assert (proc.returncode, proc.stderr) == (0, "")
    assert re.search(r"(?m)^hard resource_list:\s+h_rt=5$", proc.stdout), proc.stdout


def test_option_file_lines_are_parsed_one_at_a_time(cell, workdir):
    opts = write(os.path.join(workdir, "opt1"), "-N\nfromnext\n")
    script = write(os.path.join(workdir, "plain.sh"), "#!/bin/sh\ntrue\n")
    proc = cell.qsub("-verify", "-@", opts, script, cwd=workdir)
    assert (proc.returncode, proc.stderr) == (2, "qsub: -N option must have argument\n")
    write(opts, "-N fromfile\n")
    proc = cell.qsub("-verify", "-@", opts, script, cwd=workdir)
    assert proc.returncode == 0 and re.search(r"(?m)^job_name:\s+fromfile$", proc.stdout)


def test_sync_y_from_any_source_wins_over_the_command_lines_n(cell, workdir):
    proc = cell.qsub("-sync", "n", cwd=workdir, input="#!/bin/sh\n#$ -sync y\nexit 4\n")
    assert proc.returncode == 4, (proc.stdout, proc.stderr)
    request_file(cell, "-sync y\n")
    script = write(os.path.join(workdir, "exit3.sh"), "#!/bin/sh\nexit 3\n")
    proc = cell.qsub("-sync", "n", script, cwd=workdir)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)


def test_the_first_prefix_given_counts(cell, workdir):
    script = write(os.path.join(workdir, "cc.sh"), "#!/bin/sh\n#PBS -N pbsname\n#$ -N sgename\n")
    proc = cell.qsub("-verify", "-C", "#PBS", "-C", "#$", script, cwd=workdir)
    assert proc.returncode == 0 and re.search(r"(?m)^job_name:\s+pbsname$", proc.stdout), proc.stdout


def test_qrsh_drops_the_request_file_options_it_does_not_take(cell, workdir):
    """As Grid Engine's qrsh: options of the sge_request files that qrsh does not take
    (-terse, -sync, -t, -a, -dl) are dropped silently; on its command line they are
    refused."""
    for line in ("-terse", "-sync y", "-t 1-2", "-a 203001010000", "-dl 203001010000"):
        request_file(cell, line + "\n")
        proc = cell.run("qrsh", "echo", "ok", cwd=workdir, timeout=60)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "ok\n", ""), line
    request_file(cell, "")
    proc = cell.run("qrsh", "-dl", "203001010000", "echo", "ok", cwd=workdir, timeout=60)
    assert (proc.returncode, proc.stderr) == (1, "error: Unknown option -dl\n")


def test_qrsh_refuses_a_deadline_from_a_user_who_may_not_set_one(cell, workdir):
    """A JSV that gives a qrsh job a deadline: the user is no deadline user, so the job is
    refused with Grid Engine's words, and qrsh ends (it never waits for a job that is
    not there)."""
    path, _log = make_jsv(workdir, "dl.sh", on_begin="PARAM dl 203001010000|RESULT STATE CORRECT")
    proc = cell.run("qrsh", "-jsv", path, "echo", "ok", cwd=workdir, timeout=60)
    assert proc.returncode == 1
    assert "is no deadline initiation user" in proc.stderr, proc.stderr
    assert proc.stdout == ""
    wait_for(lambda: cell.run("qstat").stdout == "")
