"""qstat against a running daemon: what users and client libraries parse.

Layouts are compared with the captured Grid Engine texts by column position
(ids, times and host names differ), XML by element structure.
"""

import datetime
import os
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import wait_for
from test_qstat_format import reference

HEADER = reference("qstat.txt").splitlines()[0]
RULE = reference("qstat.txt").splitlines()[1]


def submit(cell, *args, **kw):
    proc = cell.qsub(*args, **kw)
    assert proc.returncode == 0, proc.stderr
    return int(re.search(r"(\d+)", proc.stdout).group(1))


def qstat(cell, *args, user=None):
    proc = cell.run("qstat", *args, user=user)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def states(cell, *args):
    """job id -> state column of the plain table."""
    return {int(line.split()[0]): line.split()[4] for line in qstat(cell, *args).splitlines()[2:]}


def running(cell, job_id):
    return wait_for(lambda: states(cell).get(job_id) == "r", timeout=20)


def kill_jobs_from(workdir):
    """Kill the job processes submitted from ``workdir`` (they outlive a destroyed cell)."""
    import os
    import signal

    import psutil
    for proc in psutil.process_iter(["pid", "environ"]):
        try:
            if (proc.info.get("environ") or {}).get("SGE_O_WORKDIR") == workdir:
                os.killpg(os.getpgid(proc.pid), signal.SIGKILL)
        except (psutil.Error, OSError):
            continue


@pytest.fixture
def busy(cell, workdir):
    """Two running sleeps, a held job, an array, a PE job and a dependent job."""
    ids = {"run1": submit(cell, "-b", "y", "-N", "run_one", "sleep", "60", cwd=workdir),
           "run2": submit(cell, "-b", "y", "-N", "run_two", "sleep", "60", cwd=workdir)}
    running(cell, ids["run1"])
    running(cell, ids["run2"])
    ids["held"] = submit(cell, "-h", "-b", "y", "-N", "held", "true", cwd=workdir)
    ids["array"] = submit(cell, "-t", "1-4", "-b", "y", "-N", "arr", "true", cwd=workdir)
    # (a time request is shown in seconds, as Grid Engine stores it; memory as typed)
    ids["pe"] = submit(cell, "-pe", "smp", "2", "-l", "h_rt=0:5:0,h_vmem=1G", "-b", "y", "-N", "pe_job",
                       "true", cwd=workdir)
    ids["dep"] = submit(cell, "-hold_jid", str(ids["run1"]), "-b", "y", "-N", "dep", "true", cwd=workdir)
    wait_for(lambda: set(ids.values()) <= set(states(cell)))
    yield ids
    kill_jobs_from(workdir)


def test_plain_table_layout(cell, busy):
    lines = qstat(cell).splitlines()
    assert lines[:2] == [HEADER, RULE]
    by_id = {int(line.split()[0]): line for line in lines[2:]}
    run = by_id[busy["run1"]]
    assert re.fullmatch(r" {0,6}\d+ \d\.\d{5} run_one    root +r {5}\d\d/\d\d/\d{4} \d\d:\d\d:\d\d "
                        r"all\.q@testhost {16} {5}1 {8}", run), run
    assert by_id[busy["array"]].endswith("    1 1-4:1")
    assert by_id[busy["pe"]][97:102] == "    2"
    assert by_id[busy["held"]][40:45] == "hqw  " and by_id[busy["dep"]][40:45] == "hqw  "
    assert by_id[busy["pe"]][40:45] == "qw   " and by_id[busy["pe"]][66:97].strip() == ""


def test_parsl_and_toil_parse_the_plain_table(cell, busy):
    """parsl: field 0 id, field 4 state; toil: fields 5-6 a %m/%d/%Y %H:%M:%S start time."""
    seen = {}
    for line in qstat(cell).splitlines():
        if not line.strip() or line.lower().startswith("job-id") or line.startswith("----"):
            continue
        parts = line.split()
        seen[parts[0]] = parts[4].lower()
        if parts[4] == "r":
            start = datetime.datetime.strptime(" ".join(parts[5:7]), "%m/%d/%Y %H:%M:%S")
            assert abs((datetime.datetime.now() - start).total_seconds()) < 120
    assert seen[str(busy["run1"])] == "r" and seen[str(busy["held"])] == "hqw"


