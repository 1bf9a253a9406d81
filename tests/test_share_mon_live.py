"""sge_share_mon end to end, read as Son of Grid Engine 8.1.9's monitor prints it.

One cell for the module: a share tree of Root (1 share) over gtalice (60) and
``default`` (40), which gtbob falls to; sched_conf's halftime is one hour, so
that the usage visibly decays between the last pass and a monitor's print.
Each user runs one job that burns a CPU second. The tests then read the
monitor as a script would: the header and the fields in Grid Engine's order,
each followed by the delimiter; -n, -d, -f, -x, -t; -u, which decays the usage
(cpu, mem, io and the combined usage alike) to the time of printing and stamps
each user's usage with that time, and adds or drops no node; options read as
getopt(3) reads them, a bad one exiting 1; -c 0 and a name -f does not know;
the record delimiter printed as soon as a collection ends; -o opened anew for
each collection (-m w keeps the latest one) and never through a link another
user planted.
"""

import os
import re
import shutil
import subprocess
import tempfile

import pytest

from attack_tools import private_folder, sticky_folder, user_py
from conftest import cell_fixture, wait_for
from qtools import add_object, jid_of

cell = cell_fixture(scope="module")

FIELDS = ["curr_time", "usage_time", "node_name", "user_name", "project_name", "shares",
          "job_count", "level%", "total%", "long_target_share", "short_target_share",
          "actual_share", "usage", "cpu", "mem", "io", "ltcpu", "ltmem", "ltio"]
NODES = ["/", "/gtalice", "/default", "/default/gtbob"]
TREE = ("id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,2\n"
        "id=1\nname=gtalice\ntype=0\nshares=60\nchildnodes=NONE\n"
        "id=2\nname=default\ntype=0\nshares=40\nchildnodes=NONE\n")
BURN = ("#!/bin/sh\nexec /usr/bin/python3 -c 'import time\nend = time.process_time() + 1\n"
        "while time.process_time() < end: pass'\n")
#: a double as Grid Engine's monitor prints it (%f)
DOUBLE = re.compile(r"\d+\.\d{6}")


def _sched_conf(cell):
    text = cell.run("qconf", "-ssconf", check=True).stdout
    wanted = {"weight_tickets_share": "10000", "halftime": "1"}
    lines = []
    for line in text.splitlines():
        key = line.split(None, 1)[0] if line.strip() else ""
        lines.append(f"{key} {wanted[key]}" if key in wanted else line)
    add_object(cell, "-Msconf", "\n".join(lines) + "\n")


def rows(cell, *args):
    """sge_share_mon -c 1 -n ``args``: [(node name, {field: value})] in the order printed."""
    proc = cell.run("sge_share_mon", "-c", "1", "-n", *args)
    assert proc.returncode == 0, proc.stderr
    found = []
    for line in proc.stdout.splitlines():
        assert line.endswith("\t"), line
        fields = dict(item.split("=", 1) for item in line[:-1].split("\t"))
        found.append((fields["node_name"], fields))
    return found


