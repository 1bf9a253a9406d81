"""condor_history's JSON and XML framing, -name/-pool of another schedd, -print-format,
-startd and the heading of a -userlog it cannot open; condor_config_val's $F macros,
$ENV of an unset variable, $SUBSTR of an undefined name, $RANDOM_INTEGER's errors, the
template -v names, -subsystem, -local-name and -writeconfig: each as HTCondor 24's."""

import os
import socket
import subprocess

import pytest

from condortools import ConfigFolder
from conftest import BIN

from test_condor_config_val import run

HEADING = " ID          OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD\n"


def _ad(cluster, proc, owner="alice"):
    return (f'ClusterId = {cluster}\nProcId = {proc}\nOwner = "{owner}"\nJobStatus = 4\nQDate = 1\n'
            f'CompletionDate = 200\nCmd = "/bin/true"\n'
            f'*** ClusterId={cluster} ProcId={proc} Owner="{owner}" CompletionDate=200\n')


@pytest.fixture
def hist(tmp_path):
    """A history file of three jobs and a command that reads it (``file=False``: without
    -file first)."""
    path = tmp_path / "history"
    path.write_text(_ad(1, 0) + _ad(2, 0, "bob") + _ad(3, 0))
    env = dict(os.environ, GRIDTOOLS_ROOT=str(tmp_path))
    env.pop("CONDOR_CONFIG", None)

    def go(*args, file=True):
        argv = [os.path.join(BIN, "condor_history")] + (["-file", str(path)] if file else []) + list(args)
        return subprocess.run(argv, env=env, capture_output=True, text=True, cwd=str(tmp_path), timeout=60)
    return go


# ---------------------------------------------------------------- condor_history

def test_json_with_no_match_prints_the_brackets(hist):
    proc = hist("99", "-json")
    assert (proc.returncode, proc.stdout) == (0, "[\n]\n")


def test_xml_has_an_empty_line_after_the_prolog_each_ad_and_the_end(hist):
    proc = hist("1", "2", "-xml", "-attributes", "Owner")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ('<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n\n'
                           '<c>\n    <a n="Owner"><s>bob</s></a>\n</c>\n\n'
                           '<c>\n    <a n="Owner"><s>alice</s></a>\n</c>\n\n</classads>\n\n')
    empty = hist("99", "-xml")
    assert empty.stdout == ('<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n\n'
                            '</classads>\n\n')


def test_another_schedd_or_pool_cannot_be_located(cell, hist, tmp_path):
    proc = cell.run("condor_history", "-name", "nosuchschedd")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, HEADING, "Unable to locate remote schedd (name=nosuchschedd, pool=).\n")
    proc = cell.run("condor_history", "-pool", "nosuchpool", "-json")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "[\n", "Unable to locate remote schedd (name=, pool=nosuchpool).\n")
    own = hist("-name", socket.gethostname(), "-af", "ClusterId")
    assert (own.returncode, own.stdout) == (0, "3\n2\n1\n"), own.stderr
    # -file after -name reads the file, as HTCondor's does
    later = hist("-name", "nosuchschedd", "-file", str(tmp_path / "history"), "-af", "ClusterId", file=False)
    assert (later.returncode, later.stdout) == (0, "3\n2\n1\n"), later.stderr


def test_print_format_file(hist, tmp_path):
    pf = tmp_path / "h.cpf"
    pf.write_text('SELECT\n  ClusterId AS CLUSTER WIDTH 8\n  Owner AS OWNER WIDTH -6\nWHERE Owner == "alice"\n')
    proc = hist("-print-format", str(pf))
    assert (proc.returncode, proc.stdout) == (0, "CLUSTER  OWNER \n       3 alice \n       1 alice \n"), proc.stderr
    missing = hist("-print-format", str(tmp_path / "none.cpf"))
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr == (f"Can't open select file: {tmp_path}/none.cpf\n"
                              f"Error: cannot execute print-format file {tmp_path}/none.cpf\n")
    bare = hist("-print-format")
    assert (bare.returncode, bare.stderr) == (1, "Error: Argument -print-format requires a filename argument\n")


def test_startd_history_needs_startd_history(cell, hist):
    proc = cell.run("condor_history", "-startd")
    assert (proc.returncode, proc.stdout) == (1, HEADING)
    assert proc.stderr == (
        "Error: No passed search file and configuration key STARTD_HISTORY is unset.\n\n"
        "Extra Info: The variable STARTD_HISTORY is not defined in your config file. If you want Condor to "
        "keep a history of information, you must define STARTD_HISTORY in your config file\n")
    both = cell.run("condor_history", "-startd", "-epochs")
    assert (both.returncode, both.stderr) == (1, "Error: -startd can not be used in association with -epochs.\n")
    # -startd with -file reads that file
    assert hist("-startd", "-af", "ClusterId").stdout == "3\n2\n1\n"


