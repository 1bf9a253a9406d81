"""condor_q against a running daemon: HTCondor's layouts, selections, ads of both dialects."""

import io
import json
import os
import re
import sys
import time
from xml.etree import ElementTree

import pytest

from condortools import statuses, submit, wait_status
from conftest import BIN, wait_for

SLEEP = "executable = /bin/sleep\narguments = 300\n"
TOTALS = re.compile(r"^Total for (query|\w+|all users): \d+ jobs; \d+ completed, \d+ removed, \d+ idle, "
                    r"\d+ running, \d+ held, \d+ suspended ?$")


def _lines(cell, *args, user=None):
    proc = cell.run("condor_q", *args, user=user)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split("\n")


def test_batch_view_layout(cell, workdir):
    cluster = submit(cell, SLEEP + "hold = true\nqueue 3\n", cwd=workdir)
    lines = _lines(cell)
    assert lines[:2] == ["", ""]
    assert re.match(r"^-- Schedd: testhost : <127\.0\.0\.1:9618\?\.\.\. @ \d\d/\d\d/\d\d \d\d:\d\d:\d\d$",
                    lines[2])
    assert lines[3] == "OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"
    row = lines[4]
    assert re.match(rf"^root     ID: {cluster} +\d+/\d+ +\d\d:\d\d +_ +_ +_ +3 +3 {cluster}\.0-2$", row)
    assert len(row.split(f"ID: {cluster}")[0]) == 9          # OWNER is 8 wide, then one blank
    assert lines[5] == ""
    # (root is a queue super user: its query is for everyone's jobs, no line of its own)
    assert [bool(TOTALS.match(ln)) for ln in lines[6:8]] == [True, True]
    assert lines[6].endswith(" ") and not lines[7].endswith(" ")
    assert lines[6] == "Total for query: 3 jobs; 0 completed, 0 removed, 0 idle, 0 running, 3 held, 0 suspended "
    assert lines[7] == "Total for all users: 3 jobs; 0 completed, 0 removed, 0 idle, 0 running, 3 held, 0 suspended"
    assert lines[8:] == ["", ""]


