"""The HTCondor dialect's parts without a daemon: a cluster as a job description, the
stored ads, the job's policy, -af and -format, condor_q's layouts, JobPrio order,
user logs, history, condor_wait's reading."""

import json
import marshal
import os
import subprocess
import sys
import time

import pytest

from conftest import REPO, run_bare
from gridtools import ads
from gridtools.classad import UNDEFINED, parse, parse_ad
from gridtools.classad.draft import Text
from gridtools.cli.condor import formatting, qviews
from gridtools.cli.condor import queue as Q
from gridtools.daemon import condorjob, condorpolicy, userlogs
from gridtools.formats.condor import jobattrs
from gridtools.formats.condor import spec as condor_spec
from gridtools.formats.condor.fsview import LocalFiles
from gridtools.formats.condor.jobad import SubmitContext
from gridtools.formats.condor.submit import parse_submit
from gridtools.formats.condor.userlog import Event, EventType, render_events

WHO = {"owner": "alice", "uid": 1000, "gid": 1000, "sge_o": {}, "submit_host": "subhost",
       "submit_time": 1700000000.0}


def cluster_ads(text, tmp_path, cluster=7):
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    ctx = SubmitContext(cwd=str(tmp_path), owner="alice", now=1700000000, files=LocalFiles(str(tmp_path)))
    return parse_submit(text).job_ads(cluster, ctx)


def cluster_drafts(text, tmp_path, cluster=7):
    """The ads of ``text`` as condor_submit holds them (``DraftAd``s)."""
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    ctx = SubmitContext(cwd=str(tmp_path), owner="alice", now=1700000000, files=LocalFiles(str(tmp_path)))
    return parse_submit(text).job_drafts(cluster, ctx)


# ---------------------------------------------------------------- a cluster as a job

def test_cluster_spec_of_a_plain_and_an_array_cluster(tmp_path):
    spec = condor_spec.cluster_spec(cluster_ads("executable = run.sh\narguments = a 'b c'\nqueue\n", tmp_path),
                                    WHO)
    assert spec["id"] == 7 and spec["binary"] and not spec["shell_wrap"]
    assert spec["command"] == str(tmp_path / "run.sh") and spec["args"] == ["a", "'b", "c'"]
    assert spec["stdout"] == [[None, "/dev/null"]] and spec["cwd"] == str(tmp_path)
    assert "tasks" not in spec and spec["pe"] is None and isinstance(spec["condor_ad"], str)
    many = condor_spec.cluster_spec(cluster_ads("executable = run.sh\nrequest_cpus = 4\n"
                                                "request_memory = 2G\nqueue 3\n", tmp_path), WHO)
    assert many["tasks"] == [1, 3, 1] and many["pe"] == ["smp", 4, 4]
    assert many["resources"]["hard"] == {"mem_free": "2048M"}
    assert isinstance(many["condor_ad"], str)            # the procs differ in ProcId only


def test_per_proc_differences_are_stored_as_diffs_and_laid_over_proc_0(tmp_path):
    text = "executable = run.sh\narguments = $(Item)\noutput = o.$(Process)\nqueue Item in (x, y)\n"
    spec = condor_spec.cluster_spec(cluster_ads(text, tmp_path), WHO)
    base, second = spec["condor_ad"]
    assert "Args = \"y\"" in second and "ClusterId" not in second and len(second.splitlines()) == 2
    spec["owner"] = "alice"
    ad = ads.job_ad(spec, None, 2)
    assert ad.eval("Args") == "y" and ad.eval("Out") == "o.1" and ad.eval("ProcId") == 1
    facts = condor_spec.run_facts(ad)
    assert facts["args"] == ["y"] and facts["stdout"] == str(tmp_path / "o.1")


def test_an_output_list_without_names_brings_nothing_back(tmp_path):
    """transfer_output_files that names no file (TransferOutput = ""): no file comes back;
    not given: every new file of the scratch folder."""
    def facts(extra):
        ads_ = cluster_ads(f"executable = run.sh\nshould_transfer_files = YES\n{extra}queue\n", tmp_path)
        return condor_spec.run_facts(ads_[0])
    assert facts('transfer_output_files = ","\n')["transfer_output"] == []
    assert facts("")["transfer_output"] is None
    assert facts('transfer_output_files = "a, b"\n')["transfer_output"] == ["a", "b"]


def test_the_owner_of_an_ad_is_who_submitted_it(tmp_path):
    spec = condor_spec.cluster_spec(cluster_ads("executable = run.sh\nqueue\n", tmp_path), WHO)
    spec["condor_ad"] = spec["condor_ad"].replace('Owner = "alice"', 'Owner = "root"')
    spec["owner"] = "alice"
    assert ads.job_ad(spec, None, 1).eval("Owner") == "alice"


def test_universes_and_requests(tmp_path):
    local = condor_spec.cluster_spec(cluster_ads("universe = local\nexecutable = run.sh\nqueue\n", tmp_path), WHO)
    assert local["resources"]["hard"] == {"hostname": "subhost"}
    par = condor_spec.cluster_spec(cluster_ads("universe = parallel\nmachine_count = 3\nexecutable = run.sh\n"
                                               "queue\n", tmp_path), WHO)
    assert par["pe"] == ["mpi", 3, 3]
    gpu = condor_spec.cluster_spec(cluster_ads("request_gpus = 2\nexecutable = run.sh\nqueue\n", tmp_path), WHO)
    assert gpu["resources"]["hard"]["gpu"] == "2"


def test_requests_given_as_expressions_are_left_to_the_daemon(tmp_path):
    """With ``defer`` (condor_submit's way) the requests an ad gives as expressions are
    left out and ``requests_pending`` set, and nothing is evaluated; the daemon's reading
    of proc 0's ad gives what evaluating them on the spot gives. Plain values are read as
    before, with nothing pending."""
    text = ("executable = run.sh\nMY.Cores = 3\nRequestCpus = MY.Cores\n"
            "RequestMemory = floor(MY.Mem / 1048576)\nMY.Mem = 2147483648\nrequest_gpus = 1\nqueue\n")
    deferred = condor_spec.cluster_spec(cluster_drafts(text, tmp_path), WHO, defer=True)
    assert deferred["requests_pending"] is True
    assert deferred["pe"] is None and deferred["resources"]["hard"] == {"gpu": "1"}
    on_the_spot = condor_spec.cluster_spec(cluster_ads(text, tmp_path), WHO)
    assert "requests_pending" not in on_the_spot
    assert on_the_spot["pe"] == ["smp", 3, 3]
    assert on_the_spot["resources"]["hard"] == {"mem_free": "2048M", "gpu": "1"}
    settled = condorjob.settle_requests(deferred)
    assert (settled["pe"], settled["resources"]) == (on_the_spot["pe"], on_the_spot["resources"])
    plain = condor_spec.cluster_spec(cluster_drafts("executable = run.sh\nrequest_cpus = 2\nqueue\n", tmp_path),
                                     WHO, defer=True)
    assert "requests_pending" not in plain and plain["pe"] == ["smp", 2, 2]


def test_requests_are_whole_amounts_rounded_up_and_bounded(tmp_path):
    """A request is rounded up (a slot must hold what the ad asks for) and bounded (one no
    host can meet, infinity too, is the largest a description holds): read on the spot
    or by the daemon alike; NaN asks for nothing; JobPrio is a 32-bit int."""
    cases = [("RequestMemory = 2001 / 2.0\nRequestGPUs = 3 / 2.0", {"mem_free": "1001M", "gpu": "2"}),
             ("RequestMemory = 10000000000000", {"mem_free": "8796093022207M"}),
             ('RequestMemory = real("INF")\nRequestGPUs = real("INF")',
              {"mem_free": "8796093022207M", "gpu": str(2 ** 63 - 1)}),
             ('RequestMemory = real("NaN")', {})]
    for text, wanted in cases:
        text = f"executable = run.sh\n{text}\n+JobPrio = real(\"-INF\")\nqueue\n"
        spec = condor_spec.cluster_spec(cluster_ads(text, tmp_path), WHO)
        assert spec["resources"]["hard"] == wanted, text
        assert spec["job_prio"] == -2 ** 31
        deferred = condor_spec.cluster_spec(cluster_drafts(text, tmp_path), WHO, defer=True)
        assert condorjob.settle_requests(deferred)["resources"]["hard"] == wanted, text


def test_attribute_names_as_commands_and_empty_values(tmp_path):
    ad = cluster_ads("executable = run.sh\nRequestCpus = 3\nRequestMemory = floor(2048 / 2)\n"
                     "+projectname =\nleave_in_queue = TRUE\nqueue\n", tmp_path)[0]
    assert ad.eval("RequestCpus") == 3 and ad.eval("RequestMemory") == 1024
    assert "projectname" in ad and ad.lookup("projectname").unparse() == "undefined"
    assert ad.eval("LeaveJobInQueue") is True


@pytest.mark.parametrize("text", [
    "executable = run.sh\nqueue\n",
    "executable = run.sh\nrequest_cpus = 2\nrequest_memory = 1G\nrequest_gpus = 1\nqueue\n",
    "executable = run.sh\nshould_transfer_files = YES\nqueue\n",
    "executable = run.sh\nshould_transfer_files = NO\nuniverse = parallel\nmachine_count = 2\nqueue\n",
    "executable = run.sh\nuniverse = local\nrequest_memory = 2 * 512\nqueue\n",
    "executable = run.sh\n+a.b = 1\n+Is = \"x\\\"y\"\n+Parent = 2.5\n+Big = 9223372036854775807 + 1\nqueue\n",
])
def test_the_texts_of_a_draft_are_what_the_parser_prints(tmp_path, text):
    """Every expression condor_submit adds as text prints as the parser prints it, in
    both spellings, and the draft's long form is its ClassAd's."""
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    ctx = SubmitContext(cwd=str(tmp_path), owner="alice", now=1700000000, files=LocalFiles(str(tmp_path)),
                        arch='X86_"64\\', opsys="LINUX\t")
    draft = parse_submit(text).job_drafts(7, ctx)[0]
    texts = [draft.lookup(name) for name in draft if isinstance(draft.lookup(name), Text)]
    assert {"Requirements", "RequestDisk"} <= {name for name in draft if isinstance(draft.lookup(name), Text)}
    for found in texts:
        assert parse(found.new).unparse() == found.new and parse(found.new).unparse(True) == found.old
    assert str(draft) == str(draft.classad())
    assert draft.eval("RequestDisk") == draft.classad().eval("RequestDisk") == draft.eval("DiskUsage") == 1
    assert draft.eval("Nothing") is UNDEFINED


def test_a_draft_quotes_names_and_wraps_integers_as_a_classad_does():
    """Names that are no identifiers or are reserved words are quoted in the long form,
    and integers beyond 64 bits wrap, whether set one by one or with ``update``."""
    from gridtools.classad.draft import DraftAd
    draft = DraftAd()
    draft["a.b"], draft["Is"], draft["x y"], draft["Big"] = 1, 'say "hi"', None, 2 ** 63
    draft.update([("Undefined", -2 ** 63 - 1), ("Plain", 7), ("Real", 0.0), ("Yes", True)])
    assert draft.eval("Big") == -2 ** 63 and draft.eval("undefined") == 2 ** 63 - 1
    assert str(draft) == str(draft.classad())
    assert str(draft).splitlines()[:3] == ["'a.b' = 1", "'Is' = \"say \\\"hi\\\"\"", "'x y' = undefined"]


