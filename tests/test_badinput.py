"""Bad input gets one line on stderr and a non-zero exit, in Grid Engine's words,
and leaves nothing behind in the spool: submit options, qdel/qhold task ranges,
qstat/qhost resource selections and qconf attribute changes."""

import hashlib
import os
import subprocess

import pytest

import fuzzing
from conftest import destroy_cell, make_cell, unanswered, wait_for


@pytest.fixture(scope="module")
def shared():
    c = make_cell()
    try:
        yield c
    finally:
        destroy_cell(c)


def spool_digest(c):
    """What a refused command may not change (requests waiting, the job id sequence, the
    set of jobs, the configuration), once the daemon answered what earlier commands left."""
    wait_for(lambda: not unanswered(c.root), timeout=20)
    return fuzzing.cell_digest(c.root)


def etc_digest(c):
    digest = hashlib.sha256()
    for base, dirs, files in sorted(os.walk(os.path.join(c.root, "etc"))):
        dirs.sort()
        for name in sorted(files):
            with open(os.path.join(base, name), "rb") as fh:
                digest.update(name.encode() + fh.read())
    return digest.hexdigest()


def refused(proc, code, line):
    """One error line (Grid Engine's "Exiting." may follow it), nothing on stdout."""
    lines = proc.stderr.splitlines()
    assert proc.returncode == code, proc.stderr
    assert lines[0] == line
    assert lines[1:] in ([], ["Exiting."])
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("args, code, line", [
    (["-tc", "-1"], 7, "qsub: invalid task concurrency number -1. Must be an integer greater or equal to 0."),
    (["-N", "a/b"], 2, "qsub: argument to -N option must not contain /"),
    (["-N", ""], 2, "qsub: empty string argument to -N option invalid"),
    (["-N", "1job"], 2, 'qsub: denied: "1job" is not a valid object name (cannot start with a digit)'),
    (["-N", "a\nb"], 7, "qsub: Return not allowed in objectname"),
    (["-N", "bad\udcffname"], 7, "qsub: Non-graphic character (hex ff) not allowed in objectname"),
    (["-N", "caf\u00e9"], 7, "qsub: Non-graphic character (hex c3) not allowed in objectname"),
    (["-c", "bogus"], 2, "qsub: -c specifier invalid"),
    (["-c", "0"], 2, "qsub: -c argument invalid"),
    (["-js", "-5"], 2, "qsub: invalid jobshare, must be an unsigned integer"),
    (["-ar", "x"], 2, "qsub: invalid advance reservation id, must be an unsigned integer"),
    (["-pe", "smp", "1-0"], 1, 'Unable to run job: "job" rejected: pe range must be greater than zero'),
    (["-pe", "smp", "a-2"], 7, 'qsub: Numerical value invalid: the initial portion of string "a-2" '
                               "contains no decimal number"),
    (["-l", "h_vmem=1e999"], 1, 'Unable to run job: attribute "h_vmem" is not a memory value'),
    (["-l", "h_rt=99999999999999999999999"], 1,
     'Unable to run job: attribute "h_rt" is not a time value: "99999999999999999999999" is out of '
     "range (at most 4294967295 seconds)"),
    # (a time with colons has exactly three fields, h:m:s, as Grid Engine reads it)
    (["-l", "h_rt=1:30"], 1, 'Unable to run job: attribute "h_rt" is not a time value'),
    (["-l", "h_rt=0:05"], 1, 'Unable to run job: attribute "h_rt" is not a time value'),
    (["-l", "s_rt=1:2:3:4"], 1, 'Unable to run job: attribute "s_rt" is not a time value'),
    (["-l", "h_cpu=08"], 1, 'Unable to run job: attribute "h_cpu" is not a time value'),
    (["-l", "nosuchres=1"], 1, 'Unable to run job: unknown resource "nosuchres"'),
    (["-w", "e", "-l", "nosuchres=1"], 1, 'Unable to run job: unknown resource "nosuchres"'),
    (["-soft", "-l", "nosuchres=1"], 1, 'Unable to run job: unknown resource "nosuchres"'),
    (["-l", "np_load_avg=1"], 1, 'Unable to run job: resource "np_load_avg" configured as non requestable'),
    (["-l", ""], 2, 'qsub: Wrong resource list format "" specified to -l option'),
    (["-l", "h_rt="], 2, 'qsub: Wrong resource list format "h_rt=" specified to -l option'),
    (["-hold_jid", ""], 2, 'qsub: Wrong jid_hold list format "" specified to -hold_jid option'),
    (["-hold_jid_ad", ","], 2, 'qsub: Wrong jid_hold_ad list format "," specified to -hold_jid_ad option'),
    (["-q", ""], 2, 'qsub: Wrong queue list format "" specified to -q option'),
    (["-M", ""], 2, 'qsub: Wrong mail list format "" specified to -M option'),
    (["-m", "q"], 2, 'qsub: Wrong mail options list format "q" specified to -m option'),
    (["-o", ""], 2, 'qsub: Wrong stdout path list format "" specified to -o option'),
    (["-e", "a,,b"], 2, 'qsub: Wrong path list format "a,,b" specified to -e option'),
    (["-S", ""], 2, 'qsub: Wrong shell list format "" specified to -S option'),
    (["-v", ""], 2, 'qsub: Wrong variable list format -v "" or environment variable not set'),
    (["-ac", ""], 2, 'qsub: Wrong context list format -ac ""'),
    (["-dc", "a=1"], 2, 'qsub: Wrong context list format -dc "a=1"'),
    (["-P", ""], 2, "qsub: -P option must have argument"),
    (["-A", ""], 2, "qsub: -A option must have argument"),
    (["-wd", ""], 2, "qsub: -wd option must have argument"),
    (["-a", "999912312359"], 2, 'qsub: ERROR! Wrong date/time format "999912312359" specified to -a option'),
    (["-dl", "999912312359"], 2, 'qsub: ERROR! Wrong date/time format "999912312359" specified to -dl option'),
    (["-t", "1-3,5"], 7, "qsub: -t option only allows one range specification"),
    (["-p", "1_0"], 7, 'qsub: invalid priority "1_0".  Must be an integer from -1023 to 1024'),
    (["-w", "x"], 2, 'qsub: invalid option argument "-w x"'),
])
def test_qsub_refuses_bad_values(shared, workdir, args, code, line):
    before = spool_digest(shared)
    proc = shared.qsub(*args, "-b", "y", "true", cwd=workdir)
    refused(proc, code, line)
    assert not fuzzing.changed(before, spool_digest(shared))