def test_nobatch_run_and_hold_views(cell, workdir):
    cluster = submit(cell, SLEEP + "queue 1\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 2)
    lines = _lines(cell, "-nobatch")
    assert lines[3] == " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD"
    assert re.match(rf"^ {{0,4}}{cluster}\.0   root +\d+/\d+ +\d\d:\d\d +0\+00:\d\d:\d\d R  0    0\.0 sleep 300$",
                    lines[4])
    run = _lines(cell, "-run")
    assert run[3] == " ID      OWNER            SUBMITTED     RUN_TIME HOST(S)"
    assert run[4].endswith(" slot1@testhost") and run[5:] == [""]
    assert cell.run("condor_hold", "-reason", "wait", jid).stdout == f"Job {jid} held\n"
    wait_status(cell, jid, 5)
    held = _lines(cell, "-hold")
    assert held[3] == " ID      OWNER          HELD_SINCE  CODE/SUB HOLD_REASON"
    assert re.match(rf"^ *{cluster}\.0 +root +\d+/\d+ +\d\d:\d\d +1/0   wait \(by user root\)$", held[4])


def test_autoformat_as_parsl_reads_it_and_format(cell, workdir):
    cluster = submit(cell, SLEEP + "queue 2\n", cwd=workdir)
    out = cell.run("condor_q", f"{cluster}.0", f"{cluster}.1", "-af:jr", "JobStatus").stdout
    assert [ln.split()[0] for ln in out.splitlines()] == [f"{cluster}.0", f"{cluster}.1"]
    assert all(ln.split()[1] in ("1", "2") for ln in out.splitlines())
    fmt = cell.run("condor_q", str(cluster), "-format", "%d.", "ClusterId", "-format", "%d\\n", "ProcId").stdout
    assert fmt == f"{cluster}.0\n{cluster}.1\n"
    labelled = cell.run("condor_q", f"{cluster}.0", "-af:l", "Owner", "ProcId").stdout
    assert labelled == "Owner = root ProcId = 0\n"
    headed = cell.run("condor_q", str(cluster), "-af:h", "ProcId", "Cmd").stdout.splitlines()
    assert headed[0].split() == ["ProcId", "Cmd"] and headed[1].split() == ["0", "/bin/sleep"]


def test_qsub_jobs_are_clusters_too(cell, workdir):
    proc = cell.qsub("-t", "1-3", "-b", "y", "-N", "arr", "-cwd", "sleep", "300", cwd=workdir)
    jid = int(re.search(r"(\d+)", proc.stdout).group(1))
    long = cell.run("condor_q", f"{jid}.2", "-l").stdout
    assert f"ClusterId = {jid}\n" in long and "ProcId = 2\n" in long
    assert 'Cmd = "sleep"' in long and f'Iwd = "{workdir}"' in long
    assert set(statuses(cell, str(jid))) == {f"{jid}.0", f"{jid}.1", f"{jid}.2"}
    assert cell.run("condor_rm", f"{jid}.1").stdout == f"Job {jid}.1 marked for removal\n"
    wait_for(lambda: f"{jid}.1" not in statuses(cell, str(jid)))
    assert cell.run("condor_rm", str(jid)).stdout == f"All jobs in cluster {jid} have been marked for removal\n"
    wait_for(lambda: not statuses(cell, str(jid)))
    assert cell.run("qstat", "-j", str(jid)).returncode == 1


def test_constraint_totals_json_and_limit(cell, workdir):
    a = submit(cell, SLEEP + "+Colour = \"red\"\nhold = true\nqueue 2\n", cwd=workdir)
    b = submit(cell, SLEEP + "+Colour = \"blue\"\nhold = true\nqueue\n", cwd=workdir, name="b.sub")
    red = cell.run("condor_q", "-constraint", 'Colour == "red"', "-af", "ClusterId").stdout
    assert red == f"{a}\n{a}\n"
    total = _lines(cell, "-totals", "-constraint", 'Colour == "blue"')
    assert total[3] == "Total for query: 1 jobs; 0 completed, 0 removed, 0 idle, 0 running, 1 held, 0 suspended "
    ads = json.loads(cell.run("condor_q", str(b), "-json").stdout)
    assert [(ad["ClusterId"], ad["ProcId"], ad["Colour"]) for ad in ads] == [(b, 0, "blue")]
    assert ads[0]["Requirements"].startswith("/Expr(")
    xml = cell.run("condor_q", str(b), "-xml").stdout
    assert xml.startswith('<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n<c>\n')
    [ad] = ElementTree.fromstring(xml.split("\n", 2)[2]).findall("c")
    attrs = {a.get("n"): a[0] for a in ad.findall("a")}
    assert (attrs["ClusterId"].tag, attrs["ClusterId"].text) == ("i", str(b))
    assert (attrs["Colour"].tag, attrs["Colour"].text) == ("s", "blue")
    assert attrs["Requirements"].tag == "e" and "TARGET.Memory" in attrs["Requirements"].text   # (& unescaped)
    assert (attrs["ExitBySignal"].tag, attrs["ExitBySignal"].get("v")) == ("b", "f")
    assert [a.get("n") for a in ad.findall("a")] == sorted(attrs, key=str.lower)
    assert cell.run("condor_q", "-af", "ClusterId", "-limit", "1").stdout == f"{a}\n"
    bad = cell.run("condor_q", "-constraint", "Colour ==")
    assert bad.returncode == 1 and "Invalid constraint" in bad.stderr


def test_better_analyze_explains_an_unmatchable_job(cell, workdir):
    cluster = submit(cell, SLEEP + "requirements = TARGET.Memory > 100000000\nqueue\n", cwd=workdir)
    out = cell.run("condor_q", "-better-analyze", f"{cluster}.0").stdout
    assert f"{cluster:03d}.000:  Run analysis summary.  Of 2 machines," in out
    assert "      2 are rejected by your job's requirements" in out
    assert "No machines matched job's requirements" in out
    assert re.search(r"\( TARGET\.Memory > 100000000 \)\s+0\s+MODIFY TO", out)
    held = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, name="h.sub")
    assert "Request is held." in cell.run("condor_q", "-analyze", f"{held}.0").stdout


def test_other_users_see_public_facts_only(cell, workdir, users):
    user = users[0]
    cluster = submit(cell, SLEEP + 'environment = "SECRET=x"\nhold = true\nqueue\n', cwd=workdir)
    # another user sees the job once the daemon took it in (the owner sees it at once)
    theirs = wait_for(lambda: cell.run("condor_q", str(cluster), "-l", user=user).stdout)
    assert str(cluster) not in "".join(_lines(cell, user=user)[3:4])
    assert "ClusterId = " in theirs and "Owner = \"root\"" in theirs
    assert "SECRET" not in theirs and "Iwd" not in theirs
    mine = cell.run("condor_q", str(cluster), "-l").stdout
    assert "SECRET=x" in mine
    denied = cell.run("condor_rm", f"{cluster}.0", user=user)
    assert denied.returncode == 1 and denied.stderr == f"\nPermission denied to remove job {cluster}.0\n"


