"""The share tree policy with a running daemon: two users' jobs take turns by their shares.

Each user submits 16 jobs of half a CPU second each on a cell of 2 slots, the
first user all of hers before the second starts. (The share tree weighs CPU
usage, as usage_weight_list says: a job that sleeps uses none.) Without tickets they would run in
submission order; with a share tree of 50/50 the run order interleaves the
users, and with 75/25 the first user gets about three jobs for each of the
second's. ``qstat -ext`` and ``-pri`` show the tickets that ordered them.
What a running job has used counts at once, not only when it ends: a user
whose long job is still burning CPU yields to one who has used nothing.
"""

import os
import pytest

from conftest import wait_for
from qtools import add_object, jid_of

JOBS = 16
#: CPU seconds each job of the run order tests burns
JOB_CPU = 0.5


def tree(alice, bob):
    return ("id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,2\n"
            f"id=1\nname=gtalice\ntype=0\nshares={alice}\nchildnodes=NONE\n"
            f"id=2\nname=gtbob\ntype=0\nshares={bob}\nchildnodes=NONE\n")


def configure(cell, alice, bob, interval=None):
    for user in ("gtalice", "gtbob"):
        add_object(cell, "-Auser", f"name {user}\noticket 0\nfshare 0\ndelete_time 0\n"
                                   "default_project NONE\n")
    add_object(cell, "-Astree", tree(alice, bob))
    cell.run("qconf", "-mattr", "sched", "weight_tickets_share", "10000", "", check=False)
    text = cell.run("qconf", "-ssconf", check=True).stdout
    # no waiting-time urgency: the tickets alone tell the users' jobs apart
    text = "\n".join("weight_tickets_share 10000" if line.startswith("weight_tickets_share") else
                     "weight_waiting_time 0" if line.startswith("weight_waiting_time") else
                     f"schedule_interval {interval}" if interval and line.startswith("schedule_interval") else line
                     for line in text.splitlines()) + "\n"
    add_object(cell, "-Msconf", text)


def burn(seconds):
    """A job script that notes its start (when $STARTS is set) and burns ``seconds`` of CPU."""
    return ("#!/bin/sh\n[ -n \"$STARTS\" ] && echo \"$(date +%s.%N) $USER\" >> \"$STARTS\"\n"
            f"exec /usr/bin/python3 -c 'import time\nend = time.process_time() + {seconds}\n"
            "while time.process_time() < end: pass'\n")


BURN = burn(1)


def submit_all(cell, workdir, users):
    """Each user's jobs, held, then all released at once: the first pass sees every job."""
    script = os.path.join(workdir, "burn.sh")
    with open(script, "w") as fh:
        fh.write(burn(JOB_CPU))
    os.chmod(script, 0o755)
    starts = os.path.join(workdir, "starts.log")
    open(starts, "w").close()
    os.chmod(starts, 0o666)                # both users' jobs note their start in it
    ids = {}
    for user in ("gtalice", "gtbob"):
        ids[user] = [jid_of(cell.qsub("-h", "-o", "/dev/null", "-j", "y",
                                      "-v", f"STARTS={workdir}/starts.log", script,
                                      user=user, cwd=workdir)) for _ in range(JOBS)]
    every = [str(j) for user in ids for j in ids[user]]
    cell.run("qrls", *every, check=True)
    return ids


def run_order(cell, ids, workdir):
    """Owners of the jobs in the order they started (each job notes its start to the
    nanosecond: the accounting's start times are whole seconds)."""
    wanted = {j for js in ids.values() for j in js}
    wait_for(lambda: len([r for r in cell.accounting() if int(r[5]) in wanted]) == len(wanted),
             timeout=120, interval=0.2)
    with open(os.path.join(workdir, "starts.log")) as fh:
        starts = sorted((float(t), user) for t, user in (line.split() for line in fh if line.strip()))
    assert len(starts) == len(wanted)
    return [user for _t, user in starts]


@pytest.fixture
def shared(cell, users, workdir):
    """The cell, with its test users and a directory they may work in."""
    os.chmod(workdir, 0o777)
    return cell


def test_fifty_fifty_interleaves_the_users(shared, workdir):
    cell = shared
    configure(cell, 50, 50)
    ids = submit_all(cell, workdir, ("gtalice", "gtbob"))
    owners = run_order(cell, ids, workdir)
    counts = {"gtalice": 0, "gtbob": 0}
    for owner in owners:
        counts[owner] += 1
        assert abs(counts["gtalice"] - counts["gtbob"]) <= 2, owners


