"""Exactly one side owns a request: the daemon takes it by moving it out of the queue
into ``spool/taken/`` before it reads it; its client takes it back only while it is
still queued (``spool.requests``). A client that withdrew its request is never
contradicted by a daemon that carried it out, and a request the daemon took is
answered, even by the next daemon when the one that took it was killed first.

The daemon runs in this process (FakeExecution) and is driven up to the moment of
each race; the clients are real commands or the client's own functions."""

import os
import subprocess

from conftest import wait_for
from test_qdel_bulk import MANY, journal_path, send


def _killed(daemon):
    """End an in-process daemon as SIGKILL would: nothing more is written or answered."""
    daemon.lock.release()
    os.close(daemon.fifo)


def _folder(cell, name):
    return os.path.join(cell.root, "spool", name)


def _client(cell, *argv):
    """A real client command, started; it waits for its answer."""
    env = dict(cell.env, GRIDTOOLS_NO_AUTOSTART="1")
    return subprocess.Popen(list(argv), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd="/tmp")


def _request_of(cell, suffix):
    """The name of the one queued request ending in ``suffix``, once it is there."""
    found = []

    def queued():
        found[:] = [n for n in os.listdir(_folder(cell, "requests")) if n.endswith(suffix)
                    and not n.startswith(".")]
        return len(found) == 1
    wait_for(queued)
    return found[0]


def _answered(client, daemon):
    """Run the daemon's passes until the client returned; (exit code, stdout, stderr)."""
    while client.poll() is None:
        daemon.tick()
    out, err = client.communicate()
    return client.returncode, out, err


def _holds(daemon, numbers):
    return {daemon.state.jobs[jid].hold for jid in numbers}


def test_a_request_the_daemon_took_cannot_be_withdrawn_and_is_carried_out(inproc, monkeypatch):
    """The client gives up at the worst moment: the daemon has just read its bulk qrls.
    Its withdrawal fails (it would say "the daemon had taken the request in"), and the
    daemon carries the request out and answers it; the client reads that answer."""
    from gridtools.spool import inbox, requests
    cell, start = inproc
    daemon = start()
    numbers = send(cell, monkeypatch, MANY)
    daemon.tick()
    assert _holds(daemon, numbers) == {"u"}
    client = _client(cell, "qrls", "-u", "root")
    name = _request_of(cell, ".hold")
    real_read, withdrawn = inbox.read, []

    def read_then_withdrawn(folder, which, uid=None):
        req = real_read(folder, which, uid)
        if which == name:               # the client gives up right after the daemon read it
            withdrawn.append(requests.withdraw(which))
        return req
    monkeypatch.setattr(inbox, "read", read_then_withdrawn)
    code, out, err = _answered(client, daemon)
    assert withdrawn == [False]
    assert (code, err) == (0, "")
    assert out.splitlines() == [f"modified hold of job {jid}" for jid in numbers]
    assert _holds(daemon, numbers) == {""}
    assert os.listdir(_folder(cell, "taken")) == []


def test_a_request_withdrawn_before_the_daemon_took_it_is_never_carried_out(inproc, monkeypatch):
    """The converse: the client withdraws first (it says nothing was done); the daemon
    finds the request gone, skips it, and the jobs keep their holds."""
    from gridtools.spool import inbox, replies, requests
    cell, start = inproc
    daemon = start()
    numbers = send(cell, monkeypatch, MANY)
    daemon.tick()
    name = requests.write("hold", {"targets": [], "letters": "u", "on": False, "users": ["root"],
                                   "host": cell.host}, reply=True)
    assert inbox.pending() == [name]             # the daemon lists it ...
    assert requests.withdraw(name) is True          # ... and its client takes it back
    daemon.tick()
    daemon.tick()
    assert _holds(daemon, numbers) == {"u"}
    assert replies.wait(name, timeout=0) is None    # nothing answered it
    assert inbox.pending() == [] and os.listdir(_folder(cell, "taken")) == []
    assert not os.path.exists(journal_path(cell))


