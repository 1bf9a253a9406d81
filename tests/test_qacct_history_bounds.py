"""qacct -f and condor_history -file on hostile input: bounded memory, no hang; and the
qacct option readings Grid Engine has (positional fields, queue domains, host case,
sscanf numbers, date messages).

The commands run in a fresh interpreter held to ``LIMIT`` bytes of address space (with
a timeout), so that a reader that holds a whole file or line fails instead of growing."""

import os

from conftest import run_bare

LIMIT = 256 * 1024 * 1024

QACCT = ("import resource, sys\n"
         f"resource.setrlimit(resource.RLIMIT_AS, ({LIMIT}, {LIMIT}))\n"
         "from gridtools.cli.sge.qacct import main\n"
         "sys.exit(main(sys.argv[1:]))\n")
HISTORY = QACCT.replace("gridtools.cli.sge.qacct", "gridtools.cli.condor.history")


def record(host="node01", job=7, wallclock=10, name="job", extra=""):
    """One accounting line of 45 fields (plus ``extra``)."""
    fields = ["all.q", host, "staff", "alice", name, str(job), "sge", "0",
              "1700000000", "1700000100", str(1700000100 + wallclock), "0", "0", str(wallclock),
              "1.000000", "0.500000", "4480.000000"] + ["0"] * 7 + ["0.000000"] + ["0"] * 6 + [
              "NONE", "defaultdepartment", "NONE", "1", "0", "1.500000", "0.250000", "0.125000",
              "-u alice", "2.000000", "NONE", "3649536.000000", "0", "0"]
    assert len(fields) == 45
    return ":".join(fields) + extra + "\n"


def qacct(*args):
    return run_bare(QACCT, *args)


def write(path, text):
    path.write_text(text)
    return str(path)


def holed(path, hole, tail):
    """A file of ``hole`` NUL bytes (a sparse hole: no disk used) then ``tail``."""
    with open(path, "wb") as fh:
        fh.truncate(hole)
        fh.seek(hole)
        fh.write(tail.encode())
    return str(path)


# -- finding 1: bounded memory whatever the input ------------------------------------

def test_qacct_of_dev_zero_ends_with_an_error_line_in_bounded_memory():
    result = qacct("-f", "/dev/zero")
    assert result.returncode == 1
    assert result.stderr == ("error: /dev/zero: line 1 has no end within its first "
                             "268435456 characters: stopped reading\n")
    assert "Traceback" not in result.stderr


def test_qacct_skips_a_200_mb_line_as_a_damaged_entry(tmp_path):
    path = holed(tmp_path / "acct", 200 * 1024 * 1024, "\n" + record(wallclock=42))
    result = qacct("-f", path, "-o")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "error: ignoring invalid entry in line 1\n"
    assert result.stdout.splitlines()[2].split()[:2] == ["alice", "42"]


def test_qacct_reads_long_lines_from_standard_input_in_bounded_memory(tmp_path):
    path = holed(tmp_path / "acct", 200 * 1024 * 1024, "\n" + record(wallclock=42))
    code = QACCT.replace("from gridtools", f"sys.stdin = open({path!r})\nfrom gridtools")
    result = run_bare(code, "-f", "-", "-o")
    assert (result.returncode, result.stderr) == (0, "error: ignoring invalid entry in line 1\n")
    assert result.stdout.splitlines()[2].split()[:2] == ["alice", "42"]


def ads(count, start=1):
    out = []
    for cluster in range(start, start + count):
        out.append(f'ClusterId = {cluster}\nProcId = 0\nOwner = "alice"\nQDate = 1700000000\n'
                   f'CompletionDate = {1700000000 + cluster}\nJobStatus = 4\nCmd = "/bin/true"\n'
                   f'*** ProcId = 0 ClusterId = {cluster} Owner = "alice" '
                   f'CompletionDate = {1700000000 + cluster}\n')
    return "".join(out)


