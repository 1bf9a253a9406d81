"""PE slot lists and wildcards through qsub, qstat and accounting with a real daemon."""

from conftest import wait_for
from qtools import jid_of


def test_a_slot_list_gets_the_largest_count_that_fits(cell, workdir):
    jid = jid_of(cell.qsub("-pe", "mpi", "1,2,4,8", "-b", "y", "sleep", "1", cwd=workdir))
    shown = cell.run("qstat", "-j", str(jid)).stdout
    assert "parallel environment:  mpi range: 1,2,4,8" in shown
    cell.wait_finished(jid)
    record = wait_for(lambda: [r for r in cell.accounting() if r[5] == str(jid)])[0]
    assert (record[33], record[34]) == ("mpi", "2")          # two slots in the cell: 2 of 1,2,4,8
    assert "-pe mpi 1,2,4,8" in record[39]


def test_bad_slot_lists_and_wildcard_names(cell, workdir):
    assert cell.qsub("-pe", "mpi", "1,,4", "-b", "y", "true").returncode != 0
    wild = jid_of(cell.qsub("-pe", "m?i", "2", "-b", "y", "true", cwd=workdir))
    cell.wait_finished(wild)
    record = wait_for(lambda: [r for r in cell.accounting() if r[5] == str(wild)])[0]
    assert (record[33], record[34]) == ("mpi", "2")
    xml = cell.run("qstat", "-j", str(jid_of(cell.qsub("-h", "-pe", "mpi", "1,4-6", "-b", "y", "true"))),
                   "-xml").stdout
    ranges = xml.split("<JB_pe_range>")[1].split("</JB_pe_range>")[0]
    assert ranges.count("<ranges>") == 2 and "<RN_max>6</RN_max>" in ranges


def test_qalter_gives_a_pending_job_a_slot_list(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    altered = cell.run("qalter", "-pe", "mpi", "1,2,4", str(jid))
    assert altered.returncode == 0, altered.stderr
    assert "parallel environment:  mpi range: 1,2,4" in cell.run("qstat", "-j", str(jid)).stdout
    cell.run("qrls", str(jid), check=True)
    cell.wait_finished(jid)
    record = wait_for(lambda: [r for r in cell.accounting() if r[5] == str(jid)])[0]
    assert (record[33], record[34]) == ("mpi", "2")


def test_qstat_r_names_the_pe_a_wildcard_request_was_granted(cell, workdir):
    """Requested PE is the pattern; Granted PE (text, -xml, -json) the PE the job runs in."""
    jid = jid_of(cell.qsub("-pe", "m?i", "2", "-b", "y", "sleep", "60", cwd=workdir))
    wait_for(lambda: "Granted PE" in cell.run("qstat", "-r").stdout)
    text = cell.run("qstat", "-r").stdout
    assert "Requested PE:     m?i 2\n" in text and "Granted PE:       mpi 2\n" in text
    xml = cell.run("qstat", "-r", "-xml").stdout
    assert '<requested_pe name="m?i">2</requested_pe>' in xml and '<granted_pe name="mpi">2</granted_pe>' in xml
    assert '"name": "mpi"' in cell.run("qstat", "-r", "-json").stdout
    cell.run("qdel", str(jid), check=True)
