"""The procs of one cluster that ask for different resources, end to end: each is matched,
placed and booked with its own requests (its own ad), as HTCondor does, while the
cluster is one gridtools job whose description holds proc 0's."""

import os
import re

from condortools import statuses, submit, wait_status
from conftest import unanswered, wait_for

IDLE, RUNNING = 1, 2


def _info(cell, cluster):
    return cell.run("qstat", "-j", str(cluster)).stdout


def test_a_proc_asking_for_less_memory_runs_while_proc_0_waits(cell, workdir):
    """The cluster's proc 0 asks for more memory than any machine has, proc 1 for 10 MB:
    proc 1 runs, proc 0 stays idle with the reason of its own request. condor_qedit of
    proc 0's RequestMemory then lets it run too."""
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nrequest_memory = 99999999\nqueue\n"
                     "request_memory = 10\nqueue\n", cwd=workdir)
    assert wait_status(cell, f"{cluster}.1", RUNNING)
    assert statuses(cell, f"{cluster}.0")[f"{cluster}.0"] == IDLE
    assert wait_for(lambda: "Requirements are false" in _info(cell, cluster), 20)
    analyzed = cell.run("condor_q", "-better-analyze", f"{cluster}.0").stdout
    assert "No machines matched job's requirements" in analyzed
    assert "( TARGET.Memory >= 99999999 )" in analyzed
    edited = cell.run("condor_qedit", f"{cluster}.0", "RequestMemory", "10")
    assert edited.returncode == 0, edited.stderr
    assert wait_status(cell, f"{cluster}.0", RUNNING)


def test_queue_from_a_list_gives_each_proc_its_own_memory(cell, workdir):
    """``request_memory = $(mem)`` with ``queue mem in (...)``: the proc asking for 100 MB
    runs, the one asking for 200 TB waits."""
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nrequest_memory = $(mem)\n"
                     "queue mem in (200000000, 100)\n", cwd=workdir)
    assert wait_status(cell, f"{cluster}.1", RUNNING)
    assert statuses(cell, f"{cluster}.0")[f"{cluster}.0"] == IDLE


def test_each_proc_gets_and_holds_its_own_number_of_gpus(cell, workdir):
    """testhost offers gpu=2; procs ask for 1, 2 and 1 GPUs. Procs 0 and 2 run with one
    device each (CUDA_VISIBLE_DEVICES), proc 1 waits for two, and qstat -F shows none left."""
    assert cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=2", "testhost").returncode == 0
    cluster = submit(cell, "executable = /bin/sh\n"
                     "arguments = \"-c 'echo $CUDA_VISIBLE_DEVICES; exec sleep 300'\"\noutput = dev.$(Process)\n"
                     "request_gpus = 1\nqueue\nrequest_gpus = 2\nqueue\n"
                     "request_gpus = 1\nqueue\n", cwd=workdir)

    def devices(proc):
        try:
            with open(os.path.join(workdir, f"dev.{proc}")) as fh:
                return fh.read().strip()
        except FileNotFoundError:
            return ""
    assert wait_for(lambda: devices(0) and devices(2), 30), _info(cell, cluster)
    assert sorted([devices(0), devices(2)]) == ["0", "1"]
    assert statuses(cell, f"{cluster}.1")[f"{cluster}.1"] == IDLE
    assert "hc:gpu=0" in cell.run("qstat", "-F", "gpu").stdout
    assert wait_for(lambda: "offers only hc:gpu=1" in _info(cell, cluster), 20), _info(cell, cluster)


def test_a_proc_asking_for_two_cpus_gets_two_slots_while_proc_0_waits_for_four(cell, workdir):
    """request_cpus is the smp parallel environment per proc: on two slots, proc 1 (2
    CPUs) runs on both, proc 0 (4 CPUs) waits."""
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nrequest_cpus = 4\nqueue\n"
                     "request_cpus = 2\nqueue\n", cwd=workdir)
    assert wait_status(cell, f"{cluster}.1", RUNNING)
    assert statuses(cell, f"{cluster}.0")[f"{cluster}.0"] == IDLE
    assert " 0/2/2 " in cell.run("qstat", "-f").stdout


