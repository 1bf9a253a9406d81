"""HTCondor's startd cron jobs: their settings, their output made ads and merged into
slot ads as HTCondor's startd merges them (real programs), and a running daemon whose
slot ads, START policy and matches follow what a cron job writes."""

import os
import subprocess
import time

import psutil
import pytest

from conftest import destroy_cell, make_cell, wait_for
from condortools import submit, wait_gone
from gridtools.classad import ClassAd
from gridtools.daemon.startdcron import CronJobs, Params
from qtools import program_processes


def write_script(path, text):
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o755)
    return path


def params(name="TEST", **knobs):
    return Params("nodeA", name, {f"STARTD_CRON_{name}_{key}": value for key, value in knobs.items()})


def test_settings_read_as_the_startd_reads_them():
    assert params(EXECUTABLE="/x", PERIOD="5m").period == 300
    assert params(EXECUTABLE="/x", PERIOD="90").period == 90
    assert params(EXECUTABLE="/x", PERIOD="2h").period == 7200
    assert params(EXECUTABLE="/x", PERIOD="7S").period == 7
    assert params(EXECUTABLE="/x", MODE="oneshot").mode == "OneShot"
    assert params(EXECUTABLE="/x", MODE="WaitForExit", PERIOD="1").mode == "WaitForExit"
    assert params(EXECUTABLE="/x", MODE="OneShot").problem is None           # no period needed
    for knobs, why in (({"PERIOD": "5"}, "no EXECUTABLE"),
                       ({"EXECUTABLE": "/x"}, "no PERIOD"),
                       ({"EXECUTABLE": "/x", "PERIOD": "5x"}, "unknown unit"),
                       ({"EXECUTABLE": "/x", "PERIOD": "soon"}, "does not read"),
                       ({"EXECUTABLE": "/x", "MODE": "Sometimes"}, "unknown MODE"),
                       ({"EXECUTABLE": "/x", "PERIOD": "5", "PREFIX": "my-"}, "PREFIX"),
                       ({"EXECUTABLE": "/x", "PERIOD": "5", "ENV": "NOEQUALS"}, "Missing '=' after environment variable")):
        assert why in (params(**knobs).problem or ""), knobs
    job = params(EXECUTABLE="/x", PERIOD="5", ARGS='"one \'two three\'"', ENV="A=1;B=2", SLOTS="1, 3")
    assert job.args == ["one", "two three"] and job.env == {"A": "1", "B": "2"} and job.slots == {1, 3}
    assert params(EXECUTABLE="/x", PERIOD="5", ARGS="a b").args == ["a", "b"]
    assert params(EXECUTABLE="/x", PERIOD="5", SLOTS="1,two").slots is None  # a bad list: every slot


def slot(slot_id, type_id=1, name=None):
    return ClassAd({"Name": name or f"slot{slot_id}@nodeA", "SlotID": slot_id, "SlotTypeID": type_id})


def merged(jobs, ad):
    for extra in jobs.ads("nodeA"):
        if extra.merges_into(ad):
            for name, expr in extra.merged():
                ad[name] = expr
    return ad


def drain(jobs, now):
    """Read the runs' output until every run's output ended; True when an ad was published."""
    published = []

    def ended():
        published.append(jobs.pump(now=now))
        return not jobs.fds()
    wait_for(ended)
    return any(published)


def run_once(tmp_path, output, **knobs):
    """CronJobs running one OneShot job that writes ``output``, once it ended."""
    script = write_script(str(tmp_path / "job.sh"), "#!/bin/sh\ncat <<'EOF'\n" + output + "EOF\n")
    conf = {f"STARTD_CRON_TEST_{k}": v for k, v in dict(EXECUTABLE=script, MODE="OneShot", **knobs).items()}
    jobs = CronJobs()
    jobs.configure([("nodeA", "TEST", conf)], now=100.0)
    jobs.tick(100.0)
    drain(jobs, 100.0)
    return jobs


