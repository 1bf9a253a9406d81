"""The commands' lean paths show what their full paths show.

Plain qstat, condor_q's batch view and totals, and qdel/qhold/qrls resolve from
the published job listing (``spool.listing``) instead of every job row and fact;
the launchers load gridtools' own modules through their own finder and leave
without tearing the interpreter down; the hot modules import no ``os`` and no
``re``. Each of these is compared here with what it replaces.
"""

import glob
import io
import marshal
import os
import posixpath
import random
import subprocess
import sys
import time

import pytest

from conftest import BIN, REPO, run_bare, unanswered, wait_for
from test_qstat_format import reference_snapshot
from test_qstat_speed import big_snapshot

from gridtools import ospaths
from gridtools.cli import status as cli_status
from gridtools.cli.condor import q as condor_q, qlisting, queue as Q
from gridtools.cli.sge import jobsel, qstat
from gridtools.launch import BUNDLE_MAGIC
from gridtools.spool import listing as L, status as spool_status

QSTAT_ARGS = ([], ["-u", "*"], ["-s", "p", "-u", "*"], ["-s", "r", "-u", "*"], ["-s", "z", "-u", "*"],
              ["-s", "hu", "-u", "*"], ["-s", "prsz", "-u", "*"], ["-u", "carol"], ["-s", "hos"])
CONDOR_ARGS = ([], ["-allusers"], ["-totals"], ["alice"], ["carol", "-totals"], ["carol"], ["alice", "carol"],
               ["alice", "alice"], ["-nobatch"], ["-nobatch", "-allusers"], ["-nobatch", "carol"],
               ["-nobatch", "alice", "carol"], ["-nobatch", "-cumulative-time"],
               ["-batch:z"], ["-allusers", "-progress:b"])


def varied_snapshot():
    """The reference cell plus an array with running, held and finished tasks (some kept
    for HTCondor, one removed, one gone) and runs of jobs that show alike."""
    snap = reference_snapshot()
    template, t0 = snap["jobs"][53], 1796160000.25
    snap["jobs"][70] = dict(template, name="arr", owner="alice", submit_time=t0, tasks=[1, 6, 1], array=True,
                            condor={"cmd": "/bin/x", "args": ["a"], "batch": None, "prio": 3, "universe": 5,
                                    "ads": True, "kept": [4, 5], "hold": None,
                                    "tasks": {"5": {"removed": True}, "6": {"gone": True}}})
    snap["rows"] += [
        {"id": 70, "task": 1, "state": "r", "time": t0 + 5, "queue": "all.q@localhost", "slots": 1,
         "prio": 0.5, "granted": [], "pe": None},
        {"id": 70, "tasks": [[2, 3, 1]], "state": "hqw", "hold": "u", "time": t0, "queue": "", "slots": 1,
         "prio": 0.0},
        {"id": 70, "tasks": [[4, 6, 1]], "state": "z", "hold": "", "time": t0, "queue": "", "slots": 1,
         "prio": 0.0}]
    condor = {"cmd": "/bin/sleep", "args": ["1"], "batch": "bulk", "prio": 0, "universe": 5, "ads": False}
    for i in range(71, 90):
        when = t0 + 0.05 * i
        snap["jobs"][i] = dict(template, name="bulk", owner="carol", submit_time=when, condor=condor)
        snap["rows"].append({"id": i, "tasks": None, "state": "qw", "hold": "", "time": when, "queue": "",
                             "slots": 1, "prio": 0.25})
    return snap


def snapshots():
    big = big_snapshot(2000)
    for row in big["rows"]:
        if row["id"] >= 1000:               # runs of 100 alike jobs
            row["time"] = big["jobs"][row["id"]]["submit_time"] = 1796160000.5 + row["id"] // 100
            big["jobs"][row["id"]]["name"] = "same"
    return [reference_snapshot(), varied_snapshot(), big]


def plain_text(snap, argv, user="alice"):
    opts = qstat.parse_args(list(argv))
    opts.users = opts.users if opts.users is not None else [user]
    out = io.StringIO()
    qstat.plain(snap, opts, out)
    return out.getvalue(), opts


@pytest.mark.parametrize("index", range(3))
def test_plain_qstat_from_the_listing_is_the_full_table(index):
    snap = snapshots()[index]
    listing = L.build(snap)
    lines = L.Renderer().lines(listing)
    for argv in QSTAT_ARGS:
        want, opts = plain_text(snap, argv)
        assert qstat.from_listing(opts)
        for shown in (listing, dict(listing, lines=lines), dict(listing, lines=lines, zone="elsewhere")):
            out = io.StringIO()
            qstat.plain_listing(shown, opts, out)
            assert out.getvalue() == want, argv


