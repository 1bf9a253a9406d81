"""The job event log: events written as HTCondor writes them, read back by
gridtools and by HTCondor's own JobEventLog."""

import os
import subprocess
import sys
import time

import pytest

from gridtools.errors import InputError
from gridtools.formats.condor.userlog import (
    DateStyle, Event, EventType as E, all_done, job_outcomes, parse_events, render_event,
    render_events)

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "data", "condor_userlog", "events.log")
T0 = 1700000000


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def sample():
    return [
        Event(E.SUBMIT, 7, 0, 0, T0, {"SubmitHost": "<127.0.0.1:9618>", "LogNotes": "DAG Node: A"}),
        Event(E.EXECUTE, 7, 0, 0, T0 + 5, {"ExecuteHost": "<127.0.0.1:9618>", "SlotName": "slot1@h"}),
        Event(E.IMAGE_SIZE, 7, 0, 0, T0 + 6, {"Size": 43, "MemoryUsage": 1, "ResidentSetSize": 1012}),
        Event(E.JOB_EVICTED, 7, 0, 0, T0 + 7, {}),
        Event(E.JOB_HELD, 7, 0, 0, T0 + 8, {"HoldReason": "via condor_hold (by user alice)",
                                            "HoldReasonCode": 1, "HoldReasonSubCode": 0}),
        Event(E.JOB_RELEASED, 7, 0, 0, T0 + 9, {"Reason": "via condor_release (by user alice)"}),
        Event(E.JOB_TERMINATED, 7, 0, 0, T0 + 10, {"ReturnValue": 3, "RunRemoteUserCpu": 3723}),
        Event(E.JOB_TERMINATED, 7, 1, 0, T0 + 10, {"TerminatedNormally": False,
                                                   "TerminatedBySignal": 9}),
        Event(E.JOB_ABORTED, 7, 2, 0, T0 + 11, {"Reason": "via condor_rm (by user alice)"}),
        Event(E.JOB_AD_INFORMATION, 7, 0, 0, T0 + 12, {"JobStatus": 4, "Owner": "alice"}),
        Event(E.JOB_SUSPENDED, 7, 0, 0, T0 + 13, {"NumberOfPIDs": 1}),
        Event(E.JOB_UNSUSPENDED, 7, 0, 0, T0 + 14, {}),
    ]


def test_events_are_written_as_committed():
    with open(EXPECTED) as handle:
        assert render_events(sample()) == handle.read()


def test_header_and_terminated_body():
    text = render_event(sample()[6])
    lines = text.splitlines()
    assert lines[0] == "005 (007.000.000) 2023-11-14 22:13:30 Job terminated."
    assert lines[1] == "\t(1) Normal termination (return value 3)"
    assert lines[2] == "\t\tUsr 0 01:02:03, Sys 0 00:00:00  -  Run Remote Usage"
    assert lines[-1] == "..."


def test_short_dates_have_no_year():
    assert render_event(sample()[0], DateStyle.SHORT).startswith("000 (007.000.000) 11/14 22:13:20 ")


def test_round_trip_keeps_types_ids_times_and_details():
    events = sample()
    back = parse_events(render_events(events))
    assert [(e.type, e.cluster, e.proc, e.timestamp) for e in back] == \
        [(e.type, e.cluster, e.proc, e.timestamp) for e in events]
    assert back[6].info["ReturnValue"] == 3 and back[6].info["TerminatedNormally"] is True
    assert back[6].info["RunRemoteUserCpu"] == 3723
    assert back[7].info["TerminatedBySignal"] == 9
    assert back[4].info == events[4].info
    assert back[0].info == events[0].info
    assert back[9].info == {"JobStatus": 4, "Owner": "alice"}


def test_reader_takes_every_date_form_and_skips_an_unfinished_event():
    text = ("000 (001.000.000) 11/14/23 22:13:20 Job submitted from host: <h>\n...\n"
            "001 (001.000.000) 11/14 22:13:21 Job executing on host: <h>\n...\n"
            "005 (001.000.000) 2023-11-14T22:13:22 Job terminated.\n\t(1) Normal")
    events = parse_events(text)
    assert [e.type for e in events] == [E.SUBMIT, E.EXECUTE]
    assert events[0].timestamp == T0


def test_garbage_is_an_error():
    with pytest.raises(InputError, match="not an event header"):
        parse_events("hello\n...\n")


