"""qquota against a running daemon: the reference capture's rule and layout."""

import os

from qtools import add_object, jid_of, wait_state

RQS = "{\n   name         max_slots_per_user\n   description  NONE\n   enabled      TRUE\n" \
      "   limit        users {*} queues all.q to slots=100\n}\n"


def reference_stdout(name):
    from conftest import REPO
    path = os.path.join(REPO, "tests", "data", "reference", "sge", name)
    text = open(path).read()
    return text.split("# ---- stdout ----\n", 1)[1].split("# ---- stderr ----", 1)[0]


def test_qquota_shows_the_slots_in_use(cell, users, workdir):
    os.chmod(workdir, 0o777)
    add_object(cell, "-Arqs", RQS)
    jobs = [jid_of(cell.qsub("-b", "y", "sleep", "60", user="gtalice", cwd=workdir)) for _ in range(2)]
    for jid in jobs:
        wait_state(cell, jid, "r")
    mine = cell.run("qquota", user="gtalice")
    assert mine.returncode == 0, mine.stderr
    expected = reference_stdout("qquota.txt").replace("alice", "gtalice")
    want = expected.splitlines()
    got = mine.stdout.splitlines()
    assert got[:2] == want[:2]
    assert got[2] == "max_slots_per_user/1 slots=2/100          users gtalice queues all.q"
    assert cell.run("qquota", user="gtbob").stdout.splitlines()[2:] == []    # bob uses nothing
    everyone = cell.run("qquota", "-u", "*", user="gtbob").stdout.splitlines()
    assert everyone[2:] == [got[2]]
    for picked in (["-q", "all.q"], ["-l", "slots"], ["-h", "testhost"], ["-pe", "smp"], ["-P", "p1"]):
        assert cell.run("qquota", "-u", "*", *picked).stdout.splitlines()[2:] == [got[2]], picked
    assert cell.run("qquota", "-u", "*", "-l", "h_vmem").stdout.splitlines()[2:] == []
    xml = cell.run("qquota", "-u", "*", "-xml").stdout
    assert "<limit resource='slots' limit='100' value='2'/>" in xml
    assert "<users>gtalice</users>" in xml
    bad = cell.run("qquota", "-x")
    assert bad.returncode != 0 and "invalid option" in bad.stderr