def test_runs_hold_jobs_that_show_alike():
    listing = L.build(snapshots()[2])
    assert len(listing["runs"]) < 1100 and sum(r[L.COUNT] for r in listing["runs"]) == 2011
    assert len(L.build(varied_snapshot())["runs"]) < len(varied_snapshot()["rows"])


def test_a_kept_builder_builds_what_a_new_one_does():
    snap = varied_snapshot()
    builder = L.Builder()
    assert builder.build(snap) == L.build(snap)
    snap["rows"][3]["prio"] = 0.99                  # the daemon gave a row a new priority
    snap["rows"][-1] = dict(snap["rows"][-1], state="hqw", hold="u")     # and made a row anew
    assert builder.build(snap) == L.build(snap)


def with_tables(listing, made, names, zone=None):
    """The listing as ``spool.status.read_listing`` gives it with the tables ``names``
    of those the daemon made (``made``)."""
    tables = {name: value for name, value in made if name in names}
    return dict(listing, tables=tables, zone=zone or listing["zone"])


@pytest.mark.parametrize("index", range(3))
def test_condor_q_batch_view_and_totals_from_the_listing(index):
    snap = snapshots()[index]
    listing = L.build(snap)
    made = qlisting.Published()(listing)
    now = time.time()
    for argv in CONDOR_ARGS:
        for user in ("alice", "carol", "root", "nobody"):
            opts = condor_q.parse_args(list(argv))
            assert condor_q._from_listing(opts)
            everyone, source = Q.procs(snap), Q.AdSource(snap, user)
            chosen = condor_q.select(opts, everyone, user, source)
            want = condor_q.render(opts, snap, chosen, everyone, user, now, source)
            names = qlisting.wanted_tables(opts, user)
            for shown in (listing, with_tables(listing, made, names), with_tables(listing, made, names, "elsewhere")):
                assert qlisting.view(opts, shown, user, now, condor_q._schedd()) == want, (argv, user)


def test_the_published_batch_tables_are_shown_as_they_are():
    listing = L.build(varied_snapshot())
    made = dict(qlisting.Published()(listing))
    owners = {run[L.JOB][L.J_OWNER] for run in listing["runs"]}
    assert set(made) == {qlisting.BATCH, qlisting.NOBATCH} | {f"{qlisting.BATCH}:{o}" for o in owners}
    assert len(owners) > 1
    rows = made[qlisting.NOBATCH]           # a run's rows, made once when they never change
    assert len(rows) == len(listing["runs"])
    for run, text in zip(listing["runs"], rows):
        if run[L.TASKS] is not None or Q.holds_slot(run[L.STATE]):
            assert text is None
        elif text is not None:
            assert text.count("\n") == run[L.COUNT] and text.startswith(f"{run[L.ID]:4d}.0  ")
    assert any(text and text.count("\n") > 1 for text in rows)
    assert made[f"{qlisting.BATCH}:carol"] and made[f"{qlisting.BATCH}:carol"] != made[qlisting.BATCH]
    opts = condor_q.parse_args([])
    for user, names, shown in (("root", {qlisting.BATCH: "EVERYONE\n"}, "EVERYONE"),
                               ("carol", {qlisting.BATCH: "EVERYONE\n", f"{qlisting.BATCH}:carol": "CAROL\n"},
                                "CAROL"),
                               ("carol", {qlisting.BATCH: "EVERYONE\n", f"{qlisting.BATCH}:carol": None},
                                "EVERYONE")):
        text = qlisting.view(opts, dict(listing, tables=names), user, time.time(), "host")
        assert shown in text.splitlines(), (user, names)
    one = dict(listing, runs=[run for run in listing["runs"] if run[L.JOB][L.J_OWNER] == "alice"])
    alone = dict(qlisting.Published()(one))      # one owner: the same table
    assert [v for k, v in alone.items() if k not in (qlisting.BATCH, qlisting.NOBATCH)] == [None]


def test_job_names_resolve_alike_against_the_listing():
    snap = varied_snapshot()
    small = cli_status.from_listing(L.build(snap))
    for words in (["53"], ["54.2-4"], ["70"], ["70.4"], ["70.2-3"], ["61", "71"], ["999"]):
        items = jobsel.split_items(words)
        full_targets, full_missing = jobsel.resolve(items, snap)
        targets, missing = jobsel.resolve(items, small)
        assert (targets, missing) == (full_targets, full_missing)
        assert [jobsel.narrow(small, t) for t in targets] == [jobsel.narrow(snap, t) for t in targets]
    assert jobsel.jobs_of_users(small, ["carol"]) == jobsel.jobs_of_users(snap, ["carol"])


