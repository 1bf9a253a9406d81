"""qconf attribute options answered as Grid Engine answers them: the answers that
went well (the "modified" line and the master's notices) on standard output, the
failures on standard error; -mattr's refusal of NONE for a list; -msconf's line."""

import os


def qconf(cell, *args, **kw):
    return cell.run("qconf", *args, **kw)


def modified(proc, name="all.q", kind="cluster queue"):
    """True when the last line of stdout is the master's "modified" answer."""
    last = proc.stdout.splitlines()[-1]
    return last.endswith(f' modified "{name}" in {kind} list') and "@" in last.split()[0]


def attr_line(cell, attr, queue="all.q"):
    text = qconf(cell, "-sq", queue, check=True).stdout
    return next(line.split(None, 1)[1] for line in text.splitlines() if line.split()[:1] == [attr])


def test_answers_that_went_well_go_to_stdout(cell):
    proc = qconf(cell, "-mattr", "queue", "slots", "3", "all.q")
    assert (proc.stderr, proc.returncode) == ("", 0)
    assert modified(proc) and len(proc.stdout.splitlines()) == 1
    proc = qconf(cell, "-aattr", "queue", "pe_list", "mpi2", "all.q")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr != ""
    # one object changed, one refused: each answer on its own stream, exit 1
    proc = qconf(cell, "-mattr", "queue", "slots", "2", "all.q", "nosuch.q")
    assert proc.returncode == 1
    assert modified(proc)
    assert proc.stderr == 'No cluster queue or queue instance matches the phrase "nosuch.q"\n'
    qconf(cell, "-mattr", "queue", "slots", "4", "all.q@testhost", check=True)
    proc = qconf(cell, "-purge", "queue", "slots", "all.q@testhost")
    assert (proc.stderr, proc.returncode) == ("", 0) and modified(proc)


def test_file_forms_answer_on_stdout(cell, workdir):
    path = os.path.join(workdir, "attrs")
    with open(path, "w") as fh:
        fh.write("seq_no 7\n")
    for option in ("-Mattr", "-Rattr"):
        proc = qconf(cell, option, "queue", path, "all.q")
        assert (proc.stderr, proc.returncode) == ("", 0) and modified(proc)
    assert attr_line(cell, "seq_no") == "7"


def test_msconf_says_changed_scheduler_configuration(cell, workdir):
    shown = qconf(cell, "-ssconf", check=True).stdout
    path = os.path.join(workdir, "sched")
    with open(path, "w") as fh:
        fh.write(shown)
    proc = qconf(cell, "-Msconf", path)
    assert (proc.stdout, proc.stderr, proc.returncode) == ("", "changed scheduler configuration\n", 0)
    proc = qconf(cell, "-msconf", env={"EDITOR": "sed -i 's/^maxujobs .*/maxujobs 6/'"})
    assert (proc.stdout, proc.stderr, proc.returncode) == ("", "changed scheduler configuration\n", 0)


def test_dattr_of_missing_names_tells_and_removes_the_others(cell):
    qconf(cell, "-rattr", "queue", "load_thresholds", "np_load_avg=1.75,load_avg=4", "all.q", check=True)
    proc = qconf(cell, "-dattr", "queue", "load_thresholds", "load_avg,nope", "all.q")
    assert (proc.stderr, proc.returncode) == ("", 0)
    lines = proc.stdout.splitlines()
    assert lines[:2] == ['"nope" does not exist in "load_thresholds" of "all.q"', ""]
    assert modified(proc) and len(lines) == 3
    assert attr_line(cell, "load_thresholds") == "np_load_avg=1.75"
    # none of them there: the notices, the object unchanged, still exit 0
    before = attr_line(cell, "pe_list")
    proc = qconf(cell, "-dattr", "queue", "pe_list", "nope1,nope2", "all.q")
    assert (proc.stderr, proc.returncode) == ("", 0)
    assert proc.stdout.splitlines()[:4] == ['"nope1" does not exist in "pe_list" of "all.q"', "",
                                           '"nope2" does not exist in "pe_list" of "all.q"', ""]
    assert modified(proc)
    assert attr_line(cell, "pe_list") == before


