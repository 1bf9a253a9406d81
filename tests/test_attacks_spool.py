"""Attacks on the shared parts of the spool: the job id sequence, the replies, privacy.

A hostile user (gtbob) holds locks, rewrites files, plants claims and forged
answers, and reads whatever the spool lets him; the victim (gtalice) must
still submit at once, get her own ids and answers, and keep her job's script
and environment to herself.
"""

import os
import time

from attack_tools import (all_readable_bytes, command_popen, continue_process, daemon_pid, forge_submit,
                          stop_process, user_popen, user_py)
from conftest import wait_for


def _jid(proc):
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.split(".")[0])


def test_a_held_lock_on_the_sequence_blocks_no_submit(cell, workdir, users):
    alice, bob = users[0], users[1]
    holder = user_popen(cell, bob, f"""
    import fcntl, os, sys, time
    spool = {os.path.join(cell.root, "spool")!r}
    held = []
    for name in os.listdir(spool):
        path = os.path.join(spool, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held.append(name)
        except OSError:
            pass
    print(" ".join(held), flush=True)
    time.sleep(60)
    """)
    try:
        held = holder.stdout.readline().split()
        assert "jobseqnum" in held or not os.path.exists(os.path.join(cell.root, "spool", "jobseqnum"))
        began = time.time()
        proc = cell.qsub("-terse", "-b", "y", "true", user=alice, cwd=workdir, timeout=20)
        assert proc.returncode == 0, proc.stderr
        assert time.time() - began < 10
        cell.wait_finished(_jid(proc))
    finally:
        holder.kill()
        holder.wait()


def test_users_cannot_rewrite_or_steer_the_id_sequence(cell, workdir, users):
    alice, bob = users[0], users[1]
    first = _jid(cell.qsub("-terse", "-h", "-b", "y", "true", user=alice, cwd=workdir))
    spool = os.path.join(cell.root, "spool")
    proc = user_py(cell, bob, f"""
    import os
    spool = {spool!r}
    try:
        with open(os.path.join(spool, "jobseqnum"), "w") as fh:
            fh.write("9999990\\n")
        print("rewrote")
    except OSError:
        print("refused")
    for number in ("9999999", "{first + 50000000}", "x"):
        try:
            open(os.path.join(spool, "jobids", number), "w").close()
        except OSError:
            pass
    """, check=True)
    assert proc.stdout.strip() == "refused", "a user rewrote the job id sequence"
    second = _jid(cell.qsub("-terse", "-h", "-b", "y", "true", user=alice, cwd=workdir))
    assert second == first + 1
    # a claim bob makes for the id alice would get next only makes alice skip it
    user_py(cell, bob, f"open({os.path.join(spool, 'jobids', str(second + 1))!r}, 'w').close()",
            check=True)
    third = _jid(cell.qsub("-terse", "-h", "-b", "y", "true", user=alice, cwd=workdir))
    assert third == second + 2
    for jid in (first, second, third):      # once the daemon took each in (job.yaml is written last)
        folder = os.path.join(spool, "jobs", str(jid))
        wait_for(lambda: os.path.exists(os.path.join(folder, "job.yaml")))
        assert f'"{alice}"' in open(os.path.join(folder, "owner.yaml")).read()


def test_planted_claims_make_no_ids_jump_and_future_ones_are_swept(cell, workdir, users, monkeypatch):
    alice, bob = users[0], users[1]
    first = _jid(cell.qsub("-terse", "-h", "-b", "y", "true", user=alice, cwd=workdir))
    wait_for(lambda: open(os.path.join(cell.root, "spool", "jobseqnum")).read().strip() == str(first))
    claims = os.path.join(cell.root, "spool", "jobids")
    # bob's claims far and a little above the last id, dated 2035 (never older than a day)
    planted = [first + 100000, first + 99999, first + 500, first + 3]
    user_py(cell, bob, f"""
    import os
    for number in {planted!r}:
        path = os.path.join({claims!r}, str(number))
        open(path, "w").close()
        os.utime(path, (2051222400, 2051222400))
    """, check=True)
    got = [_jid(cell.qsub("-terse", "-h", "-b", "y", "true", user=alice, cwd=workdir)) for _ in range(3)]
    assert got == [first + 1, first + 2, first + 4]      # only the claim next in line costs an id
    # the daemon treats a claim dated in the future as stale and removes it
    from gridtools.spool import ids
    monkeypatch.setenv("GRIDTOOLS_ROOT", cell.root)
    ids.sweep("job")
    assert not [n for n in os.listdir(claims) if int(n) in planted]