def test_ads_merge_into_the_slots_they_name(tmp_path):
    # the example of HTCondor's manual: Value 1 and 2 for slot1 and slot2, 10 for the others
    jobs = run_once(tmp_path, "Value=1\nSlotId=1\n-s1\nValue=2\nSlotId=2\n-s2\nValue=10\n- update:true\n")
    try:
        assert [ad.name for ad in jobs.ads("nodeA")] == ["TEST", "TEST.s1", "TEST.s2"]
        values = [merged(jobs, slot(i)).eval("Value") for i in (1, 2, 3)]
        assert values == [1, 2, 10]
        ad = merged(jobs, slot(3))
        assert ad.eval("SlotID") == 3 and ad.eval("LastUpdate") == 100      # SlotId is never merged
    finally:
        jobs.stop_all()


def test_merge_rules_in_their_order(tmp_path):
    jobs = run_once(tmp_path, "\n".join([
        'A = "constraint"', "SlotMergeConstraint = TARGET.SlotTypeID == 2", "SlotId = 1", "-c",
        'B = "name"', 'SlotName = "slot1"', "-n",
        'C = "type"', "SlotTypeId = 3", "-t",
        'D = "all"', "E = MY.D", "-",
        'D = "all"', "not an attribute", "F = (", "G = 7", ""]), SLOTS="1,2,3,4,10")
    try:
        ads = {i: merged(jobs, slot(i, type_id=(2 if i == 2 else 3 if i == 4 else 1))) for i in (1, 2, 4, 10)}
        assert ads[2].eval("A") == "constraint" and ads[1].lookup("A") is None      # constraint first
        assert ads[1].eval("B") == "name" and ads[10].eval("B") == "name"           # Name prefix slot1
        assert ads[4].eval("C") == "type" and ads[1].lookup("C") is None
        assert all(ad.eval("D") == "all" for ad in ads.values())
        assert ads[1].eval("G") == 7 and ads[1].lookup("F") is None                 # bad lines left out
        assert ads[1].lookup("E") is None      # (the job's own ad was replaced by its last one)
        assert merged(jobs, slot(5)).lookup("D") is None                             # not in SLOTS
    finally:
        jobs.stop_all()


def test_a_prefix_names_every_attribute(tmp_path):
    jobs = run_once(tmp_path, "Value = 3\nSlotId = 2\n", PREFIX="site_")
    try:
        ad = merged(jobs, slot(1))
        # (the prefix is put before SlotId too: it selects no slot, as in HTCondor)
        assert ad.eval("site_Value") == 3 and ad.eval("site_SlotId") == 2 and ad.eval("site_LastUpdate") == 100
        assert ad.lookup("Value") is None
    finally:
        jobs.stop_all()


def test_job_runs_with_its_name_arguments_environment_and_folder(tmp_path):
    folder = tmp_path / "here"
    folder.mkdir()
    script = write_script(str(tmp_path / "who.py"),
                          "import os, sys\n"
                          "print('Zero = \"%s\"' % open('/proc/self/cmdline').read().split(chr(0))[0])\n"
                          "print('Argv = \"%s\"' % '|'.join(sys.argv[1:]))\n"
                          "print('Cwd = \"%s\"' % os.getcwd())\n"
                          "print('Env = \"%s %s\"' % (os.environ.get('COLOR'), os.environ.get('STARTD_CRON_NAME')))\n")
    conf = {"STARTD_CRON_WHO_EXECUTABLE": "/usr/bin/python3", "STARTD_CRON_WHO_MODE": "OneShot",
            "STARTD_CRON_WHO_ARGS": f'"{script} x \'y z\'"', "STARTD_CRON_WHO_ENV": '"COLOR=blue"',
            "STARTD_CRON_WHO_CWD": str(folder)}
    jobs = CronJobs()
    try:
        jobs.configure([("nodeA", "WHO", conf)], now=0.0)
        jobs.tick(0.0)
        drain(jobs, 0.0)
        ad = merged(jobs, slot(1))
        assert ad.eval("Zero") == "WHO" and ad.eval("Argv") == "x|y z"
        assert ad.eval("Cwd") == str(folder) and ad.eval("Env") == "blue STARTD"
    finally:
        jobs.stop_all()


def test_a_program_that_cannot_run_is_logged_and_tried_again(tmp_path):
    logged = []
    jobs = CronJobs(logged.append)
    try:
        for mode in ("Periodic", "WaitForExit"):
            jobs.configure([("nodeA", "GONE", {"STARTD_CRON_GONE_EXECUTABLE": str(tmp_path / "missing"),
                                               "STARTD_CRON_GONE_MODE": mode,
                                               "STARTD_CRON_GONE_PERIOD": "30"})], now=0.0)
            assert jobs.tick(0.0) == 30.0 and jobs.fds() == [] and jobs.ads("nodeA") == []
            assert "E|startd cron job GONE of host nodeA not started" in logged[-1]
            jobs.configure([], now=0.0)
    finally:
        jobs.stop_all()