def test_full_listing_layout(cell, busy):
    lines = qstat(cell, "-f").splitlines()
    want = reference("qstat-f.txt").splitlines()
    assert lines[:2] == want[:2]
    queue = lines[2]
    assert queue[:31] == "all.q@testhost".ljust(31) and queue[31:37] == "BIP   " and queue[37:52] == "0/2/2".ljust(15)
    assert re.fullmatch(r"\d+\.\d\d +", queue[52:61]) and queue[61:64] == "lx-" and len(queue) == 75
    banner = lines.index(want[7])
    assert lines[banner - 2:banner + 2] == want[5:9]
    job_lines = lines[3:banner - 2] + lines[banner + 2:]
    assert all(line[7] == " " and line[15] == " " and line[26] == " " and line[39] == " " for line in job_lines)
    assert all(len(line) == 79 or line.endswith(":1") for line in job_lines)
    assert {int(line.split()[0]) for line in lines[3:banner - 2]} == {busy["run1"], busy["run2"]}


def test_queue_resources_and_cluster_summary(cell, busy):
    lines = qstat(cell, "-F", "np_load_avg,qname,slots").splitlines()
    assert re.fullmatch(r"\thl:np_load_avg=\d+\.\d{6}", lines[3])
    assert lines[4:6] == ["\tqf:qname=all.q", "\tqc:slots=0"]
    summary = qstat(cell, "-g", "c").splitlines()
    assert summary[:2] == reference("qstat-g-c.txt").splitlines()[:2]
    assert summary[2].split()[0] == "all.q" and summary[2].split()[2:] == ["2", "0", "0", "2", "0", "0"]


def test_xml_structure_matches_grid_engine(cell, busy):
    root = ET.fromstring(qstat(cell, "-xml"))
    want = ET.fromstring(reference("qstat-xml.txt"))
    assert [c.tag for c in root] == [c.tag for c in want] == ["queue_info", "job_info"]
    assert [c.tag for c in root[0][0]] == [c.tag for c in want[0][0]]
    pending = [j for j in root[1] if j.find("tasks") is None]
    assert [c.tag for c in pending[0]] == [c.tag for c in want[1][0]]
    assert all(j.get("state") == "running" for j in root[0]) and all(j.get("state") == "pending" for j in root[1])
    full = ET.fromstring(qstat(cell, "-f", "-xml"))
    ref_full = ET.fromstring(reference("qstat-f-xml.txt"))
    assert [c.tag for c in full[0][0]][:7] == [c.tag for c in ref_full[0][0]][:7]


def test_finished_job_leaves_plain_and_xml_promptly_and_shows_with_s_z(cell, workdir):
    job = submit(cell, "-b", "y", "-N", "quick", "true", cwd=workdir)
    cell.wait_finished(job)
    wait_for(lambda: job not in states(cell), timeout=20)
    assert f"<JB_job_number>{job}</JB_job_number>" not in qstat(cell, "-xml")
    finished = states(cell, "-s", "z")
    assert finished.get(job) == "z"


def test_two_tasks_of_a_row_are_listed_not_a_range(cell, workdir):
    """Grid Engine writes a run of two tasks as both numbers (qstat-Eqw.txt, qstat-s-z.txt,
    qstat-after-qdels.txt), one of more as first-last:step, in every row and in -xml."""
    def labels(*args):
        return {int(line.split()[0]): line.split()[-1] for line in qstat(cell, *args).splitlines()[2:]}
    failed = submit(cell, "-t", "1-3:2", "-o", "/nonexistent/dir/", "-b", "y", "true", cwd=workdir)
    done = submit(cell, "-t", "1-3:2", "-b", "y", "true", cwd=workdir)
    cell.wait_finished(done, tasks=(1, 3))
    pair = submit(cell, "-t", "1-2", "-h", "-b", "y", "true", cwd=workdir)
    more = submit(cell, "-t", "1-6", "-h", "-b", "y", "true", cwd=workdir)
    wait_for(lambda: labels().get(failed) == "1,3" and states(cell).get(failed) == "Eqw")
    assert (labels()[pair], labels()[more]) == ("1,2", "1-6:1")
    wait_for(lambda: labels("-s", "z").get(done) == "1,3")
    assert "<tasks>1,3</tasks>" in qstat(cell, "-xml") and "<tasks>1,2</tasks>" in qstat(cell, "-xml")
    cell.run("qdel", f"{more}.2-5", check=True)
    wait_for(lambda: labels().get(more) == "1,6")