def test_each_proc_goes_where_its_own_requirements_allow(cell_two_hosts, workdir):
    """Proc 0's Requirements want a machine the cell lacks, proc 1's node2: proc 1 runs
    there, proc 0 waits."""
    cell = cell_two_hosts
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\n"
                     "requirements = (TARGET.Machine == \"nowhere\")\nqueue\n"
                     "requirements = (TARGET.Machine == \"node2\")\nqueue\n", cwd=workdir)
    assert wait_status(cell, f"{cluster}.1", RUNNING)
    assert statuses(cell, f"{cluster}.0")[f"{cluster}.0"] == IDLE
    assert cell.run("condor_q", f"{cluster}.1", "-af", "RemoteHost").stdout.strip().endswith("@node2")


def test_each_proc_counts_down_its_own_amount_of_a_machine_resource(cell, workdir):
    """request_<name> of a machine resource of the cell (licence=2 on testhost) per proc:
    proc 0 asks for 3 and waits, proc 1 for 2 and runs; qstat -F counts its 2."""
    from qtools import add_complex
    add_complex(cell, "licence lic INT <= YES YES 0 0")
    cell.run("qconf", "-mattr", "exechost", "complex_values", "licence=2", "testhost", check=True)
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nrequest_licence = 3\nqueue\n"
                     "request_licence = 2\nqueue\n", cwd=workdir)
    assert wait_status(cell, f"{cluster}.1", RUNNING)
    assert statuses(cell, f"{cluster}.0")[f"{cluster}.0"] == IDLE
    assert "hc:licence=0" in cell.run("qstat", "-F", "licence").stdout


def test_a_dag_node_counts_down_its_request_of_a_machine_resource(cell, workdir):
    """A DAG node's request_<name> of a machine resource of the cell is a request of it,
    as condor_submit's is: the node's job holds its 2 licences while it runs."""
    from qtools import add_complex
    from test_condor_dag_live import submit_dag
    add_complex(cell, "licence lic INT <= YES YES 0 0")
    cell.run("qconf", "-mattr", "exechost", "complex_values", "licence=2", "testhost", check=True)
    gate = os.path.join(workdir, "gate")
    with open(os.path.join(workdir, "a.sub"), "w") as fh:
        fh.write(f"executable = /bin/sh\narguments = \"-c 'while [ ! -e {gate} ]; do sleep 0.1; done'\"\n"
                 "request_licence = 2\nqueue\n")
    with open(os.path.join(workdir, "diamond.dag"), "w") as fh:
        fh.write("JOB A a.sub\n")
    submit_dag(cell, workdir)
    wait_for(lambda: "hc:licence=0" in cell.run("qstat", "-F", "licence").stdout)
    open(gate, "w").close()
    wait_for(lambda: "hc:licence=2" in cell.run("qstat", "-F", "licence").stdout)


def test_requests_no_host_can_meet_leave_the_job_waiting(cell, workdir):
    """Requests given as expressions that evaluate to more memory than can be written,
    or to infinity, are taken in as the largest request: the job waits (as HTCondor's
    stays idle), the next submission gets its own cluster, and the daemon goes on."""
    texts = ("executable = /bin/true\nMY.Mem = 10000000000000\nrequest_memory = MY.Mem\nqueue\n",
             "executable = /bin/true\nrequest_memory = real(\"INF\")\nrequest_gpus = real(\"INF\")\nqueue\n",
             "executable = /bin/true\nqueue\n")
    clusters = [submit(cell, text, cwd=workdir) for text in texts]
    assert len(set(clusters)) == 3
    for cluster in clusters[:2]:
        wait_for(lambda c=cluster: "mem_free=8796093022207M" in cell.run("qstat", "-j", str(c)).stdout)
        assert statuses(cell, f"{cluster}.0")[f"{cluster}.0"] == IDLE
    cell.wait_finished(clusters[2])


def test_a_later_proc_asking_for_what_the_cell_lacks_is_refused_at_submission(cell, workdir):
    """proc 1 asks for two CPUs (the parallel environment smp) in a cell without smp:
    condor_submit refuses the cluster, as it would for proc 0, and queues nothing."""
    cell.run("qconf", "-dattr", "queue", "pe_list", "smp", "all.q", check=True)
    cell.run("qconf", "-dp", "smp", check=True)
    text = "executable = /bin/true\nqueue\nrequest_cpus = 2\nqueue\n"
    with open(os.path.join(workdir, "c.sub"), "w") as fh:
        fh.write(text)
    refused = cell.run("condor_submit", "c.sub", cwd=workdir)
    assert (refused.returncode, refused.stderr) == (
        1, 'ERROR: this cell has no parallel environment "smp" for jobs of more than one CPU or machine\n')
    assert cell.run("condor_q", "-af", "ClusterId").stdout == ""


