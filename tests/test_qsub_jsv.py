"""qsub's client job submission verifiers (-jsv): real JSV programs speaking Grid Engine's
protocol to a real qsub, against a running cell."""

import grp
import os
import pwd
import re

import pytest

from conftest import test_user, wait_for

#: a JSV in sh: records each line it is sent in $LOG, answers START with the lines of
#: $ON_START then STARTED, and BEGIN with the lines of $ON_BEGIN (a Grid Engine
#: protocol line each, separated by "|")
RECORDER = r"""#!/bin/sh
LOG=%(log)s
echo "started by $(id -un) in $(pwd)" >> "$LOG"
while IFS= read -r line; do
  echo "$line" >> "$LOG"
  case "$line" in
    START) %(on_start)s echo STARTED ;;
    BEGIN) %(on_begin)s ;;
    QUIT) exit 0 ;;
  esac
done
"""


def make_jsv(folder, name, on_begin="RESULT STATE ACCEPT", on_start=""):
    """A recorder JSV at folder/name answering BEGIN with ``on_begin``; (path, log path)."""
    path, log = os.path.join(folder, name), os.path.join(folder, name + ".log")

    def lines(text):
        return "".join(f"echo '{line}'; " for line in text.split("|") if line)
    with open(path, "w") as fh:
        fh.write(RECORDER % {"log": log, "on_start": lines(on_start), "on_begin": lines(on_begin)})
    os.chmod(path, 0o755)
    return path, log


def sent(log):
    with open(log) as fh:
        return fh.read().splitlines()


def queued(cell, jid):
    """The fields ``qstat -j`` shows of the job once the daemon has taken it in."""
    wait_for(lambda: cell.run("qstat", "-j", str(jid)).returncode == 0)
    lines = cell.run("qstat", "-j", str(jid)).stdout.splitlines()[1:]
    return {line[:28].rstrip(": "): line[28:] for line in lines}


def job_ids(cell):
    return [line.split()[0] for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]]