def test_status_file_sections_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    snap = varied_snapshot()
    spool_status.publish(snap)
    read = spool_status.read()
    assert read == dict(marshal.loads(marshal.dumps(snap)), version=spool_status.VERSION)
    listing = spool_status.read_listing(lines=True)
    assert listing["runs"] == L.build(snap)["runs"]
    assert "".join(listing["lines"]).count("\n") == len(snap["rows"])
    with open(spool_status.path(), "wb") as fh:           # a snapshot of the former format
        fh.write(marshal.dumps(dict(snap, version=1)))
    assert spool_status.read() is None and spool_status.read_listing() is None


def test_the_status_carries_the_tables_made_with_it_and_is_written_when_they_fail(tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    snap = varied_snapshot()
    spool_status.publish(snap, tables=qlisting.Published())
    batch, alice = qlisting.BATCH, f"{qlisting.BATCH}:alice"
    listing = spool_status.read_listing(tables=(batch, alice, f"{qlisting.BATCH}:nobody"))
    assert set(listing["tables"]) == {batch, alice} and listing["tables"][batch].startswith("OWNER ")
    assert "tables" not in spool_status.read_listing()

    def broken(_listing):
        raise KeyError("a table nobody could make")
    spool_status.publish(snap, tables=broken)           # (a cache: the status is written without it)
    listing = spool_status.read_listing(tables=(batch,))
    assert listing["runs"] == L.build(snap)["runs"] and listing["tables"] == {}
    assert spool_status.read()["rows"] == snap["rows"]


def test_status_file_of_many_jobs_reads_back_whole_and_in_order(tmp_path, monkeypatch):
    """Long sections are written in parts and the daemon's compact job facts (the facts
    alike jobs share, the submission time, the order facts) are read back as each
    job's own mapping: what queries see is the snapshot as it was made."""
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    snap = big_snapshot(2 * spool_status.PART + 7)
    expected = dict(marshal.loads(marshal.dumps(snap)), version=spool_status.VERSION)
    order = {"urgency": [1.0, 0.0, 0.0, 0.0], "order": None}
    compact = {}
    for job_id, info in snap["jobs"].items():
        if job_id % 3:                  # some jobs as the daemon publishes them, some as mappings
            shared = dict(info, submit_time=None, urgency=[9.0], order={"prio": 2.0})
            compact[job_id] = (shared, info["submit_time"], order)
            expected["jobs"][job_id] = dict(info, **order)
        else:
            compact[job_id] = info
    snap["jobs"] = compact
    snap["reasons"] = {row["id"]: [[3]] for row in snap["rows"]}
    expected["reasons"] = snap["reasons"]
    spool_status.publish(snap)
    read = spool_status.read()
    assert [r["id"] for r in read["rows"]] == [r["id"] for r in expected["rows"]]
    assert read == expected
    assert list(read["jobs"]) == list(expected["jobs"])
    assert list(read["jobs"][1001]) == list(expected["jobs"][1001])     # the facts' own order


def test_path_helpers_behave_as_os_path():
    rng = random.Random(5)
    parts = ["/", "a", "..", ".", "b", "//", "c/", ""]
    for _ in range(20000):
        path = "".join(rng.choice(parts) for _ in range(rng.randint(0, 6)))
        other = "".join(rng.choice(parts) for _ in range(rng.randint(0, 3)))
        assert ospaths.normpath(path) == posixpath.normpath(path)
        assert ospaths.abspath(path) == posixpath.abspath(path)
        assert ospaths.dirname(path) == posixpath.dirname(path)
        assert ospaths.basename(path) == posixpath.basename(path)
        assert ospaths.join(path, other, path) == posixpath.join(path, other, path)
    assert ospaths.home() == os.path.expanduser("~")
    assert ospaths.getenv("PATH") == os.environ.get("PATH") and ospaths.getenv("NO_SUCH_VAR_X") is None
    assert ospaths.isdir("/tmp") and not ospaths.isfile("/tmp") and ospaths.exists("/") \
        and not ospaths.lexists("/no/such/path") and not ospaths.isdir("/tmp\0x")


def test_the_json_scanner_reads_what_json_does():
    import json
    from gridtools.cli.ask import json_value
    texts = ['{"outcomes":[{"id":5,"missing":false,"denied":true,"array":false,"deleted":[[1,3,1]]}]}',
             ' [1, -2.5e3, "x\\u00e9\\n", null, {}] ', '{"a": {"b": [true]}}']
    for text in texts:
        assert json_value(text) == json.loads(text)
    for bad in ("", "{", "{} x", "[1,]"):
        with pytest.raises(ValueError):
            json_value(bad)


# ---------------------------------------------------------------- processes

#: the launcher's program, with the modules loaded written to stderr when it leaves
PROGRAM = ("import sys, posix; del sys.argv[0]; sys.path.insert(0, sys.argv.pop(0))\n"
           "leave = posix._exit\n"
           "def listed(code):\n"
           "    sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n'); sys.stderr.flush()\n"
           "    leave(code)\n"
           "posix._exit = listed\n"
           "from gridtools.launch import main; main()")


def _modules(command_line, env):
    """The modules a command has loaded when it leaves (bundles and the launcher's own
    included)."""
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", PROGRAM, os.path.join(REPO, "src")]
                          + command_line, capture_output=True, text=True, env=env, cwd="/tmp", timeout=60)
    listed = [line for line in proc.stderr.splitlines() if line.startswith("MODULES ")]
    return set(listed[-1].split()[1:]) if listed else set(), proc