UNMATCHABLE = ("executable = /bin/sleep\narguments = 300 private-arg\nenvironment = \"SECRET=x\"\n"
               "requirements = TARGET.Memory > 100000000\nrank = TARGET.Memory * 2\nrequest_memory = 123\n"
               "+Colour = \"blue\"\nqueue\n")


def test_other_users_see_the_ad_a_job_was_submitted_with(cell, workdir, users):
    """User B sees what user A's ad says (Requirements, Rank, requests ...) as A does, in
    condor_q's attribute views, constraints and analysis, and in condor_history; never
    its command, arguments, environment or directory."""
    alice, bob = users[0], users[1]
    cluster = submit(cell, UNMATCHABLE, cwd=workdir, user=alice)
    jid = f"{cluster}.0"
    wait_for(lambda: cell.run("condor_q", jid, "-af", "ClusterId", user=bob).stdout == f"{cluster}\n")
    for qualifiers in ("-af", "-af:r"):
        args = (jid, qualifiers, "Requirements", "Rank", "RequestMemory", "RequestCpus", "MinHosts", "Colour")
        mine = cell.run("condor_q", *args, user=alice).stdout
        assert cell.run("condor_q", *args, user=bob).stdout == mine
    raw = cell.run("condor_q", jid, "-af:r", "Requirements", "Rank", "RequestMemory", user=bob).stdout
    assert raw.startswith("(TARGET.Memory > 100000000) && ") and raw.endswith(" TARGET.Memory * 2 123\n")
    theirs = cell.run("condor_q", jid, "-l", user=bob).stdout
    assert "Requirements = (TARGET.Memory > 100000000) && " in theirs and 'Colour = "blue"' in theirs
    for hidden in ("Args", "Arguments", "Cmd", "Environment", "Iwd", "Out", "Err"):
        assert f"\n{hidden} = " not in theirs, hidden
    assert "private-arg" not in theirs and "SECRET" not in theirs and workdir not in theirs
    assert "/bin/sleep" not in theirs
    # the same analysis, line for line (below the schedd's title, which has the time)
    analyses = [cell.run("condor_q", "-better-analyze", jid, user=u).stdout.split("\n")[3:] for u in (alice, bob)]
    assert analyses[0] == analyses[1]
    assert "      2 are rejected by your job's requirements" in analyses[1]
    assert any(re.match(r"1\s+\( TARGET\.Memory > 100000000 \)\s+0\s+MODIFY TO", line) for line in analyses[1])
    chosen = cell.run("condor_q", "-allusers", "-constraint", "RequestMemory == 123 && Rank =?= TARGET.Memory * 2",
                      "-af", "ClusterId", user=bob)
    assert chosen.stdout == f"{cluster}\n", chosen.stderr
    # an edit of the owner's is what the others see
    assert cell.run("condor_qedit", jid, "Colour", '"red"', user=alice).returncode == 0
    wait_for(lambda: cell.run("condor_q", jid, "-af", "Colour", user=bob).stdout == "red\n")
    # and so it is in the history
    assert cell.run("condor_rm", jid, user=alice).returncode == 0
    history = (jid, "-af:r", "Requirements", "Rank", "RequestMemory", "Colour")
    wait_for(lambda: cell.run("condor_history", *history, user=alice).stdout)
    assert cell.run("condor_history", *history, user=bob).stdout == \
        cell.run("condor_history", *history, user=alice).stdout == raw[:-1] + ' "red"\n'
    ended = cell.run("condor_history", jid, "-l", user=bob).stdout
    assert "Requirements = (TARGET.Memory > 100000000) && " in ended
    assert "private-arg" not in ended and "SECRET" not in ended and workdir not in ended


