"""qstat -xml in Grid Engine's layout, and the -json documents, from hand-built snapshots."""

import io
import json
import re
import xml.etree.ElementTree as ET

import pytest

from gridtools.cli.sge import qstat, qstat_j, qstat_usage
from test_qstat_format import alarm_snapshot, reference, reference_snapshot, render
from test_qstat_j import captured_spec


def tags(element):
    return [child.tag for child in element]


@pytest.mark.parametrize("name, argv", [
    ("qstat-xml.txt", ["-xml", "-u", "*"]), ("qstat-f-xml.txt", ["-f", "-xml", "-u", "*"]),
    ("qstat-F-xml.txt", ["-F", "-xml"])])
def test_xml_is_grid_engines(name, argv):
    assert render(argv) == reference(name)


def test_explain_xml_has_state_and_alarm_reason():
    assert render(["-f", "-explain", "a", "-xml"], alarm_snapshot()) == reference("qstat-f-explain-a-xml.txt")


def test_both_containers_exist_when_nothing_is_listed():
    snap = reference_snapshot()
    snap["rows"], snap["jobs"] = [], {}
    root = ET.fromstring(render(["-xml"], snap))
    assert root.tag == "job_info" and tags(root) == ["queue_info", "job_info"]
    assert len(root[0]) == 0 and len(root[1]) == 0


def test_pysqa_reads_running_and_pending_jobs():
    root = ET.fromstring(render(["-xml", "-u", "*"]))
    running = [(j.find("JB_job_number").text, j.find("state").text) for j in root[0]]
    pending = [(j.find("JB_job_number").text, j.find("JB_owner").text, j.find("JB_name").text)
               for j in root[1]]
    assert running == [("51", "r"), ("52", "r")]
    assert pending[0] == ("56", "alice", "pend_pe") and len(pending) == 9


def test_snakemake_regexes_find_every_job_and_state():
    text = render(["-xml", "-u", "*"])
    found = {}
    for block in re.findall(r"<job_list[^>]*>(.*?)</job_list>", text, re.S):
        found[int(re.search(r"<JB_job_number>(\d+)", block).group(1))] = re.search(r"<state>(\S+)</state>", block).group(1)
    assert found == {51: "r", 52: "r", 53: "qw", 54: "qw", 55: "hqw", 56: "qw", 57: "hqw", 58: "qw",
                     59: "qw", 60: "qw", 61: "hqw"}


def test_requested_resources_elements():
    root = ET.fromstring(render(["-xml", "-r", "-u", "*"]))
    res = next(j for j in root[1] if j.find("JB_job_number").text == "58")
    assert tags(res)[-5:] == ["slots", "full_job_name", "hard_request", "hard_request", "binding"]
    hard = res.findall("hard_request")
    assert [(h.get("name"), h.text, h.get("resource_contribution")) for h in hard] == \
        [("h_rt", "300", "0.000000"), ("h_vmem", "1G", "0.000000")]
    pe = next(j for j in root[1] if j.find("JB_job_number").text == "56")
    assert pe.find("requested_pe").get("name") == "smp" and pe.find("requested_pe").text == "2"
    dep = next(j for j in root[1] if j.find("JB_job_number").text == "57")
    assert dep.find("predecessor_jobs_req").text == "run_a" and dep.find("predecessor_jobs").text == "51"


def test_priority_and_urgency_elements_in_order():
    root = ET.fromstring(render(["-xml", "-ext", "-urg", "-pri", "-u", "*"]))
    job = root[0][0]
    assert tags(job) == ["JB_job_number", "JAT_prio", "JAT_ntix", "JB_nurg", "JB_urg", "JB_rrcontr",
                         "JB_wtcontr", "JB_dlcontr", "JB_nppri", "JB_priority", "JB_name", "JB_owner",
                         "JB_project", "JB_department", "state", "JAT_start_time", "tickets",
                         "JB_override_tickets", "JB_jobshare", "otickets", "ftickets", "stickets",
                         "JAT_share", "queue_name", "slots"]
    assert job.find("JB_urg").text == "1005" and job.find("JB_nurg").text == "0.00111"


def test_task_view_has_master_element():
    root = ET.fromstring(render(["-xml", "-t", "-s", "r"]))
    assert [j.find("master").text for j in root[0]] == ["MASTER", "MASTER"]


def test_cluster_summary_xml():
    root = ET.fromstring(render(["-g", "c", "-xml"]))
    (summary,) = list(root)
    assert summary.tag == "cluster_queue_summary"
    assert tags(summary) == ["name", "load", "used", "resv", "available", "total", "temp_disabled",
                             "manual_intervention"]
    assert summary.find("load").text == "0.15796" and summary.find("used").text == "2"


