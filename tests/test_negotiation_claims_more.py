"""What a claim keeps of the match it came from, and what condor_q -better-analyze says of a
job held back by the start throttles.

HTCondor's negotiator puts the group round a match was made in into the match
(RemoteNegotiatingGroup, RemoteAutoregroup: under autoregroup a job of a group may be
matched in the round of the group ``<none>``) with its submitter's group (RemoteGroup),
and its startd keeps them in the claim and publishes them in the claimed slot's ad. A
job that matches but waits for MAX_STARTERS or a next_job_start_delay is told so by the
run analysis as qstat -j tells it."""

import re

import pytest

from conftest import destroy_cell, make_cell, wait_for
from condortools import negotiated, submit
from test_negotiator import Pool, jobs, negotiate

from gridtools.sched import negotiator as N

REGROUP = "GROUP_NAMES = group_a\nGROUP_QUOTA_group_a = 2\nGROUP_AUTOREGROUP_group_a = true\n"


# ---------------------------------------------------------------- the negotiator's matches

def rounds(outcome):
    return sorted((m.negotiating_group, m.autoregroup, m.group) for m in outcome.matches)


def test_a_match_records_the_group_round_it_was_made_in():
    """alice's group has a quota of 2 and autoregroups: two of her jobs are matched in her
    group's round, the two others in the autoregroup round of the group <none>, which the
    matches record with her group."""
    out = negotiate(jobs("alice", 4, group="group_a"), Pool(4).slots(), {}, REGROUP)
    assert rounds(out) == [("<none>", True, "group_a"), ("<none>", True, "group_a"),
                           ("group_a", False, "group_a"), ("group_a", False, "group_a")]


def test_without_autoregroup_a_match_is_made_in_its_own_groups_round():
    text = "GROUP_NAMES = group_a\nGROUP_QUOTA_group_a = 2\n"
    out = negotiate(jobs("alice", 1, group="group_a") + jobs("carol", 1), Pool(4).slots(), {}, text)
    assert rounds(out) == [("<none>", False, "<none>"), ("group_a", False, "group_a")]


def test_without_group_quotas_a_match_is_made_in_the_round_of_none_and_has_no_group():
    out = negotiate(jobs("alice", 2), Pool(2).slots(), {})
    assert rounds(out) == [("<none>", False, ""), ("<none>", False, "")]


def test_the_matched_slot_is_the_slots_name_with_the_round():
    out = negotiate(jobs("alice", 3, group="group_a"), Pool(2).slots(), {}, REGROUP)
    slot = N.MatchedSlot.of(out.matches[0])
    assert slot == out.matches[0].slot and isinstance(slot, str)
    assert slot.rpartition("@")[2] == out.matches[0].slot.rpartition("@")[2]
    assert slot.matched_in() == ("group_a", False, "group_a")


# ---------------------------------------------------------------- condor_status

def status_rounds(cell):
    out = cell.run("condor_status", "-af", "Name", "State", "RemoteNegotiatingGroup", "RemoteAutoregroup",
                   "RemoteGroup").stdout
    return sorted(tuple(line.split()[2:]) for line in out.splitlines() if " Claimed " in line)


def test_claimed_slots_tell_the_round_their_match_was_made_in_and_keep_it_over_a_restart(workdir):
    """Three slots; group_a has a quota of 1 and autoregroups. Of alice's two jobs one is
    matched in group_a's round, the other in the round of <none>, which regroups (as HTCondor
    has it, any match of that round is an autoregroup one when a group autoregroups: carol's
    job outside groups too). condor_status shows each claimed slot's round, and so does the
    slot's long form; a restarted daemon keeps them."""
    cell = make_cell(slots=3, start=False)
    try:
        negotiated(cell, "GROUP_NAMES = group_a\nGROUP_QUOTA_group_a = 1\nGROUP_AUTOREGROUP_group_a = true\n")
        cell.start_daemon()
        submit(cell, "executable = /bin/sleep\narguments = 300\naccounting_group = group_a\n"
                     "accounting_group_user = alice\nqueue 2\n", cwd=workdir)
        submit(cell, "executable = /bin/sleep\narguments = 300\nqueue\n", cwd=workdir, name="none.sub")
        wanted = [("<none>", "true", "<none>"), ("<none>", "true", "group_a"), ("group_a", "false", "group_a")]
        wait_for(lambda: status_rounds(cell) == wanted, timeout=30)
        out = cell.run("condor_status", "-l", "-constraint", 'RemoteGroup == "group_a" && RemoteAutoregroup').stdout
        assert 'RemoteNegotiatingGroup = "<none>"' in out.splitlines(), out
        cell.stop_daemon()
        cell.start_daemon()
        wait_for(lambda: len(status_rounds(cell)) == 3, timeout=30)
        assert status_rounds(cell) == wanted
    finally:
        destroy_cell(cell)


