"""The output formats of the HTCondor query commands against real HTCondor's: -format's
invalid columns, -af's separators and headings, -long's order, -json's lists and reals,
-better-analyze's job status, condor_config_val -config/-default/-dump, condor_history's
bad constraint and JobPid of a running job (review gtaudit46)."""

import os

import pytest

from gridtools.cli.condor import q, status

JOB_ADS = """\
ClusterId = 4
ProcId = 0
Owner = "gtaudA"
JobStatus = 5
HoldReason = "submitted on hold at user's request"
HoldReasonCode = 15
QDate = 1764842400
Cmd = "/bin/sleep"
Lst = { 1,2.5,"x" }
Big = 1.0E20
Ld = 0.12858072916666666
Requirements = TARGET.Cpus >= 1
RequestCpus = 1
JobUniverse = 5

"""

SLOT_ADS = """\
MyType = "Machine"
Name = "slot1@vm"
Machine = "vm"
Cpus = 1
Memory = 1024
State = "Unclaimed"
Activity = "Idle"
Requirements = true
CondorLoadAvg = 0.12858072916666666

"""


@pytest.fixture
def files(tmp_path):
    jobs, slots = tmp_path / "jobs.ads", tmp_path / "slots.ads"
    jobs.write_text(JOB_ADS)
    slots.write_text(SLOT_ADS)
    return str(jobs), str(slots)