def test_another_users_view_of_a_running_proc_shows_its_own_memory(cell, workdir, users):
    """condor_q of another user's procs builds their ads from the published facts: a
    running proc that asks for other memory than proc 0 shows its own RequestMemory."""
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nrequest_memory = 20\nqueue\n"
                     "request_memory = 10\nqueue\n", cwd=workdir, user=users[0])
    assert wait_status(cell, f"{cluster}.1", RUNNING, user=users[0])

    def shown(proc):
        return cell.run("condor_q", f"{cluster}.{proc}", "-allusers", "-af", "RequestMemory",
                        user=users[1]).stdout.strip()
    assert (shown(0), shown(1)) == ("20", "10")


def test_procs_of_a_plain_queue_whose_cpus_depend_on_procid_hold_their_own_slots(workdir):
    """``request_cpus = ifThenElse(ProcId == 1, 2, 1)`` with ``queue 3`` (the procs differ
    only in ProcId: one stored ad) on four slots: proc 1 runs on two of them (smp), procs
    0 and 2 on one each, and condor_q shows each proc's own RequestCpus."""
    from conftest import destroy_cell, make_cell
    cell = make_cell(slots=4)
    try:
        cluster = submit(cell, "executable = /bin/sleep\narguments = 300\n"
                         "request_cpus = ifThenElse(ProcId == 1, 2, 1)\nqueue 3\n", cwd=workdir)
        for proc in range(3):
            assert wait_status(cell, f"{cluster}.{proc}", RUNNING)
        assert " 0/4/4 " in cell.run("qstat", "-f").stdout
        shown = cell.run("condor_q", str(cluster), "-af", "ProcId", "RequestCpus").stdout
        assert shown == "0 1\n1 2\n2 1\n"
        tasks = cell.run("qstat", "-g", "t").stdout
        assert tasks.count(" MASTER ") == 3 and tasks.count(" SLAVE ") == 1, tasks
    finally:
        destroy_cell(cell)


def test_a_proc_whose_cpus_fit_nowhere_does_not_stop_the_later_procs(cell, workdir):
    """``request_cpus = ifThenElse(ProcId == 0, 8, 1)`` with ``queue 3`` on two slots:
    proc 0 asks for more CPUs than any machine has and stays idle, with its own reasons
    (its Requirements are false for the host, condor_q -better-analyze names its 8
    CPUs); procs 1 and 2 run all the same."""
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\n"
                     "request_cpus = ifThenElse(ProcId == 0, 8, 1)\nqueue 3\n", cwd=workdir)
    assert wait_status(cell, f"{cluster}.1", RUNNING)
    assert wait_status(cell, f"{cluster}.2", RUNNING)
    assert statuses(cell, f"{cluster}.0")[f"{cluster}.0"] == IDLE
    assert cell.run("condor_q", f"{cluster}.0", "-af", "RequestCpus").stdout == "8\n"
    assert wait_for(lambda: "Requirements are false" in _info(cell, cluster), 20), _info(cell, cluster)
    analyzed = cell.run("condor_q", "-better-analyze", f"{cluster}.0").stdout
    assert "No machines matched job's requirements" in analyzed
    assert "( TARGET.Cpus >= 8 )" in analyzed


