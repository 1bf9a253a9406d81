"""condor_q's options as HTCondor 24 takes them: wording of refusals, exit codes, column choices."""

import pytest

from gridtools.cli.condor import q


def _main(capsys, *argv):
    code = q.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _root(tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path / "root"))


@pytest.mark.parametrize("argv, line", [
    (["-limit"], "Error: -limit requires the max number of results as an argument."),
    (["-limit", "x"], "Error: Unable to convert (x) to a number for -limit."),
    (["-limit", "3x"], "Error: Unable to convert (3x) to a number for -limit."),
    (["-limit", "0"], "Error: 0 is not a valid for -limit."),
    (["-limit", "-2"], "Error: -2 is not a valid for -limit."),
])
def test_limit_refusals_in_htcondor_words(capsys, argv, line):
    code, out, err = _main(capsys, *argv)
    assert (code, out, err) == (1, "", line + "\n")


@pytest.mark.parametrize("arg", ["-xyz", "-goodput", "-globus", "-sort", "-wider"])
def test_unknown_options_are_refused_with_the_usage(capsys, arg):
    code, out, err = _main(capsys, arg)
    assert code == 1
    assert err == f"Error: unrecognized argument {arg}\n"
    assert out.startswith("Usage: condor_q [general-opts] [restriction-list] [output-opts | analyze-opts]\n")


def test_print_format_without_a_readable_file_is_refused(capsys):
    assert _main(capsys, "-print-format") == (1, "", "Error: -print-format requires a filename argument\n")
    code, out, err = _main(capsys, "-pr", "layout.cpf")
    assert (code, out) == (1, "")
    assert err == "Can't open select file: layout.cpf\nError: invalid select file layout.cpf\n"


# ---------------------------------------------------------------- time columns

def _proc(status, start=0.0, wall=0.0, cluster=7):
    from gridtools.cli.condor import queue as Q
    return Q.Proc(cluster, 0, "alice", status, 1000.0, start=start, host="slot1@h", cmd="/bin/sleep",
                  args=["300"], wall=wall)


def test_currentrun_leaves_out_the_earlier_runs():
    from gridtools.cli.condor import qviews, queue as Q
    procs = [_proc(Q.RUNNING, start=5000.0, wall=3600.0), _proc(Q.IDLE, wall=120.0, cluster=8)]
    total = qviews.nobatch(procs, "alice", 5065.0).splitlines()
    assert total[1].split()[4] == "0+01:01:05" and total[2].split()[4] == "0+00:02:00"
    current = qviews.Clock("RUN_TIME", qviews.current_run)
    rows = qviews.nobatch(procs, "alice", 5065.0, clock=current).splitlines()
    assert rows[0] == total[0]
    assert rows[1].split()[4] == "0+00:01:05" and rows[2].split()[4] == "0+00:00:00"
    run = qviews.running(procs[:1], "alice", 5065.0, current).splitlines()
    assert run[1].split()[4] == "0+00:01:05"


def test_cputime_heads_the_column_cpu_time():
    from gridtools.cli.condor import qviews, queue as Q
    clock = qviews.Clock("CPU_TIME", lambda proc, now: 42.0)
    lines = qviews.nobatch([_proc(Q.RUNNING, start=5000.0)], "alice", 9000.0, clock=clock).splitlines()
    assert lines[0] == " ID      OWNER            SUBMITTED     CPU_TIME ST PRI SIZE CMD"
    assert lines[1].split()[4] == "0+00:00:42"
    run = qviews.running([_proc(Q.RUNNING, start=5000.0)], "alice", 9000.0, clock).splitlines()
    assert run[0] == " ID      OWNER            SUBMITTED     CPU_TIME HOST(S)"


@pytest.mark.parametrize("argv, line", [
    (["-currentrun", "-cumulative-time"], "Error: -cumulative-time can't be used with -currentrun"),
    (["-cum", "-cur"], "Error: -currentrun can't be used with -cumulative-time"),
])
def test_currentrun_and_cumulative_time_exclude_each_other(capsys, argv, line):
    assert _main(capsys, *argv) == (1, "", line + "\n")