#: what the hot commands must not import: each costs more than their own work (errno a
#: tenth of a millisecond, for errors these commands meet rarely)
HEAVY = {"os", "re", "enum", "functools", "collections", "json", "fnmatch", "shutil", "yaml", "lark",
         "dataclasses", "gridtools.spool.jobs", "gridtools.formats.sge.admission", "errno"}
STORE = {"os", "gridtools.spool.jobs"}


@pytest.fixture
def big_cell(cell):
    """A cell whose daemon holds 300 held jobs, with a submit file at hand."""
    sys.path.insert(0, os.path.join(REPO, "bench"))
    env = dict(cell.env)
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from gridtools.cli.sge import options, submit\n"
            "from gridtools.spool import ids, requests, wake\n"
            "req = options.fresh_request(); req.update(binary=True, user_hold=True)\n"
            "for jid in ids.allocate('job', 300):\n"
            "    requests.write('submit', {'job': submit.finish_spec(req, jid, 'true', '/tmp', [], "
            "command='/bin/true')})\n"
            "wake.poke()\n") % os.path.join(REPO, "src")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    wait_for(lambda: cell.run("qstat").stdout.count("\n") == 302, timeout=60)
    # (qstat also lists requests not taken in yet, with the time their client wrote: wait
    # until the daemon took every one in and stamped its own)
    wait_for(lambda: not unanswered(cell.root), timeout=60)
    return cell


def test_hot_commands_import_nothing_heavy(big_cell):
    job = big_cell.qsub("-terse", "-h", "-b", "y", "true").stdout.strip()
    wait_for(lambda: job in big_cell.run("qstat").stdout)
    env = dict(big_cell.env)
    # qhold and qdel read the job's files in the job store (which imports os) to make sure
    # it has not ended since the listing was published
    one = os.path.join(big_cell.root, "one.sub")
    with open(one, "w") as fh:
        fh.write("executable = /bin/true\narguments = a b\noutput = out.$(Cluster).$(Process)\n"
                 "request_memory = 1G\nrequest_cpus = 1\nhold = true\nqueue 2\n")
    # an expression of the user's, a function in a request, a custom attribute (dask-jobqueue's kind)
    exprs = os.path.join(big_cell.root, "exprs.sub")
    with open(exprs, "w") as fh:
        fh.write("executable = /bin/true\nrequirements = (Memory > 100) || regexp(\"x\", Name)\n"
                 "MY.Mem = 1073741824\nRequestMemory = floor(MY.Mem / 1048576)\nhold = true\nqueue\n")
    # expressions only the parser reads (a real, a unary minus)
    parsed = os.path.join(big_cell.root, "parsed.sub")
    with open(parsed, "w") as fh:
        fh.write("executable = /bin/true\nrank = -Memory\nRequestMemory = 1.5 * 1024\nhold = true\nqueue\n")
    # a user log and macros in file names (dask-jobqueue's HTCondorCluster): the log is made
    # without importing os
    logged = os.path.join(big_cell.root, "logged.sub")
    with open(logged, "w") as fh:
        fh.write("executable = /bin/true\nMY.JobId = \"$(ClusterId).$(ProcId)\"\n"
                 f"log = {big_cell.root}/logged-$(ClusterId).log\n"
                 f"output = {big_cell.root}/out-$F(MY.JobId).out\nhold = true\nqueue\n")
    # condor_q of one job's attributes (parsl's status poll) and qstat -j (toil's) read the job
    # store, nothing more
    for command, allowed in ((["qsub", "-h", "-b", "y", "true"], set()), (["qstat"], set()),
                             (["condor_q"], set()), (["condor_q", f"{job}.0", "-af:jr", "JobStatus"], STORE),
                             (["qstat", "-j", job], STORE),
                             (["qhold", job], STORE), (["qdel", job], STORE),
                             (["condor_submit", one], set()), (["condor_submit", exprs], set()),
                             (["condor_submit", parsed], set()), (["condor_submit", logged], set())):
        wait_for(lambda: not [n for n in unanswered(big_cell.root) if n.endswith(".submit")])
        loaded, proc = _modules([os.path.join(BIN, command[0])] + command[1:], env)
        assert proc.returncode == 0, (command, proc.stderr[-500:])
        heavy = loaded & HEAVY - allowed
        assert "gridtools.launch" in loaded and not heavy, (command, sorted(heavy))
        if "-af:jr" in command:
            assert proc.stdout == f"{job}.0 5\n" and "gridtools.model.job" in loaded
        if "-j" in command:
            assert f"job_number:                 {job}\n" in proc.stdout
        # the expressions are read, none evaluated (the daemon reads the requests); the
        # commonest are read without the parser
        evaluating = {"gridtools.classad." + name for name in ("evaluator", "operators", "functions", "ad")}
        if exprs in command:
            assert not loaded & (evaluating | {"gridtools.classad.parser"}), sorted(loaded & evaluating)
        if logged in command:
            assert glob.glob(os.path.join(big_cell.root, "logged-*.log")), proc.stdout
        if parsed in command:
            assert "gridtools.classad.parser" in loaded and not loaded & evaluating, sorted(loaded & evaluating)


