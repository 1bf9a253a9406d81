"""Exclusive scheduling with a running daemon: an EXCL complex offered by the host
keeps an exclusive job off a busy host and every other job off the host it runs on."""

from conftest import wait_for
from qtools import add_complex, jid_of, reasons, state_of, wait_state

ROW = "exclusive           excl       BOOL      EXCL  YES         YES        0        1000"


def test_an_exclusive_job_waits_for_an_empty_host_then_runs_alone(cell):
    add_complex(cell, ROW)
    cell.run("qconf", "-mattr", "exechost", "complex_values", "exclusive=true", "testhost", check=True)
    ordinary = jid_of(cell.qsub("-b", "y", "sleep", "60"))
    wait_state(cell, ordinary, "r")
    alone = jid_of(cell.qsub("-l", "excl=true", "-b", "y", "sleep", "60"))
    wait_for_reason(cell, alone, 'cannot run at host "testhost" because it offers only hc:exclusive=0.000000')
    assert state_of(cell, alone) == "qw"
    cell.run("qdel", str(ordinary), check=True)
    wait_state(cell, alone, "r")
    late = jid_of(cell.qsub("-b", "y", "sleep", "60"))
    wait_for_reason(cell, late, '(-l exclusive=false) cannot run at host "testhost" '
                                'because it offers only hc:exclusive=0.000000')
    assert state_of(cell, late) == "qw"                   # a free slot, yet it waits
    cell.run("qdel", str(alone), check=True)
    wait_state(cell, late, "r")
    cell.run("qdel", str(late), check=True)


def wait_for_reason(cell, jid, text):
    assert wait_for(lambda: any(text in r for r in reasons(cell, jid)), 20), reasons(cell, jid)