@pytest.mark.parametrize("args, why", [
    (["-a", "13011200"], "Invalid month specification."),
    (["-a", "12312359.5"], "Invalid format of seconds field."),
    (["-a", "12312359.60"], "Invalid seconds specification."),
    (["-a", "12322359"], "Invalid day specification."),
    (["-a", "12312459"], "Invalid hour specification."),
    (["-a", "12312360"], "Invalid minute specification."),
    (["-a", "190001010000"], "Couldn't generate date from input. Perhaps a date before 1970 was specified."),
    (["-dl", "x"], "Invalid format of date/hour-minute field."),
])
def test_a_bad_date_says_why_first_as_grid_engines_parser_does(shared, workdir, args, why):
    before = spool_digest(shared)
    proc = shared.qsub(*args, "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f'\n{why}\nqsub: ERROR! Wrong date/time format "{args[1]}" specified to {args[0]} option\n'
    assert not fuzzing.changed(before, spool_digest(shared))


def test_a_two_digit_year_from_70_is_of_the_1900s(shared, workdir):
    """YYMMDDhhmm: 69 is 2069, 70 is 1970 (a moment past: the job may start at once)."""
    from qtools import jid_of
    for given, year in (("6912312359", "2069"), ("7001020000", "1970"), ("9912312359", "1999")):
        jid = jid_of(shared.qsub("-h", "-a", given, "-b", "y", "true", cwd=workdir, check=True))
        line = next(x for x in shared.run("qstat", "-j", str(jid)).stdout.splitlines()
                    if x.startswith("execution_time:"))
        assert line.endswith(year), line
        shared.run("qdel", str(jid), check=True)


def test_missing_arguments(shared, workdir):
    refused(shared.qsub("-pe", "smp", cwd=workdir), 2, "qsub: -pe option must have argument")
    refused(shared.qsub("-N", cwd=workdir), 2, "qsub: -N option must have argument")
    refused(shared.qsub("-@", cwd=workdir), 2, "qsub: -@ option must have file argument")


def test_an_option_file_with_a_nul_byte_is_refused_without_echoing_it(shared, workdir):
    """A NUL byte cannot reach qsub through its command line, but an option file can
    hold one: the file is not text, refused in one short line that does not echo it
    (exit 1), no traceback, nothing queued."""
    path = os.path.join(workdir, "opts")
    with open(path, "wb") as fh:
        fh.write(b"-N x a\x00b\n")
    before = spool_digest(shared)
    proc = shared.qsub("-@", path, cwd=workdir)
    refused(proc, 1, f"error reading {path}: not a text file (it holds a NUL byte)")
    assert not fuzzing.changed(before, spool_digest(shared))


def test_bad_values_in_directives_and_request_files(shared, workdir):
    before = spool_digest(shared)
    proc = shared.qsub(cwd=workdir, input="#!/bin/sh\n#$ -tc -3\ntrue\n")
    refused(proc, 7, "qsub: invalid task concurrency number -3. Must be an integer greater or equal to 0.")
    with open(os.path.join(workdir, ".sge_request"), "w") as fh:
        fh.write("-js -5\n")
    proc = shared.qsub("-b", "y", "true", cwd=workdir)
    refused(proc, 2, "qsub: invalid jobshare, must be an unsigned integer")
    os.unlink(os.path.join(workdir, ".sge_request"))
    with open(os.path.join(workdir, "self.opts"), "w") as fh:
        fh.write("-@ self.opts\n")
    proc = shared.qsub("-@", "self.opts", "-b", "y", "true", cwd=workdir)
    refused(proc, 2, "qsub: -@ option: more than 64 option files read")
    assert not fuzzing.changed(before, spool_digest(shared))


def test_qalter_and_qrsh_refuse_the_same_values(shared, workdir):
    jid = shared.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir).stdout.strip()
    refused(shared.run("qalter", "-tc", "-1", jid), 7,
            "qalter: invalid task concurrency number -1. Must be an integer greater or equal to 0.")
    refused(shared.run("qalter", "-N", "a/b", jid), 2, "qalter: argument to -N option must not contain /")
    refused(shared.run("qalter", "-h", "x", jid), 2, 'qalter: Unknown hold list "x" specified to -h option')
    refused(shared.run("qrsh", "-js", "-5", "true"), 2, "qrsh: invalid jobshare, must be an unsigned integer")
    shared.run("qdel", jid, check=True)


