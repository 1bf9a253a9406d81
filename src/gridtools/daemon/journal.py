"""Bulk changes made durable by one journal record (``spool.journal``).

A request that deletes or holds at least JOURNAL_MIN whole jobs at once is
recorded as one record instead of a state file per job: ``note`` makes the
record when the change is made in memory (the jobs are left out of the
state files the pass writes), ``commit`` appends the records of an intake
and flushes them to disk before any request is answered. After the answers
the jobs' state files are written a slice at a time (``feed``) or their
folders go with the purge (``gone``); once none is left to write the
journal is removed (``retire_if_done``). A daemon starting after a crash
replays the journal onto the jobs whose state files do not show it and
writes them (``replay``); a request it recorded that waits to be applied
again is answered as it was the first time (``answered_before``).

A request is recorded only once the daemon took it (``spool.inbox.take``
moved it out of the queue, so its client could no longer withdraw it): a
recorded request is either answered or still among the taken requests the
next daemon applies again and answers (``spool.inbox.names``); none was
withdrawn, and every record is replayed.
"""

import time
from dataclasses import dataclass, field

from gridtools.daemon import crash, faults
from gridtools.errors import SpoolError
from gridtools.spool import journal as spool_journal
from gridtools.spool import inbox
from gridtools.spool.rows import ranges

#: a request changes this many whole jobs or more: one journal record, not a state file each
JOURNAL_MIN = 32
#: state files of journalled jobs written per pass once their requests were answered
FEED_SLICE = 500
#: the key of the fault that says the journal cannot be written
FAULT = (faults.WRITE, "journal")


@dataclass
class Journal:
    """The daemon's side of the journal."""
    token: str | None = None      # the journal (None: there is none); named at its first record
    begun: bool = False           # the journal ``token`` is on disk
    seq: int = 0                  # the last record made
    waiting: list = field(default_factory=list)   # records made, not on disk yet
    covered: dict = field(default_factory=dict)   # job id -> last record whose change its state file lacks
    replayed: dict = field(default_factory=dict)  # queued request name -> ids its replayed records name
    sealed: bool = False          # a journal left by an earlier daemon that could not be begun anew


def usable(state, count):
    """True when a change of ``count`` whole jobs is to be journalled."""
    return count >= JOURNAL_MIN and not state.journal.sealed


def note(state, op, job_ids, req_name, now, keep=(), uid=None, **fields):
    """Record a change made in memory to ``job_ids`` (``op``: delete or hold, with its
    ``fields``) that request ``req_name`` of user ``uid`` asked for; the jobs' state files
    are not written for it (those of ``keep``, changed earlier in the pass, are)."""
    j = state.journal
    if j.token is None:
        j.token, j.begun = spool_journal.fresh_token(), False
    j.seq += 1
    record = {"seq": j.seq, "op": op, "at": now, "jobs": ranges(sorted(job_ids)), "req": req_name}
    if uid is not None:
        record["uid"] = uid
    record.update(fields)
    j.waiting.append(record)
    for job_id in job_ids:
        j.covered[job_id] = j.seq
    state.dirty.difference_update(set(job_ids).difference(keep))


def commit(state):
    """Append the records made since the last commit and flush them to disk; False (the
    fault noted) while they cannot be written: no request may be answered then."""
    j = state.journal
    if not j.waiting:
        return True
    try:
        spool_journal.append(j.token, j.waiting, begin=not j.begun)
    except SpoolError as exc:
        faults.note(state, FAULT, faults.WRITE, f"cannot write the journal, retrying: {exc}")
        return False
    j.begun, j.waiting = True, []
    faults.clear(state, FAULT, "journal written again")
    crash.point("journal")
    return True


def durable(state):
    """True when every record made is on disk."""
    return not state.journal.waiting


def stamp(state):
    """What a state file written now carries (None while there is no journal): the
    journal and its last record, on disk or not yet (the state file shows that one's
    change already)."""
    j = state.journal
    return [j.token, j.seq] if j.token is not None else None


def written(state, job_ids):
    """The state files of ``job_ids`` were written: they show every change made so far."""
    covered = state.journal.covered
    if covered:
        for job_id in job_ids:
            covered.pop(job_id, None)


def gone(state, job_ids):
    """The folders of ``job_ids`` left the job store."""
    written(state, job_ids)


