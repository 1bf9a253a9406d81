"""sched_conf params PROFILE=1: every pass logs its time to the messages file in Grid
Engine's words ("PROF: scheduled in wall (u user + s system = cpu): n sequential, n
parallel, n orders, ..."), and nothing is logged while it is off."""

import os
import re

from conftest import wait_for
from qtools import jid_of
from qtools import set_sched

LINE = re.compile(r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d\|P\|PROF: scheduled in (\d+\.\d{3}) "
                  r"\(u (\d+\.\d{3}) \+ s (\d+\.\d{3}) = (\d+\.\d{3})\): (\d+) sequential, "
                  r"(\d+) parallel, (\d+) orders, (\d+) H, (\d+) Q, (\d+) QA, (\d+) J\(qw\), "
                  r"(\d+) J\(r\), (\d+) J\(s\), (\d+) J\(h\), (\d+) J\(e\), (\d+) J\(all\)$")


def prof_lines(cell):
    with open(os.path.join(cell.root, "spool", "messages"), encoding="utf-8") as fh:
        return [line.rstrip("\n") for line in fh if "PROF:" in line]


def test_profile_logs_each_pass(cell, workdir):
    set_sched(cell, params="PROFILE=1")
    held = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    job = jid_of(cell.qsub("-b", "y", "sleep", "30", cwd=workdir))

    def started_line():
        for line in prof_lines(cell):
            found = LINE.match(line)
            if found and int(found.group(5)) >= 1:
                return found
        return None
    found = wait_for(started_line, timeout=30)
    assert abs(float(found.group(4)) - float(found.group(2)) - float(found.group(3))) <= 0.0015
    assert int(found.group(8)) == 1 and int(found.group(10)) >= 1       # one host, all.q on it
    assert int(found.group(14)) == 1                                    # the held job
    assert all(LINE.match(line) for line in prof_lines(cell)), prof_lines(cell)
    cell.run("qdel", str(job), str(held), check=True)


def test_nothing_is_logged_without_profile(cell, workdir):
    set_sched(cell, params="MONITOR=1")
    job = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    cell.wait_finished(job)
    wait_for(lambda: os.path.exists(os.path.join(cell.root, "spool", "schedule")))
    assert prof_lines(cell) == []
