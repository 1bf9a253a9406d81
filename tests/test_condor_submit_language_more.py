"""condor_submit's submit language as HTCondor 24's submit code reads it: a macro
assigned in terms of itself, items on the opening line of a multi-line queue list, a
queue statement in an included file, ``-Attr =``, ``iterate`` and ``from table``, and
the ``env`` command's old-syntax environment (``Env``/``EnvDelim``)."""

import os

import pytest

from condortools import submit, write
from conftest import wait_for
from gridtools.errors import InputError
from gridtools.formats.condor.jobad import SubmitContext
from gridtools.formats.condor.submit import parse_submit

EXE = "executable = /bin/echo\n"


def ads_of(text, cwd="/tmp"):
    """The ads of a description, built as condor_submit builds them."""
    ctx = SubmitContext(cwd=cwd, owner="alice", now=1700000000)
    return parse_submit(text, cwd=cwd).job_ads(7, ctx)


def values(text, name, cwd="/tmp"):
    return [ad.eval(name) for ad in ads_of(text, cwd)]


def refusal(text, cwd="/tmp"):
    with pytest.raises(InputError) as info:
        ads_of(text, cwd)
    return str(info.value)


# ---------------------------------------------------------------- self references

def test_a_macro_assigned_in_terms_of_itself_appends_to_its_earlier_value():
    assert values(EXE + "foo = a\nfoo = $(foo) b\n+F = \"$(foo)\"\nqueue\n", "F") == ["a b"]
    assert values(EXE + "foo = $(foo) b\n+F = \"$(foo)\"\nqueue\n", "F") == [" b"]
    assert values(EXE + "foo = a\nFOO = $(Foo) b\nfoo = $(foo) c\n+F = \"$(foo)\"\nqueue\n", "F") == ["a b c"]


def test_requirements_appended_to_keeps_the_earlier_clause():
    ad = ads_of(EXE + "requirements = Memory > 1\nrequirements = $(requirements) && Cpus > 1\nqueue\n")[0]
    assert ad.lookup("Requirements").unparse().startswith("(Memory > 1 && Cpus > 1) && ")


def test_only_references_to_itself_take_the_earlier_value_others_stay_late():
    text = (EXE + "foo = dir/a.txt\nfoo = $(foo:none) $Fn(foo) $(bar)\nbar = B\n"
            "empty =\nempty = $(empty:dflt)\n+F = \"$(foo)\"\n+E = \"$(empty)\"\nqueue\n")
    ad = ads_of(text)[0]
    assert (ad.eval("F"), ad.eval("E")) == ("dir/a.txt a B", "dflt")


def test_a_condition_sees_the_appended_value():
    text = EXE + "x = 1\nx = $(x)\nif $(x)\n+Y = 1\nendif\nqueue\n"
    assert values(text, "Y") == [1]


# ---------------------------------------------------------------- multi-line lists

def test_items_on_the_opening_line_of_a_from_list_are_its_first_items():
    text = EXE + "arguments = $(a)-$(b)\nqueue a,b from (x0 y0\nx1 y1\n)\n"
    assert values(text, "Args") == ["x0-y0", "x1-y1"]


def test_items_on_the_opening_line_of_an_in_list_are_its_first_items():
    text = EXE + "arguments = $(Item)\nqueue in (p, q r\ns\n)\n"
    assert values(text, "Args") == ["p", "q", "r", "s"]
    macro = EXE + "first = p\narguments = $(Item)\nqueue in ($(first) q\ns\n)\n"
    assert values(macro, "Args") == ["p", "q", "s"]


# ---------------------------------------------------------------- include

def test_a_queue_statement_in_an_included_file_is_refused(tmp_path):
    write(os.path.join(tmp_path, "incq.txt"), "+X = 1\nqueue\n")
    said = refusal(EXE + "include : incq.txt\nqueue\n", str(tmp_path))
    assert said == "ERROR: on Line 2 of incq.txt: Queue statement not allowed in include file or command"
    said = refusal(EXE + "include command : printf 'iterate 2\\n'\nqueue\n", str(tmp_path))
    assert said.endswith("Queue statement not allowed in include file or command")


