"""qacct as a user runs it: bin/qacct in a subprocess, compared with real Grid Engine.

The fixture tests/data/accounting/accounting is the accounting file of a Son
of Grid Engine 8.1.9 cell; tests/data/accounting/expected/ holds what that
cell's qacct printed for it (command, user, exit code, stdout, stderr).
"""

import os
import shlex
import subprocess
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
QACCT = os.path.join(os.path.dirname(HERE), "bin", "qacct")
DATA = os.path.join(HERE, "data", "accounting")
FIXTURE = os.path.join(DATA, "accounting")
EXPECTED = os.path.join(DATA, "expected")
GE_PATH = "/var/lib/gridengine/default/common/accounting"
LAST_END = 1795983470          # the latest end time in the fixture

TITLE = ("    WALLCLOCK         UTIME         STIME           CPU"
         "             MEMORY                 IO                IOW")


def fixture_lines():
    with open(FIXTURE) as f:
        return [line for line in f if not line.startswith("#")]


def reference(name):
    """(argv, exit code, stdout, stderr) of one captured qacct run."""
    with open(os.path.join(EXPECTED, name)) as f:
        text = f.read()
    head, _, rest = text.partition("# ---- stdout ----\n")
    stdout, _, stderr = rest.partition("# ---- stderr ----\n")
    lines = head.splitlines()
    argv = shlex.split(lines[0].split(":", 1)[1])[1:]
    code = int(next(l for l in lines if l.startswith("# exit_code:")).split(":")[1])
    return argv, code, stdout, stderr


@pytest.fixture
def cell(tmp_path):
    """A cell whose spool holds the fixture as its accounting file."""
    spool = tmp_path / "cell" / "spool"
    spool.mkdir(parents=True)
    (spool / "accounting").write_text(open(FIXTURE).read())
    return tmp_path / "cell"


def qacct(*argv, cell=None, tz="UTC", stdin=None):
    env = dict(os.environ, TZ=tz, LC_ALL="C")
    if cell is not None:
        env["GRIDTOOLS_ROOT"] = str(cell)
    else:
        env.pop("GRIDTOOLS_ROOT", None)
    return subprocess.run([QACCT, *argv], capture_output=True, text=True,
                          env=env, input=stdin, timeout=60)


def shifted_file(path, offset):
    """The fixture with every time moved by ``offset`` seconds."""
    out = []
    for line in fixture_lines():
        parts = line.rstrip("\n").split(":")
        for i in (8, 9, 10, 44):
            if int(parts[i]):
                parts[i] = str(int(parts[i]) + offset)
        out.append(":".join(parts) + "\n")
    path.write_text("".join(out))
    return str(path)


def usage_row(output):
    """The numbers of the single data row of a summary."""
    rows = [l for l in output.splitlines() if l and l[-1].isdigit() and "=" not in l]
    assert len(rows) == 1, output
    return rows[0].split()


# -- byte for byte against the real qacct ---------------------------------------

SAME_MOMENT = sorted(name for name in os.listdir(EXPECTED) if name != "qacct-d-1.txt")


@pytest.mark.parametrize("name", SAME_MOMENT)
def test_output_is_identical_to_grid_engine(name, cell):
    argv, code, stdout, stderr = reference(name)
    argv = [FIXTURE if a == GE_PATH else a for a in argv]
    result = qacct(*argv, cell=cell)
    assert (result.stdout, result.stderr, result.returncode) == (stdout, stderr, code)


def test_days_option_matches_grid_engine_for_recent_jobs(cell, tmp_path):
    argv, code, stdout, stderr = reference("qacct-d-1.txt")
    recent = shifted_file(tmp_path / "recent", int(time.time()) - 3600 - LAST_END)
    result = qacct(*argv, "-f", recent)
    assert (result.stdout, result.stderr, result.returncode) == (stdout, stderr, code)


def test_days_option_leaves_out_older_jobs(tmp_path):
    old = shifted_file(tmp_path / "old", int(time.time()) - 3 * 86400 - LAST_END)
    result = qacct("-d", "1", "-o", "-f", old)
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == "OWNER " + TITLE
    assert len(result.stdout.splitlines()) == 2          # title and rule, no row
    assert "77" in qacct("-d", "4", "-o", "-f", old).stdout.splitlines()[2]


def test_job_entries_follow_the_time_zone():
    utc = qacct("-j", "2", "-f", FIXTURE).stdout
    berlin = qacct("-j", "2", "-f", FIXTURE, tz="Europe/Berlin").stdout
    assert "qsub_time    Sun Nov 29 20:12:17 2026\n" in utc
    assert "qsub_time    Sun Nov 29 21:12:17 2026\n" in berlin


# -- selections ---------------------------------------------------------------------