def test_task_ranges_a_job_does_not_have(shared, workdir):
    single = shared.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir).stdout.strip()
    array = shared.qsub("-terse", "-h", "-t", "1-5", "-b", "y", "true", cwd=workdir).stdout.split(".")[0]
    before = spool_digest(shared)
    # (answers of the qmaster: Grid Engine's qdel, qhold and qrls print them on stdout)
    for args, line in ((("qdel", f"{single}.5-2"), f'job "{single}" task id range "2-5:1" comprises no tasks'),
                       (("qdel", f"{array}.7"), f'job "{array}" task "7" does not exist'),
                       (("qdel", array, "-t", "6-9"), f'job "{array}" task id range "6-9:1" comprises no tasks')):
        proc = shared.run(*args)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, line + "\n", ""), args
    # (Grid Engine's qmaster passes over the tasks a qhold or qrls names that the job lacks)
    for args in (("qhold", f"{array}.7"), ("qrls", f"{single}.2")):
        proc = shared.run(*args)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), args
    proc = shared.run("qdel", "-u", "")
    assert (proc.returncode, proc.stderr.splitlines()[0]) == (1, "-u option must have a list usernames")
    assert not fuzzing.changed(before, spool_digest(shared))
    assert shared.task_states(int(single)).get(1) != "finished"
    proc = shared.run("qdel", f"{single}.1")
    assert (proc.returncode, proc.stdout) == (0, f"root has deleted job {single}\n")
    shared.run("qdel", array, check=True)


@pytest.mark.parametrize("command, line", [
    (["qstat", "-l", "h_rt=abc"], 'attribute "h_rt" is not a time value'),
    (["qstat", "-l", "nosuchres=1"], 'unknown resource "nosuchres"'),
    (["qhost", "-l", "mem_total=lots"], 'attribute "mem_total" is not a memory value'),
])
def test_qstat_and_qhost_refuse_unknown_resources_and_bad_values(shared, command, line):
    refused(shared.run(*command), 1, line)


def test_qstat_and_qhost_show_nothing_for_a_resource_name_no_complex_has(shared):
    """As Grid Engine's: the names of -F only filter the values shown, and one that no
    complex has is no error (-l refuses it: above)."""
    for command in (["qstat", "-F", "bogus"], ["qhost", "-F", "bogus"]):
        proc = shared.run(*command)
        assert (proc.returncode, proc.stderr) == (0, ""), command
        assert "bogus" not in proc.stdout and not any(
            line.lstrip().startswith(("hl:", "hf:", "qf:", "gf:")) for line in proc.stdout.splitlines())
    shown = shared.run("qhost", "-F", "bogus,num_proc").stdout.splitlines()
    assert [line for line in shown if "num_proc" in line] == ["    Host Resource(s):      hl:num_proc=" +
                                                               shown[-1].partition("=")[2]]


def test_qstat_refuses_empty_lists_with_its_usage(shared):
    proc = shared.run("qstat", "-u", "")
    assert proc.returncode == 1 and proc.stderr.splitlines()[-1] == 'invalid option argument "-u "'
    proc = shared.run("qstat", "-l", "a=")
    assert proc.stderr.splitlines()[-1] == 'Wrong resource list format "a=" specified to -l option'


