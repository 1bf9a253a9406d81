"""PE slot lists and wildcards through qsub, qstat and accounting with a real daemon."""

import os

from attack_tools import forge_request, forge_submit
from conftest import wait_for
from qtools import add_object, jid_of


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


AMBIGUOUS = "rejected: PEs matching wildcard and jobs slot range would cause ambiguous urgency slot amount"


def _two_pes(cell):
    """PEs u_min and u_max (urgency_slots min and max), both in all.q's pe_list."""
    template = cell.run("qconf", "-sp", "mpi", check=True).stdout
    for setting in ("min", "max"):
        lines = [f"pe_name u_{setting}" if line.startswith("pe_name") else
                 f"urgency_slots {setting}" if line.startswith("urgency_slots") else line
                 for line in template.splitlines()]
        add_object(cell, "-Ap", "\n".join(lines) + "\n")
        cell.run("qconf", "-aattr", "queue", "pe_list", f"u_{setting}", "all.q", check=True)


def test_a_wildcard_range_whose_pes_disagree_on_urgency_slots_is_refused(cell, workdir, users):
    """Grid Engine refuses it at submit, for jobs (qsub, qrsh, qalter) and reservations
    (qrsub); one slot count, or PEs that agree, are fine."""
    _two_pes(cell)
    qsub = cell.qsub("-pe", "u_*", "2-8", "-b", "y", "true", cwd=workdir)
    assert (qsub.returncode, qsub.stdout, qsub.stderr) == (1, "", f'Unable to run job: "job" {AMBIGUOUS}\nExiting.\n')
    qrsh = cell.run("qrsh", "-pe", "u_*", "2-8", "true", cwd=workdir)
    assert (qrsh.returncode, qrsh.stderr) == (1, f'Unable to run job: "job" {AMBIGUOUS}\nExiting.\n')
    qrsub = cell.run("qrsub", "-d", "60", "-pe", "u_*", "2-8")
    assert (qrsub.returncode, qrsub.stderr) == (1, f'"advance_reservation" {AMBIGUOUS}\n')
    assert cell.run("qrstat").stdout == ""
    held = jid_of(cell.qsub("-h", "-pe", "u_*", "2", "-b", "y", "true", cwd=workdir))     # one count
    jid_of(cell.qsub("-h", "-pe", "u_m?x", "2-8", "-b", "y", "true", cwd=workdir))        # one PE
    qalter = cell.run("qalter", "-pe", "u_*", "1-2", str(held))
    assert (qalter.returncode, qalter.stdout + qalter.stderr) == (1, f'"job" {AMBIGUOUS}\n')
    assert "parallel environment:  u_* range: 2" in cell.run("qstat", "-j", str(held)).stdout
    cell.run("qconf", "-mattr", "pe", "urgency_slots", "max", "u_min", check=True)     # now they agree
    jid_of(cell.qsub("-h", "-pe", "u_*", "2-8", "-b", "y", "true", cwd=workdir))


def test_the_daemon_refuses_an_ambiguous_wildcard_range_that_skipped_the_check(cell, users, workdir):
    """Submit, alter and reserve requests written without the clients' checks."""
    _two_pes(cell)
    alice = users[0]
    claimed, _name, answer = forge_submit(cell, alice, {"pe": ["u_*", 2, 8]}, reply=True)
    assert answer == [1, "", f'Unable to run job: "job" {AMBIGUOUS}\nExiting.\n']
    assert not os.path.exists(os.path.join(cell.root, "spool", "jobs", str(claimed)))
    held = jid_of(cell.qsub("-h", "-pe", "u_*", "2", "-b", "y", "true", user=alice, cwd=workdir))
    _name, answer = forge_request(cell, alice, "alter", {"targets": [{"id": held}], "changes": {"pe": ["u_*", 1, 2]}})
    assert answer == [1, f'"job" {AMBIGUOUS}\n', ""]
    _name, answer = forge_request(cell, "root", "ar_submit", {"id": 0, "verify": "v", "duration": 60,
                                                              "pe": ["u_*", 2, 8]})
    assert answer == [1, "", f'"advance_reservation" {AMBIGUOUS}\n']