def test_a_jsv_is_sent_the_job_in_grid_engines_parameters_and_accepts_it(cell, workdir):
    """START, STARTED, the job's parameters (VERSION first, then the read-only facts, the
    command and its arguments, then each option given), BEGIN, RESULT, QUIT; the job is
    queued as submitted."""
    path, log = make_jsv(workdir, "accept.sh")
    me = pwd.getpwuid(os.getuid()).pw_name
    group = grp.getgrgid(os.getgid()).gr_name
    proc = cell.qsub("-jsv", path, "-N", "nm", "-h", "-l", "h_rt=60", "-soft", "-l", "arch=x", "-hard",
                     "-pe", "smp", "2-4", "-t", "1-3:2", "-p", "-5", "-A", "acct", "-cwd", "-j", "y",
                     "-o", "out", "-e", "err", "-hold_jid", "77", "-ac", "k=v", "-M", "a@b", "-m", "be",
                     "-q", "all.q", "-r", "y", "-b", "y", "/bin/echo", "x y", "z", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    assert re.fullmatch(r'Your job-array \d+\.1-3:2 \("nm"\) has been submitted\n', proc.stdout)
    assert sent(log) == [
        f"started by {me} in {workdir}", "START",
        "PARAM VERSION 1.0", "PARAM CONTEXT client", "PARAM CLIENT qsub", f"PARAM USER {me}",
        f"PARAM GROUP {group}", "PARAM CMDNAME /bin/echo", "PARAM CMDARGS 2", "PARAM CMDARG0 x y",
        "PARAM CMDARG1 z", "PARAM ac k=v", "PARAM A acct", "PARAM b y", f"PARAM cwd {workdir}",
        "PARAM e err", "PARAM hold_jid 77", "PARAM h u", "PARAM j y", "PARAM l_hard h_rt=60",
        "PARAM l_soft arch=x", "PARAM m be", "PARAM M a@b", "PARAM N nm", "PARAM o out",
        "PARAM p -5", "PARAM pe_name smp", "PARAM pe_min 2", "PARAM pe_max 4", "PARAM q_hard all.q",
        "PARAM r y", "PARAM t_min 1", "PARAM t_max 3", "PARAM t_step 2", "BEGIN", "QUIT"]
    jid = int(re.search(r"job-array (\d+)", proc.stdout).group(1))
    shown = queued(cell, jid)
    assert (shown["job_name"], shown["priority"], shown["job_args"]) == ("nm", "-5", "x y,z")


def test_a_correcting_jsv_changes_the_job_and_its_environment(cell, workdir):
    """RESULT STATE CORRECT applies the PARAM and ENV lines sent before it (a PARAM without a
    value removes the setting); SEND ENV before STARTED has the job's environment sent;
    LOG lines are printed on standard output before the job's line."""
    path, log = make_jsv(workdir, "fix.sh", on_start="SEND ENV", on_begin=(
        "LOG INFO fixing your job|PARAM N fixed|PARAM l_hard h_rt=100,hostname=nosuchhost|PARAM p -10|"
        "PARAM h n|PARAM o|PARAM CMDARGS 1|ENV ADD EXTRA added value|ENV DEL DROPME|"
        "ENV MOD KEEP changed|RESULT STATE CORRECT"))
    proc = cell.qsub("-terse", "-jsv", path, "-h", "-o", "/tmp/nowhere", "-l", "h_rt=60",
                     "-v", "KEEP=1,DROPME=2", "-b", "y", "/bin/echo", "one", "two", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    printed = proc.stdout.splitlines()
    assert printed[0] == "fixing your job" and printed[1].isdigit()
    assert "ENV ADD KEEP 1" in sent(log) and "ENV ADD DROPME 2" in sent(log)
    shown = queued(cell, int(printed[1]))
    assert (shown["job_name"], shown["priority"], shown["job_args"]) == ("fixed", "-10", "one")
    assert (shown["hard resource_list"], shown["env_list"]) == ("h_rt=100,hostname=nosuchhost",
                                                              "TERM=NONE,KEEP=changed,EXTRA=added value")
    assert "stdout_path_list" not in shown
    states = {line.split()[0]: line.split()[4] for line in cell.run("qstat").stdout.splitlines()[2:]}
    assert states[printed[1]] == "qw"       # the hold taken away (and no host is nosuchhost)


def test_accept_keeps_the_changes_sent_before_it(cell, workdir):
    path, _log = make_jsv(workdir, "acc.sh", on_begin="PARAM N kept|RESULT STATE ACCEPT")
    proc = cell.qsub("-jsv", path, "-h", "-N", "mine", "-b", "y", "true", cwd=workdir)
    assert proc.returncode == 0 and '("kept")' in proc.stdout


@pytest.mark.parametrize("on_begin, on_start, reason", [
    ("RESULT STATE REJECT no jobs on sundays", "", "no jobs on sundays"),
    ("RESULT STATE REJECT", "", "JSV rejected job"),
    ("RESULT STATE REJECT_WAIT", "", "JSV temporarily rejected job"),
    ("RESULT STATE MAYBE", "", 'JSV sent unknown result "MAYBE"'),
    ("PARAM p high|RESULT STATE CORRECT", "", 'JSV tries to set "p" to "high"'),
    ("PARAM USER root|RESULT STATE CORRECT", "", 'JSV tries to modify read-only parameter "USER"'),
    ("PARAM j|RESULT STATE CORRECT", "", 'JSV tries to delete boolean parameter "j"'),
    ("PARAM N|RESULT STATE CORRECT", "", 'JSV tries to delete "N"'),
    ("HELLO there", "", 'master got unknown command from JSV: "HELLO"'),
    ("RESULT STATE ACCEPT", "SEND FILES", 'got "FILES" as object for SEND command'),
])
def test_a_refusal_or_a_broken_answer_refuses_the_job_and_queues_nothing(cell, workdir, on_begin,
                                                                          on_start, reason):
    path, _log = make_jsv(workdir, "no.sh", on_begin=on_begin, on_start=on_start)
    before = job_ids(cell)
    proc = cell.qsub("-jsv", path, "-h", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", f"Unable to run job: {reason}\nExiting.\n")
    assert job_ids(cell) == before


def test_a_line_on_the_jsvs_standard_error_refuses_the_job(cell, workdir):
    path = os.path.join(workdir, "noisy.sh")
    with open(path, "w") as fh:
        fh.write("#!/bin/sh\nread start\necho 'something is wrong' >&2\nsleep 5\n")
    os.chmod(path, 0o755)
    proc = cell.qsub("-jsv", path, "-h", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "Unable to run job: JSV stderr: something is wrong\nExiting.\n")


def test_a_silent_jsv_is_started_again_once_then_the_job_is_refused(cell, workdir):
    path = os.path.join(workdir, "silent.sh")
    starts = os.path.join(workdir, "starts")
    with open(path, "w") as fh:
        fh.write(f"#!/bin/sh\necho started >> {starts}\nexec sleep 60\n")
    os.chmod(path, 0o755)
    proc = cell.qsub("-jsv", path, "-h", "-b", "y", "true", cwd=workdir, env={"SGE_JSV_TIMEOUT": "1"})
    assert (proc.returncode, proc.stderr) == (1, f'Unable to run job: got no response from JSV script "{path}"\nExiting.\n')
    assert sent(starts) == ["started", "started"]


def test_every_jsv_named_runs_the_last_named_first_and_clear_forgets_them(cell, workdir):
    """Grid Engine's order: the command line's JSV, then the request files' (the cell's
    last); each sees the job as the one before left it; -clear drops those named before
    it; -jsv none names none."""
    first, first_log = make_jsv(workdir, "cmdline.sh", on_begin="PARAM N from_cmdline|RESULT STATE CORRECT")
    site, site_log = make_jsv(workdir, "site.sh", on_begin="PARAM p -7|RESULT STATE CORRECT")
    with open(os.path.join(cell.root, "etc", "sge_request"), "a") as fh:
        fh.write(f"-jsv {site}\n")
    proc = cell.qsub("-terse", "-jsv", first, "-jsv", "none", "-h", "-b", "y", "true", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    shown = queued(cell, int(proc.stdout))
    assert (shown["job_name"], shown["priority"]) == ("from_cmdline", "-7")
    assert "PARAM N from_cmdline" in sent(site_log)          # the site's saw the change
    assert "PARAM N from_cmdline" not in sent(first_log)
    with open(site_log, "w"):
        pass
    proc = cell.qsub("-terse", "-clear", "-h", "-b", "y", "true", cwd=workdir)
    assert proc.returncode == 0 and "priority" not in queued(cell, int(proc.stdout))
    assert sent(site_log) == []


@pytest.mark.parametrize("url, reason", [
    ("{dir}/missing.sh", 'JSV "{dir}/missing.sh" is either not a file or not executeable'),
    ("{dir}", 'JSV "{dir}" is either not a file or not executeable'),
    ("gtalice@{dir}/x.sh", "specifying user is not allowed in client JSV URLs"),
    ("sharedlib:{dir}/x.sh", 'type "sharedlib" in JSV URL is invalid'),
])
def test_a_jsv_that_cannot_run_refuses_the_job(cell, workdir, url, reason):
    proc = cell.qsub("-jsv", url.format(dir=workdir), "-h", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (3, f"qsub: {reason.format(dir=workdir)}\n")


def test_the_jsv_runs_as_the_submitting_user(cell, workdir):
    user = test_user("gtalice").pw_name
    path, log = make_jsv(workdir, "who.sh")
    os.chmod(workdir, 0o777)
    with open(log, "w"):
        pass
    os.chmod(log, 0o666)
    proc = cell.qsub("-jsv", path, "-h", "-b", "y", "true", cwd=workdir, user=user)
    assert proc.returncode == 0, proc.stderr
    assert sent(log)[0] == f"started by {user} in {workdir}"
    assert f"PARAM USER {user}" in sent(log)


def test_qrsh_runs_the_jsvs_too(cell, workdir):
    path, log = make_jsv(workdir, "qrsh.sh", on_begin="RESULT STATE REJECT not interactively")
    proc = cell.run("qrsh", "-jsv", path, "-v", "DISPLAY=:5", "hostname", "-f", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "Unable to run job: not interactively\nExiting.\n")
    assert "PARAM display :5" in sent(log)
    assert ["PARAM CLIENT qrsh", "PARAM CMDNAME hostname", "PARAM CMDARGS 1", "PARAM CMDARG0 -f"] == \
        [line for line in sent(log) if line.split(" ")[1:2] in (["CLIENT"], ["CMDNAME"], ["CMDARGS"], ["CMDARG0"])]
    path, log = make_jsv(workdir, "pass.sh", on_begin="PARAM CMDARG0 corrected|RESULT STATE CORRECT")
    proc = cell.run("qrsh", "-jsv", path, "echo", "as given", cwd=workdir)
    assert (proc.returncode, proc.stdout) == (0, "corrected\n")


#: a JSV written as Grid Engine's sh JSVs are, with the cell's function library
LIBRARY_JSV = r"""#!/bin/sh
. "$SGE_ROOT/util/resources/jsv/jsv_include.sh"
jsv_on_start() {
    jsv_send_env
}
jsv_on_verify() {
    jsv_show_params
    if [ "$(jsv_get_param N)" = "forbidden" ]; then
        jsv_reject "the name forbidden is forbidden"
        return
    fi
    if [ "$(jsv_sub_is_param l_hard h_rt)" = false ]; then
        jsv_sub_add_param l_hard h_rt 3600
    fi
    jsv_sub_del_param l_hard arch
    jsv_set_param p -3
    jsv_del_param o
    [ "$(jsv_is_env DROPME)" = true ] && jsv_del_env DROPME
    jsv_add_env CHECKED "by $(jsv_get_param USER)"
    jsv_log_info "context was $(jsv_get_param ac)"
    jsv_correct "job checked"
}
jsv_main
"""


def test_a_jsv_written_with_the_cells_sh_functions_corrects_and_refuses(cell, workdir):
    """$SGE_ROOT/util/resources/jsv/jsv_include.sh gives sh JSVs Grid Engine's functions
    (SGE_ROOT the cell's when the caller has none). What the job carries is never
    evaluated by them: a context value with a command substitution is shown as it is."""
    path = os.path.join(workdir, "lib.sh")
    with open(path, "w") as fh:
        fh.write(LIBRARY_JSV)
    os.chmod(path, 0o755)
    planted = os.path.join(workdir, "planted")
    env = {"DROPME": "1", "KEEPME": "2"}
    proc = cell.qsub("-terse", "-jsv", path, "-h", "-N", "ok", "-l", "arch=lx-amd64,h_vmem=1G",
                     "-o", "/tmp/x", "-ac", f"k=$(touch${{IFS}}{planted})", "-v", "DROPME,KEEPME", "-b", "y", "true",
                     cwd=workdir, env=env)
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    printed = proc.stdout.splitlines()
    assert "got param N=ok" in printed and f"context was k=$(touch${{IFS}}{planted})" in printed
    assert not os.path.exists(planted)
    shown = queued(cell, int(printed[-1]))
    assert (shown["hard resource_list"], shown["priority"]) == ("h_vmem=1G,h_rt=3600", "-3")
    assert shown["env_list"] == f"TERM=NONE,KEEPME=2,CHECKED=by {pwd.getpwuid(os.getuid()).pw_name}"
    assert "stdout_path_list" not in shown
    proc = cell.qsub("-jsv", path, "-h", "-N", "forbidden", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "Unable to run job: the name forbidden is forbidden\nExiting.\n")
    assert os.path.islink(os.path.join(cell.root, "util", "resources", "jsv", "jsv_include.sh"))


def test_qlogin_tells_its_jsvs_it_is_qlogin(cell, workdir):
    path, log = make_jsv(workdir, "login.sh", on_begin="RESULT STATE REJECT no logins")
    proc = cell.run("qlogin", "-jsv", path, cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "Unable to run job: no logins\nExiting.\n")
    assert "PARAM CLIENT qlogin" in sent(log) and "PARAM N QLOGIN" in sent(log)


def test_a_jsv_is_sent_the_binding_and_may_change_it(cell, workdir):
    """-binding as Grid Engine's binding_* parameters (the type set unless given); a JSV's
    changes make the request again."""
    path, log = make_jsv(workdir, "bind.sh", on_begin="PARAM binding_amount 4|RESULT STATE CORRECT")
    proc = cell.qsub("-terse", "-jsv", path, "-h", "-binding", "env", "linear:2:0,1", "-b", "y", "true", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert [line for line in sent(log) if line.startswith("PARAM binding_")] == [
        "PARAM binding_strategy linear", "PARAM binding_type env", "PARAM binding_amount 2",
        "PARAM binding_socket 0", "PARAM binding_core 1"]
    assert queued(cell, int(proc.stdout))["binding"] == "env linear:4:0,1"
    for request, params in ((["striding:2:4"], ["binding_strategy striding", "binding_type set", "binding_amount 2",
                                                "binding_step 4"]),
                            (["explicit:0,0:1,1"], ["binding_strategy explicit", "binding_type set", "binding_exp_n 2",
                                                    "binding_exp_socket0 0", "binding_exp_core0 0",
                                                    "binding_exp_socket1 1", "binding_exp_core1 1"])):
        path, log = make_jsv(workdir, f"see_{request[0][:4]}.sh")
        assert cell.qsub("-jsv", path, "-h", "-binding", *request, "-b", "y", "true", cwd=workdir).returncode == 0
        assert [line[6:] for line in sent(log) if line.startswith("PARAM binding_")] == params
    path, _log = make_jsv(workdir, "badbind.sh", on_begin="PARAM binding_type foo|RESULT STATE CORRECT")
    proc = cell.qsub("-jsv", path, "-h", "-binding", "linear:1", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, 'Unable to run job: JSV tries to set "binding_type" to "foo"\nExiting.\n')