def test_condor_wait_view():
    events = parse_events(render_events(sample()[:1] + [
        Event(E.SUBMIT, 7, 1, 0, T0), Event(E.JOB_TERMINATED, 7, 0, 0, T0)]))
    assert job_outcomes(events) == {(7, 0): E.JOB_TERMINATED, (7, 1): E.SUBMIT}
    assert not all_done(events)
    assert all_done(events, proc=0)
    assert not all_done(events, cluster=8)


def _oracle_python():
    python = os.environ.get("GRIDTOOLS_HTCONDOR2_PYTHON", sys.executable)
    probe = subprocess.run([python, "-c", "import htcondor2"], capture_output=True)
    return python if probe.returncode == 0 else None


_READ = r"""
import sys, warnings
warnings.simplefilter("ignore")
import htcondor2
for e in htcondor2.JobEventLog(sys.argv[1]).events(stop_after=0):
    print(int(e.type), e.cluster, e.proc, e.timestamp, e.get("ReturnValue"),
          e.get("TerminatedBySignal"), e.get("HoldReasonCode"), e.get("Reason") or e.get("HoldReason"))
"""


def _htcondor_reads(tmp_path, events, program):
    """The lines ``program`` (run by an interpreter with htcondor2) prints of a log of
    ``events``; the test is skipped where the package is missing."""
    python = _oracle_python()
    if python is None:
        pytest.skip("the htcondor package (htcondor2) is not installed")
    path = tmp_path / "job.log"
    path.write_text(render_events(events))
    proc = subprocess.run([python, "-c", program, str(path)], capture_output=True, text=True,
                          env=dict(os.environ, TZ="UTC", CONDOR_CONFIG="/dev/null"))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_htcondor_reads_the_log(tmp_path):
    rows = [line.split(" ", 7) for line in _htcondor_reads(tmp_path, sample(), _READ)]
    want = sample()
    assert [(int(r[0]), int(r[1]), int(r[2]), int(r[3])) for r in rows] == \
        [(int(e.type), e.cluster, e.proc, int(e.timestamp)) for e in want]
    assert rows[6][4] == "3" and rows[7][5] == "9" and rows[4][6] == "1"
    assert rows[8][7] == "via condor_rm (by user alice)"


def requeued():
    """Two procs that exited and were put back by their own policy: one with a return
    value, one killed by a signal."""
    why = "The job attribute OnExitRemove expression 'ExitCode == 0' evaluated to FALSE"
    return [Event(E.JOB_EVICTED, 9, 0, 0, T0, {"TerminatedAndRequeued": True, "ReturnValue": 3,
                                                "RunRemoteUserCpu": 61, "Reason": why}),
            Event(E.JOB_EVICTED, 9, 1, 0, T0 + 1, {"TerminatedAndRequeued": True, "TerminatedNormally": False,
                                                    "TerminatedBySignal": 9})]


def test_terminated_and_requeued_is_written_as_htcondor_writes_it():
    lines = render_event(requeued()[0]).splitlines()
    assert lines == [
        "004 (009.000.000) 2023-11-14 22:13:20 Job was evicted.",
        "\t(0) Job terminated and was requeued",
        "\t\tUsr 0 00:01:01, Sys 0 00:00:00  -  Run Remote Usage",
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage",
        "\t0  -  Run Bytes Sent By Job",
        "\t0  -  Run Bytes Received By Job",
        "\t(1) Normal termination (return value 3)",
        "\tThe job attribute OnExitRemove expression 'ExitCode == 0' evaluated to FALSE",
        "..."]
    killed = render_event(requeued()[1]).splitlines()
    assert killed[6:8] == ["\t(0) Abnormal termination (signal 9)", "\t(0) No core file"]
    back = parse_events(render_events(requeued()))
    assert back[0].info["TerminatedAndRequeued"] is True and back[0].info["ReturnValue"] == 3
    assert back[0].info["Reason"] == requeued()[0].info["Reason"]
    assert back[0].info["RunRemoteUserCpu"] == 61
    assert (back[1].info["TerminatedNormally"], back[1].info["TerminatedBySignal"]) == (False, 9)
    plain = parse_events(render_event(sample()[3]))[0]
    assert "TerminatedAndRequeued" not in plain.info