def test_a_draft_evaluates_what_it_holds_now():
    """The ClassAd a draft evaluates expressions in is made again after every change:
    by one name, by ``update`` and by ``inherit``."""
    from gridtools.classad.draft import DraftAd
    draft, base = DraftAd(), DraftAd()
    draft["X"], draft["Twice"] = 2, parse("X * 2")
    assert draft.eval("Twice") == 4
    draft["X"] = 5
    assert draft.eval("Twice") == 10
    draft.update([("X", 6)])
    assert draft.eval("Twice") == 12
    base["Y"], draft["Sum"] = 1, parse("X + Y")
    assert draft.eval("Sum") is UNDEFINED
    draft.inherit(base)
    assert draft.eval("Sum") == 7


def test_default_request_memory_and_requirements_evaluate_as_htcondor_s(tmp_path):
    job = parse_submit("executable = run.sh\nrequest_cpus = 2\nqueue\n").job_drafts(
        7, SubmitContext(cwd=str(tmp_path), owner="alice", now=1, files=None))[0]
    assert jobattrs.DEFAULT_REQUEST_MEMORY.expr().eval({"ImageSize": 3000}) == 3
    assert job.lookup("Requirements").unparse() == (
        '(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk) && '
        "(TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus) && "
        "((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))")
    machine = {"Arch": "X86_64", "OpSys": "LINUX", "Disk": 10, "Memory": 1, "Cpus": 2, "HasFileTransfer": True}
    assert job.eval("Requirements", machine) is True
    assert job.eval("Requirements", dict(machine, Cpus=1)) is False
    user = parse_submit("executable = run.sh\nrequirements = Memory > 4 || Cpus > 1\nqueue\n").job_drafts(
        7, SubmitContext(cwd=str(tmp_path), owner="alice", now=1, files=None))[0]
    assert user.lookup("Requirements").unparse().startswith('(Memory > 4 || Cpus > 1) && (TARGET.Arch == "X86_64")')


# ---------------------------------------------------------------- policy

def _policy_ad(**attrs):
    ad = parse_ad("JobStatus = 2\nNumJobStarts = 1\n")
    for name, text in attrs.items():
        ad[name] = parse(text)
    return ad


def test_exit_policy_precedence():
    result = {"exit_status": 3}
    held = condorpolicy.at_exit(condorpolicy.with_exit(
        _policy_ad(OnExitHold="ExitCode == 3", OnExitRemove="false"), result, 1, 0))
    assert held.action is condorpolicy.Action.HOLD and held.code == 3
    assert held.reason == "The job attribute OnExitHold expression 'ExitCode == 3' evaluated to TRUE"
    again = condorpolicy.at_exit(condorpolicy.with_exit(_policy_ad(OnExitRemove="ExitCode =?= 0.5"), result, 1, 0))
    assert again.action is condorpolicy.Action.REQUEUE
    assert again.reason == "The job attribute OnExitRemove expression 'ExitCode =?= 0.5' evaluated to FALSE"
    retries = "NumJobCompletions > JobMaxRetries || ExitCode =?= 0"
    ad = _policy_ad(OnExitRemove=retries, JobMaxRetries="2")
    assert condorpolicy.at_exit(condorpolicy.with_exit(ad, result, 2, 0)).action is condorpolicy.Action.REQUEUE
    assert condorpolicy.at_exit(condorpolicy.with_exit(ad, result, 3, 0)) is None
    assert condorpolicy.at_exit(condorpolicy.with_exit(_policy_ad(OnExitHold="undefined"), result, 1, 0)) is None
    signalled = condorpolicy.with_exit(_policy_ad(), {"exit_status": 137, "signal": 9}, 1, 0)
    assert signalled.eval("ExitBySignal") is True and signalled.eval("ExitSignal") == 9
    assert "ExitCode" not in signalled


def test_periodic_policy():
    now = 1700000100
    hold = condorpolicy.periodic(_policy_ad(PeriodicHold="CurrentTime > 1700000000",
                                            PeriodicHoldSubCode="5"), now)
    assert (hold.action, hold.code, hold.subcode) == (condorpolicy.Action.HOLD, 3, 5)
    user_held = _policy_ad(PeriodicRelease="true", HoldReasonCode="1")
    user_held["JobStatus"] = 5
    assert condorpolicy.periodic(user_held, now) is None           # the owner's hold stays
    user_held["HoldReasonCode"] = 3
    released = condorpolicy.periodic(user_held, now)
    assert released.action is condorpolicy.Action.RELEASE
    assert released.reason == "The job attribute PeriodicRelease expression 'true' evaluated to TRUE"
    gone = condorpolicy.periodic(_policy_ad(PeriodicRemove="NumJobStarts >= 1"), now)
    assert gone.action is condorpolicy.Action.REMOVE
    assert condorpolicy.interval(lambda name: "5") == 5.0 and condorpolicy.interval(lambda name: None) == 60.0


def test_allowed_durations_hold_a_running_task_before_its_own_expressions():
    now = 1700000100
    started = dict(JobCurrentStartDate=str(now - 3600), PeriodicHold="true")
    job = condorpolicy.periodic(_policy_ad(AllowedJobDuration="3600", **started), now)
    assert (job.action, job.code, job.subcode) == (condorpolicy.Action.HOLD, 46, 0)
    assert job.reason == "The job exceeded allowed job duration of 1:00:00"
    executing = dict(started, JobCurrentStartExecutingDate=str(now - 3600))
    execute = condorpolicy.periodic(_policy_ad(AllowedExecuteDuration="65", **executing), now)
    assert (execute.code, execute.reason) == (47, "The job exceeded allowed execute duration of 01:05")
    # the execute duration must be exceeded, the job duration only reached
    assert condorpolicy.periodic(_policy_ad(AllowedExecuteDuration="3600", **executing), now).code == 3
    # it counts from when the job began to execute (after its input files), as HTCondor's
    # user policy: not while it has not yet, nor from an earlier run
    assert condorpolicy.periodic(_policy_ad(AllowedExecuteDuration="65", **started), now).code == 3
    late = dict(started, JobCurrentStartExecutingDate=str(now - 60))
    assert condorpolicy.periodic(_policy_ad(AllowedExecuteDuration="65", **late), now).code == 3
    earlier = dict(started, JobCurrentStartExecutingDate=str(now - 7200))
    assert condorpolicy.periodic(_policy_ad(AllowedExecuteDuration="65", **earlier), now).code == 3
    idle = _policy_ad(AllowedJobDuration="5", **started)
    idle["JobStatus"] = 1
    assert condorpolicy.periodic(idle, now).code == 3                # only a running task's
    assert condorpolicy.has_periodic(_policy_ad(AllowedExecuteDuration="5"))
    assert [condorpolicy.short_time(n) for n in (0, 5, 600, 36000, 90000)] == \
        ["00:00", "00:05", "10:00", "10:00:00", "1+01:00:00"]


def test_periodic_vacate_comes_after_the_durations_and_before_the_holds():
    """As user_job_policy: the allowed durations, then PeriodicVacate and
    SYSTEM_PERIODIC_VACATE of a running (or suspended) task, then PeriodicHold ..."""
    now = 1700000100
    system = condorpolicy.system_policy({"SYSTEM_PERIODIC_VACATE": "NumJobStarts < 3",
                                         "SYSTEM_PERIODIC_VACATE_SUBCODE": "9"}.get)
    vacate = condorpolicy.periodic(_policy_ad(PeriodicVacate="true", PeriodicHold="true"), now, system)
    assert (vacate.action, vacate.code, vacate.subcode) == (condorpolicy.Action.VACATE, 1000, 0)
    assert vacate.reason == "The job attribute PeriodicVacate expression 'true' evaluated to TRUE"
    by_system = condorpolicy.periodic(_policy_ad(PeriodicHold="true"), now, system)
    assert (by_system.action, by_system.code, by_system.subcode) == (condorpolicy.Action.VACATE, 1001, 9)
    assert by_system.reason == "The system macro SYSTEM_PERIODIC_VACATE expression 'NumJobStarts < 3' " \
        "evaluated to TRUE"
    over = condorpolicy.periodic(_policy_ad(PeriodicVacate="true", AllowedJobDuration="60",
                                            JobCurrentStartDate=str(now - 60)), now)
    assert over.action is condorpolicy.Action.HOLD and over.code == 46
    suspended = _policy_ad(PeriodicVacate="true")
    suspended["JobStatus"] = 7
    assert condorpolicy.periodic(suspended, now).action is condorpolicy.Action.VACATE
    idle = _policy_ad(PeriodicVacate="true", PeriodicHold="true")
    idle["JobStatus"] = 1
    assert condorpolicy.periodic(idle, now, system).action is condorpolicy.Action.HOLD    # only a running one's
    assert condorpolicy.has_periodic(_policy_ad(PeriodicVacate="false"))


def test_system_max_releases_stops_the_periodic_releases_of_a_job_held_that_often():
    """As user_job_policy: no PeriodicRelease (nor SYSTEM_PERIODIC_RELEASE) of a held
    job whose NumHolds reached SYSTEM_MAX_RELEASES; -1, unset or no number: no limit."""
    now = 1700000100
    held = _policy_ad(PeriodicRelease="true", HoldReasonCode="3", NumHolds="2")
    held["JobStatus"] = 5
    limited = condorpolicy.system_policy({"SYSTEM_MAX_RELEASES": "2"}.get)
    assert not limited and condorpolicy.periodic(held, now, limited) is None
    held["NumHolds"] = 1
    assert condorpolicy.periodic(held, now, limited).action is condorpolicy.Action.RELEASE
    held["NumHolds"] = 50
    for text in ("-1", "many", None):
        unlimited = condorpolicy.system_policy({"SYSTEM_MAX_RELEASES": text}.get)
        assert condorpolicy.periodic(held, now, unlimited).action is condorpolicy.Action.RELEASE
    released_by_system = condorpolicy.system_policy({"SYSTEM_MAX_RELEASES": "0",
                                                     "SYSTEM_PERIODIC_RELEASE": "true"}.get)
    assert condorpolicy.periodic(_policy_ad(HoldReasonCode="3", JobStatus="5"), now, released_by_system) is None