def test_a_job_claimed_far_ahead_does_not_move_everybodys_ids(cell, workdir, users):
    """bob claims an id far ahead and writes a submit request for it by hand: the daemon
    takes his job in (the claim is his), but the ids of alice's jobs go on from hers."""
    alice, bob = users[0], users[1]
    first = _jid(cell.qsub("-terse", "-h", "-b", "y", "true", user=alice, cwd=workdir))
    hint = os.path.join(cell.root, "spool", "jobseqnum")
    wait_for(lambda: open(hint).read().strip() == str(first))
    far = first + 50000
    user_py(cell, bob, f"open({os.path.join(cell.root, 'spool', 'jobids', str(far))!r}, 'w').close()", check=True)
    _claimed, _name, answer = forge_submit(cell, bob, {"id": far, "user_hold": True}, reply=True)
    assert answer[0] == 0, answer
    assert f" {far} " in f" {cell.run('qstat', '-u', '*').stdout} "
    assert open(hint).read().strip() == str(first)
    got = _jid(cell.qsub("-terse", "-h", "-b", "y", "true", user=alice, cwd=workdir))
    assert got == first + 2                     # (bob's first claim, next in line, cost one id)


def test_a_claim_is_aged_by_the_daemons_first_sighting(tmp_path, monkeypatch):
    from gridtools.spool import ids
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    folder = tmp_path / "spool" / "jobids"
    folder.mkdir(parents=True)
    now = time.time()
    for name, mtime in (("7", now + 60), ("8", now), ("9", now + 3 * 3600), ("10", now - 2 * 86400)):
        (folder / name).touch()
        os.utime(folder / name, (mtime, mtime))
    ids.sweep("job", now)
    assert sorted(os.listdir(folder)) == ["7", "8"]     # in the future beyond the slack, or too old
    ids.sweep("job", now + ids.SEEN_TTL - 1)
    assert sorted(os.listdir(folder)) == ["7", "8"]
    ids.sweep("job", now + ids.SEEN_TTL + 1)             # "7" would stay a day by its mtime
    assert os.listdir(folder) == []


def test_forged_reply_is_not_believed(cell, workdir, users):
    """bob watches the request folder and answers alice's qalter before the daemon does."""
    alice, bob = users[0], users[1]
    jid = _jid(cell.qsub("-terse", "-h", "-b", "y", "true", user=alice, cwd=workdir))
    wait_for(lambda: f" {jid} " in f" {cell.run('qstat', user=alice).stdout} ")
    pid = daemon_pid(cell)
    folder = os.path.join(cell.root, "spool")
    forger = user_popen(cell, bob, f"""
    import os, time
    spool = {folder!r}
    seen = set()
    end = time.time() + 30
    while time.time() < end:
        for name in os.listdir(os.path.join(spool, "requests")):
            if not name.endswith(".alter") or name in seen:
                continue
            seen.add(name)
            body = 'code: 0\\nout: "FORGED\\\\n"\\nerr: ""\\n'
            for target in (os.path.join(spool, "replies", name),
                           os.path.join(spool, "replies", name, "answer")):
                try:
                    with open(target, "w") as fh:
                        fh.write(body)
                    os.chmod(target, 0o644)
                except OSError:
                    pass
            print("forged", name, flush=True)
        time.sleep(0.005)
    """)
    stop_process(pid)
    try:
        qalter = command_popen(cell, alice, "qalter", "-N", "renamed", str(jid), cwd=workdir)
        line = forger.stdout.readline()
        assert line.startswith("forged"), forger.stderr.read()
        time.sleep(0.5)                   # alice's qalter polls for its answer meanwhile
    finally:
        continue_process(pid)
    out, err = qalter.communicate(timeout=60)
    forger.kill()
    forger.wait()
    assert "FORGED" not in out, "alice believed bob's answer"
    assert qalter.returncode == 0 and f"modified job name of job {jid}" in out, out + err


