"""qconf's attribute options on lists as Grid Engine's master applies them (-mattr
changes the given elements only and appends the missing ones; a changed name=value
moves to the end), and the answers of one command in the order they are given when
standard output and error are one pipe."""

import shlex


def qconf(cell, *args, **kw):
    return cell.run("qconf", *args, **kw)


def joined(cell, *args):
    """qconf with standard error on standard output: (text, exit code)."""
    proc = cell.run("sh", "-c", "exec qconf " + " ".join(shlex.quote(a) for a in args) + " 2>&1")
    return proc.stdout, proc.returncode


def shown(cell, option, name, attr):
    text = qconf(cell, option, name, check=True).stdout
    return next(line.split(None, 1)[1] for line in text.splitlines() if line.split()[:1] == [attr])


def modified_line(line, name, kind):
    return line.endswith(f' modified "{name}" in {kind} list') and "@" in line.split()[0]


def test_mattr_of_a_name_list_keeps_the_names_there(cell):
    qconf(cell, "-rattr", "queue", "pe_list", "make smp", "all.q", check=True)
    proc = qconf(cell, "-mattr", "queue", "pe_list", "mpi", "all.q")
    assert (proc.stderr, proc.returncode) == ("", 0)
    lines = proc.stdout.splitlines()
    assert lines[:2] == ['Unable to find "mpi" in "pe_list" of "all.q" - Adding new element.', ""]
    assert len(lines) == 3 and modified_line(lines[2], "all.q", "cluster queue")
    assert shown(cell, "-sq", "all.q", "pe_list") == "make smp mpi"
    # names there already: nothing told, nothing changed
    proc = qconf(cell, "-mattr", "queue", "pe_list", "smp,make", "all.q")
    assert (proc.stderr, proc.returncode) == ("", 0)
    assert len(proc.stdout.splitlines()) == 1 and modified_line(proc.stdout.strip(), "all.q", "cluster queue")
    assert shown(cell, "-sq", "all.q", "pe_list") == "make smp mpi"
    # an empty list gets the names with one notice
    proc = qconf(cell, "-mattr", "queue", "user_lists", "arusers", "all.q")
    assert proc.stdout.splitlines()[:2] == ['"user_lists" of "all.q" is empty - Adding new element(s).', ""]
    assert shown(cell, "-sq", "all.q", "user_lists") == "arusers"
    proc = qconf(cell, "-mattr", "queue", "user_lists", "deadlineusers", "all.q")
    assert proc.returncode == 0
    assert shown(cell, "-sq", "all.q", "user_lists") == "arusers deadlineusers"
    # -rattr still sets the whole list
    qconf(cell, "-rattr", "queue", "pe_list", "smp", "all.q", check=True)
    assert shown(cell, "-sq", "all.q", "pe_list") == "smp"


def test_mattr_of_name_lists_of_other_objects(cell):
    # an execution host's, a parallel environment's and a host group's lists
    qconf(cell, "-rattr", "exechost", "user_lists", "arusers", "testhost", check=True)
    proc = qconf(cell, "-mattr", "exechost", "user_lists", "deadlineusers", "testhost")
    assert (proc.stderr, proc.returncode) == ("", 0)
    assert proc.stdout.splitlines()[0] == \
        'Unable to find "deadlineusers" in "user_lists" of "testhost" - Adding new element.'
    assert shown(cell, "-se", "testhost", "user_lists") == "arusers deadlineusers"
    qconf(cell, "-rattr", "pe", "xuser_lists", "arusers", "smp", check=True)
    assert qconf(cell, "-mattr", "pe", "xuser_lists", "deadlineusers", "smp").returncode == 0
    assert shown(cell, "-sp", "smp", "xuser_lists") == "arusers deadlineusers"
    qconf(cell, "-ahgrp", "@g1", env={"EDITOR": "true"}, check=True)
    qconf(cell, "-rattr", "hostgroup", "hostlist", "testhost", "@g1", check=True)
    qconf(cell, "-mattr", "hostgroup", "hostlist", "@allhosts", "@g1", check=True)
    assert shown(cell, "-shgrp", "@g1", "hostlist") == "testhost @allhosts"


def test_mattr_moves_a_changed_value_to_the_end(cell):
    qconf(cell, "-rattr", "queue", "load_thresholds", "np_load_avg=1.75,swap_free=2G", "all.q", check=True)
    proc = qconf(cell, "-mattr", "queue", "load_thresholds", "np_load_avg=2", "all.q")
    assert (proc.stderr, proc.returncode) == ("", 0) and len(proc.stdout.splitlines()) == 1
    assert shown(cell, "-sq", "all.q", "load_thresholds") == "swap_free=2G,np_load_avg=2"
    # a value given as it is stays where it is
    qconf(cell, "-mattr", "queue", "load_thresholds", "swap_free=2G", "all.q", check=True)
    assert shown(cell, "-sq", "all.q", "load_thresholds") == "swap_free=2G,np_load_avg=2"


def test_notices_for_a_queue_instance_name_the_cluster_queue(cell):
    # a host without a list of its own gets one with only the names given
    proc = qconf(cell, "-mattr", "queue", "pe_list", "mpi", "all.q@testhost")
    assert (proc.stderr, proc.returncode) == ("", 0)
    assert proc.stdout.splitlines()[0] == '"pe_list" of "all.q" is empty - Adding new element(s).'
    assert shown(cell, "-sq", "all.q", "pe_list") == "make smp mpi,[testhost=mpi]"
    proc = qconf(cell, "-dattr", "queue", "pe_list", "nope", "all.q@testhost")
    assert (proc.stderr, proc.returncode) == ("", 0)
    assert proc.stdout.splitlines()[0] == '"nope" does not exist in "pe_list" of "all.q"'
    assert modified_line(proc.stdout.splitlines()[-1], "all.q", "cluster queue")


def test_answers_come_in_order_on_one_pipe(cell):
    missing = 'No cluster queue or queue instance matches the phrase "{}"'
    text, code = joined(cell, "-mattr", "queue", "slots", "2", "nosuch.q", "all.q", "other.q")
    lines = text.splitlines()
    assert code == 1 and len(lines) == 3
    assert lines[0] == missing.format("nosuch.q")
    assert modified_line(lines[1], "all.q", "cluster queue")
    assert lines[2] == missing.format("other.q")
    # -dattr where one object fails: the notice and answer of each object in turn
    text, code = joined(cell, "-dattr", "queue", "pe_list", "nope", "nosuch.q", "all.q")
    assert code == 1
    assert text.splitlines() == [missing.format("nosuch.q"),
                                 '"nope" does not exist in "pe_list" of "all.q"', "",
                                 text.splitlines()[3]]
    assert modified_line(text.splitlines()[3], "all.q", "cluster queue")
    # what one option shows comes before the failure of the next
    text, code = joined(cell, "-sql", "-sq", "nosuch.q")
    assert code == 1
    assert text.splitlines()[0] == "all.q"
    assert text.splitlines()[-1] != "all.q"