def feed(state, most=FEED_SLICE):
    """Have the next flush write up to ``most`` (None: all) journalled jobs' state files;
    True when some were chosen (the next pass should come soon)."""
    chosen = 0
    for job_id in state.journal.covered:
        if job_id in state.jobs and job_id not in state.dirty:
            state.dirty.add(job_id)
            chosen += 1
            if most is not None and chosen >= most:
                break
    return chosen > 0


def retire_if_done(state):
    """Remove the journal once nothing it records is missing from the job store and no
    request it names waits to be answered again (call it when no request waits to be
    answered)."""
    j = state.journal
    if j.token is None or j.covered or j.waiting or j.replayed:
        return
    try:
        spool_journal.retire()
    except OSError:
        return
    j.token, j.seq, j.sealed, j.begun = None, 0, False, False


def answered_before(state, req_name):
    """Ids of the jobs a request changed before the daemon that applied it ended (its
    record replayed, the request not answered): it answers for them as it did then."""
    return state.journal.replayed.pop(req_name, frozenset())


# ---------------------------------------------------------------- replay at start-up

def replay(state):
    """Daemon start: make the changes of a journal an earlier daemon left again, on the
    jobs whose state files do not show them, and write those. The journal is then begun
    anew with what is still needed: for each request it recorded that waits to be
    applied again, an ``answered`` record of the jobs it changed (see
    ``answered_before``), which a later start reads as well."""
    token, records = spool_journal.read()
    if token is None:
        spool_journal.retire()          # nothing readable: it names no change
        return
    j = state.journal
    j.token, j.sealed, j.begun = token, True, True
    j.seq = max([0] + [rec["seq"] for rec in records])
    queued, stamps = inbox.names(), {}     # (taken before the end, or still queued)
    for rec in records:
        ids = spool_journal.job_ids(rec)
        if rec.get("req") in queued:
            j.replayed.setdefault(rec["req"], set()).update(ids)
        if rec["op"] == "answered":
            continue
        older = [state.jobs[i] for i in ids if i in state.jobs and _older(stamps, i, token, rec["seq"])]
        _apply(state, rec, older)
        for job in older:
            j.covered[job.id] = rec["seq"]
    state.log(f"I|journal replayed: {len(records)} records, {len(j.covered)} jobs changed again")
    if state.flush():
        _begin_again(state)


def _begin_again(state):
    """Replace the replayed journal by one holding only its ``answered`` records (or by
    none); it takes new records from then on. Kept when that cannot be written."""
    j = state.journal
    now = time.time()
    kept = [{"seq": n, "op": "answered", "at": now, "jobs": ranges(sorted(ids)), "req": name}
            for n, (name, ids) in enumerate(sorted(j.replayed.items()), 1)]
    token = spool_journal.fresh_token()
    try:
        if kept:
            spool_journal.rewrite(token, kept)
        else:
            spool_journal.retire()
    except (SpoolError, OSError) as exc:
        state.log(f"E|the journal could not be begun anew: {exc}")
        return
    j.token, j.seq, j.sealed, j.begun = (token if kept else None), len(kept), False, bool(kept)
    j.covered.clear()


def _older(stamps, job_id, token, seq):
    """True when the state file of ``job_id`` was written before record ``seq``."""
    from gridtools.spool import jobs as jobstore
    if job_id not in stamps:
        try:
            stored = jobstore.read_state(job_id) or {}
        except Exception:  # noqa: BLE001 - a state file that cannot be read shows no record
            stored = {}
        stamps[job_id] = stored.get("journal") if isinstance(stored, dict) else None
    mark = stamps[job_id]
    return not (isinstance(mark, list) and len(mark) == 2 and mark[0] == token
                and type(mark[1]) is int and mark[1] >= seq)


def _apply(state, rec, jobs):
    """Make the change of one record on ``jobs`` again (those it may still apply to)."""
    from gridtools.daemon import apply, condorjob
    from gridtools.model.job import TaskState
    live = [job for job in jobs if not job.is_finished() and not condorjob.is_condor(job)]
    if rec["op"] == "delete":
        at = rec.get("at") if isinstance(rec.get("at"), (int, float)) else 0.0
        waiting = [job for job in live if not job.is_array
                   and job.state_of(1) in (TaskState.PENDING, TaskState.ERROR)]
        apply.delete_waiting(state, waiting, float(at))   # (ads the history holds: daemon.history.recover)
    else:
        letters = rec.get("letters")
        if isinstance(letters, str) and letters and not set(letters) - set("uos"):
            apply.hold_jobs(state, live, letters, bool(rec.get("on")))