def test_j_for_running_and_missing_jobs(cell, busy):
    text = qstat(cell, "-j", str(busy["run1"]))
    labels = [line[:28] for line in text.splitlines()]
    assert labels[0] == "=" * 28 and labels[1] == "job_number:                 "
    assert "job_name:                   run_one" in text
    assert re.search(r"^usage +1: +cpu=\d\d:\d\d:\d\d, mem=\d+\.\d{5} GB s, io=\d+\.\d{5} GB, vmem=\S+, maxvmem=\S+$",
                     text, re.M)
    proc = cell.run("qstat", "-j", "999999")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == "Following jobs do not exist: \n999999\n"


def test_j_shows_dependencies_pe_and_array(cell, busy):
    text = qstat(cell, "-j", str(busy["dep"]))
    assert f"jid_predecessor_list (req): {busy['run1']}\n" in text
    assert f"jid_predecessor_list:       {busy['run1']}\n" in text
    assert "job dropped because of job dependencies" in text
    assert f"jid_successor_list:         {busy['dep']}\n" in qstat(cell, "-j", str(busy["run1"]))
    assert "parallel environment:  smp range: 2\n" in qstat(cell, "-j", str(busy["pe"]))
    assert "hard resource_list:         h_rt=300,h_vmem=1G\n" in qstat(cell, "-j", str(busy["pe"]))
    assert "job-array tasks:            1-4:1\n" in qstat(cell, "-j", "arr")
    requests = ET.fromstring(qstat(cell, "-j", str(busy["pe"]), "-xml")).iter("qstat_l_requests")
    assert [(r.findtext("CE_name"), r.findtext("CE_stringval")) for r in requests] == \
        [("h_rt", "300"), ("h_vmem", "1G")]


def test_global_messages_list_held_jobs(cell, busy):
    text = qstat(cell, "-j")
    assert "Jobs dropped because of hold state\n" in text
    held_line = text.splitlines()[text.splitlines().index("Jobs dropped because of hold state") + 1]
    assert str(busy["held"]) in held_line.replace("\t", " ").replace(",", " ").split()


def test_r_t_and_g_d_views(cell, busy):
    text = qstat(cell, "-r")
    assert "       Hard Resources:   h_rt=300 (0.000000)\n                         h_vmem=1G (0.000000)\n" in text
    assert f"       Predecessor Jobs (request): {busy['run1']}\n" in text
    tasks = qstat(cell, "-t").splitlines()
    assert tasks[0] == reference("qstat-t.txt").splitlines()[0]
    run = next(line for line in tasks if line.split()[0] == str(busy["run1"]))
    assert run[97:103] == "MASTER"
    array = [line for line in qstat(cell, "-g", "d").splitlines() if line.split()[0] == str(busy["array"])]
    assert [line.split()[-1] for line in array] == ["1", "2", "3", "4"]


def test_priority_views_headers(cell, busy):
    for option, name in (("-pri", "qstat-pri.txt"), ("-urg", "qstat-urg.txt"), ("-ext", "qstat-ext.txt")):
        assert qstat(cell, option).splitlines()[:2] == reference(name).splitlines()[:2]


def test_users_see_own_jobs_unless_u_star(cell, users, workdir):
    mine = submit(cell, "-h", "-b", "y", "true", cwd=workdir, user=users[0])
    theirs = submit(cell, "-h", "-b", "y", "true", cwd=workdir, user=users[1])
    wait_for(lambda: {mine, theirs} <= set(states(cell, "-u", "*")))
    assert set(states(cell, "-u", users[0])) == {mine}
    own = qstat(cell, user=users[0])
    assert [int(line.split()[0]) for line in own.splitlines()[2:]] == [mine]
    assert all(users[0] in line for line in own.splitlines()[2:])
    assert {mine, theirs} <= set(states(cell, "-u", f"{users[0]},{users[1]}"))


def test_bad_option_and_help(cell):
    proc = cell.run("qstat", "-badopt")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == reference("qstat-bad-option.txt", "stderr")
    proc = cell.run("qstat", "-help")
    assert proc.returncode == 0 and proc.stdout == reference("qstat-help.txt")