_READ_REQUEUED = r"""
import sys, warnings
warnings.simplefilter("ignore")
import htcondor2
for e in htcondor2.JobEventLog(sys.argv[1]).events(stop_after=0):
    print(int(e.type), e.proc, e.get("TerminatedAndRequeued"), e.get("TerminatedNormally"),
          e.get("ReturnValue"), e.get("TerminatedBySignal"), e.get("Reason"))
"""


def test_htcondor_reads_terminated_and_requeued(tmp_path):
    rows = [line.split(" ", 6) for line in _htcondor_reads(tmp_path, requeued(), _READ_REQUEUED)]
    assert rows[0] == ["4", "0", "True", "True", "3", "None", requeued()[0].info["Reason"]]
    assert rows[1][:6] == ["4", "1", "True", "False", "None", "9"]


def test_post_script_terminated_is_written_as_dagman_writes_it_and_read_back():
    events = [Event(E.POST_SCRIPT_TERMINATED, 7, 0, 0, T0, {"ReturnValue": 2, "DAGNodeName": "A"}),
              Event(E.POST_SCRIPT_TERMINATED, 8, 0, 0, T0, {"TerminatedNormally": False,
                                                            "TerminatedBySignal": 15, "DAGNodeName": "B"})]
    text = render_events(events)
    assert text.splitlines()[:4] == ["016 (007.000.000) 2023-11-14 22:13:20 POST Script terminated.",
                                     "\t(1) Normal termination (return value 2)", "    DAG Node: A", "..."]
    assert "\t(0) Abnormal termination (signal 15)\n" in text
    back = parse_events(text)
    assert back[0].info == {"TerminatedNormally": True, "ReturnValue": 2, "DAGNodeName": "A"}
    assert back[1].info == {"TerminatedNormally": False, "TerminatedBySignal": 15, "DAGNodeName": "B"}


_READ_POST = r"""
import sys, warnings
warnings.simplefilter("ignore")
import htcondor2
for e in htcondor2.JobEventLog(sys.argv[1]).events(stop_after=0):
    print(int(e.type), e.cluster, dict(e.items()).get("DAGNodeName"), e.get("ReturnValue"), e.get("TerminatedBySignal"))
"""


def test_htcondor_reads_the_post_script_events(tmp_path):
    events = [Event(E.POST_SCRIPT_TERMINATED, 7, 0, 0, T0, {"ReturnValue": 2, "DAGNodeName": "A"}),
              Event(E.POST_SCRIPT_TERMINATED, 8, 0, 0, T0, {"TerminatedNormally": False,
                                                            "TerminatedBySignal": 15, "DAGNodeName": "B"})]
    assert _htcondor_reads(tmp_path, events, _READ_POST) == ["16 7 A 2 None", "16 8 B None 15"]


def pre_skips():
    return [Event(E.PRE_SKIP, 0, 2147483647, 1, T0, {"SkipEventLogNotes": "DAG Node: B"})]


def test_pre_skip_is_written_as_dagman_writes_it_and_read_back():
    """HTCondor's DAGMan's PRE_SKIP event (034): a fixed line, then the node's note."""
    text = render_events(pre_skips())
    assert text.splitlines() == [
        "034 (000.2147483647.001) 2023-11-14 22:13:20 PRE script return value is PRE_SKIP value",
        "    DAG Node: B", "..."]
    back = parse_events(text)
    assert (back[0].type, back[0].cluster, back[0].proc, back[0].subproc) == (E.PRE_SKIP, 0, 2147483647, 1)
    assert back[0].info == {"SkipEventLogNotes": "DAG Node: B"}
    assert job_outcomes(back) == {}                 # no job of condor_wait's


_READ_PRE_SKIP = r"""
import sys, warnings
warnings.simplefilter("ignore")
import htcondor2
for e in htcondor2.JobEventLog(sys.argv[1]).events(stop_after=0):
    print(int(e.type), e.cluster, e.proc, e.get("SkipEventLogNotes"))
"""


def test_htcondor_reads_the_pre_skip_event(tmp_path):
    assert _htcondor_reads(tmp_path, pre_skips(), _READ_PRE_SKIP) == ["34 0 2147483647 DAG Node: B"]


# ------------------------------------------------ the job ads condor_q -userlog rebuilds

