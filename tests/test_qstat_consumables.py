"""qstat -F against a running daemon: consumables as the scheduler counts them.

The amount left counts a consumable's default for jobs that did not ask for it,
and a name defined on several layers (global, host, queue) shows once, with the
most restrictive value and its layer letter.
"""

import os
import xml.etree.ElementTree as ET

from conftest import wait_for
from qtools import add_complex, jid_of, wait_state


def qstat_F(cell, *args):
    proc = cell.run("qstat", "-F", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def sleeper(cell, workdir, *extra):
    jid = jid_of(cell.qsub("-b", "y", *extra, "sleep", "60", cwd=workdir))
    wait_state(cell, jid, "r")
    return jid


def test_the_default_of_a_consumable_counts_for_jobs_that_did_not_ask(cell, workdir):
    add_complex(cell, "memc                mc         MEMORY    <=    YES         YES        1G       0")
    cell.run("qconf", "-mattr", "exechost", "complex_values", "memc=8G", "testhost", check=True)
    sleeper(cell, workdir, "-l", "memc=3G")
    sleeper(cell, workdir)                                   # holds the default 1G
    assert wait_for(lambda: "\thc:memc=4.000G" in qstat_F(cell, "memc")), qstat_F(cell, "memc")
    assert "    Host Resource(s):      hc:memc=4.000G" in cell.run("qhost", "-F", "memc").stdout.splitlines()


def test_the_most_restrictive_layer_shows(cell, workdir):
    add_complex(cell, "lic                 lic        INT       <=    YES         YES        0        0")
    cell.run("qconf", "-mattr", "exechost", "complex_values", "lic=1", "global", check=True)
    cell.run("qconf", "-mattr", "exechost", "complex_values", "lic=2", "testhost", check=True)
    assert wait_for(lambda: "\tgc:lic=1" in qstat_F(cell, "lic")), qstat_F(cell, "lic")
    assert [line for line in qstat_F(cell, "lic") if "lic=" in line] == ["\tgc:lic=1"]
    everything = qstat_F(cell)
    assert everything.index("\tgc:lic=1") < everything.index("\thl:arch=lx-amd64")    # global first
    cell.run("qconf", "-mattr", "exechost", "complex_values", "lic=5", "global", check=True)
    cell.run("qconf", "-mattr", "queue", "complex_values", "lic=1", "all.q", check=True)
    sleeper(cell, workdir, "-l", "lic=1")
    assert wait_for(lambda: "\tqc:lic=0" in qstat_F(cell, "lic")), qstat_F(cell, "lic")
    assert [line for line in qstat_F(cell, "lic") if "lic=" in line] == ["\tqc:lic=0"]
    root = ET.fromstring(cell.run("qstat", "-F", "lic", "-xml").stdout)
    found = [(r.get("name"), r.get("type"), r.text) for r in root.iter("resource")]
    assert found == [("lic", "qc", "0")]


def test_a_time_consumable_shows_as_grid_engine_prints_times(cell, workdir):
    """A TIME consumable left, in qstat -F, qhost -F and qquota, is hours, minutes and
    seconds (days first when there are any), as Grid Engine prints times; a queue's
    h_rt limit too."""
    add_complex(cell, "tlim                tl         TIME      <=    YES         YES        0        0")
    cell.run("qconf", "-mattr", "exechost", "complex_values", "tlim=26:00:30", "testhost", check=True)
    cell.run("qconf", "-mattr", "queue", "h_rt", "1:30:00", "all.q", check=True)
    rule = os.path.join(workdir, "rqs")
    with open(rule, "w") as fh:
        fh.write("{\n name t1\n enabled TRUE\n limit users {*} to tlim=0:30:00\n}\n")
    cell.run("qconf", "-Arqs", rule, check=True)
    sleeper(cell, workdir, "-l", "tlim=0:10:00")
    assert wait_for(lambda: "\thc:tlim=1:01:50:30" in qstat_F(cell, "tlim")), qstat_F(cell, "tlim")
    assert "\tqf:h_rt=01:30:00" in qstat_F(cell, "h_rt")
    assert "    Host Resource(s):      hc:tlim=1:01:50:30" in cell.run("qhost", "-F", "tlim").stdout.splitlines()
    root = ET.fromstring(cell.run("qstat", "-F", "tlim", "-xml").stdout)
    assert [r.text for r in root.iter("resource") if r.get("name") == "tlim"] == ["1:01:50:30"]
    quota = cell.run("qquota").stdout.splitlines()
    assert quota[2].split()[:2] == ["t1/1", "tlim=00:10:00/00:30:"]    # (the column is 20 wide)
