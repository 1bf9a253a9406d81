"""qconf changes: round trips of every object kind, -A of a renamed copy, refusals.

For every kind: show -> file -> -M from that file -> show again is byte
identical; -A of the shown text under another name creates an equal
object; a mutated file is refused naming the field and nothing changes.
"""

import os
import re

import pytest

CKPT = """ckpt_name          ckpt_test
interface          USERDEFINED
ckpt_command       none
migr_command       none
restart_command    none
clean_command      none
ckpt_dir           /tmp
signal             none
when               xs
"""
CALENDAR = "calendar_name    night\nyear             25.12.2026=off\nweek             mon-fri=20-6=suspended\n"
PROJECT = "name projA\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n"
USER = "name alice\noticket 0\nfshare 10\ndelete_time 0\ndefault_project NONE\n"
RQS = """{
   name         max_slots_per_user
   description  "per-user slot cap (reference)"
   enabled      TRUE
   limit        users {*} queues all.q to slots=100
}
"""
SHARETREE = ("id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,2\nid=1\nname=projA\ntype=1\nshares=60\n"
             "childnodes=NONE\nid=2\nname=default\ntype=0\nshares=40\nchildnodes=NONE\n")


def write(workdir, name, text):
    path = os.path.join(workdir, name)
    with open(path, "w") as fh:
        fh.write(text)
    return path


def ok(cell, *args, **kw):
    proc = cell.run("qconf", *args, **kw)
    assert proc.returncode == 0, proc.stderr
    return proc


def seed(cell, workdir):
    """Objects that a fresh cell lacks."""
    ok(cell, "-Ackpt", write(workdir, "ckpt", CKPT))
    ok(cell, "-Acal", write(workdir, "cal", CALENDAR))
    ok(cell, "-Aprj", write(workdir, "prj", PROJECT))
    ok(cell, "-Auser", write(workdir, "user", USER))
    ok(cell, "-Arqs", write(workdir, "rqs", RQS))
    ok(cell, "-Astree", write(workdir, "stree", SHARETREE))


# show option, name, -M option, name field written as the first word of a line
KINDS = [
    ("-sq", "all.q", "-Mq", "-Aq", "qname"),
    ("-se", "testhost", "-Me", "-Ae", "hostname"),
    ("-shgrp", "@allhosts", "-Mhgrp", "-Ahgrp", "group_name"),
    ("-sp", "smp", "-Mp", "-Ap", "pe_name"),
    ("-sckpt", "ckpt_test", "-Mckpt", "-Ackpt", "ckpt_name"),
    ("-scal", "night", "-Mcal", "-Acal", "calendar_name"),
    ("-su", "arusers", "-Mu", "-Au", "name"),
    ("-suser", "alice", "-Muser", "-Auser", "name"),
    ("-sprj", "projA", "-Mprj", "-Aprj", "name"),
    ("-srqs", "max_slots_per_user", "-Mrqs", "-Arqs", "name"),
]


def without_load(text):
    """An execution host's text without what the host reports (it changes by itself)."""
    lines, skip = [], False
    for line in text.splitlines():
        if line.startswith(("load_values", "processors")):
            skip = line.endswith("\\")
            continue
        if skip:
            skip = line.endswith("\\")
            continue
        lines.append(line)
    return "\n".join(lines)


def rename(text, field, new):
    """``text`` with the value of ``field`` replaced by ``new`` (column kept)."""
    out = []
    for line in text.splitlines(keepends=True):
        match = re.match(r"(\s*(\S+)\s+)\S.*\n", line)
        if match and match.group(2) == field:
            line = match.group(1) + new + "\n"
        out.append(line)
    return "".join(out)


@pytest.mark.parametrize("show,name,modify,add,field", KINDS)
def test_round_trip_and_add_renamed_copy(cell, workdir, show, name, modify, add, field):
    seed(cell, workdir)
    shown = ok(cell, show, name).stdout
    path = write(workdir, "obj", shown)
    proc = ok(cell, modify, path)
    assert "modified" in proc.stderr
    again = ok(cell, show, name).stdout
    if show == "-se":
        assert without_load(again) == without_load(shown)
        shown = without_load(shown)
    else:
        assert again == shown
    new = "copy" if field != "group_name" else "@copy"
    if show == "-se":
        new = "otherhost"
    copy = write(workdir, "copy", rename(shown, field, new))
    proc = ok(cell, add, copy)
    assert f'added "{new}" to' in proc.stderr
    created = ok(cell, show, new).stdout
    if show == "-se":
        created = without_load(created)
    assert created == rename(shown, field, new)


