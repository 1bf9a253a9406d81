"""condor_userprio and condor_reconfig against a running daemon: the table, the edits, who may
make them (ADMINISTRATOR: the cell's managers by default), and the pure table layout."""

import os
import re
import time

from conftest import cell_fixture, destroy_cell, make_cell, wait_for
from gridtools.accounting.userprio import Accountant, Settings
from gridtools.cli.condor import userprio_table
from gridtools.cli.condor.userprio import record_ad


cell = cell_fixture(condor_config="UID_DOMAIN = example.org\n")


def userprio(cell, *args, user=None, code=0):
    proc = cell.run("condor_userprio", *args, user=user)
    assert proc.returncode == code, proc.stderr + proc.stdout
    return proc


def test_a_user_with_running_jobs_is_listed_with_its_use(cell):
    cell.qsub("-b", "y", "sleep", "30", check=True)
    cell.qsub("-b", "y", "sleep", "30", check=True)
    # both jobs running: the daemon publishes the second start in a later pass than the first
    using_two = re.compile(r"^root@example\.org +\S+ +\S+ +2 ", re.M)
    out = wait_for(lambda: (lambda o: o if using_two.search(o) else None)(userprio(cell).stdout), timeout=20)
    lines = out.splitlines()
    assert re.fullmatch(r"Last Priority Update: [ \d]\d/[\d ]{2} \d\d:\d\d", lines[0])
    assert lines[1] == "                    Effective   Priority  Wghted Total Usage  Time Since Submitter Submitter"
    assert lines[2] == "User Name            Priority    Factor   In Use (wghted-hrs) Last Usage   Floor    Ceiling"
    assert lines[3] == "------------------ ------------ --------- ------ ------------ ---------- --------- ---------"
    assert re.fullmatch(r"root@example\.org  +0\.5\d      1\.00      2 +0\.\d\d      <now>", lines[4])
    assert lines[5] == lines[3]
    # (the footer's Time Since is the age of the cut-off: a day before now)
    assert re.fullmatch(r"Number of users: 1 +2 +0\.\d\d +(1\+00:00|0\+23:59)", lines[6])


def test_edits_by_a_manager(cell):
    assert userprio(cell, "-setfactor", "gtcarol@example.org", "2").stdout == \
        "The priority factor of gtcarol@example.org was set to 2.000000\n"
    assert userprio(cell, "-setprio", "gtcarol@example.org", "3.5").stdout == \
        "The priority of gtcarol@example.org was set to 3.500000\n"
    assert userprio(cell, "-setaccum", "gtcarol@example.org", "7200").stdout == \
        "The Accumulated Usage of gtcarol@example.org was set to 7200.000000\n"
    out = userprio(cell, "-allusers", "-all").stdout
    row = next(ln for ln in out.splitlines() if ln.startswith("gtcarol@example.org"))
    assert row.split()[1:4] == ["7.00", "3.50", "2.00"]     # effective, real, factor
    assert "2.00" in row.split()                             # two hours of usage
    assert userprio(cell, "-resetusage", "gtcarol@example.org").stdout == \
        "The accumulated usage of gtcarol@example.org was reset\n"
    assert userprio(cell, "-resetall").stdout == "The accumulated usage was reset for all users\n"
    assert userprio(cell, "-delete", "gtcarol@example.org").stdout == \
        "The accountant record named gtcarol@example.org was deleted\n"
    assert "gtcarol" not in userprio(cell, "-allusers").stdout


def test_inactive_users_need_allusers(cell):
    userprio(cell, "-setfactor", "gtbob@example.org", "1")
    userprio(cell, "-setlast", "gtbob@example.org", str(int(time.time()) - 3 * 86400))
    assert "gtbob" not in userprio(cell).stdout
    assert "gtbob" not in userprio(cell, "-constraint", "true").stdout
    # the long form and -af show every record, as HTCondor's condor_userprio does
    assert 'Name = "gtbob@example.org"' in userprio(cell, "-l").stdout
    assert "gtbob@example.org" in userprio(cell, "-af", "Name").stdout.split()
    out = userprio(cell, "-allusers", "-usage").stdout
    assert "gtbob@example.org" in out and "Usage Start Time" not in out
    assert out.splitlines()[1].split() == ["Wghted", "Total", "Usage", "Usage", "Last"]


def test_wrong_edits(cell):
    proc = userprio(cell, "-setfactor", "gtbob", "2", code=1)
    assert proc.stderr.startswith("condor_userprio: You must specify the full name of the submittor")
    proc = userprio(cell, "-setfactor", "gtbob@example.org", "0.5", code=1)
    assert proc.stderr == "Priority factors must be greater than or equal to 1.\n"
    proc = userprio(cell, "-setfactor", "gtbob@example.org", code=1)
    assert proc.stderr.startswith("usage: condor_userprio [options]")
    # no number beyond a float's or a clock's reach is stored: the listing would break for all
    for op, value, why in (("-setprio", "1e309", "is not a finite number"),
                           ("-setaccum", "inf", "is not a finite number"),
                           ("-setlast", "99999999999999999999", "is not a time"),
                           ("-setbegin", "-1", "is not a time")):
        proc = userprio(cell, op, "gtbob@example.org", value, code=1)
        assert proc.stderr == f"condor_userprio: {value!r} {why}" + \
            (" (seconds since 1970, to the year 9999)\n" if why == "is not a time" else "\n"), proc.stderr
    assert userprio(cell, "-all").returncode == 0