def test_seventy_five_twenty_five_converges_to_three_to_one(shared, workdir):
    cell = shared
    configure(cell, 75, 25)
    ids = submit_all(cell, workdir, ("gtalice", "gtbob"))
    ext = cell.run("qstat", "-ext", "-u", "*").stdout
    owners = run_order(cell, ids, workdir)
    first = owners[:16]
    assert 10 <= first.count("gtalice") <= 14, owners      # 3:1 of 16 is 12:4
    assert "gtbob" in first[:6], owners
    assert " tckts " in ext.splitlines()[0]


def test_qstat_shows_the_tickets(shared, workdir):
    cell = shared
    configure(cell, 75, 25)
    cell.run("qmod", "-d", "all.q", check=True)        # the jobs stay pending, ordered
    for user in ("gtalice", "gtbob"):
        for _ in range(3):
            jid_of(cell.qsub("-b", "y", "true", user=user, cwd=workdir))

    def tickets():
        rows = {}
        for line in cell.run("qstat", "-ext", "-u", "*").stdout.splitlines()[2:]:
            fields = line.split()          # pending rows: no cpu, mem, io; tckts is 7th from the end
            rows[fields[0]] = (fields[4], float(fields[2]), int(fields[-7]))
        return rows if len(rows) == 6 and all(t[2] > 0 for t in rows.values()) else None
    rows = wait_for(tickets, timeout=10)
    alice = sorted((t for t in rows.values() if t[0] == "gtalice"), key=lambda t: -t[2])
    bob = sorted((t for t in rows.values() if t[0] == "gtbob"), key=lambda t: -t[2])
    assert alice[0][2] == pytest.approx(3 * bob[0][2], rel=0.01)    # 75 : 25 for the first jobs
    assert alice[0][2] > alice[1][2] > alice[2][2]                  # share/1, share/2, share/3
    pri = cell.run("qstat", "-pri", "-u", "*").stdout.splitlines()
    assert pri[0].split()[:5] == ["job-ID", "prior", "nurg", "npprior", "ntckts"]
    # normalized from 0 to the most tickets, as Grid Engine's scheduler does
    ntckts = {line.split()[0]: float(line.split()[4]) for line in pri[2:]}
    most = max(t[2] for t in rows.values())
    assert ntckts == {jid: pytest.approx(t[2] / most, abs=1e-3)    # tickets are shown whole
                      for jid, t in rows.items()}
    assert max(ntckts.values()) == 1.0 and min(ntckts.values()) > 0.0


def share_rows(cell, *args):
    """sge_share_mon -c 1 -n records as {node name: {field: value}}."""
    proc = cell.run("sge_share_mon", "-c", "1", "-n", *args)
    assert proc.returncode == 0, proc.stderr
    rows = {}
    for line in proc.stdout.splitlines():
        if line:
            assert line.endswith("\t")                # every field ends with the delimiter
            fields = dict(item.split("=", 1) for item in line[:-1].split("\t"))
            rows[fields["node_name"]] = fields
    return rows


def test_share_monitor_and_clearusage(shared, workdir):
    cell = shared
    configure(cell, 75, 25)
    script = os.path.join(workdir, "burn.sh")
    with open(script, "w") as fh:
        fh.write(BURN)
    os.chmod(script, 0o755)
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", script, user="gtalice", cwd=workdir))
    cell.wait_finished(jid, timeout=30)
    rows = wait_for(lambda: (lambda r: r if float(r.get("/gtalice", {}).get("ltcpu", 0)) >= 0.9 else None)(
        share_rows(cell)), timeout=10)
    assert set(rows) == {"/", "/gtalice", "/gtbob"}
    assert rows["/gtalice"]["shares"] == "75" and rows["/gtbob"]["level%"] == "0.250000"
    assert rows["/gtbob"]["total%"] == "0.250000" and rows["/"]["level%"] == "1.000000"
    assert float(rows["/gtbob"]["ltcpu"]) == 0.0
    assert float(rows["/gtalice"]["cpu"]) >= 0.9          # decayed usage, without -u too
    assert rows["/"]["usage_time"] == "0" and int(rows["/gtalice"]["usage_time"]) > 0
    # the header once, before the first collection, then the record delimiter
    text = cell.run("sge_share_mon", "-c", "2", "-i", "0.1", "-h", "-f", "node_name,shares", "-x").stdout
    assert text == ("node_name\tshares\t\n\n/gtalice\t75\t\n/gtbob\t25\t\n"
                    "\n/gtalice\t75\t\n/gtbob\t25\t\n")
    assert cell.run("sge_share_mon", "-c", "1", "-f", "node_name", "/gtbob").stdout == "/gtbob\t\n"
    out = os.path.join(workdir, "mon.out")          # -o appends unless -m w
    for extra, lines in (((), 1), ((), 2), (("-m", "w"), 1)):
        cell.run("sge_share_mon", "-c", "1", "-f", "node_name", "-o", out, *extra, "/gtbob", check=True)
        assert open(out).read() == "/gtbob\t\n" * lines
    assert cell.run("qconf", "-clearusage", user="gtalice").returncode != 0   # managers only
    cell.run("qconf", "-clearusage", check=True)
    cell.run("qmod", "-e", "all.q", check=True)            # any change makes a new pass
    wait_for(lambda: float(share_rows(cell, "-u")["/gtalice"]["cpu"]) == 0.0, timeout=10)
    # a name that is no field is passed over, as 8.1.9's monitor passes it over: with no
    # field left, each node prints nothing, not even its line's end
    bad = cell.run("sge_share_mon", "-c", "1", "-f", "nosuchfield")
    assert (bad.returncode, bad.stdout, bad.stderr) == (0, "", "")


