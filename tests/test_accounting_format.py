"""The accounting(5) line format: render/parse round trip, defaults, reading files."""

import io
import os

import pytest

from gridtools.errors import SyntaxProblem
from gridtools.formats import accounting

DATA = os.path.join(os.path.dirname(__file__), "data", "accounting")
FIXTURE = os.path.join(DATA, "accounting")


def fixture_text():
    with open(FIXTURE) as f:
        return f.read()


def record_lines():
    return [line for line in fixture_text().splitlines(keepends=True)
            if not line.startswith("#")]


def line_of(job_number):
    return next(line for line in record_lines() if line.split(":")[5] == str(job_number))


# -- fields and header -------------------------------------------------------

def test_fields_are_the_45_of_accounting_5_in_file_order():
    assert len(accounting.FIELDS) == 45
    assert len(set(accounting.FIELDS)) == 45
    assert accounting.FIELDS[:6] == ("qname", "hostname", "group", "owner",
                                     "job_name", "job_number")
    assert accounting.FIELDS[13] == "ru_wallclock"
    assert accounting.FIELDS[31:36] == ("project", "department", "granted_pe",
                                        "slots", "task_number")
    assert accounting.FIELDS[39] == "category"
    assert accounting.FIELDS[-3:] == ("maxvmem", "arid", "ar_submission_time")


def test_every_reference_line_has_45_fields():
    assert all(len(line.rstrip("\n").split(":")) == 45 for line in record_lines())


def test_header_is_the_one_grid_engine_writes():
    assert fixture_text().startswith(accounting.HEADER)
    assert accounting.HEADER.splitlines() == [
        "# Version: 8.1.9", "# ", "# DO NOT MODIFY THIS FILE MANUALLY!", "# "]


# -- parse ---------------------------------------------------------------------

def test_parse_gives_typed_values():
    r = accounting.parse(line_of(62))
    assert r["qname"] == "all.q" and r["hostname"] == "localhost"
    assert r["job_name"] == "in_ar" and r["job_number"] == 62
    assert r["submission_time"] == 1795983465 and r["end_time"] == 1795983470
    assert r["ru_wallclock"] == 5 and isinstance(r["ru_wallclock"], int)
    assert r["ru_utime"] == pytest.approx(0.002938) and isinstance(r["ru_utime"], float)
    assert r["ru_maxrss"] == 4716.0
    assert r["io"] == pytest.approx(0.000037)
    assert r["category"] == "-U arusers -u alice -ar 5"
    assert r["maxvmem"] == 3649536.0
    assert r["arid"] == 5 and r["ar_submission_time"] == 1795983464
    assert set(r) == set(accounting.FIELDS)


def test_parse_array_task_and_pe_fields():
    r = accounting.parse(line_of(11))
    assert (r["granted_pe"], r["slots"], r["task_number"]) == ("smp", 2, 0)
    assert r["category"] == "-u alice -l h_rt=600 -pe smp 2"
    tasks = [accounting.parse(line)["task_number"] for line in record_lines()
             if line.split(":")[5] == "4"]
    assert tasks == [1, 2, 3, 4, 5]


def test_parse_folds_surplus_colons_into_the_category():
    parts = line_of(51).rstrip("\n").split(":")
    parts[39] = "-u alice -l h_rt=1:00:00"
    r = accounting.parse(":".join(parts) + "\n")
    assert r["category"] == "-u alice -l h_rt=1:00:00"
    assert r["pe_taskid"] == "NONE" and r["arid"] == 0
    assert r["iow"] == 0.0


def test_parse_fills_missing_trailing_fields_with_defaults():
    short = ":".join(line_of(2).split(":")[:33])
    r = accounting.parse(short)
    assert r["department"] == "defaultdepartment"
    assert r["granted_pe"] == "NONE" and r["category"] == "NONE"
    assert r["slots"] == 0 and r["cpu"] == 0.0 and r["arid"] == 0


def test_parse_rejects_too_few_fields():
    with pytest.raises(SyntaxProblem, match="fields"):
        accounting.parse("all.q:localhost:alice\n")


def test_parse_rejects_text_in_a_number_field():
    parts = line_of(2).split(":")
    parts[5] = "two"
    with pytest.raises(SyntaxProblem, match="job_number"):
        accounting.parse(":".join(parts))


# -- render --------------------------------------------------------------------

def test_render_parse_round_trip_is_byte_identical_for_every_reference_line():
    for line in record_lines():
        assert accounting.render(accounting.parse(line)) == line


def test_render_fills_grid_engine_defaults():
    line = accounting.render({"qname": "all.q", "hostname": "node1", "owner": "bob",
                              "job_number": 7, "ru_utime": 1.5})
    parts = line.rstrip("\n").split(":")
    assert line.endswith("\n") and "\n" not in line[:-1]
    assert len(parts) == 45
    assert parts[:6] == ["all.q", "node1", "NONE", "bob", "UNKNOWN", "7"]
    assert parts[14] == "1.500000"
    assert parts[16] == "0.000000"          # ru_maxrss is a float field
    assert parts[17] == "0"                 # ru_ixrss an int field
    assert parts[31:34] == ["NONE", "NONE", "NONE"]
    assert parts[39] == "NONE" and parts[41] == "NONE"


def test_render_accepts_numbers_of_either_kind_and_none():
    line = accounting.render({"job_number": 3.0, "ru_wallclock": 61.9, "cpu": 2,
                              "category": "", "project": None})
    r = accounting.parse(line)
    assert r["job_number"] == 3 and r["ru_wallclock"] == 61 and r["cpu"] == 2.0
    assert r["category"] == "NONE" and r["project"] == "NONE"