def test_only_administrators_edit_and_reconfigure(cell, users):
    proc = userprio(cell, "-setfactor", "gtbob@example.org", "9", user="gtbob", code=1)
    assert proc.stdout == ""
    assert 'SECMAN:2010:Received "DENIED" from server for user gtbob@example.org using method FS.' in proc.stderr
    messages = os.path.join(cell.root, "spool", "messages")       # written after the answer
    wait_for(lambda: "PERMISSION DENIED to gtbob@example.org" in open(messages).read())
    proc = cell.run("condor_reconfig", user="gtbob")
    assert proc.returncode == 1 and "Can't send Reconfig command to local master" in proc.stderr
    assert "gtbob" not in userprio(cell, "-allusers", user="gtbob").stdout   # READ is open to all
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("ALLOW_ADMINISTRATOR = gtbob@*/*\n")
    reconfig = cell.run("condor_reconfig")
    assert reconfig.returncode == 0 and reconfig.stdout == 'Sent "Reconfig" command to local master\n'
    assert userprio(cell, "-setfactor", "gtbob@example.org", "9", user="gtbob").stdout == \
        "The priority factor of gtbob@example.org was set to 9.000000\n"
    # the configured list replaced the managers: root is not in it any more
    userprio(cell, "-setfactor", "gtbob@example.org", "2", code=1)


def test_long_form_and_autoformat(cell):
    userprio(cell, "-setfactor", "gtcarol@example.org", "4")
    out = userprio(cell, "-allusers", "-l").stdout
    attrs = dict(line.split(" = ", 1) for line in out.strip().splitlines())
    assert attrs["Name"] == '"gtcarol@example.org"' and attrs["PriorityFactor"] == "4.0"
    assert userprio(cell, "-allusers", "-af", "Name", "Priority").stdout == "gtcarol@example.org 2.0\n"


def test_long_form_of_groups_carries_their_quotas(workdir):
    """HTCondor's accountant publishes ConfigQuota (the configured value: slots, or the
    fraction of a dynamic quota), EffectiveQuota and SubtreeQuota (slots, from the last
    negotiation), SurplusPolicy (no, byquota, regroup), GroupSortKey and Requested in each
    group's ad, and every ad's AccountingGroup."""
    from condortools import negotiated, submit
    cell = make_cell(slots=2, hosts=["n1", "n2", "n3"], start=False)
    try:
        negotiated(cell, "UID_DOMAIN = example.org\nGROUP_NAMES = physics, chemistry\n"
                   "GROUP_QUOTA_physics = 4\nGROUP_AUTOREGROUP_physics = True\n"
                   "GROUP_QUOTA_DYNAMIC_chemistry = 0.5\nGROUP_ACCEPT_SURPLUS_chemistry = True\n")
        cell.start_daemon()
        for group in ("physics", "chemistry"):
            submit(cell, f"executable = /bin/sleep\narguments = 30\naccounting_group = {group}\n"
                         "queue\n", cwd=workdir, name=f"{group}.sub")
        submit(cell, "executable = /bin/sleep\narguments = 30\nqueue\n", cwd=workdir, name="none.sub")

        def ads():
            out = userprio(cell, "-allusers", "-l").stdout
            found = {}
            for block in out.strip().split("\n\n") if out.strip() else ():
                attrs = dict(line.split(" = ", 1) for line in block.splitlines())
                found[attrs["Name"].strip('"')] = attrs
            groups = [found.get(g, {}) for g in ("physics", "chemistry", "<none>")]
            # (the ads of a cycle that began once the three jobs were in: Requested is what
            # was asked as the last cycle began, ResourcesUsed what is held now)
            return found if all(a.get("EffectiveQuota", "0.0") != "0.0" and a.get("Requested") == "1.0"
                                for a in groups) else None
        found = wait_for(ads, timeout=30)
        physics, chemistry = found["physics"], found["chemistry"]
        # 6 slots: physics has its static 4, chemistry half of the 2 left, <none> the rest
        assert (physics["ConfigQuota"], physics["EffectiveQuota"], physics["SubtreeQuota"]) == \
            ("4.0", "4.0", "4.0")
        assert (chemistry["ConfigQuota"], chemistry["EffectiveQuota"], chemistry["SubtreeQuota"]) == \
            ("0.5", "1.0", "1.0")
        assert physics["SurplusPolicy"] == '"regroup"' and chemistry["SurplusPolicy"] == '"byquota"'
        # what each group's submitters asked for (one job: idle, or running), and its place
        # in the order of GROUP_SORT_EXPR (its usage over its quota)
        assert physics["Requested"] == chemistry["Requested"] == "1.0"
        assert physics["GroupSortKey"] in ("0.0", "0.25") and chemistry["GroupSortKey"] in ("0.0", "1.0")
        assert physics["IsAccountingGroup"] == "true" and physics["AccountingGroup"] == '"<none>"'
        user = found["physics.root@example.org"]
        assert user["IsAccountingGroup"] == "false" and user["AccountingGroup"] == '"physics"'
        assert "ConfigQuota" not in user and "SurplusPolicy" not in user and "GroupSortKey" not in user
        assert userprio(cell, "-allusers", "-constraint", 'SurplusPolicy == "byquota"',
                        "-af", "Name", "ConfigQuota").stdout == "chemistry 0.5\n"
        # the root group <none> too (its ad charged with root's job): nothing configured,
        # the whole pool under it, and regroup since a group autoregroups (byquota
        # otherwise); in autoregroup mode HTCondor gives it the whole pool as its quota
        none = found["<none>"]
        assert (none["ConfigQuota"], none["EffectiveQuota"], none["SubtreeQuota"]) == ("0.0", "6.0", "6.0")
        assert none["ResourcesUsed"] == "1" and none["GroupSortKey"] == "3.4E+38"
        assert none["SurplusPolicy"] == '"regroup"' and none["Requested"] == "1.0"
        assert none["IsAccountingGroup"] == "true" and none["AccountingGroup"] == '"<none>"'
    finally:
        destroy_cell(cell)


