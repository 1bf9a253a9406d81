"""qstat -F against a running daemon: consumables as the scheduler counts them.

The amount left counts a consumable's default for jobs that did not ask for it,
and a name defined on several layers (global, host, queue) shows once, with the
most restrictive value and its layer letter.
"""

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
    assert "   hc:memc=4.000G" in cell.run("qhost", "-F", "memc").stdout.splitlines()


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
