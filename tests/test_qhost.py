"""qhost: the host table and its -F, -q, -j, -u, -h, -l, -st, -xml and -json views.

Layouts are compared with Grid Engine 8.1.9's captured texts on the hand-built
snapshot of test_qstat_format, then checked against a running daemon.
"""

import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import wait_for
from gridtools.cli.sge import qhost, qhost_xml
from test_qstat_format import reference, reference_snapshot
from test_qstat_live import kill_jobs_from


def render(argv, snap=None):
    snap = snap if snap is not None else reference_snapshot()
    opts = qhost.parse_args(list(argv))
    if opts.json:
        return qhost_xml.as_json(snap, opts)
    if opts.xml:
        return qhost_xml.as_xml(snap, opts)
    return qhost.text(snap, opts)


@pytest.mark.parametrize("name, argv", [
    ("qhost.txt", []), ("qhost-q.txt", ["-q"]), ("qhost-j.txt", ["-j"]), ("qhost-F.txt", ["-F"]),
    ("qhost-xml.txt", ["-xml"])])
def test_layout_is_grid_engines(name, argv):
    assert render(argv) == reference(name)


def test_queue_and_job_xml():
    snap = reference_snapshot()
    for row in snap["rows"][:2]:
        row["prio"] = 0.250556
    assert render(["-q", "-j", "-xml"], snap) == reference("qhost-q-j-xml.txt")


def test_selected_resources_and_shortcuts():
    # as Grid Engine's qhost writes them: the first named value a host shows follows
    # "Host Resource(s):" on its line; a name no complex has shows nothing, and is no error
    lines = render(["-F", "mem_total,p,nla,bogus"]).splitlines()
    assert lines[4:] == ["    Host Resource(s):      hl:num_proc=2.000000", "   hl:mem_total=23.541G",
                         "   hl:np_load_avg=0.157959"]
    assert render(["-F", "bogus"]).splitlines()[4:] == []


def test_host_selection_by_name_and_resources():
    assert render(["-h", "local*"]).splitlines()[3].startswith("localhost ")
    assert len(render(["-h", "other"]).splitlines()) == 3
    assert len(render(["-l", "arch=lx-amd64"]).splitlines()) == 4
    assert len(render(["-l", "arch=sol-sparc64"]).splitlines()) == 3
    assert len(render(["-l", "mem_total=2G"]).splitlines()) == 4
    assert len(render(["-l", "mem_total=200G"]).splitlines()) == 3


def test_list_arguments_are_several_words_each_split_at_commas():
    snap = _two_hosts_two_queues()

    def names(argv):
        return [line.split()[0] for line in render(argv, snap).splitlines()[3:]
                if not line.startswith(" ")]
    assert names(["-h", "other"]) == ["other"]
    assert names(["-h", "localhost", "other"]) == ["localhost", "other"]
    assert names(["-h", "localhost,other", "-q"]) == ["localhost", "other"]
    assert names(["-h", "nosuch,other"]) == ["other"]
    assert names(["-h", "l?calhost,,oth*"]) == ["localhost", "other"]
    assert names(["-l", "arch=lx-amd64", "num_proc=3"]) == []
    assert names(["-l", "arch=lx-amd64 num_proc=2"]) == ["localhost", "other"]
    lines = render(["-F", "num_proc", "mem_total", "-h", "other"], snap).splitlines()
    assert lines[4:] == ["    Host Resource(s):      hl:num_proc=2.000000", "   hl:mem_total=23.541G"]