def test_no_jobs_prints_nothing(cell):
    proc = cell.run("qstat")
    assert proc.returncode == 0 and proc.stdout == ""


def test_time_requests_are_shown_in_seconds(cell, workdir):
    """Grid Engine stores a time request in seconds when it takes the job (hex and octal
    read as C reads them, a fraction rounded); INFINITY and memory stay as typed."""
    job = submit(cell, "-h", "-l", "h_rt=0x10,h_cpu=010,h_vmem=2G", "-soft", "-l", "s_rt=1::,s_cpu=1.5",
                 "-b", "y", "true", cwd=workdir)
    text = qstat(cell, "-j", str(job))
    assert "hard resource_list:         h_rt=16,h_cpu=8,h_vmem=2G\n" in text
    assert "soft resource_list:         s_rt=3600,s_cpu=2\n" in text
    other = submit(cell, "-h", "-l", "h_rt=INFINITY", "-b", "y", "true", cwd=workdir)
    assert "hard resource_list:         h_rt=INFINITY\n" in qstat(cell, "-j", str(other))
    cell.run("qdel", str(job), str(other), check=True)


def test_ext_shows_the_usage_of_a_running_job(cell, workdir):
    """qstat -ext shows what a running job used (as qstat -j does), in Grid Engine's
    columns: cpu as days:hh:mm:ss, mem in GB seconds, io in GB."""
    script = "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; sleep 60\n"
    job = submit(cell, "-o", "/dev/null", "-e", "/dev/null", cwd=workdir, input=script)
    header = qstat(cell, "-ext").splitlines()[0]
    start = header.index("cpu")

    def columns():
        line = next((x for x in qstat(cell, "-ext").splitlines()[2:] if x.split()[0] == str(job)), "")
        return line[start:start + 27]
    try:
        running(cell, job)
        text = wait_for(lambda: re.fullmatch(r"0:00:\d\d:\d\d \d\.\d{5} \d\.\d{5} ", columns()) and columns(),
                        timeout=40)
        assert "usage         1:            cpu=" in qstat(cell, "-j", str(job))
        assert float(text.split()[1]) > 0.0                  # (memory integrated over time)
        # -xml -ext: cpu_usage, mem_usage and io_usage after the state and start time,
        # before the tickets, each with five decimals (qstat_xml.c)
        root = ET.fromstring(qstat(cell, "-xml", "-ext"))
        element = next(e for e in root.iter("job_list") if e.findtext("JB_job_number") == str(job))
        tags = [child.tag for child in element]
        assert tags.index("state") < tags.index("cpu_usage") < tags.index("mem_usage") \
            < tags.index("io_usage") < tags.index("tickets")
        assert re.fullmatch(r"\d+\.00000", element.findtext("cpu_usage"))
        assert re.fullmatch(r"\d+\.\d{5}", element.findtext("mem_usage"))
    finally:
        cell.run("qdel", str(job))


def test_qtype_letters_are_batch_interactive_parallel_checkpointing_or_none(cell, workdir):
    path = os.path.join(workdir, "ck")
    with open(path, "w") as fh:
        fh.write("ckpt_name ck\ninterface userdefined\nckpt_command none\nmigr_command none\n"
                 "restart_command none\nclean_command none\nckpt_dir /tmp\nsignal none\nwhen sx\n")
    cell.run("qconf", "-Ackpt", path, check=True)
    cell.run("qconf", "-aattr", "queue", "ckpt_list", "ck", "all.q", check=True)

    def qtype():
        line = qstat(cell, "-f").splitlines()[2]
        return line.split()[1]
    assert wait_for(lambda: qtype() == "BIPC")
    cell.run("qconf", "-mattr", "queue", "qtype", "NONE", "all.q", check=True)
    assert wait_for(lambda: qtype() == "PC")
    cell.run("qconf", "-rattr", "queue", "pe_list", "NONE", "all.q", check=True)
    cell.run("qconf", "-rattr", "queue", "ckpt_list", "NONE", "all.q", check=True)
    assert wait_for(lambda: qtype() == "N")


