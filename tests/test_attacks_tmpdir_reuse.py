"""Attacks through a TMPDIR that a shepherd keeps for its next task (``exec.tmpdir``).

A spare shepherd keeps its task's emptied TMPDIR and renames it into the next
task's. What a user did to the folder while it was theirs stays with it: a
default ACL that every file made in it later inherits (whatever the next
job's umask), a descriptor opened on it from a login shell. So a folder
never passes to another user: bob's plants must show nothing of alice's
jobs.
"""

import json
import os
import struct

import pytest

from attack_tools import user_popen

#: a POSIX ACL as the kernel stores it in system.posix_acl_default: version 2, then
#: (tag, permissions, id) entries: the owner, bob (named), the group, the mask, others
_ACL_TAGS = ((0x01, 7, 0xFFFFFFFF), (0x02, 7, None), (0x04, 0, 0xFFFFFFFF), (0x10, 7, 0xFFFFFFFF),
             (0x20, 0, 0xFFFFFFFF))


def _default_acl_for(uid):
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, uid if ident is None else ident)
                                           for tag, perm, ident in _ACL_TAGS)


def _jid(proc):
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.split(".")[0])


def test_a_folder_bob_planted_in_is_never_the_tmpdir_of_alices_later_jobs(cell, workdir, users):
    import pwd
    alice, bob = users[0], users[1]
    bob_uid = pwd.getpwnam(bob).pw_uid
    where, held, stop = (os.path.join(workdir, n) for n in ("bob.tmpdir", "bob.held", "stop"))
    acl = _default_acl_for(bob_uid).hex()
    plant = os.path.join(workdir, "plant.py")
    with open(plant, "w") as fh:
        fh.write(f"""import os, time
tmp = os.environ["TMPDIR"]
try:
    os.setxattr(tmp, "system.posix_acl_default", bytes.fromhex("{acl}"))
    print("acl set")
except OSError as exc:
    print("no acl:", exc.strerror)
with open({where!r} + ".new", "w") as fh:
    fh.write(tmp)
os.rename({where!r} + ".new", {where!r})
while not os.path.exists({held!r}):
    time.sleep(0.02)
""")
    # bob, from his login shell, keeps his job's TMPDIR open and lists it until told to stop
    watcher = user_popen(cell, bob, f"""
        import json, os, time
        while not os.path.exists({where!r}):
            time.sleep(0.02)
        fd = os.open(open({where!r}).read(), os.O_RDONLY | os.O_DIRECTORY)
        open({held!r}, "w").close()
        seen = set()
        while not os.path.exists({stop!r}):
            seen.update(os.listdir(fd))
            time.sleep(0.01)
        print(json.dumps(sorted(seen)))
        """)
    try:
        out = os.path.join(workdir, "bob.out")
        first = _jid(cell.qsub("-terse", "-j", "y", "-o", out, "-b", "y", "python3", plant,
                               user=bob, cwd=workdir))
        cell.wait_finished(first, timeout=30)
        planted = open(out).read()
        # alice's jobs, one after another, each served by the shepherd that is free
        for n in range(3):
            report = os.path.join(workdir, f"alice{n}.out")
            job = _jid(cell.qsub(
                "-terse", "-j", "y", "-o", report, "-b", "y", "sh", "-c",
                "'umask 077; echo secret > $TMPDIR/alice_secret_$JOB_ID; sleep 0.5; "
                "python3 -c \"import os; print(sorted(os.listxattr(os.environ[\\\"TMPDIR\\\"] + "
                "\\\"/alice_secret_\\\" + os.environ[\\\"JOB_ID\\\"])))\"'",
                user=alice, cwd=workdir))
            cell.wait_finished(job, timeout=30)
            assert "system.posix_acl_access" not in open(report).read(), \
                f"alice's file in TMPDIR inherited bob's ACL ({planted.strip()})"
        open(stop, "w").close()
        seen, _ = watcher.communicate(timeout=30)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()
    assert json.loads(seen) == [], "bob saw into alice's TMPDIR"
    if "acl set" not in planted:
        pytest.skip(f"the file system of /tmp keeps no ACL ({planted.strip()}); the descriptor was checked")