@pytest.mark.parametrize("show,modify", [("-ssconf", "-Msconf"), ("-sc", "-Mc"), ("-sstree", "-Mstree")])
def test_round_trip_of_single_objects(cell, workdir, show, modify):
    seed(cell, workdir)
    shown = ok(cell, show).stdout
    ok(cell, modify, write(workdir, "obj", shown))
    assert ok(cell, show).stdout == shown


def test_round_trip_of_configurations(cell, workdir):
    shown = ok(cell, "-sconf", "global").stdout
    ok(cell, "-Mconf", write(workdir, "global", shown))
    assert ok(cell, "-sconf").stdout == shown
    local = write(workdir, "testhost", "#testhost:\nmailer                       /bin/true\n")
    proc = ok(cell, "-Aconf", local)
    assert proc.stderr.endswith('added "testhost" to configuration list\n')
    assert ok(cell, "-sconfl").stdout == "testhost\n"
    text = ok(cell, "-sconf", "testhost").stdout
    assert text == "#testhost:\nmailer                       /bin/true\n\n"
    ok(cell, "-Mconf", write(workdir, "testhost", text))
    assert ok(cell, "-sconf", "testhost").stdout == text
    assert cell.run("qconf", "-Aconf", local).returncode == 1
    ok(cell, "-dconf", "testhost")
    assert cell.run("qconf", "-sconfl").returncode == 1
    assert cell.run("qconf", "-dconf", "global").returncode == 1


MUTATIONS = [
    ("-sp", "smp", "-Mp", "slots", "drop", 'missing attribute "slots"'),
    ("-sp", "smp", "-Mp", "slots", "many", 'for attribute "slots"'),
    ("-sp", "smp", "-Mp", "user_lists", "nolist", 'user list "nolist" which does not exist'),
    ("-sq", "all.q", "-Mq", "pe_list", "nope", 'Parallel environment "nope" does not exist'),
    ("-sq", "all.q", "-Mq", "calendar", "nocal", 'Calendar "nocal" does not exist'),
    ("-sq", "all.q", "-Mq", "slots", "-3", 'for attribute "slots"'),
    ("-sq", "all.q", "-Mq", "hostlist", "nohost", 'execution host "nohost" which does not exist'),
    ("-sq", "all.q", "-Mq", "rerun", "drop", 'missing attribute "rerun"'),
    ("-shgrp", "@allhosts", "-Mhgrp", "hostlist", "@nogroup", 'host group "@nogroup" which does not exist'),
    ("-su", "arusers", "-Mu", "type", "FOO", 'for attribute "type"'),
    ("-suser", "alice", "-Muser", "default_project", "noprj", 'project "noprj" which does not exist'),
    ("-sprj", "projA", "-Mprj", "acl", "nolist", 'user list "nolist" which does not exist'),
    ("-scal", "night", "-Mcal", "week", "funday=on", 'for attribute "week"'),
    ("-sckpt", "ckpt_test", "-Mckpt", "when", "q", 'Invalid "when" attribute for ckpt "ckpt_test"'),
    ("-sckpt", "ckpt_test", "-Mckpt", "interface", "magic", "no valid checkpoint interface magic"),
    ("-sckpt", "ckpt_test", "-Mckpt", "signal", "BOGUS",
     '"BOGUS" is not a signal string (like HUP, INT, WINCH, ..)'),
    ("-sckpt", "ckpt_test", "-Mckpt", "migr_command", "echo $bogus_var",
     'parameter migr_command of ckpt environment "ckpt_test": unknown variable "bogus_var"'),
    ("-sckpt", "ckpt_test", "-Mckpt", "clean_command", "echo $",
     'parameter clean_command of ckpt environment "ckpt_test": variables need at least one character'),
    ("-se", "testhost", "-Me", "user_lists", "nolist", 'user list "nolist" which does not exist'),
]


def mutate(text, field, value):
    out = []
    for line in text.splitlines(keepends=True):
        if line.split()[:1] == [field]:
            if value == "drop":
                continue
            line = f"{field} {value}\n"
        out.append(line)
    return "".join(out)


@pytest.mark.parametrize("show,name,modify,field,value,message", MUTATIONS)
def test_mutated_file_is_refused_and_nothing_changes(cell, workdir, show, name, modify, field, value,
                                                     message):
    seed(cell, workdir)
    before = cell.run("qconf", show, name).stdout
    proc = cell.run("qconf", modify, write(workdir, "bad", mutate(before, field, value)))
    assert proc.returncode != 0
    assert message in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    after = cell.run("qconf", show, name).stdout
    assert without_load(after) == without_load(before)