@pytest.mark.parametrize("kill", [False, True])
def test_periodic_runs_and_a_run_still_going(tmp_path, kill):
    script = write_script(str(tmp_path / "slow.sh"), "#!/bin/sh\necho \"Started = $(date +%s%N)\"\necho -\n"
                                                     "sleep 60\n")
    conf = {"STARTD_CRON_SLOW_EXECUTABLE": script, "STARTD_CRON_SLOW_PERIOD": "10",
            "STARTD_CRON_SLOW_KILL": "true" if kill else "false"}
    jobs = CronJobs()
    try:
        jobs.configure([("nodeA", "SLOW", conf)], now=0.0)
        assert jobs.tick(0.0) == 10.0
        wait_for(lambda: jobs.pump(now=0.0))
        first = merged(jobs, slot(1)).eval("Started")
        assert len(program_processes(script)) == 1
        assert jobs.tick(10.0) == 20.0       # due again while the run goes on
        if kill:
            wait_for(lambda: jobs.pump(now=10.0))
            assert merged(jobs, slot(1)).eval("Started") != first
            assert len(program_processes(script)) == 1          # the last run was killed
        else:
            time.sleep(0.3)
            assert not jobs.pump(now=10.0) and merged(jobs, slot(1)).eval("Started") == first
    finally:
        jobs.stop_all()
    wait_for(lambda: not program_processes(script))


def test_wait_for_exit_runs_again_a_period_after_the_end(tmp_path):
    script = write_script(str(tmp_path / "count.sh"), "#!/bin/sh\necho \"Tick = $(date +%s%N)\"\n")
    conf = {"STARTD_CRON_LOOP_EXECUTABLE": script, "STARTD_CRON_LOOP_MODE": "WaitForExit",
            "STARTD_CRON_LOOP_PERIOD": "3"}
    jobs = CronJobs()
    try:
        jobs.configure([("nodeA", "LOOP", conf)], now=0.0)
        jobs.tick(0.0)
        assert drain(jobs, 1.0)
        assert jobs.tick(2.0) == 4.0              # three seconds after the end (at 1.0)
        first = merged(jobs, slot(1)).eval("Tick")
        jobs.tick(4.0)
        assert drain(jobs, 4.5)
        assert merged(jobs, slot(1)).eval("Tick") != first
        # gone from the configuration: its ads go
        jobs.configure([], now=5.0)
        assert jobs.ads("nodeA") == []
    finally:
        jobs.stop_all()


CRON = """
STARTD_CRON_JOBLIST = $(STARTD_CRON_JOBLIST) gate slots beat
STARTD_CRON_BEAT_EXECUTABLE = {beat}
STARTD_CRON_BEAT_PERIOD = 1
STARTD_CRON_GATE_EXECUTABLE = {gate}
STARTD_CRON_GATE_PERIOD = 1
STARTD_CRON_GATE_PREFIX = site_
STARTD_CRON_SLOTS_EXECUTABLE = {slots}
STARTD_CRON_SLOTS_MODE = OneShot
START = (site_Open =?= True)
"""