def test_a_job_held_after_a_pass_ordered_it_keeps_its_priority(cell, workdir):
    # (qstat-after-qhold.txt: a job held later keeps its prior and its place; one held since
    # its submission was never ordered: 0.00000)
    cell.run("qconf", "-mattr", "queue", "slots", "0", "all.q", check=True)
    later = submit(cell, "-b", "y", "-N", "later", "true", cwd=workdir)
    at_once = submit(cell, "-h", "-b", "y", "-N", "at_once", "true", cwd=workdir)
    waiting = submit(cell, "-b", "y", "-N", "waiting", "true", cwd=workdir)

    def prior():
        return {int(line.split()[0]): line.split()[1] for line in qstat(cell, "-pri").splitlines()[2:]}
    wait_for(lambda: prior().get(later, "0.00000") != "0.00000" and prior().get(waiting, "0.00000") != "0.00000")
    before = qstat(cell, "-pri").splitlines()
    assert cell.run("qhold", str(later)).returncode == 0
    assert states(cell)[later] == "hqw"
    lines = qstat(cell, "-pri").splitlines()
    ordered = [int(line.split()[0]) for line in lines[2:]]
    assert ordered.index(later) < ordered.index(at_once)
    row = next(line for line in lines if line.split()[0] == str(later))
    old = next(line for line in before if line.split()[0] == str(later))
    assert row.split()[1:5] == old.split()[1:5] and row.split()[1] != "0.00000"
    assert next(line for line in lines if line.split()[0] == str(at_once)).split()[1:5] == ["0.00000"] * 4


def test_a_restarted_daemon_shows_the_numbers_jobs_had(cell, workdir):
    """A job held since a pass ordered it keeps its numbers across a daemon restart (its
    passes give it no new ones), and a running job shows numbers too, not 0.00000."""
    cell.run("qconf", "-mattr", "queue", "slots", "1", "all.q", check=True)
    running = submit(cell, "-b", "y", "sleep", "300", cwd=workdir)
    held = submit(cell, "-b", "y", "true", cwd=workdir)

    def prior():
        return {int(line.split()[0]): line.split()[1] for line in qstat(cell, "-pri").splitlines()[2:]}
    wait_for(lambda: states(cell).get(running) == "r" and prior().get(held, "0.00000") != "0.00000")
    cell.run("qhold", str(held), check=True)
    before = prior()
    assert before[running] != "0.00000"
    cell.stop_daemon()
    cell.start_daemon()
    later = submit(cell, "-b", "y", "true", cwd=workdir)    # (shown once the new daemon published)
    wait_for(lambda: prior().get(later, "0.00000") != "0.00000")
    after = prior()
    assert after[held] == before[held] and after[running] != "0.00000"


def test_qstat_j_shows_the_term_grid_engines_qsub_records(cell, workdir):
    # (qstat-j-pending.txt: env_list TERM=NONE; the job gets TERM empty)
    plain = submit(cell, "-h", "-b", "y", "true", cwd=workdir)
    assert "\nenv_list:                   TERM=NONE\n" in qstat(cell, "-j", str(plain))
    named = submit(cell, "-h", "-v", "FOO=bar", "-b", "y", "true", cwd=workdir)
    assert "\nenv_list:                   TERM=NONE,FOO=bar\n" in qstat(cell, "-j", str(named))
    shown = qstat(cell, "-j", str(plain), "-xml")
    assert "<VA_variable>TERM</VA_variable>\n        </job_sublist>" in shown


def test_a_line_break_in_a_job_s_values_stays_on_its_line_in_qstat_j(cell, workdir):
    """A -v value, a context variable and an argument with a line break: qstat -j shows
    each on its own field's line (the break as \\n), so that a script reading the fields
    never meets a line the job's owner wrote."""
    proc = cell.run("qsub", "-terse", "-h", "-b", "y", "-v", "FOO=bar\njob_number: 999", "-ac", "k=v\nowner: root",
                    "echo", "a\nexec_file: /etc/shadow", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    out = cell.run("qstat", "-j", proc.stdout.strip()).stdout
    labels = [line.split(":")[0] for line in out.splitlines() if line and not line.startswith(" ")]
    assert labels.count("job_number") == 1 and labels.count("owner") == 1 and "exec_file" not in labels, out
    assert "FOO=bar\\njob_number: 999" in out and "a\\nexec_file: /etc/shadow" in out