@pytest.fixture(scope="module")
def ready(cell, users):
    """The cell once both users' jobs have ended and the monitor shows their usage."""
    work = tempfile.mkdtemp(prefix="gtwork-", dir="/tmp")
    os.chmod(work, 0o777)
    try:
        for user in ("gtalice", "gtbob"):
            add_object(cell, "-Auser", f"name {user}\noticket 0\nfshare 0\ndelete_time 0\n"
                                       "default_project NONE\n")
        add_object(cell, "-Astree", TREE)
        _sched_conf(cell)
        script = os.path.join(work, "burn.sh")
        with open(script, "w") as fh:
            fh.write(BURN)
        os.chmod(script, 0o755)
        jobs = [jid_of(cell.qsub("-o", "/dev/null", "-j", "y", script, user=user, cwd=work))
                for user in ("gtalice", "gtbob")]
        for job in jobs:
            cell.wait_finished(job, timeout=60)

        def used():
            found = dict(rows(cell))
            return all(float(found.get(n, {}).get("ltcpu", 0)) >= 0.9 for n in ("/gtalice", "/default/gtbob"))
        wait_for(used, timeout=30, interval=0.2)
        yield cell
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture
def scratch():
    path = tempfile.mkdtemp(prefix="gtwork-", dir="/tmp")
    os.chmod(path, 0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_header_and_each_node_carry_every_field_in_grid_engines_order(ready):
    """-c 1 -h: the field names, each followed by a tab, then the line and the record
    delimiter; one line per node in tree order (gtbob under the default node he falls
    to), each of the 19 fields followed by a tab; no record delimiter after the one
    collection."""
    text = ready.run("sge_share_mon", "-c", "1", "-h", check=True).stdout
    lines = text.split("\n")
    assert lines[0] == "\t".join(FIELDS) + "\t"
    assert lines[1] == ""
    assert lines[-1] == "" and lines[-2] != ""           # the last node's line delimiter alone
    records = [line.split("\t") for line in lines[2:-1]]
    assert all(len(r) == len(FIELDS) + 1 and r[-1] == "" for r in records), records
    shown = {r[2]: dict(zip(FIELDS, r)) for r in records}
    assert [r[2] for r in records] == NODES
    for node, fields in shown.items():
        assert fields["curr_time"].isdigit() and fields["shares"].isdigit(), fields
        assert all(DOUBLE.fullmatch(fields[f]) for f in FIELDS[7:]), fields
        assert fields["project_name"] == ""
    assert [shown[n]["user_name"] for n in NODES] == ["", "gtalice", "", "gtbob"]
    assert [shown[n]["shares"] for n in NODES] == ["1", "60", "40", "40"]
    assert [shown[n]["level%"] for n in NODES] == ["1.000000", "0.600000", "0.400000", "1.000000"]
    assert [shown[n]["total%"] for n in NODES] == ["1.000000", "0.600000", "0.400000", "0.400000"]
    assert shown["/"]["usage_time"] == "0" and shown["/default"]["usage_time"] == "0"
    assert int(shown["/gtalice"]["usage_time"]) > 0 and int(shown["/default/gtbob"]["usage_time"]) > 0


def test_u_decays_the_combined_usage_too_and_stamps_each_user_now(ready):
    """-u decays every node's usage to the time of printing, the combined usage as much
    as cpu (usage_weight_list weighs cpu alone: a user's usage is its cpu, the root's
    the sum of theirs), leaves each node's part of the tree's usage as it was, and
    gives each user's usage_time the time it printed (curr_time), as Grid Engine's
    monitor brings each user's usage up to date; the same nodes print, gtbob's
    default-node line too."""
    def decayed():
        """Both, once the last pass is far enough behind to show: its usage decayed,
        and a second gone since it stamped the users' usage."""
        plain, now = rows(ready), rows(ready, "-u")
        pairs = [(dict(plain)[n], dict(now)[n]) for n in ("/gtalice", "/default/gtbob")]
        if all(float(b["cpu"]) < float(a["cpu"]) and int(a["usage_time"]) < int(b["curr_time"])
               for a, b in pairs):
            return plain, now
    plain, now = wait_for(decayed, timeout=30, interval=0.2)
    assert [n for n, _ in plain] == [n for n, _ in now] == NODES
    plain, now = dict(plain), dict(now)
    for node in ("/gtalice", "/default/gtbob"):
        assert now[node]["usage"] == now[node]["cpu"], now[node]
        assert plain[node]["usage"] == plain[node]["cpu"], plain[node]
        assert now[node]["usage_time"] == now[node]["curr_time"], now[node]
        assert int(plain[node]["usage_time"]) < int(now[node]["usage_time"])
        assert now[node]["ltcpu"] == plain[node]["ltcpu"]
    users = float(now["/gtalice"]["cpu"]) + float(now["/default/gtbob"]["cpu"])
    assert float(now["/"]["usage"]) == pytest.approx(users, abs=2e-6)
    assert float(now["/default"]["usage"]) == float(now["/default/gtbob"]["usage"])
    assert float(now["/"]["usage"]) < float(plain["/"]["usage"])
    for node in NODES:
        assert float(now[node]["actual_share"]) == pytest.approx(float(plain[node]["actual_share"]), abs=2e-6)
    assert now["/"]["usage_time"] == "0" and now["/default"]["usage_time"] == "0"


def test_field_lists_delimiters_names_and_times(ready):
    """-f picks fields in its order, -d delimits them, -n names them, -l ends each node
    and -h heads the collection with the names; -x prints the leaves alone (gtbob's line
    under default, not default itself), with -u as without; -t prints a user's
    usage_time as ctime(3) text and leaves a 0 as it is."""
    text = ready.run("sge_share_mon", "-c", "1", "-h", "-n", "-d", ",", "-f",
                     "node_name,user_name,shares,level%", check=True).stdout
    assert text == ("node_name,user_name,shares,level%,\n\n"
                    "node_name=/,user_name=,shares=1,level%=1.000000,\n"
                    "node_name=/gtalice,user_name=gtalice,shares=60,level%=0.600000,\n"
                    "node_name=/default,user_name=,shares=40,level%=0.400000,\n"
                    "node_name=/default/gtbob,user_name=gtbob,shares=40,level%=1.000000,\n")
    for extra in ((), ("-u",)):
        text = ready.run("sge_share_mon", "-c", "1", "-x", "-l", ";", "-f", "shares,node_name",
                         *extra, check=True).stdout
        assert text == "60\t/gtalice\t;40\t/default/gtbob\t;"
    text = ready.run("sge_share_mon", "-c", "1", "-t", "-d", "|", "-f", "node_name,usage_time",
                     check=True).stdout
    times = dict(line.split("|")[:2] for line in text.splitlines())
    assert times["/"] == "0" and times["/default"] == "0"
    assert re.fullmatch(r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}", times["/gtalice"])


def test_options_are_read_as_getopt_reads_them(ready):
    """As Grid Engine's monitor reads them with getopt(3): options after the node names,
    letters grouped, values joined to their letter, and -- ending the options."""
    proc = ready.run("sge_share_mon", "/gtalice", "-c", "1", "-f", "node_name", timeout=10)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "/gtalice\t\n", "")
    proc = ready.run("sge_share_mon", "-xc1", "-fnode_name,shares", timeout=10)
    assert (proc.returncode, proc.stdout) == (0, "/gtalice\t60\t\n/default/gtbob\t40\t\n")
    proc = ready.run("sge_share_mon", "-c1", "-fnode_name", "--", "/", "-x", timeout=10)
    assert (proc.returncode, proc.stdout) == (0, "/\t\n")
    bad = ready.run("sge_share_mon", "-c", "1", "-z", timeout=10)
    assert (bad.returncode, bad.stdout) == (1, "")
    assert bad.stderr.startswith("sge_share_mon: invalid option -- 'z'\nusage: sge_share_mon [-")