def test_a_daemon_merges_cron_output_and_start_follows_it(workdir):
    cell = make_cell(slots=2, start=False)
    try:
        flag = os.path.join(workdir, "open")
        gate = write_script(os.path.join(workdir, "gate.sh"),
                            f"#!/bin/sh\necho run >> {workdir}/gate.log\n"
                            f"if [ -e {flag} ]; then echo 'Open = True'; else echo 'Open = False'; fi\n")
        beat = write_script(os.path.join(workdir, "beat.sh"), f"#!/bin/sh\necho run >> {workdir}/beat.log\n")
        slots = write_script(os.path.join(workdir, "slots.sh"),
                             "#!/bin/sh\necho Value=1\necho SlotId=1\necho -s1\necho Value=2\necho SlotId=2\n"
                             "echo -s2\necho Value=10\n")
        with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
            fh.write(CRON.format(gate=gate, slots=slots, beat=beat))
        cell.start_daemon()
        rows = wait_for(lambda: [line.split() for line in cell.run(
            "condor_status", "-af", "Name", "Value", "site_Open").stdout.splitlines()
            if "undefined" not in line] or None)
        assert rows == [[f"slot1@{cell.host}", "1", "false"], [f"slot2@{cell.host}", "2", "false"]]
        # START reads what the gate writes: the job waits until the gate opens
        cluster = submit(cell, "executable = /bin/true\nqueue\n", cwd=workdir)
        jid = cell.qsub("-terse", "-b", "y", "true", cwd=workdir, check=True).stdout.strip()
        wait_for(lambda: "the START expression of host" in cell.run("qstat", "-j", jid).stdout)
        assert "2 reject your job because of their own requirements" in cell.run(
            "condor_q", "-better-analyze", f"{cluster}.0").stdout
        assert cell.run("condor_q", f"{cluster}.0", "-af", "JobStatus").stdout.strip() == "1"
        open(flag, "w").close()
        wait_for(lambda: "true" in cell.run("condor_status", "-af", "site_Open").stdout)
        wait_gone(cell, f"{cluster}.0")
        assert "4" in cell.run("condor_history", str(cluster), "-af", "JobStatus").stdout
        cell.wait_finished(int(jid))
        # gone from the configuration (condor_reconfig): its attributes go, its runs stop
        with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
            fh.write("STARTD_CRON_JOBLIST = beat\nSTART = True\n")
        cell.run("condor_reconfig", check=True)
        wait_for(lambda: cell.run("condor_status", "-af", "site_Open", "Value").stdout.split()
                 == ["undefined"] * 4)

        def runs(name):
            with open(os.path.join(workdir, name)) as fh:
                return len(fh.readlines())
        gated, beats = runs("gate.log"), runs("beat.log")
        wait_for(lambda: runs("beat.log") >= beats + 2)     # the job left still runs every second
        assert runs("gate.log") == gated
    finally:
        destroy_cell(cell)


