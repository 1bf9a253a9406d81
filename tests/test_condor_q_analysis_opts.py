"""condor_q's analysis options as HTCondor's: -machine, -mconstraint, -slotads,
-userprios, -reverse-analyze and -unmatchable (over files of ads, and the cell's slots)."""

import os

import pytest

from gridtools.cli.condor import q

JOBS = """\
ClusterId = 12
ProcId = 0
Owner = "bob"
JobStatus = 1
QDate = 1764842400
Cmd = "/bin/sleep"
Requirements = (TARGET.Memory >= 1024)

ClusterId = 12
ProcId = 1
Owner = "bob"
JobStatus = 1
QDate = 1764842400
Cmd = "/bin/sleep"
Requirements = (TARGET.Memory >= 100000)

ClusterId = 13
ProcId = 0
Owner = "carol"
JobStatus = 1
QDate = 1764842400
Cmd = "/bin/true"
Requirements = true
"""

SLOTS = """\
Name = "slot1@n1.example.org"
Machine = "n1.example.org"
Memory = 2048
Requirements = START
START = (TARGET.Owner != "carol")
RemoteUser = "dave@example.org"

Name = "slot2@n1.example.org"
Machine = "n1.example.org"
Memory = 512
Requirements = START
START = true

Name = "slot1@n2.example.org"
Machine = "n2.example.org"
Memory = 4096
PartitionableSlot = true
Requirements = START
START = true
"""


@pytest.fixture(autouse=True)
def _root(tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path / "root"))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "jobs").write_text(JOBS)
    (tmp_path / "slots").write_text(SLOTS)
    return ["-jobads", str(tmp_path / "jobs"), "-slotads", str(tmp_path / "slots")]


def _main(capsys, *argv):
    code = q.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _summary(out):
    """{job id: (machines, rejected by the job, available)} of -analyze's summaries."""
    found, lines = {}, out.split("\n")
    for n, line in enumerate(lines):
        if "Run analysis summary.  Of " in line:
            total = int(line.split("Of ")[1].split()[0])
            found[line.split(":")[0]] = (total, int(lines[n + 1].split()[0]), int(lines[n + 6].split()[0]))
    return found


def test_slotads_machine_and_mconstraint_choose_the_slots(capsys, files):
    assert _summary(_main(capsys, *files, "-analyze", "12.0")[1]) == {"012.000": (3, 1, 1)}
    assert _summary(_main(capsys, *files, "-analyze", "12.0", "-machine", "n1.example.org")[1]) == \
        {"012.000": (2, 1, 0)}
    assert _summary(_main(capsys, *files, "-analyze", "12.0", "-machine", "SLOT1@N2.example.org")[1]) == \
        {"012.000": (1, 0, 1)}
    assert _summary(_main(capsys, *files, "-analyze", "12.0", "-mconstraint", "Memory > 600")[1]) == \
        {"012.000": (2, 0, 1)}
    # a constraint that looks like a slot name is one
    assert _summary(_main(capsys, *files, "-analyze", "12.0", "-mc", "slot2@n1.example.org")[1]) == \
        {"012.000": (1, 1, 0)}


def test_userprios_weigh_the_slots_serving_other_users(capsys, files, tmp_path):
    prios = tmp_path / "prios"
    prios.write_text('MyType = "Accountant"\nName1 = "dave@example.org"\nPriority1 = 100.0\n'
                     'Name2 = "bob@example.org"\nPriority2 = 0.5\n')
    argv = list(files) + ["-analyze", "12.0", "-mconstraint", "Memory > 600"]
    without = _main(capsys, *argv)[1]
    assert "      1 match, but are serving users with a better priority in the pool" in without
    shown = _main(capsys, *argv, "-userprios", str(prios))[1]
    assert "      0 match, but are serving users with a better priority in the pool" in shown
    # (dave's worse priority: his slot is bob's only if PREEMPTION_REQUIREMENTS, False
    # unless the configuration says otherwise, lets it be preempted)
    assert "      1 match, but will not currently preempt their existing job" in shown
    assert _summary(shown) == {"012.000": (2, 0, 1)}
    config = tmp_path / "root" / "etc"
    config.mkdir(parents=True)
    (config / "condor_config").write_text("PREEMPTION_REQUIREMENTS = RemoteUserPrio > 50\n")
    assert _summary(_main(capsys, *argv, "-userprios", str(prios))[1]) == {"012.000": (2, 0, 2)}
    assert _main(capsys, *argv, "-userprios", str(prios), "-nouserprios")[1] == without


