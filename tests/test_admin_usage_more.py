"""qhost -ncb without the topology columns, condor_reconfig for a host that is no
master of the pool, condor_qedit's usage, and what the man pages of qhost and
condor_config_val say against what the commands print."""

import os
import re
import subprocess

from conftest import REPO, cell_fixture
from test_qhost import render
from test_qstat_format import reference

cell = cell_fixture(scope="module")

#: where Grid Engine's HEAD_FORMAT has " NSOC NCOR NTHR" (and HEAD_FORMAT_OLD nothing)
TOPOLOGY = slice(41, 56)


def without_topology(text):
    return "".join(line[:TOPOLOGY.start] + line[TOPOLOGY.stop:] + "\n" for line in text.splitlines())


def man_text(name):
    page = os.path.join(REPO, "man", "man1", name)
    out = subprocess.run(["man", "-l", page], capture_output=True, text=True,
                         env=dict(os.environ, MANWIDTH="200", MAN_KEEP_FORMATTING="0")).stdout
    return re.sub(".\b", "", out)


def test_qhost_ncb_has_grid_engines_old_header():
    got = render(["-ncb"])
    assert got == without_topology(reference("qhost.txt"))
    assert got.splitlines()[:2] == [
        "HOSTNAME                ARCH         NCPU  LOAD  MEMTOT  MEMUSE  SWAPTO  SWAPUS", "-" * 79]
    # the job and queue lines below a host do not change
    assert render(["-ncb", "-j"]).splitlines()[4:] == render(["-j"]).splitlines()[4:]


def test_qhost_xml_ncb_leaves_the_topology_values_out():
    full = reference("qhost-xml.txt")
    dropped = [line for line in full.splitlines()
               if not re.search(r"name='m_(socket|core|thread)'", line)]
    assert render(["-ncb", "-xml"]) == "\n".join(dropped) + "\n"
    assert render(["-xml"]) == full


def test_qhost_ncb_live(cell):
    proc = cell.run("qhost", "-ncb")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "HOSTNAME                ARCH         NCPU  LOAD  MEMTOT  MEMUSE  SWAPTO  SWAPUS"
    assert lines[1] == "-" * 79
    assert [line.split()[0] for line in lines[2:]] == ["global", cell.host]
    assert len(lines[3].split()) == 8


def test_qhost_options_beyond_the_usage_are_marked_as_additions(cell):
    usage = cell.run("qhost", "-help", check=True).stdout
    assert usage == reference("qhost-help.txt")
    page = man_text("qhost.1")
    synopsis = page.split("DESCRIPTION")[0]
    extra = {o for o in re.findall(r"\[(-[a-z]+)", synopsis) if f"[{o}" not in usage} | \
        {o for o in re.findall(r"\| ?(-[a-z]+)", synopsis) if f"[{o}" not in usage}
    assert extra == {"-st", "-json"}
    notes = page.split("NOTES", 1)[1]
    assert "-st" in notes and "-json" in notes and "additions" in notes


def test_reconfig_of_an_unknown_host_fails_as_htcondors(cell):
    proc = cell.run("condor_reconfig", "nosuchhost")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == ("Can't find address for master nosuchhost\n"
                           "Can't find address for nosuchhost\n"
                           "Perhaps you need to query another pool.\n")
    both = cell.run("condor_reconfig", cell.host, "nosuchhost")
    assert both.returncode == 1
    assert both.stdout == f'Sent "Reconfig" command to master {cell.host}\n'
    assert both.stderr == proc.stderr


def test_reconfig_of_known_hosts_still_works(cell):
    for args in ([cell.host], [cell.host.upper()], ["-all"], []):
        proc = cell.run("condor_reconfig", *args)
        assert (proc.returncode, proc.stderr) == (0, ""), args
        assert proc.stdout.startswith('Sent "Reconfig" command to ')


QEDIT_OPTIONS = {"-help", "-debug", "-dry-run", "-name", "-pool", "-forward", "-jobids", "-owner",
                 "-constraint"}


def test_qedit_usage_is_htcondors_and_the_man_page_agrees(cell):
    proc = cell.run("condor_qedit", "-help")
    assert (proc.returncode, proc.stderr) == (0, "")
    usage = proc.stdout
    assert usage.startswith("Usage: condor_qedit [help-opts] [general-opts] <restriction-list> <edit-list>\n")
    assert "\t-help\t\t   Display this screen\n" in usage
    assert "\t-constraint <expr> Edit jobs that match <expr>\n" in usage
    assert set(re.findall(r"^\t(-[a-z-]+)", usage, re.M)) == QEDIT_OPTIONS
    options = man_text("condor_qedit.1").split("\nOPTIONS\n", 1)[1].split("\nSEE ALSO\n")[0]
    for option in QEDIT_OPTIONS:
        assert re.search(rf"^ {{7}}(\S+, )*{re.escape(option)}\b", options, re.M), option
    bad = cell.run("condor_qedit", "-bogus", "1", "A", "1")
    assert (bad.returncode, bad.stdout) == (1, "")
    assert bad.stderr == "condor_qedit: -bogus is not a valid option\n" + usage


def test_config_val_man_page_quotes_the_message_it_prints(cell):
    proc = cell.run("condor_config_val", "-name", "otherhost", "MASTER")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0] == "Can't find address for this master"
    assert "Can't find address for this master" in " ".join(man_text("condor_config_val.1").split())