def test_startd_history_reads_the_file_startd_history_names(cell, tmp_path):
    (tmp_path / "startd_history").write_text(_ad(7, 1))
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(f"STARTD_HISTORY = {tmp_path}/startd_history\n")
    proc = cell.run("condor_history", "-startd", "-af", "ClusterId", "ProcId")
    assert (proc.returncode, proc.stdout) == (0, "7 1\n"), proc.stderr


def test_userlog_that_cannot_be_opened_prints_the_heading(cell):
    proc = cell.run("condor_history", "-userlog", "/nonexist/log")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, HEADING, "Error: Can't open userlog /nonexist/log\n")


# ---------------------------------------------------------------- condor_config_val

@pytest.fixture
def conf(tmp_path):
    """A cell folder whose etc/condor_config the test writes with conf.write()."""
    return ConfigFolder(tmp_path)


def test_filename_macros_expand(conf):
    conf.write("PATHV = /a/b/c.txt\nFN = $Fn(PATHV)\nFD = $Fd(PATHV)\nFX = $Fx(PATHV)\nFP = $Fp(PATHV)\n"
               "FNX = $Fnx(/x/y.tar.gz)\nFQ = $Fqn(PATHV)\n")
    result = run(conf, "FN", "FD", "FX", "FP", "FNX", "FQ")
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'c\nb/\n.txt\n/a/b/\ny.tar.gz\n"c"\n'


def test_env_substr_and_random_integer_as_htcondor(conf):
    conf.write("E = $ENV(NOPE_ENV_ZZ_77)\nED = $ENV(NOPE_ENV_ZZ_77:dflt)\nSX = $SUBSTR(ABCDEF,2)\n"
               "SV = ABCDEF\nSY = $SUBSTR(SV,2)\nRI = $RANDOM_INTEGER(20,10)\nRM = $RANDOM_INTEGER(x,10)\n"
               "RS = $RANDOM_INTEGER(1,10,0)\n")
    result = run(conf, "E", "ED", "SX", "SY")
    assert (result.returncode, result.stdout) == (0, "UNDEFINED\ndflt\n\nCDEF\n"), result.stderr
    for name, said in (("RI", "min > max!"), ("RM", "invalid min!"), ("RS", "invalid step!")):
        bad = run(conf, name)
        assert bad.returncode == 1
        assert bad.stderr == f"condor_config_val: ERROR: $RANDOM_INTEGER() config macro: {said}\n"


def test_verbose_names_the_template_of_a_use_statement(conf):
    path = conf.write("A = 1\nuse ROLE : Personal\n")
    result = run(conf, "-v", "DAEMON_LIST")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (f"DAEMON_LIST = MASTER COLLECTOR NEGOTIATOR STARTD SCHEDD\n"
                             f" # at: {path}, line 2, use ROLE:Personal+2\n"
                             f" # raw: DAEMON_LIST = MASTER COLLECTOR NEGOTIATOR STARTD SCHEDD\n\n")


def test_subsystem_and_local_name(conf):
    conf.write("MASTER.SUBV = master_only\nSUBV = generic\nvm.LNV = localname\nLNV = plain\n"
               "REF = $(SUBV)\nTOOL.TV = tool_only\nTV = plain\n")
    assert run(conf, "-subsystem", "master", "SUBV", "REF", "SUBSYSTEM").stdout == "master_only\nmaster_only\nmaster\n"
    assert run(conf, "-local-name", "vm", "LNV", "LOCALNAME").stdout == "localname\nvm\n"
    assert run(conf, "SUBV", "LNV", "TV").stdout == "generic\nplain\ntool_only\n"
    missing = run(conf, "-subsystem")
    assert (missing.returncode, missing.stderr) == (1, "-subsystem requires an argument\n")


def test_writeconfig_writes_what_the_files_set(conf, tmp_path):
    path = conf.write("B = 2\nA = 1\nMINUTE = 60\nH @=end\nx\ny\n@end\n")
    out = tmp_path / "written.conf"
    result = run(conf, "-writeconfig", str(out))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert out.read_text() == (f"\n#\n# from {path}\n#\nB = 2\nA = 1\n#MINUTE = 60\nH @=end\n   x\n   y\n@end\n")
    both = run(conf, "-writeconfig", "-", "A")
    assert both.stdout.endswith("@end\n1\n")
    bad = run(conf, "-writeconfig", str(tmp_path / "no" / "such.conf"))
    assert (bad.returncode, bad.stderr) == (2, f"Failed to create configuration file {tmp_path}/no/such.conf.\n")