def test_reverse_analyze_tabulates_the_slots(capsys, files):
    code, out, err = _main(capsys, *files, "-reverse-analyze")
    assert (code, err) == (0, "")
    assert out.split("\n")[3:] == [
        "Analyzing matches for 3 jobs",
        "                      Slot  Slot's Req    Job's Req     Both   ",
        "Name                  Type  Matches Job Matches Slot    Match %",
        "--------------------- ---- ------------ ------------ ----------",
        "slot1@n1.example.org  Stat            2            2      33.33",
        "slot2@n1.example.org  Stat            3            1      33.33",
        "slot1@n2.example.org  Part            3            2      66.67",
        ""]
    one = _main(capsys, *files, "-analyze:reverse", "13.0")[1].split("\n")
    assert one[3] == "13.0: Analyzing matches for 1 job"


def test_reverse_analyze_of_one_slot_analyses_it(capsys, files):
    out = _main(capsys, *files, "-reverse-analyze", "-machine", "slot1@n1.example.org")[1]
    assert out.split("\n")[3:] == [
        "", "-- Slot: slot1@n1.example.org : Analyzing matches for 3 Jobs in 3 autoclusters",
        "", "The Requirements expression for this slot is", "", "    START", "",
        "  START is", '    (TARGET.Owner != "carol")', "",
        '    [0]    : TARGET.Owner != "carol"', "",
        "This slot defines the following attributes:", "", "",
        "The Requirements expression for this slot reduces to these conditions:", "",
        "       Clusters",
        "Step   Matched  Condition",
        "----- --------- ---------",
        '[0]           2  TARGET.Owner != "carol"', "",
        "slot1@n1.example.org: Run analysis summary of 3 jobs.",
        "    1 (33.33 %) match both slot and job requirements.",
        "    2 match the requirements of this slot.",
        "    2 have job requirements that match this slot.", ""]


def test_reverse_analyze_of_one_slot_shows_its_steps_and_values(capsys, tmp_path):
    (tmp_path / "jobs").write_text(JOBS)
    (tmp_path / "slot").write_text(
        'Name = "slot1@n3.example.org"\nMachine = "n3.example.org"\nMemory = 2048\n'
        'Requirements = START && WithinResourceLimits\n'
        'START = (TARGET.Owner != "carol") && (Memory > 1000)\n'
        'WithinResourceLimits = TARGET.RequestMemory <= Memory\n')
    argv = ["-jobads", str(tmp_path / "jobs"), "-slotads", str(tmp_path / "slot"), "-reverse-analyze"]
    out = _main(capsys, *argv, "12.0")[1]
    start = out.index("    [0]")
    assert out[start:out.index("\nslot1@n3")].split("\n") == [
        '    [0]    : TARGET.Owner != "carol"',
        "    [1]    : Memory > 1000",
        "    [2]    : [0] && [1]",
        "    [3]    : TARGET.RequestMemory <= Memory",
        "    [4]    : [2] && [3]", "",
        "This slot defines the following attributes:", "",
        "    Memory = 2048", "",
        "Job 12.0 has the following attributes:", "",
        '    TARGET.Owner = "bob"', "",
        "The Requirements expression for this slot reduces to these conditions:", "",
        "       Clusters",
        "Step   Matched  Condition",
        "----- --------- ---------",
        "[3]           0  TARGET.RequestMemory <= Memory", ""]


def test_unmatchable_keeps_the_jobs_no_slot_matches(capsys, files):
    code, out, err = _main(capsys, *files, "-unmatchable", "-af", "ClusterId", "ProcId")
    assert (code, out, err) == (0, "12 1\n", "")
    table = _main(capsys, *files, "-unmatchable")[1].split("\n")
    assert table[3].startswith(" ID      OWNER") and len(table) == 8 and table[4].startswith("  12.1 ")
    # only slot2, whose memory no job but 13.0 is content with
    assert _main(capsys, *files, "-unmatchable", "-machine", "slot2@n1.example.org", "-af", "ClusterId",
                 "ProcId")[1] == "12 0\n12 1\n"
    analysis = _main(capsys, *files, "-better-analyze", "-unmatchable")[1].split("\n")
    assert analysis[3:] == ["No slots match autocluster -1, jobs : 12.1", ""]
    rejected = _main(capsys, *files, "-better-analyze", "-unmatchable", "13.0", "-machine", "n1.example.org",
                     "-mconstraint", "Memory > 600")[1].split("\n")
    assert rejected[3:] == ["All slots reject autocluster -1, jobs : 13.0", ""]


