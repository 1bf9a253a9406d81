"""A user may not spend another user's fair share: an HTCondor job counts for its owner's
usage, its accounting group's user part must be its owner (accounting_group_user,
+AccountingGroup, condor_qedit), unless the submitter is a queue super user; a group of
GROUP_NAMES alone, whose quota bounds it, may be named by anybody."""

import os
import re

from condortools import write

WORDS = "ERROR: accounting_group_user {user} is not the job's owner {owner}: only a queue super user " \
        "(QUEUE_SUPER_USERS) may charge another user's usage\n"


def _submit(cell, workdir, user, lines):
    write(os.path.join(workdir, "a.sub"), "executable = /bin/true\nhold = true\n" + lines + "queue\n")
    return cell.run("condor_submit", "a.sub", cwd=workdir, user=user)


def _groups(cell, user):
    return cell.run("condor_q", user, "-af", "AccountingGroup").stdout.split()


def test_a_job_may_not_count_for_another_user(cell, users, workdir):
    alice, bob = users[0], users[1]
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("GROUP_NAMES = group_physics\n")
    assert cell.run("condor_reconfig").returncode == 0
    for lines, user in ((f"accounting_group_user = {bob}\n", bob),
                        (f'+AccountingGroup = "group_x.{bob}"\n', bob),
                        ('+AccountingGroup = "group_chem"\n', "group_chem")):
        proc = _submit(cell, workdir, alice, lines)
        assert (proc.returncode, proc.stderr) == (1, WORDS.format(user=user, owner=alice)), lines
        assert "submitted to cluster" not in proc.stdout
    assert _groups(cell, alice) == []
    # an expression that names alice now, and bob once another attribute changes
    proc = _submit(cell, workdir, alice, f'+AccountingGroup = ifThenElse(isUndefined(Flip), "{alice}", "{bob}")\n')
    assert (proc.returncode, proc.stderr) == (1, "ERROR: AccountingGroup must be a literal string: only a queue "
                                                 "super user (QUEUE_SUPER_USERS) may give it as an expression\n")
    assert _groups(cell, alice) == []
    for lines in ("accounting_group = group_x\n", f"accounting_group_user = {alice}\n",
                  '+AccountingGroup = "group_physics"\n'):
        proc = _submit(cell, workdir, alice, lines)
        assert proc.returncode == 0, (lines, proc.stderr)
    assert sorted(_groups(cell, alice)) == sorted([f"group_x.{alice}", alice, "group_physics"])
    assert _submit(cell, workdir, None, f"accounting_group_user = {bob}\n").returncode == 0     # (root)


def test_condor_qedit_may_not_charge_another_user(cell, users, workdir):
    alice, bob = users[0], users[1]
    proc = _submit(cell, workdir, alice, "")
    cluster = re.search(r"cluster (\d+)", proc.stdout).group(1)
    refused = cell.run("condor_qedit", cluster, "AccountingGroup", f'"group_x.{bob}"', user=alice)
    assert refused.returncode != 0
    assert f"accounting_group_user {bob} is not the job's owner {alice}" in refused.stdout + refused.stderr
    assert _groups(cell, alice) == ["undefined"]
    for value in ("MyGroup", f'strcat("group_x.", "{bob}")'):         # (no literal: refused)
        refused = cell.run("condor_qedit", cluster, "AccountingGroup", value, user=alice)
        assert refused.returncode != 0 and "must be a literal string" in refused.stdout + refused.stderr, value
    assert _groups(cell, alice) == ["undefined"]
    done = cell.run("condor_qedit", cluster, "AccountingGroup", f'"group_x.{alice}"', user=alice)
    assert done.returncode == 0, done.stderr
    assert _groups(cell, alice) == [f"group_x.{alice}"]