def test_system_periodic_policy_comes_after_the_jobs_own_and_says_so():
    now = 1700000100
    config = {"SYSTEM_PERIODIC_HOLD_NAMES": "Slow, NAMES",
              "SYSTEM_PERIODIC_HOLD_Slow": "NumJobStarts > 5",
              "SYSTEM_PERIODIC_HOLD": "JobStatus == 2 && NumJobStarts >= 1",
              "SYSTEM_PERIODIC_HOLD_SUBCODE": "4 + 3",
              "SYSTEM_PERIODIC_RELEASE": "HoldReasonCode == 26",
              "SYSTEM_PERIODIC_REMOVE": "JobStatus == 1 && NumJobStarts > 2",
              "SYSTEM_PERIODIC_REMOVE_REASON": 'strcat("started ", NumJobStarts, " times")',
              "SYSTEM_PERIODIC_RELEASE_NAMES": "bad", "SYSTEM_PERIODIC_RELEASE_bad": "((("}
    said = []
    system = condorpolicy.system_policy(config.get, said.append)
    assert [rule.text for rule in system.holds] == ["NumJobStarts > 5", "JobStatus == 2 && NumJobStarts >= 1"]
    assert len(system.releases) == 1 and said and "SYSTEM_PERIODIC_RELEASE_bad" in said[0]
    hold = condorpolicy.periodic(_policy_ad(), now, system)
    assert (hold.action, hold.code, hold.subcode) == (condorpolicy.Action.HOLD, 26, 7)
    assert hold.reason == ("The system macro SYSTEM_PERIODIC_HOLD expression "
                           "'JobStatus == 2 && NumJobStarts >= 1' evaluated to TRUE")
    own = condorpolicy.periodic(_policy_ad(PeriodicHold="true"), now, system)
    assert own.code == 3                                            # the job's own expression first
    held = _policy_ad(HoldReasonCode="26")
    held["JobStatus"] = 5
    assert condorpolicy.periodic(held, now, system).action is condorpolicy.Action.RELEASE
    held["HoldReasonCode"] = 1
    assert condorpolicy.periodic(held, now, system) is None         # the owner's hold stays
    idle = _policy_ad(NumJobStarts="3")
    idle["JobStatus"] = 1
    gone = condorpolicy.periodic(idle, now, system)
    assert (gone.action, gone.reason) == (condorpolicy.Action.REMOVE, "started 3 times")
    assert not condorpolicy.system_policy({}.get) and condorpolicy.periodic(_policy_ad(), now) is None


# ---------------------------------------------------------------- printing attributes

def _job(cluster, proc, **attrs):
    ad = parse_ad(f'ClusterId = {cluster}\nProcId = {proc}\nOwner = "alice"\nCmd = "/bin/x"\n'
                  "JobStatus = 2\nRate = 2.5\n")
    for name, value in attrs.items():
        ad[name] = value
    return ad


def test_autoformat_qualifiers():
    ads_ = [_job(5, 0), _job(5, 1)]
    assert formatting.autoformat(ads_, ["JobStatus"], "jr") == "5.0 2\n5.1 2\n"
    assert formatting.autoformat(ads_[:1], ["Owner", "Cmd"], "") == "alice /bin/x\n"
    assert formatting.autoformat(ads_[:1], ["Owner"], "V") == '"alice"\n'
    assert formatting.autoformat(ads_[:1], ["Owner", "ProcId"], "l") == "Owner = alice ProcId = 0\n"
    assert formatting.autoformat(ads_[:1], ["Owner", "Missing"], ",") == "alice, undefined\n"
    assert formatting.autoformat(ads_, ["ProcId"], "j,") == "5.0, 0\n5.1, 1\n"
    assert formatting.autoformat(ads_[:1], ["Owner", "ProcId"], "n") == "alice\n 0\n"     # (the " " prefix stays)
    assert formatting.autoformat(ads_[:1], ["ProcId + 1"], "") == "1\n"
    assert formatting.autoformat(ads_, ["ProcId", "Owner"], "h") == "ProcId Owner\n0      alice\n1      alice\n"


def test_reals_print_as_the_old_classad_unparser_writes_them():
    """-af and -format %s/%v: %.16G with .0 added to a whole number, never %.15E."""
    ad = _job(5, 0, Wall=0.008332967758178711, Mem=512.0)
    assert formatting.autoformat([ad], ["real(3)", "1.5", "ClusterId*2.5", "Wall", "999.0", "Mem"], "") == \
        "3.0 1.5 12.5 0.008332967758178711 999.0 512.0\n"
    assert formatting.autoformat([ad], ["Mem", "Wall"], "l") == "Mem = 512.0 Wall = 0.008332967758178711\n"
    assert formatting.format_one(ad, "%s\\n", "Wall") == "0.008332967758178711\n"
    assert formatting.format_one(ad, "%v %V", "Mem") == "512.0 512.0"
    assert formatting.autoformat([ad], ["{ 1.5, 2 }"], "") == "{ 1.5,2 }\n"


def test_printf_format():
    ad = _job(5, 0)
    assert formatting.format_one(ad, "%d.", "ClusterId") == "5."
    assert formatting.format_one(ad, "%-8s|", "Owner") == "alice   |"
    assert formatting.format_one(ad, "%V\\n", "Owner") == '"alice"\n'
    assert formatting.format_one(ad, "%.2f", "Rate") == "2.50"
    assert formatting.format_one(ad, "[%d]", "Missing") == ""      # (an invalid column: nothing at all)
    assert formatting.format_one(ad, "%r", "Rate * 2") == "Rate * 2"


def test_json_form():
    ad = _job(5, 0, Requirements=parse("TARGET.Cpus > 1"), Flag=True)
    data = json.loads(formatting.json_ads([ad]))
    assert data[0]["ClusterId"] == 5 and data[0]["Flag"] is True and data[0]["Rate"] == 2.5
    assert data[0]["Requirements"] == "/Expr(TARGET.Cpus > 1)/"


def test_json_expressions_are_written_as_htcondor_writes_them():
    """condor_q and condor_history -json share condor_status's writer: ``"\\/Expr(...)\\/"``,
    which HTCondor's readers turn back into an expression."""
    ad = _job(5, 0, Requirements=parse('TARGET.Arch == "X86_64"'), Bad=parse("error"),
              Big=parse('real("INF")'), Gone=parse("undefined"))
    text = formatting.json_ads([ad])
    assert '  "Requirements": "\\/Expr(TARGET.Arch == \\"X86_64\\")\\/"\n}' in text
    assert '  "Bad": "\\/Expr(error)\\/",\n' in text and '  "Gone": null,\n' in text
    assert text.startswith("[\n{\n  \"Bad\"") and text.endswith("\n}\n]\n")
    data = json.loads(text)[0]
    assert data["Requirements"] == '/Expr(TARGET.Arch == "X86_64")/' and data["Big"].startswith("/Expr(")
    assert formatting.json_ads([]) == ""
    # HTCondor's own reader, in a process of its own (its library leaves state behind
    # that the cells of later tests in this process would see)
    read = ("import sys, classad2\n"
            "ad = next(classad2.parseAds(sys.stdin.read(), classad2.ParserType.JSON))\n"
            "e = ad.lookup('Requirements')\n"
            "print(type(e).__name__, e, ad['Rate'])\n")
    proc = subprocess.run([sys.executable, "-c", read], input=text[text.index("{"):text.rindex("}") + 1],
                          capture_output=True, text=True, check=False)
    if "No module named 'classad2'" in proc.stderr:
        pytest.skip("HTCondor's classad2 is not installed")
    assert proc.stdout == 'ExprTree TARGET.Arch == "X86_64" 2.5\n', proc.stderr


# ---------------------------------------------------------------- condor_q tables

def _proc(cluster, proc, status, owner="alice", **kw):
    return Q.Proc(cluster, proc, owner, status, kw.pop("qdate", 1700000000.0), **kw)


def test_batch_rows_and_widths():
    procs = [_proc(3, 0, Q.RUNNING), _proc(3, 1, Q.IDLE), _proc(3, 2, Q.HELD),
             _proc(4, 0, Q.IDLE, batch="mine"), _proc(6, 0, Q.IDLE, batch="mine")]
    text = qviews.batch_view(procs, {3: 5, 4: 1, 6: 2}).splitlines()
    assert text[0] == "OWNER BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"
    date = qviews.format_date(1700000000)
    assert text[1] == f"alice {'ID: 3':<10} {date:>12}      2      1      1      1      5 3.0-2"
    assert text[2] == f"alice {'mine':<10} {date:>12}      1      _      2      _      3 4.0 ... 6.0"
    short = qviews.batch_view([_proc(3, 0, Q.IDLE, owner="bo")], {3: 1}).splitlines()
    assert short[0].startswith("OWNER    BATCH_NAME") and short[1].startswith("bo       ID: 3")
    no_hold = qviews.batch_view([_proc(3, 0, Q.IDLE)], {3: 1}).splitlines()[0]
    assert "HOLD" not in no_hold


def _group(cluster, clusters, procs, status, batch=None, submitted=None, unmade=0):
    from gridtools.cli.condor import qlisting
    g = qlisting.Group.__new__(qlisting.Group)
    g.cluster, g.clusters, g.procs, g.status, g.owner, g.batch = cluster, clusters, procs, status, "alice", batch
    g.qdate, g.submitted, g.dag, g.dagman = 1700000000.0, submitted or len(procs), None, 0
    g.unmade = unmade
    return g


def test_batch_rows_of_a_cluster_materialized_late_count_as_done_only_the_procs_that_left():
    """Procs not in the queue yet (max_materialize) are in TOTAL, not in DONE: cluster 5
    made 4 of its 10 procs, of which 1 left, 2 run and 1 waits."""
    from gridtools.cli.condor import qlisting
    when = 1700000000.0
    rows = qlisting.batch_rows([_group(5, 1, [1, 2], Q.RUNNING, submitted=10, unmade=6),
                                _group(5, 1, [3], Q.IDLE, submitted=10, unmade=6)])
    assert rows == [("alice", "ID: 5", when, (1, 2, 1, 0, 10), "5.1-3")]
    # ... and where its procs in the queue are all of one status (a row of its own at once)
    assert qlisting.batch_rows([_group(6, 1, [0, 1], Q.HELD, submitted=4, unmade=2)]) == [
        ("alice", "ID: 6", when, (0, 0, 0, 2, 4), "6.0-1")]
    procs = [_proc(5, 1, Q.RUNNING), _proc(5, 2, Q.RUNNING), _proc(5, 3, Q.IDLE)]
    line = qviews.batch_view(procs, {5: 10}, unmade={5: 6}).splitlines()[1]
    assert line.split()[-5:] == ["1", "2", "1", "10", "5.1-3"]       # (no HOLD column: none held)


def test_listing_rows_of_lone_clusters_and_of_clusters_of_several_statuses():
    """The batch rows condor_q makes from the listing's groups: a run of clusters without
    a batch name is a row each; a cluster whose procs are of several statuses (several
    groups, here cluster 12 within the run 11-13) adds them up in one row; a named batch
    gathers its clusters."""
    from gridtools.cli.condor import qlisting
    rows = qlisting.batch_rows([
        _group(8, 3, [0], Q.HELD), _group(11, 3, [0], Q.IDLE, submitted=2), _group(12, 1, [1], Q.RUNNING, submitted=2),
        _group(20, 2, [0, 1], Q.IDLE, batch="mine")])
    when = 1700000000.0
    assert rows == [("alice", f"ID: {c}", when, (0, 0, 0, 1, 1), f"{c}.0") for c in (8, 9, 10)] + [
        ("alice", "ID: 11", when, (1, 0, 1, 0, 2), "11.0"),
        ("alice", "ID: 12", when, (0, 1, 1, 0, 2), "12.0-1"),
        ("alice", "ID: 13", when, (1, 0, 1, 0, 2), "13.0"),
        ("alice", "mine", when, (0, 0, 4, 0, 4), "20.0 ... 21.1")]
    table = qviews.batch_table(rows).splitlines()
    assert table[1] == f"alice {'ID: 8':<10} {qviews.format_date(when):>12}      _      _      _      1      1 8.0"
    assert len(table) == 1 + len(rows)