# ---------------------------------------------------------------- the table, pure

def test_groups_are_shown_with_their_members():
    settings = Settings(groups=("physics",))
    acc = Accountant(settings)
    acc.update(1000.0, {"physics.alice": 2, "bob": 1})
    acc.update(1000.0 + 3600, {"physics.alice": 2, "bob": 1})
    text = userprio_table.render(acc.rows(acc.last_update), acc, "x.org", acc.last_update)
    names = [ln.split()[0] for ln in text.splitlines()[4:-2]]
    assert names == ["physics", "physics.alice@x.org", "<none>", "bob@x.org"]
    assert text.splitlines()[1].startswith("Group ") and text.splitlines()[2].startswith("  User Name")
    assert "Config" in text.splitlines()[1] and "Surplus" in text.splitlines()[2]


def test_the_root_group_is_charged_for_the_users_in_no_group_when_groups_are_configured():
    """HTCondor's accountant keeps a record of the root group <none> and charges it for
    the submitters of no configured group, as each group for its own."""
    plain = Accountant(Settings())
    grouped = Accountant(Settings(groups=("physics",)))
    for acc in (plain, grouped):
        acc.update(1000.0, {"physics.alice": 2, "bob": 1})
        acc.update(1000.0 + 3600, {"physics.alice": 2, "bob": 1})
    assert sorted(plain.records) == ["bob", "physics.alice"]
    assert sorted(grouped.records) == ["<none>", "bob", "physics", "physics.alice"]
    none = next(r for r in grouped.rows(grouped.last_update) if r.name == "<none>")
    assert none.is_group and none.in_use == 1 and none.accumulated_hours == 1.0
    ad = record_ad(none, "x.org", quotas={"ConfigQuota": 0.0, "SurplusPolicy": "byquota"})
    assert ad.eval("AccountingGroup") == "<none>" and ad.eval("IsAccountingGroup") is True
    assert ad.eval("Name") == "<none>" and ad.eval("SurplusPolicy") == "byquota"


def test_use_surplus_says_the_groups_policy_as_htcondor_does(tmp_path, monkeypatch):
    """user_prio.cpp SurplusName: Regroup (GROUP_AUTOREGROUP), ByQuota
    (GROUP_ACCEPT_SURPLUS) or no; the <none> group always takes surplus: yes."""
    config = tmp_path / "condor_config"
    config.write_text("GROUP_NAMES = cms, infn, lhcb\nGROUP_QUOTA_cms = 1\n"
                      "GROUP_ACCEPT_SURPLUS_cms = True\nGROUP_QUOTA_DYNAMIC_infn = 0.5\n"
                      "GROUP_AUTOREGROUP_infn = True\nGROUP_QUOTA_lhcb = 2\n")
    monkeypatch.setenv("CONDOR_CONFIG", str(config))
    settings = Settings(groups=("cms", "infn", "lhcb"))
    acc = Accountant(settings)
    usage = {"cms.alice": 1, "infn.bob": 1, "lhcb.carol": 1, "dave": 1}
    acc.update(1000.0, usage)
    acc.update(1000.0 + 3600, usage)
    text = userprio_table.render(acc.rows(acc.last_update), acc, "x.org", acc.last_update)
    rule = text.splitlines()[3]                     # the third column is Use Surplus
    start = rule.index(" -------", rule.index(" ---------") + 1) + 1
    surplus = {ln.split()[0]: ln[start:start + 7].strip() for ln in text.splitlines()[4:-2]
               if not ln.startswith("  ")}
    assert surplus == {"cms": "ByQuota", "infn": "Regroup", "lhcb": "no", "<none>": "yes"}