def test_cputime_and_currentrun_are_options(cell, workdir):
    from condortools import submit, wait_status
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nqueue\n", cwd=workdir)
    wait_status(cell, f"{cluster}.0", 2)
    cpu = cell.run("condor_q", "-nobatch", "-cputime")
    assert cpu.returncode == 0, cpu.stderr
    lines = cpu.stdout.split("\n")
    assert lines[3] == " ID      OWNER            SUBMITTED     CPU_TIME ST PRI SIZE CMD"
    assert lines[4].split()[4] == "0+00:00:00"
    cur = cell.run("condor_q", "-run", "-currentrun")
    assert cur.returncode == 0 and cur.stdout.split("\n")[3].endswith("RUN_TIME HOST(S)")
    assert cell.run("condor_q", "-cumulative-time").returncode == 0


# ---------------------------------------------------------------- -wide

def test_wide_width_cuts_the_tables_but_not_the_hold_reasons(cell, workdir):
    from condortools import submit, wait_status
    long_args = "300 " + " ".join(["x" * 10] * 8)
    cluster = submit(cell, f"executable = /bin/sleep\narguments = {long_args}\nhold = true\n"
                     "queue\n", cwd=workdir)
    wait_status(cell, f"{cluster}.0", 5)

    def table(*args):
        proc = cell.run("condor_q", *args)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split("\n")
    full = table("-nobatch")
    assert full[4].endswith(long_args) and len(full[4]) > 60
    cut = table("-nobatch", "-wide:40")
    assert cut[3] == full[3][:39] and cut[4] == full[4][:39]
    assert cut[6:] == full[6:]                                  # the totals are whole
    assert table("-nobatch", "-wide")[3:] == full[3:]
    whole, batch = table(), table("-wide:30")
    assert batch[3] == whole[3][:29] and batch[4] == whole[4][:29] and len(whole[4]) > 29
    hold = table("-hold", "-wide:30")
    assert hold[3] == " ID      OWNER          HELD_SINCE  CODE/SUB HOLD_REASON"


# ---------------------------------------------------------------- -io

IO_HEAD = " ID      OWNER          RUNS ST  INPUT  OUTPUT  RATE      MISC"


def test_io_lists_only_jobs_moving_files(cell, workdir):
    from condortools import submit, wait_status
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n", cwd=workdir)
    wait_status(cell, f"{cluster}.0", 5)
    proc = cell.run("condor_q", "-io")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert lines[3] == IO_HEAD and lines[4] == ""
    assert lines[5] == "Total for query: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended "
    assert lines[6].startswith("Total for all users: 1 jobs;")


def test_io_rows_in_htcondor_units():
    from gridtools.classad import ClassAd
    from gridtools.cli.condor import qviews, queue as Q
    ads = {7: ClassAd([("NumJobStarts", 2), ("BytesRecvd", 2048.0), ("BytesSent", 10.0),
                       ("TransferringInput", True), ("TransferQueued", True)]),
           8: ClassAd([("NumJobStarts", 0), ("TransferringOutput", True)])}
    procs = [_proc(Q.RUNNING, cluster=7), _proc(Q.IDLE, cluster=8)]
    lines = qviews.io(procs, lambda p: ads[p.cluster]).splitlines()
    assert lines == [IO_HEAD,
                     "   7.0   alice             2 R  2.0 KB 10.0 B      2.0 KB  transfer=in,queued",
                     "   8.0   alice             0 I  ?? ??         ??  transfer=out"]


# ---------------------------------------------------------------- -batch, -nobatch, -dag

BATCH_HEAD = "OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"
NOBATCH_HEAD = " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD"