@pytest.fixture
def spool(monkeypatch):
    snap = reference_snapshot()
    specs = {j: captured_spec(j, snap) for j in snap["jobs"]}
    states = {51: {"tasks": {"1": {"state": "running", "start_time": snap["rows"][0]["time"]}}}}
    monkeypatch.setattr(qstat_j, "load_spec", lambda j, s: (specs[j], states.get(j, {})))
    monkeypatch.setattr(qstat_usage, "_job_pid", lambda j, n: 0)
    return snap


def _without_times(text):
    return re.sub(r"<(JB_submission_time|JAT_start_time)>\d+<", r"<\1>T<", text)


def test_job_details_xml(spool):
    assert _without_times(render(["-j", "53", "-xml"], spool)) == \
        _without_times(reference("qstat-j-xml-pending.txt"))
    got = _without_times(render(["-j", "51", "-xml"], spool))
    want = _without_times(reference("qstat-j-xml-running.txt"))
    assert got.replace("<JB_nurg>0.001110<", "<JB_nurg>0.001112<") == want


def test_job_details_xml_optional_fields(spool):
    root = ET.fromstring(render(["-j", "56,57,58", "-xml"], spool))
    elements = {int(e.find("JB_job_number").text): e for e in root.find("djob_info")}
    assert elements[56].find("JB_pe").text == "smp"
    assert elements[56].find("JB_pe_range/ranges/RN_min").text == "2"
    assert elements[57].find("JB_jid_predecessor_list/ulong_sublist/JRE_job_number").text == "51"
    assert [r.find("CE_name").text for r in elements[58].find("JB_hard_resource_list")] == ["h_rt", "h_vmem"]
    messages = root.find("messages/element")
    assert messages.find("SME_message_list/element/MES_message").text == "job dropped because of job dependencies"


def test_global_messages_xml(spool):
    root = ET.fromstring(render(["-j", "-xml"], spool))
    assert root.tag == "message"
    numbers = [int(m.text) for m in root.iter("MES_message_number")]
    assert 37 in numbers and 28 in numbers and 33 in numbers and 35 in numbers


def test_unknown_job_xml(spool):
    opts = qstat.parse_args(["-j", "999999", "-xml"])
    out = io.StringIO()
    assert qstat_j.show(spool, opts, out) == 1
    root = ET.fromstring(out.getvalue())
    assert root.tag == "unknown_jobs" and root.find("element/ST_name").text == "999999"


# ---------------------------------------------------------------- JSON

def test_json_jobs():
    doc = json.loads(render(["-json", "-u", "*"]))
    assert set(doc) == {"jobs"}
    first = doc["jobs"][0]
    assert first == {"job_number": 51, "priority": 0.25056, "name": "run_a", "owner": "alice", "state": "r",
                     "section": "running", "submit_time": first["submit_time"],
                     "start_time": first["start_time"], "queue": "all.q@localhost", "slots": 1, "tasks": None}
    array = next(j for j in doc["jobs"] if j["job_number"] == 54)
    assert array["section"] == "pending" and array["tasks"] == "1-6:1" and array["start_time"] is None


def test_json_queues_and_extras():
    doc = json.loads(render(["-json", "-F", "qname,slots", "-explain", "a", "-r", "-urg"], alarm_snapshot()))
    (queue,) = doc["queues"]
    assert queue["name"] == "all.q@localhost" and queue["states"] == "aA"
    assert queue["resources"] == [{"type": "qf", "name": "qname", "value": "all.q"},
                                  {"type": "qc", "name": "slots", "value": "0"}]
    assert queue["explain"] == ["alarm hl:np_load_avg=0.153564 load-threshold=0.001"]
    job = next(j for j in doc["jobs"] if j["job_number"] == 58)
    assert job["requests"]["hard"] == {"h_rt": "300", "h_vmem": "1G"} and job["urg"] == 1004.0


def test_json_cluster_and_details(spool):
    doc = json.loads(render(["-g", "c", "-json"]))
    assert doc["cluster_queues"][0]["name"] == "all.q" and doc["cluster_queues"][0]["total"] == 2
    doc = json.loads(render(["-j", "57", "-json"], spool))
    (job,) = doc["jobs"]
    assert job["job_number"] == 57 and job["jid_predecessor_list_req"] == "run_a"
    assert job["jid_predecessor_list"] == "51"
    assert job["scheduling_info"][-1] == "job dropped because of job dependencies"
    doc = json.loads(render(["-j", "-json"], spool))
    assert {"number": 33, "message": "Jobs dropped because of hold state", "jobs": [55, 61]} in doc["messages"]["jobs"]