def test_qstat_shows_the_listing_in_another_time_zone_as_the_full_path_does(big_cell):
    for zone in ("UTC", "Asia/Kolkata", "America/New_York"):
        shown = big_cell.run("qstat", env={"TZ": zone}).stdout
        full = big_cell.run("qstat", "-s", "prsh", env={"TZ": zone}).stdout      # not from the listing
        assert shown == full and shown.count("\n") == 302


def test_condor_q_and_qdel_from_the_listing_in_a_live_cell(big_cell):
    batch = big_cell.run("condor_q").stdout
    assert "300 jobs; 0 completed, 0 removed, 0 idle, 0 running, 300 held, 0 suspended" in batch
    for zone in ("UTC", "Asia/Kolkata"):          # the daemon's table, and one made here
        shown = big_cell.run("condor_q", env={"TZ": zone}).stdout.splitlines()
        full = big_cell.run("condor_q", "-constraint", "true", env={"TZ": zone}).stdout.splitlines()
        assert shown[3:] == full[3:] and shown[3].startswith("OWNER ") and shown[4].endswith(" 300 1.0 ... 300.0")
    out = big_cell.run("qdel", "1", "299", "77777")
    assert out.stdout == ('root has deleted job 1\nroot has deleted job 299\n'
                          'denied: job "77777" does not exist\n')
    assert out.returncode == 1
    assert big_cell.run("qstat").stdout.count("\n") == 300


def test_launchers_own_finder_recompiles_a_changed_module(tmp_path):
    """A module whose source changed after its bytecode was cached is compiled again
    (the finder checks time and size, as Python's own loader does)."""
    src = tmp_path / "src"
    subprocess.run(["cp", "-r", os.path.join(REPO, "src"), str(src)], check=True)
    subprocess.run(["cp", "-r", BIN, str(tmp_path / "bin")], check=True)
    env = dict(os.environ, PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))
    qstat_bin = str(tmp_path / "bin" / "qstat")
    first = subprocess.run([qstat_bin, "-help"], capture_output=True, text=True, env=env)
    usage = src / "gridtools" / "cli" / "sge" / "usage_text.py"
    text = usage.read_text()
    usage.write_text(text.replace('VERSION_LINE = "SGE 8.1.9"', 'VERSION_LINE = "SGE 8.1.9 (changed)"'))
    second = subprocess.run([qstat_bin, "-help"], capture_output=True, text=True, env=env)
    assert first.stdout.startswith("SGE 8.1.9\n") and second.stdout.startswith("SGE 8.1.9 (changed)\n")