def test_without_a_share_tree_the_monitor_says_so(cell):
    proc = cell.run("sge_share_mon", "-c", "1")
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", "No share tree\n")


def test_qconf_shows_a_users_configuration_without_the_usage(shared, workdir):
    """Grid Engine keeps a user's usage to its spool: qconf -suser shows the five
    configuration fields even once the user has used CPU, which sge_share_mon shows."""
    cell = shared
    configure(cell, 75, 25)
    script = os.path.join(workdir, "burn.sh")
    with open(script, "w") as fh:
        fh.write(BURN)
    os.chmod(script, 0o755)
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", script, user="gtalice", cwd=workdir))
    cell.wait_finished(jid, timeout=30)
    wait_for(lambda: float(share_rows(cell).get("/gtalice", {}).get("ltcpu", 0)) >= 0.9, timeout=10)
    shown = cell.run("qconf", "-suser", "gtalice").stdout
    assert shown == "name gtalice\noticket 0\nfshare 0\ndelete_time 0\ndefault_project NONE\n"


LONG_BURN = "#!/bin/sh\nexec /usr/bin/python3 -c 'import os, time\nend = time.time() + 60\n" \
            "while time.time() < end and not os.path.exists(os.environ[\"STOP\"]): pass'\n"
WAIT = "#!/bin/sh\nwhile [ ! -e \"$STOP\" ]; do sleep 0.05; done\n"


def test_a_running_jobs_usage_counts_before_it_ends(shared, workdir):
    """alice's job burns CPU and has not ended: sge_share_mon already shows her usage, and
    of her next job and bob's, bob's (who has used nothing) starts first."""
    cell = shared
    configure(cell, 50, 50, interval="0:0:1")
    stop = os.path.join(workdir, "stop")
    scripts = {}
    for name, text in (("burn", LONG_BURN), ("wait", WAIT)):
        scripts[name] = os.path.join(workdir, f"{name}.sh")
        with open(scripts[name], "w") as fh:
            fh.write(text)
        os.chmod(scripts[name], 0o755)
    common = ("-o", "/dev/null", "-j", "y", "-v", f"STOP={stop}")
    try:
        burner = jid_of(cell.qsub(*common, scripts["burn"], user="gtalice", cwd=workdir))
        wait_for(lambda: float(share_rows(cell, "-u").get("/gtalice", {}).get("cpu", 0)) >= 0.5,
                 timeout=30, interval=0.2)
        assert cell.task_states(burner).get(1) == "running"
        cell.run("qmod", "-d", "all.q", check=True)
        second = jid_of(cell.qsub(*common, scripts["wait"], user="gtalice", cwd=workdir))
        first = jid_of(cell.qsub(*common, scripts["wait"], user="gtbob", cwd=workdir))
        cell.run("qmod", "-e", "all.q", check=True)          # one slot is free: one of them starts
        wait_for(lambda: "running" in (cell.task_states(first).get(1), cell.task_states(second).get(1)),
                 timeout=20)
        assert cell.task_states(first).get(1) == "running", "alice's running usage did not count"
        assert cell.task_states(second).get(1) in (None, "pending")
    finally:
        open(stop, "w").close()