def _ads(events):
    from gridtools.cli.condor import logads
    return {f"{ad.eval('ClusterId')}.{ad.eval('ProcId')}": ad
            for ad in logads.job_ads(events, "/x/job.log", "alice", T0 + 100)}


def test_job_ads_from_the_events_as_htcondor_rebuilds_them():
    ads = _ads([Event(E.SUBMIT, 7, 2, 0, T0 - 1, {}), Event(E.SUBMIT, 7, 1, 0, T0 - 1, {})] + sample()
               + [Event(E.EXECUTE, 8, 0, 0, T0, {})])
    assert sorted(ads) == ["7.0", "7.1", "7.2"]          # 8.0: its submit event is not in the log
    first = ads["7.0"]
    assert first.eval("Owner") == "alice" and first.eval("Cmd") == "???"
    assert first.eval("QDate") == T0 and first.eval("UserLog") == "/x/job.log"
    assert first.eval("GlobalJobId") == f"localhost#7.0#{T0}" and first.eval("ServerTime") == T0 + 100
    assert first.eval("SubmitHost") == "<127.0.0.1:9618>"
    # terminated (return value 3), then unsuspended last: running again
    assert (first.eval("JobStatus"), first.eval("LastJobStatus")) == (2, 7)
    assert first.eval("EnteredCurrentStatus") == T0 + 14
    assert (first.eval("ExitCode"), first.eval("ExitBySignal"), first.eval("CompletionDate")) == (3, False, T0 + 10)
    assert first.eval("LastRemoteHost") == "<127.0.0.1:9618>" and "RemoteHost" not in first   # (the execute host)
    assert first.eval("StartdIpAddr") == "<127.0.0.1:9618>" and first.eval("NumJobStarts") == 1
    assert first.eval("HoldReason") == "via condor_hold (by user alice)" and first.eval("HoldReasonCode") == 1
    assert first.eval("ReleaseReason") == "via condor_release (by user alice)"
    assert (first.eval("ImageSize"), first.eval("ResidentSetSize")) == (43, 1012)
    assert first.eval("TotalSuspensions") == 1 and first.eval("LastSuspensionTime") == T0 + 13
    assert first.eval("LastVacateTime") == T0 + 7
    assert first.eval("LastRemoteWallClockTime") == 5.0 and first.eval("RemoteWallClockTime") == 5.0
    assert first.eval("LastRemoteUserCpu") == 3723.0
    assert list(first)[:3] == ["ClusterId", "Cmd", "CompletionDate"]        # sorted, as -long prints
    assert list(first) == sorted(first, key=str.lower)
    # a job ad information event adds what is the job's (the event's own attributes are not)
    assert first.eval("Owner") == "alice"
    assert ads["7.1"].eval("JobStatus") == 4 and ads["7.1"].eval("ExitSignal") == 9
    assert ads["7.1"].eval("ExitBySignal") is True and "ExitCode" not in ads["7.1"]
    assert (ads["7.2"].eval("JobStatus"), ads["7.2"].eval("RemoveReason")) == (3, "via condor_rm (by user alice)")


def test_a_log_that_goes_bad_yields_the_jobs_before(tmp_path):
    from gridtools.cli.condor import logads
    path = tmp_path / "job.log"
    path.write_text(render_events(sample()[:2]) + "garbage\n" + render_events([Event(E.SUBMIT, 9, 0, 0, T0)]))
    ads = logads.read(str(path), "alice")
    assert [(ad.eval("ClusterId"), ad.eval("JobStatus"), ad.eval("RemoteHost")) for ad in ads] == [(7, 2, "<127.0.0.1:9618>")]
    with pytest.raises(InputError):
        parse_events(path.read_text())
    with pytest.raises(OSError):
        logads.read(str(tmp_path / "none.log"), "alice")


def evicted():
    """An eviction without a reason code, one with a code and a reason (a vacate by the
    job's policy), and one that exited and was requeued with a code."""
    return [Event(E.JOB_EVICTED, 11, 0, 0, T0, {"RunRemoteUserCpu": 5}),
            Event(E.JOB_EVICTED, 11, 1, 0, T0 + 1, {"ReasonCode": 1000, "ReasonSubCode": 0,
                                                     "Reason": "vacated by policy"}),
            Event(E.JOB_EVICTED, 11, 2, 0, T0 + 2, {"TerminatedAndRequeued": True, "ReturnValue": 1,
                                                     "ReasonCode": 3, "ReasonSubCode": 0})]


