"""HTCondor's parallel universe on a cell of two hosts, each served by its own execution
daemon: the executable runs once per granted slot (node 0 on the master), each node with
_CONDOR_PROCNO/_CONDOR_NPROCS and $(Node) expanded to its number; the job ends when node
0 ends (the other nodes are ended) or, with ParallelShutdownPolicy WAIT_FOR_ALL, when
every node ended; condor_q shows CurrentHosts and RemoteHosts, and condor_status every
slot a multi-host job holds (also a Grid Engine PE job's) as Claimed/Busy."""

import os
import re
import time

import psutil
import pytest

from condortools import history, submit, write
from gridtools.formats.condor.userlog import EventType, parse_events
from conftest import destroy_cell, make_cell, wait_for
from passwait import pass_after
from qtools import jid_of

NODE = """#!/bin/sh
echo "node=$_CONDOR_PROCNO of $_CONDOR_NPROCS host=$HOSTNAME arg=$1"
echo $$ > pidtmp.$_CONDOR_PROCNO && mv pidtmp.$_CONDOR_PROCNO pid.$_CONDOR_PROCNO
while [ ! -e release ]; do sleep 0.1; done
if [ "$_CONDOR_PROCNO" = 0 ]; then
    sleep "$2"
else
    while [ -e hold.others ]; do sleep 0.1; done
    sleep "$3"
fi
echo "node $_CONDOR_PROCNO done" > done.$_CONDOR_PROCNO
"""


@pytest.fixture
def two_hosts():
    cell = make_cell(slots=2, hosts=["testhost", "node2"], execds=True)
    try:
        yield cell
    finally:
        destroy_cell(cell)


def _description(first, others, extra=""):
    return ("universe = parallel\nexecutable = node.sh\nmachine_count = 4\n"
            f"arguments = a$(Node) {first} {others}\noutput = out.$(Node)\nerror = err.$(Node)\n"
            f"log = par.log\n{extra}queue\n")


def _start(cell, workdir, first, others, extra=""):
    write(os.path.join(workdir, "node.sh"), NODE)
    os.chmod(os.path.join(workdir, "node.sh"), 0o755)
    cluster = submit(cell, _description(first, others, extra), cwd=workdir)
    wait_for(lambda: all(os.path.exists(os.path.join(workdir, f"pid.{n}")) for n in range(4)), timeout=30)
    return cluster


def _lineage(pid):
    found, proc = [], psutil.Process(pid)
    while proc is not None:
        found.append(proc.pid)
        proc = proc.parent()
    return found


def _execd(cell, host):
    return int(open(os.path.join(cell.root, "spool", "execd", host, "execd.pid")).read())


def test_every_slot_runs_a_node_of_its_own(two_hosts, workdir):
    cell = two_hosts
    cluster = _start(cell, workdir, 0, 0)
    hostfile = open(os.path.join(cell.root, "spool", "jobs", str(cluster), "1", "pe_hostfile")).read()
    hosts = [h for line in hostfile.splitlines() for h in [line.split()[0]] * int(line.split()[1])]
    assert sorted(hosts) == ["node2", "node2", "testhost", "testhost"]
    # each node runs under the execution daemon of its host
    for node, host in enumerate(hosts):
        pid = int(open(os.path.join(workdir, f"pid.{node}")).read())
        assert _execd(cell, host) in _lineage(pid), (node, host)
    # (the nodes run before the dispatcher has published the job as running: wait until
    # condor_q shows it so)
    q = wait_for(lambda: (lambda q: q if q[:1] == ["4"] else None)(
        cell.run("condor_q", str(cluster), "-af", "CurrentHosts", "RemoteHosts").stdout.split()))
    assert q[0] == "4" and sorted(q[1].split(",")) == sorted(
        ["slot1@testhost", "slot2@testhost", "slot1@node2", "slot2@node2"])
    status = cell.run("condor_status", "-af", "Name", "State", "Activity", "JobId").stdout.splitlines()
    assert sorted(status) == sorted(f"{s} Claimed Busy {cluster}.0" for s in q[1].split(","))
    open(os.path.join(workdir, "release"), "w").close()
    cell.wait_finished(cluster, timeout=30)
    for node, host in enumerate(hosts):
        assert open(os.path.join(workdir, f"out.{node}")).read() == \
            f"node={node} of 4 host={host} arg=a{node}\n"
        assert os.path.exists(os.path.join(workdir, f"err.{node}"))
    records = wait_for(lambda: [r for r in cell.accounting() if r[5] == str(cluster)]
                       if len([r for r in cell.accounting() if r[5] == str(cluster)]) == 4 else None, timeout=15)
    assert sorted(r[1] for r in records) == sorted(hosts)
    wait_for(lambda: set(cell.run("condor_status", "-af", "State").stdout.split()) == {"Unclaimed"},
             timeout=20)                # every slot given back