@pytest.mark.parametrize("argv, line", [
    (["-unmatchable", "-batch"], "Error: -batch conflicts with -unmatchable"),
    (["-nobatch", "-unmatchable"], "Error: -batch conflicts with -unmatchable"),
    (["-constraint"], "Error: -constraint requires another parameter"),
    (["-submitter"], "Error: -submitter requires the name of a user."),
    (["-name"], "Error: -name requires the name of a schedd as an argument."),
    (["-pool"], "Error: -pool requires a hostname as an argument."),
    (["-attributes"], "Error: -attributes requires a list of attributes to show"),
    (["-machine"], "Error: -machine requires another parameter"),
    (["-mcons"], "Error: -mcons requires another parameter"),
    (["-slotads"], "Error: -slotads requires a filename"),
    (["-userprios"], "Error: -userprios requires a filename argument"),
    (["-analyze", "-slotads", "/nonexistent/slots"], "Can't open file of ClassAds: /nonexistent/slots"),
    (["-analyze", "-userprios", "/nonexistent/prios"], "Can't open file of user priorities: /nonexistent/prios"),
])
def test_refusals(capsys, files, argv, line):
    assert _main(capsys, *files[:2], *argv) == (1, "", line + "\n")


def test_unmatchable_and_machine_in_a_live_cell(cell, workdir):
    from condortools import submit, wait_status
    good = submit(cell, "executable = /bin/sleep\narguments = 300\nqueue\n", cwd=workdir)
    bad = submit(cell, 'executable = /bin/true\nrequirements = (Machine == "nosuch")\nqueue\n',
                 cwd=workdir, name="bad.sub")
    wait_status(cell, f"{good}.0", 2)
    shown = cell.run("condor_q", "-unmatchable", "-af", "ClusterId")
    assert (shown.returncode, shown.stdout) == (0, f"{bad}\n"), shown.stderr
    names = cell.run("condor_status", "-af", "Name").stdout.split()
    analysis = cell.run("condor_q", "-better-analyze", f"{bad}.0", "-machine", names[0]).stdout
    assert "Run analysis summary.  Of 1 machines," in analysis
    table = cell.run("condor_q", "-reverse-analyze", "-analyze:reverse", f"{bad}.0").stdout.split("\n")
    assert table[3] == f"{bad}.0: Analyzing matches for 1 job"
    # the slots as condor_status -json (or -l) writes them
    for form in ("-json", "-l"):
        dump = cell.run("condor_status", form).stdout
        path = os.path.join(workdir, "slots" + form)
        with open(path, "w") as fh:
            fh.write(dump)
        shown = cell.run("condor_q", "-better-analyze", f"{good}.0", "-slotads", path).stdout
        assert f"Run analysis summary.  Of {len(names)} machines," in shown


def test_better_analyze_of_one_machine_shows_the_slots_values(capsys, files):
    out = _main(capsys, *files, "-better-analyze", "12.1", "-machine", "n1.example.org")[1]
    expr = out.index("The Requirements expression for your job is:")
    assert out[expr:out.index("    Condition")].split("\n") == [
        "The Requirements expression for your job is:", "",
        "( TARGET.Memory >= 100000 )", "",
        "slot1@n1.example.org has the following attributes:", "",
        "    TARGET.Memory = 2048 (mb)", "",
        "slot2@n1.example.org has the following attributes:", "",
        "    TARGET.Memory = 512 (mb)", "", ""]
    # not of a constraint, nor without -better-analyze
    assert "has the following attributes" not in _main(
        capsys, *files, "-better-analyze", "12.1", "-mconstraint", "Memory > 0")[1]
    assert "has the following attributes" not in _main(
        capsys, *files, "-analyze", "12.1", "-machine", "n1.example.org")[1]
    one = _main(capsys, *files, "-better-analyze", "13.0", "-mconstraint", "slot1@n2.example.org")[1]
    assert "has the following attributes" not in one       # (13.0's Requirements refer to none)
    # a -mconstraint that is a slot name names it, as -machine does
    named = _main(capsys, *files, "-better-analyze", "12.0", "-mconstraint", "n1.example.org")[1]
    assert "slot2@n1.example.org has the following attributes:" in named


