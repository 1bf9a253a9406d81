"""qselect end to end: the queue instances a selection names, one per line."""

import subprocess

from conftest import wait_for


def qselect(cell, *args, user=None):
    proc = cell.run("qselect", *args, user=user)
    return proc.returncode, proc.stdout.splitlines(), proc.stderr


def published(cell):
    """Wait for the daemon's first status (queue states come with it)."""
    wait_for(lambda: cell.run("qstat", "-f").stdout.count("all.q@") == 2)


def test_without_options_every_queue_instance_in_qstat_order(cell_two_hosts):
    published(cell_two_hosts)
    assert qselect(cell_two_hosts) == (0, ["all.q@node2", "all.q@testhost"], "")


def test_each_selection_and_all_of_them_together(cell_two_hosts, users):
    cell = cell_two_hosts
    published(cell)
    cell.run("qconf", "-au", "gtalice", "friends", check=True)
    cell.run("qconf", "-mattr", "queue", "user_lists", "friends", "all.q@node2", check=True)
    cell.run("qconf", "-mattr", "queue", "pe_list", "mpi", "all.q@testhost", check=True)
    cell.run("qmod", "-d", "all.q@node2", check=True)
    assert qselect(cell, "-q", "all.q@test*")[:2] == (0, ["all.q@testhost"])
    assert qselect(cell, "-qs", "d")[:2] == (0, ["all.q@node2"])
    assert qselect(cell, "-pe", "smp")[:2] == (0, ["all.q@node2"])
    assert qselect(cell, "-pe", "nosuch,mpi")[:2] == (0, ["all.q@node2", "all.q@testhost"])
    assert qselect(cell, "-l", "hostname=node2")[:2] == (0, ["all.q@node2"])
    assert qselect(cell, "-U", "gtbob")[:2] == (0, ["all.q@testhost"])
    assert qselect(cell, "-U", "gtalice")[:2] == (0, ["all.q@node2", "all.q@testhost"])
    assert qselect(cell, "-U", "gtalice", "-qs", "d", "-q", "all.q")[:2] == (0, ["all.q@node2"])
    # as a plain user, too
    assert qselect(cell, "-qs", "d", user="gtbob")[:2] == (0, ["all.q@node2"])


def test_nothing_selected_exits_1_silently(cell_two_hosts):
    published(cell_two_hosts)
    assert qselect(cell_two_hosts, "-q", "nosuch.q") == (1, [], "")
    assert qselect(cell_two_hosts, "-qs", "s") == (1, [], "")


def test_the_admin_idiom_disables_what_it_names(cell_two_hosts):
    cell = cell_two_hosts
    published(cell)
    proc = subprocess.run(["sh", "-c", "qmod -d $(qselect -l hostname=testhost)"],
                          env=cell.env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert qselect(cell, "-qs", "d")[:2] == (0, ["all.q@testhost"])


def test_bad_options_give_the_usage_and_exit_1(cell_two_hosts):
    for argv, word in ((["-u", "me"], '"-u"'), (["-qs", "Z"], '"-qs Z"'), (["-q"], '"-q"'),
                       (["-f"], '"-f"')):
        code, out, err = qselect(cell_two_hosts, *argv)
        assert code == 1 and out == []
        assert err.startswith("SGE 8.1.9\nusage: qselect [options]\n")
        assert err.splitlines()[-1] == f"invalid option argument {word}"
    code, out, err = qselect(cell_two_hosts, "-l", "nosuchthing=1")
    assert (code, out) == (1, []) and err.strip() == 'unknown resource "nosuchthing"'
    code, out, err = qselect(cell_two_hosts, "-help")
    assert code == 0 and out[:2] == ["SGE 8.1.9", "usage: qselect [options]"] and err == ""


def test_list_arguments_are_several_words_or_blank_separated(cell_two_hosts):
    cell = cell_two_hosts
    published(cell)
    cell.run("qconf", "-mattr", "queue", "pe_list", "mpi", "all.q@testhost", check=True)
    both = (0, ["all.q@node2", "all.q@testhost"])
    assert qselect(cell, "-q", "all.q@node2", "all.q@testhost")[:2] == both
    assert qselect(cell, "-q", "all.q@node2 all.q@testhost")[:2] == both
    assert qselect(cell, "-pe", "nosuch", "mpi", "-q", "all.q@node2")[:2] == (0, ["all.q@node2"])
    assert qselect(cell, "-pe", "nosuch mpi")[:2] == both
    assert qselect(cell, "-l", "arch=*", "hostname=node2")[:2] == (0, ["all.q@node2"])
