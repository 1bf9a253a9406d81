"""The ads condor_status makes from the job queue: one submitter ad per accounting
principal (``-submitters``) and the schedd's (``-schedd``).

As HTCondor's schedd publishes them, a submitter is an accounting principal:
the job's AccountingGroup (``group.user``) when it has one, ``nice-user.<owner>``
for a nice_user job, else its owner (``sched.negotiator.accounting_name``, the
name the negotiator and condor_userprio know it by), with ``@`` and the
cell's domain. A Grid Engine job's ``-P`` project is its accounting group.
Each proc counts for its own principal (the procs of one cluster may name
different groups): RunningJobs (suspended ones too), IdleJobs and HeldJobs
(Grid Engine's error state too). The principal of another user's proc comes
from the text of its ad the daemon publishes for everyone (AccountingGroup
is not private), with condor_qedit's edits laid over it.

Their tables (``submitter_table``, ``schedd_table``) are HTCondor's: ``Name
Machine RunningJobs IdleJobs HeldJobs`` (Name and Machine fitted to the
display: ``fitted_pair``) and the totals.
"""

from gridtools import cell
from gridtools.classad import ClassAd
from gridtools.cli.condor.machineviews import KEY_WIDTH, _number, _text
from gridtools.cli.condor.queue import row_numbers

#: the attributes that decide a job's accounting principal, in lower case
_PRINCIPAL_ATTRS = ("accountinggroup", "niceuser")