def test_evicted_is_written_as_current_htcondor_writes_it():
    """004: "(0) CPU times" before the usage (HTCondor's words since it stopped writing
    "(0) Job was not checkpointed."), a reason code in the first line whether or not
    the job was requeued; logs in the older words are still read."""
    lines = [render_event(e).splitlines() for e in evicted()]
    assert lines[0][:3] == ["004 (011.000.000) 2023-11-14 22:13:20 Job was evicted.", "\t(0) CPU times",
                            "\t\tUsr 0 00:00:05, Sys 0 00:00:00  -  Run Remote Usage"]
    assert lines[1][:2] == ["004 (011.001.000) 2023-11-14 22:13:21 Job was evicted. Code 1000 Subcode 0",
                            "\t(0) CPU times"]
    assert lines[1][-2:] == ["\tReason: vacated by policy", "..."]
    assert lines[2][:2] == ["004 (011.002.000) 2023-11-14 22:13:22 Job was evicted. Code 3 Subcode 0",
                            "\t(0) Job terminated and was requeued"]
    assert not any("checkpointed" in line for text in lines for line in text)
    back = parse_events(render_events(evicted()))
    assert [e.info.get("ReasonCode") for e in back] == [None, 1000, 3]
    assert back[0].info["Checkpointed"] is False and back[0].info["RunRemoteUserCpu"] == 5
    assert back[1].info["Reason"] == "vacated by policy" and back[2].info["TerminatedAndRequeued"] is True
    older = render_event(evicted()[1]).replace("(0) CPU times", "(0) Job was not checkpointed.")
    assert parse_events(older)[0].info == back[1].info


_READ_EVICTED = r"""
import sys, warnings
warnings.simplefilter("ignore")
import htcondor2
for e in htcondor2.JobEventLog(sys.argv[1]).events(stop_after=0):
    print(int(e.type), e.proc, e.get("Checkpointed"), e.get("TerminatedAndRequeued"), e.get("ReturnValue"),
          e.get("Reason"))
"""


def test_htcondor_reads_the_evicted_events(tmp_path):
    rows = [line.split(" ", 5) for line in _htcondor_reads(tmp_path, evicted(), _READ_EVICTED)]
    assert [r[:5] for r in rows] == [["4", "0", "False", "False", "None"], ["4", "1", "False", "False", "None"],
                                     ["4", "2", "False", "True", "1"]]
    assert rows[1][5] == "vacated by policy"


# ------------------------------------------------ file transfer (040)

def transfers():
    return [Event(E.FILE_TRANSFER, 7, 0, 0, T0, {"Type": 2, "Host": "<127.0.0.1:0?alias=node1>"}),
            Event(E.FILE_TRANSFER, 7, 0, 0, T0 + 1, {"Type": 3}),
            Event(E.FILE_TRANSFER, 7, 0, 0, T0 + 9, {"Type": 5}),
            Event(E.FILE_TRANSFER, 7, 0, 0, T0 + 10, {"Type": 6})]


def test_file_transfer_events_are_written_as_htcondor_writes_them_and_read_back():
    """HTCondor's FILE_TRANSFER event (040): the stage's words, the host the input files
    go to; none is one of condor_wait's."""
    text = render_events(transfers())
    assert text.splitlines() == [
        "040 (007.000.000) 2023-11-14 22:13:20 Started transferring input files",
        "\tTransferring to host: <127.0.0.1:0?alias=node1>", "...",
        "040 (007.000.000) 2023-11-14 22:13:21 Finished transferring input files", "...",
        "040 (007.000.000) 2023-11-14 22:13:29 Started transferring output files", "...",
        "040 (007.000.000) 2023-11-14 22:13:30 Finished transferring output files", "..."]
    back = parse_events(text)
    assert [(e.type, e.timestamp, e.info) for e in back] == [(e.type, e.timestamp, e.info) for e in transfers()]
    assert job_outcomes(back) == {}


_READ_TRANSFERS = r"""
import sys, warnings
warnings.simplefilter("ignore")
import htcondor2
for e in htcondor2.JobEventLog(sys.argv[1]).events(stop_after=0):
    print(int(e.type), e.cluster, e.proc, e.timestamp, e.get("Type"), e.get("Host"))
"""