def test_a_preemptions_claim_keeps_the_round_of_the_match_that_preempted(workdir, users):
    """One slot runs u2's job (outside groups); u1's group gu1 has a quota of 0 and
    autoregroups, so u1's job is matched in the autoregroup round of <none>, where it
    preempts u2's. The slot claimed for it, and then its running job, tell that round
    (not its own group's, gu1)."""
    cell = make_cell(slots=1, start=False)
    try:
        negotiated(cell, "UID_DOMAIN = example.org\nGROUP_NAMES = gu1\nGROUP_QUOTA_gu1 = 0\n"
                         "GROUP_AUTOREGROUP_gu1 = true\nPREEMPTION_REQUIREMENTS = True\n")
        cell.start_daemon()
        victim = submit(cell, "executable = /bin/sleep\narguments = 600\nqueue\n", cwd=workdir, user="gtbob")
        wait_for(lambda: cell.run("condor_q", str(victim), "-af", "JobStatus").stdout == "2\n", timeout=30)
        cell.run("condor_userprio", "-setprio", "gtbob@example.org", "50", check=True)
        cell.run("condor_userprio", "-setprio", "gu1.gtalice@example.org", "0.5", check=True)
        winner = submit(cell, "executable = /bin/sleep\narguments = 600\naccounting_group = gu1\nqueue\n",
                        cwd=workdir, user="gtalice", name="w.sub")
        wait_for(lambda: cell.run("condor_q", str(winner), "-af", "JobStatus").stdout == "2\n", timeout=60)
        assert status_rounds(cell) == [("<none>", "true", "gu1")]
    finally:
        destroy_cell(cell)


def test_a_claim_without_groups_is_in_the_round_of_none(cell, workdir):
    """Without group quotas (and in Grid Engine's order) a claimed slot tells the round of
    <none>, not autoregrouped, and no RemoteGroup, as HTCondor's slots do."""
    submit(cell, "executable = /bin/sleep\narguments = 300\nqueue\n", cwd=workdir)
    wait_for(lambda: status_rounds(cell) == [("<none>", "false", "undefined")], timeout=30)


# ---------------------------------------------------------------- -better-analyze

def analysis(cell, job):
    return cell.run("condor_q", str(job), "-better-analyze").stdout


@pytest.mark.parametrize("negotiator", [False, True], ids=["grid_engine_order", "negotiator_order"])
def test_better_analyze_tells_a_job_held_back_by_max_starters(workdir, negotiator):
    """MAX_STARTERS = 1 on a host of three slots: the second job matches a free (Unclaimed)
    slot but waits, and -better-analyze says why (in the negotiator's order too, where the
    job is matched, then held back)."""
    cell = make_cell(slots=3, start=False, condor_config="MAX_STARTERS = 1\n")
    try:
        if negotiator:
            negotiated(cell)
        cell.start_daemon()
        first = submit(cell, "executable = /bin/sleep\narguments = 300\nqueue\n", cwd=workdir)
        wait_for(lambda: cell.run("condor_q", str(first), "-af", "JobStatus").stdout == "2\n", timeout=30)
        second = submit(cell, "executable = /bin/sleep\narguments = 300\nqueue\n", cwd=workdir, name="b.sub")
        line = '\tThe job waits to start: host "testhost" is busy: it runs MAX_STARTERS (1) jobs\n'
        out = wait_for(lambda: (lambda t: t if line in t else None)(analysis(cell, second)), timeout=30)
        assert re.search(r"\n +2 are available to run your job\n", out), out
        # a running job is not held back
        assert "waits to start" not in analysis(cell, first)
    finally:
        destroy_cell(cell)


def test_better_analyze_tells_a_job_held_back_by_next_job_start_delay(workdir):
    """A job started with next_job_start_delay holds back its owner's next start: the
    analysis of the job that waits names the delay and until when (qstat -j's time)."""
    cell = make_cell(slots=4, start=False)
    try:
        cell.start_daemon()
        first = submit(cell, "executable = /bin/sleep\narguments = 300\nnext_job_start_delay = 600\nqueue\n",
                       cwd=workdir)
        wait_for(lambda: cell.run("condor_q", str(first), "-af", "JobStatus").stdout == "2\n", timeout=30)
        second = submit(cell, "executable = /bin/sleep\narguments = 300\nqueue\n", cwd=workdir, name="b.sub")
        pattern = (r"\tThe job waits to start: a job started with next_job_start_delay holds back the "
                   r"next start until \d\d/\d\d/\d{4} \d\d:\d\d:\d\d\n")
        wait_for(lambda: re.search(pattern, analysis(cell, second)), timeout=30)
        assert re.search(pattern, cell.run("condor_q", str(second), "-analyze").stdout)
    finally:
        destroy_cell(cell)


