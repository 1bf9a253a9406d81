"""condor_submit as HTCondor 24's: GPU property requirements, unused lines, retired
universes, blank arguments, $(DOLLAR), argument and environment errors, and a hold
given before a later queue statement.

The expected attribute values are those HTCondor 24's submit code (the htcondor
Python bindings' ``Submit(...).jobs()``) made for the same descriptions."""

import os

import pytest

from condortools import statuses, submit, wait_status, write
from gridtools.classad import parse
from gridtools.errors import InputError
from gridtools.formats.condor.jobad import SubmitContext
from gridtools.formats.condor.submit import parse_submit

EXE = "executable = /bin/echo\n"


def ad_of(text):
    """Proc 0's ad of a description, built as condor_submit builds it."""
    ctx = SubmitContext(cwd="/tmp", owner="alice", now=1700000000)
    return parse_submit(text).job_ads(7, ctx)[0]


def value(ad, name):
    return ad.lookup(name).unparse()


def same(text):
    """An expression's text as ``value`` gives it (both parsed and printed again)."""
    return parse(text).unparse()


# ---------------------------------------------------------------- GPUs

def test_gpu_minimums_make_require_gpus_and_a_count_matches_term():
    ad = ad_of(EXE + "request_gpus = 1\ngpus_minimum_memory = 4G\ngpus_minimum_capability = 7.5\nqueue\n")
    assert ad.eval("GPUsMinCapability") == 7.5
    assert ad.eval("GPUsMinMemory") == 4096
    assert value(ad, "RequireGPUs") == same("Capability >= GPUsMinCapability && GlobalMemoryMb >= GPUsMinMemory")
    requirements = value(ad, "Requirements")
    assert "(countMatches(MY.RequireGPUs,TARGET.AvailableGPUs) >= RequestGPUs)" in requirements
    assert "TARGET.GPUs >= RequestGPUs" not in requirements


def test_require_gpus_is_kept_wrapped_and_a_property_it_names_adds_no_bound():
    ad = ad_of(EXE + "request_gpus = 1\nrequire_gpus = Capability >= 7.0 || DriverVersion > 3\n"
               "gpus_minimum_memory = 4G\ngpus_minimum_capability = 7.5\ngpus_minimum_runtime = 12.1\nqueue\n")
    assert value(ad, "RequireGPUs") == same("(Capability >= 7.0 || DriverVersion > 3) && GlobalMemoryMb >= "
                                             "GPUsMinMemory && MaxSupportedVersion >= GPUsMinRuntime")
    assert ad.eval("GPUsMinRuntime") == 12010
    assert ad.eval("GPUsMinCapability") == 7.5


def test_require_gpus_alone_and_the_maximum_capability():
    ad = ad_of(EXE + "request_gpus = 2\nrequire_gpus = Capability >= 8.0\ngpus_minimum_capability = 7.5\n"
               "gpus_maximum_capability = 9\nqueue\n")
    assert value(ad, "RequireGPUs") == same("Capability >= 8.0")
    assert ad.eval("GPUsMaxCapability") == 9
    assert "countMatches(MY.RequireGPUs,TARGET.AvailableGPUs) >= RequestGPUs" in value(ad, "Requirements")


def test_gpu_properties_without_a_gpu_request_set_nothing():
    ad = ad_of(EXE + "require_gpus = Capability >= 8.0\ngpus_minimum_capability = 7.5\nqueue\n")
    assert "RequireGPUs" not in ad and "GPUsMinCapability" not in ad


# ---------------------------------------------------------------- universes, arguments, macros

@pytest.mark.parametrize("name, shown", [("standard", "Standard"), ("PVM", "PVM"), ("pipe", "Pipe")])
def test_a_retired_universe_by_name_is_not_supported(name, shown):
    with pytest.raises(InputError) as info:
        ad_of(EXE + f"universe = {name}\nqueue\n")
    assert str(info.value) == f"ERROR: '{shown}' is not a supported universe."