def test_condor_submit_stops_at_a_queue_statement_an_include_command_prints(cell, workdir):
    write(os.path.join(workdir, "inc.sub"), EXE + "include : echo queue 3 |\nqueue\n")
    proc = cell.run("condor_submit", "-dry-run", "out.ad", "inc.sub", cwd=workdir)
    assert proc.returncode == 1
    assert "Queue statement not allowed in include file or command" in proc.stderr
    assert not os.path.exists(os.path.join(workdir, "out.ad"))


# ---------------------------------------------------------------- -Attr

def test_minus_attribute_makes_it_undefined():
    ad = ads_of(EXE + "+Z = 1\n-Z =\n+W = 2\n-W = 5\nqueue\n")[0]
    assert ad.lookup("Z").unparse() == "undefined"
    assert ad.lookup("W").unparse() == "undefined"


# ---------------------------------------------------------------- iterate, from table

def test_iterate_and_iter_are_other_words_for_queue():
    assert values(EXE + "+V = \"$(x)\"\niterate x in (a b)\n", "V") == ["a", "b"]
    assert len(ads_of(EXE + "ITER 3\n")) == 3
    assert len(ads_of(EXE + "Itera\n")) == 1
    # an assignment to a macro of that name stays one
    assert values(EXE + "iter = 3\n+V = \"$(iter)\"\nqueue\n", "V") == ["3"]


def test_iterate_in_an_included_file_is_refused_too(tmp_path):
    write(os.path.join(tmp_path, "inc.txt"), "iter x in (a b)\n")
    assert refusal(EXE + "include : inc.txt\n", str(tmp_path)).endswith(
        "Queue statement not allowed in include file or command")


def test_from_table_takes_its_variables_from_the_heading_row():
    text = EXE + "+V = \"$(a)|$(b)|$(c)|$(ItemIndex)\"\nqueue x from table (\n a , b,c \n 1 2, 3 , 4,5\n6\n)\n"
    assert values(text, "V") == ["1 2|3|4,5|0", "6|||1"]
    # the heading alone: no item, no job
    assert ads_of(EXE + "+V = \"$(x)\"\nqueue x from table (\n a , b \n)\n") == []


def test_from_table_options():
    text = EXE + "+V = \"$(x)|$(y)\"\nqueue x,y from table(header=none) (\n 1 2, 3 , 4\n)\n"
    assert values(text, "V") == ["1 2|3 , 4"]
    text = EXE + "+V = \"$(x)|$(y)\"\nqueue x,y from table(header=none,sep=;) (\n1 ; 2\n)\n"
    assert values(text, "V") == ["1|2"]
    text = EXE + "+V = \"$(a)|$(b)\"\nqueue from table(header=1,skip=1) (\nskipped\na,b\n1,2\n)\n"
    assert values(text, "V") == ["1|2"]


def test_table_errors():
    assert refusal(EXE + "queue x in table (a b)\n") == "ERROR: on Line 2 of submit file: Queue keyword conflict"
    assert refusal(EXE + "queue x from table(header=0 (\n1\n)\n") == \
        "ERROR: on Line 2 of submit file: Invalid TABLE options"


# ---------------------------------------------------------------- env

def test_the_env_command_in_the_old_syntax_gives_env_and_envdelim():
    ad = ads_of(EXE + "env = X=1;Y=2\nqueue\n")[0]
    assert (ad.eval("Env"), ad.eval("EnvDelim")) == ("X=1;Y=2", ";")
    assert "Environment" not in ad
    for text in ('env = "X=1 Y=2"\n', "environment = X=1;Y=2\n"):
        ad = ads_of(EXE + text + "queue\n")[0]
        assert ad.eval("Environment") == "X=1 Y=2" and "Env" not in ad


def test_a_job_given_env_in_the_old_syntax_runs_with_those_variables(cell, workdir):
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'echo $GT_X $GT_Y'\"\n"
                           "env = GT_X=got;GT_Y=two\noutput = env.out\nhold = true\nqueue\n", cwd=workdir)
    shown = cell.run("condor_q", str(cluster), "-af", "Env", "EnvDelim", "Environment")
    assert shown.stdout == "GT_X=got;GT_Y=two ; undefined\n"
    cell.run("condor_release", str(cluster), check=True)
    path = os.path.join(workdir, "env.out")
    wait_for(lambda: os.path.exists(path) and open(path).read() == "got two\n")


# ---------------------------------------------------------------- around the language

