"""gridtools classad eval / match / unparse, run as commands."""

import os
import subprocess
import sys

import pytest

BIN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin")


def gridtools(tmp_path, *args, stdin=None):
    env = dict(os.environ, GRIDTOOLS_ROOT=str(tmp_path))
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return subprocess.run([os.path.join(BIN, "gridtools"), "classad", *args], input=stdin,
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=60)


@pytest.fixture
def ads(tmp_path):
    job = tmp_path / "job.ad"
    job.write_text('Owner = "coltrane"\nRequestMemory = 1024\n'
                   "Requirements = TARGET.Memory >= RequestMemory\nRank = TARGET.Memory / 1024\n")
    machine = tmp_path / "machine.ad"
    machine.write_text('[ Memory = 2048; KeyboardIdle = 34; '
                       'Requirements = KeyboardIdle > 15 * 60 || Owner == "coltrane"; '
                       'Rank = Owner == "coltrane" ]\n')
    return str(job), str(machine)


@pytest.mark.parametrize("expr,printed", [
    ("1 + 2 * 3", "7"),
    ("10 == UNDEFINED", "undefined"),
    ("1/0", "error"),
    ('strcat("a", "b")', '"ab"'),
    ("{1, 2.5}", "{ 1,2.500000000000000E+00 }"),
    ("7.0 / 2", "3.500000000000000E+00"),
    ("-1", "-1"),
])
def test_eval_prints_the_value(tmp_path, expr, printed):
    result = gridtools(tmp_path, "eval", expr)
    assert result.returncode == 0, result.stderr
    assert result.stdout == printed + "\n"


def test_eval_with_my_and_target(tmp_path, ads):
    job, machine = ads
    result = gridtools(tmp_path, "eval", "TARGET.Memory - RequestMemory", "--my", job,
                       "--target", machine)
    assert result.stdout == "1024\n"
    assert gridtools(tmp_path, "eval", "Requirements", "--my", machine).stdout == "undefined\n"
    result = gridtools(tmp_path, "eval", "Requirements", f"--my={machine}", "--target", job)
    assert result.stdout == "true\n"


def test_eval_reads_an_ad_from_standard_input(tmp_path):
    result = gridtools(tmp_path, "eval", "MY.Cpus * 2", "--my", "-", stdin="Cpus = 4\n")
    assert result.stdout == "8\n"
    result = gridtools(tmp_path, "eval", "1", "--my", "-", "--target", "-", stdin="A = 1\n")
    assert result.returncode == 2 and "only once" in result.stderr


def test_match_reports_both_requirements_and_ranks(tmp_path, ads):
    job, machine = ads
    result = gridtools(tmp_path, "match", job, machine)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("job requirements: true\nmachine requirements: true\n"
                             "match: yes\njob rank: 2.000000000000000E+00\nmachine rank: 1.000000000000000E+00\n")


def test_match_without_a_match_exits_1(tmp_path, ads):
    job, machine = ads
    other = tmp_path / "other.ad"
    other.write_text(open(job).read().replace("coltrane", "miles"))
    result = gridtools(tmp_path, "match", str(other), machine)
    assert result.returncode == 1
    assert "machine requirements: false\nmatch: no\n" in result.stdout
    assert result.stderr == ""


@pytest.mark.parametrize("args,message", [
    (["eval", "1 +"], "bad expression: line 1, column 4: unexpected end of input"),
    (["eval"], "eval takes exactly one expression"),
    (["eval", "1", "--my", "/no/such/file"], "cannot read /no/such/file"),
    (["eval", "1", "--bogus"], "unknown option --bogus"),
    (["eval", "1", "--my"], "--my needs a file name"),
    (["match", "onlyone"], "match takes two ad files"),
    (["frobnicate"], "unknown command 'frobnicate'"),
])
def test_bad_input_gives_one_line_and_status_2(tmp_path, args, message):
    result = gridtools(tmp_path, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert message in result.stderr
    assert result.stderr.startswith("gridtools classad: ")


def test_bad_ad_file_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.ad"
    bad.write_text("A = 1\nB = (2\n")
    result = gridtools(tmp_path, "eval", "A", "--my", str(bad))
    assert result.returncode == 2
    assert result.stderr == f"gridtools classad: {bad}: line 2, column 7: B: unexpected end of input\n"


def test_unparse_prints_canonical_form(tmp_path):
    result = gridtools(tmp_path, "unparse", "a&&b  ||!c is undefined")
    assert result.stdout == "a && b ||  !c is undefined\n"


def test_help(tmp_path):
    result = gridtools(tmp_path, "--help")
    assert result.returncode == 0 and "match JOBAD MACHINEAD" in result.stdout
    result = gridtools(tmp_path)
    assert result.returncode == 2 and "Usage" in result.stderr