def test_nobatch_row_and_totals():
    now = 1700000000.0 + 3725
    row = qviews.nobatch([_proc(12, 3, Q.RUNNING, start=1700000000.0, prio=-2, cmd="/bin/sleep",
                                args=["10"])], "alice", now).splitlines()[1]
    assert row == f"  12.3   alice          {qviews.format_date(1700000000)}   0+01:02:05 R  -2   0.0 sleep 10"
    hidden = qviews.nobatch([_proc(1, 0, Q.IDLE, cmd="/bin/sleep", args=["secret"])], "bob", now)
    assert "secret" not in hidden
    totals = qviews.summary([_proc(1, 0, Q.IDLE)], [], [_proc(1, 0, Q.IDLE), _proc(2, 0, Q.HELD)], "bob")
    assert totals.splitlines() == [
        "Total for query: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended ",
        "Total for bob: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended ",
        "Total for all users: 2 jobs; 0 completed, 0 removed, 1 idle, 0 running, 1 held, 0 suspended"]


def test_procs_from_published_rows_keep_finished_procs_only_while_kept():
    snap = {"jobs": {9: {"owner": "alice", "submit_time": 1.0, "name": "x",
                         "condor": {"ads": True, "kept": [2], "tasks": {"2": {"removed": True}}}}},
            "rows": [{"id": 9, "tasks": [[1, 2, 1]], "state": "z", "time": 1.0},
                     {"id": 9, "tasks": [[3, 3, 1]], "state": "hqw", "hold": "u", "time": 1.0}]}
    procs = Q.procs(snap)
    assert [(p.id, p.status) for p in procs] == [("9.1", Q.REMOVED), ("9.2", Q.HELD)]
    assert procs[1].hold[:3] == ["held by the job's owner", 1, 0]


def test_jobprio_orders_one_owners_jobs_only():
    from gridtools.sched.order import by_job_prio

    class Job:
        def __init__(self, jid, owner, prio):
            self.id, self.owner, self.job_prio = jid, owner, prio
    order = [Job(1, "a", 0), Job(2, "b", 9), Job(3, "a", 5), Job(4, "a", 1), Job(5, "b", 0)]
    assert [j.id for j in by_job_prio(order)] == [3, 2, 4, 1, 5]


# ---------------------------------------------------------------- user logs, history, condor_wait

def _spec(tmp_path):
    return {"id": 7, "owner": "me", "uid": os.getuid(), "gid": os.getgid()}


def test_user_log_appends_and_refuses_links(tmp_path):
    events = [Event(EventType.SUBMIT, 7, 0, 0, 1700000000.0, {"SubmitHost": "<h>"})]
    path = str(tmp_path / "u.log")
    assert userlogs.append(_spec(tmp_path), path, events)
    assert userlogs.append(_spec(tmp_path), path, events)
    assert open(path).read() == render_events(events) * 2
    target = tmp_path / "other"
    target.write_text("keep\n")
    os.symlink(target, tmp_path / "l.log")
    noted = []
    assert not userlogs.append(_spec(tmp_path), str(tmp_path / "l.log"), events, noted.append)
    assert target.read_text() == "keep\n" and "cannot open its user log" in noted[0]
    os.mkfifo(tmp_path / "f.log")
    assert not userlogs.append(_spec(tmp_path), str(tmp_path / "f.log"), events, noted.append)


def test_history_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    from gridtools.cli.condor import history as hist_cli
    from gridtools.daemon import history

    class State:
        def log(self, text):
            raise AssertionError(text)
    history.append(State(), [_job(1, 0, CompletionDate=5), _job(2, 0, CompletionDate=6)])
    found = hist_cli.read_ads([history.path()])
    assert [a.eval("ClusterId") for a in found] == [1, 2]
    opts = hist_cli.parse_args(["-limit", "1"])
    assert [a.eval("ClusterId") for a in hist_cli.select(opts, found)] == [2]
    assert open(history.path()).read().splitlines()[-1] == \
        '*** ProcId = 0 ClusterId = 2 Owner = "alice" CompletionDate = 6'


def test_the_public_text_of_an_ad_leaves_out_private_attributes_only(tmp_path):
    from gridtools.jobads import job_ad
    from gridtools.model.job import Job
    from gridtools.spool.rows import public_ad
    text = ("executable = run.sh\narguments = secret-arg\nenvironment = \"K=secret\"\n"
            "requirements = TARGET.Memory > 7\nrank = TARGET.Mips\n+Colour = \"blue\"\n"
            "dagman_log = /home/secret/run.nodes.log\nqueue 2\n")
    spec = condor_spec.cluster_spec(cluster_ads(text, tmp_path), dict(WHO, id=7))
    spec["id"] = 7
    job = Job(spec)
    published = public_ad(job)
    assert published is public_ad(job)             # made once for a description
    first = published[0] if isinstance(published, list) else published
    assert "secret" not in str(published) and str(tmp_path) not in str(published)
    assert "\nClusterId = undefined\n" in first and "\nNumJobStarts = 0\n" in first
    # laid under the state as the owner's ad is, it says what the owner's says but the private part
    for number in (1, 2):
        owner = job_ad(job.spec, None, number)
        other = job_ad({"id": 7, "owner": "alice", "condor_ad": published}, None, number)
        assert other.eval("ProcId") == number - 1 and other.eval("Owner") == "alice"
        for name in ("Requirements", "Rank", "RequestMemory", "RequestCpus", "Colour", "MinHosts",
                     "NumJobStarts", "NumJobCompletions", "RemoteWallClockTime", "ExitBySignal"):
            assert str(other.lookup(name)) == str(owner.lookup(name)), name
        assert "Arguments" not in other and "Environment" not in other and "Cmd" not in other
        assert owner.eval("DAGManNodesLog") == "/home/secret/run.nodes.log" and "DAGManNodesLog" not in other
    assert public_ad(Job(dict(spec, condor_ad=None))) is None