def test_other_users_see_the_edits_of_a_qsub_job(cell, workdir, users):
    """condor_qedit of a job submitted with qsub: the others see the attributes it set as
    its owner does, except the private ones (Cmd, Iwd ...)."""
    alice, bob = users[0], users[1]
    jid = cell.run("qsub", "-terse", "-h", "-b", "y", "true", cwd=workdir, user=alice).stdout.strip()
    for name, value in (("Colour", '"red"'), ("Size", "7"), ("Cmd", '"/private/tool"')):
        assert cell.run("condor_qedit", jid, name, value, user=alice).returncode == 0
    asked = (f"{jid}.0", "-af", "Colour", "Size", "Cmd")
    wait_for(lambda: cell.run("condor_q", *asked, user=alice).stdout == "red 7 /private/tool\n")
    wait_for(lambda: cell.run("condor_q", *asked, user=bob).stdout == "red 7 undefined\n")
    assert "/private/tool" not in cell.run("condor_q", f"{jid}.0", "-l", user=bob).stdout


def test_a_cluster_that_left_the_queue_is_not_found_by_anyone(cell, workdir, users):
    cluster = submit(cell, "executable = /bin/true\nqueue\n", cwd=workdir)
    cell.wait_finished(cluster)
    for user in (None, users[0]):
        for command in ("condor_rm", "condor_hold", "condor_release"):
            proc = cell.run(command, f"{cluster}.0", user=user)
            assert (proc.returncode, proc.stderr) == (1, f"\nJob {cluster}.0 not found\n"), (user, command)


def test_ten_thousand_jobs_as_fast_as_qstat(tmp_path, monkeypatch):
    """The default view of 10,000 jobs from the published status, in CPU time."""
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    sys.path.insert(0, os.path.dirname(__file__))
    from test_qstat_speed import big_snapshot
    from gridtools.spool import status
    status.publish(big_snapshot())
    # the tables show no ad: they read no public ad (condor_q -l, -af ... do)
    monkeypatch.setattr(status, "read_public", lambda clusters: pytest.fail("public ads read"))
    from gridtools.cli import entry
    for args in (["-allusers"], ["-allusers", "-nobatch"]):
        best = None
        for _ in range(3):             # (the best of three: what the code costs, not a busy machine)
            out, saved = io.StringIO(), sys.stdout
            start = time.process_time()
            try:
                sys.stdout = out
                assert entry.run("condor_q", args) == 0
            finally:
                sys.stdout = saved
            elapsed = time.process_time() - start
            best = elapsed if best is None else min(best, elapsed)
        assert out.getvalue().count("\n") > (10000 if "-nobatch" in args else 1)
        assert best < 0.6, args


def test_dag_nodes_under_their_dagman_job(cell, workdir):
    dag = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    node = submit(cell, SLEEP + f"hold = true\n+DAGManJobId = {dag}\n+DAGNodeName = \"NodeA\"\nqueue\n",
                  cwd=workdir, name="n.sub")
    lines = _lines(cell, "-nobatch", "-dag")
    assert lines[3] == " ID      OWNER/NODENAME      SUBMITTED     RUN_TIME ST PRI SIZE CMD"
    assert re.match(rf"^ *{dag}\.0   root +", lines[4])
    assert re.match(rf"^ *{node}\.0    \|-NodeA +", lines[5])


def test_af_and_format_print_reals_as_htcondor_and_json_marks_expressions(cell, workdir):
    """Reals as the old-ClassAd unparser writes them (%.16G, .0 on a whole number), the
    -af:, separator between columns only, and ``"\\/Expr(...)\\/"`` in -json."""
    c = submit(cell, SLEEP + "+Rate = 512.0\n+Small = 0.008332967758178711\nhold = true\nqueue\n", cwd=workdir)
    out = cell.run("condor_q", str(c), "-af", "real(3)", "1.5", "ClusterId*2.5", "Rate", "Small", "999.0").stdout
    assert out == f"3.0 1.5 {c * 2.5!r} 512.0 0.008332967758178711 999.0\n"
    assert cell.run("condor_q", str(c), "-format", "%s\\n", "Small", "-format", "%v\\n", "Rate").stdout == \
        "0.008332967758178711\n512.0\n"
    assert cell.run("condor_q", str(c), "-af:,", "ClusterId", "Owner").stdout == f"{c}, root\n"
    assert cell.run("condor_q", str(c), "-af:j,", "Rate").stdout == f"{c}.0, 512.0\n"
    text = cell.run("condor_q", str(c), "-json").stdout
    assert re.search(r'^  "Requirements": "\\/Expr\(.+\)\\/",$', text, re.M), text
    assert '"Rate": 512.0,' in text and text.startswith("[\n{\n") and text.endswith("\n}\n]\n")