def independent_sum(keep):
    """Wall clock total of the fixture records that ``keep(fields)`` selects."""
    return sum(int(p[13]) for p in (l.split(":") for l in fixture_lines()) if keep(p))


def test_begin_time_selects_jobs_started_at_or_after_it():
    begin = 1795983240                                    # 2611292014 in UTC
    result = qacct("-b", "202611292014", "-f", FIXTURE)
    assert result.returncode == 0
    expected = independent_sum(lambda p: int(p[9]) >= begin)
    assert expected not in (0, 77)
    assert usage_row(result.stdout)[0] == str(expected)
    assert usage_row(qacct("-b", "2611292014", "-f", FIXTURE).stdout)[0] == str(expected)


def test_end_time_and_E_select_by_start_or_end_time():
    cut = 1795983449                                      # 11292017.29 in UTC
    by_start = qacct("-e", "11292017.29", "-f", FIXTURE)
    by_end = qacct("-e", "11292017.29", "-E", "-f", FIXTURE)
    start_sum = independent_sum(lambda p: int(p[9]) <= cut)
    end_sum = independent_sum(lambda p: int(p[10]) <= cut)
    assert start_sum != end_sum
    assert usage_row(by_start.stdout)[0] == str(start_sum)
    assert usage_row(by_end.stdout)[0] == str(end_sum)


def test_begin_with_days_counts_forward():
    result = qacct("-b", "202611292016", "-d", "0", "-f", FIXTURE)
    expected = independent_sum(lambda p: int(p[9]) == 1795983360)
    assert expected == 0
    assert len(result.stdout.splitlines()) == 3           # title lines only
    wide = qacct("-b", "202611292016", "-d", "1", "-f", FIXTURE)
    assert usage_row(wide.stdout)[0] == str(
        independent_sum(lambda p: int(p[9]) >= 1795983360))


def test_queue_instance_pattern_groups_by_host_and_queue():
    result = qacct("-q", "all.q@localhost", "-f", FIXTURE)
    lines = result.stdout.splitlines()
    assert lines[0] == "HOST      CLUSTER QUEUE " + TITLE
    assert lines[1] == "=" * (24 + len(TITLE))
    assert lines[2].startswith("localhost all.q                    77 ")
    assert qacct("-q", "al*@local*", "-f", FIXTURE).stdout == result.stdout
    assert qacct("-q", "all.q@", "-f", FIXTURE).stdout == result.stdout
    none = qacct("-q", "other.q", "-f", FIXTURE)
    assert none.returncode == 0 and len(none.stdout.splitlines()) == 2


def test_host_value_is_matched_without_regard_to_case():
    result = qacct("-h", "LOCALHOST", "-f", FIXTURE)
    lines = result.stdout.splitlines()
    assert lines[0] == "HOST      " + TITLE
    assert lines[2].startswith("localhost            77 ")     # the name the records hold
    assert len(qacct("-h", "elsewhere", "-f", FIXTURE).stdout.splitlines()) == 2


def test_slots_grouping_has_one_row_per_slot_count():
    result = qacct("-slots", "-f", FIXTURE)
    lines = result.stdout.splitlines()
    assert lines[0] == "SLOTS " + TITLE
    assert [l[:6] for l in lines[2:]] == ["    1 ", "    2 "]
    assert lines[2].split()[1] == str(independent_sum(lambda p: p[34] == "1"))
    two = qacct("-slots", "2", "-f", FIXTURE).stdout.splitlines()
    assert two[0] == "SLOTS" + TITLE and len(two) == 2    # 0 s wall clock: no row


def test_account_grouping_and_value():
    grouped = qacct("-A", "-f", FIXTURE).stdout.splitlines()
    assert grouped[0] == "ACCOUNT " + TITLE
    assert grouped[2].startswith("sge                77 ")
    fixed = qacct("-A", "sge", "-f", FIXTURE).stdout.splitlines()
    assert fixed == grouped
    assert len(qacct("-A", "other", "-f", FIXTURE).stdout.splitlines()) == 2


def test_u_is_the_same_as_o():
    assert qacct("-u", "-f", FIXTURE).stdout == qacct("-o", "-f", FIXTURE).stdout
    assert qacct("-u", "alice", "-f", FIXTURE).stdout == qacct("-o", "alice", "-f", FIXTURE).stdout


def test_owner_value_without_jobs_prints_the_title_only():
    result = qacct("-o", "carol", "-f", FIXTURE)
    assert result.returncode == 0
    assert result.stdout == "OWNER " + TITLE + "\n" + "=" * (6 + len(TITLE)) + "\n"


# -- -j, -t, -l, -m -------------------------------------------------------------------

def test_job_name_pattern_lists_every_matching_record():
    result = qacct("-j", "env_*", "-f", FIXTURE)
    names = [l.split()[1] for l in result.stdout.splitlines() if l.startswith("jobname")]
    expected = [p[4] for p in (l.split(":") for l in fixture_lines()) if p[4].startswith("env_")]
    assert names == expected and len(names) > 10
    assert result.returncode == 0