def test_aattr_of_a_present_name_is_a_notice(cell):
    qconf(cell, "-rattr", "queue", "load_thresholds", "np_load_avg=1.75", "all.q", check=True)
    proc = qconf(cell, "-aattr", "queue", "load_thresholds", "swap_free=2G,np_load_avg=1.7", "all.q")
    assert (proc.stderr, proc.returncode) == ("", 0)
    assert proc.stdout.splitlines()[0] == \
        'No modification because "np_load_avg" already exists in "load_thresholds" of "all.q"'
    assert modified(proc) and len(proc.stdout.splitlines()) == 2
    # the attribute is left as it was: the new name is not added either
    assert attr_line(cell, "load_thresholds") == "np_load_avg=1.75"
    # a queue's host list: the whole change is refused, with only the notice
    qconf(cell, "-rattr", "queue", "hostlist", "testhost", "all.q", check=True)
    proc = qconf(cell, "-aattr", "queue", "hostlist", "testhost", "all.q")
    assert (proc.stdout, proc.stderr, proc.returncode) == \
        ('No modification because "testhost" already exists in "hostlist" of "all.q"\n', "", 0)


def test_mattr_refuses_none_for_a_list(cell):
    refusal = '"NONE" is not a valid list attribute value for -mattr.  Try using -rattr instead.\n'
    qconf(cell, "-rattr", "queue", "load_thresholds", "np_load_avg=1.75", "all.q", check=True)
    pe_list = attr_line(cell, "pe_list")
    for attr, value in (("pe_list", "NONE"), ("load_thresholds", "NONE"), ("user_lists", "NONE"),
                        ("load_thresholds", "[testhost=NONE]")):
        proc = qconf(cell, "-mattr", "queue", attr, value, "all.q")
        assert (proc.stdout, proc.stderr, proc.returncode) == ("", refusal, 1), (attr, value)
    assert attr_line(cell, "pe_list") == pe_list
    assert attr_line(cell, "load_thresholds") == "np_load_avg=1.75"
    proc = qconf(cell, "-mattr", "exechost", "complex_values", "NONE", "testhost")
    assert (proc.stdout, proc.stderr, proc.returncode) == ("", refusal, 1)
    # a value that is not a list, and -rattr, may still be NONE
    qconf(cell, "-mattr", "queue", "qtype", "NONE", "all.q", check=True)
    qconf(cell, "-mattr", "queue", "calendar", "NONE", "all.q", check=True)
    qconf(cell, "-rattr", "queue", "load_thresholds", "NONE", "all.q", check=True)
    assert attr_line(cell, "load_thresholds") == "NONE"


def test_mattr_tells_the_names_it_adds(cell):
    qconf(cell, "-rattr", "queue", "load_thresholds", "np_load_avg=1.75", "all.q", check=True)
    proc = qconf(cell, "-mattr", "queue", "load_thresholds", "np_load_avg=2,swap_free=2G", "all.q")
    assert (proc.stderr, proc.returncode) == ("", 0)
    lines = proc.stdout.splitlines()
    assert lines[:2] == ['Unable to find "swap_free" in "load_thresholds" of "all.q" - Adding new element.', ""]
    assert modified(proc) and len(lines) == 3
    assert attr_line(cell, "load_thresholds") == "np_load_avg=2,swap_free=2G"
    qconf(cell, "-rattr", "queue", "load_thresholds", "NONE", "all.q", check=True)
    proc = qconf(cell, "-mattr", "queue", "load_thresholds", "np_load_avg=3", "all.q")
    assert (proc.stderr, proc.returncode) == ("", 0)
    assert proc.stdout.splitlines()[:2] == ['"load_thresholds" of "all.q" is empty - Adding new element(s).', ""]
    assert modified(proc)
    assert attr_line(cell, "load_thresholds") == "np_load_avg=3"
