"""Grid Engine's load sensors: the protocol with a real sensor program, and a running
daemon whose sensors' values show in qhost -F and qstat -F and decide where jobs run
(the dispatcher's own hosts, and a host an execution daemon serves)."""

import os
import re
import subprocess
import time

import psutil

from conftest import destroy_cell, make_cell, wait_for
from gridtools.exec.loadsensor import LoadSensors, parse_line, programs
from qtools import add_complex, program_processes, set_global

#: a sensor as Grid Engine's documentation describes one: it reports when asked (an empty
#: line), counts its reports, and leaves on "quit"; it says who runs it through its values
SENSOR = """#!/bin/sh
n=0
while read line; do
    [ "$line" = quit ] && exit 0
    n=$((n+1))
    echo begin
    echo "$HOST:scratch:${n}G"
    echo "$HOST:runs:$n"
    echo "global:licenses:7"
    echo "not a value"
    echo end
done
"""


def write_script(path, text):
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o755)
    return path


def test_programs_and_report_lines():
    assert programs("none") == [] and programs(None) == [] and programs("NONE") == []
    assert programs("/a/b, /c/d arg") == ["/a/b", "/c/d arg"]
    assert parse_line("node1:scratch:12G") == ("node1", "scratch", "12G")
    assert parse_line("global:where:a:b c") == ("global", "where", "a:b c")    # the value is the rest
    for bad in ("node1:scratch:", "node1::3", ":scratch:3", "node1:scratch", "nothing"):
        assert parse_line(bad) is None, bad


def test_a_sensor_reports_when_asked_restarts_and_quits(tmp_path):
    script = write_script(str(tmp_path / "sensor.sh"), SENSOR)
    logged = []
    sensors = LoadSensors(logged.append)
    try:
        sensors.configure([("nodeA", script)], now=0.0)
        wait_for(lambda: sensors.pump() or sensors.values())
        assert sensors.values() == {"nodeA": {"scratch": "1G", "runs": "1"}, "global": {"licenses": "7"}}
        assert any("format error in line 'not a value'" in line for line in logged)
        # nothing more comes before the next report is due (load_report_time)
        assert sensors.tick(0.0, lambda host: 5.0) == 5.0
        time.sleep(0.2)
        assert not sensors.pump() and sensors.values()["nodeA"]["runs"] == "1"
        sensors.tick(5.0, lambda host: 5.0)
        wait_for(lambda: sensors.pump() or sensors.values()["nodeA"]["runs"] == "2")
        assert sensors.values()["nodeA"] == {"scratch": "2G", "runs": "2"}
        # a changed program starts again at the next report (its count starts anew)
        first = program_processes(script)
        write_script(script, SENSOR.replace("licenses:7", "licenses:8"))
        sensors.tick(10.0, lambda host: 5.0)
        wait_for(lambda: sensors.pump() or sensors.values()["global"] == {"licenses": "8"})
        assert sensors.values()["nodeA"]["runs"] == "1"
        wait_for(lambda: not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in first))
        # one that ended starts again too
        for proc in program_processes(script):
            proc.kill()
        wait_for(lambda: not program_processes(script))
        sensors.tick(15.0, lambda host: 5.0)
        wait_for(lambda: program_processes(script))
        # no longer named: asked to quit, and gone
        sensors.configure([], now=20.0)
        wait_for(lambda: not program_processes(script))
        assert sensors.values() == {}
    finally:
        sensors.stop_all()


def test_a_sensor_that_writes_junk_is_logged_once_a_report_and_long_values_are_left_out(tmp_path):
    junk = ("#!/bin/sh\nwhile read line; do\n  [ \"$line\" = quit ] && exit 0\n  echo begin\n"
            "  i=0; while [ $i -lt 500 ]; do echo junk; i=$((i+1)); done\n"
            "  echo \"nodeA:big:$(head -c 2000 /dev/zero | tr '\\0' 9)\"\n  echo nodeA:small:5\n  echo end\n"
            "done\n")
    script = write_script(str(tmp_path / "junk.sh"), junk)
    logged = []
    sensors = LoadSensors(logged.append)
    try:
        sensors.configure([("nodeA", script)], now=0.0)
        wait_for(lambda: sensors.pump() or sensors.values())
        assert sensors.values() == {"nodeA": {"small": "5"}}
        assert len(logged) == 2, logged
        assert logged[0].endswith(": format error in line 'junk'")
        assert logged[1].endswith(": 501 lines of its report were left out")
    finally:
        sensors.stop_all()


def test_a_sensor_that_does_not_quit_is_killed(tmp_path):
    script = write_script(str(tmp_path / "stubborn.sh"),
                          "#!/bin/sh\ntrap '' TERM PIPE\nread line\necho begin\necho end\n"
                          "while :; do sleep 0.1; done\n")
    sensors = LoadSensors()
    try:
        sensors.configure([("nodeA", script)], now=0.0)
        wait_for(lambda: program_processes(script))
        sensors.configure([], now=1.0)           # asked to quit: it does not
        sensors.tick(5.0, lambda host: 40.0)
        time.sleep(0.3)
        assert program_processes(script)
        sensors.tick(11.5, lambda host: 40.0)    # QUIT_TIMEOUT later: killed with what it started
        wait_for(lambda: not program_processes(script))
    finally:
        sensors.stop_all()