def test_a_request_taken_by_a_daemon_killed_before_it_answered_is_done_once_and_answered(inproc, monkeypatch):
    """Killed after the bulk qrls was applied and recorded, before the answer: the
    request is still the daemons' (its client cannot withdraw it), the next daemon
    replays the record, takes the request up again before anything queued after it,
    and the client gets the answer the first daemon would have given."""
    from gridtools.daemon import intake
    from gridtools.spool import inbox, requests
    cell, start = inproc
    daemon = start()
    numbers = send(cell, monkeypatch, MANY)
    daemon.tick()
    client = _client(cell, "qrls", "-u", "root")
    name = _request_of(cell, ".hold")
    done, _ = intake.run(daemon.state, daemon.dispatcher)       # applied and recorded ...
    assert [req.name for req, _ in done] == [name]
    assert os.path.exists(journal_path(cell))
    _killed(daemon)                                             # ... not answered
    assert os.listdir(_folder(cell, "taken")) == [name]
    assert requests.withdraw(name) is False
    later = send(cell, monkeypatch, 1, hold=False)              # queued after it, named before
    [queued] = os.listdir(_folder(cell, "requests"))
    first = "%020d-1.submit" % 1
    os.rename(os.path.join(_folder(cell, "requests"), queued), os.path.join(_folder(cell, "requests"), first))
    second = start()
    assert inbox.pending() == [name, first]
    code, out, err = _answered(client, second)
    assert (code, err) == (0, "")
    assert out.splitlines() == [f"modified hold of job {jid}" for jid in numbers]
    assert _holds(second, numbers) == {""} and later[0] in second.state.jobs
    assert inbox.names() == set()
    wait_for(lambda: second.tick() or not os.path.exists(journal_path(cell)))
    assert {cell.job_state(jid)["hold"] for jid in numbers} == {""}


def test_a_request_taken_but_not_read_when_the_daemon_was_killed_is_carried_out(inproc, monkeypatch):
    """Killed right after it took a qhold, before reading it: the next daemon applies it
    and answers; the sweep of the request folder leaves it alone meanwhile."""
    from gridtools.spool import inbox
    cell, start = inproc
    daemon = start()
    [jid] = send(cell, monkeypatch, 1, hold=False)
    daemon.tick()
    client = _client(cell, "qhold", str(jid))
    name = _request_of(cell, ".hold")
    assert inbox.claim(name) is True
    _killed(daemon)
    inbox.sweep(now=os.stat(_folder(cell, "taken")).st_mtime + 10 * inbox.STALE)
    assert os.listdir(_folder(cell, "taken")) == [name]
    second = start()
    code, out, err = _answered(client, second)
    assert (code, out, err) == (0, f"modified hold of job {jid}\n", "")
    assert second.state.jobs[jid].hold == "u"
    assert os.listdir(_folder(cell, "taken")) == []


def test_a_submit_the_daemon_took_shows_until_the_status_does(inproc, monkeypatch):
    """A query between the moment the daemon took a submit and the status that shows its
    job still sees the job (the caller's submits are read from both folders)."""
    from gridtools.cli import status
    from gridtools.spool import inbox
    cell, start = inproc
    start()
    [jid] = send(cell, monkeypatch, 1)
    [name] = inbox.pending()
    assert inbox.claim(name) is True
    assert [req.body["job"]["id"] for req in inbox.pending_submits()] == [jid]
    assert status.load_listing() is None            # (the status alone would not show it)
    assert jid in status.load()["jobs"]


def test_a_name_queued_again_beside_a_taken_request_waits_its_turn(inproc, monkeypatch):
    """Someone queues a request under the name of one the daemon took and has not
    answered: it neither replaces it nor is applied in its place."""
    from gridtools.spool import inbox, requests
    cell, start = inproc
    daemon = start()
    [jid] = send(cell, monkeypatch, 1)
    daemon.tick()
    name = requests.write("hold", {"targets": [{"id": jid, "tasks": None}], "letters": "u",
                                   "on": False})
    assert inbox.claim(name) is True
    again = requests.write("hold", {"targets": [{"id": jid, "tasks": None}], "letters": "u",
                                    "on": True}, name=name)
    assert again == name and inbox.pending() == [name]
    assert inbox.take(name).body["on"] is False


def test_a_request_named_as_if_it_were_older_does_not_go_first(inproc, monkeypatch):
    """A user who names a request as if it were queued long ago (``0000...``) gets it
    taken no earlier than NAME_SLACK seconds before it came into the queue: a request
    queued before that goes first; one named honestly keeps its own order."""
    import time
    from gridtools.spool import inbox, requests
    cell, _start = inproc
    body = {"targets": [{"id": 1, "tasks": None}], "letters": "u", "on": True}
    first = requests.write("hold", body)
    second = requests.write("hold", body)
    time.sleep(inbox.NAME_SLACK + 0.5)
    liar = requests.write("hold", body, name=f"{1:020d}-1-abcdef.hold")
    early = requests.write("hold", body, name=f"{time.time_ns() - 10**9:020d}-1-abcdef.hold")
    assert inbox.pending() == [first, second, liar, early]
    assert inbox.pending(limit=2) == [first, second]