def test_a_nice_user_with_another_accounting_group_is_warned_that_the_group_wins(cell, workdir):
    write(os.path.join(workdir, "n.sub"), EXE + "nice_user = true\naccounting_group = grp\nqueue\n")
    proc = cell.run("condor_submit", "-dry-run", "out.ad", "n.sub", cwd=workdir)
    assert proc.returncode == 0, proc
    assert proc.stderr == "WARNING: nice_user conflicts with accounting_group. nice_user will be ignored\n"
    ad = open(os.path.join(workdir, "out.ad")).read()
    assert 'AccountingGroup = "grp.root"' in ad and "MaxJobRetirementTime = 0" in ad
    # the nice users' own group, or no group at all, is no conflict
    for more in ("accounting_group = nice-user\n", ""):
        write(os.path.join(workdir, "n.sub"), EXE + "nice_user = true\n" + more + "queue\n")
        proc = cell.run("condor_submit", "-dry-run", "out.ad", "n.sub", cwd=workdir)
        assert (proc.returncode, proc.stderr) == (0, ""), proc


def test_terse_with_a_dry_run_into_a_file_prints_the_ranges(cell, workdir):
    write(os.path.join(workdir, "a.sub"), EXE + "queue 3\n")
    proc = cell.run("condor_submit", "-terse", "-dry-run", "out.ad", "a.sub", cwd=workdir)
    assert (proc.returncode, proc.stdout) == (0, "1.0 - 1.2\n"), proc
    assert open(os.path.join(workdir, "out.ad")).read().count("ProcId = ") == 3


def test_a_dag_nodes_inline_description_ending_in_iterate_is_not_given_a_queue_too():
    from gridtools.formats.condor.dagdesc import with_queue
    for text in (EXE + "iterate 2\n", EXE + "queue 2\n", EXE + "ITER x in (a b)\n"):
        assert with_queue(text) == text
    assert with_queue(EXE) == EXE + "queue\n"
    # a macro named iter is no statement
    assert with_queue(EXE + "iter = 3\n") == EXE + "iter = 3\nqueue\n"


def test_iterate_and_table_options_append_the_statement(cell, workdir):
    write(os.path.join(workdir, "t.sub"), EXE + "arguments = $(x)-$(y)\n")
    write(os.path.join(workdir, "tab.csv"), "x,y\na,b\nc,d\n")
    proc = cell.run("condor_submit", "-terse", "-dry-run", "out.ad", "t.sub", "-table", "tab.csv", cwd=workdir)
    assert (proc.returncode, proc.stdout) == (0, "1.0 - 1.1\n"), proc
    assert [line for line in open(os.path.join(workdir, "out.ad")) if line.startswith("Args")] == \
        ['Args = "a-b"\n', 'Args = "c-d"\n']
    proc = cell.run("condor_submit", "-terse", "-dry-run", "out.ad", "t.sub", "-it", "2", "x", "in", "(p)",
                    cwd=workdir)
    assert (proc.returncode, proc.stdout) == (0, "1.0 - 1.1\n"), proc
    proc = cell.run("condor_submit", "-dry-run", "out.ad", "t.sub", "-iterate", "2", "-queue", "3", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "condor_submit: only one -queue command allowed\n")


def test_env_is_split_at_its_delimiter_and_at_line_ends_as_htcondors_starter_splits_it():
    from gridtools.classad import ClassAd
    from gridtools.formats.condor.spec import _environment
    ad = ClassAd({"Env": " A=1|B = 2 |novalue\nC=3|D=x=y", "EnvDelim": "|"})
    assert _environment(ad) == {"A": "1", "B ": " 2 ", "C": "3", "D": "x=y"}
    # an Environment wins, and an empty one is no variables
    assert _environment(ClassAd({"Environment": "", "Env": "A=1"})) == {}
    assert _environment(ClassAd({"Environment": "A=2", "Env": "A=1"})) == {"A": "2"}


def test_a_list_that_does_not_end_its_line_with_a_paren_goes_on_to_the_next_lines():
    # (a blank before a table's options makes them the list's opening line, as in HTCondor)
    with pytest.raises(InputError) as info:
        parse_submit(EXE + "queue from table (header=none) items.csv\n", cwd="/tmp")
    assert "Reached end of file without finding closing brace ')' for Queue command on line 2" in str(info.value)
    assert values(EXE + 'arguments = "[$(Item)]"\nqueue in (a b) c\n d\n)\n', "Arguments") == \
        ["[a]", "[b)]", "[c]", "[d]"]