def test_arguments_of_blanks_only_are_old_syntax():
    ad = ad_of(EXE + "arguments = $(Node) $(Item)\nqueue\n")
    assert ad.eval("Args") == "" and "Arguments" not in ad


def test_dollar_macro_is_a_dollar_sign():
    ad = ad_of(EXE + "arguments = $(DOLLAR) $$ x\nqueue\n")
    assert ad.eval("Args") == "$ $$ x"


@pytest.mark.parametrize("line, message", [
    ("arguments = \"one 'two\"",
     "ERROR: Unbalanced quote starting here: 'two\nThe full arguments you specified were: \"one 'two\""),
    ("environment = \"A=1 B\"",
     "ERROR: Missing '=' after environment variable 'B'.\nThe environment you specified was: '\"A=1 B\"'"),
    ("arguments2 = a b",
     "ERROR: Expecting double-quoted input string (V2 format).\nThe full arguments you specified were: a b"),
])
def test_argument_and_environment_errors_in_htcondor_words(line, message):
    with pytest.raises(InputError) as info:
        ad_of(EXE + line + "\nqueue\n")
    assert str(info.value) == message


# ---------------------------------------------------------------- unused lines

UNUSED = EXE + "frobnicate = 1\nx = 3\narguments = $(x)\nrequest_foo = 2\nmy_own = a\n+Custom = 1\nqueue\n"
WARNINGS = ("WARNING: the line 'frobnicate = 1' was unused by condor_submit. Is it a typo?\n"
            "WARNING: the line 'my_own = a' was unused by condor_submit. Is it a typo?\n")


def test_unused_lines_are_warned_of_and_minus_unused_turns_it_off(cell, workdir):
    write(os.path.join(workdir, "u.sub"), UNUSED)
    proc = cell.run("condor_submit", "-dry-run", "-", "u.sub", cwd=workdir)
    assert proc.returncode == 0 and proc.stderr == WARNINGS
    proc = cell.run("condor_submit", "-unused", "-dry-run", "-", "u.sub", cwd=workdir)
    assert proc.returncode == 0 and proc.stderr == ""
    proc = cell.run("condor_submit", "u.sub", cwd=workdir)
    assert proc.returncode == 0 and proc.stderr == WARNINGS
    assert "1 job(s) submitted to cluster" in proc.stdout


def test_warn_on_unused_submit_file_macros_false_turns_it_off(cell, workdir):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("\nWARN_ON_UNUSED_SUBMIT_FILE_MACROS = false\n")
    write(os.path.join(workdir, "u.sub"), UNUSED)
    proc = cell.run("condor_submit", "-dry-run", "-", "u.sub", cwd=workdir)
    assert proc.returncode == 0 and proc.stderr == ""
    proc = cell.run("condor_submit", "-unused", "-dry-run", "-", "u.sub", cwd=workdir)
    assert proc.returncode == 0 and proc.stderr == WARNINGS


def test_a_plain_description_warns_of_nothing(cell, workdir):
    write(os.path.join(workdir, "p.sub"), EXE + "output = o.$(Cluster).$(Process)\nlog = l\n"
          "request_memory = 1G\ngetenv = true\narguments = $(x)\nqueue x in (a, b)\n")
    proc = cell.run("condor_submit", "-dry-run", "-", "p.sub", cwd=workdir)
    assert proc.returncode == 0 and proc.stderr == ""


# ---------------------------------------------------------------- holds

def test_hold_before_a_second_queue_statement_holds_its_jobs(cell, workdir):
    cluster = submit(cell, "executable = /bin/sleep\narguments = 30\nqueue\nhold = true\nqueue\n", cwd=workdir)
    assert wait_status(cell, f"{cluster}.0", 2)
    assert statuses(cell, str(cluster))[f"{cluster}.1"] == 5
    proc = cell.run("condor_q", str(cluster), "-af", "ProcId", "JobStatus", "HoldReason")
    assert proc.stdout.splitlines()[1] == "1 5 submitted on hold at user's request"
    cell.run("condor_rm", str(cluster))
