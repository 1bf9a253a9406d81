"""condor_history reads each record's banner (``*** ProcId = .. ClusterId = ..
Owner = ".." ...``) before its ad, as HTCondor's does: when the jobs are chosen by
cluster, cluster.proc or owner, a record whose banner names another job is skipped
unparsed, and a scan for job ids stops once every job named is found. The output is
what the same choice made by -constraint (which parses every ad) shows."""

import time

import pytest

from gridtools.cli.condor import history, historyfile


def _record(cluster, proc, owner, done, banner=True, total=1):
    text = (f'ClusterId = {cluster}\nProcId = {proc}\nOwner = "{owner}"\nJobStatus = 4\nQDate = {done - 50}\n'
            f'CompletionDate = {done}\nTotalSubmitProcs = {total}\nCmd = "/bin/true"\n'
            f'GlobalJobId = "h#{cluster}.{proc}#1"\n')
    if banner is True:
        return text + f'*** ProcId = {proc} ClusterId = {cluster} Owner = "{owner}" CompletionDate = {done}\n'
    return text + banner


@pytest.fixture
def files(tmp_path, monkeypatch):
    """A history file and two time-rotated files: clusters 1..9 of alice, bob and carol
    (cluster 3 and 7 of three procs), a record whose banner has no fields (as older
    versions wrote) and one whose banner names its proc but no cluster or owner."""
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    folder = tmp_path / "h"
    folder.mkdir()
    owners = {1: "alice", 2: "bob", 3: "alice", 4: "carol", 5: "bob", 6: "alice", 7: "bob", 8: "carol", 9: "alice"}

    def records(clusters):
        out = []
        for cluster in clusters:
            procs = 3 if cluster in (3, 7) else 1
            for proc in range(procs):
                done = 1000 + 10 * cluster + proc
                banner = True
                if (cluster, proc) == (5, 0):
                    banner = "*** \n"
                elif (cluster, proc) == (7, 1):
                    banner = f"*** ProcId = {proc} CompletionDate = {done}\n"
                out.append(_record(cluster, proc, owners[cluster], done, banner, total=procs))
        return "".join(out)
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now - 200))
    (folder / f"hist.{stamp}").write_text(records((1, 2, 3)))
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now - 100))
    (folder / f"hist.{stamp}").write_text(records((4, 5, 6)))
    (folder / "hist").write_text(records((7, 8, 9)))
    return str(folder / "hist")


def _run(capsys, *args):
    """(exit status, output, ads parsed) of condor_history ``args``."""
    before = historyfile.parses
    code = history.main(list(args))
    out = capsys.readouterr()
    assert out.err == ""
    return code, out.out, historyfile.parses - before


CHOICES = [
    (["3"], "ClusterId == 3"),
    (["3.1"], "ClusterId == 3 && ProcId == 1"),
    (["5"], "ClusterId == 5"),
    (["7"], "ClusterId == 7"),
    (["7.1"], "ClusterId == 7 && ProcId == 1"),
    (["bob"], 'Owner == "bob"'),
    (["carol", "3.2"], 'Owner == "carol" || ClusterId == 3 && ProcId == 2'),
    (["2", "9", "6.0"], "ClusterId == 2 || ClusterId == 9 || ClusterId == 6 && ProcId == 0"),
    (["nobody"], 'Owner == "nobody"'),
    (["42"], "ClusterId == 42"),
]


@pytest.mark.parametrize("order", [[], ["-forwards"]])
@pytest.mark.parametrize("words,constraint", CHOICES)
def test_banner_choice_shows_what_the_constraint_shows(files, capsys, words, constraint, order):
    """Across rotated files, newest first or -forwards, a record without banner fields
    included: the jobs named show exactly as -constraint chooses them."""
    for view in (["-af", "ClusterId", "ProcId", "Owner"], ["-l"]):
        fast = _run(capsys, *words, "-search", files, *order, *view)
        full = _run(capsys, "-search", files, *order, *view, "-constraint", constraint)
        assert fast[:2] == full[:2]
        assert full[2] == 13            # every ad of the files parsed
    if words == ["5"]:                  # its banner has no fields: found by its ad
        assert fast[1].count("ClusterId = 5") == 1
    if words == ["7.1"]:
        assert fast[1].count("ProcId = 1") == 1


@pytest.mark.parametrize("words,constraint", [
    (["bob"], 'Owner == "bob"'), (["3"], "ClusterId == 3"), (["alice", "8"], 'Owner == "alice" || ClusterId == 8')])
@pytest.mark.parametrize("bounds", [
    ["-since", "4"], ["-since", "6.0"], ["-completedsince", "1041"], ["-scanlimit", "6"], ["-limit", "2"],
    ["-since", "QDate < 1000"], ["-constraint", "ProcId == 0"]])