def _count(row):
    tasks = row.get("tasks")
    if not tasks:
        return 1
    return sum((last - first) // step + 1 for first, last, step in tasks)


def _kind(state):
    if state.startswith("z"):
        return None
    if state.startswith(("h", "E")):
        return "held"
    if state.endswith("q") or state.endswith("qw"):
        return "idle"
    return "running"


class _Principals:
    """The accounting principal of each proc of the published status, each ad text parsed
    once (jobs submitted alike share one)."""

    def __init__(self, snap):
        self.snap = snap
        self.by_text = {}

    def of_job(self, cluster, info):
        """The principal of every proc of a job (a text), or a function of the proc's task
        number when its procs have texts of their own."""
        cinfo = info.get("condor") or {}
        edits = {name: text for name, text in (cinfo.get("edits") or {}).items()
                 if name.lower() in _PRINCIPAL_ATTRS}
        texts = None
        if cinfo.get("ads"):
            from gridtools.cli.condor.queue import published_ad
            texts = published_ad(self.snap, cluster)
        owner = info.get("owner") or "?"
        if isinstance(texts, list) and len(texts) > 1:
            return lambda number: self._name(texts, number, owner, edits)
        if isinstance(texts, list):
            texts = texts[0] if texts else None
        if texts is None:
            project = info.get("project") or ""
            if not edits:
                return f"{project}.{owner}" if project else owner
            texts = ""
        return self._name(texts, 1, owner, edits, project=info.get("project") or "")

    def _name(self, texts, number, owner, edits, project=""):
        key = (texts if isinstance(texts, str) else id(texts), number if not isinstance(texts, str) else 1,
               owner, tuple(sorted(edits.items())), project)
        found = self.by_text.get(key)
        if found is None:
            found = self.by_text[key] = _principal(texts, number, owner, edits, project)
        return found


def _principal(texts, number, owner, edits, project):
    from gridtools import jobads
    from gridtools.classad import parse
    from gridtools.classad.parser import ClassAdSyntaxError
    from gridtools.sched.negotiator import accounting_name
    ad = ClassAd({"Owner": owner})
    try:
        if isinstance(texts, list):
            base = jobads.proc_ad(tuple(texts), min(number, len(texts)))
        else:
            base = jobads.parsed_ad(texts) if texts else None
    except ClassAdSyntaxError:
        base = None
    if base is not None:
        for name in ("AccountingGroup", "NiceUser"):
            expr = base.lookup(name)
            if expr is not None:
                ad[name] = expr
    elif project:
        ad["AccountingGroup"] = f"{project}.{owner}"
    for name, text in edits.items():
        try:
            ad[name] = parse(text)
        except ClassAdSyntaxError:
            continue
    return accounting_name(ad) or owner


def job_counts(snap):
    """accounting principal (without its domain) -> {"running", "idle", "held"} of the
    published rows (see the module docstring)."""
    found = {}
    jobs = snap.get("jobs") or {}
    principals = _Principals(snap)
    for row in snap.get("rows") or []:
        kind = _kind(row.get("state", ""))
        if kind is None:
            continue
        info = jobs.get(row["id"]) or {}
        name = principals.of_job(row["id"], info)
        if isinstance(name, str):
            found.setdefault(name, {"running": 0, "idle": 0, "held": 0})[kind] += _count(row)
            continue
        for number in row_numbers(row):
            found.setdefault(name(number), {"running": 0, "idle": 0, "held": 0})[kind] += 1
    return found


def submitter_ads(snap, now, domain):
    host = cell.hostname()
    ads = []
    for name, counts in sorted(job_counts(snap).items()):
        ads.append(ClassAd({"MyType": "Submitter", "Name": f"{name}@{domain}", "Machine": host,
                            "ScheddName": host, "RunningJobs": counts["running"],
                            "IdleJobs": counts["idle"], "HeldJobs": counts["held"],
                            "CurrentTime": int(now)}))
    return ads


def schedd_ads(snap, now):
    """The schedd's ad: its name, its job counts (TotalRunningJobs, TotalIdleJobs,
    TotalHeldJobs, their sum TotalJobAds, and NumUsers, the submitters with jobs in
    the queue) and what the schedd cron jobs (SCHEDD_CRON_JOBLIST) gave it."""
    from gridtools.formats.condor import VERSION, submitreqs
    host = cell.hostname()
    totals = {"running": 0, "idle": 0, "held": 0}
    counts = job_counts(snap)
    for mine in counts.values():
        for key in totals:
            totals[key] += mine[key]
    ad = submitreqs.schedd_ad(host, VERSION, snap.get("schedd") or ())
    for name, value in (("TotalRunningJobs", totals["running"]), ("TotalIdleJobs", totals["idle"]),
                        ("TotalHeldJobs", totals["held"]), ("TotalJobAds", sum(totals.values())),
                        ("NumUsers", len(counts)), ("CurrentTime", int(now))):
        ad[name] = value
    return [ad]


def current_schedd_ad(now):
    """The schedd's ad as the daemon last published its status (job counts of zero when
    it has published none)."""
    from gridtools.spool import status
    return schedd_ads(status.read() or {}, now)[0]


# ---------------------------------------------------------------- tables

#: the job counts of -submitters and -schedd: (heading, width)
_JOB_COLUMNS = (("RunningJobs", 11), ("IdleJobs", 10), ("HeldJobs", 10))
#: the narrowest Name and Machine columns of -submitters and -schedd (HTCondor's)
NAME_LEAST, MACHINE_LEAST = 15, 12
#: the width HTCondor counts for the columns after Name and Machine of -submitters and
#: -schedd when it fits them to a display
JOB_FIXED = 35


def fitted_pair(name_w, mach_w, fit):
    """HTCondor's fit of the Name and Machine columns of -submitters and -schedd to a
    display that is not wide (``fit``: its width less one; None: none): when they and
    the JOB_FIXED columns after them overflow it, Machine gives up half of the excess
    (down to 7 characters), Name the rest (down to 12)."""
    if fit is None:
        return name_w, mach_w
    crop = -(fit - JOB_FIXED - name_w - mach_w)
    if crop <= 0:
        return name_w, mach_w
    narrower = max(7, mach_w - crop // 2)
    crop -= mach_w - narrower
    return max(12, name_w - crop), narrower


def _job_table(ads, prefix, totals_only, fit=None):
    """The rows of -submitters (``prefix`` "") or -schedd ("Total": the attributes are
    TotalRunningJobs ..., the headings the same as the submitters'); Name and Machine
    as wide as their longest values, at least NAME_LEAST and MACHINE_LEAST, fitted to
    the display (``fitted_pair``: a value longer than its column is cut then)."""
    attrs = [prefix + name for name, _w in _JOB_COLUMNS]
    names, widths = [name for name, _w in _JOB_COLUMNS], [w for _n, w in _JOB_COLUMNS]
    name_w = max([NAME_LEAST] + [len(_text(ad, "Name")) for ad in ads])
    mach_w = max([MACHINE_LEAST] + [len(_text(ad, "Machine")) for ad in ads])
    name_w, mach_w = fitted_pair(name_w, mach_w, fit)
    out = []
    if not totals_only:
        head = "Name".ljust(name_w) + " " + "Machine".ljust(mach_w) + " " + " ".join(
            n.rjust(w) for n, w in zip(names, widths))
        out.append(head.rstrip() + "\n\n")
        for ad in ads:
            values = [str(_number(ad, a) or 0).rjust(w) for a, w in zip(attrs, widths)]
            out.append(f"{_text(ad, 'Name')[:name_w].ljust(name_w)} {_text(ad, 'Machine')[:mach_w].ljust(mach_w)} "
                       + " ".join(values) + "\n")
    return out


def submitter_table(ads, totals_only=False, fit=None):
    out = _job_table(ads, "", totals_only, fit)
    if ads:
        key_w = max([5] + [len(_text(ad, "Name")) for ad in ads])
        sums = [sum(_number(ad, a) or 0 for ad in ads) for a in ("RunningJobs", "IdleJobs", "HeldJobs")]
        out.append(("\n" if not totals_only else "") + " " * key_w + "%11s %10s %10s\n" %
                   ("RunningJobs", "IdleJobs", "HeldJobs") + "\n")
        for ad in ads:
            out.append(_text(ad, "Name").rjust(key_w) + "%11d %10d %10d\n" % tuple(
                _number(ad, a) or 0 for a in ("RunningJobs", "IdleJobs", "HeldJobs")))
        out.append("\n" + "Total".rjust(key_w) + "%11d %10d %10d\n" % tuple(sums))
    return "".join(out)


def schedd_table(ads, totals_only=False, key_min=KEY_WIDTH, fit=None):
    out = _job_table(ads, "Total", totals_only, fit)
    if ads:
        sums = [sum(_number(ad, a) or 0 for ad in ads)
                for a in ("TotalRunningJobs", "TotalIdleJobs", "TotalHeldJobs")]
        out.append(("\n" if not totals_only else "") + " " * key_min + "%18s %18s %18s\n" %
                   ("TotalRunningJobs", "TotalIdleJobs", "TotalHeldJobs") + "\n")
        # HTCondor keys every schedd ad " " and prints no figures after a key, only after
        # Total: the key's line is the key column's blanks alone
        out.append(" " * key_min + "\n")
        out.append("Total".rjust(key_min) + "%18d %18d %18d\n" % tuple(sums))
    return "".join(out)
