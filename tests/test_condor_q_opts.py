"""condor_q's options as HTCondor 24 takes them: wording of refusals, exit codes, column choices."""

import pytest

from gridtools.cli.condor import q


def _main(capsys, *argv):
    code = q.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _root(tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path / "root"))


@pytest.mark.parametrize("argv, line", [
    (["-limit"], "Error: -limit requires the max number of results as an argument."),
    (["-limit", "x"], "Error: Unable to convert (x) to a number for -limit."),
    (["-limit", "3x"], "Error: Unable to convert (3x) to a number for -limit."),
    (["-limit", "0"], "Error: 0 is not a valid for -limit."),
    (["-limit", "-2"], "Error: -2 is not a valid for -limit."),
])
def test_limit_refusals_in_htcondor_words(capsys, argv, line):
    code, out, err = _main(capsys, *argv)
    assert (code, out, err) == (1, "", line + "\n")


@pytest.mark.parametrize("arg", ["-xyz", "-goodput", "-globus", "-sort", "-wider"])
def test_unknown_options_are_refused_with_the_usage(capsys, arg):
    code, out, err = _main(capsys, arg)
    assert code == 1
    assert err == f"Error: unrecognized argument {arg}\n"
    assert out.startswith("Usage: condor_q [general-opts] [restriction-list] [output-opts | analyze-opts]\n")


def test_print_format_is_refused_clearly(capsys):
    assert _main(capsys, "-print-format") == (1, "", "Error: -print-format requires a filename argument\n")
    code, out, err = _main(capsys, "-pr", "layout.cpf")
    assert (code, out) == (1, "")
    assert err == "Error: -print-format is not supported; use -af or -format to choose columns\n"