def test_other_users_read_nothing_private_in_the_spool(cell, workdir, users):
    alice, bob = users[0], users[1]
    env = {"SECRET_TOKEN": "s3cr3t-xyz-42"}
    script = "echo secret-script-abc\nsleep 30\n"
    held = _jid(cell.qsub("-terse", "-h", "-V", "-cwd", user=alice, cwd=workdir, input=script, env=env))
    running = _jid(cell.qsub("-terse", "-V", "-cwd", "-N", "visible", user=alice, cwd=workdir,
                             input=script, env=env))
    wait_for(lambda: os.path.exists(os.path.join(workdir, f"visible.o{running}"))
             and "secret-script-abc" in open(os.path.join(workdir, f"visible.o{running}")).read())
    found = all_readable_bytes(cell, bob, os.path.join(cell.root, "spool"))
    leaks = [path for path, data in found.items()
             if "s3cr3t-xyz-42" in data or "secret-script-abc" in data]
    assert not leaks, f"bob can read alice's secrets in {leaks}"
    proc = user_py(cell, bob, f"import os; print(os.listdir({os.path.join(cell.root, 'spool', 'jobs')!r}))")
    assert proc.returncode != 0 and "PermissionError" in proc.stderr
    # the owner still sees her own job whole, and everyone sees it exist
    mine = cell.run("qstat", "-j", str(held), user=alice)
    assert mine.returncode == 0 and "SECRET_TOKEN=s3cr3t-xyz-42" in mine.stdout, mine.stdout
    theirs = cell.run("qstat", "-j", str(held), user=bob)
    assert theirs.returncode == 0 and f"job_number:                 {held}" in theirs.stdout
    assert "secret-script-abc" not in open(os.path.join(cell.root, "spool", "status"), "rb").read().decode(
        "latin-1")
    cell.run("qdel", str(held), str(running), user=alice)


def test_users_cannot_hold_the_daemons_locks(cell, workdir, users):
    """Whoever can open a lock file can flock it: bob tries every lock of the spool, and the
    lock of alice's running task, and keeps what he gets; the cell carries on."""
    alice, bob = users[0], users[1]
    cell.run("qconf", "-mattr", "queue", "slots", "2", "all.q", check=True)    # config.lock
    first = _jid(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "true",
                           user=alice, cwd=workdir))
    cell.wait_finished(first)                                                     # accounting.lock
    jid = _jid(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "sleep", "2",
                         user=alice, cwd=workdir))
    shepherd = os.path.join(cell.root, "spool", "jobs", str(jid), "1", "shepherd.lock")
    wait_for(lambda: os.path.exists(shepherd))
    spool = os.path.join(cell.root, "spool")
    holder = user_popen(cell, bob, f"""
    import fcntl, os, threading, time
    paths = [os.path.join({spool!r}, n) for n in ("daemon.lock", "config.lock", "accounting.lock")]
    paths.append({shepherd!r})
    fds = []
    for path in paths:
        try:
            fds.append((path, os.open(path, os.O_RDONLY)))
            print("opened", path, flush=True)
        except OSError as exc:
            print("refused", path, exc.strerror, flush=True)
    def grab(fd):
        fcntl.flock(fd, fcntl.LOCK_EX)
    for path, fd in fds:
        threading.Thread(target=grab, args=(fd,), daemon=True).start()
    print("holding", flush=True)
    time.sleep(60)
    """)
    try:
        lines = []
        while not lines or lines[-1] != "holding":
            lines.append(holder.stdout.readline().strip())
            assert lines[-1], holder.stderr.read()
        cell.wait_finished(jid, timeout=20)
        wait_for(lambda: [r for r in cell.accounting() if r[5] == str(jid)])
        proc = cell.run("qconf", "-mattr", "queue", "slots", "3", "all.q", timeout=20)
        assert proc.returncode == 0, proc.stderr
        cell.stop_daemon()
        proc = cell.run("gridtools", "daemon", "start", timeout=20)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        held = _jid(cell.qsub("-terse", "-h", "-b", "y", "true", user=alice, cwd=workdir))
        wait_for(lambda: f" {held} " in f" {cell.run('qstat', user=alice).stdout} ")
        assert cell.run("qalter", "-N", "renamed", str(held), user=alice, timeout=20).returncode == 0
        assert not [line for line in lines if line.startswith("opened")], lines
    finally:
        holder.kill()
        holder.wait()
