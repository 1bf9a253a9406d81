"""sge_share_mon's options at their edges, read as Son of Grid Engine 8.1.9's monitor
reads them, run in-process on a published snapshot (no daemon): a bad option is said
on standard error with the usage and exits 1; a field -f does not know is passed over;
-c 0 prints nothing and -c -1 prints forever; -i and -c are read as sscanf(3) reads an
int; -m is an fopen(3) mode, looked at only with -o; and usage_time, without -u, is
when the last pass brought the user's usage up to date."""

import os

import pytest

from gridtools.cli.sge import qstatus, share_mon

#: when the snapshot was published (the last pass)
PASS = 1_000_000.0
#: when a job of gtalice's last reported its use, well before the pass
REPORTED = 999_000


def _row(path, user=None, shares=1, usage_time=0):
    return {"path": path, "user": user, "project": None, "shares": shares, "job_count": 0,
            "level": 1.0, "total": 1.0, "long_target": 1.0, "short_target": 1.0, "actual": 1.0,
            "usage": 2.0, "tickets": 0.0, "usage_time": usage_time, "cpu": 2.0, "mem": 0.0,
            "io": 0.0, "ltcpu": 3.0, "ltmem": 0.0, "ltio": 0.0}


SNAP = {"time": PASS, "share_halftime": 3600.0,
        "share_tree": [_row("/", shares=1), _row("/gtalice", "gtalice", 60, REPORTED),
                       _row("/gtbob", "gtbob", 40)]}


class Stop(Exception):
    """Ends an endless monitor after the collections a test wants."""


@pytest.fixture
def monitor(monkeypatch, capsys):
    """run(*args) -> (exit code, stdout, stderr, snapshots loaded, pauses), the monitor
    reading SNAP and pausing not at all; a run whose pauses pass ``stop_after`` stops."""
    def run(*args, stop_after=None):
        loads, pauses = [], []

        def load():
            loads.append(1)
            return SNAP

        def sleep(seconds):
            pauses.append(seconds)
            if stop_after is not None and len(pauses) >= stop_after:
                raise Stop

        monkeypatch.setattr(qstatus, "load", load)
        monkeypatch.setattr(share_mon.time, "sleep", sleep)
        try:
            code = share_mon.main(list(args))
        except Stop:
            code = None
        out, err = capsys.readouterr()
        return code, out, err, len(loads), pauses
    return run


# -- bad options ---------------------------------------------------------------------

def test_an_unknown_letter_is_said_as_getopt_says_it_with_the_usage_and_exits_1(monitor):
    code, out, err, loads, _ = monitor("-c", "1", "-z")
    assert (code, out, loads) == (1, "", 0)
    assert err == "sge_share_mon: invalid option -- 'z'\n" + share_mon.USAGE
    assert err.splitlines()[1].startswith("usage: sge_share_mon [-")


def test_a_missing_value_is_said_as_getopt_says_it_and_exits_1(monitor):
    code, out, err, loads, _ = monitor("-x", "-c")
    assert (code, out, loads) == (1, "", 0)
    assert err == "sge_share_mon: option requires an argument -- 'c'\n" + share_mon.USAGE


def test_every_bad_option_is_said_in_the_order_met_then_the_usage_once(monitor):
    """getopt(3) goes on past a bad option, and the monitor says each bad count and
    interval as it reads it; the usage follows them all, once."""
    code, out, err, _, _ = monitor("-z", "/gtalice", "-c", "many", "-xq", "-i", "soon")
    assert (code, out) == (1, "")
    assert err == ("sge_share_mon: invalid option -- 'z'\n"
                   '"many" is not a valid count\n'
                   "sge_share_mon: invalid option -- 'q'\n"
                   '"soon" is not a valid interval\n' + share_mon.USAGE)


def test_help_is_read_as_the_letters_it_is_made_of(monitor):
    """The monitor knows no -help: getopt(3) reads -h, then -e, which it does not know
    (and -l with the value p)."""
    code, out, err, loads, _ = monitor("-help")
    assert (code, out, loads) == (1, "", 0)
    assert err == "sge_share_mon: invalid option -- 'e'\n" + share_mon.USAGE


# -- fields --------------------------------------------------------------------------

def test_a_field_it_does_not_know_is_passed_over(monitor):
    """-f node_name,bogus,shares prints node_name and shares; names are matched as
    written (" shares" is none of them), and empty ones between commas are skipped."""
    code, out, err, _, _ = monitor("-c", "1", "-h", "-f", "node_name,bogus,,shares, level%")
    assert (code, err) == (0, "")
    assert out == ("node_name\tshares\t\n\n"
                   "/\t1\t\n/gtalice\t60\t\n/gtbob\t40\t\n")


def test_with_no_field_it_knows_a_node_prints_nothing_and_the_header_its_delimiters(monitor):
    code, out, err, _, _ = monitor("-c", "1", "-h", "-l", "L", "-r", "R", "-f", "bogus")
    assert (code, out, err) == (0, "LR", "")
    assert monitor("-c", "1", "-f", "")[:3] == (0, "", "")


# -- counts and intervals ------------------------------------------------------------