def test_count_0_prints_nothing_and_a_field_it_does_not_know_is_passed_over(ready):
    """As Grid Engine's monitor: -c 0 prints no collection (and no header), and -f
    passes over a name that is no field."""
    proc = ready.run("sge_share_mon", "-c", "0", "-h", timeout=10)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    proc = ready.run("sge_share_mon", "-c", "1", "-x", "-f", "nosuch,node_name", timeout=10)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "/gtalice\t\n/default/gtbob\t\n", "")


def test_a_collection_ends_with_the_record_delimiter_at_once(ready):
    """Without -c the monitor prints forever: each collection is followed by the record
    delimiter as soon as it is printed, as Grid Engine's monitor prints it, so a reader
    knows the collection is whole without waiting for the next one (a minute away)."""
    proc = subprocess.Popen(["sge_share_mon", "-i", "60", "-r", "END\n", "-f", "node_name", "-x"],
                            env=ready.env, cwd=ready.root, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    seen = bytearray()
    try:
        os.set_blocking(proc.stdout.fileno(), False)

        def ended():
            try:
                seen.extend(os.read(proc.stdout.fileno(), 4096) or b"")
            except BlockingIOError:
                pass
            return b"END\n" in seen
        wait_for(ended, timeout=20)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert bytes(seen) == b"/gtalice\t\n/default/gtbob\t\nEND\n"


def test_the_output_file_is_opened_for_each_collection(ready, scratch):
    """-o is opened anew for each collection with -m's mode, as Grid Engine's monitor
    opens it: appended to by default, and with -m w holding the latest collection
    alone (no header, no record delimiter after the last one)."""
    out = os.path.join(scratch, "mon.out")
    common = ("-c", "2", "-i", "0.1", "-h", "-x", "-f", "node_name", "-o", out)
    proc = ready.run("sge_share_mon", *common, "-m", "w")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert open(out).read() == "/gtalice\t\n/default/gtbob\t\n"
    os.unlink(out)
    ready.run("sge_share_mon", *common, check=True)
    assert open(out).read() == ("node_name\t\n\n/gtalice\t\n/default/gtbob\t\n\n"
                                "/gtalice\t\n/default/gtbob\t\n")


def test_an_output_file_that_cannot_be_opened_is_said_in_grid_engines_words(ready, scratch):
    path = os.path.join(scratch, "missing", "mon.out")
    proc = ready.run("sge_share_mon", "-c", "1", "-o", path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "", f"can't open file {path}: No such file or directory\n")


def test_no_output_file_is_made_without_a_share_tree(idle_cell, scratch):
    """Grid Engine's monitor looks for the share tree before it opens -o's file."""
    out = os.path.join(scratch, "mon.out")
    proc = idle_cell.run("sge_share_mon", "-c", "1", "-o", out)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", "No share tree\n")
    assert not os.path.lexists(out)


def test_the_output_file_goes_through_no_link_another_user_planted(ready, scratch, users):
    """gtbob links the name root's monitor writes to in a sticky folder anyone may write
    (as /tmp) to a file only root may read: the monitor refuses it, saying why, and the
    file the link names is as it was."""
    shared = sticky_folder(scratch)
    secret = os.path.join(private_folder(scratch, "rootonly"), "precious")
    with open(secret, "w") as fh:
        fh.write("root's own words\n")
    planted = os.path.join(shared, "mon.out")
    user_py(ready, users[1], f"import os; os.symlink({secret!r}, {planted!r})", check=True)
    proc = ready.run("sge_share_mon", "-c", "1", "-f", "node_name", "-o", planted)
    assert (proc.returncode, proc.stderr) == (1, f"can't open file {planted}: Permission denied\n")
    assert open(secret).read() == "root's own words\n"
    assert os.path.islink(planted)
