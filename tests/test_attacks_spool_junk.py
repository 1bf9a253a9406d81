"""Attacks on the daemon through what users may write into the spool: requests holding
texts no file can hold, and junk left in the folders everybody may write (the reply
folders, the requests' folder, the id claims). The daemon refuses the one and clears
the other away without stopping, and another user's job still runs at once.
"""

import os
import time

from attack_tools import forge_request, forge_submit, user_py
from conftest import wait_for
from qtools import jid_of


def _still_serves(cell, user, workdir):
    """Another user's job is taken in, runs and ends promptly."""
    began = time.time()
    proc = cell.qsub("-sync", "y", "-b", "y", "true", user=user, cwd=workdir, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert time.time() - began < 30


def test_a_text_no_file_can_hold_is_refused(cell, users, workdir):
    """A lone surrogate (an escape in a request written by hand) in a job's name, account
    or environment would have every accounting record and every listing fail: the
    request is refused, and nothing is queued."""
    alice, bob = users[0], users[1]
    for overrides in ({"name": "bad\ud800name"}, {"account": "acct\udfff"}, {"env": {"X": "\ud83d"}}):
        claimed, _name, answer = forge_submit(cell, alice, overrides, reply=True)
        assert answer[0] != 0, (overrides, answer)
        assert not os.path.exists(os.path.join(cell.root, "spool", "jobs", str(claimed)))
    # a byte that was not UTF-8 (a file name's, say) is kept as it came
    claimed, _name, answer = forge_submit(cell, alice, {"name": "ok\udcffname", "user_hold": True}, reply=True)
    assert answer[0] == 0, answer
    job = jid_of(cell.qsub("-h", "-b", "y", "true", user=alice, cwd=workdir))
    _name, answer = forge_request(cell, alice, "alter", {"targets": [{"id": job, "tasks": None}],
                                                         "changes": {"name": "x\ud800"}})
    assert answer[0] != 0, answer
    listing = cell.run("qstat", "-u", "*", text=False)
    assert listing.returncode == 0 and b"ok\xffname" in listing.stdout
    _still_serves(cell, bob, workdir)


def _spool(cell, *parts):
    return os.path.join(cell.root, "spool", *parts)


def test_junk_in_the_shared_folders_goes_whatever_its_shape_and_times(cell, users, workdir, monkeypatch):
    """What alice plants where everybody may write: a folder 3000 levels deep among the
    reply folders (removing it by recursion fails, and stopped every sweep after it), a
    hidden file in the requests' folder dated ten years ahead (it looked fresh for ever),
    and more id claims than any client holds. Each sweep goes, and so does the junk;
    bob's claim stays."""
    from gridtools.spool import ids, inbox, junk, replies
    monkeypatch.setenv("GRIDTOOLS_ROOT", cell.root)
    alice, bob = users[0], users[1]
    user_py(cell, alice, f"""
        import os, time
        os.chdir({_spool(cell, "replies")!r})
        os.mkdir("zzdeep")
        os.chdir("zzdeep")
        for _ in range(3000):
            os.mkdir("d")
            os.chdir("d")
        open("leaf", "w").close()
        hidden = os.path.join({_spool(cell, "requests")!r}, ".junk")
        open(hidden, "w").close()
        os.utime(hidden, (time.time() + 10 * 365 * 86400,) * 2)
        for n in range({ids.MOST_CLAIMS + 5}):
            open(os.path.join({_spool(cell, "jobids")!r}, str(9000000 + n)), "w").close()
        """, check=True)
    user_py(cell, bob, f"open({_spool(cell, 'jobids', '8999999')!r}, 'w').close()", check=True)
    later = time.time() + 2 * 86400
    replies.sweep(later)
    inbox.sweep(later)
    ids.sweep("job", time.time())
    assert not os.path.exists(_spool(cell, "requests", ".junk"))
    left = [n for n in os.listdir(_spool(cell, "jobids")) if n.isdigit() and int(n) >= 8999999]
    assert left == ["8999999"]
    wait_for(lambda: not os.path.exists(_spool(cell, "replies", "zzdeep")), timeout=30)
    junk.settle()



def test_a_deep_folder_queued_as_a_request_stops_nobody(cell, users, workdir):
    """A folder 3000 levels deep under a request's name is no request: it is refused and
    removed where it is (taking it in, then removing it by recursion, cut every pass
    short for good), and bob's job runs at once."""
    from attack_tools import poke
    alice, bob = users[0], users[1]
    name = "00000000000000000001-1.submit"
    user_py(cell, alice, f"""
        import os
        os.chdir({_spool(cell, "requests")!r})
        os.mkdir({name!r})
        os.chdir({name!r})
        for _ in range(3000):
            os.mkdir("d")
            os.chdir("d")
        """, check=True)
    poke(cell)
    _still_serves(cell, bob, workdir)
    _still_serves(cell, bob, workdir)
    wait_for(lambda: not any(name in n for n in os.listdir(_spool(cell, "requests"))), timeout=30)
    assert not os.path.exists(_spool(cell, "taken", name))
    messages = open(_spool(cell, "messages")).read()
    assert "cut short" not in messages and "could not all be written" not in messages


def test_a_tree_moved_into_the_spool_keeps_what_another_user_has_in_it(cell, users, workdir):
    """alice moves a folder of hers holding a folder of bob's (with his file) into the
    requests' folder: the daemon removes what she could remove, never bob's file."""
    from attack_tools import poke
    alice, bob = users[0], users[1]
    drop = os.path.join(workdir, "drop")
    user_py(cell, alice, f"import os; os.mkdir({drop!r}); os.chmod({drop!r}, 0o1777); "
                         f"open({drop!r} + '/alices', 'w').close()", check=True)
    user_py(cell, bob, f"""
        import os
        os.mkdir({drop!r} + "/bobs")
        with open({drop!r} + "/bobs/keep", "w") as fh:
            fh.write("bob's\\n")
        os.chmod({drop!r} + "/bobs", 0o755)
        """, check=True)
    name = "00000000000000000001-1.submit"
    user_py(cell, alice, f"import os; os.rename({drop!r}, {_spool(cell, 'requests', name)!r})", check=True)
    poke(cell)
    _still_serves(cell, bob, workdir)
    def hidden():
        found = [n for n in os.listdir(_spool(cell, "requests")) if n.startswith(f".planted.{name}.")]
        return _spool(cell, "requests", found[0]) if found else None
    # what alice may remove goes (her file), bob's folder stays with what is in it
    wait_for(lambda: not os.path.exists(_spool(cell, "requests", name)) and hidden()
             and not os.path.exists(os.path.join(hidden(), "alices")), timeout=20)
    assert open(os.path.join(hidden(), "bobs", "keep")).read() == "bob's\n"


def test_nobody_learns_a_request_name_in_time_to_take_it_first(cell, users, workdir):
    """alice watches the spool's shared folders and puts a file of hers at every request
    name she sees coming (a reply folder's, a script's, a file being written): bob's
    requests are queued all the same, under names she could not foresee."""
    from attack_tools import user_popen
    alice, bob = users[0], users[1]
    stop = os.path.join(workdir, "stop")
    squatter = user_popen(cell, alice, f"""
        import os, re
        replies, requests = {_spool(cell, "replies")!r}, {_spool(cell, "requests")!r}
        names, denied = set(), False
        while not os.path.exists({stop!r}):
            seen = []
            try:
                seen += os.listdir(replies)
            except PermissionError:
                denied = True
            for entry in os.listdir(requests):
                found = re.match(r"^\\.?(\\d{{20}}-\\d+(?:-[0-9a-f]+)?\\.[a-z_]+)", entry)
                if found:
                    seen.append(found.group(1))
            for name in seen:
                if name not in names:
                    names.add(name)
                    try:
                        open(os.path.join(requests, name), "x").close()
                    except OSError:
                        pass
        print(len(names), denied)
        """)
    try:
        job = jid_of(cell.qsub("-h", "-b", "y", "true", user=bob, cwd=workdir))
        failed = [n for n in range(10)
                  if cell.run("qalter", "-N", f"w{n}", str(job), user=bob, cwd=workdir).returncode != 0]
        assert failed == []
    finally:
        open(stop, "w").close()
        out, _err = squatter.communicate(timeout=30)
    assert out.split()[1] == "True"        # (the reply folders cannot be listed)


def test_trees_their_owner_made_unwritable_go_in_one_sweep(cell, users, workdir, monkeypatch):
    """Thirty trees of alice's, deeper than the daemon empties itself and with a folder she
    made unwritable at the bottom, planted among the reservation id claims: one sweep
    hands them all to one removal as alice, which opens her folders first."""
    from gridtools.spool import ids, junk
    monkeypatch.setenv("GRIDTOOLS_ROOT", cell.root)
    alice = users[0]
    # (each tree is built in the scratch folder and moved in whole: the daemon's own sweep
    # may come at any time, and must not meet a tree half made)
    user_py(cell, alice, f"""
        import os
        for n in range(30):
            path = os.path.join({workdir!r}, f"t{{n}}")
            bottom = os.path.join(path, *["d"] * {junk.MOST_DEPTH + 2})
            os.makedirs(bottom)
            open(os.path.join(bottom, "f"), "w").close()
            os.chmod(bottom, 0o555)
            os.rename(path, os.path.join({_spool(cell, "arids")!r}, f"t{{n}}"))
        """, check=True)
    junk.begin()
    ids.sweep("ar", time.time())
    junk.end()
    wait_for(lambda: not [n for n in os.listdir(_spool(cell, "arids")) if n.startswith("t")], timeout=30)
    junk.settle()


def test_folders_in_the_way_of_hiding_planted_entries_wedge_nothing(cell, users, workdir):
    """alice plants more folders than an intake takes at once, under request names that
    sort first, each with a folder already at the name a planted entry used to be moved
    to: every one is moved aside all the same, and bob's job is taken in and runs."""
    from attack_tools import poke
    from gridtools.daemon.intake import BATCH
    alice, bob = users[0], users[1]
    user_py(cell, alice, f"""
        import os
        top = {_spool(cell, "requests")!r}
        for i in range({BATCH} + 1):
            name = "%020d-1.submit" % (100 + i)
            os.makedirs(os.path.join(top, ".planted." + name, "keep"))
            os.mkdir(os.path.join(top, name))
        """, check=True)
    poke(cell)
    _still_serves(cell, bob, workdir)


def test_an_entry_swapped_while_it_is_taken_leaves_the_daemons_folder(cell, users, monkeypatch):
    """The request file the daemon looked at is swapped for a folder of alice's before it
    is moved into taken/ (a race she may win): the folder does not stay there."""
    from gridtools.spool import inbox
    monkeypatch.setenv("GRIDTOOLS_ROOT", cell.root)
    cell.stop_daemon()                  # (the daemon takes itself, below)
    alice = users[0]
    name = "00000000000000000007-1.submit"
    user_py(cell, alice, f"""
        import os
        top = {_spool(cell, "requests")!r}
        open(os.path.join(top, {name!r}), "w").close()
        os.makedirs(os.path.join(top, ".swap", "d"))
        """, check=True)
    real_claim = inbox.claim

    def swapped_then_claimed(which):          # (alice wins the race: a folder is there now)
        user_py(cell, alice, f"""
            import os
            top = {_spool(cell, "requests")!r}
            os.unlink(os.path.join(top, {name!r}))
            os.rename(os.path.join(top, ".swap"), os.path.join(top, {name!r}))
            """, check=True)
        return real_claim(which)
    monkeypatch.setattr(inbox, "claim", swapped_then_claimed)
    req = inbox.take(name)
    assert req.kind == "invalid" and os.path.basename(req.path).startswith(f".planted.{name}.")
    assert not os.path.lexists(_spool(cell, "taken", name))
