"""What only the condor_submit runs of some configurations need, kept out of the
command's start-up (``cli.condor.submit`` imports it where it is used): the check
of the submit requirements (SUBMIT_REQUIREMENT_NAMES, after the job transforms),
the check of the queue's limits (MAX_JOBS_SUBMITTED, MAX_JOBS_PER_OWNER), and
the sending of clusters whose answers are waited for, and condor_submit's words
for a refusal of the daemon.
"""

import sys
import time

from gridtools.cli import ask
from gridtools.cli.condor.submit import CONDOR, Refused, _said, setting, summary
from gridtools.errors import GridError, InputError


def check_requirements(clusters, opts, names):
    """Check each job against the submit requirements of this host's configuration
    (``names``: its SUBMIT_REQUIREMENT_NAMES, not blank; ``formats.condor.submitreqs``),
    as the schedd would check it: after the configuration's job transforms
    (JOB_TRANSFORM_NAMES) changed its ad, with its ClassAd user maps (left to the daemon
    when one cannot be read). A job one refuses refuses the submission (``Refused``, exit
    1, in condor_submit's words, after the "Submitting job(s)" it printed). Returns the
    first warning of the rules that only warn, or nothing."""
    from gridtools.formats.condor import submitreqs, usermaps
    found, _problems = submitreqs.rules(setting, names)
    if not found:
        return []
    maps, unread = usermaps.load(setting)
    if unread:
        opts["confirm"] = True      # (a map this user cannot read: the daemon checks with its own)
        return []
    usermaps.install(maps)
    from gridtools.cli.condor.submitters import current_schedd_ad
    schedd = current_schedd_ad(time.time())
    changes = _transforms(opts["knobs"].get("JOB_TRANSFORM_NAMES"))
    warned = []
    for _cluster, ads in clusters:
        for ad in ads:
            job = ad.classad()
            if changes:
                from gridtools.formats.condor.transforms import apply
                try:
                    apply(changes, job)
                except (ValueError, TypeError):
                    pass                # (the daemon refuses it, and says why)
            refusal, warnings = submitreqs.check(found, schedd, job)
            warned.extend(text for text in warnings if text not in warned)
            if refusal is not None:
                if not opts["terse"]:
                    sys.stdout.write(summary(clusters, False).partition("\n")[0])
                    sys.stdout.flush()
                sys.stderr.write(submitreqs.refusal_text(_said(refusal)))
                raise Refused()
    return warned[:1]


def _transforms(names):
    """The job transforms of this host's configuration (``formats.condor.transforms``)."""
    if not names or not names.strip():
        return []
    from gridtools.cli.condor.machineviews import client_config
    from gridtools.formats.condor.transforms import load
    return load(names, client_config().raw)[0]


def check_job_limits(clusters, knobs, owner, factories=None):
    """Refuse a submission that would take the queue over MAX_JOBS_SUBMITTED procs, or
    its owner's over MAX_JOBS_PER_OWNER, when this host's configuration sets them (the
    queue is counted from the daemon's last status then; a cluster materialized late,
    ``factories``, counts the procs it may have in the queue at once), in condor_submit's
    words; the daemon holds to the cell's limits, whatever they are, in any case."""
    from gridtools.errors import lines
    from gridtools.formats.condor.jobad import MAX_JOBS_PER_OWNER, MAX_JOBS_SUBMITTED
    from gridtools.formats.condor_config import integer
    from gridtools.spool import status
    from gridtools.cli.condor.submitters import _count
    try:
        most = integer(knobs, "MAX_JOBS_SUBMITTED", MAX_JOBS_SUBMITTED)
        per_owner = integer(knobs, "MAX_JOBS_PER_OWNER", MAX_JOBS_PER_OWNER)
    except GridError:
        return
    snap = status.read_sections("rows", "jobs") or {}
    jobs = snap.get("jobs") or {}
    rows = [row for row in snap.get("rows") or () if not str(row.get("state", "")).startswith("z")]
    total = sum(_count(row) for row in rows)
    mine = sum(_count(row) for row in rows if _owner_of(jobs.get(row.get("id"))) == owner)
    factories = factories or {}
    new = sum(min(len(ads), factories[cluster][0]) if cluster in factories else len(ads)
              for cluster, ads in clusters)
    for count, limit, knob in ((total, most, "MAX_JOBS_SUBMITTED"), (mine, per_owner, "MAX_JOBS_PER_OWNER")):
        if count + new > limit:
            raise InputError(lines("ERROR: Failed to create proc", f"Number of submitted jobs would exceed {knob}"))


def _owner_of(info):
    """The owner a published job's facts name (a job's facts are a dict, first of a
    tuple), or None."""
    if isinstance(info, (tuple, list)) and info:
        info = info[0]
    return info.get("owner") if isinstance(info, dict) else None


def refusal_words(answer):
    """(whether "Submitting job(s)" comes first, the error text): condor_submit's words
    for the daemon's refusal of a cluster (``answer``: the error text of its answer,
    which words a refusal of the security levels or of an unreadable configuration as
    HTCondor does, and others as Grid Engine's ``Unable to run job: WHY``), as this
    command words a refusal it finds itself: a submit requirement's after the proc dots,
    the others alone."""
    if answer.startswith("SECMAN:"):
        return False, "ERROR: Failed to connect to local queue manager\n" + answer
    if answer.startswith("Configuration Error"):
        return False, answer
    why = answer.strip()
    for prefix in ("Unable to run job: ", "error: invalid submit request: "):
        if why.startswith(prefix):
            why = why[len(prefix):]
            why = why.rpartition("\nExiting.")[0] or why
            break
    if why.startswith("Number of submitted jobs would exceed"):
        return False, f"ERROR: Failed to create proc\n{why}\n"
    if not answer.startswith("Unable to run job: "):
        return False, f"ERROR: {_said(why)}\n"
    from gridtools.formats.condor.submitreqs import refusal_text
    return True, refusal_text(_said(why))


def send_confirmed(specs, confirm, sent):
    """Queue the clusters' requests (``specs``), each answer waited for (``confirm``:
    (opts, clusters), see ``submit._send``): one the daemon refuses is said as
    condor_submit says a schedd's refusal (``Refused``), and those after it are not
    sent. ``sent``: a one-item list, the count of those sent (a refused one's id went
    back in the daemon)."""
    from gridtools.spool import requests, wake
    ask.ensure_daemon()
    for spec in specs:
        name = requests.write("submit", {"job": spec, "dialect": CONDOR}, reply=True)
        wake.poke()
        code, _out, err = requests.wait_reply(name, ask.REPLY_TIMEOUT)
        sent[0] += 1
        if code:
            head, text = refusal_words(err)
            if head and not confirm[0]["terse"]:
                sys.stdout.write(summary(confirm[1], False).partition("\n")[0])
                sys.stdout.flush()
            sys.stderr.write(text)
            raise Refused()