def test_bounds_of_the_scan_are_kept(files, capsys, words, constraint, bounds):
    """-since and -completedsince stop at the same record, judged by its banner when
    the record is skipped; -scanlimit counts the skipped records; -constraint is judged
    on the ads the banners let through."""
    fast = _run(capsys, *words, "-search", files, *bounds, "-af", "ClusterId", "ProcId")
    full = _run(capsys, "-search", files, *bounds, "-constraint", constraint, "-af", "ClusterId", "ProcId")
    assert fast[:2] == full[:2]


def test_skipped_ads_are_not_parsed(files, capsys):
    """Only the records a banner names as chosen, and those whose banner cannot tell,
    are parsed."""
    code, out, parsed = _run(capsys, "carol", "-search", files, "-af", "Owner")
    assert (code, out) == (0, "carol\ncarol\n")
    assert parsed == 2 + 2              # carol's two, and the two banners that name no owner
    code, out, parsed = _run(capsys, "3", "-search", files, "-af", "ClusterId", "ProcId")
    assert out == "3 2\n3 1\n3 0\n"
    assert parsed <= 3 + 2
    # a -since the banner cannot judge (QDate is in no banner): every ad up to it is
    # parsed (9, 8, 7's three, 6 and 5, where it stops)
    code, out, parsed = _run(capsys, "nobody", "-search", files, "-since", "QDate < 1010", "-af", "ClusterId")
    assert (code, out, parsed) == (0, "", 7)


def test_a_job_id_scan_stops_once_its_jobs_are_found(files, capsys):
    """As HTCondor's, a scan for cluster.procs (or whole clusters, by their
    TotalSubmitProcs) stops at the last of them: the older files are not read."""
    code, out, parsed = _run(capsys, "8", "9", "-search", files, "-af", "ClusterId", "ProcId")
    assert (code, out, parsed) == (0, "9 0\n8 0\n", 2)
    code, out, parsed = _run(capsys, "7.2", "-search", files, "-af", "ClusterId", "ProcId")
    assert (code, out, parsed) == (0, "7 2\n", 1)
    # an owner among the names: the whole history is scanned
    code, out, parsed = _run(capsys, "9", "carol", "-search", files, "-af", "ClusterId")
    assert out == "9\n8\n4\n"


def test_cost_is_the_matching_records_not_the_file(tmp_path, capsys, monkeypatch):
    """One job of 20,000 records costs one parse (and well under the time of parsing
    them all); the same job in a file of 200 costs the same."""
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    big, small = tmp_path / "big", tmp_path / "small"
    big.write_text("".join(_record(c, 0, "alice" if c != 10 else "bob", 1000 + c) for c in range(1, 20001)))
    small.write_text("".join(_record(c, 0, "alice" if c != 10 else "bob", 1000 + c) for c in range(1, 201)))
    for path in (big, small):
        for words in (["10"], ["10.0"], ["bob"]):
            started = time.monotonic()
            code, out, parsed = _run(capsys, *words, "-file", str(path), "-af", "ClusterId", "Owner")
            assert (code, out, parsed) == (0, "10 bob\n", 1)
            assert time.monotonic() - started < 30
    code, out, parsed = _run(capsys, "-file", str(small), "-constraint", "ClusterId == 10", "-af", "ClusterId")
    assert (out, parsed) == ("10\n", 200)


# ---------------------------------------------------------------- the macros both share

@pytest.mark.parametrize("text,said", [
    ("$RANDOM_INTEGER(x,10)", "invalid min!"), ("$RANDOM_INTEGER(1)", "invalid max!"),
    ("$RANDOM_INTEGER(, 7,)", "invalid max!"), ("$RANDOM_INTEGER(1,10,0)", "invalid step!"),
    ("$RANDOM_INTEGER(1,10,y)", "invalid step!"), ("$RANDOM_INTEGER(20,10)", "min > max!")])
def test_submit_and_configuration_refuse_random_integer_alike(text, said):
    """A submit description's $RANDOM_INTEGER is refused in the words of HTCondor's
    macro code, which its configuration shares; $ENV of a variable not set is UNDEFINED
    in both."""
    from gridtools.errors import ConfigError
    from gridtools.formats import condor_config
    from gridtools.formats.condor.macros import Expander, MacroProblem
    with pytest.raises(MacroProblem) as submit:
        Expander(lambda name: None).expand(text)
    with pytest.raises(ConfigError) as config:
        condor_config.expand(text, lambda name: None)
    assert str(submit.value) == str(config.value) == f"ERROR: $RANDOM_INTEGER() config macro: {said}"
    assert Expander(lambda name: None, environ={}).expand("$ENV(GT_NOT_SET) $ENV(GT_NOT_SET:d)") == "UNDEFINED d"
    assert condor_config.expand("$ENV(GT_NOT_SET) $ENV(GT_NOT_SET:d)", lambda name: None, environ={}) == "UNDEFINED d"
    assert {Expander(lambda name: None, rng=lambda: __import__("random").Random(s)).expand(
        "$RANDOM_INTEGER(-30, 30, 10)") for s in range(80)} == {"-30", "-20", "-10", "0", "10", "20", "30"}