def test_the_job_ends_with_node_0_and_the_other_nodes_are_ended(two_hosts, workdir):
    cell = two_hosts
    began = time.time()
    cluster = _start(cell, workdir, 0, 120)
    pids = [int(open(os.path.join(workdir, f"pid.{n}")).read()) for n in range(1, 4)]
    open(os.path.join(workdir, "release"), "w").close()
    cell.wait_finished(cluster, timeout=30)
    assert time.time() - began < 60
    wait_for(lambda: not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE
                             for p in pids), timeout=20)
    assert os.path.exists(os.path.join(workdir, "done.0"))
    assert not any(os.path.exists(os.path.join(workdir, f"done.{n}")) for n in range(1, 4))


def _log(workdir):
    with open(os.path.join(workdir, "par.log")) as fh:
        return parse_events(fh.read())


def test_wait_for_all_ends_the_job_when_every_node_ended(two_hosts, workdir):
    cell = two_hosts
    gate = os.path.join(workdir, "hold.others")      # (nodes 1..3 wait while it exists)
    open(gate, "w").close()
    cluster = _start(cell, workdir, 0, 4, extra='+ParallelShutdownPolicy = "WAIT_FOR_ALL"\n')
    # (shown running before node 0 ends: what condor_q shows next is not an older view)
    wait_for(lambda: cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.split() == ["2"])
    open(os.path.join(workdir, "release"), "w").close()
    # node 0 exited, and the daemon knows (its 015 is written)
    wait_for(lambda: any(e.type == EventType.NODE_TERMINATED and e.subproc == 0 for e in _log(workdir)),
             timeout=20)
    pass_after(cell)                    # node 0 is over; the job still runs while the others do
    assert cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.split() == ["2"]
    os.unlink(gate)                     # the other nodes go on: 4 s more
    cell.wait_finished(cluster, timeout=30)
    assert all(os.path.exists(os.path.join(workdir, f"done.{n}")) for n in range(4))
    # the job ended with its last node: its 005, CompletionDate and RemoteWallClockTime say so
    events = _log(workdir)
    ends = {e.subproc: e for e in events if e.type == EventType.NODE_TERMINATED}
    assert sorted(ends) == [0, 1, 2, 3] and all(ends[n].info["Node"] == n for n in ends)
    assert all(e.info["ReturnValue"] == 0 for e in ends.values())
    last = max(e.timestamp for e in ends.values())
    assert last - ends[0].timestamp >= 3             # the other nodes ran 4 s longer than node 0
    (done,) = [e for e in events if e.type == EventType.JOB_TERMINATED]
    assert done.timestamp >= last and events[-1] is done
    # (the final ad is written to the history after the job's end is in the spool)
    wait_for(lambda: history(cell, str(cluster), "-af", "ClusterId").strip())
    started, ended, wall = history(cell, str(cluster), "-af", "JobCurrentStartDate", "CompletionDate",
                                   "RemoteWallClockTime").split()
    assert int(ended) >= int(last) and int(ended) - int(started) >= 3 and float(wall) >= 3


