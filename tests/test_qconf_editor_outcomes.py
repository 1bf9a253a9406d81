"""qconf -a…/-m… with an editor that leaves the file alone, only touches it or fails:
Grid Engine's answer for each option (sge_edit decides "unchanged" by the file's
modification time and size), and the blank lines between objects of -su, -suser and
-sconf."""

import os

import pytest

SAME = "true"                           # leaves the file as written
TOUCH = "touch"                         # a new modification time, the same text
FAIL = "sh -c 'exit 3'"


def qconf(cell, *args, editor=None):
    return cell.run("qconf", *args, env={"EDITOR": editor} if editor else None)


def write(workdir, name, text):
    path = os.path.join(workdir, name)
    with open(path, "w") as fh:
        fh.write(text)
    return path


def outcome(proc):
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("args,listing,name", [
    (("-ap", "pe2"), ("-spl",), "pe2"),
    (("-ackpt", "ck1"), ("-sckptl",), "ck1"),
    (("-acal", "cal1"), ("-scall",), "cal1"),
    (("-ae", "newhost"), ("-sel",), "newhost"),
    (("-auser",), ("-suserl",), "template"),
    (("-aprj",), ("-sprjl",), "template"),
    (("-arqs", "rq1"), ("-srqsl",), "rq1"),
    (("-astree",), ("-sstree",), "Root"),
])
def test_an_add_from_an_unchanged_file_is_refused(cell, args, listing, name):
    proc = qconf(cell, *args, editor=SAME)
    assert outcome(proc) == (1, "", "file unchanged\n")
    assert name not in cell.run("qconf", *listing).stdout


def test_aconf_from_an_unchanged_file_adds_no_configuration(cell):
    proc = qconf(cell, "-aconf", "otherhost", editor=SAME)
    assert outcome(proc) == (1, "", "configuration unchanged\n")
    assert "otherhost" not in cell.run("qconf", "-sconfl").stdout
    # every host is tried; a blank line on stdout comes before each after the first
    proc = qconf(cell, "-aconf", "h1,h2", editor=SAME)
    assert outcome(proc) == (1, "\n", "configuration unchanged\nconfiguration unchanged\n")


def test_queues_and_host_groups_are_added_from_an_unchanged_file(cell):
    proc = qconf(cell, "-ahgrp", "@grp1", editor=SAME)
    assert outcome(proc) == (0, "", 'root@testhost added "@grp1" to host group list\n')
    proc = qconf(cell, "-aq", "new.q", editor=SAME)
    assert outcome(proc) == (0, "", 'root@testhost added "new.q" to cluster queue list\n')


@pytest.mark.parametrize("args", [
    ("-mp", "smp"), ("-mckpt", "ck"), ("-mcal", "cal"), ("-me", "testhost"),
    ("-muser", "u1"), ("-mprj", "p1"), ("-msconf",), ("-mstree",), ("-mrqs",),
])
def test_a_modify_from_an_unchanged_file_says_file_unchanged(objects, args):
    cell = objects
    proc = qconf(cell, *args, editor=SAME)
    assert outcome(proc) == (1, "", "file unchanged\n")


@pytest.mark.parametrize("args,answer", [
    (("-mp", "smp"), 'root@testhost modified "smp" in parallel environment list\n'),
    (("-mckpt", "ck"), 'root@testhost modified "ck" in checkpoint interface list\n'),
    (("-mcal", "cal"), 'root@testhost modified "cal" in calendar list\n'),
    (("-muser", "u1"), 'root@testhost modified "u1" in user list\n'),
    (("-mprj", "p1"), 'root@testhost modified "p1" in project list\n'),
])
def test_a_touched_file_is_a_change(objects, args, answer):
    proc = qconf(objects, *args, editor=TOUCH)
    assert outcome(proc) == (0, "", answer)


@pytest.mark.parametrize("args", [("-mq", "all.q"), ("-mhgrp", "@allhosts")])
def test_queues_and_host_groups_compare_the_object(objects, args):
    for editor in (SAME, TOUCH):
        proc = qconf(objects, *args, editor=editor)
        assert outcome(proc) == (1, "", "Object has not been changed\n"), editor


def test_rqs_unchanged_file_and_unchanged_object(objects):
    assert outcome(qconf(objects, "-mrqs", "rq", editor=SAME)) == (1, "", "file unchanged\n")
    assert outcome(qconf(objects, "-mrqs", "rq", editor=TOUCH)) == \
        (1, "", "Object has not been changed\n")


def test_mc_with_every_entry_as_it_was_is_not_an_error(cell):
    before = cell.run("qconf", "-sc").stdout
    for editor in (SAME, TOUCH):
        proc = qconf(cell, "-mc", editor=editor)
        assert outcome(proc) == (0, "", "Complex attribute configuration has not been changed\n")
    assert cell.run("qconf", "-sc").stdout == before