def test_a_bundle_is_written_used_and_made_again_when_a_source_changes(cell, tmp_path):
    """A hot command's modules come from its bundle once it exists; a change to one of
    their sources makes the bundle stale, and the next run uses the changed module."""
    subprocess.run(["cp", "-r", os.path.join(REPO, "src"), str(tmp_path / "src")], check=True)
    subprocess.run(["cp", "-r", BIN, str(tmp_path / "bin")], check=True)
    qsub = str(tmp_path / "bin" / "qsub")
    bundle = tmp_path / "src" / "gridtools" / "__pycache__" / \
        f"launch.qsub.{sys.implementation.cache_tag}.bundle"
    first = cell.run(qsub, "-h", "-b", "y", "true")
    written = bundle.stat().st_mtime_ns
    second = cell.run(qsub, "-h", "-b", "y", "true")
    assert first.stdout.endswith("has been submitted\n") and second.stdout.endswith("has been submitted\n")
    assert bundle.stat().st_mtime_ns == written
    module = tmp_path / "src" / "gridtools" / "cli" / "sge" / "qsub.py"
    module.write_text(module.read_text().replace("has been submitted", "has been queued"))
    for _ in range(2):
        assert cell.run(qsub, "-h", "-b", "y", "true").stdout.endswith("has been queued\n")
    assert bundle.stat().st_mtime_ns != written


def test_condor_submits_bundle_holds_each_module_once_and_serves_every_start(cell, tmp_path):
    """A package whose __init__ imports its own modules ends loading after them: the bundle
    holds it after them and loads it all the same, start after start. (gridtools.classad's
    own __init__ loads its modules when their names are used; the copy here imports one.)
    A plain description's bundle holds no ClassAd expression module."""
    subprocess.run(["cp", "-r", os.path.join(REPO, "src"), str(tmp_path / "src")], check=True)
    init = tmp_path / "src" / "gridtools" / "classad" / "__init__.py"
    init.write_text(init.read_text() + "\nfrom gridtools.classad.draft import DraftAd  # noqa: E402\n")
    subprocess.run(["cp", "-r", BIN, str(tmp_path / "bin")], check=True)
    condor_submit = str(tmp_path / "bin" / "condor_submit")
    bundle = tmp_path / "src" / "gridtools" / "__pycache__" / \
        f"launch.condor_submit.{sys.implementation.cache_tag}.bundle"
    one = tmp_path / "one.sub"
    one.write_text("executable = /bin/true\nhold = true\nqueue\n")
    outs = [cell.run(condor_submit, str(one)).stdout]
    written = bundle.stat().st_mtime_ns
    outs += [cell.run(condor_submit, str(one)).stdout for _ in range(2)]
    assert all(out.startswith("Submitting job(s).\n1 job(s) submitted to cluster ") for out in outs)
    assert bundle.stat().st_mtime_ns == written
    names, _lazy = _bundle_names(bundle)
    assert len(names) == len(set(names))
    assert names.index("gridtools.classad.draft") < names.index("gridtools.classad")
    assert not {"gridtools.classad.parser", "gridtools.classad.nodes", "gridtools.classad.operators"} & set(names)


#: a submit description of dask-jobqueue's kind, and a rank only the parser reads: its
#: expressions and macros make condor_submit import the ClassAd parser, its nodes and the
#: macro expander while it runs
EXPRESSIONS = ('MY.JobId = "$(ClusterId).$(ProcId)"\nMY.DaskWorkerMemory = 1073741824\n'
               "RequestCpus = MY.DaskWorkerCores\nMY.DaskWorkerCores = 1\nRank = -Memory\n"
               "RequestMemory = floor(MY.DaskWorkerMemory / 1048576)\n"
               "Output = /tmp/x/worker-$F(MY.JobId).out\nArguments = \"-c 'echo hi'\"\n"
               "Executable = /bin/sh\nhold = true\nQueue\n")


def _copied_tree(tmp_path, command):
    """A copy of the package and its launchers; the launcher of ``command`` and its bundle."""
    subprocess.run(["cp", "-r", os.path.join(REPO, "src"), str(tmp_path / "src")], check=True)
    subprocess.run(["cp", "-r", BIN, str(tmp_path / "bin")], check=True)
    bundle = tmp_path / "src" / "gridtools" / "__pycache__" / \
        f"launch.{command}.{sys.implementation.cache_tag}.bundle"
    return str(tmp_path / "bin" / command), bundle


def _bundle_names(bundle):
    """The names of a bundle's eager entries, in order, and its lazy entries: name ->
    (source's place in the package, its modification time and size, marshalled code)."""
    data = bundle.read_bytes()
    start = len(BUNDLE_MAGIC) + 4
    assert data[:len(BUNDLE_MAGIC)] == BUNDLE_MAGIC
    length = int.from_bytes(data[start - 4:start], "little")
    eager, index = marshal.loads(data[start:start + length])
    tail = data[start + length:]
    lazy = {name: (where, mtime, size, tail[at:at + count]) for name, (where, mtime, size, at, count) in index.items()}
    assert sum(entry[4] for entry in index.values()) == len(tail)
    return [entry[0] for entry in eager], lazy