def test_the_dagman_job_reads_condor_dagman_in_cmd(cell, workdir):
    """A DAG's manager runs the condor_dagman launcher (bin/condor_dagman): its CMD is that
    command's base name and its arguments, as any job's."""
    dag = submit(cell, f"universe = scheduler\nexecutable = {os.path.join(BIN, 'condor_dagman')}\n"
                       "arguments = -p 0 -Dag x.dag\nhold = true\nqueue\n",
                 cwd=workdir)
    row = [ln for ln in _lines(cell, "-nobatch", "-dag") if ln.lstrip().startswith(f"{dag}.0 ")]
    assert len(row) == 1 and row[0].endswith(" condor_dagman -p 0 -Dag x.dag"), row
    plain = submit(cell, "universe = scheduler\nexecutable = /bin/sleep\narguments = -m 5\nhold = true\nqueue\n",
                   cwd=workdir, name="p.sub")
    assert [ln for ln in _lines(cell, "-nobatch") if ln.lstrip().startswith(f"{plain}.0 ")][0].endswith(" sleep -m 5")


def test_read_level_refuses_condor_q_as_the_schedd_does(cell, workdir, users):
    """condor_q needs READ at the SCHEDD: a caller ALLOW_READ does not name gets the failed
    query's two lines and exit 1, whatever the view; condor_history reads the history file
    itself, as HTCondor's does without SCHEDD_HOST, so READ does not apply to it."""
    cluster = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, user="gtalice")
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("ALLOW_READ = gtalice@*/*, root@*\n")
    for argv in ([], ["-allusers", "-nobatch"], ["-totals"], [str(cluster), "-af", "JobStatus"], ["-l"]):
        proc = cell.run("condor_q", *argv, user="gtbob")
        assert (proc.returncode, proc.stdout) == (1, ""), argv
        lines = proc.stderr.split("\n")
        assert lines[0] == "" and re.fullmatch(r"-- Failed to fetch ads from: <127\.0\.0\.1:9618\?\S*> : \S+",
                                               lines[1]), proc.stderr
        assert re.fullmatch(r'SECMAN:2010:Received "DENIED" from server for user gtbob@\S+ using method FS\.',
                            lines[2]) and lines[3:] == [""], proc.stderr
    assert cell.run("condor_q", "-allusers", "-af", "ClusterId", user="gtalice").stdout == f"{cluster}\n"
    assert cell.run("condor_history", user="gtbob").returncode == 0


def _masked(text):
    """condor_q's table without its title's clock and the running procs' RUN_TIME (the
    seconds move on between two commands)."""
    lines = text.split("\n")[3:]
    return [re.sub(r"\d+\+\d\d:\d\d:\d\d R ", "RUNNING R ", ln) for ln in lines]


def test_the_per_proc_table_from_the_listing_is_the_full_one(cell, workdir, users):
    """condor_q -nobatch answers from the published listing (procs of a cluster with
    their own priorities and arguments, running, held and waiting ones, other users'
    jobs without their arguments); -constraint true takes the full path, whose procs
    are built one by one."""
    alice = users[0]
    mixed = submit(cell, "executable = /bin/sleep\narguments = 30$(Process)\nqueue 3\n", cwd=workdir)
    held = submit(cell, SLEEP + "hold = true\nqueue 2\n", cwd=workdir)
    theirs = submit(cell, "executable = /bin/echo\narguments = hidden words\nhold = true\nqueue\n",
                    cwd=workdir, user=alice, name="alice.sub")
    single = submit(cell, "executable = /bin/sleep\narguments = 77\nhold = true\nqueue\n", cwd=workdir)
    bare = submit(cell, "executable = /bin/true\nhold = true\nqueue\n", cwd=workdir)
    assert cell.run("condor_prio", "-p", "-7", f"{mixed}.2").returncode == 0
    wait_status(cell, f"{mixed}.0", 2)
    wait_for(lambda: re.search(rf"^ *{mixed}\.2 .* -7 +0\.0 sleep 302$", cell.run("condor_q", "-nobatch").stdout,
                               re.M))
    for user in (None, alice):
        for args in (["-nobatch"], ["-nobatch", "-allusers"], ["-nobatch", "root", alice]):
            fast = cell.run("condor_q", *args, user=user)
            full = cell.run("condor_q", *args, "-constraint", "true", user=user)
            assert fast.returncode == full.returncode == 0, fast.stderr
            assert _masked(fast.stdout) == _masked(full.stdout), (user, args)
    rows = cell.run("condor_q", "-nobatch", "-allusers", user=alice).stdout
    assert re.search(rf"^ *{theirs}\.0 +{alice} .* H  0    0\.0 echo hidden words$", rows, re.M), rows
    assert re.search(rf"^ *{held}\.1 +root .* H  0    0\.0 sleep$", rows, re.M), rows
    assert re.search(rf"^ *{mixed}\.2 +root .* -7 +0\.0 sleep$", rows, re.M), rows
    assert re.search(rf"^ *{single}\.0 +root .* H  0    0\.0 sleep$", rows, re.M), rows
    assert re.search(rf"^ *{bare}\.0 +root .* H  0    0\.0 true$", rows, re.M), rows
    mine = cell.run("condor_q", "-nobatch").stdout
    assert re.search(rf"^ *{single}\.0 +root .* H  0    0\.0 sleep 77$", mine, re.M), mine
    assert re.search(rf"^ *{bare}\.0 +root .* H  0    0\.0 true$", mine, re.M), mine
    assert re.search(rf"^ *{mixed}\.0 +root .* R  0    0\.0 sleep 300$", mine, re.M), mine
    assert re.search(rf"^ *{mixed}\.2 +root .* I  -7 +0\.0 sleep 302$", mine, re.M), mine