def test_count_0_and_below_minus_1_print_nothing_not_even_the_header(monitor, tmp_path):
    out_file = tmp_path / "mon.out"
    for count in ("0", "-2", "-0"):
        code, out, err, loads, pauses = monitor("-c", count, "-h", "-o", str(out_file))
        assert (code, out, err, loads, pauses) == (0, "", "", 0, []), count
    assert not out_file.exists()


def test_count_minus_1_prints_forever(monitor):
    """-c -1 is the default's endless run: each collection followed by the record
    delimiter, a pause after each."""
    code, out, err, loads, pauses = monitor("-c", "-1", "-x", "-f", "node_name", "-r", "END\n",
                                            "-i", "7", stop_after=3)
    assert (code, err, loads, pauses) == (None, "", 3, [7.0, 7.0, 7.0])
    assert out == "/gtalice\t\n/gtbob\t\nEND\n" * 3


@pytest.mark.parametrize("count, collections", [("2x", 2), (" +2", 2), ("1.9", 1)])
def test_a_count_is_read_as_sscanf_reads_an_int(monitor, count, collections):
    code, out, err, loads, pauses = monitor("-c", count, "-x", "-f", "node_name")
    assert (code, err, loads, len(pauses)) == (0, "", collections, collections - 1)


@pytest.mark.parametrize("interval, pause", [("0", 0.0), ("3s", 3.0), ("1.5", 1.5),
                                             ("-1", float(2 ** 32 - 1))])
def test_an_interval_is_read_as_a_number_at_its_start(monitor, interval, pause):
    """-i 0 does not wait; what follows the number is passed over; a negative interval
    waits as long as sleep(3) waits for it (the int turned unsigned)."""
    code, out, err, loads, pauses = monitor("-c", "2", "-i", interval, "-f", "node_name")
    assert (code, err, loads, pauses) == (0, "", 2, [pause])


# -- the output file's mode ----------------------------------------------------------

def test_m_is_not_looked_at_without_o(monitor):
    code, out, err, _, _ = monitor("-c", "1", "-m", "bogus", "-x", "-f", "node_name")
    assert (code, out, err) == (0, "/gtalice\t\n/gtbob\t\n", "")


def test_a_mode_fopen_refuses_is_an_invalid_argument(monitor, tmp_path):
    path = tmp_path / "mon.out"
    code, out, err, _, _ = monitor("-c", "1", "-m", "bogus", "-o", str(path))
    assert (code, out, err) == (1, "", f"can't open file {path}: Invalid argument\n")
    assert not path.exists()


def test_mode_r_opens_the_file_but_cannot_write_it(monitor, tmp_path):
    path = tmp_path / "mon.out"
    code, out, err, _, _ = monitor("-c", "1", "-m", "r", "-o", str(path))
    assert (code, out, err) == (1, "", f"can't open file {path}: No such file or directory\n")
    path.write_text("kept\n")
    code, out, err, _, _ = monitor("-c", "1", "-m", "r", "-o", str(path))
    assert (code, out, err) == (1, "", "write failed\n")
    assert path.read_text() == "kept\n"


def test_fopen_modes_with_more_letters(monitor, tmp_path):
    """r+ writes over the file's start and keeps the rest, w+ empties it first, ab
    appends, and wx wants a new file."""
    path = tmp_path / "mon.out"
    common = ("-c", "1", "-x", "-f", "node_name", "-o", str(path))
    before = "0123456789" * 3 + "\n"
    written = "/gtalice\t\n/gtbob\t\n"
    path.write_text(before)
    assert monitor(*common, "-m", "r+")[0] == 0
    assert path.read_text() == written + before[len(written):]
    assert monitor(*common, "-m", "w+")[0] == 0
    assert path.read_text() == "/gtalice\t\n/gtbob\t\n"
    assert monitor(*common, "-m", "ab")[0] == 0
    assert path.read_text() == "/gtalice\t\n/gtbob\t\n" * 2
    code, out, err, _, _ = monitor(*common, "-m", "wx")
    assert (code, err) == (1, f"can't open file {path}: File exists\n")
    os.unlink(path)
    assert monitor(*common, "-m", "wx")[0] == 0
    assert path.read_text() == "/gtalice\t\n/gtbob\t\n"


# -- usage_time ----------------------------------------------------------------------

def test_usage_time_is_when_the_last_pass_brought_the_users_usage_up_to_date(monitor):
    """Without -u a user's usage_time is the pass's time (each pass decays and stamps
    every user's usage, as Grid Engine's scheduler does), not when a job last reported
    use; 0 for a user who never used anything and on nodes that are no user. With -u
    it is the time of printing."""
    code, out, err, _, _ = monitor("-c", "1", "-n", "-f", "node_name,usage_time,curr_time")
    assert (code, err) == (0, "")
    found = {}
    for line in out.splitlines():
        fields = dict(item.split("=", 1) for item in line.rstrip("\t").split("\t"))
        found[fields["node_name"]] = fields
    assert found["/gtalice"]["usage_time"] == str(int(PASS))
    assert found["/gtbob"]["usage_time"] == "0" and found["/"]["usage_time"] == "0"
    code, out, err, _, _ = monitor("-c", "1", "-u", "-f", "node_name,usage_time,curr_time")
    line = next(x for x in out.splitlines() if x.startswith("/gtalice\t"))
    assert line.split("\t")[1] == line.split("\t")[2]