def test_the_log_says_when_each_node_starts_and_ends(two_hosts, workdir):
    cell = two_hosts
    cluster = _start(cell, workdir, 0, 120)
    hostfile = open(os.path.join(cell.root, "spool", "jobs", str(cluster), "1", "pe_hostfile")).read()
    hosts = [h for line in hostfile.splitlines() for h in [line.split()[0]] * int(line.split()[1])]
    open(os.path.join(workdir, "release"), "w").close()
    cell.wait_finished(cluster, timeout=30)
    # the other nodes were ended with node 0, and the job's end waited for theirs: every
    # node's 015 comes before the job's 005, as HTCondor's shadow writes them
    events = wait_for(lambda: (lambda ev: ev if any(e.type == EventType.JOB_TERMINATED for e in ev)
                               else None)(_log(workdir)), timeout=20)
    assert events[-1].type == EventType.JOB_TERMINATED
    assert sorted(e.subproc for e in events if e.type == EventType.NODE_TERMINATED) == [0, 1, 2, 3]
    assert events[-1].timestamp >= max(e.timestamp for e in events if e.type == EventType.NODE_TERMINATED)
    text = open(os.path.join(workdir, "par.log")).read()
    for node, host in enumerate(hosts):
        assert f"014 ({cluster:03d}.000.{node:03d}) " in text
        assert f"Node {node} executing on host: <127.0.0.1:0?alias={host}>" in text
    kinds = [(int(e.type), e.subproc) for e in events]
    assert kinds[:6] == [(0, 0), (14, 0), (14, 1), (14, 2), (14, 3), (1, 0)]
    # each node's 014 names its own slot (node 0's is the job's, as its 001 names it)
    named = [e.info.get("SlotName") for e in events if e.type == EventType.NODE_EXECUTE]
    assert len(set(named)) == 4 and all(name.endswith("@" + host) for name, host in zip(named, hosts))
    assert named[0] == events[5].info["SlotName"]
    # and the properties of its run there, as the 001 names the job's (node 0's are those)
    props = [e.info.get("ExecuteProps") or {} for e in events if e.type == EventType.NODE_EXECUTE]
    assert props[0] == events[5].info["ExecuteProps"]
    assert all(p.get("Cpus") == "1" and "Memory" in p for p in props)
    assert len({p.get("CondorScratchDir") for p in props}) == 4        # (each node its own folder)
    ends = {e.subproc: e.info for e in events if e.type == EventType.NODE_TERMINATED}
    assert ends[0]["TerminatedNormally"] and ends[0]["ReturnValue"] == 0      # node 0 exited
    for node in (1, 2, 3):                           # the others were ended with it
        assert not ends[node]["TerminatedNormally"] and ends[node]["TerminatedBySignal"] == 15
    assert "Node 1 terminated.\n\t(0) Abnormal termination (signal 15)\n" in text
    assert "\t0  -  Total Bytes Received By Node\n" in text


def test_a_job_held_while_it_waits_for_its_other_nodes_is_held(two_hosts, workdir):
    cell = two_hosts
    cluster = _start(cell, workdir, 0, 120, extra='+ParallelShutdownPolicy = "WAIT_FOR_ALL"\n')
    pids = [int(open(os.path.join(workdir, f"pid.{n}")).read()) for n in range(4)]
    open(os.path.join(workdir, "release"), "w").close()
    # node 0 exited, and the daemon knows (its 015 is written); nodes 1..3 run on
    wait_for(lambda: any(e.type == EventType.NODE_TERMINATED and e.subproc == 0 for e in _log(workdir)),
             timeout=20)
    assert cell.run("condor_hold", str(cluster)).returncode == 0
    wait_for(lambda: cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.split() == ["5"])
    reason = cell.run("condor_q", str(cluster), "-af", "HoldReason").stdout
    assert reason.startswith("via condor_hold"), reason
    wait_for(lambda: not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE
                             for p in pids[1:]), timeout=20)
    # the daemon collected the other nodes' ends (their 015 are written), and a pass came after
    wait_for(lambda: {e.subproc for e in _log(workdir) if e.type == EventType.NODE_TERMINATED} == {0, 1, 2, 3},
             timeout=20)
    pass_after(cell)
    assert cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.split() == ["5"]
    kinds = [int(e.type) for e in _log(workdir) if e.subproc == 0 and e.type not in
             (EventType.NODE_EXECUTE, EventType.NODE_TERMINATED)]
    assert kinds == [0, 1, 12]
    # released, it runs every node again
    for n in range(4):
        os.unlink(os.path.join(workdir, f"pid.{n}"))
    os.unlink(os.path.join(workdir, "release"))
    assert cell.run("condor_release", str(cluster)).returncode == 0
    wait_for(lambda: all(os.path.exists(os.path.join(workdir, f"pid.{n}")) for n in range(4)), timeout=30)
    # (the nodes run before the dispatcher has published the job's new run)
    wait_for(lambda: cell.run("condor_q", str(cluster), "-af", "JobStatus", "NumJobStarts").stdout.split()
             == ["2", "2"])
    assert cell.run("condor_q", str(cluster), "-af", "JobStatus", "NumJobStarts").stdout.split() == ["2", "2"]
    assert cell.run("condor_rm", str(cluster)).returncode == 0
    cell.wait_finished(cluster, timeout=30)