def test_an_execution_daemon_runs_the_cron_jobs_of_its_host(workdir):
    cell = make_cell(slots=1, hosts=["testhost", "node2"], start=False)
    execd = None
    try:
        where = write_script(os.path.join(workdir, "where.sh"), "#!/bin/sh\necho \"RunBy = \\\"$PPID\\\"\"\n"
                                                               "echo 'Seen = True'\necho '- seen'\nsleep 60\n")
        with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
            fh.write(f"STARTD_CRON_JOBLIST = where yes no\nSTARTD_CRON_WHERE_EXECUTABLE = {where}\n"
                     "STARTD_CRON_WHERE_MODE = OneShot\n")
            # CONDITION, in the machine ad of the dispatcher's host and of the execution daemon's
            for name, condition in (("YES", "TotalCpus >= 1 && OpSys == \"LINUX\""), ("NO", "TotalCpus > 100000")):
                script = write_script(os.path.join(workdir, f"{name}.sh"), f"#!/bin/sh\necho 'Cond{name} = True'\n")
                fh.write(f"STARTD_CRON_{name}_EXECUTABLE = {script}\nSTARTD_CRON_{name}_MODE = OneShot\n"
                         f"STARTD_CRON_{name}_CONDITION = {condition}\n")
        cell.start_daemon()
        execd = subprocess.Popen(["gridtools", "execd", "--host", "node2"], env=cell.env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def run_by():
            rows = dict(line.split(None, 1) for line in cell.run(
                "condor_status", "-af", "Machine", "RunBy").stdout.splitlines())
            return rows.get("node2", "").strip() == str(execd.pid) and rows
        rows = wait_for(run_by, timeout=20)
        assert rows["testhost"].strip() != str(execd.pid)         # the dispatcher's own host
        def conditioned():
            rows = sorted(line.split() for line in cell.run(
                "condor_status", "-af", "Machine", "CondYES", "CondNO").stdout.splitlines() if "true" in line)
            return len(rows) == 2 and rows
        assert wait_for(conditioned, timeout=20) == [["node2", "true", "undefined"], ["testhost", "true", "undefined"]]
        # the execution daemon stops its runs when it stops; its ads stay with its report
        mine = [proc for proc in psutil.Process(execd.pid).children(recursive=True) if proc in program_processes(where)]
        assert mine
        execd.terminate()
        execd.wait(timeout=10)
        wait_for(lambda: not any(proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE for proc in mine))
    finally:
        if execd is not None and execd.poll() is None:
            execd.kill()
        destroy_cell(cell)


def test_load_condition_and_reconfig_settings():
    job = params(EXECUTABLE="/x", PERIOD="5", JOB_LOAD="0.5", CONDITION="TotalCpus > 1", RECONFIG="true")
    assert (job.job_load, job.max_load, job.condition, job.reconfig) == (0.5, 0.1, "TotalCpus > 1", True)
    assert (params(EXECUTABLE="/x", PERIOD="5").job_load, params(EXECUTABLE="/x", PERIOD="5").reconfig) == (0.01, False)
    for knobs, why in (({"JOB_LOAD": "heavy"}, "JOB_LOAD heavy is not a number"),
                       ({"JOB_LOAD": "-1"}, "not a number of 0 or more"),
                       ({"CONDITION": "TotalCpus >"}, "CONDITION TotalCpus > does not read")):
        assert why in (params(EXECUTABLE="/x", PERIOD="5", **knobs).problem or ""), knobs
    host = Params("nodeA", "T", {"STARTD_CRON_T_EXECUTABLE": "/x", "STARTD_CRON_T_PERIOD": "5",
                                 "STARTD_CRON_MAX_JOB_LOAD": "2.5", "STARTD_CRON_LOG_NON_ZERO_EXIT": "True"})
    assert (host.max_load, host.log_exit) == (2.5, True)


def sleepers(tmp_path, count, **knobs):
    """CronJobs with ``count`` OneShot jobs that each write their name and wait for
    ``tmp_path/go`` before they end."""
    script = write_script(str(tmp_path / "sleeper.sh"),
                          f"#!/bin/sh\necho \"Ran_$1 = true\"\nwhile [ ! -e {tmp_path}/go ]; do sleep 0.05; done\n")
    wanted = []
    for n in range(count):
        name = f"J{n}"
        conf = {f"STARTD_CRON_{name}_EXECUTABLE": script, f"STARTD_CRON_{name}_MODE": "OneShot",
                f"STARTD_CRON_{name}_ARGS": name}
        conf.update({k.format(name=name): v for k, v in knobs.items()})
        wanted.append(("nodeA", name, conf))
    jobs = CronJobs()
    jobs.configure(wanted, now=100.0)
    return jobs


def running(jobs):
    return sorted(name for (_host, name), job in jobs.jobs.items() if job.busy())


def test_job_load_keeps_runs_waiting_until_others_end(tmp_path):
    # the default loads: 0.01 each, at most 0.1 in all: ten at once
    jobs = sleepers(tmp_path, 12)
    try:
        assert jobs.tick(100.0) is None                     # (the two that wait want no timer)
        assert len(running(jobs)) == 10
        waiting = sorted(name for (_h, name), job in jobs.jobs.items() if job.waiting)
        assert len(waiting) == 2 and not set(waiting) & set(running(jobs))
        (tmp_path / "go").touch()
        wait_for(lambda: (jobs.pump(now=101.0), jobs.tick(101.0), not jobs.fds())[-1])
        assert all(job.ads for job in jobs.jobs.values())   # all twelve ran
    finally:
        jobs.stop_all()
    # a heavier job: two at a time under STARTD_CRON_MAX_JOB_LOAD = 1
    (tmp_path / "go").unlink()
    jobs = sleepers(tmp_path, 3, **{"STARTD_CRON_{name}_JOB_LOAD": "0.5", "STARTD_CRON_MAX_JOB_LOAD": "1"})
    try:
        jobs.tick(100.0)
        assert len(running(jobs)) == 2
    finally:
        jobs.stop_all()


def test_condition_decides_whether_a_due_run_starts(tmp_path):
    script = write_script(str(tmp_path / "job.sh"), "#!/bin/sh\necho 'Hello = 1'\n")
    conf = {"STARTD_CRON_C_EXECUTABLE": script, "STARTD_CRON_C_PERIOD": "60",
            "STARTD_CRON_C_CONDITION": "TotalCpus >= 4 && Color == \"blue\""}
    jobs = CronJobs()
    jobs.configure([("nodeA", "C", conf)], now=100.0)
    machine = ClassAd({"TotalCpus": 8, "Color": "red"})
    try:
        assert jobs.tick(100.0, lambda host: None) is None      # no machine ad yet: waits
        assert running(jobs) == []
        assert jobs.tick(100.0, lambda host: machine) == 160.0  # false: skipped, a period later
        assert running(jobs) == [] and not jobs.jobs[("nodeA", "C")].ads
        machine["Color"] = "blue"
        assert jobs.tick(159.0, lambda host: machine) == 160.0   # (not due yet)
        jobs.tick(160.0, lambda host: machine)
        drain(jobs, 160.0)
        assert [ad.name for ad in jobs.ads("nodeA")] == ["C"]
    finally:
        jobs.stop_all()


def test_non_zero_exits_logged_and_sighup_on_reconfig(tmp_path):
    logged = []
    fail = write_script(str(tmp_path / "fail.sh"), "#!/bin/sh\necho 'X = 1'\nexit 3\n")
    hup = write_script(str(tmp_path / "hup.sh"),
                       f"#!/bin/sh\ntrap 'echo HUP > {tmp_path}/hup; exit 0' HUP\necho 'Y = 1'\necho -\n"
                       "while true; do sleep 0.05; done\n")
    conf = {"STARTD_CRON_F_EXECUTABLE": fail, "STARTD_CRON_F_MODE": "OneShot",
            "STARTD_CRON_H_EXECUTABLE": hup, "STARTD_CRON_H_MODE": "WaitForExit",
            "STARTD_CRON_H_PERIOD": "60", "STARTD_CRON_H_RECONFIG": "true"}
    quiet = dict(conf)
    conf["STARTD_CRON_LOG_NON_ZERO_EXIT"] = "true"
    for settings, expected in ((quiet, False), (conf, True)):
        logged.clear()
        jobs = CronJobs(logged.append)
        jobs.configure([("nodeA", "F", settings), ("nodeA", "H", settings)], now=100.0)
        try:
            jobs.tick(100.0)

            def failed_seen():
                jobs.pump(now=100.0)
                jobs.tick(100.0)
                f, h = jobs.jobs[("nodeA", "F")], jobs.jobs[("nodeA", "H")]
                # (H wrote its ad after it set its trap: a SIGHUP from then on is caught)
                return not f.exiting and f.piped is None and h.ads
            wait_for(failed_seen)
            assert any("startd cron job F of host nodeA" in line and "exit_status=3" in line
                       for line in logged) == expected, logged
            assert not os.path.exists(tmp_path / "hup")
            jobs.reconfigured(101.0)
            wait_for(lambda: os.path.exists(tmp_path / "hup"))
            os.unlink(tmp_path / "hup")
        finally:
            jobs.stop_all()


def test_schedd_cron_jobs_publish_into_the_schedd_s_ad(cell, workdir):
    """SCHEDD_CRON_JOBLIST: the daemon runs the cell's schedd cron jobs as it runs the
    startd's (SCHEDD_CRON_NAME in their environment, PREFIX before each attribute), and
    condor_status -schedd shows what they wrote; a job gone from the configuration
    takes its attributes with it."""
    site = write_script(os.path.join(workdir, "site.sh"),
                        "#!/bin/sh\necho \"Site = \\\"north-$SCHEDD_CRON_NAME\\\"\"\necho 'Queues = 3'\n")
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(f"SCHEDD_CRON_JOBLIST = site\nSCHEDD_CRON_site_EXECUTABLE = {site}\n"
                 "SCHEDD_CRON_site_PERIOD = 1\nSCHEDD_CRON_site_PREFIX = cron_\n")
    cell.run("condor_reconfig", check=True)
    wait_for(lambda: cell.run("condor_status", "-schedd", "-af", "cron_Site", "cron_Queues").stdout
             == "north-SCHEDD 3\n", timeout=20)
    assert cell.run("condor_status", "-af", "cron_Site").stdout.split("\n")[0] == "undefined"  # (not the slots')
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("SCHEDD_CRON_JOBLIST =\n")
    cell.run("condor_reconfig", check=True)
    wait_for(lambda: cell.run("condor_status", "-schedd", "-af", "cron_Site").stdout == "undefined\n", timeout=20)