def test_modules_a_run_imports_later_are_lazy_entries_served_from_the_bundle(cell, tmp_path):
    """The modules condor_submit imports while it reads a description with expressions
    are kept in its bundle as lazy entries, not run at start: a plain description's run
    does not run them, and the next run that needs them takes their code from the
    bundle (a lazy module's cached bytecode, removed, is not made again)."""
    condor_submit, bundle = _copied_tree(tmp_path, "condor_submit")
    parser = tmp_path / "src" / "gridtools" / "classad" / "parser.py"
    parser.write_text(parser.read_text() + "\nimport posix  # noqa: E402\nposix.write(2, b'parser ran\\n')\n")
    exprs, plain = tmp_path / "exprs.sub", tmp_path / "plain.sub"
    exprs.write_text(EXPRESSIONS)
    plain.write_text("executable = /bin/true\nhold = true\nqueue\n")
    first = cell.run(condor_submit, str(exprs))
    assert first.stdout.startswith("Submitting job(s).\n1 job(s) submitted to cluster ")
    assert first.stderr == "parser ran\n"
    eager, lazy = _bundle_names(bundle)
    assert {"gridtools.classad.parser", "gridtools.classad.nodes", "gridtools.classad.grammar",
            "gridtools.formats.condor.macros"} <= set(lazy)
    assert not set(lazy) & set(eager) and "gridtools.cli.condor.submit" in eager
    where, mtime, size, data = lazy["gridtools.classad.parser"]
    assert where == "/classad/parser.py" and (mtime, size) == (parser.stat().st_mtime_ns, parser.stat().st_size)
    assert "_parse_long" in marshal.loads(data).co_names
    written = bundle.stat().st_mtime_ns
    cached = parser.parent / "__pycache__" / f"parser.{sys.implementation.cache_tag}.pyc"
    assert cached.exists()
    cached.unlink()
    plain_run = cell.run(condor_submit, str(plain))
    assert plain_run.stdout.startswith("Submitting job(s).\n1 job(s) submitted to cluster ")
    assert plain_run.stderr == ""                   # the lazy entries did not run
    for _ in range(2):
        again = cell.run(condor_submit, str(exprs))
        assert again.stdout.startswith("Submitting job(s).\n1 job(s) submitted to cluster ")
        assert again.stderr == "parser ran\n"
    assert not cached.exists()                      # its code came from the bundle
    assert bundle.stat().st_mtime_ns == written
    def requests():             # the daemon took the four jobs in
        shown = cell.run("condor_q", "-af", "RequestMemory", "RequestCpus").stdout.splitlines()
        return shown if len(shown) == 4 else None
    assert wait_for(requests).count("1024 1") == 3  # what the expressions asked for


def test_a_lazy_module_whose_source_changed_is_compiled_again_and_its_entry_renewed(cell, tmp_path):
    """A lazy entry is used only while its own source is unchanged: a changed module
    runs as changed, and the bundle is written again with the new code, which later
    runs take from it."""
    condor_submit, bundle = _copied_tree(tmp_path, "condor_submit")
    exprs = tmp_path / "exprs.sub"
    exprs.write_text(EXPRESSIONS)
    assert cell.run(condor_submit, str(exprs)).returncode == 0
    written = bundle.stat().st_mtime_ns
    eager_before, lazy_before = _bundle_names(bundle)
    macros = tmp_path / "src" / "gridtools" / "formats" / "condor" / "macros.py"
    macros.write_text(macros.read_text() + "\nimport posix  # noqa: E402\nposix.write(2, b'macros changed\\n')\n")
    changed = cell.run(condor_submit, str(exprs))
    assert changed.stdout.startswith("Submitting job(s).\n1 job(s) submitted to cluster ")
    assert changed.stderr == "macros changed\n"
    assert bundle.stat().st_mtime_ns != written
    eager, lazy = _bundle_names(bundle)
    assert eager == eager_before and set(lazy) == set(lazy_before)
    where, mtime, size, data = lazy["gridtools.formats.condor.macros"]
    assert (mtime, size) == (macros.stat().st_mtime_ns, macros.stat().st_size)
    assert lazy["gridtools.classad.parser"] == lazy_before["gridtools.classad.parser"]     # kept as it was
    rewritten = bundle.stat().st_mtime_ns
    (macros.parent / "__pycache__" / f"macros.{sys.implementation.cache_tag}.pyc").unlink()
    later = cell.run(condor_submit, str(exprs))
    assert later.stderr == "macros changed\n" and bundle.stat().st_mtime_ns == rewritten
    assert not (macros.parent / "__pycache__" / f"macros.{sys.implementation.cache_tag}.pyc").exists()


