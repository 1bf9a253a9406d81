"""condor_wait's command line, its usage text and its -wait 0, as HTCondor's condor_wait."""

import os
import subprocess
import sys

import pytest

from gridtools.formats.condor.userlog import Event, EventType, render_events

LAUNCHER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin", "condor_wait")
SUBMITTED = [Event(EventType.SUBMIT, 3, p, 0, 1700000000.0, {}) for p in (0, 1)]
ENDED = [Event(EventType.JOB_TERMINATED, 3, 0, 0, 1700000001.0, {"ReturnValue": 0}),
         Event(EventType.JOB_ABORTED, 3, 1, 0, 1700000002.0, {"Reason": "x"})]


def condor_wait(*args):
    return subprocess.run([sys.executable, LAUNCHER, *args], capture_output=True, text=True, timeout=30)


def test_usage_goes_to_stderr_line_by_line():
    shown = condor_wait("-help")
    assert (shown.returncode, shown.stdout) == (0, "")
    lines = shown.stderr.split("\n")
    assert lines[:3] == ["", "Use: condor_wait [options] <log-file> [job-number]", "Where options are:"]
    assert "    -wait <seconds>   Wait no more than this time" in lines
    assert lines[-2:] == ["    condor_wait -num 2 logfile", ""]
    for argv, lead in (((), ""), (("-bogus", "x.log"), ""), (("-h",), ""),
                       (("x.log", "1", "2"), "Extra argument: 2\n\n"),
                       (("-wait",), "-wait requires an argument\n"),
                       (("-num", "0", "x.log"), "-num must be greater than zero\n")):
        proc = condor_wait(*argv)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", lead + shown.stderr), argv


def test_a_job_number_as_htcondor_reads_it(tmp_path):
    log = tmp_path / "w.log"
    log.write_text(render_events(SUBMITTED + ENDED[:1]))
    assert condor_wait("-wait", "1", str(log), "3.0").stdout == "All jobs done.\n"
    assert condor_wait("-wait", "1", str(log), "-1").stdout == "Time expired.\n"   # -1: any cluster
    bad = condor_wait(str(log), "x")
    assert (bad.returncode, bad.stderr) == (1, "Couldn't understand job number: x\n")


@pytest.mark.parametrize("events, args, expected", [
    (SUBMITTED + ENDED, (), (0, "All jobs done.\n", "")),
    (SUBMITTED, (), (0, "", "")),                       # not done: the end of the log, exit 0
    (SUBMITTED + ENDED[:1], ("-num", "2"), (0, "", "")),
    (SUBMITTED + ENDED[:1], ("-num", "1"), (0, "Specifed number of jobs (1) done.\n", "")),
    ([], ("-num", "1"), (0, "", "")),        # (HTCondor's first reading of the log says nothing)
])
def test_wait_0_reads_to_the_end_of_the_log_and_stops(tmp_path, events, args, expected):
    log = tmp_path / "w.log"
    log.write_text(render_events(events))
    proc = condor_wait("-wait", "0", *args, str(log))
    assert (proc.returncode, proc.stdout, proc.stderr) == expected


@pytest.mark.parametrize("events, job", [([], ()), (SUBMITTED + ENDED, ("99",))])
def test_a_log_that_names_none_of_the_jobs_at_its_first_reading_has_them_all_done(tmp_path, events, job):
    # (wait.cpp: the end of the initial scan with no job pending is "All jobs done.")
    log = tmp_path / "w.log"
    log.write_text(render_events(events))
    proc = condor_wait(str(log), *job)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "All jobs done.\n", "")


@pytest.mark.parametrize("events, job, said", [
    ([], (), "This log does not mention any jobs!\n"),
    (SUBMITTED + ENDED, ("99",), "This log does not mention that job!\n"),
])
def test_with_num_a_log_without_the_jobs_is_refused_at_its_next_end(tmp_path, events, job, said):
    log = tmp_path / "w.log"
    log.write_text(render_events(events))
    proc = condor_wait("-num", "1", str(log), *job)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", said)


def test_a_log_whose_jobs_are_not_done_is_waited_on_until_they_are(tmp_path):
    log = tmp_path / "w.log"
    log.write_text(render_events(SUBMITTED))
    waiting = subprocess.Popen([sys.executable, LAUNCHER, str(log)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            waiting.wait(timeout=1.5)           # submitted, not ended: not done
        with open(log, "a") as fh:
            fh.write(render_events(ENDED))
        out, err = waiting.communicate(timeout=20)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
    assert (waiting.returncode, out, err) == (0, "All jobs done.\n", "")


def test_allevents_reads_the_whole_log_and_is_not_for_num(tmp_path):
    log = tmp_path / "w.log"
    log.write_text(render_events(SUBMITTED + ENDED))
    proc = condor_wait("-all", "-echo", str(log))
    assert proc.returncode == 0 and "All jobs done." not in proc.stdout
    assert proc.stdout.count("...\n") == len(SUBMITTED + ENDED)
    refused = condor_wait("-allevents", "-num", "2", str(log))
    assert refused.returncode == 1 and refused.stderr.startswith("-num cannot be used with -allevents\n")
    refused = condor_wait("-num", "2", "-allevents", str(log))
    assert refused.returncode == 1 and refused.stderr.startswith("-allevents cannot be used with -num\n")