def test_adjacent_strings_are_refused_in_constraints_and_edited_values(cell, workdir):
    """HTCondor's tools read -constraint expressions and condor_qedit's values in the
    old ClassAd syntax, which refuses "a" "b" where the new one joins it into "ab":
    each tool stops with its error for a bad expression, and the job is not changed."""
    cluster = submit(cell, SLEEP + "+Colour = \"ab\"\nhold = true\nqueue\n", cwd=workdir)
    adjacent = 'Colour == "a" "b"'
    for tool in ("condor_q", "condor_rm", "condor_history", "condor_status", "condor_qedit"):
        args = ("Colour", '"c"') if tool == "condor_qedit" else ()
        proc = cell.run(tool, "-constraint", adjacent, *args)
        assert proc.returncode == 1 and proc.stdout == "", (tool, proc.stdout)
        said = f"Error:  could not parse constraint ( ({adjacent}) )" if tool == "condor_history" else \
            f"Error: Invalid constraint expression: {adjacent}"
        assert said in proc.stderr, (tool, proc.stderr)
    edit = cell.run("condor_qedit", f"{cluster}.0", "Colour", '"a" "b"')
    assert (edit.returncode, edit.stderr) == (1, "Update aborted, illegal value for : Colour\n")
    sort = cell.run("condor_status", "-sort", '"a" "b"')
    assert (sort.returncode, sort.stderr) == (1, 'Error:  Parse error of: "a" "b"\n')
    shown = cell.run("condor_q", str(cluster), "-constraint", 'Colour == "ab"', "-af", "Colour", "JobStatus")
    assert shown.stdout == "ab 5\n"


def test_bytes_that_are_not_utf8_in_an_ad_leave_xml_and_json_readable(cell, workdir):
    """A job's owner may put any bytes in an attribute (condor_qedit): condor_q -xml and
    -json of every user's jobs stay documents a strict parser reads, the bytes shown as
    U+FFFD; -long keeps them."""
    import xml.dom.minidom
    cluster = submit(cell, "executable = /bin/true\nhold = true\nqueue\n", cwd=workdir)
    done = cell.run("condor_qedit", str(cluster), "Baz", b'"\xff\xfe bad"', text=False)
    assert done.returncode == 0, done.stderr
    xml_text = cell.run("condor_q", "-allusers", "-xml", text=False, check=True).stdout
    doc = xml.dom.minidom.parseString(xml_text)
    values = [a for a in doc.getElementsByTagName("a") if a.getAttribute("n") == "Baz"]
    assert values[0].firstChild.firstChild.data == "\ufffd\ufffd bad"
    text = cell.run("condor_q", "-allusers", "-json", text=False, check=True).stdout.decode("utf-8")
    [ad] = json.loads(text)
    assert ad["Baz"] == "\ufffd\ufffd bad"
    assert "\\udc" not in text
    long = cell.run("condor_q", "-allusers", "-l", text=False, check=True).stdout
    assert b'Baz = "\xff\xfe bad"' in long