def test_a_blank_inside_a_host_list_word_is_part_of_one_name(capsys):
    # parse_multi_stringlist splits -h at commas only: "n1 n2" is one name, which no
    # resolver takes, and qhost gives up with its usage and the error
    assert qhost.main(["-h", "localhost other"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("SGE 8.1.9\nusage: qhost [options]\n")
    assert err.endswith("\nerror: can't resolve hostname \"localhost other\"\n")
    assert qhost.main(["-h", "localhost", "n1,n2 "]) == 1
    assert capsys.readouterr().err.endswith("\nerror: can't resolve hostname \"n2 \"\n")


def test_resource_list_words_are_split_at_commas_only_and_gathered(capsys):
    # parse_multi_stringlist splits the words of -F at commas only, as those of -h: a
    # blank is part of one name, which is no complex attribute; the names of several -F
    # are gathered (a -F without a word adds none)
    def shown(argv):
        return render(argv).splitlines()[4:]
    assert shown(["-F", "num_proc,mem_total"]) == shown(["-F", "num_proc", "mem_total"]) == \
        shown(["-F", "num_proc", "-F", "mem_total"]) == shown(["-F", "num_proc", "-F", "-F", "mem_total"]) == \
        ["    Host Resource(s):      hl:num_proc=2.000000", "   hl:mem_total=23.541G"]
    assert shown(["-F", "num_proc mem_total"]) == []
    assert len(shown(["-F", "-F"])) > 2                        # (no names: all of them)


def test_jobs_of_selected_users():
    snap = reference_snapshot()
    snap["jobs"][52]["owner"] = "carol"
    lines = render(["-u", "carol"], snap).splitlines()
    assert lines[4:6] == [reference("qhost-j.txt").splitlines()[4], reference("qhost-j.txt").splitlines()[5]]
    assert [line.split()[0] for line in lines[6:]] == ["52"]
    assert render(["-u", "nobody,carol"], snap) == render(["-u", "carol"], snap)
    assert render(["-u", "nobody carol"], snap) == render(["-u", "nobody"], snap)     # one name


def test_state_column_from_slot_use():
    snap = reference_snapshot()
    lines = render(["-st"], snap).splitlines()
    assert lines[0] == reference("qhost.txt").splitlines()[0] + "  STATE"
    assert len(lines[1]) == 104 and lines[2].endswith("  -") and lines[3].endswith("  Busy")
    snap["queues"][0]["used"] = 1
    assert render(["-st"], snap).splitlines()[3].endswith("  Running")
    snap["queues"][0]["used"] = 0
    assert render(["-st"], snap).splitlines()[3].endswith("  Idle")
    snap["hosts"]["localhost"]["state"] = "Draining"
    assert render(["-st"], snap).splitlines()[3].endswith("  Draining")
    del snap["hosts"]["localhost"]
    assert render(["-st"], snap).splitlines()[3].split()[1:] == ["-"] * 10 + ["Down"]


def test_parallel_job_gets_master_and_slave_lines():
    snap = reference_snapshot()
    snap["rows"][0].update(slots=2, granted=[["all.q", "localhost", 2]])
    snap["jobs"][51]["pe"] = ["smp", 2, 2]
    lines = render(["-j"], snap).splitlines()
    assert [line.split()[-1] for line in lines[6:]] == ["MASTER", "SLAVE", "MASTER"]


def _two_hosts_two_queues():
    """The reference snapshot with a second host and a queue b.q on both hosts: job 51
    a parallel job with two slots in b.q@localhost and two in b.q@other (master there)."""
    import copy
    snap = reference_snapshot()
    snap["hosts"]["other"] = copy.deepcopy(snap["hosts"]["localhost"])
    base = snap["queues"][0]
    for host in ("localhost", "other"):
        for queue in ("b.q", "all.q"):
            if (queue, host) != ("all.q", "localhost"):
                row = dict(copy.deepcopy(base), queue=queue, host=host, name=f"{queue}@{host}")
                snap["queues"].append(row)
    snap["rows"][0].update(slots=4, granted=[["b.q", "other", 2], ["b.q", "localhost", 2]])
    snap["jobs"][51]["pe"] = ["smp", 4, 4]
    return snap


def test_jobs_are_listed_under_their_queue_instance_with_one_header():
    lines = render(["-j"], _two_hosts_two_queues()).splitlines()
    want = reference("qhost-j.txt").splitlines()
    queue = want[4].index("queue")
    # the header comes once, before the first job line; jobs go queue instance by queue
    # instance (all.q before b.q); the further slots of a task leave the job's columns blank
    assert lines[3].startswith("localhost ") and lines[4:6] == want[4:6]
    assert lines[9].startswith("other ")
    assert [line[:queue].split()[:1] + line[queue:].split() for line in lines[6:9] + lines[10:]] == [
        ["52", "all.q@loca", "MASTER"], ["51", "b.q@localh", "SLAVE"], ["b.q@localh", "SLAVE"],
        ["51", "b.q@other", "MASTER"], ["b.q@other", "SLAVE"]]
    assert lines[8][:queue].strip() == "" and lines[11][:queue].strip() == ""
    lines = render(["-q", "-j"], _two_hosts_two_queues()).splitlines()
    assert [line.split()[0] for line in lines[3:]] == [
        "localhost", "all.q", "52", "b.q", "51", "SLAVE", "other", "all.q", "b.q", "51", "SLAVE"]
    assert lines[8][queue:].split() == ["SLAVE"] and lines[8][:queue].strip() == ""
    assert len(lines[5]) == len(want[6]) - 11


def test_job_xml_names_the_queue_when_not_under_one():
    root = ET.fromstring(render(["-j", "-xml"]))
    job = root[1].find("job")
    assert [(v.get("name"), v.text) for v in job][-2:] == [
        ("queue_name", "all.q@localhost"), ("pe_master", "MASTER")]
    root = ET.fromstring(render(["-q", "-j", "-xml"], _two_hosts_two_queues()))
    assert [(e.tag, e.get("name")) for e in root[1] if e.tag != "hostvalue"] == [
        ("queue", "all.q"), ("job", "52"), ("queue", "b.q"), ("job", "51"), ("job", "51")]
    assert all(v.get("name") != "queue_name" for e in root[1].iter("job") for v in e)


def test_json_document():
    doc = json.loads(render(["-json", "-q", "-j", "-st"]))
    glob, host = doc["hosts"]
    assert glob["name"] == "global" and glob["num_proc"] is None
    assert host["name"] == "localhost" and host["num_proc"] == 2 and host["state"] == "Busy"
    assert host["mem_total"] == int(24105.984375 * 1024 * 1024)
    assert host["queues"][0] == {"name": "all.q", "qtype": "BIP", "slots_used": 2, "slots": 2, "slots_resv": 0,
                                 "states": ""}
    assert [j["job_number"] for j in host["jobs"]] == [51, 52]


def test_help_and_bad_option(capsys):
    assert qhost.main(["-help"]) == 0
    assert capsys.readouterr().out == reference("qhost-help.txt")
    assert qhost.main(["-bad"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("SGE 8.1.9\nusage: qhost [options]\n") and err.endswith('invalid option argument "-bad"\n')


# ---------------------------------------------------------------- against a daemon

def test_live_host_table_queues_and_jobs(cell, workdir):
    proc = cell.qsub("-b", "y", "-N", "hostjob", "sleep", "60", cwd=workdir)
    job = int(re.search(r"(\d+)", proc.stdout).group(1))
    try:
        _check_live_table(cell, job)
    finally:
        kill_jobs_from(workdir)


def _check_live_table(cell, job):
    wait_for(lambda: "hostjob" in cell.run("qhost", "-j").stdout, timeout=20)
    lines = cell.run("qhost", "-q", "-j").stdout.splitlines()
    want = reference("qhost-j.txt").splitlines()
    assert lines[:3] == want[:3]
    assert re.fullmatch(r"testhost {16}lx-\S+ +\d+ +\d+ +\d+ +\d+ +\d+\.\d\d +\S+ +\S+ +\S+ +\S+", lines[3])
    assert len(lines[3]) == 94
    assert lines[4].startswith("   all.q                BIP   0/1/2")
    # under its queue a job line has no header and no queue column
    queue = want[4].index("queue")
    assert lines[5].split()[0] == str(job) and len(lines) == 6
    assert lines[5][queue:queue + 7] == "MASTER "
    lines = cell.run("qhost", "-j").stdout.splitlines()
    assert lines[4:6] == want[4:6]
    assert lines[6][queue:queue + 10] == "all.q@test" and lines[6][queue + 11:queue + 17] == "MASTER"


def test_live_xml_and_state(cell):
    root = ET.fromstring(cell.run("qhost", "-xml").stdout)
    want = ET.fromstring(reference("qhost-xml.txt"))
    assert [h.get("name") for h in root] == ["global", "testhost"]
    assert [v.get("name") for v in root[1]] == [v.get("name") for v in want[1]]
    assert cell.run("qhost", "-st").stdout.splitlines()[3].endswith("  Idle")


def test_without_a_daemon_hosts_come_from_the_configuration(idle_cell):
    lines = idle_cell.run("qhost", "-st").stdout.splitlines()
    assert lines[3].split() == ["testhost"] + ["-"] * 10 + ["Down"]
    proc = idle_cell.qsub("-b", "y", "-N", "early", "true")
    assert proc.returncode == 0
    for argv in ([], ["-f"], ["-xml"], ["-json"], ["-r"], ["-j", "early"]):
        out = idle_cell.run("qstat", *argv)
        assert out.returncode == 0 and "early" in out.stdout, argv


def test_a_slots_capacity_of_a_host_or_the_cell_shows_what_is_left(cell, workdir):
    """complex(5): a consumable shows what is left of it; slots too, as qstat -F shows it."""
    cell.run("qconf", "-mattr", "exechost", "complex_values", "slots=3", "global", check=True)
    cell.run("qconf", "-mattr", "exechost", "complex_values", "slots=2", "testhost", check=True)
    proc = cell.qsub("-b", "y", "-N", "slotjob", "sleep", "60", cwd=workdir)
    try:
        wait_for(lambda: "slotjob" in cell.run("qhost", "-j").stdout, timeout=20)
        shown = cell.run("qhost", "-F", "slots").stdout
        assert "gc:slots=2.000000" in shown and "hc:slots=1.000000" in shown, shown
    finally:
        kill_jobs_from(workdir)
    assert proc.returncode == 0