def _qstat(cell, *args):
    proc = cell.run("qstat", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _rows(text):
    """(slots, ja-task-ID, state) of each job line of a qstat table."""
    return [(line.split()[-2], line.split()[-1], line.split()[4]) for line in text.splitlines()[2:]]


def test_qstat_shows_the_slots_of_each_pending_proc(cell, workdir):
    """``request_cpus = ifThenElse(ProcId == 0, 8, 1)`` with ``queue 4``, held: qstat shows
    proc 0 (task 1) pending with its 8 slots on a line of its own and the other procs with
    their 1, as Grid Engine splits an array's tasks that show otherwise; -g d a line per
    task with its own slots, -xml the same, -r proc 0's PE on its row only; qstat -j the
    job's description (proc 0's), and the other procs' own (no PE) on a line of theirs."""
    cluster = submit(cell, "executable = /bin/true\nhold = true\n"
                     "request_cpus = ifThenElse(ProcId == 0, 8, 1)\nqueue 4\n", cwd=workdir)
    assert wait_for(lambda: len(_qstat(cell).splitlines()) == 4, 20), _qstat(cell)
    assert _rows(_qstat(cell)) == [("8", "1", "hqw"), ("1", "2-4:1", "hqw")]
    assert _rows(_qstat(cell, "-g", "d")) == [("8", "1", "hqw"), ("1", "2", "hqw"), ("1", "3", "hqw"),
                                              ("1", "4", "hqw")]
    xml = _qstat(cell, "-xml")
    assert re.findall(r"<slots>(\d+)</slots>\s*<tasks>([^<]*)</tasks>", xml) == [("8", "1"), ("1", "2-4:1")]
    resources = _qstat(cell, "-r")
    assert resources.count("Requested PE:     smp 8") == 1
    assert resources.index("Requested PE") < resources.index(" 2-4:1")
    shown = _qstat(cell, "-j", str(cluster))
    assert "parallel environment:  smp range: 8\n" in shown and "parallel environment 2-4:   NONE\n" in shown


def test_pending_procs_that_ask_alike_share_a_line_and_running_ones_show_their_own(cell, workdir):
    """``request_cpus = ifThenElse(ProcId == 1, 2, 1)`` with ``queue 4``, held; procs 0 and
    2 released run on one slot each. The held procs 1 (2 CPUs) and 3 (1 CPU) show on
    lines of their own; before the release, procs 0, 2 and 3 share one (tasks
    ``1,3,4``), proc 1 shows 2 slots; -g d lists the tasks in order."""
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\n"
                     "request_cpus = ifThenElse(ProcId == 1, 2, 1)\nqueue 4\n", cwd=workdir)
    assert wait_for(lambda: len(_qstat(cell).splitlines()) == 4, 20), _qstat(cell)
    assert _rows(_qstat(cell)) == [("1", "1,3,4", "hqw"), ("2", "2", "hqw")]
    assert _rows(_qstat(cell, "-g", "d")) == [("1", "1", "hqw"), ("2", "2", "hqw"), ("1", "3", "hqw"),
                                              ("1", "4", "hqw")]
    assert cell.run("condor_release", f"{cluster}.0", f"{cluster}.2").returncode == 0
    assert wait_status(cell, f"{cluster}.0", RUNNING) and wait_status(cell, f"{cluster}.2", RUNNING)
    assert wait_for(lambda: _rows(_qstat(cell)) == [("1", "1", "r"), ("1", "3", "r"), ("2", "2", "hqw"),
                                                    ("1", "4", "hqw")], 20), _qstat(cell)


def _resources(text):
    """(ja-task-ID, Requested PE or None, Hard Resources) of each job line of qstat -r."""
    found = []
    for line in text.splitlines()[2:]:
        if not line.startswith("       "):
            found.append([line.split()[-1], None, None])
        elif line.strip().startswith("Requested PE:"):
            found[-1][1] = line.split(":", 1)[1].strip()
        elif line.strip().startswith("Hard Resources:"):
            found[-1][2] = line.split(":", 1)[1].strip()
    return [tuple(entry) for entry in found]


#: procs 0 to 3: proc 0 asks for 8 CPUs, proc 2 for 50 MB; the others for 1 CPU and 10 MB
PER_PROC = ("executable = /bin/sleep\narguments = 300\nhold = true\n"
            "request_cpus = ifThenElse(ProcId == 0, 8, 1)\n"
            "request_memory = ifThenElse(ProcId == 2, 50, 10)\nqueue 4\n")

PER_PROC_ROWS = [("8", "1", "hqw"), ("1", "2,4", "hqw"), ("1", "3", "hqw")]
PER_PROC_RESOURCES = [("1", "smp 8", "mem_free=10M (0.000000)"), ("2,4", None, "mem_free=10M (0.000000)"),
                      ("3", None, "mem_free=50M (0.000000)")]
PER_PROC_J = ["hard resource_list 3:       mem_free=50M", "parallel environment 2-4:   NONE"]


def _j_tasks(cell, cluster):
    """The lines of qstat -j that give the requests of some of the job's tasks."""
    return [line for line in _qstat(cell, "-j", str(cluster)).splitlines()
            if re.match(r"(hard resource_list|parallel environment) \d", line)]


