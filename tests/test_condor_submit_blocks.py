"""The statements of a submit description beyond commands and queue statements, as
HTCondor's condor_submit reads them (the values are htcondor.Submit's of HTCondor 24 for
the same texts): if/elif/else/endif, include, error and warning, @= here-text."""

import pytest

from gridtools.errors import InputError
from gridtools.formats.condor.fsview import LocalFiles
from gridtools.formats.condor.jobad import SubmitContext
from gridtools.formats.condor.submit import parse_submit


@pytest.fixture
def ctx(tmp_path, monkeypatch):
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    monkeypatch.chdir(tmp_path)
    return SubmitContext(cwd=str(tmp_path), owner="alice", now=1700000000,
                         files=LocalFiles(str(tmp_path)), environ={"HOME": "/home/alice"})


def ad(text, ctx):
    (found,) = parse_submit("executable = run.sh\n" + text + "queue\n").job_ads(3, ctx)
    return found


@pytest.mark.parametrize("text, args", [
    ("X = 1\nif defined X\n  arguments = yes\nelse\n  arguments = no\nendif\n", "yes"),
    ("if defined X\n  arguments = yes\nelif version >= 8.1\n  arguments = new\nelse\n  arguments = no\nendif\n",
     "new"),
    ("X = 0\nif $(X)\n  arguments = yes\nelse\n  arguments = no\nendif\n", "no"),
    ("if ! defined X\n  if true\n    arguments = nested\n  endif\nendif\n", "nested"),
    ("if false\n  this is junk that is never read\nendif\narguments = after\n", "after"),
])
def test_conditional_blocks(ctx, text, args):
    assert ad(text, ctx).eval("Args") == args


@pytest.mark.parametrize("text, said", [
    ("else\n", "ERROR: on Line 2 of submit file: else without matching if"),
    ("if true\n", "ERROR: on Line 2 of submit file: endif(s) not found before end-of-file"),
    ("endif\n", "ERROR: on Line 2 of submit file: endif without matching if"),
    ("error : no jobs today\n", 'Error "submit file", Line 2: no jobs today'),
])
def test_refusals(ctx, text, said):
    with pytest.raises(InputError) as refused:
        ad(text, ctx)
    assert str(refused.value) == said


def test_include_a_file_a_command_and_a_missing_file_with_ifexist(ctx, tmp_path):
    (tmp_path / "inc.sub").write_text("+Included = 3\narguments = from_file\n")
    found = ad("include : inc.sub\ninclude : echo +Piped = 7 |\ninclude command : echo +Said = 8\n"
               "include ifexist : nosuch.sub\n", ctx)
    assert (found.eval("Included"), found.eval("Piped"), found.eval("Said"), found.eval("Args")) == \
        (3, 7, 8, "from_file")
    with pytest.raises(InputError, match="Can't open include file nosuch.sub"):
        ad("include : nosuch.sub\n", ctx)


def test_here_text_values_and_warnings(ctx, capsys):
    found = ad("environment @=end\nA=1\nB=2\n@end\narguments @=end\na b\nc\n@end\nMY.Foo @=end\n  1 +\n  2\n@end\n"
               "warning : careful with $(Foo)\n", ctx)
    assert (found.eval("Environment"), found.eval("Args"), found.eval("Foo")) == ("A=1 B=2", "a b c", 3)
    assert capsys.readouterr().err == 'Warning "submit file", Line 14: careful with   1 +\n  2\n'


def test_a_plain_description_needs_none_of_it():
    import sys
    sys.modules.pop("gridtools.formats.condor.submitblocks", None)
    parse_submit("executable = run.sh\narguments = a\nqueue\n")
    assert "gridtools.formats.condor.submitblocks" not in sys.modules