def test_render_keeps_every_line_at_45_fields_when_values_hold_colons_or_newlines():
    line = accounting.render({"job_name": "a:b", "category": "-l arch=x:y",
                              "account": "two\nlines"})
    assert line.count("\n") == 1
    assert len(line.rstrip("\n").split(":")) == 45
    r = accounting.parse(line)
    assert r["job_name"] == "a_b" and r["category"] == "-l arch=x_y"
    assert r["account"] == "two lines"


def test_render_rejects_a_non_number_for_a_number_field():
    with pytest.raises(SyntaxProblem, match="slots"):
        accounting.render({"slots": "many"})


# -- read ----------------------------------------------------------------------

def test_read_skips_the_header_and_yields_every_record():
    records = list(accounting.read(FIXTURE))
    assert len(records) == len(record_lines()) == 63
    assert records[0]["job_name"] == "hostname" and records[-1]["job_number"] == 62


def test_read_ignores_a_truncated_last_line_but_keeps_a_complete_one():
    text = accounting.HEADER + line_of(2) + line_of(22)[:40]
    records = list(accounting.read(io.StringIO(text)))
    assert [r["job_number"] for r in records] == [2]
    complete = accounting.HEADER + line_of(2) + line_of(22).rstrip("\n")
    records = list(accounting.read(io.StringIO(complete)))
    assert [r["job_number"] for r in records] == [2, 22]


def test_read_reports_and_skips_broken_lines_in_the_middle():
    text = accounting.HEADER + line_of(2) + "garbage line\n\n" + line_of(22)
    errors = []
    records = list(accounting.read(io.StringIO(text),
                                   on_error=lambda n, e: errors.append(n)))
    assert [r["job_number"] for r in records] == [2, 22]
    assert errors == [6]


def test_read_select_and_fields_limit_the_work():
    seen = []

    def only_job_4(parts):
        seen.append(parts[5])
        return parts[5] == "4"

    records = list(accounting.read(FIXTURE, select=only_job_4,
                                   fields=("task_number", "ru_wallclock")))
    assert len(seen) == 63
    assert [r["task_number"] for r in records] == [1, 2, 3, 4, 5]
    assert set(records[0]) == {"task_number", "ru_wallclock"}


def test_read_accepts_a_path_to_a_file_written_with_render(tmp_path):
    path = tmp_path / "accounting"
    path.write_text(accounting.HEADER + accounting.render({"job_number": 9, "owner": "bob"}))
    (record,) = accounting.read(str(path))
    assert record["job_number"] == 9 and record["owner"] == "bob"


# -- category --------------------------------------------------------------------

@pytest.mark.parametrize("owner, requests, expected", [
    ("alice", {}, "-u alice"),
    ("alice", {"l": {"h_rt": 600}, "pe": ("smp", 2)}, "-u alice -l h_rt=600 -pe smp 2"),
    ("alice", {"U": ["arusers"]}, "-U arusers -u alice"),
    ("alice", {"U": "arusers", "l": ["h_rt=3600"]}, "-U arusers -u alice -l h_rt=3600"),
    ("alice", {"U": ["arusers"], "ar": 5}, "-U arusers -u alice -ar 5"),
    ("alice", {"pe": "mpi 2"}, "-u alice -pe mpi 2"),
])
def test_category_matches_the_strings_grid_engine_wrote(owner, requests, expected):
    assert accounting.category(owner, requests) == expected
    assert expected in {accounting.parse(line)["category"] for line in record_lines()}


def test_category_puts_every_part_in_grid_engine_order():
    text = accounting.category("bob", {
        "ar": 3, "I": True, "ckpt": "blcr", "pe": ("mpi", (2, 8)),
        "soft_l": {"arch": "lx-amd64"}, "l": {"h_vmem": "1G", "h_rt": "600"},
        "masterq": ["big.q"], "q": ["all.q", "big.q"], "P": "projA",
        "U": ["arusers", "staff"]})
    assert text == ("-U arusers,staff -P projA -u bob -q all.q,big.q -masterq big.q"
                    " -l h_vmem=1G,h_rt=600 -soft -l arch=lx-amd64 -pe mpi 2-8"
                    " -ckpt blcr -I y -ar 3")


def test_category_writes_time_values_without_colons():
    text = accounting.category("bob", {"l": "h_rt=1:00:00,s_rt=0:10:"})
    assert text == "-u bob -l h_rt=3600,s_rt=600"
    assert ":" not in text


def test_empty_category_is_written_as_none():
    assert accounting.category(None, {}) == ""
    line = accounting.render({"category": accounting.category(None, None)})
    assert line.split(":")[39] == "NONE"


def test_a_restarting_daemon_takes_no_tasks_record_for_its_jobs_own(tmp_path, monkeypatch):
    """reap.recent_records: the records found at the end of the file stand for the runs
    already accounted; a record of a task inside a parallel job (its pe_taskid), started
    in the same second as the job, is not the job's own (its record would be lost)."""
    from gridtools.daemon import reap
    os.makedirs(tmp_path / "spool")
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    base = {"qname": "all.q", "hostname": "node1", "owner": "bob", "job_name": "mpi", "job_number": 67,
            "start_time": 1796603258, "end_time": 1796603260}
    with open(tmp_path / "spool" / "accounting", "w") as fh:
        fh.write(accounting.render(dict(base, pe_taskid="1.node1")))
        fh.write(accounting.render(dict(base, job_number=68)))
    assert reap.recent_records({67, 68}) == {(68, 1, 1796603258)}