def test_a_grid_engine_pe_job_claims_its_slots_on_every_host(two_hosts, workdir):
    cell = two_hosts
    jid = jid_of(cell.qsub("-pe", "mpi", "4", "-b", "y", "sleep", "60", cwd=workdir))
    wait_for(lambda: cell.task_states(jid).get(1) == "running")
    status = wait_for(lambda: (lambda s: s if len(s) == 4 and all("Claimed Busy" in ln for ln in s) else None)(
        cell.run("condor_status", "-af", "Name", "State", "Activity").stdout.splitlines()), timeout=15)
    assert sorted(ln.split()[0] for ln in status) == sorted(
        ["slot1@testhost", "slot2@testhost", "slot1@node2", "slot2@node2"])
    assert cell.run("condor_status", "-claimed", "-af", "Name").stdout.split() != []
    cell.run("qdel", str(jid), check=True)


def test_a_job_run_again_starts_every_node_again(two_hosts, workdir):
    cell = two_hosts
    cluster = _start(cell, workdir, 0, 0, extra='+ParallelShutdownPolicy = "WAIT_FOR_ALL"\n')
    first = [open(os.path.join(workdir, f"pid.{n}")).read() for n in range(4)]
    assert cell.run("condor_hold", str(cluster)).returncode == 0
    wait_for(lambda: cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.split() == ["5"])
    for n in range(4):
        os.unlink(os.path.join(workdir, f"pid.{n}"))
    assert cell.run("condor_release", str(cluster)).returncode == 0
    wait_for(lambda: all(os.path.exists(os.path.join(workdir, f"pid.{n}")) for n in range(4)), timeout=30)
    assert not set(first) & {open(os.path.join(workdir, f"pid.{n}")).read() for n in range(4)}
    open(os.path.join(workdir, "release"), "w").close()
    cell.wait_finished(cluster, timeout=30)
    assert all(os.path.exists(os.path.join(workdir, f"done.{n}")) for n in range(4))


def _running_on(cell, cluster, attr="RemoteHosts"):
    """The slots a running job holds (its RemoteHosts), once it runs."""
    found = wait_for(lambda: (lambda out: out if out and out[0] == "2" else None)(
        cell.run("condor_q", str(cluster), "-af", "JobStatus", attr).stdout.split()), timeout=30)
    return sorted(found[1].split(","))


def _unclaimed(cell, host):
    status = cell.run("condor_status", "-af", "Name", "State").stdout.splitlines()
    return sorted(ln for ln in status if ln.split()[0].endswith("@" + host)) == \
        [f"slot1@{host} Unclaimed", f"slot2@{host} Unclaimed"]


def test_every_node_runs_on_a_slot_the_requirements_accept(two_hosts, workdir):
    cell = two_hosts
    # two nodes, and only one slot the Requirements accept: it waits
    idle = submit(cell, "universe = parallel\nexecutable = /bin/sleep\narguments = 60\nmachine_count = 2\n"
                  'requirements = TARGET.Name == "slot1@testhost"\nqueue\n', cwd=workdir)
    # two nodes on slots both of which the Requirements accept: they run there
    fits = submit(cell, "universe = parallel\nexecutable = /bin/sleep\narguments = 60\nmachine_count = 2\n"
                  'requirements = regexp("@node2$", TARGET.Name)\nqueue\n', cwd=workdir)
    assert _running_on(cell, fits) == ["slot1@node2", "slot2@node2"]
    assert cell.run("condor_q", str(idle), "-af", "JobStatus").stdout.split() == ["1"]
    assert _unclaimed(cell, "testhost")


