"""-help of every Grid Engine command: the text on stdout, exit 0, compared with the
Grid Engine 8.1.9 captures where there are any."""

import os
import subprocess

import pytest

from conftest import BIN, REPO

REFERENCE = os.path.join(REPO, "tests", "data", "reference", "sge")


def captured_stdout(name):
    with open(os.path.join(REFERENCE, name)) as fh:
        return fh.read().split("# ---- stdout ----\n", 1)[1].split("# ---- stderr ----\n", 1)[0]


def help_of(command):
    proc = subprocess.run([os.path.join(BIN, command), "-help"], capture_output=True, text=True,
                          env=dict(os.environ, GRIDTOOLS_ROOT="/nonexistent", GRIDTOOLS_NO_AUTOSTART="1"))
    assert (proc.returncode, proc.stderr) == (0, "")
    return proc.stdout


@pytest.mark.parametrize("command", ["qacct", "qconf", "qdel", "qhost", "qmod", "qstat"])
def test_help_is_grid_engines_text(command):
    assert help_of(command) == captured_stdout(f"{command}-help.txt")


def test_qsub_help_lists_every_option_in_grid_engines_layout():
    from gridtools.cli.sge import options
    text = help_of("qsub")
    lines = text.splitlines()
    assert lines[:2] == ["SGE 8.1.9", "usage: qsub [options]"]
    shown = [line.split()[0].strip("[]") for line in lines if line.startswith("   [")]
    accepted = [name for name, entry in options.OPTIONS.items() if entry[2] in ("all", "submit", "cli")]
    assert sorted(shown) == sorted(accepted + ["-help", "-@", "{command|-}"])
    # every line of Grid Engine's list that names a qsub option is printed as it is
    expected = captured_stdout("qsub-help.txt").splitlines()
    for line in expected:
        if line.startswith("   [") and line.split()[0].strip("[]") in accepted:
            assert line in lines
    assert "   [{command|-} [command_args]]" in lines
    assert "task_id_range           task_id['-'task_id[':'step]]" in lines
    assert not any(w in text for w in ("-mattr", "-astnode", "-Ap", "-srqs"))


def test_qrsh_help_lists_the_options_qrsh_takes():
    lines = help_of("qrsh").splitlines()
    assert lines[:2] == ["SGE 8.1.9", "usage: qrsh [options]"]
    assert "   [-now y[es]|n[o]]                        start job immediately or not at all" in lines
    assert not any(line.startswith(("   [-sync", "   [-terse", "   [-C ")) for line in lines)
    assert "   [command [command_args]]" in lines