def test_qstat_without_a_daemon_shows_each_pending_proc_with_its_own_requests(idle_cell, workdir):
    """A cluster whose procs ask for other CPUs and memory (expressions of ProcId),
    submitted while no daemon runs (the request waits to be taken in): qstat shows each
    proc with its own slots, -r with its own requests, -j the tasks that ask otherwise,
    condor_q each proc's own values; the same once the daemon has taken it in."""
    cell = idle_cell
    cluster = submit(cell, PER_PROC, cwd=workdir)
    assert os.listdir(os.path.join(cell.root, "spool", "requests")), "taken in already"
    assert _rows(_qstat(cell)) == PER_PROC_ROWS
    assert _rows(_qstat(cell, "-g", "d")) == [("8", "1", "hqw"), ("1", "2", "hqw"), ("1", "3", "hqw"),
                                              ("1", "4", "hqw")]
    assert _resources(_qstat(cell, "-r")) == PER_PROC_RESOURCES
    shown = _qstat(cell, "-j", str(cluster))
    assert "hard resource_list:         mem_free=10M\n" in shown and "parallel environment:  smp range: 8\n" in shown
    assert _j_tasks(cell, cluster) == PER_PROC_J
    assert cell.run("condor_q", str(cluster), "-af", "ProcId", "RequestCpus", "RequestMemory").stdout == \
        "0 8 10\n1 1 10\n2 1 50\n3 1 10\n"
    long = cell.run("condor_q", f"{cluster}.2", "-l").stdout
    assert "RequestCpus = ifThenElse(ProcId == 0,8,1)\n" in long and "ProcId = 2\n" in long
    cell.start_daemon()
    assert wait_for(lambda: not unanswered(cell.root), 20)
    assert _rows(_qstat(cell)) == PER_PROC_ROWS
    assert _resources(_qstat(cell, "-r")) == PER_PROC_RESOURCES
    assert _j_tasks(cell, cluster) == PER_PROC_J
    assert cell.run("condor_q", str(cluster), "-af", "ProcId", "RequestCpus", "RequestMemory").stdout == \
        "0 8 10\n1 1 10\n2 1 50\n3 1 10\n"


def test_qstat_r_and_j_show_the_requests_of_each_proc(cell, workdir):
    """The same cluster with the daemon running: each line of qstat -r shows its tasks'
    own requested PE and hard resources, qstat -j the tasks that ask otherwise than the
    job's (proc 0's) lines; once proc 2 runs, its own line of -r shows its 50 MB and -j
    still names it; a daemon stopped leaves the same to show."""
    cluster = submit(cell, PER_PROC, cwd=workdir)
    assert wait_for(lambda: _rows(_qstat(cell)) == PER_PROC_ROWS, 20), _qstat(cell)
    assert _resources(_qstat(cell, "-r")) == PER_PROC_RESOURCES
    assert _j_tasks(cell, cluster) == PER_PROC_J
    xml = _qstat(cell, "-r", "-xml")
    assert re.findall(r'<hard_request name="mem_free"[^>]*>([^<]*)</hard_request>', xml) == ["10M", "10M", "50M"]
    assert cell.run("condor_release", f"{cluster}.2").returncode == 0
    assert wait_status(cell, f"{cluster}.2", RUNNING)
    assert wait_for(lambda: ("3", None, "mem_free=50M (0.000000)") in _resources(_qstat(cell, "-r")), 20)
    assert _j_tasks(cell, cluster) == PER_PROC_J
    cell.stop_daemon()
    assert _resources(_qstat(cell, "-r"))[0] == ("3", None, "mem_free=50M (0.000000)")
    assert _j_tasks(cell, cluster) == PER_PROC_J


def test_condor_qedit_of_a_running_proc_s_request_is_for_its_next_run(cell, workdir):
    """testhost offers gpu=2; a running proc holding both is edited to ask for none: it
    still holds them (qstat -F, and a second job asking for one waits) until it ends."""
    assert cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=2", "testhost").returncode == 0
    first = submit(cell, "executable = /bin/sleep\narguments = 300\nrequest_gpus = 2\nqueue\n", cwd=workdir)
    assert wait_status(cell, f"{first}.0", RUNNING)
    edited = cell.run("condor_qedit", f"{first}.0", "RequestGPUs", "0")
    assert edited.returncode == 0, edited.stderr
    second = submit(cell, "executable = /bin/sleep\narguments = 300\nrequest_gpus = 1\nqueue\n", cwd=workdir)
    assert wait_for(lambda: "offers only hc:gpu=0" in _info(cell, second), 20), _info(cell, second)
    assert statuses(cell, f"{second}.0")[f"{second}.0"] == IDLE
    shown = cell.run("qstat", "-F", "gpu").stdout
    assert "hc:gpu=0" in shown, shown
    assert cell.run("condor_rm", str(first)).returncode == 0
    assert wait_status(cell, f"{second}.0", RUNNING)