def host_resources(cell, host, names):
    out = cell.run("qhost", "-h", host, "-F", names).stdout
    return re.findall(r"[hg][lcf]:\S+", out)


def test_sensor_values_show_and_decide_where_jobs_run(cell):
    script = write_script(os.path.join(cell.root, "sensor.sh"), SENSOR)
    add_complex(cell, "scratch scr MEMORY <= YES NO 0 0")
    add_complex(cell, "licenses lic INT <= YES NO 0 0")
    set_global(cell, load_sensor=script, load_report_time="00:00:01")
    wait_for(lambda: "hl:scratch" in cell.run("qhost", "-F", "scratch").stdout)
    assert host_resources(cell, "global", "licenses") == ["gl:licenses=7.000000"]
    assert "runs" not in cell.run("qhost", "-F").stdout       # a value of no complex attribute
    # the sensor counts its reports: one a second, as load_report_time says
    runs = wait_for(lambda: re.findall(r"hl:scratch=(\d+)\.000G", cell.run("qhost", "-F", "scratch").stdout))
    wait_for(lambda: re.findall(r"hl:scratch=(\d+)\.000G", cell.run("qhost", "-F", "scratch").stdout) != runs)
    out = cell.run("qstat", "-F", "lic,scr", "-q", "all.q").stdout
    assert "\tgl:licenses=7\n" in out and re.search(r"\thl:scratch=\d+\.000G\n", out)
    # a request the global value cannot meet waits, with the reason; one it can meet runs
    waits = cell.qsub("-terse", "-b", "y", "-l", "lic=9", "true", cwd="/tmp", check=True).stdout.strip()
    runs_now = cell.qsub("-terse", "-b", "y", "-l", "lic=3,scr=1G", "true", cwd="/tmp", check=True).stdout.strip()
    cell.wait_finished(int(runs_now))
    reason = wait_for(lambda: re.search(r"cannot run .* because it offers only (\S+)",
                                        cell.run("qstat", "-j", waits).stdout))
    assert reason.group(1) == "gl:licenses=7"
    # the sensor runs as the daemon's user, with HOST naming the host
    proc = wait_for(lambda: program_processes(script))[0]
    assert proc.environ().get("HOST") == cell.host and proc.uids().real == os.getuid()
    # no longer configured: the sensor quits, its values go
    set_global(cell, load_sensor="none")
    wait_for(lambda: not program_processes(script))
    wait_for(lambda: "scratch" not in cell.run("qhost", "-F", "scratch").stdout)
    assert host_resources(cell, "global", "licenses") == []


#: SENSOR, and on node2 values for the cell and for another host besides its own
RELAYING = SENSOR.replace('    echo end\n', '    if [ "$HOST" = node2 ]; then echo "global:fromnode2:3"; '
                          'echo "testhost:relayed:4"; fi\n    echo end\n')


def test_an_execution_daemon_runs_the_sensors_of_its_host():
    cell = make_cell(hosts=["testhost", "node2"], start=False)
    script = write_script(os.path.join(cell.root, "sensor.sh"), RELAYING)
    cell.start_daemon()
    execd = None
    try:
        add_complex(cell, "scratch scr MEMORY <= YES NO 0 0")
        add_complex(cell, "fromnode2 fn2 INT <= YES NO 0 0")
        add_complex(cell, "relayed rel INT <= YES NO 0 0")
        set_global(cell, load_sensor=script, load_report_time="00:00:01")
        execd = subprocess.Popen(["gridtools", "execd", "--host", "node2"], env=cell.env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def by_host():
            found = {}
            for proc in program_processes(script):
                try:
                    found.setdefault(proc.environ().get("HOST"), []).append(proc)
                except psutil.Error:
                    continue
            return found

        def parents(proc):
            """The pids of the process's ancestors ([] once it ended: the dispatcher's
            sensor of node2 ends when the execution daemon takes the host over)."""
            try:
                return [p.pid for p in proc.parents()]
            except psutil.Error:
                return []

        def served():
            # (until the execution daemon serves node2, the dispatcher runs its sensors)
            found = by_host()
            return set(found) == {"testhost", "node2"} and all(
                execd.pid in parents(proc) for proc in found["node2"]) and found
        found = wait_for(served, timeout=20)
        assert all(execd.pid not in parents(proc) for proc in found["testhost"])
        report = os.path.join(cell.root, "spool", "execd", "node2", "load")
        wait_for(lambda: os.path.exists(report) and '"scratch"' in open(report).read(), timeout=20)
        wait_for(lambda: "hl:scratch" in cell.run("qhost", "-h", "node2", "-F", "scratch").stdout)
        # what its sensor gave for the cell and for another host reaches them
        wait_for(lambda: host_resources(cell, "global", "fromnode2") == ["gl:fromnode2=3.000000"], timeout=20)
        wait_for(lambda: host_resources(cell, "testhost", "relayed") == ["hl:relayed=4.000000"], timeout=20)
        execd.terminate()
        execd.wait(timeout=10)
        wait_for(lambda: not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE
                                 for p in found["node2"]))
    finally:
        if execd is not None and execd.poll() is None:
            execd.kill()
        destroy_cell(cell)