@pytest.mark.parametrize("args, line", [
    (["-mattr", "queue", "load_thresholds", "np_load_avg=abc", "all.q"],
     'error: attribute "np_load_avg" is not a double value'),
    (["-mattr", "queue", "complex_values", "slots=-2", "all.q"],
     'error: attribute "slots" is consumable but has a negative value'),
    (["-mattr", "exechost", "complex_values", "h_vmem=abc", "testhost"],
     'error: attribute "h_vmem" is not a memory value'),
    (["-rattr", "queue", "slots", "1", "all.q@nonexistent"], '"nonexistent" is not an execution host'),
    (["-am", ""], 'error: empty option argument given to "-am"'),
    (["-am", ","], 'error: no name given in ","'),
    (["-au", "x", ""], 'error: empty option argument given to "-au"'),
])
def test_qconf_refuses_bad_values(shared, args, line):
    before = etc_digest(shared)
    refused(shared.run("qconf", *args), 1, line)
    assert etc_digest(shared) == before


def test_qconf_au_creates_a_missing_list_as_grid_engine_does(shared):
    # Grid Engine's qconf prints every answer of -au on stderr
    proc = shared.run("qconf", "-au", "x", "newlist")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", 'added "x" to access list "newlist"\n')
    refused(shared.run("qconf", "-au", "x", "newlist"), 1, '"x" is already in access list "newlist"')
    shared.run("qconf", "-dul", "newlist", check=True)


@pytest.mark.parametrize("argv, line", [
    (["qconf"], "error: no option argument"),
    (["qmod"], "error: no option argument"),
    (["qmod", "all.q"], 'error: invalid option argument "all.q"'),
])
def test_commands_without_an_action_say_so_after_the_usage(shared, argv, line):
    proc = shared.run(*argv)
    assert proc.returncode == 1
    assert "usage: " in proc.stderr and proc.stderr.splitlines()[-1] == line


@pytest.mark.parametrize("args, code, line", [
    (["-binding", "bogus"], 2, 'qsub: -binding option contains errors: "bogus" is not linear[:n[:socket,core]], '
                               "striding:n:step[:socket,core] or explicit:socket,core[:...]"),
    (["-l", "slots=-1"], 1, 'Unable to run job: attribute "slots" is consumable but has a negative value'),
    (["-wd", "a\0b"], 2, "qsub: -wd option argument must not contain a NUL byte"),
])
def test_qsub_refuses_more_bad_values(shared, workdir, args, code, line):
    if any("\0" in a for a in args):          # no program argument can hold a NUL: use #$ lines
        proc = shared.qsub(cwd=workdir, input="#$ " + " ".join(args) + "\ntrue\n")
    else:
        proc = shared.qsub(*args, "-b", "y", "true", cwd=workdir)
    refused(proc, code, line)


def test_binding_with_a_type_word(shared, workdir):
    jid = shared.qsub("-terse", "-h", "-binding", "set", "linear:1", "-b", "y", "true", cwd=workdir).stdout
    assert "binding:                    set linear:1" in shared.run("qstat", "-j", jid.strip()).stdout
    shared.run("qdel", jid.strip(), check=True)


@pytest.mark.parametrize("attr, value, line", [
    ("shell", "bash", 'error: denied: the path given for "shell" must start with a "/"'),
    ("processors", "many", 'error: invalid value "many" for attribute "processors": expected UNDEFINED '
                           "or a list of numbers and ranges"),
    ("seq_no", "1_0", 'error: invalid value "1_0" for attribute "seq_no": expected a non-negative integer'),
    ("prolog", "/bin/true\nslots 99", 'error: invalid value "/bin/true\\nslots 99" for attribute "prolog": '
                                      "expected a string on one line"),
])
def test_queue_fields_grid_engine_checks(shared, attr, value, line):
    before = etc_digest(shared)
    refused(shared.run("qconf", "-mattr", "queue", attr, value, "all.q"), 1, line)
    assert etc_digest(shared) == before


def test_a_name_that_is_not_utf8_is_written_back_as_it_came(idle_cell, workdir):
    # the daemon is not started: this is about what the commands print, whatever the locale
    script = os.path.join(os.fsencode(workdir), b"\xfe.sh")
    with open(script, "wb") as fh:
        fh.write(b"true\n")
    env = dict(idle_cell.env, PYTHONIOENCODING="utf-8:strict")
    proc = subprocess.run(["qsub", "-h", script], env=env, cwd=workdir, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith(b' ("\xfe.sh") has been submitted\n')
    proc = subprocess.run(["qstat"], env=env, cwd=workdir, capture_output=True)
    assert (proc.returncode, proc.stderr) == (0, b"")

