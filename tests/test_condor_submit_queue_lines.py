"""condor_submit's queue statements as HTCondor 24's reads them: a macro function's
problem met while a statement's jobs are made is said at the line condor_submit has
read the description to (that of the ``)`` closing a list of items written on the
lines after the statement; the statement's last line while its arguments are
expanded, with no job's step then); the unused-line warnings read a statement's
variables from its arguments with their macros expanded, and a variable that is also
a line's name is that line, left with the value ``<Queue_item>``."""

import os

from conftest import cell_fixture
from condortools import write

cell = cell_fixture(scope="module")

ECHO = "executable = /bin/echo\n"
INT_OF_X = "ERROR at Queue statement on Line {}: $INT() macro: x does not evaluate to an integer!\n"


def _submit(cell, workdir, *args, text=None):
    # (with -terse, or a description read from "-" whose first job fails, HTCondor's
    # condor_submit prints nothing on standard output before such a problem)
    return cell.run("condor_submit", *args, cwd=workdir, input=text)


def test_a_problem_met_in_a_list_of_lines_is_said_at_its_closing_line(cell, workdir):
    write(os.path.join(workdir, "l.sub"), ECHO + "arguments = $INT(a)\n"
          "queue a,b from (\n  1,2\n# a comment\n  x,4\n)\n")
    proc = _submit(cell, workdir, "-terse", "-dry-run", "ads", "l.sub")
    assert (proc.returncode, proc.stdout) == (4, "")
    assert proc.stderr == INT_OF_X.format(7) + "\t at Step 0, ItemIndex 1\n"
    # the items in, after the "(" of the queue line and on the lines after it
    write(os.path.join(workdir, "i.sub"), ECHO + "arguments = $INT(Item)\n"
          "queue 2 in (1\n 2\n x\n\n   )\nqueue\n")
    proc = _submit(cell, workdir, "-terse", "-dry-run", "ads", "i.sub")
    assert (proc.returncode, proc.stdout) == (4, "")
    assert proc.stderr == INT_OF_X.format(7) + "\t at Step 0, ItemIndex 2\n"
    # a real submission read from standard input, its first job refused: nothing queued
    proc = _submit(cell, workdir, "-", text=ECHO + "arguments = $INT(a)\nqueue a from (\n x\n 1\n)\n")
    assert (proc.returncode, proc.stdout) == (4, "")
    assert proc.stderr == INT_OF_X.format(6) + "\t at Step 0, ItemIndex 0\n"
    queue = cell.run("condor_q", "-totals")
    assert "0 jobs;" in queue.stdout, queue.stdout


def test_a_statement_on_one_line_says_its_last_line(cell, workdir):
    # continued over lines, the statement is where condor_submit has read to: its last
    write(os.path.join(workdir, "c.sub"), ECHO + "arguments = $INT(a)\nqueue a in \\\n   (1 x)\n")
    proc = _submit(cell, workdir, "-terse", "-dry-run", "ads", "c.sub")
    assert (proc.returncode, proc.stdout) == (4, "")
    assert proc.stderr == INT_OF_X.format(4) + "\t at Step 0, ItemIndex 1\n"
    # a statement after a list of lines is said at its own line
    write(os.path.join(workdir, "two.sub"), ECHO + "queue a from (\n 1\n)\n"
          "arguments = $INT(x)\nx = x\nqueue\n")
    proc = _submit(cell, workdir, "-terse", "-dry-run", "ads", "two.sub")
    assert (proc.returncode, proc.stdout) == (4, "")
    assert proc.stderr == INT_OF_X.format(7) + "\t at Step 0, ItemIndex 0\n"


def test_a_problem_of_the_arguments_is_said_at_the_queue_line_without_a_job(cell, workdir):
    write(os.path.join(workdir, "a.sub"), ECHO + "n = x\nqueue $INT(n) a from (\n 1\n 2\n)\n")
    proc = _submit(cell, workdir, "-terse", "-dry-run", "ads", "a.sub")
    assert (proc.returncode, proc.stdout, proc.stderr) == (4, "", INT_OF_X.format(3))


def test_unused_queue_variables_of_expanded_arguments_and_of_lines(cell, workdir):
    # the statement's arguments are read with their macros expanded
    write(os.path.join(workdir, "e.sub"), ECHO + "V = aa\nqueue $(V) in (1 2)\n")
    proc = _submit(cell, workdir, "-dry-run", "ads", "e.sub")
    assert (proc.returncode, proc.stdout) == (0, "Dry-Run job(s)..\n2 job(s) dry-run to cluster 1.\n")
    assert proc.stderr == "WARNING: the Queue variable 'aa' was unused by condor_submit. Is it a typo?\n"
    # a variable a line names is that line (spelled as that line first spelled it),
    # which the statement leaves with <Queue_item>
    write(os.path.join(workdir, "l.sub"), ECHO + "C = 5\nqueue c, dd from (\n 1 2\n)\n")
    proc = _submit(cell, workdir, "-dry-run", "ads", "l.sub")
    assert (proc.returncode, proc.stdout) == (0, "Dry-Run job(s).\n1 job(s) dry-run to cluster 1.\n")
    assert proc.stderr == ("WARNING: the line 'C = <Queue_item>' was unused by condor_submit. Is it a typo?\n"
                           "WARNING: the Queue variable 'dd' was unused by condor_submit. Is it a typo?\n")
    # ... and a command-line setting too; a line after the statement sets its own value
    write(os.path.join(workdir, "after.sub"), ECHO + "queue c in (1)\nc = 7\n")
    proc = _submit(cell, workdir, "-dry-run", "ads", "zz=3", "after.sub")
    assert (proc.returncode, proc.stdout) == (0, "Dry-Run job(s).\n1 job(s) dry-run to cluster 1.\n")
    assert proc.stderr == ("WARNING: the line 'c = 7' was unused by condor_submit. Is it a typo?\n"
                           "WARNING: the line 'zz = 3' was unused by condor_submit. Is it a typo?\n")
    write(os.path.join(workdir, "q.sub"), ECHO)
    proc = _submit(cell, workdir, "-dry-run", "ads", "zz=3", "q.sub", "-queue", "zz in (q)")
    assert (proc.returncode, proc.stdout) == (0, "Dry-Run job(s).\n1 job(s) dry-run to cluster 1.\n")
    assert proc.stderr == "WARNING: the line 'zz = <Queue_item>' was unused by condor_submit. Is it a typo?\n"


def test_a_queue_of_a_count_uses_item(cell, workdir):
    # (HTCondor gives Item its empty value for each job, which counts as a use)
    write(os.path.join(workdir, "n.sub"), ECHO + "Item = foo\nN = 2\nqueue $(N)\n")
    proc = _submit(cell, workdir, "-dry-run", "ads", "n.sub")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "Dry-Run job(s)..\n2 job(s) dry-run to cluster 1.\n", "")