def _cell_slot(name, memory, **kinds):
    values = {"Name": name, "Machine": name.partition("@")[2], "Memory": memory, **kinds}
    return [values, {"Requirements": "START", "START": "true"}]


@pytest.mark.parametrize("argv, names", [
    (["-better-analyze"], ["slot1@n5", "slot2@n5"]),
    (["-better-analyze", "-machine", "n5"], ["slot1@n5", "slot2@n5"]),
    (["-better-analyze", "-mconstraint", "Memory > 100"], ["slot1@n5", "slot2@n5"]),
    # a slot's name, or a constraint on the kind of slot, keeps them
    (["-better-analyze", "-machine", "slot1_1@n5"], ["slot1_1@n5"]),
    (["-better-analyze", "-mconstraint", "DynamicSlot =?= true"], ["slot1_1@n5"]),
    (["-better-analyze", "-mconstraint", "SlotType =!= \"x\""], ["slot1@n5", "slot1_1@n5", "slot2@n5"]),
])
def test_dynamic_slots_of_the_cell_are_left_out(argv, names):
    from gridtools.cli.condor import analyze
    snap = {"slots": [_cell_slot("slot1@n5", 4096, PartitionableSlot=True),
                      _cell_slot("slot1_1@n5", 1024, DynamicSlot=True),
                      _cell_slot("slot2@n5", 512)]}
    opts = q.parse_args(argv + ["12.0"])
    assert [m.eval("Name") for m in analyze.slots(snap, [], 0, opts)] == names


def test_analyze_summary_has_a_line_per_job_or_autocluster(capsys, files):
    code, out, err = _main(capsys, *files, "-analyze:summary")
    assert (code, err) == (0, "")
    assert out.split("\n")[3:] == [
        "Analyzing matches for 3 slots",
        "               Autocluster    Matches     Machine     Running     Serving            ",
        " JobId        Members/Idle Requirements Rejects Job  Users Job  Other User Available Owner",
        "------------- ------------ ------------ ----------- ----------- ---------- --------- -----",
        "12.0                                  2           0           0          1         1 bob",
        "12.1                                  0           0           0          0         0 bob",
        "13.0                                  3           1           0          0         2 carol", ""]
    one = _main(capsys, *files, "-an:s", "12.0", "-machine", "n1.example.org")[1].split("\n")
    assert one[3] == "n1.example.org: Analyzing matches for 2 slots"
    assert one[7] == "12.0                                  1           0           0          1         0 bob"
    # with :reverse, the table of the slots even for one slot
    rev = _main(capsys, *files, "-better-analyze:reverse,summary", "-machine", "slot1@n1.example.org")[1]
    assert rev.split("\n")[-2] == "slot1@n1.example.org  Stat            2            2      33.33"


def test_analyze_priority_weighs_the_cells_user_priorities(capsys, files, tmp_path):
    from gridtools.accounting.userprio import Accountant
    from gridtools.cli.condor import machineviews
    from gridtools.spool import condorstate
    domain = machineviews.identity().domain
    slots = tmp_path / "slots"
    slots.write_text(SLOTS.replace("dave@example.org", f"dave@{domain}"))
    acc = Accountant()
    acc.set_priority("dave", 100.0)
    os.makedirs(tmp_path / "root" / "spool", exist_ok=True)
    condorstate.save(condorstate.USERPRIO, acc.to_data())
    argv = list(files) + ["-mconstraint", "Memory > 600", "12.0"]
    line = "      {} match, but are serving users with a better priority in the pool"
    assert line.format(1) in _main(capsys, *argv, "-analyze")[1]
    assert line.format(0) in _main(capsys, *argv, "-analyze:priority")[1]
    assert line.format(1) in _main(capsys, *argv, "-analyze:priority", "-nouserprios")[1]


DETAIL_JOBS = """\
ClusterId = 12
ProcId = 0
Owner = "bob"
JobStatus = 1
Cmd = "/bin/sleep"
RequestMemory = 500
Requirements = (TARGET.Memory >= 1024)

ClusterId = 13
ProcId = 0
Owner = "carol"
JobStatus = 1
Cmd = "/bin/sleep"
RequestMemory = 4000
Requirements = (TARGET.Memory >= 1024)
"""

