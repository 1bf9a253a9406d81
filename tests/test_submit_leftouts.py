"""condor_submit as HTCondor 24's in four corners: a macro function's problem
($INT() of no integer, $CHOICE() of a bad index) says its queue statement and
job, and stops the submission (exit 4); an empty row of queue items keeps the row before's values;
a command-line ``+NAME=value`` is refused; unused queue variables and unused
command-line ``NAME=value`` settings are warned of."""

import os

from condortools import write

ECHO = "executable = /bin/echo\n"


def _dry(cell, workdir, *args):
    return cell.run("condor_submit", "-dry-run", "-", *args, cwd=workdir)


def _values(text, name):
    return [line.split(" = ", 1)[1] for line in text.splitlines() if line.startswith(name + " = ")]


def test_a_macro_function_problem_says_where_it_is_and_stops(idle_cell, workdir):
    write(os.path.join(workdir, "m.sub"), ECHO + "x = abc\nMY.R = $RANDOM_INTEGER(1,10)\n"
          "arguments = <$INT(x)>\nqueue 2\n")
    proc = _dry(idle_cell, workdir, "m.sub")
    assert (proc.returncode, proc.stdout) == (4, "")
    assert proc.stderr == ("ERROR at Queue statement on Line 5: $INT() macro: abc does not evaluate to an integer!\n"
                           "\t at Step 0, ItemIndex 0\n")
    write(os.path.join(workdir, "c.sub"), ECHO + "arguments = $CHOICE(z, a, b) $SUBSTR(x)\nqueue\n")
    proc = _dry(idle_cell, workdir, "c.sub")
    assert proc.returncode == 4
    assert proc.stderr.startswith("ERROR at Queue statement on Line 3: $CHOICE() macro: z is invalid index!\n")
    write(os.path.join(workdir, "s.sub"), ECHO + "x = hello\narguments = $SUBSTR(x)\nqueue\n")
    proc = _dry(idle_cell, workdir, "s.sub")
    assert proc.returncode == 4
    assert proc.stderr.startswith("ERROR at Queue statement on Line 4: $SUBSTR() macro: no length specified!\n")
    # an infinite real has no integer: the same error, not a failure of the program
    write(os.path.join(workdir, "i.sub"), ECHO + "arguments = $INT(1e400)\nqueue\n")
    proc = _dry(idle_cell, workdir, "i.sub")
    assert (proc.returncode, proc.stderr) == (4, "ERROR at Queue statement on Line 3: $INT() macro: 1e400 does "
                                                 "not evaluate to an integer!\n\t at Step 0, ItemIndex 0\n")


def test_with_queue_argument_is_where_its_problem_is_said(idle_cell, workdir):
    write(os.path.join(workdir, "q.sub"), ECHO + "arguments = $REAL(y)\n")
    proc = _dry(idle_cell, workdir, "q.sub", "-queue", "y", "in", "zz")
    assert proc.returncode == 4
    assert proc.stderr == ("ERROR with -queue argument: $REAL() macro: zz does not evaluate to an real!\n"
                           "\t at Step 0, ItemIndex 0\n")


def test_an_empty_row_keeps_the_values_of_the_row_before(idle_cell, workdir):
    write(os.path.join(workdir, "t.sub"), ECHO + "arguments = $(a)-$(b)\n"
          "queue from table (\na,b\n1,2\n\n   \n3,4\n)\n")
    proc = _dry(idle_cell, workdir, "t.sub")
    assert proc.returncode == 0, proc.stderr
    assert _values(proc.stdout, "Args") == ['"1-2"', '"1-2"', '"1-2"', '"3-4"']
    write(os.path.join(workdir, "f.sub"), ECHO + "arguments = $(a)-$(b)\nqueue a,b from (\n\nx y\n\n)\n")
    proc = _dry(idle_cell, workdir, "f.sub")
    assert _values(proc.stdout, "Args") == ['"-"', '"x-y"', '"x-y"']
    write(os.path.join(workdir, "rows"), "a,b\n5,6\n\n")
    write(os.path.join(workdir, "p.sub"), ECHO + "arguments = $(a)-$(b)\n")
    proc = _dry(idle_cell, workdir, "p.sub", "-table", "rows")
    assert _values(proc.stdout, "Args") == ['"5-6"', '"5-6"']


def test_a_plus_name_on_the_command_line_is_refused(idle_cell, workdir):
    write(os.path.join(workdir, "s.sub"), ECHO + "queue\n")
    proc = _dry(idle_cell, workdir, "+Foo=1", "s.sub")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "condor_submit: invalid attribute name '+Foo' for attrib=value assigment\n"
    proc = _dry(idle_cell, workdir, "MY.Foo=", "s.sub")
    assert proc.returncode == 0, proc.stderr
    assert _values(proc.stdout, "Foo") == ["undefined"]


def test_unused_queue_variables_and_command_line_settings_are_warned_of(idle_cell, workdir):
    write(os.path.join(workdir, "u.sub"), ECHO + "arguments = $(c)\nqueue c,Dee from (\nx y\n)\n")
    proc = _dry(idle_cell, workdir, "zed=1", "MY.Attr=2", "u.sub")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ("WARNING: the Queue variable 'Dee' was unused by condor_submit. Is it a typo?\n"
                           "WARNING: the line 'zed = 1' was unused by condor_submit. Is it a typo?\n")
    write(os.path.join(workdir, "i.sub"), ECHO + "queue 2 in (a, b)\n")
    proc = _dry(idle_cell, workdir, "i.sub")
    assert proc.stderr == "WARNING: the Queue variable 'Item' was unused by condor_submit. Is it a typo?\n"
    write(os.path.join(workdir, "plain.sub"), ECHO + "queue 2\n")
    proc = _dry(idle_cell, workdir, "plain.sub")
    assert proc.stderr == ""