def test_public_ads_files_are_written_when_they_change(tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    from gridtools.spool import status
    monkeypatch.setattr(status, "PUBLIC", status.FolderFiles("public", 0o755))
    folder = tmp_path / "spool" / "public"
    folder.mkdir()
    (folder / "9").write_bytes(b"left by an earlier daemon")
    a, b = "Rank = 1\n", "Rank = 2\n"
    status.publish_public({0: {5: a}, 1: {1005: [a, ""]}})
    assert sorted(os.listdir(folder)) == ["0", "1"]
    assert oct(os.stat(folder / "0").st_mode & 0o777) == "0o644"
    inodes = {n: os.stat(folder / n).st_ino for n in ("0", "1")}
    status.publish_public({0: {5: a, 6: b}, 1: {1005: [a, ""]}})
    assert os.stat(folder / "1").st_ino == inodes["1"] and os.stat(folder / "0").st_ino != inodes["0"]
    assert status.read_public([6, 1005]) == {5: a, 6: b, 1005: [a, ""]}
    assert status.read_public([5]) == {5: a, 6: b}              # only the file of cluster 5
    status.publish_public({1: {1005: [a, ""]}})
    assert os.listdir(folder) == ["1"] and status.read_public([5]) == {}


def test_condor_wait_follows_a_log_as_it_grows(tmp_path):
    log = tmp_path / "w.log"
    submit_ev = [Event(EventType.SUBMIT, 3, p, 0, 1700000000.0, {}) for p in (0, 1)]
    log.write_text(render_events(submit_ev))
    launcher = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin", "condor_wait")
    proc = subprocess.Popen([sys.executable, launcher, "-wait", "30", str(log)], stdout=subprocess.PIPE, text=True)
    text = render_events([Event(EventType.JOB_TERMINATED, 3, 0, 0, 1700000001.0, {"ReturnValue": 0}),
                          Event(EventType.JOB_ABORTED, 3, 1, 0, 1700000002.0, {"Reason": "x"})])
    with open(log, "a") as fh:
        fh.write(text[:40])
        fh.flush()
        time.sleep(0.3)                # a half-written event is not read
        fh.write(text[40:])
    out, _ = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (0, "All jobs done.\n")
    expired = subprocess.run([sys.executable, launcher, "-wait", "1", str(tmp_path / "none.log")],
                             capture_output=True, text=True)
    assert expired.returncode == 1 and expired.stderr.startswith("Couldn't open")
    log.write_text(render_events(submit_ev))
    waiting = subprocess.run([sys.executable, launcher, "-wait", "1", str(log)], capture_output=True, text=True)
    assert (waiting.returncode, waiting.stdout) == (1, "Time expired.\n")
    one = subprocess.run([sys.executable, launcher, "-num", "1", "-wait", "1", str(log)],
                         capture_output=True, text=True)
    assert one.returncode == 1


@pytest.mark.skipif(os.environ.get("GRIDTOOLS_HTCONDOR_PYTHON") is None,
                    reason="the htcondor package (oracle) is named by GRIDTOOLS_HTCONDOR_PYTHON")
def test_htcondor_job_event_log_reads_what_the_daemon_writes(tmp_path):
    events = [Event(EventType.SUBMIT, 4, 0, 0, 1700000000.0, {"SubmitHost": "<127.0.0.1:0?alias=h>"}),
              Event(EventType.EXECUTE, 4, 0, 0, 1700000001.0, {"ExecuteHost": "<127.0.0.1:0?alias=h>",
                                                                "SlotName": "all.q@h"}),
              Event(EventType.JOB_HELD, 4, 0, 0, 1700000002.0,
                    {"HoldReason": "via condor_hold (by user a)", "HoldReasonCode": 1, "HoldReasonSubCode": 2}),
              Event(EventType.JOB_RELEASED, 4, 0, 0, 1700000003.0, {"Reason": "via condor_release"}),
              Event(EventType.JOB_EVICTED, 4, 0, 0, 1700000004.0, {}),
              Event(EventType.JOB_TERMINATED, 4, 0, 0, 1700000005.0, {"ReturnValue": 3}),
              Event(EventType.JOB_ABORTED, 4, 1, 0, 1700000006.0, {"Reason": "via condor_rm"})]
    log = tmp_path / "o.log"
    log.write_text(render_events(events))
    script = ("import sys\ntry:\n    import htcondor2 as h\nexcept ImportError:\n    import htcondor as h\n"
              "for e in h.JobEventLog(sys.argv[1]).events(stop_after=0):\n"
              "    print(int(e.type), e.cluster, e.proc, e.get('ReturnValue', ''), e.get('HoldReasonSubCode', ''),"
              " e.get('Reason', e.get('HoldReason', '')))\n")
    out = subprocess.run([os.environ["GRIDTOOLS_HTCONDOR_PYTHON"], "-c", script, str(log)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert [line.split()[:3] for line in out] == [["0", "4", "0"], ["1", "4", "0"], ["12", "4", "0"],
                                                  ["13", "4", "0"], ["4", "4", "0"], ["5", "4", "0"],
                                                  ["9", "4", "1"]]
    assert out[2].endswith("2 via condor_hold (by user a)") and out[5].split()[3] == "3"


@pytest.mark.parametrize("text, base, amount", [
    ("1", 2, 1), ("1.5G", 2, 1536), ("2 GB", 2, 2048), (" 10 m ", 2, 10), ("3Kb", 1, 3), ("1024k", 2, 1),
    (".5", 2, 1), ("5.", 1, 5), ("+5", 2, 5), ("010", 2, 10), ("1.23456", 2, 2), ("0.0001", 2, 0),
    ("1.5 gB", 2, 1536), ("1.0009", 2, 1), ("1.001", 2, 2),           # (three digits of a fraction count)
    ("-2", 2, -1), ("-5", 1, -4), ("-1K", 2, 0), ("-0.5", 1, 1), ("-0", 1, 0), ("-0.5 G", 2, 512),
    ("1P", 2, None), ("5 m b", 2, None), ("5 B", 2, None), ("- 2", 2, None), ("-.5", 2, None), ("+", 2, None),
    ("2e3", 1, None), ("KB", 2, None), ("", 2, None), ("1..2", 2, None), ("\u00b2", 2, None),
    ("\u0663", 2, None), ("4\u212a", 2, None), ("MemoryUsage * 2", 2, None),
])
def test_amounts_are_read_as_condor_submit_reads_them(text, base, amount):
    """request_memory (MB, base 2) and request_disk (KB, base 1) as HTCondor's
    parse_int64_bytes reads them: a C integer with a sign, up to three digits of a
    fraction, a K/M/G/T unit; the bytes rounded up to the unit by C's integer division
    (towards zero); anything else is an expression (None)."""
    assert jobattrs.quantity(text, base) == amount


WRITE_CONFIGS = [
    ("# ALLOW_WRITE = nobody@*/*\n   # DENY_WRITE = root@*/*\n", True),
    ("A = 1 \\\n# ALLOW_WRITE = nobody@*/*\n", True),            # a comment continued: A's value
    ("# \u00e9t\u00e9\nA = 1\n", True),
    ("ALLOW_WRITE = nobody@*/*\n", False),
    ("  deny_write_schedd = root@*/*\n", False),
    ("HOSTDENY_WRITE = *\n", False),
    ("DENY_WRITE @=end\nroot@*/*\n@end\n", False),
    ("include : other_config\n", False),
    ("LOCAL_CONFIG_FILE = /nonexistent\n", False),
    ("A = \u00e9\n", False),
    ("# a comment\rALLOW_WRITE = nobody@*/*\r", False),         # a lone CR ends a line too
    ("# a comment\r\nA = 1\r\n", True),
    ("A = 1 # ALLOW_WRITE is set below\n", False),              # a setting line, whatever follows
    ("\t # include : x\n\tB = allow_writer\n", False),
    ("#\n# LOCAL_CONFIG_DIR = x\n   \nC = 2\n", True),
]


def _only_this_config(tmp_path, monkeypatch, text):
    """A cell in ``tmp_path`` whose condor_config is ``text``, and no other configuration
    (no CONDOR_CONFIG, no _CONDOR_ variables)."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "condor_config").write_text(text)
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    monkeypatch.delenv("CONDOR_CONFIG", raising=False)
    for key in [k for k in os.environ if k.upper().startswith("_CONDOR_")]:
        monkeypatch.delenv(key)


@pytest.mark.parametrize("text, open_to_all", WRITE_CONFIGS)
def test_write_is_seen_open_without_the_configuration_language_only_when_it_is(tmp_path, monkeypatch,
                                                                                text, open_to_all):
    """condor_submit reads the configuration's language for the WRITE check only when the
    configuration could restrict WRITE; when it does not, the full check allows too."""
    from gridtools import cell, seclevels
    from gridtools.cli.condor import access, machineviews
    _only_this_config(tmp_path, monkeypatch, text)
    assert cell.etc("condor_config") == str(tmp_path / "etc" / "condor_config")
    assert access.open_to_all("WRITE") is open_to_all
    if open_to_all:
        assert machineviews.verdict(seclevels.Level.WRITE, "SCHEDD")[0].allowed
    monkeypatch.setenv("_CONDOR_DENY_WRITE", "root@*/*")
    assert access.open_to_all("WRITE") is False
    monkeypatch.delenv("_CONDOR_DENY_WRITE")
    monkeypatch.setenv("_CONDOR_MINUTE", "60")
    assert access.open_to_all("WRITE") is open_to_all


@pytest.mark.parametrize("text, may", [
    ("# MAX_JOBS_PER_SUBMISSION = 5\n# include : x\n  # LOCAL_CONFIG_FILE = y\n", False),
    ("MAX_JOBS_PER_SUBMISSION = 5\n", True),
    ("  max_jobs_per_submission=5\n", True),
    ("A = 1 # MAX_JOBS_PER_SUBMISSION\n", True),
    ("include : other\n", True),
    ("# \u00e9t\u00e9\nA = 1\n", False),
    ("A = \u00e9\nLOCAL_CONFIG_DIR = x\n", True),
    ("# a comment\rMAX_JOBS_PER_SUBMISSION = 5\r", True),
])
def test_a_setting_is_seen_only_on_a_line_that_is_not_a_comment(tmp_path, monkeypatch, text, may):
    """condor_submit reads MAX_JOBS_PER_SUBMISSION from the configuration's language only
    when a line that is not a comment names it (or includes other files)."""
    from gridtools.cli.condor import access
    _only_this_config(tmp_path, monkeypatch, text)
    assert access.may_set("MAX_JOBS_PER_SUBMISSION") is may
    monkeypatch.setenv("_CONDOR_MAX_JOBS_PER_SUBMISSION", "5")
    assert access.may_set("MAX_JOBS_PER_SUBMISSION") is True


@pytest.mark.parametrize("text, open_to_read", [
    ("ALLOW_WRITE = nobody@*/*\n", True),                  # only READ's own lists restrict READ
    ("# ALLOW_READ = nobody@*/*\n", True),
    ("ALLOW_READ = nobody@*/*\n", False),
    ("HOSTDENY_READ = *\n", False),
    ("DENY_READ_SCHEDD = root@*/*\n", False),
])
def test_read_is_seen_open_by_the_same_scan(tmp_path, monkeypatch, text, open_to_read):
    """condor_q's READ check and condor_submit's WRITE check are one scan for either level."""
    from gridtools import seclevels
    from gridtools.cli.condor import access, machineviews
    _only_this_config(tmp_path, monkeypatch, text)
    assert access.open_to_all("READ") is open_to_read
    if open_to_read:
        assert machineviews.verdict(seclevels.Level.READ, "SCHEDD")[0].allowed
        assert access.refused("READ", "SCHEDD") is None
    monkeypatch.setenv("_CONDOR_ALLOW_READ", "root@*/*")
    assert access.open_to_all("READ") is False


def test_the_shipped_configuration_is_open_to_all_and_a_missing_one_is_read_fully(tmp_path, monkeypatch):
    from gridtools import cell
    from gridtools.cli.condor import access
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    monkeypatch.setenv("CONDOR_CONFIG", os.path.join(cell.shipped_etc(), "condor_config"))
    assert access.open_to_all("WRITE") is True
    monkeypatch.setenv("CONDOR_CONFIG", str(tmp_path / "missing"))
    assert access.open_to_all("WRITE") is False
    monkeypatch.setenv("CONDOR_CONFIG", "ONLY_ENV")
    assert access.open_to_all("WRITE") is True


@pytest.mark.parametrize("text, machine, job", [
    ('OpSysAndVer == "AlmaLinux9"', {"opsysandver"}, set()),
    ('TARGET.OpSysName == "Arch"', {"opsysname"}, set()),          # a name in a string is none
    ('Name == "Cpus" && regexp("HasFileTransfer|FileSystemDomain", Name)', {"name"}, set()),
    ("MY.Arch && my.CPUS > 1 && TARGET.gpus", {"arch", "cpus", "gpus"}, set()),
    ("RequestMemory > 0 && MY.VM_CkptMac == \"\" && self && CurrentTime > 0", set(), {"requestmemory", "vm_ckptmac"}),
    ("TARGET.RequestMemory > Requirements", {"requestmemory"}, {"requirements"}),
])
def test_requirements_references_are_htcondor_s_read_or_parsed_alike(text, machine, job):
    """The references condor_submit decides its default clauses by, as HTCondor's
    GetExprReferences gives them: from read_text's names and from the parsed tree alike."""
    from gridtools.classad.draft import read_text
    from gridtools.classad.parser import parse
    from gridtools.formats.condor import reqrefs
    names = []
    if read_text(text, names) is not None:
        assert reqrefs.from_names(names) == (machine, job)
    assert reqrefs.from_tree(parse(text)) == (machine, job)


@pytest.mark.parametrize("text, machine", [
    ("self.Arch || OTHER.OpSys || root.Disk", {"arch", "opsys", "disk"}),
    ("foo.Arch || TARGET.foo.Cpus || parent.Disk", {"foo.arch", "foo.cpus", "'parent'.disk"}),
    ("{Arch}[0] || [a = Memory; b = a].b || x ? OpSysLegacy : -Cpus", {"arch", "memory", "opsyslegacy", "x", "cpus"}),
    ("MY.RequestMemory.x || Arch", set()),                       # HTCondor gives up: no reference
    ('"s".Arch', set()),
])
def test_requirements_references_of_what_only_the_parser_reads(text, machine):
    from gridtools.classad.draft import read_text
    from gridtools.classad.parser import parse
    from gridtools.formats.condor import reqrefs
    assert read_text(text) is None
    assert reqrefs.from_tree(parse(text))[0] == machine


def test_an_edit_of_condor_config_within_one_clock_tick_changes_the_periodic_interval(tmp_path, monkeypatch):
    """The daemon reads PERIODIC_EXPR_INTERVAL again when condor_config changed, even when
    the edit left its modification time as it was (two writes within one clock tick)."""
    from gridtools.daemon import condorjob
    (tmp_path / "etc").mkdir()
    config = tmp_path / "etc" / "condor_config"
    config.write_text("PERIODIC_EXPR_INTERVAL = 7\n")
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    monkeypatch.delenv("CONDOR_CONFIG", raising=False)
    monkeypatch.setattr(condorjob, "_CONFIG", dict(condorjob._CONFIG, looked=0.0, root=None, stamp=None))
    assert condorjob.periodic_interval() == 7
    before = config.stat()
    with open(config, "a") as fh:
        fh.write("PERIODIC_EXPR_INTERVAL = 1\n")
    os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns))
    condorjob._CONFIG["looked"] = 0.0
    assert condorjob.periodic_interval() == 1


def test_a_lone_literal_is_its_plain_value_as_the_parser_reads_it():
    """``jobattrs.expr`` takes keyword literals, small decimal integers and plain strings
    as their values without the parser: each equals (in type and value) what the parser
    makes of the text, and prints alike in both spellings; anything else is parsed."""
    import random
    from gridtools.classad.draft import DraftAd
    from gridtools.classad.parser import parse
    from gridtools.formats.condor import jobattrs
    rng = random.Random(5)
    pieces = ["true", "TRUE", "False", "undefined", "ERROR", "0", "7", "01", "-1", "123456789012345678",
              "1234567890123456789", '"', "a", " ", "\\", "é", ".", "x", "\t", "(", "1.5"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) for _ in range(5000)]
    texts += ['"plain text"', '""', '"say \\"hi\\""', "9223372036854775807", "00", "tRuE", '"a"b"']
    plain = 0
    for text in texts:
        found = jobattrs._plain_literal(text)
        if found is jobattrs._NOT_PLAIN:
            continue
        plain += 1
        parsed = parse(text)
        value = parsed.eval(None) if hasattr(parsed, "eval") else parsed
        assert type(found) is type(value) and found == value or found is value, text
        draft = DraftAd()
        draft["A"] = found
        assert draft.lookup("A").unparse() == parsed.unparse(), text
        assert draft.lookup("A").unparse(True) == parsed.unparse(True), text
    assert plain > 300