def test_condor_history_of_dev_zero_ends_in_bounded_memory():
    backwards = run_bare(HISTORY, "-file", "/dev/zero", "-limit", "1", "-af", "ClusterId")
    assert (backwards.returncode, backwards.stdout, backwards.stderr) == (0, "", "")
    forwards = run_bare(HISTORY, "-file", "/dev/zero", "-forwards", "-af", "ClusterId")
    assert forwards.returncode == 1 and forwards.stdout == ""
    assert forwards.stderr == ("Error: history file /dev/zero: line 1 has no end within its "
                               "first 268435456 characters: stopped reading\n")


# -- finding 4: condor_history reads backwards and stops at -limit / -scanlimit --------

def test_condor_history_limit_reads_only_the_end_of_a_huge_file(tmp_path):
    """A gigabyte of damage (a NUL hole) before the last ads: -limit, -match and -scanlimit
    read only the newest ads, as HTCondor's backward reader does."""
    path = holed(tmp_path / "history", 1024 ** 3, "\n" + ads(3))
    result = run_bare(HISTORY, "-file", path, "-limit", "2", "-af", "ClusterId")
    assert (result.returncode, result.stdout, result.stderr) == (0, "3\n2\n", "")
    result = run_bare(HISTORY, "-file", path, "-match", "1", "-af", "ClusterId")
    assert result.stdout == "3\n"
    result = run_bare(HISTORY, "-file", path, "-scanlimit", "3", "-af", "ClusterId")
    assert result.stdout == "3\n2\n1\n"
    result = run_bare(HISTORY, "-file", path, "-constraint", "ClusterId == 2", "-limit", "1",
                      "-af", "ClusterId")
    assert result.stdout == "2\n"


def test_condor_history_reads_the_cells_own_history_backwards(tmp_path, monkeypatch):
    (tmp_path / "spool").mkdir()
    holed(tmp_path / "spool" / "history", 1024 ** 3, "\n" + ads(2))
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    result = run_bare(HISTORY, "-limit", "1", "-af", "ClusterId")
    assert (result.returncode, result.stdout) == (0, "2\n"), result.stderr


def test_condor_history_forwards_reads_from_the_start_and_stops_at_the_limit(tmp_path):
    path = str(tmp_path / "history")
    with open(path, "w") as fh:
        fh.write(ads(3))
        fh.truncate(fh.tell() + 1024 ** 3)          # then a gigabyte of damage
    result = run_bare(HISTORY, "-file", path, "-forwards", "-limit", "2", "-af", "ClusterId")
    assert (result.returncode, result.stdout, result.stderr) == (0, "1\n2\n", "")
    small = write(tmp_path / "small", ads(3) + "ClusterId = 99\n")     # a partial last ad
    assert run_bare(HISTORY, "-file", small, "-af", "ClusterId").stdout == "3\n2\n1\n"
    assert run_bare(HISTORY, "-file", small, "-forwards", "-af", "ClusterId").stdout == "1\n2\n3\n"


# -- finding 3: surplus trailing fields ----------------------------------------------

def test_surplus_trailing_fields_are_ignored(tmp_path):
    path = write(tmp_path / "acct", record() + record(job=8, extra=":1800:4096"))
    result = qacct("-f", path, "-j", "8")
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(None, 1) for line in result.stdout.splitlines()[1:] if " " in line)
    assert lines["iow"] == "2.000s" and lines["maxvmem"] == "3.480MB"
    assert lines["arid"] == "undefined" and lines["category"] == "-u alice"
    ar = qacct("-f", path, "-ar").stdout.splitlines()
    assert [row.split()[0] for row in ar[2:]] == ["0"]


# -- finding 5: queue domains -------------------------------------------------------