def test_array_task_lines_show_task_numbers_and_ranges_select_them():
    result = qacct("-j", "4", "-t", "2-5:2", "-f", FIXTURE)
    assert [l for l in result.stdout.splitlines() if l.startswith("taskid")] == [
        "taskid       2                   ", "taskid       4                   "]
    simple = qacct("-j", "2", "-f", FIXTURE).stdout
    assert "taskid       undefined\n" in simple


def test_missing_tasks_and_names_are_errors():
    tasks = qacct("-j", "54", "-t", "2-3", "-f", FIXTURE)
    assert (tasks.stdout, tasks.stderr, tasks.returncode) == (
        "", "error: Job-array tasks 54.2-3:1 not found\n", 1)
    name = qacct("-j", "nosuchjob", "-f", FIXTURE)
    assert (name.stderr, name.returncode) == ("error: job name nosuchjob not found\n", 1)


def test_t_needs_a_job_and_a_valid_range():
    alone = qacct("-t", "1", "-f", FIXTURE)
    assert alone.returncode == 1 and alone.stdout == ""
    assert alone.stderr.startswith("error: -t option requires -j option\nSGE 8.1.9\n")
    bad = qacct("-j", "4", "-t", "x-y", "-f", FIXTURE)
    assert bad.returncode == 1
    assert bad.stderr.startswith("ERROR! invalid list of task id ranges: x-y\n")


def test_bare_j_lists_every_record_then_the_total():
    result = qacct("-j", "-f", FIXTURE)
    lines = result.stdout.splitlines()
    assert lines.count("=" * 62) == 63
    assert lines[-4:-1] == ["Total System Usage", TITLE, "=" * len(TITLE)]
    assert lines[-1].split()[:4] == ["77", "0.206", "0.250", "0.456"]


def test_resource_request_selects_jobs_that_asked_for_it_and_ran():
    result = qacct("-j", "-l", "h_rt=3600", "-f", FIXTURE)
    assert [l.split()[1] for l in result.stdout.splitlines()
            if l.startswith("jobnumber")] == ["51"]
    assert "jobnumber    11 " in qacct("-j", "-l", "h_rt=0:10:0", "-f", FIXTURE).stdout
    assert "jobnumber" not in qacct("-j", "-l", "h_vmem=1G", "-f", FIXTURE).stdout


def test_master_only_leaves_out_pe_slave_task_records(tmp_path):
    lines = fixture_lines()
    parts = lines[1].rstrip("\n").split(":")             # job 11, smp
    parts[41] = "1.localhost"
    parts[13] = "9"
    path = tmp_path / "accounting"
    path.write_text("".join(lines) + ":".join(parts) + "\n")
    everything = qacct("-f", str(path))
    masters = qacct("-m", "-f", str(path))
    assert usage_row(everything.stdout)[0] == "86"
    assert usage_row(masters.stdout)[0] == "77"


def test_signals_and_failure_texts_of_other_records(tmp_path):
    from gridtools.formats import accounting
    path = tmp_path / "accounting"
    path.write_text(accounting.HEADER + accounting.render({
        "qname": "all.q", "hostname": "n1", "owner": "bob", "group": "staff",
        "job_name": "limit", "job_number": 70, "failed": 37, "exit_status": 143,
        "start_time": 1, "end_time": 2, "slots": 1, "ru_maxrss": 2 * 1024 ** 3,
        "maxvmem": 5 * 1024 ** 2, "io": 1.5, "arid": 0}))
    out = qacct("-j", "70", "-f", str(path)).stdout
    assert "failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit\n" in out
    assert "exit_status  143                  (Terminated)\n" in out
    assert "ru_maxrss    2.000GB\n" in out and "maxvmem      5.000MB\n" in out
    assert "io           1.500GB\n" in out


# -- files and errors ---------------------------------------------------------------

def test_default_file_is_the_cells_accounting_file(cell):
    assert qacct("-o", cell=cell).stdout == qacct("-o", "-f", FIXTURE).stdout


def test_missing_accounting_file(tmp_path):
    os.mkdir(os.path.join(str(tmp_path), "spool"))      # (a cell that never ran a job)
    result = qacct("-j", "1", cell=tmp_path)
    path = os.path.join(str(tmp_path), "spool", "accounting")
    assert (result.stdout, result.stderr, result.returncode) == (
        "no jobs running since startup\n", f"{path}: No such file or directory\n", 1)


def test_accounting_file_as_plain_argument_and_from_stdin():
    text = open(FIXTURE).read()
    expected = qacct("-j", "22", "-f", FIXTURE).stdout
    assert qacct("-j", "22", FIXTURE).stdout == expected
    assert qacct("-j", "22", "-f", "-", stdin=text).stdout == expected


