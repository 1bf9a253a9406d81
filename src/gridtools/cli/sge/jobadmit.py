"""qsub's check of Grid Engine's admission rules (``formats.sge.admission``) before a
job is queued, against the configuration files under etc/ read by hand; the daemon
checks the same rules again when it takes the job in."""

import os

from gridtools import cell
from gridtools.cli.sge import cellfacts
from gridtools.formats.sge import admission


def _object(folder, name):
    if not name or "/" in name or name.startswith("."):
        return None
    path = cell.etc(folder, name)
    if not os.path.isfile(path):
        return None
    return cellfacts.attributes(path)


def _counts():
    """(jobs per owner, all jobs) still in the cell, from the status the daemon published."""
    from gridtools.cli.sge import qstatus
    snap = qstatus.load()
    live = {r["id"] for r in snap["rows"] if r.get("state") != "z"}
    per_owner = {}
    for job_id in live:
        owner = (snap["jobs"].get(job_id) or {}).get("owner")
        per_owner[owner] = per_owner.get(owner, 0) + 1
    return per_owner, len(live)


def cell_view():
    lists = {}
    counted = []

    def member(name, user, _group):
        if user not in lists:
            lists[user] = cellfacts.member_lists(user)
        return name in lists[user]

    def counts():
        if not counted:
            counted.append(_counts())
        return counted[0]

    return admission.CellView(
        conf=cellfacts.attributes(cell.etc("conf", "global")),
        user=lambda name: _object("users", name), project=lambda name: _object("projects", name),
        member=member, jobs_of=lambda user: counts()[0].get(user, 0), jobs_total=lambda: counts()[1])


def refusal(req, owner, group):
    """The admission rules' refusal of a job request (None: accepted); may set its project."""
    spec = dict(req, owner=owner, group=group)
    why = admission.check(spec, cell_view())
    if why is None and spec.get("project") != req.get("project"):
        req["project"] = spec["project"]
    return why