def test_a_lazy_entry_that_cannot_be_read_is_made_again(cell, tmp_path):
    """A lazy entry whose code is damaged in the bundle: the run that imports it loads
    the module as Python would and writes the bundle again, with the entry whole."""
    condor_submit, bundle = _copied_tree(tmp_path, "condor_submit")
    exprs = tmp_path / "exprs.sub"
    exprs.write_text(EXPRESSIONS)
    assert cell.run(condor_submit, str(exprs)).returncode == 0
    _eager, lazy = _bundle_names(bundle)
    data = bundle.read_bytes()
    code = lazy["gridtools.classad.nodes"][3]
    assert data.count(code) == 1
    bundle.write_bytes(data.replace(code, b"\0" * len(code)))
    damaged = bundle.stat().st_mtime_ns
    out = cell.run(condor_submit, str(exprs))
    assert out.stdout.startswith("Submitting job(s).\n1 job(s) submitted to cluster ") and out.stderr == ""
    assert bundle.stat().st_mtime_ns != damaged
    assert marshal.loads(_bundle_names(bundle)[1]["gridtools.classad.nodes"][3]) == marshal.loads(code)


def test_fast_exit_flushes_output_and_keeps_exit_codes(cell):
    out = cell.run("qsub", "-h", "-b", "y", "true")
    assert out.returncode == 0 and out.stdout.startswith("Your job ") and out.stdout.endswith('submitted\n')
    bad = cell.run("qsub", "-l", "nosuch=1", "-b", "y", "true")
    assert bad.returncode != 0 and bad.stderr
    read, write = os.pipe()
    os.close(read)                      # output into a closed pipe: the interpreter's own report
    proc = subprocess.run(["qstat", "-help"], stdout=write, stderr=subprocess.PIPE, env=cell.env)
    os.close(write)
    assert proc.returncode != 0


def test_the_site_module_runs_for_a_library_and_not_for_a_standard_library_probe():
    """A command without the site module gets it when it imports a library only the site's
    paths hold (yaml), and not when the standard library merely probes for a module it
    expects to miss (``copy`` tries Jython's ``org.python.core``)."""
    code = ("from gridtools import launch\n"
            "sys.meta_path.append(launch.SiteOnDemand)\n"
            "import copy\n"
            "probed = 'site' in sys.modules\n"
            "import yaml\n"
            "print(probed, 'site' in sys.modules, yaml.safe_load('a: 1'))")
    out = run_bare(code)
    assert out.stdout == "False True {'a': 1}\n", out.stderr


def test_bundled_code_keeps_everything_but_its_docstrings():
    """``launch.without_docstrings`` drops the docstrings of a module, its classes and
    functions (nested ones too) and nothing else: a string a function returns first,
    lambdas and comprehensions behave as before, and a module's docstring whose text the
    module also uses (one constant for both) is kept."""
    from gridtools.launch import without_docstrings
    source = '''"""the module"""
WORD = "the module"


class Thing:
    """a class"""
    label = "a label"

    def method(self):
        """a method"""
        return "a result"


def first_string():
    return "first"


def nested():
    """outer"""
    def inner():
        """inner"""
        return "inside"
    return inner


def echo():
    """echo"""
    return "echo"


pick = lambda: "lambda"
listed = [text for text in ("x", "y")]
'''
    alone = without_docstrings(compile('"""only a docstring"""\nX = 1\n', "alone", "exec"))
    assert "only a docstring" not in alone.co_consts
    plain, stripped = {}, {}
    exec(compile(source, "sample", "exec"), plain)
    exec(without_docstrings(compile(source, "sample", "exec")), stripped)
    assert plain["__doc__"] == stripped["__doc__"] == stripped["WORD"] == "the module"
    assert stripped["Thing"].label == "a label"
    assert stripped["Thing"].__doc__ is None and stripped["Thing"].method.__doc__ is None
    assert stripped["Thing"]().method() == "a result" and stripped["first_string"]() == "first"
    assert stripped["nested"].__doc__ is None and stripped["nested"]().__doc__ is None
    assert stripped["nested"]()() == "inside" and stripped["pick"]() == "lambda"
    assert stripped["listed"] == ["x", "y"] and stripped["echo"]() == "echo"
    assert plain["Thing"].method.__doc__ == "a method" and plain["nested"]().__doc__ == "inner"