def test_broken_and_truncated_lines(tmp_path):
    lines = fixture_lines()
    path = tmp_path / "accounting"
    path.write_text(lines[0] + "not:a:record\n" + lines[1] + lines[2][:50])
    result = qacct("-j", "-f", str(path))
    assert result.stderr == "error: ignoring invalid entry in line 2\n"
    assert [l.split()[1] for l in result.stdout.splitlines()
            if l.startswith("jobnumber")] == ["1", "11"]


@pytest.mark.parametrize("argv, message", [
    (["-x"], ""),                                       # Grid Engine prints the usage alone
    (["-d", "soon"], ""),
    (["-b", "2026"], "\nInvalid format of date/hour-minute field.\n"),
    (["-ar", "five"], "ERROR! invalid advance reservation id, must be an unsigned integer\n"),
])
def test_bad_options_print_the_usage_and_exit_1(argv, message):
    result = qacct(*argv, "-f", FIXTURE)
    assert result.returncode == 1 and result.stdout == ""
    # Grid Engine's words, if any, then the usage
    assert result.stderr == message + reference("qacct-help.txt")[2]


def test_help_goes_to_stdout_even_after_other_options():
    expected = reference("qacct-help.txt")[2]
    result = qacct("-o", "-help", "-f", FIXTURE)
    assert (result.stdout, result.returncode) == (expected, 0)


# -- the pure computations behind the options ----------------------------------------

def test_date_time_forms_and_their_years(monkeypatch):
    from gridtools.accounting.qacct import parse_date_time
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        now = 1795983470                                   # 2026-11-29 UTC
        assert parse_date_time("202611292014", now) == 1795983240
        assert parse_date_time("2611292014", now) == 1795983240
        assert parse_date_time("11292014.30", now) == 1795983270
        assert parse_date_time("7001010000", now) == 0     # YY >= 70 is 19YY
        for bad in ("2026", "1329201400", "11292460", "11292014.3", "abcdefgh"):
            with pytest.raises(Exception, match="^Invalid "):
                parse_date_time(bad, now)
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("begin, end, days, expected", [
    (None, None, None, (None, None)),
    (None, None, 2, (1000 - 2 * 86400, None)),
    (500, None, 1, (500, 500 + 86400)),
    (None, 900000, 1, (900000 - 86400, 900000)),
    (500, 900, 1, (500, 900)),
])
def test_time_window_combines_b_e_and_d(begin, end, days, expected):
    from gridtools.accounting.qacct import time_window
    assert time_window(begin, end, days, now=1000) == expected


def test_task_ranges_and_queue_patterns():
    from gridtools.accounting.qacct import (parse_task_ranges, queue_pattern,
                                            task_in_ranges)
    ranges = parse_task_ranges("1-10:3,20")
    assert ranges == [(1, 10, 3), (20, 20, 1)]
    assert [t for t in range(25) if task_in_ranges(t, ranges)] == [1, 4, 7, 10, 20]
    for bad in ("0", "5-2", "1-4:0", "a", "1-"):
        with pytest.raises(Exception, match="task id ranges"):
            parse_task_ranges(bad)
    assert queue_pattern("all.q") == "all.q@*"
    assert queue_pattern("all.q@") == "all.q@*"
    assert queue_pattern("*@node1") == "*@node1"


def test_summary_groups_are_sorted_as_grid_engine_sorts_them():
    from gridtools.accounting.qacct import Summary
    from gridtools.formats.accounting import parse
    summary = Summary({"pe", "owner"})
    for line in fixture_lines():
        summary.add(parse(line))
    rows = summary.rows()
    assert [(v["owner"], v["pe"]) for v, _ in rows] == [
        ("alice", "NONE"), ("alice", "mpi"), ("alice", "smp")]
    assert sum(u.ru_wallclock for _, u in rows) == summary.total.ru_wallclock == 77


def test_output_that_cannot_be_written_is_not_blamed_on_the_accounting_file(tmp_path):
    """A reader that goes away (``qacct -j | head -1``) ends qacct as it ends every other
    command, silently with 141; a full disk is a write error, not a read error."""
    path = tmp_path / "accounting"
    path.write_text("".join(fixture_lines()) * 200)
    env = dict(os.environ, TZ="UTC", LC_ALL="C")
    proc = subprocess.Popen([QACCT, "-j", "-f", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdout.readline().startswith(b"=====")
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert (proc.wait(timeout=60), stderr) == (141, "")
    with open("/dev/full", "w") as full:
        result = subprocess.run([QACCT, "-j", "-f", str(path)], stdout=full,
                                stderr=subprocess.PIPE, text=True, env=env, timeout=60)
    assert (result.returncode, result.stderr) == (1, "qacct: error: No space left on device\n")