def test_htcondor_reads_the_file_transfer_events(tmp_path):
    assert _htcondor_reads(tmp_path, transfers(), _READ_TRANSFERS) == [
        f"40 7 0 {T0} 2 <127.0.0.1:0?alias=node1>", f"40 7 0 {T0 + 1} 3 None",
        f"40 7 0 {T0 + 9} 5 None", f"40 7 0 {T0 + 10} 6 None"]


def clusters():
    """The events of a cluster materialized late: it entered the queue, and left it having
    made 3 procs of 4 from 2 items."""
    return [Event(E.CLUSTER_SUBMIT, 12, -1, 0, T0, {"SubmitHost": "<127.0.0.1:0?alias=node1>"}),
            Event(E.SUBMIT, 12, 0, 0, T0, {"SubmitHost": "<127.0.0.1:0?alias=node1>"}),
            Event(E.CLUSTER_REMOVE, 12, -1, 0, T0 + 5, {"NextProcId": 3, "NextRow": 2, "Completion": 0})]


def test_cluster_events_are_written_as_the_schedd_writes_them_and_read_back():
    """ClusterSubmit (035) and ClusterRemove (036) are the whole cluster's: proc -1."""
    text = render_events(clusters())
    assert text.splitlines() == [
        "035 (012.-01.000) 2023-11-14 22:13:20 Cluster submitted from host: <127.0.0.1:0?alias=node1>", "...",
        "000 (012.000.000) 2023-11-14 22:13:20 Job submitted from host: <127.0.0.1:0?alias=node1>", "...",
        "036 (012.-01.000) 2023-11-14 22:13:25 Cluster removed",
        "\tMaterialized 3 jobs from 2 items.\tIncomplete", "..."]
    back = parse_events(text)
    assert [(e.type, e.cluster, e.proc, e.info) for e in back] == [(e.type, e.cluster, e.proc, e.info)
                                                                   for e in clusters()]
    assert job_outcomes(back) == {(12, 0): E.SUBMIT}         # (condor_wait's jobs: the procs)


_READ_CLUSTERS = r"""
import sys, warnings
warnings.simplefilter("ignore")
import htcondor2
for e in htcondor2.JobEventLog(sys.argv[1]).events(stop_after=0):
    print(int(e.type), e.cluster, e.proc, e.get("SubmitHost"), e.get("NextProcId"), e.get("NextRow"),
          e.get("Completion"))
"""


def test_htcondor_reads_the_cluster_events(tmp_path):
    assert _htcondor_reads(tmp_path, clusters(), _READ_CLUSTERS) == [
        "35 12 -1 <127.0.0.1:0?alias=node1> None None None", "0 12 0 <127.0.0.1:0?alias=node1> None None None",
        "36 12 -1 None 3 2 0"]


def executing():
    """A run's execute event with the properties HTCondor's shadow adds after the slot."""
    return [Event(E.EXECUTE, 14, 0, 0, T0, {
        "ExecuteHost": "<127.0.0.1:0?alias=node1>", "SlotName": "slot1_1@node1",
        "ExecuteProps": {"Memory": "2048", "CondorScratchDir": '"/tmp/x/14.1.all.q"', "Cpus": "2",
                         "disk": "1024", "MyLabel": 'strcat("lab-",Arch)', "Arch": '"X86_64"'}})]


def test_the_execute_event_names_the_run_s_properties_sorted_and_reads_them_back():
    """Each property is a ``Name = value`` line after the slot's name, sorted by name
    whatever its case, as HTCondor's ExecuteEvent writes them."""
    text = render_events(executing())
    assert text.splitlines() == [
        "001 (014.000.000) 2023-11-14 22:13:20 Job executing on host: <127.0.0.1:0?alias=node1>",
        "\tSlotName: slot1_1@node1", '\tArch = "X86_64"', '\tCondorScratchDir = "/tmp/x/14.1.all.q"',
        "\tCpus = 2", "\tdisk = 1024", "\tMemory = 2048", '\tMyLabel = strcat("lab-",Arch)', "..."]
    [back] = parse_events(text)
    assert back.info == executing()[0].info


_READ_EXECUTE = r"""
import sys, warnings
warnings.simplefilter("ignore")
import htcondor2
for e in htcondor2.JobEventLog(sys.argv[1]).events(stop_after=0):
    props = e.get("ExecuteProps")
    print(int(e.type), e.get("SlotName"), sorted(props.keys()), props.eval("Cpus"), props.eval("CondorScratchDir"))
"""