def test_a_job_of_two_cpus_takes_only_slots_the_requirements_accept(two_hosts, workdir):
    cell = two_hosts
    idle = submit(cell, "executable = /bin/sleep\narguments = 60\nrequest_cpus = 2\n"
                  'requirements = TARGET.Name == "slot2@testhost"\nqueue\n', cwd=workdir)
    one = submit(cell, "executable = /bin/sleep\narguments = 60\n"
                 'requirements = TARGET.Name == "slot1@node2"\nqueue\n', cwd=workdir)
    assert _running_on(cell, one, "RemoteHost") == ["slot1@node2"]
    assert cell.run("condor_q", str(idle), "-af", "JobStatus").stdout.split() == ["1"]
    assert _unclaimed(cell, "testhost")


def test_a_node_0_that_cannot_start_holds_the_job_naming_its_slot(two_hosts, workdir):
    """HTCondor's hold reason names the slot node 0 failed on (slotN@host), as RemoteHost
    does, not a queue instance."""
    cell = two_hosts
    for node in (1, 2, 3):
        write(os.path.join(workdir, f"in.{node}"), "x\n")
    cluster = submit(cell, "universe = parallel\nexecutable = /bin/cat\nmachine_count = 4\n"
                           "input = in.$(Node)\nlog = par.log\nqueue\n", cwd=workdir)
    wait_for(lambda: cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.split() == ["5"], timeout=30)
    code = cell.run("condor_q", str(cluster), "-af", "HoldReasonCode").stdout
    reason = cell.run("condor_q", str(cluster), "-af", "HoldReason").stdout
    missing = os.path.join(workdir, "in.0")
    assert code == "8\n" and re.fullmatch(r"Error from slot\d+@(testhost|node2): Failed to open '"
                                         + re.escape(missing) + r"' as standard input: No such file or "
                                         r"directory \(errno 2\)\n", reason), reason


def test_every_node_has_its_slot_and_the_ads_in_its_scratch_dir(two_hosts, workdir):
    """As HTCondor's starter on each node's slot: _CONDOR_SLOT and .machine.ad name the
    node's own slot, .job.ad is the job's, OMP_NUM_THREADS the node's one CPU."""
    cell = two_hosts
    write(os.path.join(workdir, "ads.sh"), '#!/bin/sh\n'
          'echo "$_CONDOR_SLOT $OMP_NUM_THREADS $BATCH_SYSTEM" '
          '$(grep "^Name = " "$_CONDOR_MACHINE_AD") $(grep "^ClusterId = " "$_CONDOR_JOB_AD") '
          '$(dirname "$_CONDOR_JOB_AD" | grep -cx "$_CONDOR_SCRATCH_DIR") > out.tmp.$1\n'
          'mv out.tmp.$1 out.$1\n', 0o755)
    cluster = submit(cell, "universe = parallel\nexecutable = ads.sh\nmachine_count = 4\narguments = $(Node)\n"
                     "+ParallelShutdownPolicy = \"WAIT_FOR_ALL\"\nqueue\n", cwd=workdir)
    outs = [os.path.join(workdir, f"out.{n}") for n in range(4)]
    wait_for(lambda: all(os.path.exists(p) for p in outs), timeout=30)
    lines = [open(p).read().split() for p in outs]
    for words in lines:
        slot, threads, batch, _n, _eq, name, _c, _eq2, clusterid, same = words
        assert (threads, batch, clusterid, same) == ("1", "HTCondor", str(cluster), "1")
        assert name.strip('"').partition("@")[0] == slot
    assert sorted(w[5].strip('"') for w in lines) == sorted(
        ["slot1@testhost", "slot2@testhost", "slot1@node2", "slot2@node2"])
