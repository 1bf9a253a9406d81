"""Injection through what users name things: the daemon's log, other users' terminals.

A job name with a newline would forge lines of ``spool/messages``; an escape
sequence in a name, a path, an environment value or an argument would drive
the terminal of whoever runs qstat, qhost or qacct. Names with control
characters are refused (by qsub and, for hand-written requests, by the
daemon); everything else users wrote is shown with its control characters
made visible. A job name that is not UTF-8 is accepted and shown escaped.
"""

import os
import re
import time

from attack_tools import alive, daemon_pid, forge_submit, poke, requests_dir, user_py, wait_taken
from conftest import wait_for

FORGED = "12/01/2026 00:00:00|E|forged by bob"


def _messages(cell):
    with open(os.path.join(cell.root, "spool", "messages"), "rb") as fh:
        return fh.read().decode("utf-8", "replace")


def test_qsub_refuses_control_characters_in_names(cell, workdir, users):
    alice = users[0]
    for name in ("two\nlines", "esc\x1b[2Jclear", "tab\there"):
        proc = cell.qsub("-N", name, "-b", "y", "true", user=alice, cwd=workdir)
        assert proc.returncode != 0, f"qsub accepted the name {name!r}"
        assert proc.stdout == ""
        assert re.fullmatch(r"qsub: [^\n\x1b]+ not allowed in objectname\n", proc.stderr), proc.stderr
    proc = cell.qsub("-A", "acct\nline", "-b", "y", "true", user=alice, cwd=workdir)
    assert proc.returncode != 0 and "account string" in proc.stderr


def test_log_lines_cannot_be_forged(cell, workdir, users):
    bob = users[1]
    pid = daemon_pid(cell)
    jid, name, answer = forge_submit(cell, bob, {"name": f"x\n{FORGED}"}, reply=True)
    assert answer[0] != 0
    # a request file whose very name holds a newline
    odd = "%020d-6\n%s.delete" % (time.time_ns(), FORGED.replace("/", "-"))
    user_py(cell, bob, f"""
    import os
    folder = {requests_dir(cell)!r}
    with open(os.path.join(folder, {odd!r}), "w") as fh:
        fh.write("not: [a request")
    """, check=True)
    poke(cell)
    wait_taken(cell, odd)
    proc = cell.qsub("-terse", "-b", "y", "true", user=bob, cwd=workdir)
    cell.wait_finished(int(proc.stdout))
    lines = _messages(cell).splitlines()
    assert not [line for line in lines if line.startswith((FORGED, FORGED.replace("/", "-")))], \
        "a log line was forged"
    assert all(re.match(r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d\|[IWE]\|", line) for line in lines), lines
    assert alive(pid)


def test_escape_sequences_never_reach_a_terminal(cell, workdir, users):
    """bob's job carries escape sequences in everything qsub lets through; root looks."""
    bob = users[1]
    esc = "\x1b]0;owned\x07\x1b[2J"
    proc = cell.qsub("-terse", "-h", "-v", f"EVIL={esc}", "-ac", "note=x", "-b", "y", "echo", esc,
                     user=bob, cwd=workdir)
    held = int(proc.stdout)
    # a request written by hand with escapes in fields the daemon accepts as text
    jid, name, answer = forge_submit(cell, bob, {"args": [esc], "env": {"E": esc},
                                                 "script_name": "s", "user_hold": True}, reply=True)
    assert answer[0] == 0, answer
    ran = int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "echo", esc,
                        user=bob, cwd=workdir).stdout)
    cell.wait_finished(ran)
    wait_for(lambda: str(jid) in cell.run("qstat", "-u", "*").stdout)
    outputs = []
    for argv in (("qstat", "-u", "*"), ("qstat", "-u", "*", "-r"), ("qstat", "-j", str(held)),
                 ("qstat", "-j", str(jid)), ("qstat", "-u", "*", "-xml"), ("qstat", "-j", str(jid), "-xml"),
                 ("qstat", "-f", "-u", "*"), ("qhost", "-j"), ("qacct", "-j", str(ran)), ("qacct", "-o")):
        proc = cell.run(*argv)
        outputs.append((argv, proc.stdout + proc.stderr))
    shown = cell.run("qstat", "-j", str(held)).stdout
    assert "EVIL=\\x1b]0;owned\\x07" in shown, shown
    for argv, text in outputs:
        assert "\x1b" not in text and "\x07" not in text, f"{argv} printed a control character"


def test_a_name_that_is_not_utf8_kills_nothing(cell, workdir, users):
    """qsub -N refuses such a name, but a job takes its default name from its script's file
    name, which may hold any bytes."""
    alice = users[0]
    pid = daemon_pid(cell)
    script = os.path.join(workdir.encode(), b"caf\xe9\xff")
    with open(script, "wb") as fh:
        fh.write(b"#!/bin/sh\ntrue\n")
    os.chmod(script, 0o755)
    proc = cell.run("qsub", "-terse", "-o", "/dev/null", "-j", "y", script, user=alice, cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    jid = int(proc.stdout)
    cell.wait_finished(jid)
    time.sleep(0.3)
    assert alive(pid) and daemon_pid(cell) == pid
    for user in (None, alice):
        for argv in (("qstat", "-u", "*", "-s", "z"), ("qacct", "-j", str(jid))):
            proc = cell.run(*argv, user=user, text=False)      # the name's bytes come back as they are
            assert proc.returncode == 0, (argv, proc.stderr)
    assert b"caf\xe9\xff" in cell.run("qacct", "-j", str(jid), text=False).stdout
    assert f"job {jid} (caf" in _messages(cell)