def test_batch_is_the_default_unless_the_configuration_says_otherwise(cell, workdir):
    from condortools import submit, wait_status
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n", cwd=workdir)
    wait_status(cell, f"{cluster}.0", 5)

    def head(*args, env=None):
        proc = cell.run("condor_q", *args, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split("\n")[3]
    assert head() == BATCH_HEAD and head("-dag") == BATCH_HEAD
    assert head("-nobatch", "-dag") == NOBATCH_HEAD.replace("OWNER         ", "OWNER/NODENAME   ")
    off = {"_CONDOR_CONDOR_Q_DASH_BATCH_IS_DEFAULT": "False"}
    assert head(env=off) == NOBATCH_HEAD
    assert head("-batch", env=off) == BATCH_HEAD
    assert head("-totals", env=off).startswith("Total for query: 1 jobs;")
    conflict = cell.run("condor_q", "-batch", "-af", "ClusterId")
    assert (conflict.returncode, conflict.stdout) == (1, "")
    assert conflict.stderr == "Error: -batch conflicts with -format and -af\n"
    assert cell.run("condor_q", "-af", "ClusterId", "-nobatch").stdout == f"{cluster}\n"


# ---------------------------------------------------------------- -grid, -version

GRID_HEAD = " ID      OWNER          STATUS     GRID->MANAGER    HOST       GRID_JOB_ID"


def test_grid_lists_grid_universe_jobs_only(cell, workdir):
    from condortools import submit, wait_status
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n", cwd=workdir)
    wait_status(cell, f"{cluster}.0", 5)
    for args, head in ((["-grid"], GRID_HEAD), (["-gr:ec2"], " ID      OWNER          STATUS     INSTANCE ID CMD")):
        proc = cell.run("condor_q", *args)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split("\n")[3:] == [head, ""]          # no totals, as HTCondor's


def test_grid_rows():
    from gridtools.classad import ClassAd
    from gridtools.cli.condor import qviews, queue as Q
    ad = ClassAd([("GridJobStatus", "IDLE"), ("GridResource", "batch slurm"), ("GridJobId", "batch slurm 42")])
    lines = qviews.grid([_proc(Q.IDLE)], lambda p: ad).splitlines()
    assert lines == [GRID_HEAD, "   7.0   alice          IDLE       batch slurm                 batch slurm 42"]


def test_version_prints_the_version_lines(capsys):
    code, out, err = _main(capsys, "-version")
    assert (code, err) == (0, "")
    assert out == "$CondorVersion: 24.0.0 gridtools $\n$CondorPlatform: X86_64-Linux gridtools $\n"


# ---------------------------------------------------------------- -hold:CODES

def test_hold_codes_select_held_procs(cell, workdir, capsys):
    from condortools import submit, wait_status
    held = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n", cwd=workdir)
    ran = submit(cell, "executable = /bin/sleep\narguments = 300\nqueue\n", cwd=workdir, name="r.sub")
    wait_status(cell, f"{held}.0", 5)
    wait_status(cell, f"{ran}.0", 2)
    assert cell.run("condor_hold", "-reason", "wait", "-subcode", "7", f"{ran}.0").returncode == 0
    wait_status(cell, f"{ran}.0", 5)

    def ids(*args):
        proc = cell.run("condor_q", *args)
        assert proc.returncode == 0, proc.stderr
        return [line.split()[0] for line in proc.stdout.split("\n")[4:] if line.strip()
                and not line.startswith("Total")], proc.stderr
    every, _ = ids("-hold")
    assert every == [f"{held}.0", f"{ran}.0"]
    assert ids("-hold:1") == ([f"{ran}.0"], "")
    assert ids("-hold:1/7,99") == ([f"{ran}.0"], "")
    assert ids("-hold:1/6") == ([], "")
    assert ids("-held:x,1") == ([f"{ran}.0"], "Warning \"x\" is not a hold code and/or subcode. ignoring\n")


# ---------------------------------------------------------------- conflicts

@pytest.mark.parametrize("argv, line", [
    (["-run", "-hold"], "-run and -hold/held or -idle are incompatible"),
    (["-held", "-run"], "-run and -hold/held or -idle are incompatible"),
    (["-idle", "-hold:1"], "-run and -hold/held or -idle are incompatible"),
    (["-run", "-idle"], "-run and -hold/held or -idle are incompatible"),
    (["-dag", "-stream-results"], "-stream-results and -dag or -batch are incompatible"),
    (["-stream", "-batch"], "-stream-results and -batch are incompatible"),
    (["-stream", "-dag"], "-stream-results and -dag are incompatible"),
])
def test_incompatible_views_are_refused_with_the_usage(capsys, argv, line):
    code, out, err = _main(capsys, *argv)
    assert (code, err) == (1, line + "\n")
    assert out.startswith("Usage: condor_q ")


def test_stream_results_is_accepted(cell):
    proc = cell.run("condor_q", "-stream-results", "-nobatch")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[3] == NOBATCH_HEAD


# ---------------------------------------------------------------- -hold-codes

HOLD_CODES_HEAD = "OWNER          CODE/SUB    COUNT  OLDEST_JOB_ID HELD_SINCE  HOLD_REASON"


def test_hold_codes_one_row_per_code_and_subcode():
    from gridtools.cli.condor import qviews, queue as Q
    procs = []
    for cluster, hold in ((9, ["late", 1, 7, 4000.0]), (7, ["wait", 1, 0, 3000.0]), (8, ["again", 1, 0, 3500.0]),
                          (6, ["disk", 34, 0, 2000.0])):
        p = _proc(Q.HELD, cluster=cluster)
        p.hold = hold
        procs.append(p)
    lines = qviews.hold_codes(procs).splitlines()
    date = qviews.format_date
    assert lines == [HOLD_CODES_HEAD,
                     f"alice             1/0           2 7.0 {date(3000.0)} wait",
                     f"alice             1/7           1 9.0 {date(4000.0)} late",
                     f"alice            34/0           1 6.0 {date(2000.0)} disk"]


def test_hold_codes_view(cell, workdir, capsys):
    from condortools import submit, wait_status
    held = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue 2\n", cwd=workdir)
    wait_status(cell, f"{held}.1", 5)
    proc = cell.run("condor_q", "-hold-codes")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert lines[3] == HOLD_CODES_HEAD and len(lines) == 6 and lines[5] == ""
    assert lines[4].split()[2:4] == ["2", f"{held}.0"]
    code, out, err = _main(capsys, "-run", "-holdc")
    assert (code, err) == (1, "-hold-codes incompatible with -idle or -run\n")


# ---------------------------------------------------------------- -long:FORM, -xml and -json

@pytest.mark.parametrize("argv", [["-xml", "-json"], ["-json", "-xml"], ["-l:xml", "-json"]])
def test_xml_and_json_exclude_each_other(capsys, argv):
    assert _main(capsys, *argv) == (1, "", "Error: Cannot print as both XML and JSON\n")


def test_long_form_qualifier_chooses_the_form():
    assert q.parse_args(["-long:json"]).view == "json"
    assert q.parse_args(["-l:xml"]).view == "xml"
    assert q.parse_args(["-l:long"]).view == "long"
    assert q.parse_args(["-json", "-l"]).view == "json"
    assert q.parse_args(["-json", "-l:xml"]).view == "xml"


# ---------------------------------------------------------------- -af and -format arguments

@pytest.mark.parametrize("argv, line", [
    (["-af"], "Error: -autoformat requires at least one attribute parameter"),
    (["-af:j", "-nobatch"], "Error: -autoformat requires at least one attribute parameter"),
    (["-format"], "Error: -format requires format and attribute parameters"),
    (["-format", "%d\\n"], "Error: -format requires format and attribute parameters"),
    (["-pr", "-nobatch"], "Error: -print-format requires a filename argument"),
])
def test_format_arguments_missing(capsys, argv, line):
    assert _main(capsys, *argv) == (1, "", line + "\n")


def test_a_lone_dash_ends_the_af_attributes():
    opts = q.parse_args(["-af", "ClusterId", "ProcId", "-", "alice"])
    assert opts.af_attrs == ["ClusterId", "ProcId"] and opts.selection.users == ["alice"]


# ---------------------------------------------------------------- HTCondor's options the cell has no use for

@pytest.mark.parametrize("arg, name", [
    ("-jobset", "jobset"), ("-schedd-constraint", "schedd-constraint"),
    ("-dry-run", "dry-run"), ("-profile", "profile"),
])
def test_htcondor_options_without_a_use_here_are_refused_by_name(capsys, arg, name):
    code, out, err = _main(capsys, arg, "x")
    assert (code, out) == (1, "")
    assert err == f"Error: -{name} is not supported by this condor_q\n"


def test_direct_and_debug_are_taken(capsys):
    assert _main(capsys, "-direct") == (1, "", "Error: -direct requires [schedd]\n")
    assert _main(capsys, "-direct", "startd") == (1, "", "Error: -direct may only take 'schedd' as an option.\n")
    assert q.parse_args(["-direct", "Schedd", "-debug:D_FULLDEBUG"]).view == "batch"


def test_table_width_follows_the_terminal(monkeypatch):
    import os
    import sys

    class Terminal:
        def isatty(self):
            return True

        def fileno(self):
            return 1
    monkeypatch.setattr(sys, "stdout", Terminal())
    monkeypatch.setattr(os, "get_terminal_size", lambda fd: os.terminal_size((100, 30)))
    assert q.table_width(q.parse_args([])) == 100
    assert q.table_width(q.parse_args(["-wide"])) is None
    assert q.table_width(q.parse_args(["-wide:60"])) == 60
    assert q.table_width(q.parse_args(["-wide:0"])) == 100
    monkeypatch.setattr(Terminal, "isatty", lambda self: False)

    def no_terminal(fd):
        raise OSError("not a terminal")
    monkeypatch.setattr(os, "get_terminal_size", no_terminal)
    assert q.table_width(q.parse_args([])) is None
    assert q.table_width(q.parse_args(["-wide:60"])) == 60
    assert q.table_width(q.parse_args(["-w:0"])) == 80


# ---------------------------------------------------------------- -batch:MARK, -batch:N and -aaf

def test_batch_marks_show_a_count_of_zero_as_htcondor_does():
    """-batch:MARK (or -progress:MARK; several split by "," or ":", the last counting):
    a count of 0 in the batch view is blank (b), the mark itself (? * . - _ #) or 0 (z)
    instead of _; -batch:N other than 0 keeps the batch view."""
    from gridtools.cli.condor import qviews, queue as Q
    procs = [_proc(Q.IDLE), _proc(Q.RUNNING, start=900.0, cluster=8)]

    def row(*argv):
        opts = q.parse_args(list(argv))
        q.settle_view(opts)
        table = qviews.batch_view(procs, {7: 1, 8: 1}, opts.zero).splitlines()
        assert opts.view == "batch"
        return table[1]
    assert row().split()[5:10] == ["_", "_", "1", "1", "7.0"]
    assert row("-batch:z").split()[5:10] == ["0", "0", "1", "1", "7.0"]
    assert row("-batch:2,.").split()[5:10] == [".", ".", "1", "1", "7.0"]
    assert row("-progress:#:?") == row("-batch:?")
    assert row("-batch:b") == row().replace("_", " ")
    assert row("-batch:2") == row("-batch:0,1") == row("-batch:x") == row("-batch:0", "-batch") == row()


def test_batch_0_turns_the_batch_reduction_off(capsys):
    """-batch:0 is HTCondor's batch mode 0: the batch view's columns, a row of each job's own
    values (JobStatus and JobUniverse numbers under DONE and RUN, the DAG counts, TOTAL of
    TotalSubmitProcs, the status letter under JOB_IDS); it does not conflict with -af."""
    from gridtools.classad import parse_ad
    from gridtools.cli.condor import qbatchraw, qviews, queue as Q
    opts = q.parse_args(["-batch:0"])
    q.settle_view(opts)
    assert (opts.view, opts.unreduced, q._from_listing(opts)) == ("batch", True, False)
    procs = [_proc(Q.RUNNING, start=900.0, cluster=8), _proc(Q.IDLE)]
    ads = {7: parse_ad('ClusterId = 7\nJobStatus = 1\nJobUniverse = 5\nTotalSubmitProcs = 1\nJobBatchName = "nightly"'),
           8: parse_ad("ClusterId = 8\nJobStatus = 2\nJobUniverse = 7\nDAG_NodesQueued = 3\nDAG_NodesDone = 1\n"
                       "DAG_NodesTotal = 9\nTotalSubmitProcs = 1")}
    date = qviews.format_date(1000.0)
    assert qbatchraw.rows(procs, lambda p: ads[p.cluster]).split("\n") == [
        "OWNER BATCH_NAME      SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS",
        f"alice nightly      {date:>12}      1      5      _      _      1 I ",
        f"alice DAG: 8       {date:>12}      2      7      3      1      9 R ",
        ""]
    af = q.parse_args(["-batch:0", "-af", "Owner"])
    q.settle_view(af)
    assert af.view == "af"
    assert _main(capsys, "-batch", "-af", "Owner")[2] == "Error: -batch conflicts with -format and -af\n"


def test_batch_0_in_a_live_cell(cell, workdir):
    from condortools import submit
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue 2\n", cwd=workdir)
    shown = cell.run("condor_q", "-batch:0")
    assert (shown.returncode, shown.stderr) == (0, "")
    lines = shown.stdout.split("\n")
    assert lines[3].startswith("OWNER") and lines[3].endswith("  DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS")
    # (TOTAL: the cluster's TotalSubmitProcs, which every proc's ad shows)
    assert [line.split()[-6:] for line in lines[4:6]] == [["5", "5", "_", "_", "2", "H"]] * 2
    assert lines[7].startswith("Total for query: 2 jobs;")
    assert cell.run("condor_q", "-batch:0", "-af", "ClusterId").stdout == f"{cluster}\n{cluster}\n"


def test_aaf_is_refused_in_htcondors_words(capsys):
    """-aaf appends columns to a per-proc table: with the batch view (the default) and with
    the ads' own forms HTCondor refuses it, and so does this condor_q; a qualifier other than
    one of V, r, T and Y is refused too."""
    assert _main(capsys, "-aaf", "Owner") == (
        1, "", "Error: -aaf cannot be used with -batch mode output (the default), did you intend to use -af ?\n")
    assert _main(capsys, "-af", "Owner", "-aaf", "Cmd") == (
        1, "", "Error: output formatting options conflict with -aaf options\n")
    assert _main(capsys, "-aaf:V", "Owner", "-", "-long") == (
        1, "", "Error: output formatting options conflict with -aaf options\n")
    assert _main(capsys, "-aaf") == (1, "", "Error: -aaf requires at least one attribute parameter\n")
    assert _main(capsys, "-nobatch", "-aaf:VT", "Owner") == (
        1, "", "Error: T is invalid -aaf format qualifier. only one of V,r,T, or Y is permitted.\n")
    assert _main(capsys, "-nobatch", "-aaf:x", "Owner") == (
        1, "", "Error: x is invalid -aaf format qualifier. only one of V,r,T, or Y is permitted.\n")


def test_aaf_appends_columns_to_the_per_proc_tables(cell, workdir):
    """-aaf's attributes are columns after the table's last one, headed by their names (or
    AS names), left-aligned, as wide as the widest of heading and values; the last column is
    widened to its widest cell so that they line up; an undefined attribute shows
    ``undefined`` (measured only as it is printed, after the heading, as HTCondor's); -aaf:V quotes strings; the table is not cut to the terminal."""
    from condortools import submit
    cluster = submit(cell, 'executable = /bin/sleep\narguments = 300\nhold = true\n+Colour = "blue"\n'
                           'queue\n+Colour = "a longer one"\nqueue\n', cwd=workdir)
    shown = cell.run("condor_q", "-nobatch", "-aaf", "Colour", "Missing", "ProcId AS PROC_NUMBER")
    assert (shown.returncode, shown.stderr) == (0, "")
    lines = shown.stdout.split("\n")
    assert lines[3].endswith(" SIZE CMD       Colour       Missing PROC_NUMBER")
    assert lines[4].startswith(f"{cluster:4d}.0  ") and lines[4].endswith(
        " 0.0 sleep 300 blue         undefined 0          ")
    assert lines[5].endswith(" 0.0 sleep 300 a longer one undefined 1          ")
    assert lines[7].startswith("Total for query: 2 jobs;")
    held = cell.run("condor_q", "-hold", "-aaf:V", "Colour").stdout.split("\n")
    reason = "submitted on hold at user's request"
    assert held[3].endswith(f"HOLD_REASON{' ' * (len(reason) - 11)} Colour      ")  # (quotes not measured)
    assert held[4].endswith(f'{reason} "blue"      ')
    assert held[5].endswith(f'{reason} "a longer one"')
    codes = cell.run("condor_q", "-hold-codes", "-aaf", "ClusterId").stdout.split("\n")
    assert codes[4].endswith(f"{reason} {cluster:<9}")


@pytest.mark.parametrize("argv", [["condor_rm", "-version"], ["condor_hold", "-v"], ["condor_release", "-vers"],
                                  ["condor_config_val", "-version"], ["condor_config_val", "-vers"],
                                  ["condor_status", "-ver"], ["condor_submit_dag", "-version"],
                                  ["condor_submit_dag", "--version", "x.dag"]])
def test_the_other_tools_take_version_as_htcondor_does(cell, argv):
    """Each as HTCondor's reads it (condor_rm's family: any prefix; condor_config_val and
    condor_status: at least -ver, where condor_config_val reads -ver as -verbose;
    condor_submit_dag: any word holding -vers); the lines, exit 0, nothing else done."""
    proc = cell.run(*argv)
    assert (proc.returncode, proc.stdout, proc.stderr) == \
        (0, "$CondorVersion: 24.0.0 gridtools $\n$CondorPlatform: X86_64-Linux gridtools $\n", "")


def test_condor_config_val_reads_ver_as_verbose(cell):
    proc = cell.run("condor_config_val", "-ver", "MATCH_TIMEOUT")
    assert proc.stdout.startswith("MATCH_TIMEOUT = 120\n # at: <Default>")


def test_condor_version_prints_the_version_or_the_platforms_parts(cell):
    proc = cell.run("condor_version")
    assert (proc.returncode, proc.stdout) == \
        (0, "$CondorVersion: 24.0.0 gridtools $\n$CondorPlatform: X86_64-Linux gridtools $\n")
    assert cell.run("condor_version", "-opsys", "-arch", "-o").stdout == "LINUX\nX86_64\n"
    assert cell.run("condor_version", "-a").stdout == "X86_64\n"
    proc = cell.run("condor_version", "-x")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("ERROR: unrecognized argument: '-x'\nUsage: condor_version [options]\n")
    proc = cell.run("condor_version", "now")
    assert (proc.returncode, proc.stderr.splitlines()[0]) == (1, "ERROR: invalid argument: 'now'")


def test_a_cluster_submitted_on_hold_shows_its_reason_before_and_after_the_daemon_takes_it_in(cell, workdir):
    """condor_q lists a cluster the daemon has not taken in yet with the hold reason and
    code its ad gives (submitted on hold: code 15), as it will once the daemon keeps them."""
    from condortools import submit
    cell.stop_daemon()
    cluster = submit(cell, 'executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n', cwd=workdir)
    reason = "submitted on hold at user's request"
    before = cell.run("condor_q", str(cluster), "-af", "HoldReason", "HoldReasonCode")
    held = cell.run("condor_q", "-hold").stdout.split("\n")
    assert (before.returncode, before.stdout) == (0, f"{reason} 15\n")
    assert held[4].startswith(f"{cluster:4d}.0  ") and held[4].endswith(f"  15/0   {reason}")
    cell.start_daemon()
    after = cell.run("condor_q", str(cluster), "-af", "HoldReason", "HoldReasonCode")
    assert (after.returncode, after.stdout) == (0, f"{reason} 15\n")
    again = cell.run("condor_q", "-hold").stdout.split("\n")[4]

    def without_time(line):             # (HELD_SINCE's minute may have turned meanwhile)
        return line[:22] + line[35:]
    assert without_time(again) == without_time(held[4]) and again[22:35].strip().startswith(held[4][22:28].strip())