def test_a_description_of_literals_is_built_without_the_parser(tmp_path):
    """parsl's kind of description (empty and keyword values) loads no expression module."""
    code = ("import sys\nfrom gridtools.formats.condor.submit import parse_submit\n"
            "from gridtools.formats.condor.jobad import SubmitContext\n"
            "text = 'executable = /bin/true\\nrequirements =\\n+projectname =\\nleave_in_queue = TRUE\\n"
            "+Cores = 4\\n+Name = \"w\"\\nqueue\\n'\n"
            "ad = parse_submit(text).job_drafts(1, SubmitContext(cwd='/', owner='a', now=1))[0]\n"
            "print(str(ad).count('\\n'), sorted(m for m in sys.modules if m.startswith('gridtools.classad.')))\n")
    proc = run_bare(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split(" ", 1)[1] == "['gridtools.classad.draft', 'gridtools.classad.values']\n", proc.stdout


def test_a_custom_resource_request_matches_machines_that_offer_enough(tmp_path):
    """request_<name> asks the machine's attribute of that name for at least as much."""
    from gridtools.classad import accepts
    job = cluster_ads("executable = run.sh\nrequest_Foo = 2\nqueue\n", tmp_path)[0]
    assert job.eval("RequestFoo") == 2
    machine = 'Arch = "X86_64"; OpSys = "LINUX"; Disk = 10000000; Memory = 4096; Cpus = 4; ' \
              'FileSystemDomain = "x"; HasFileTransfer = true'
    assert accepts(job, parse_ad(f"[{machine}; Foo = 3]"))
    assert not accepts(job, parse_ad(f"[{machine}; Foo = 1]"))
    assert not accepts(job, parse_ad(f"[{machine}]"))


def test_history_since_completedsince_and_scanlimit_stop_the_scan(tmp_path, monkeypatch):
    """condor_history scans newest first and stops at the ad -since names (a job id, or
    the first ad its expression is true of), at the first job that completed before
    -completedsince, after -scanlimit ads; the ad it stops at is not shown."""
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    from gridtools.daemon import history

    class State:
        def log(self, text):
            raise AssertionError(text)
    history.append(State(), [_job(cluster, proc, CompletionDate=100 + 10 * cluster + proc)
                             for cluster, proc in ((1, 0), (2, 0), (2, 1), (3, 0), (4, 0))])
    env = dict(os.environ, GRIDTOOLS_ROOT=str(tmp_path))

    def shown(*args):
        proc = subprocess.run([os.path.join(REPO, "bin", "condor_history"), "-af:j", "Owner", *args],
                              env=env, capture_output=True, text=True)
        return proc.returncode, proc.stdout.split()[::2], proc.stderr
    assert shown() == (0, ["4.0", "3.0", "2.1", "2.0", "1.0"], "")
    assert shown("-since", "2.1") == (0, ["4.0", "3.0"], "")
    assert shown("-since", "2") == (0, ["4.0", "3.0"], "")          # the cluster's first ad met
    assert shown("-since", "ClusterId < 3") == (0, ["4.0", "3.0"], "")
    assert shown("-completedsince", "121") == (0, ["4.0", "3.0"], "")     # completed on or before
    assert shown("-completedsince", "120 + 2") == (0, ["4.0", "3.0"], "")
    assert shown("-scanlimit", "2", "-constraint", "ClusterId != 4") == (0, ["3.0"], "")
    assert shown("-since", "1.0", "-match", "1") == (0, ["4.0"], "")
    assert shown("-since", "4.0") == (0, [], "")
    assert shown("-since", "2.1", "-completedsince", "131") == (0, ["4.0"], "")    # the last one counts
    code, out, err = shown("-completedsince", "(")
    assert (code, out) == (1, []) and err == "Error: '(' not valid parameter for -completedsince\n"
    code, out, err = shown("-since", "ClusterId <")
    assert (code, out) == (1, []) and err == \
        "Error: invalid -since constraint: ClusterId <\n\tconstraint must be a job-id, or expression.\n"
    xml = subprocess.run([os.path.join(REPO, "bin", "condor_history"), "-xml", "-match", "2"], env=env,
                         capture_output=True, text=True).stdout
    from xml.etree import ElementTree
    ads = ElementTree.fromstring(xml.split("\n", 2)[2]).findall("c")
    assert [[(a.get("n"), a[0].tag, a[0].text) for a in ad.findall("a") if a.get("n") in ("ClusterId", "Owner")]
            for ad in ads] == [[("ClusterId", "i", "4"), ("Owner", "s", "alice")],
                               [("ClusterId", "i", "3"), ("Owner", "s", "alice")]]


def test_private_facts_files_are_written_when_they_change(tmp_path, monkeypatch):
    """Each user's private facts go to spool/private/<uid>, owned by that user, mode 0400,
    rewritten only when they change; a user with none left loses the file, and the files
    an earlier daemon left are removed the first time (for each cell)."""
    from gridtools.spool import status
    monkeypatch.setattr(status, "PRIVATE", status.FolderFiles("private", 0o711))
    for cell_root in (tmp_path / "one", tmp_path / "two"):
        monkeypatch.setenv("GRIDTOOLS_ROOT", str(cell_root))
        folder = cell_root / "spool" / "private"
        folder.mkdir(parents=True)
        (folder / "999").write_bytes(b"left by an earlier daemon")
        status.publish_private({4321: (4322, {7: {"args": ["a"]}}), 4400: (4400, {8: {"args": []}})})
        assert sorted(os.listdir(folder)) == ["4321", "4400"]
        st = os.stat(folder / "4321")
        assert (st.st_uid, st.st_gid, oct(st.st_mode & 0o777)) == (4321, 4322, "0o400")
        status.publish_private({4321: (4322, {7: {"args": ["a"]}}), 4400: (4400, {8: {"args": ["b"]}})})
        assert os.stat(folder / "4321").st_ino == st.st_ino             # unchanged: not rewritten
        assert marshal.loads((folder / "4400").read_bytes()) == {8: {"args": ["b"]}}
        status.publish_private({4400: (4400, {8: {"args": ["b"]}})})
        assert os.listdir(folder) == ["4400"]


def _copying_job(tmp_path):
    """(job, its running task 1, a daemon state to note it in) of an HTCondor job 7 that
    copies its input file in, writing its user log in ``tmp_path``."""
    from gridtools.model.job import Job, TaskState
    (tmp_path / "a").write_text("a\n")
    text = "executable = run.sh\nshould_transfer_files = YES\ntransfer_input_files = a\nlog = job.log\nqueue\n"
    spec = condor_spec.cluster_spec(cluster_ads(text, tmp_path), dict(WHO, id=7, uid=os.getuid(), gid=os.getgid()))
    spec["id"] = 7
    job = Job(spec)
    task = job.task(1)
    task.state, task.start_time, task.host = TaskState.RUNNING, 1700000100.5, "node1"

    class State:
        log = print
        copying_in = {}

        @staticmethod
        def touch(job):
            job.changed()
    return job, task, State()


def test_the_stages_of_a_runs_file_copying_show_as_they_come(tmp_path):
    """TransferInStarted ... TransferOutFinished as HTCondor's shadow sets them: each
    stage when the run reaches it, an earlier run's staying until a later run's replaces
    it; NumInputTransferStarts and NumOutputTransferStarts count the runs that began.
    Each stage newly seen is a file transfer event (040) in the job's user log, dated
    when it happened (the input's naming the host)."""
    from gridtools.model.job import Job
    job, task, state = _copying_job(tmp_path)
    spec = job.spec

    def events():
        from gridtools.formats.condor.userlog import parse_events
        found = parse_events((tmp_path / "job.log").read_text()) if (tmp_path / "job.log").exists() else []
        return [(int(e.type), e.cluster, e.proc, int(e.timestamp), e.info) for e in found]
    host = {"Host": "<127.0.0.1:0?alias=node1>"}
    names = ("TransferInStarted", "TransferInFinished", "NumInputTransferStarts",
             "TransferOutStarted", "TransferOutFinished", "NumOutputTransferStarts")

    def shown():
        ad = condorjob.proc_ad(job, 1)
        return [ad.eval(name) if name in ad else None for name in names]
    assert shown() == [None] * 6 and condorjob._moves_files(job, 1)
    assert condorjob._note_stages(state, job, task, {"in_started": 1700000101})
    assert shown() == [1700000101, None, 1] + [None] * 3
    assert events() == [(40, 7, 0, 1700000101, {"Type": 2} | host)]
    stages = {"in_started": 1700000101, "in_finished": 1700000102}
    assert condorjob._note_stages(state, job, task, stages)
    assert not condorjob._note_stages(state, job, task, stages)        # (nothing new)
    assert shown() == [1700000101, 1700000102, 1] + [None] * 3
    stages.update(out_started=1700000110)
    assert condorjob._note_stages(state, job, task, stages)
    assert shown() == [1700000101, 1700000102, 1, 1700000110, None, 1]
    stages.update(out_finished=1700000111)
    condorjob._note_stages(state, job, task, stages)
    assert shown() == [1700000101, 1700000102, 1, 1700000110, 1700000111, 1]
    assert [e[3:] for e in events()] == [(1700000101, {"Type": 2} | host), (1700000102, {"Type": 3}),
                                         (1700000110, {"Type": 5}), (1700000111, {"Type": 6})]
    # the next run: what began before it is an earlier run's; its own replace them one by one
    task.start_time = 1700000120.0
    assert not condorjob._note_stages(state, job, task, stages)
    assert condorjob._note_stages(state, job, task, {"in_started": 1700000121})
    assert shown() == [1700000121, 1700000102, 2, 1700000110, 1700000111, 1]
    condorjob.note_transfers(state, job, task, {"transfer_input": [1700000121, 1700000122],
                                         "transfer_output": [1700000130, 1700000131]})
    assert shown() == [1700000121, 1700000122, 2, 1700000130, 1700000131, 2]
    assert [e[3:] for e in events()][4:] == [(1700000121, {"Type": 2} | host), (1700000122, {"Type": 3}),
                                             (1700000130, {"Type": 5}), (1700000131, {"Type": 6})]
    ad = condorjob.proc_ad(job, 1)
    assert (ad.eval("JobCurrentStartTransferOutputDate"), ad.eval("JobCurrentFinishTransferOutputDate")) == \
        (1700000130, 1700000131)
    assert "TransferInQueued" not in ad and "TransferOutQueued" not in ad
    plain = Job(dict(spec, condor_ad=spec["condor_ad"].replace('ShouldTransferFiles = "YES"',
                                                               'ShouldTransferFiles = "NO"')))
    assert not condorjob._moves_files(plain, 1)


def test_a_run_whose_copying_ends_in_the_second_an_earlier_runs_did_has_its_own_end_events(tmp_path):
    """A run that starts, copies its files and ends within the second the run before it
    ended in: each stage of it is a file transfer event of its own, although the times
    equal the earlier run's (its copying out seen begun while it runs, then ended with
    its result), and the ad shows its times."""
    from gridtools.formats.condor.userlog import parse_events
    job, task, state = _copying_job(tmp_path)

    def events():
        found = parse_events((tmp_path / "job.log").read_text())
        return [(int(e.timestamp), e.info["Type"]) for e in found if int(e.type) == 40]
    t = 1700000110
    condorjob.note_transfers(state, job, task, {"transfer_input": [t - 9, t - 9], "transfer_output": [t, t]})
    assert events() == [(t - 9, 2), (t - 9, 3), (t, 5), (t, 6)]
    task.start_time = float(t)                          # the next run, in the same second
    condorjob._note_stages(state, job, task, {"in_started": t, "in_finished": t, "out_started": t})
    assert events()[4:] == [(t, 2), (t, 3), (t, 5)]
    condorjob.note_transfers(state, job, task, {"transfer_input": [t, t], "transfer_output": [t, t]})
    assert events()[4:] == [(t, 2), (t, 3), (t, 5), (t, 6)]
    condorjob.note_transfers(state, job, task, {"transfer_input": [t, t], "transfer_output": [t, t]})
    assert len(events()) == 8                           # (nothing new)
    ad = condorjob.proc_ad(job, 1)
    assert [ad.eval(n) for n in ("TransferOutStarted", "TransferOutFinished", "NumOutputTransferStarts")] == \
        [t, t, 2]


def test_a_job_that_copies_its_input_executes_once_the_files_are_in(tmp_path):
    """As HTCondor's shadow logs it: the execute event (001) of a run that copies its input
    files in follows the events of their copying (040), dated when they were in; a run
    stopped before they were in never executed (no 001). A job that copies nothing
    executes when it starts."""
    from gridtools.formats.condor.userlog import parse_events
    from gridtools.model.job import Job, TaskState
    job, task, state = _copying_job(tmp_path)
    spec = job.spec

    def events():
        path = tmp_path / "job.log"
        return [(int(e.type), int(e.timestamp), e.info.get("Type"), e.info.get("SlotName"))
                for e in (parse_events(path.read_text()) if path.exists() else [])]
    condorjob.started(state, job, 1, task.start_time, "slot1@node1")
    assert events() == [] and list(state.copying_in) == [(7, 1)]
    condorjob._note_stages(state, job, task, {"in_started": 1700000101})
    assert events() == [(40, 1700000101, 2, None)]
    condorjob._note_stages(state, job, task, {"in_started": 1700000101, "in_finished": 1700000103})
    assert events() == [(40, 1700000101, 2, None), (40, 1700000103, 3, None), (1, 1700000103, None, "slot1@node1")]
    condorjob.note_transfers(state, job, task, {"transfer_input": [1700000101, 1700000103]})
    assert len(events()) == 3 and state.copying_in == {}
    # the next run is stopped while its files are copied in: it never executed
    task.start_time = 1700000200.0
    condorjob.started(state, job, 1, task.start_time, "slot1@node1")
    condorjob._note_stages(state, job, task, {"in_started": 1700000201})
    condorjob.note_transfers(state, job, task, {})
    assert events()[3:] == [(40, 1700000201, 2, None)] and state.copying_in == {}
    assert condorjob.EXECUTE_DUE not in condorjob.info_of(job, 1)
    # the run after it could not copy them in: it never executed either
    task.start_time = 1700000250.0
    condorjob.started(state, job, 1, task.start_time, "slot1@node1")
    condorjob.note_transfers(state, job, task, {"transfer_input": [1700000251, 1700000252],
                                                "start_failure": {"step": "transfer_input"}})
    assert events()[4:] == [(40, 1700000251, 2, None), (40, 1700000252, 3, None)]
    # one that copies nothing
    plain = Job(dict(spec, condor_ad=spec["condor_ad"].replace('ShouldTransferFiles = "YES"',
                                                               'ShouldTransferFiles = "NO"')))
    other = plain.task(1)
    other.state, other.start_time, other.host = TaskState.RUNNING, 1700000300.0, "node1"
    condorjob.started(state, plain, 1, other.start_time, "slot1@node1")
    assert events()[6:] == [(1, 1700000300, None, "slot1@node1")] and state.copying_in == {}


def test_the_runs_of_a_job_count_those_begun_and_those_that_executed(tmp_path):
    """NumShadowStarts and JobRunCount count a proc's runs begun, as HTCondor's schedd
    counts its shadows; NumJobStarts only those whose job began to execute: a run that
    copies its input files in executes once they are in, and one stopped before, or
    whose files could not be copied in (its start failed), never did. Neither of the
    first two is there before the first run; a scheduler universe job (no shadow) has
    JobRunCount alone."""
    from gridtools.model.job import Job, TaskState
    job, task, state = _copying_job(tmp_path)
    names = ("NumJobStarts", "NumShadowStarts", "JobRunCount")

    def counts(which=job, number=1):
        ad = condorjob.proc_ad(which, number)
        return tuple(ad.eval(name) if name in ad else None for name in names)

    def back_to_the_queue():
        task.state, task.restarted = TaskState.PENDING, task.restarted + 1
    waiting = job.task(1)
    waiting.state, waiting.start_time = TaskState.PENDING, None
    assert counts() == (0, None, None)
    # the first run copies its files in, then its job executes
    task.state, task.start_time = TaskState.RUNNING, 1700000100.0
    condorjob.started(state, job, 1, task.start_time, "slot1@node1")
    assert counts() == (0, 1, 1)
    condorjob._note_stages(state, job, task, {"in_started": 1700000101, "in_finished": 1700000102})
    assert counts() == (1, 1, 1)
    condorjob.note_transfers(state, job, task, {"transfer_input": [1700000101, 1700000102]})
    back_to_the_queue()
    assert counts() == (1, 1, 1)
    # the second is stopped while its files are copied in
    task.state, task.start_time = TaskState.RUNNING, 1700000200.0
    condorjob.started(state, job, 1, task.start_time, "slot1@node1")
    condorjob.note_transfers(state, job, task, {})
    back_to_the_queue()
    assert counts() == (1, 2, 2)
    # the third cannot copy them in: its start failed (the task waits in the error state)
    task.state, task.start_time = TaskState.RUNNING, 1700000300.0
    condorjob.started(state, job, 1, task.start_time, "slot1@node1")
    condorjob.note_transfers(state, job, task, {"start_failure": {"step": "transfer_input"}})
    task.state, task.start_time = TaskState.ERROR, 0.0
    condorjob.failed_to_start(state, job, 1, ["cannot copy", 13, 2], 1700000301)
    assert counts() == (1, 3, 3)
    task.state = TaskState.PENDING                      # (its error cleared)
    assert counts() == (1, 3, 3)
    # the fourth executes and ends with its job's exit
    task.state, task.start_time = TaskState.RUNNING, 1700000400.0
    condorjob.started(state, job, 1, task.start_time, "slot1@node1")
    assert counts() == (1, 4, 4)
    condorjob._note_stages(state, job, task, {"in_started": 1700000401, "in_finished": 1700000402})
    assert counts() == (2, 4, 4)
    task.state, task.exit_status, task.end_time = TaskState.FINISHED, 0, 1700000410.0
    condorjob.note_transfers(state, job, task, {})
    assert counts() == (2, 4, 4)
    # a job that copies nothing executes as each run begins; a scheduler universe job has no shadow
    for universe, expected in (("vanilla", (1, 1, 1)), ("scheduler", (1, None, 1))):
        spec = condor_spec.cluster_spec(cluster_ads(f"universe = {universe}\nexecutable = /bin/true\nqueue\n",
                                                    tmp_path), dict(WHO, id=8, uid=os.getuid(), gid=os.getgid()))
        spec["id"] = 8
        other = Job(spec)
        run = other.task(1)
        run.state, run.start_time, run.host = TaskState.RUNNING, 1700000300.0, "node1"
        condorjob.started(state, other, 1, run.start_time, "slot1@node1")
        assert counts(other) == expected, universe


def test_a_transfers_file_reads_only_as_its_shepherd_writes_it(tmp_path, monkeypatch):
    """The daemon reads a running task's ``transfers`` file: what its shepherd wrote
    reads back; anything else (an unknown stage, a digit that is not ASCII) reads as
    nothing noted, and never stops the reading with an error."""
    from gridtools.spool import jobs as jobstore
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    folder = tmp_path / "spool" / "jobs" / "7" / "1"
    folder.mkdir(parents=True)
    jobstore.write_transfers(str(folder), {"in_started": 1700000101, "in_finished": 1700000102})
    assert jobstore.read_transfers(7, 1) == {"in_started": 1700000101, "in_finished": 1700000102}
    for text in ("in_started \u00b2\n", "in_started 1\nlater 2\n", "in_started -1\n"):
        (folder / jobstore.TRANSFERS_FILE).write_text(text)
        assert jobstore.read_transfers(7, 1) is None
    assert jobstore.read_transfers(7, 2) is None


@pytest.mark.parametrize("body, error", [
    ("dagman_job_id = -1", "ERROR: dagman_job_id=-1 is invalid, must eval to a non-negative integer."),
    ("job_machine_attrs_history_length = -1",
     "ERROR: job_machine_attrs_history_length=-1 is out of bounds 0 to 2147483647"),
    ("cuda_version = 11.x", "ERROR: cuda_version must be of the form 'x' or 'x.y', where x and y are positive integers."),
    ("concurrency_limits = a\nconcurrency_limits_expr = \"b\"",
     "ERROR: concurrency_limits and concurrency_limits_expr can't be used together"),
    ("container_image = shub://x", "ERROR: 'shub://x' is not a valid container image"),
    ("container_image = a.sif\nshould_transfer_files = NO",
     'ERROR: you specified files you want Condor to transfer via "transfer_input_files", but you disabled '
     "should_transfer_files."),
    ("universe = 1", "ERROR: 'Standard' is not a supported universe."),
    ("universe = 14", "ERROR: 'Unknown' is not a supported universe."),
    ("universe = 0", "ERROR: I don't know about the '0' universe."),
    ("transfer_input_files = s3://b/k", "ERROR: [s3|gs]:// URLs require [s3|aws|gs]_access_key_id_file to be set.\n"
     "ERROR: [s3|gs]:// URLS require [s3|aws|gs]_secret_access_key_file to be set."),
])
def test_refusals_in_htcondor_s_words(tmp_path, body, error):
    from gridtools.errors import InputError
    with pytest.raises(InputError) as caught:
        cluster_ads(f"executable = run.sh\n{body}\nqueue\n", tmp_path)
    assert str(caught.value) == error


def test_universe_numbers_and_getenv_words_read_as_htcondor_reads_them(tmp_path):
    from gridtools.formats.condor.moreattrs import boolean_param
    assert [cluster_ads(f"executable = run.sh\nuniverse = {u}\nqueue\n", tmp_path)[0].eval("JobUniverse")
            for u in ("5%", "7.0", "+12", "05")] == [5, 7, 12, 5]
    assert [boolean_param(t) for t in ("true", "1 ", "FALSE", "0", "7.0", "2+3", "0.0", "yes", "1x", "GT_A")] == \
        [True, True, False, False, True, True, False, None, None, None]


def test_tokens_credentials_and_tool_daemons(tmp_path):
    from gridtools.errors import InputError
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    environ = {"HOME": str(tmp_path)}

    def ads_of(body):
        ctx = SubmitContext(cwd=str(tmp_path), owner="alice", now=1700000000, files=LocalFiles(str(tmp_path)),
                            environ=environ)
        return parse_submit(f"executable = run.sh\n{body}\nqueue\n").job_ads(7, ctx)[0]
    with pytest.raises(InputError) as caught:
        ads_of("docker_send_credentials = true")
    assert str(caught.value) == (f"ERROR: ERROR: Cannot locate docker credentials file {tmp_path}/.docker/config.json: "
                                 "No such file or directory")
    (tmp_path / ".docker").mkdir()
    (tmp_path / ".docker" / "config.json").write_text("{}")
    assert ads_of("docker_send_credentials = true").eval("DockerSendCredentials") is True
    with pytest.raises(InputError) as caught:
        ads_of("use_scitokens = true")
    assert "No Scitokens filename specified" in str(caught.value)
    assert "ScitokensFile" not in ads_of("use_scitokens = auto")
    environ["BEARER_TOKEN_FILE"] = "tok"
    assert ads_of("use_scitokens = auto").eval("ScitokensFile") == str(tmp_path / "tok")
    assert "ScitokensFile" not in ads_of("use_scitokens = false\nscitokens_file = t")
    ad = ads_of("tool_daemon_cmd = td\ntool_daemon_output = o\nstarter_log = s.log")
    assert (ad.eval("ToolDaemonCmd"), ad.eval("ToolDaemonOutput"), ad.eval("JobStarterLog"),
            ad.eval("JobStarterDebug")) == ("td", "o", str(tmp_path / "s.log"), True)
    assert "TARGET.HasTDP" in ad.lookup("Requirements").unparse()


def test_oauth_services_once_each_and_sorted(tmp_path):
    ad = cluster_ads("executable = run.sh\nuse_oauth_services = box, Dropbox box,scitokens\nqueue\n", tmp_path)[0]
    assert ad.eval("OAuthServicesNeeded") == "box,Dropbox,scitokens"


def test_a_checkpoint_is_whole_whenever_its_writer_dies(tmp_path):
    """Self-checkpoints are written aside and renamed once whole; a shepherd killed while
    writing one leaves the last whole one, which the next run starts from."""
    from gridtools.exec import transfer
    scratch, store = tmp_path / "scratch", tmp_path / "store"
    scratch.mkdir()
    store.mkdir()
    plan = {"uid": os.getuid(), "gid": os.getgid(), "owner": "root", "cwd": str(scratch),
            "scratch": {"iwd": str(tmp_path), "input": []}, "self_checkpoint": {"code": 85, "files": ["ck"],
                                                                              "store": str(store)}}
    for n in ("1", "2"):
        (scratch / "ck").write_text(n)
        assert transfer.save_checkpoint(plan, str(store)) == (True, "")
    kept = [p.name for p in store.iterdir()]
    assert len(kept) == 1 and kept[0].startswith("kept.") and (store / kept[0] / "ck").read_text() == "2"
    (store / "next").mkdir()                    # (a writer killed half-way through the next one)
    (store / "next" / "ck").write_text("partial")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    plan["cwd"] = str(fresh)
    assert transfer.stage_in(plan)[0]
    assert (fresh / "ck").read_text() == "2"


def test_a_context_that_collects_factories_makes_clusters_materialized_late():
    """A context that collects the clusters materialized late (max_materialize or max_idle)
    refuses a second queue statement for them; one that does not builds every proc, as
    without them. The limit is max_materialize, never more than the procs."""
    from gridtools.errors import InputError
    from gridtools.formats.condor.jobad import SubmitContext
    from gridtools.formats.condor.submit import parse_submit
    text = "executable = /bin/true\nmax_materialize = 2\nqueue 3\nqueue x in (a, b)\n"
    plain = SubmitContext(cwd="/tmp", owner="alice", now=1700000000)
    assert len(parse_submit(text).job_drafts(7, plain)) == 5
    late = SubmitContext(cwd="/tmp", owner="alice", now=1700000000)
    late.factories = {}
    with pytest.raises(InputError, match="on Line 4 of submit file: Extra data found after queue statement"):
        parse_submit(text).job_drafts(7, late)
    late.factories = {}
    parse_submit(text.replace("max_materialize = 2", "max_idle = 1").rpartition("queue x")[0]).job_drafts(7, late)
    assert late.factories == {7: (3, 0)}
    late.factories = {}
    parse_submit("executable = /bin/true\nmax_materialize = 4\nqueue x in (a, b, c)\n").job_drafts(8, late)
    assert late.factories == {8: (3, 3)}
    late.factories = {}
    parse_submit("executable = /bin/true\nmax_materialize = 0\nqueue 0\n").job_drafts(9, late)
    assert late.factories == {9: (1, 0)}


@pytest.mark.parametrize("mode, text, factories", [
    (0, "queue 2\n", {}),
    (1, "queue\n", {7: (1, 0)}),                  # -factory: every cluster
    (3, "queue\n", {}),                           # SUBMIT_FACTORY_JOBS_BY_DEFAULT: of 2 procs or more
    (3, "queue 2\n", {7: (2, 0)}),
    (3, "queue x in (a, b)\n", {7: (2, 2)}),
    (3, "queue\nqueue 2\n", {}),                  # the first queue statement decides
    (0, "queue\nmax_materialize = 1\nqueue 2\n", {}),
])
def test_the_first_queue_statement_decides_whether_a_cluster_is_a_factory(mode, text, factories):
    from gridtools.formats.condor.jobad import SubmitContext
    from gridtools.formats.condor.submit import parse_submit
    ctx = SubmitContext(cwd="/tmp", owner="alice", now=1700000000)
    ctx.factories, ctx.factory = {}, mode
    parse_submit("executable = /bin/true\n" + text).job_drafts(7, ctx)
    assert ctx.factories == factories


def test_one_queue_refuses_anything_after_the_first_queue_statement():
    """SUBMIT_PREVENT_MULTI_QUEUE, as HTCondor words it; comments and blank lines pass."""
    from gridtools.errors import InputError
    from gridtools.formats.condor.jobad import SubmitContext
    from gridtools.formats.condor.submit import parse_submit
    ctx = SubmitContext(cwd="/tmp", owner="alice", now=1700000000)
    ctx.one_queue = True
    assert len(parse_submit("executable = /bin/true\nqueue 2\n# end\n\n").job_drafts(7, ctx)) == 2
    with pytest.raises(InputError, match="on Line 3 of submit file: Extra data found after queue statement"):
        parse_submit("executable = /bin/true\nqueue 2\nqueue\n").job_drafts(7, ctx)


def test_transfer_output_remaps_are_read_as_htcondors_file_transfer_reads_them():
    from gridtools.exec.transfer import remap_rules
    assert remap_rules(' a.txt = res/a.txt ;b=\tfile:///x/b ; no equals here ; c\\=d = e\\;f;\n') == [
        ("a.txt", "res/a.txt"), ("b", "file:///x/b"), ("c=d", "e;f")]
    # "\\;" in a name is no escape: the part up to it has no "=", and is skipped
    assert remap_rules("c\\;d = e\\=f") == [("d", "e\\=f")]
    assert remap_rules("") == [] and remap_rules("a = b") == [("a", "b")]


def test_a_remap_goes_on_through_the_rules_and_a_folders_rule_maps_its_files():
    from gridtools.exec.transfer import RemapLoop, remap, remap_rules
    rules = remap_rules("a = b; b = c/d; out = /data/out; x = y; y = x")
    assert remap(rules, "a") == "c/d"                  # a -> b -> c/d
    assert remap(rules, "out/part1") == "/data/out/part1"
    assert remap(rules, "other") is None
    with pytest.raises(RemapLoop):
        remap(rules, "x")


def test_a_job_s_plugin_table_is_read_as_htcondor_reads_transfer_plugins():
    """Entries split at ``;``, methods at commas, paths trimmed and made absolute from the
    initial directory; an entry without ``=`` is left out."""
    from gridtools.exec import movers
    assert movers.plugin_table(" osdf,Stash = p/osdf.py ;bad; box=/opt/box ;", "/home/u") == {
        "osdf": "/home/u/p/osdf.py", "stash": "/home/u/p/osdf.py", "box": "/opt/box"}
    assert movers.plugin_table("", "/x") == {}


def test_a_plugin_s_answers_are_read_as_a_sequence_of_bracketed_ads():
    """One or several to a line, or each over several lines; a bracket in a string is text."""
    from gridtools.classad.parser import parse_bracketed_ads
    ads_read = parse_bracketed_ads('[ a = "x]\\"[" ] [ b = [ c = 1 ] ]\n[\n  TransferSuccess = true;\n]\n')
    assert [sorted(ad.keys()) for ad in ads_read] == [["a"], ["b"], ["TransferSuccess"]]
    assert ads_read[0].eval("a") == 'x]"[' and ads_read[2].eval("TransferSuccess") is True


def test_a_plugin_that_fails_says_why_in_htcondor_s_words(tmp_path):
    """Its exit status, and the error of the transfer it says failed."""
    from gridtools.exec import movers
    plugin = tmp_path / "p.sh"
    plugin.write_text('#!/bin/sh\nout=$4\necho \'[ TransferSuccess = false; TransferError = "gone"; '
                      'TransferUrl = "box://a/b" ]\' > "$out"\nexit 7\n')
    plugin.chmod(0o755)
    with pytest.raises(OSError) as failed:
        movers.run_plugin(str(plugin), [("box://a/b", str(tmp_path / "b"))], str(tmp_path))
    assert failed.value.errno == 7
    assert failed.value.strerror == (f"FILETRANSFER:1:non-zero exit (7) from {plugin}. "
                                     "|Error: gone ( URL file = box://a/b )|")
    assert sorted(os.listdir(tmp_path)) == ["p.sh"]             # (its files are gone)
    plugin.write_text('#!/bin/sh\nexit 0\n')
    with pytest.raises(OSError, match="did not transfer every file"):
        movers.run_plugin(str(plugin), [("box://a/b", str(tmp_path / "b"))], str(tmp_path))


def test_a_run_s_figures_are_htcondor_s_from_the_shepherd_s_samples():
    """ImageSize from the peak virtual memory, ResidentSetSize and MemoryUsage (rounded up)
    from the peak resident memory (the larger of the samples' and the exit's), the
    virtual memory's when no resident figure is known; CpusUsage the CPU time over the
    run's length; a figure that is not a finite number counts as none."""
    from gridtools.jobads import memory_figures, run_figures
    assert memory_figures({"maxvmem": 10 << 20, "maxrss": 3 << 20, "ru_maxrss": 2048}) == {
        "ImageSize": 10240, "ResidentSetSize": 3072, "MemoryUsage": 3}
    assert memory_figures({"maxvmem": (5 << 20) + 1}) == {"ImageSize": 5120, "MemoryUsage": 6}
    assert memory_figures({"maxvmem": float("inf"), "ru_maxrss": 1025}) == {"ResidentSetSize": 1025,
                                                                             "MemoryUsage": 2}
    assert memory_figures(None) == {} and run_figures({"cpu": 3.0}, 0) == {}
    assert run_figures({"cpu": 3.0}, 4)["CpusUsage"] == 0.75
    assert run_figures({"cpu": 9.0, "ru_utime": 1.5, "ru_stime": 0.5}, 4)["CpusUsage"] == 0.5   # (at the end)