def test_mconf_unchanged(cell):
    proc = qconf(cell, "-mconf", editor=SAME)
    assert outcome(proc) == (1, "", "configuration unchanged\n")
    proc = qconf(cell, "-mconf", "global", editor=TOUCH)
    assert proc.returncode == 0 and "modified" in proc.stderr


def test_mu_unchanged_goes_on_with_the_next_list(cell):
    editor = ("sh -c 'case \"$(cat \"$0\")\" in *arusers*) "
              "sed -i \"s/^entries .*/entries gtnew/\" \"$0\";; esac'")
    proc = qconf(cell, "-mu", "deadlineusers,arusers", editor=editor)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "file unchanged\n"
    assert "gtnew" in cell.run("qconf", "-su", "arusers").stdout
    proc = qconf(cell, "-mu", "deadlineusers", editor=SAME)
    assert outcome(proc) == (0, "file unchanged\n", "")


@pytest.mark.parametrize("args", [
    ("-mq", "all.q"), ("-mp", "smp"), ("-mconf",), ("-mu", "arusers"), ("-mc",), ("-msconf",),
    ("-ap", "pe3"), ("-aq", "q3"), ("-ahgrp", "@g3"), ("-aconf", "h3"), ("-arqs", "r3"),
])
def test_a_failing_editor_ends_with_edit_failed(cell, args):
    proc = qconf(cell, *args, editor=FAIL)
    assert outcome(proc) == (1, "", "error: editor exited with error 3\nedit failed\n")


def test_su_and_suser_separate_objects_by_a_blank_line(cell, workdir):
    assert cell.run("qconf", "-au", "zed", "newacl").returncode == 0
    one = cell.run("qconf", "-su", "deadlineusers").stdout
    two = cell.run("qconf", "-su", "newacl").stdout
    proc = cell.run("qconf", "-su", "deadlineusers,newacl")
    assert outcome(proc) == (0, one + "\n" + two, "")
    proc = cell.run("qconf", "-su", "nosuch,deadlineusers,newacl")
    assert outcome(proc) == (1, one + "\n" + two, 'denied: access list "nosuch" does not exist\n')
    for user in ("u1", "u2"):
        path = write(workdir, user, f"name {user}\noticket 0\nfshare 0\ndelete_time 0\n"
                                    "default_project NONE\n")
        assert cell.run("qconf", "-Auser", path).returncode == 0
    u1 = cell.run("qconf", "-suser", "u1").stdout
    u2 = cell.run("qconf", "-suser", "u2").stdout
    assert cell.run("qconf", "-suser", "u1,u2").stdout == u1 + "\n" + u2
    # the blank line comes before every name after the first, shown or not
    proc = cell.run("qconf", "-suser", "u1,nosuch,u2")
    assert outcome(proc) == (1, u1 + "\n\n" + u2, "nosuch is not known as user\n")


def test_sconf_separates_hosts_by_a_blank_line(cell):
    one = cell.run("qconf", "-sconf", "global").stdout
    assert cell.run("qconf", "-sconf", "global,global").stdout == one + "\n" + one


@pytest.mark.parametrize("args,message", [
    (("-sp", "smp,make"), "smp,make is not a parallel environment\n"),
    (("-sprj", "a,b"), "a,b is not known as project\n"),
    (("-scal", "a,b"), "a,b is not a calendar\n"),
    (("-sckpt", "a,b"), "a,b is not a checkpointing interface definition\n"),
])
def test_single_object_shows_take_the_argument_as_one_name(cell, args, message):
    assert outcome(cell.run("qconf", *args)) == (1, "", message)


@pytest.fixture
def objects(cell, workdir):
    """A cell with a checkpointing environment, a calendar, a user, a project, a resource
    quota set and a share tree to modify."""
    files = {
        "-Ackpt": "ckpt_name ck\ninterface userdefined\nckpt_command none\nmigr_command none\n"
                  "restart_command none\nclean_command none\nckpt_dir /tmp\nsignal none\n"
                  "when sx\n",
        "-Acal": "calendar_name cal\nyear NONE\nweek mon-fri=8-18=off\n",
        "-Auser": "name u1\noticket 0\nfshare 0\ndelete_time 0\ndefault_project NONE\n",
        "-Aprj": "name p1\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n",
        "-Arqs": "{\n   name         rq\n   description  NONE\n   enabled      TRUE\n"
                 "   limit        to slots=10\n}\n",
        "-Astree": "id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1\n"
                   "id=1\nname=p1\ntype=1\nshares=10\nchildnodes=NONE\n",
    }
    for option, text in files.items():
        proc = cell.run("qconf", option, write(workdir, option[1:], text))
        assert proc.returncode == 0, (option, proc.stderr)
    return cell