def _cell_with_group(root, members):
    from gridtools.formats.sge import queue
    os.makedirs(root / "etc" / "queues")
    os.makedirs(root / "etc" / "hostgroups")
    q = queue.template("all.q")
    q["hostlist"] = ["@allhosts"]
    (root / "etc" / "queues" / "all.q").write_text(queue.render(q))
    (root / "etc" / "hostgroups" / "@allhosts").write_text(
        "group_name @allhosts\nhostlist " + " ".join(members) + "\n")


def test_a_queue_domain_is_resolved_from_the_cells_host_groups(tmp_path, monkeypatch):
    _cell_with_group(tmp_path, ["node01"])
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    path = write(tmp_path / "acct", record("node01", wallclock=10) + record("node02", wallclock=20))
    result = qacct("-f", path, "-q", "all.q@@allhosts")
    assert result.returncode == 0, result.stderr
    rows = result.stdout.splitlines()[2:]
    assert [row.split()[:3] for row in rows] == [["node01", "all.q", "10"]]
    assert qacct("-f", path, "-q", "*@@all*").stdout == result.stdout
    none = qacct("-f", path, "-q", "all.q@@nosuchgroup")
    assert (none.returncode, none.stdout) == (1, "")
    assert none.stderr == "No queues remaining after -q queue selection\n"


# -- finding 6: host names without regard to case -----------------------------------

def test_host_grouping_ignores_case(tmp_path):
    path = write(tmp_path / "acct", record("NODE01", wallclock=10) + record("node01", wallclock=20)
                 + record("Node01", wallclock=5))
    rows = qacct("-f", path, "-h").stdout.splitlines()[2:]
    assert [row.split()[:2] for row in rows] == [["NODE01", "35"]]
    one = qacct("-f", path, "-h", "node01").stdout.splitlines()[2:]
    assert [row.split()[:2] for row in one] == [["NODE01", "35"]]


# -- findings 7, 9, 10: numbers and dates as Grid Engine reads them ------------------------

def test_non_ascii_digits_are_no_number(tmp_path):
    path = write(tmp_path / "acct", record(job=12))
    for option in ("-d", "-ar"):
        result = qacct("-f", path, option, "\u00b2")
        assert result.returncode == 1 and "Traceback" not in result.stderr, option
        assert "usage: qacct [options]" in result.stderr
    # -slots is read with atol(), as Grid Engine reads it: no number is 0, no selection
    slots = qacct("-f", path, "-slots", "\u00b2")
    assert (slots.returncode, slots.stdout, slots.stderr) == (0, qacct("-f", path).stdout, "")
    job = qacct("-f", path, "-j", "\u0661\u0662")
    assert (job.returncode, job.stdout) == (1, "")
    assert job.stderr == "error: job name \u0661\u0662 not found\n"
    date = qacct("-f", path, "-b", "\u0661\u0660\u0660\u0661\u0660\u0660\u0660\u0660")
    assert date.returncode == 1
    assert date.stderr.startswith("\nInvalid format of date/hour-minute field.\nSGE 8.1.9\n")


def test_bad_dates_get_grid_engines_messages(tmp_path):
    path = write(tmp_path / "acct", record())
    for value, message in (("12312359.60", "Invalid seconds specification."),
                           ("2026100100", "Invalid month specification."),
                           ("12322359", "Invalid day specification."),
                           ("12312459", "Invalid hour specification."),
                           ("12312360", "Invalid minute specification."),
                           ("12312359.5", "Invalid format of seconds field.")):
        result = qacct("-f", path, "-b", value)
        assert (result.returncode, result.stdout) == (1, ""), value
        assert result.stderr.startswith(f"\n{message}\nSGE 8.1.9\nusage: qacct"), value
    assert qacct("-f", path, "-b", "12312359.59").returncode == 0


def test_a_job_id_with_trailing_text_is_read_as_its_number(tmp_path):
    path = write(tmp_path / "acct", record(job=2, name="two"))
    result = qacct("-f", path, "-j", "2x")
    assert result.returncode == 0, result.stderr
    assert "jobnumber    2 " in result.stdout and "jobname      two " in result.stdout