DETAIL_SLOT = """\
Name = "slot1@n3.example.org"
Machine = "n3.example.org"
Memory = 2048
Draining = false
Requirements = START && WithinResourceLimits
START = (TARGET.Owner != "carol") && (Memory > 1000) && \
ifThenElse(Draining, TARGET.RequestMemory < 10, TARGET.Owner =!= undefined)
WithinResourceLimits = TARGET.RequestMemory <= Memory
"""


def _reduced_table(capsys, tmp_path, option):
    (tmp_path / "jobs").write_text(DETAIL_JOBS)
    (tmp_path / "slot").write_text(DETAIL_SLOT)
    out = _main(capsys, "-jobads", str(tmp_path / "jobs"), "-slotads", str(tmp_path / "slot"), option)[1]
    start = out.index("reduces to these conditions:\n\n") + len("reduces to these conditions:\n\n")
    return out[start:out.index("\n\n", start)].split("\n")


def test_analysis_qualifiers_noprune_and_diagnostic_show_every_step(capsys, tmp_path):
    assert _reduced_table(capsys, tmp_path, "-reverse-analyze") == [
        "       Clusters", "Step   Matched  Condition", "----- --------- ---------",
        '[0]           1  TARGET.Owner != "carol"', "[5]           1  TARGET.RequestMemory <= Memory"]
    everything = [
        "          Clusters", "   Step   Matched  Condition", "   ----- --------- ---------",
        ' * [0]           1  TARGET.Owner != "carol"',
        "   [1]      always  Memory > 1000",
        "   [2]           0  [0] && [1]T",
        "   [3]           2  ifThenElse(Draining,TARGET.RequestMemory < 10,TARGET.Owner isnt undefined)",
        "   [4]           1  [0] && [3]",
        " * [5]           1  TARGET.RequestMemory <= Memory",
        "   [6]           1  [0] && [5]"]
    assert _reduced_table(capsys, tmp_path, "-better-analyze:reverse,noprune") == everything
    # -reverse-analyze takes the flags as numbers (4: noprune), as HTCondor's does
    assert _reduced_table(capsys, tmp_path, "-reverse-analyze:4") == everything
    # diagnostic marks the pruned steps n/a
    assert [line[:3] for line in _reduced_table(capsys, tmp_path, "-better-analyze:reverse,nopr,diag")[3:]] == \
        [" * ", "n/a", "   ", "n/a", "   ", " * ", "   "]
    # a word that is none of them sets the flags from its numbers, none here
    assert _reduced_table(capsys, tmp_path, "-better-analyze:reverse,noprune,bogus")[0] == "       Clusters"


def test_analysis_qualifier_ifthenelse_makes_steps_of_its_arguments(capsys, tmp_path):
    (tmp_path / "jobs").write_text(DETAIL_JOBS)
    (tmp_path / "slot").write_text(DETAIL_SLOT)
    out = _main(capsys, "-jobads", str(tmp_path / "jobs"), "-slotads", str(tmp_path / "slot"),
                "-better-analyze:reverse,ifthenelse")[1]
    assert "    [3]    : Draining\n    [4]    : TARGET.RequestMemory < 10\n" \
           "    [5]    : TARGET.Owner isnt undefined\n    [6]    : ifThenElse([3],[4],[5])\n" \
           "    [7]    : [2] && [6]\n" in out
    # the constant condition picks the third argument; the second one is pruned
    assert _reduced_table(capsys, tmp_path, "-reverse-analyze:12")[3:] == [
        ' * [0]           1  TARGET.Owner != "carol"',
        "   [1]      always  Memory > 1000",
        "   [2]           0  [0] && [1]T",
        " * [3]       never  Draining",
        "   [4]           0  TARGET.RequestMemory < 10",
        "   [5]           2  TARGET.Owner isnt undefined",
        "   [6]           0  ifThenElse([3]F, [4], [5])",
        "   [7]           1  [0] && [5]",
        " * [8]           1  TARGET.RequestMemory <= Memory",
        "   [9]           1  [0] && [8]"]


def test_a_word_that_is_no_whole_job_id_names_an_owner(capsys, files):
    # (queue.cpp: StrIsProcId with something left over: the word is an owner's name)
    code, out, err = _main(capsys, *files[:2], "1.5.3", "-af", "ClusterId")
    assert (code, out, err) == (0, "", "")
    code, out, err = _main(capsys, *files[:2], "13", "-af", "ClusterId")
    assert (code, out, err) == (0, "13\n", "")
