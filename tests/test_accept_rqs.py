"""Acceptance, end to end: the admin guide's three resource quota sets on three hosts
with a real daemon. MyUser (gtalice) gets 2 slots on each Linux host, user1 (gtbob)
one; max_linux is then full and host3 allows nobody: 5 of 8 jobs run, the others say
which rule holds them, and qquota shows the guide's tables."""

from conftest import destroy_cell, make_cell, wait_for
from qtools import add_object, jid_of, job_states

import pytest

SETS = {
    "maxujobs": "{\n name maxujobs\n enabled true\n limit users * to slots=20\n}\n",
    "max_linux": "{\n name max_linux\n enabled true\n limit users * hosts @linux to slots=5\n}\n",
    "max_per_host": ("{\n name max_per_host\n enabled true\n"
                     " limit users gtalice hosts {@linux} to slots=2\n"
                     " limit users {*} hosts {@linux} to slots=1\n"
                     " limit users * hosts * to slots=0\n}\n"),
}
ORDER = ["gtalice", "gtalice", "gtbob", "gtalice", "gtalice", "gtalice", "gtbob", "gtalice"]


@pytest.fixture
def guide_cell(users, workdir):
    cell = make_cell(slots=4, hosts=["host1", "host2", "host3"], execds=True)
    try:
        add_object(cell, "-Ahgrp", "group_name @linux\nhostlist host1 host2\n")
        for text in SETS.values():
            add_object(cell, "-Arqs", text)
        yield cell
    finally:
        destroy_cell(cell)


def rows(text):
    return sorted(tuple(line.split()) for line in text.splitlines()[2:])


def test_the_guides_quota_sets_and_qquota_tables(guide_cell, workdir):
    cell = guide_cell
    cell.run("qmod", "-d", "all.q", check=True)           # all eight wait for one pass
    jobs = [jid_of(cell.qsub("-b", "y", "sleep", "60", user=u, cwd=workdir)) for u in ORDER]
    cell.run("qmod", "-e", "all.q", check=True)
    wait_for(lambda: sum(1 for s in job_states(cell).values() if s == "r") == 5, timeout=20)
    running = {}
    for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]:
        f = line.split()
        if f[4] == "r":
            running.setdefault((f[3], f[7].split("@")[1]), []).append(int(f[0]))
    assert {k: len(v) for k, v in running.items() if k[0] == "gtalice"} == {
        ("gtalice", "host1"): 2, ("gtalice", "host2"): 2}
    assert sum(len(v) for k, v in running.items() if k[0] == "gtbob") == 1
    assert not any(host == "host3" for _u, host in running)
    waiting = [j for j in jobs if job_states(cell)[str(j)] == "qw"]
    assert len(waiting) == 3
    for jid in waiting:
        text = cell.run("qstat", "-j", str(jid)).stdout
        assert 'cannot run because it exceeds limit "/////" in rule "max_linux/1"' in text
        assert 'cannot run because it exceeds limit "/////" in rule "max_per_host/3"' in text
    bob_host = [h for u, h in running if u == "gtbob"][0]
    assert rows(cell.run("qquota", user="gtalice", cwd=workdir).stdout) == sorted([
        ("maxujobs/1", "slots=5/20", "-"),
        ("max_linux/1", "slots=5/5", "hosts", "@linux"),
        ("max_per_host/1", "slots=2/2", "users", "gtalice", "hosts", "host1"),
        ("max_per_host/1", "slots=2/2", "users", "gtalice", "hosts", "host2")])
    assert rows(cell.run("qquota", "-h", "host2", user="gtalice", cwd=workdir).stdout) == sorted([
        ("maxujobs/1", "slots=5/20", "-"),
        ("max_linux/1", "slots=5/5", "hosts", "@linux"),
        ("max_per_host/1", "slots=2/2", "users", "gtalice", "hosts", "host2")])
    assert rows(cell.run("qquota", user="gtbob", cwd=workdir).stdout) == sorted([
        ("maxujobs/1", "slots=5/20", "-"),
        ("max_linux/1", "slots=5/5", "hosts", "@linux"),
        ("max_per_host/2", "slots=1/1", "users", "gtbob", "hosts", bob_host)])
