"""condor_history's options as HTCondor's: -attributes, -since, -completedsince,
-forwards and -backwards, -match and -limit, -scanlimit, -af and -format, -file and
-userlog, the options of a remote schedd, and the words of its errors."""

import json
import os
import subprocess

import pytest

from conftest import BIN

USAGE_HEAD = "Usage: condor_history [options]\n"


def _ad(cluster, proc, done):
    return (f'ClusterId = {cluster}\nProcId = {proc}\nOwner = "alice"\nJobStatus = 4\nQDate = 1\n'
            f'CompletionDate = {done}\nCmd = "/bin/true"\n'
            f'*** ClusterId={cluster} ProcId={proc} Owner="alice" CompletionDate={done}\n')


@pytest.fixture
def hist(tmp_path):
    """A history file of five jobs (oldest first) and a command that reads it."""
    path = tmp_path / "history"
    path.write_text("".join(_ad(c, p, 100 + 10 * c + p) for c, p in ((1, 0), (2, 0), (2, 1), (3, 0), (4, 0))))
    env = dict(os.environ, GRIDTOOLS_ROOT=str(tmp_path))

    def run(*args, file=True):
        argv = [os.path.join(BIN, "condor_history")] + (["-file", str(path)] if file else []) + list(args)
        return subprocess.run(argv, env=env, capture_output=True, text=True)
    return run


def ids(proc):
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_attributes_select_what_long_json_and_xml_show(hist):
    assert hist("-l", "-match", "1", "-attributes", "ClusterId,owner").stdout == 'ClusterId = 4\nOwner = "alice"\n\n'
    assert json.loads(hist("-json", "-limit", "2", "-attr", "ProcId").stdout) == [{"ProcId": 0}, {"ProcId": 0}]
    assert hist("-xml", "-match", "1", "-attributes", "CompletionDate").stdout.count('<a n="') == 1
    proc = hist("-l", "-attributes")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "", "Error: Argument -attributes must be followed by a list of attributes\n")


def test_since_and_completedsince_stop_the_scan_the_last_one_counts(hist):
    af = ("-af:j", "Owner")
    assert ids(hist(*af, "-since", "2.1"))[::2] == ["4.0", "3.0"]
    assert ids(hist(*af, "-completedsince", "130"))[::2] == ["4.0"]                # on or before
    assert ids(hist(*af, "-completedsince", "100 + 20 + 9"))[::2] == ["4.0", "3.0"]   # an expression
    assert ids(hist(*af, "-completedsince", "130", "-since", "2"))[::2] == ["4.0", "3.0"]
    proc = hist("-since", "3.0", "-forwards")
    assert (proc.returncode, proc.stderr) == (1, "Error: Argument -forwards cannot be combined with -since.\n")
    proc = hist("-forw", "-since", "3.0")
    assert (proc.returncode, proc.stderr) == (1, "Error: Argument -forwards cannot be combined with -since.\n")
    proc = hist("-since", "(x")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "", "Error: invalid -since constraint: (x\n\tconstraint must be a job-id, or expression.\n")


def test_order_match_and_scanlimit(hist):
    af = ("-af:j", "Owner")
    assert ids(hist(*af, "-nobackwards", "-match", "2"))[::2] == ["1.0", "2.0"]
    assert ids(hist(*af, "-forwards", "-backwards", "-limit", "1"))[::2] == ["4.0"]
    assert ids(hist(*af, "-match", "2junk"))[::2] == ["4.0", "3.0"]          # read as atoi
    assert ids(hist(*af, "-match", "none"))[::2] == ["4.0", "3.0", "2.1", "2.0", "1.0"]
    assert ids(hist(*af, "-scan", "3"))[::2] == ["4.0", "3.0", "2.1"]
    proc = hist("-match")
    assert (proc.returncode, proc.stderr) == (1, "Error: Argument -match requires a number value as a parameter.\n")


def test_format_and_autoformat(hist):
    assert hist("-f", "%d\\n", "ClusterId", "-match", "2").stdout == "4\n3\n"
    assert hist("-autof", "ClusterId", "-match", "1").stdout == "4\n"
    proc = hist("-af")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "", "Error: Argument -af requires at least one attribute parameter\n\t\te.g. condor_history -af ClusterId\n")
    proc = hist("-format", "%d")
    assert (proc.returncode, proc.stderr) == (
        1, "Error: Argument -format requires a spec and classad attribute name as parameters.\n"
           "\t\te.g. condor_history -format '%d' ClusterId\n")


def test_remote_schedd_options_are_accepted_and_ignored(hist):
    assert ids(hist("-local", "-schedd", "-af", "ClusterId", "-match", "1")) == ["4"]
    proc = hist("-name", "schedd.example.org", "-local")
    assert (proc.returncode, proc.stderr) == (1, "Error: Arguments -local and -name cannot be used together\n")
    proc = hist("-name")
    assert (proc.returncode, proc.stderr) == (
        1, "Error: Argument -name requires name of a remote schedd\n\t\te.g. condor_history -name submit.example.com \n")


def test_unknown_arguments_and_a_missing_file_print_the_usage(hist):
    proc = hist("-bogus")
    assert proc.returncode == 1 and proc.stderr == "Error: Unknown argument -bogus\n"
    assert proc.stdout.startswith(USAGE_HEAD)
    for argv in (["-userlog"], ["-file"], ["-userlog", "log"]):
        proc = hist(*argv, file=argv[0] != "-file")
        assert (proc.returncode, proc.stderr) == (1, "") and proc.stdout.startswith(USAGE_HEAD)
    assert hist("-xm").returncode == 1 and hist("-sin", "1").returncode == 1


def test_wide_and_the_width_of_the_table(hist, tmp_path):
    full = hist().stdout.splitlines()
    assert full[0] == " ID          OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD"
    assert full[1].endswith(" C  " + full[1].split(" C  ")[1]) and full[1].endswith(" true")
    assert hist("-wide").stdout.splitlines() == full == hist("-wide:200").stdout.splitlines()
    assert hist("-wide:30").stdout.splitlines() == [line[:30] for line in full]
    short = tmp_path / "short"
    short.write_text('ClusterId = 12\nProcId = 3\nOwner = "alice"\nJobStatus = 4\nQDate = 0\nCompletionDate = 0\n'
                     'JobPrio = 0\nImageSize = 1\nRemoteWallClockTime = 3725.0\nCmd = "/bin/sleep"\nArgs = "100 200"\n'
                     '*** ClusterId=12 ProcId=3\n' + _ad(1, 0, 100))
    lines = hist("-file", str(short), "-wide:80", file=False).stdout.split("\n")
    from gridtools.cli.condor.qviews import format_date
    assert lines == [" ID      OWNER            SUBMITTED     RUN_TIME ST   COMPLETED CMD            ",
                     " --- ???? --- ",
                     f"  12.3   alice          {format_date(0)}   0+01:02:05 C  {format_date(0)} /bin/sleep 100 ", ""]


def test_jsonl_prints_an_ad_per_line(hist):
    out = hist("-jsonl", "-match", "2", "-attributes", "ClusterId,Owner,Cmd").stdout
    assert out == '{"ClusterId": 4,"Cmd": "/bin/true","Owner": "alice"}\n' \
                  '{"ClusterId": 3,"Cmd": "/bin/true","Owner": "alice"}\n'
    lines = hist("-jsonl").stdout.splitlines()
    assert [json.loads(line)["ClusterId"] for line in lines] == [4, 3, 2, 2, 1]
    assert json.loads(lines[0]) == json.loads(hist("-json", "-match", "1").stdout)[0]