def test_htcondor_reads_the_execute_event_s_properties(tmp_path):
    assert _htcondor_reads(tmp_path, executing(), _READ_EXECUTE) == [
        "1 slot1_1@node1 ['Arch', 'CondorScratchDir', 'Cpus', 'Memory', 'MyLabel', 'disk'] 2 /tmp/x/14.1.all.q"]


USAGE = {"Cpus": 1, "RequestCpus": 1, "Disk": 4000, "RequestDisk": 44, "DiskUsage": 44, "Memory": 2048,
         "RequestMemory": 100, "MemoryUsage": 6, "TimeExecuteUsage": 2, "TimeSlotBusyUsage": 3}
TABLE = ["\tPartitionable Resources :    Usage  Request Allocated ",
         "\t   Cpus                 :                 1         1 ",
         "\t   Disk (KB)            :       44       44      4000 ",
         "\t   Memory (MB)          :        6      100      2048 ",
         "\t   TimeExecute (s)      :        2                    ",
         "\t   TimeSlotBusy (s)     :        3                    "]


def ended_runs():
    """A run that ended, one evicted, and one requeued by its own policy without a
    reason, each with the usage ad of its run."""
    return [Event(E.JOB_TERMINATED, 15, 0, 0, T0, {"ReturnValue": 0, "UsageAd": USAGE}),
            Event(E.JOB_EVICTED, 15, 1, 0, T0, {"Reason": "Evicted by a periodic vacate", "UsageAd": USAGE}),
            Event(E.JOB_EVICTED, 15, 2, 0, T0, {"TerminatedAndRequeued": True, "ReturnValue": 4,
                                                "UsageAd": USAGE})]


def test_the_ends_of_runs_carry_the_table_of_their_resources_and_read_it_back():
    """After the byte counts of 005, after the reason of 004 (either form), as HTCondor's
    shadow writes them; a requeued run without a reason does not take the table's
    heading for one."""
    text = render_events(ended_runs())
    events = text.split("...\n")
    assert events[0].splitlines()[-6:] == TABLE
    assert events[0].splitlines()[-7] == "\t0  -  Total Bytes Received By Job"
    assert events[1].splitlines()[-7:] == ["\tReason: Evicted by a periodic vacate"] + TABLE
    assert events[2].splitlines()[-7:] == ["\t(1) Normal termination (return value 4)"] + TABLE
    back = parse_events(text)
    assert [e.info.get("UsageAd") for e in back] == [USAGE] * 3
    assert back[1].info["Reason"] == "Evicted by a periodic vacate" and "Reason" not in back[2].info
    assert (back[2].info["TerminatedAndRequeued"], back[2].info["ReturnValue"]) == (True, 4)


_READ_USAGE = r"""
import sys, warnings
warnings.simplefilter("ignore")
import htcondor2
for e in htcondor2.JobEventLog(sys.argv[1]).events(stop_after=0):
    print(int(e.type), e.get("Memory"), e.get("RequestMemory"), e.get("MemoryUsage"), e.get("DiskUsage"),
          e.get("TimeSlotBusyUsage"), e.get("ReturnValue"))
"""


def test_htcondor_reads_the_table_of_a_terminated_run(tmp_path):
    assert _htcondor_reads(tmp_path, ended_runs()[:1], _READ_USAGE) == ["5 2048 100 6 44 3 0"]


def test_a_node_s_execute_event_names_its_slot_and_htcondor_reads_it(tmp_path):
    """014 takes the lines 001 takes after its first: the node's slot."""
    node = [Event(E.NODE_EXECUTE, 16, 0, 2, T0, {"Node": 2, "ExecuteHost": "<127.0.0.1:0?alias=h2>",
                                                  "SlotName": "slot3@h2"})]
    text = render_events(node)
    assert text.splitlines()[1:3] == ["\tSlotName: slot3@h2", "..."]
    assert parse_events(text)[0].info == node[0].info
    program = _READ.replace('e.get("ReturnValue")', 'e.get("SlotName")')
    assert [line.split(" ", 5)[4] for line in _htcondor_reads(tmp_path, node, program)] == ["slot3@h2"]