def _q(capsys, files, *argv):
    code = q.main(["-jobads", files[0], *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _status(capsys, files, *argv):
    code = status.main(["-ads", files[1], *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


# ---------------------------------------------------------------- -format (findings 1, 2)

@pytest.mark.parametrize("fmt, attr", [("[%d]\\n", "NoSuch"), ("[%f]\\n", "NoSuch"), ("[%d]\\n", "Owner"),
                                       ("[%s]\\n", "NoSuch")])
def test_format_of_a_value_not_of_the_conversions_kind_prints_nothing(capsys, files, fmt, attr):
    """An invalid column prints its alt text, empty for -format: not the format's text."""
    assert _q(capsys, files, "-format", fmt, attr) == ""
    assert _status(capsys, files, "-format", fmt, attr) == ""


def test_format_items_of_one_job_skip_the_invalid_one(capsys, files):
    out = _q(capsys, files, "-format", "%s|", "Owner", "-format", "%d\\n", "JobStatus", "-format", "%f\\n", "NoSuch")
    assert out == "gtaudA|5\n"


def test_format_v_of_an_undefined_attribute_is_undefined_in_both_commands(capsys, files):
    assert _q(capsys, files, "-format", "[%v]\\n", "NoSuch") == "[undefined]\n"
    assert _status(capsys, files, "-format", "[%v]\\n", "NoSuch") == "[undefined]\n"
    assert _status(capsys, files, "-format", "[%V]\\n", "Name") == '["slot1@vm"]\n'


# ---------------------------------------------------------------- -long (finding 3)

def test_long_sorts_attributes_by_name(capsys, files):
    out = _q(capsys, files, "-l", "-attributes", "Owner,JobStatus,ClusterId")
    assert out == 'ClusterId = 4\nJobStatus = 5\nOwner = "gtaudA"\n\n'
    names = [line.split(" = ")[0] for line in _q(capsys, files, "-l").splitlines() if line]
    assert names == sorted(names, key=str.lower)


# ---------------------------------------------------------------- -json (findings 4, 5)

def test_json_writes_lists_as_arrays_and_reals_as_the_long_form(capsys, files):
    out = _q(capsys, files, "-json", "-attributes", "Lst,Big,Ld")
    assert out == ('[\n{\n  "Big": 1E+20,\n  "Ld": 0.1285807291666667,\n'
                   '  "Lst": [\n    1,\n    2.5,\n    "x"\n  ]\n}\n]\n')
    assert '"CondorLoadAvg": 0.1285807291666667,\n' in _status(capsys, files, "-json")


# ---------------------------------------------------------------- -better-analyze (finding 6)

def test_better_analyze_of_a_held_job_says_it_is_held(capsys, files):
    out = _q(capsys, files, "-better-analyze", "-slotads", files[1])
    assert "\n004.000:  Job is held.\n\nHold reason: submitted on hold at user's request\n\n" in out


# ---------------------------------------------------------------- -af (findings 7, 8)

@pytest.mark.parametrize("quals, expected", [("n", "4\n gtaudA\n"), ("ng", "\n4\ngtaudA\n"),
                                             (",n", "4\n gtaudA\n"), ("n,", "4, gtaudA\n")])
def test_af_prefix_and_suffix_as_htcondor_sets_them(capsys, files, quals, expected):
    assert _q(capsys, files, f"-af:{quals}", "ClusterId", "Owner") == expected


def test_af_g_and_t_in_condor_status(capsys, files):
    assert _status(capsys, files, "-af:ng", "Name", "Cpus") == "\nslot1@vm\n1\n"
    assert _status(capsys, files, "-af:th", "Name", "Cpus") == "Name    \tCpus\nslot1@vm\t1   \n"


def test_af_headings_keep_the_tab_and_the_id_heading(capsys, files):
    assert _q(capsys, files, "-af:th", "ClusterId", "Owner") == "ClusterId\tOwner \n4        \tgtaudA\n"
    assert _q(capsys, files, "-af:jh", "Owner") == " ID      Owner \n   4.0   gtaudA\n"


# ---------------------------------------------------------------- condor_config_val (findings 9-11)

def test_config_val_config_prints_only_paths_on_stdout(idle_cell):
    proc = idle_cell.run("condor_config_val", "-config")
    assert proc.returncode == 0
    assert proc.stdout == f"\t{os.path.join(idle_cell.root, 'etc', 'condor_config')}\n"
    assert proc.stderr.startswith("Configuration source:\n")


def test_config_val_default_prints_the_default(idle_cell):
    proc = idle_cell.run("condor_config_val", "-default", "NEGOTIATOR_INTERVAL")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "60\n", "")
    proc = idle_cell.run("condor_config_val", "-default", "NO_SUCH_KNOB_AT_ALL")
    assert (proc.returncode, proc.stderr) == (1, "Not defined: NO_SUCH_KNOB_AT_ALL\n")


def test_config_val_dump_ends_with_the_contributing_files(idle_cell):
    proc = idle_cell.run("condor_config_val", "-dump", "NEGOTIATOR_INTERVAL")
    assert proc.returncode == 0
    assert proc.stdout.endswith("# Contributing configuration file(s):\n"
                                f"#\t{os.path.join(idle_cell.root, 'etc', 'condor_config')}\n")
    verbose = idle_cell.run("condor_config_val", "-dump", "-v", "NEGOTIATOR_INTERVAL").stdout
    assert "Contributing" not in verbose


# ---------------------------------------------------------------- condor_history (finding 14)

def test_history_bad_constraint_in_htcondors_words(idle_cell, tmp_path):
    history = tmp_path / "history"
    history.write_text('ClusterId = 7\nProcId = 0\nOwner = "alice"\nJobStatus = 4\n'
                       '*** ClusterId=7 ProcId=0 Owner="alice"\n')
    proc = idle_cell.run("condor_history", "-file", str(history), "-constraint", "JobStatus==")
    assert (proc.returncode, proc.stderr) == (1, "Error:  could not parse constraint ( (JobStatus==) )\n")


def test_history_jsonl_writes_lists_on_the_line(idle_cell, tmp_path):
    history = tmp_path / "history"
    history.write_text('ClusterId = 7\nProcId = 0\nLst = { 1,2 }\n*** ClusterId=7 ProcId=0\n')
    proc = idle_cell.run("condor_history", "-file", str(history), "-jsonl")
    assert proc.stdout == '{"ClusterId": 7,"Lst": [1,2],"ProcId": 0}\n'


# ---------------------------------------------------------------- JobPid (finding 12)

def test_a_running_jobs_ad_has_its_pid(cell, workdir):
    from condortools import submit
    from conftest import wait_for
    cluster = submit(cell, "executable = /bin/sleep\narguments = 60\nqueue\n", cwd=workdir)

    def shown():
        return cell.run("condor_q", str(cluster), "-af", "JobStatus", "JobPid").stdout.split()

    def program(pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                return fh.read().split(b"\0")[0]
        except OSError:
            return b""
    # (until the shepherd has started the job and recorded its pid, JobPid is the shepherd's)
    wait_for(lambda: (lambda row: row[:1] == ["2"] and row[1:2] != ["undefined"]
                      and program(row[1]).endswith(b"sleep"))(shown()), timeout=30)
    cell.run("condor_rm", str(cluster))
