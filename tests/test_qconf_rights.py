"""Who may change what, with real Unix users: a manager, an operator, a plain user.

Managers change everything; operators everything but cluster queues and
the manager list; plain users nothing, though they may show everything.
The daemon checks again whatever the client let through.
"""

import os

from conftest import user_bin

PE = "pe_name            {}\nslots              4\nuser_lists         NONE\nxuser_lists        NONE\n" \
     "start_proc_args    NONE\nstop_proc_args     NONE\nallocation_rule    $pe_slots\n" \
     "control_slaves     FALSE\njob_is_first_task  TRUE\nurgency_slots      min\n" \
     "accounting_summary FALSE\nqsort_args         NONE\n"


def pe_file(workdir, name):
    path = os.path.join(workdir, name)
    with open(path, "w") as fh:
        fh.write(PE.format(name))
    os.chmod(path, 0o644)
    return path


def denied(proc, user):
    return proc.returncode != 0 and proc.stderr == f'denied: "{user}" must be manager for this operation\n'


def test_manager_operator_and_user(cell, users, workdir):
    assert cell.run("qconf", "-am", "gtalice").returncode == 0
    assert cell.run("qconf", "-ao", "gtbob").returncode == 0
    assert cell.run("qconf", "-so").stdout == "gtbob\n"
    assert "gtalice" in cell.run("qconf", "-sm").stdout.split()

    # a plain user: nothing
    for args in (("-as", "node1"), ("-Ap", pe_file(workdir, "pec")), ("-mattr", "queue", "slots", "1", "all.q"),
                 ("-ao", "gtcarol"), ("-dq", "all.q"), ("-tsm",), ("-au", "gtcarol", "arusers")):
        assert denied(cell.run("qconf", *args, user="gtcarol"), "gtcarol"), args
    assert cell.run("qconf", "-ss").stdout == "testhost\n"

    # an operator, as in Grid Engine: usersets only (and -cq); the rest is a manager's,
    # whatever could run a procedure as root@ first (a PE's start_proc_args, a prolog)
    assert cell.run("qconf", "-au", "gtcarol", "arusers", user="gtbob").returncode == 0
    assert cell.run("qconf", "-au", "gtcarol", "newlist", user="gtbob").returncode == 0
    assert cell.run("qconf", "-du", "gtcarol", "newlist", user="gtbob").returncode == 0
    assert cell.run("qconf", "-dul", "newlist", user="gtbob").returncode == 0
    assert cell.run("qconf", "-cq", "all.q", user="gtbob").returncode == 0
    assert "gtcarol" in cell.run("qconf", "-su", "arusers").stdout
    assert cell.run("qconf", "-Ap", pe_file(workdir, "peb")).returncode == 0
    conf = os.path.join(workdir, "global")
    with open(conf, "w") as fh:
        fh.write(cell.run("qconf", "-sconf", check=True).stdout.replace("prolog                       none",
                                                                         "prolog root@/bin/true"))
    os.chmod(conf, 0o644)
    for args in (("-mattr", "queue", "slots", "1", "all.q"), ("-dq", "all.q"), ("-am", "gtbob"),
                 ("-aattr", "queue", "pe_list", "peb", "all.q"), ("-Ap", pe_file(workdir, "pex")),
                 ("-mattr", "pe", "start_proc_args", "root@/bin/true", "peb"), ("-as", "node2"),
                 ("-Mconf", conf), ("-ao", "gtcarol"), ("-tsm",), ("-dprj", "none"), ("-clearusage",)):
        assert denied(cell.run("qconf", *args, user="gtbob"), "gtbob"), args
    proc = cell.run("qconf", "-aq", "bob.q", user="gtbob", env={"EDITOR": "true"})
    assert denied(proc, "gtbob")
    assert cell.run("qconf", "-sql").stdout == "all.q\n"
    assert cell.run("qconf", "-so").stdout == "gtbob\n"
    assert "root@" not in cell.run("qconf", "-sconf").stdout + cell.run("qconf", "-sp", "peb").stdout

    # a manager added with -am: everything
    assert cell.run("qconf", "-mattr", "queue", "slots", "1", "all.q", user="gtalice").returncode == 0
    assert cell.run("qconf", "-aattr", "queue", "pe_list", "peb", "all.q", user="gtalice").returncode == 0
    assert "slots                 1\n" in cell.run("qconf", "-sq", "all.q").stdout
    assert cell.run("qconf", "-as", "node2", user="gtalice").returncode == 0
    assert cell.run("qconf", "-ds", "node2", user="gtalice").returncode == 0
    assert cell.run("qconf", "-ss").stdout == "testhost\n"


def test_denial_matches_grid_engine_wording_but_fails(cell, users):
    proc = cell.run("qconf", "-as", "localhost", user="gtalice")
    assert proc.stderr == 'denied: "gtalice" must be manager for this operation\n'
    assert proc.stdout == ""
    assert proc.returncode == 1


def test_daemon_checks_rights_itself(cell, users):
    """A request written past the client is refused by the daemon."""
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "from gridtools.spool import requests, wake\n"
        "name = requests.write('qconf', {'op': 'names_add', 'object': 'submithosts', 'names': ['evil'],"
        " 'host': 'x'}, reply=True)\n"
        "wake.poke()\n"
        "code, out, err = requests.wait_reply(name, 20)\n"
        "sys.stderr.write(err); sys.exit(code)\n") % os.path.join(os.path.dirname(user_bin()), "src")
    proc = cell.run("python3", "-c", code, user="gtcarol")
    assert proc.returncode == 1
    assert proc.stderr == 'denied: "gtcarol" must be manager for this operation\n'
    assert cell.run("qconf", "-ss").stdout == "testhost\n"


def test_an_operator_is_refused_before_an_editor_opens_or_a_file_is_read(cell, users, workdir):
    assert cell.run("qconf", "-ao", "gtbob").returncode == 0
    mark = os.path.join(workdir, "editor-ran")
    editor = os.path.join(workdir, "editor.sh")
    with open(editor, "w") as fh:
        fh.write(f"#!/bin/sh\ntouch {mark}\n")
    os.chmod(editor, 0o755)
    os.chmod(workdir, 0o777)
    for args in (("-mp", "make"), ("-mckpt", "nosuch"), ("-mconf",), ("-msconf",), ("-ae",)):
        proc = cell.run("qconf", *args, user="gtbob", env={"EDITOR": editor})
        assert denied(proc, "gtbob"), args
        assert not os.path.exists(mark), args
    for args in (("-Ap", "/dev/null"), ("-Mp", "/dev/null"), ("-Arqs", "/dev/null"), ("-Mrqs", "/dev/null"),
                 ("-Mconf", "/dev/null")):
        assert denied(cell.run("qconf", *args, user="gtbob"), "gtbob"), args
    # what an operator may change opens as before
    proc = cell.run("qconf", "-mu", "arusers", user="gtbob", env={"EDITOR": editor})
    assert os.path.exists(mark) and (proc.returncode, proc.stdout, proc.stderr) == (0, "file unchanged\n", "")