def test_unknown_reference_in_rqs_and_sharetree(cell, workdir):
    seed(cell, workdir)
    bad = RQS.replace("slots=100", "nosuch=1").replace("max_slots_per_user", "other")
    proc = cell.run("qconf", "-Arqs", write(workdir, "bad", bad))
    assert proc.returncode == 1 and 'complex attribute "nosuch"' in proc.stderr
    assert cell.run("qconf", "-srqsl").stdout == "max_slots_per_user\n"
    tree = SHARETREE.replace("name=projA", "name=projZ")
    proc = cell.run("qconf", "-Mstree", write(workdir, "tree", tree))
    assert proc.returncode == 1 and 'project "projZ"' in proc.stderr
    assert cell.run("qconf", "-sstree").stdout == SHARETREE


def test_adding_an_existing_object_is_refused(cell, workdir):
    path = write(workdir, "q", cell.run("qconf", "-sq", "all.q").stdout)
    proc = cell.run("qconf", "-Aq", path)
    assert (proc.stderr, proc.returncode) == ('cluster queue "all.q" already exists\n', 1)
    proc = cell.run("qconf", "-Ap", write(workdir, "p", cell.run("qconf", "-sp", "smp").stdout))
    assert (proc.stderr, proc.returncode) == ('parallel environment "smp" already exists\n', 1)


def test_modifying_a_missing_object_is_refused(cell, workdir):
    text = cell.run("qconf", "-sp", "smp").stdout.replace("pe_name            smp", "pe_name            ghost")
    proc = cell.run("qconf", "-Mp", write(workdir, "p", text))
    assert (proc.stderr, proc.returncode) == ('denied: parallel environment "ghost" does not exist\n', 1)
    assert cell.run("qconf", "-sp", "ghost").returncode == 1


def test_reserved_host_names_are_refused(cell, workdir):
    for name in ("global", "template", "all", "default", "unknown", "none"):
        for option in ("-ah", "-as"):
            proc = cell.run("qconf", option, name)
            assert proc.returncode == 1 and "reserved" in proc.stderr, (option, name)
    text = cell.run("qconf", "-se", "testhost").stdout.replace("testhost", "unknown", 1)
    proc = cell.run("qconf", "-Ae", write(workdir, "h", without_load(text) + "\n"))
    assert proc.returncode == 1 and "reserved" in proc.stderr
    assert cell.run("qconf", "-sh").stdout == "testhost\n"


def test_ckpt_interface_and_when_are_checked_and_kept_as_grid_engine_keeps_them(cell, workdir):
    """Interface names in any case (kept as written); ``when`` letters x s m r stored in
    that order, or n alone; anything else refused in the master's words, nothing stored."""
    def ckpt(name, interface, when):
        return CKPT.replace("ckpt_test", name).replace("USERDEFINED", interface).replace(
            "when               xs", f"when               {when}")

    def shown(name):
        lines = ok(cell, "-sckpt", name).stdout.splitlines()
        return lines[1], lines[-1]
    for name, interface, when, stored in (("c1", "userdefined", "sx", "xs"), ("c2", "cpr", "rmxs", "xsmr"),
                                          ("c3", "Application-Level", "n", "n"), ("c4", "hibernator", "mm", "m"),
                                          ("c5", "TRANSPARENT", "r", "r"), ("c7", "cray-ckpt", "x", "x")):
        ok(cell, "-Ackpt", write(workdir, name, ckpt(name, interface, when)))
        assert shown(name) == (f"interface          {interface}", f"when               {stored}")
    ok(cell, "-Mckpt", write(workdir, "c1", ckpt("c1", "Cpr", "ms")))
    assert shown("c1") == ("interface          Cpr", "when               sm")
    for interface, when, message in (("magic", "sx", "no valid checkpoint interface magic"),
                                     ("cpr", "sn", 'Invalid "when" attribute for ckpt "bad"'),
                                     ("cpr", "sq", 'Invalid "when" attribute for ckpt "bad"'),
                                     ("magic", "q", 'Invalid "when" attribute for ckpt "bad"')):
        proc = cell.run("qconf", "-Ackpt", write(workdir, "bad", ckpt("bad", interface, when)))
        assert (proc.returncode, proc.stderr) == (1, message + "\n"), (interface, when)
        proc = cell.run("qconf", "-Mckpt", write(workdir, "c1", ckpt("c1", interface, when)))
        assert proc.returncode == 1 and proc.stderr == message.replace('"bad"', '"c1"') + "\n"
    assert ok(cell, "-sckptl").stdout == "c1\nc2\nc3\nc4\nc5\nc7\n"
    assert shown("c1") == ("interface          Cpr", "when               sm")
    editor = write(workdir, "editor", "#!/bin/sh\nsed -i 's/^when .*/when rx/' \"$1\"\n")
    os.chmod(editor, 0o755)
    ok(cell, "-ackpt", "c6", env={"EDITOR": editor})
    assert shown("c6") == ("interface          userdefined", "when               xr")
