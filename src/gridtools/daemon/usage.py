"""The daemon's record of decayed usage (``accounting.usage.Ledger``), kept in the spool.

Every task adds what it used (CPU seconds, memory integral, I/O, as its
shepherd measured them) to its owner's and project's accounts: while it
runs, what its shepherd reports (``task_running``, once every scheduling
interval), and when it ends, the rest (``task_ended``); nothing is counted
twice. The
scheduler reads the accounts, decayed to the time of each pass, as the
members' usage of the share tree. The half-life is sched_conf's
``halftime`` (hours; 0 keeps usage forever), or for each kind of usage the
minutes its ``halflife_decay_list`` gives (0 keeps it forever, a negative
value counts only what was used since the previous pass). Each task of a job that ends (not the tasks
of a parallel job's slaves) also counts as one finished job for its owner
and project (``Ledger.count_finished``), decayed as halflife_decay_list's
``finished_jobs`` says (without a list: forgotten at once).
"""

from gridtools.accounting.usage import ZERO, AccountKey, HalfLife, Ledger, Sample, Usage
from gridtools.sched.policy.inputs import ProjectUsage
from gridtools.spool import usage as store


class Keeper:
    """The ledger, and whether it must be written."""

    def __init__(self):
        self.ledger = Ledger()
        self.dirty = False
        self.urgent = False          # a request changed it: written before it is answered
        self.halftime = None         # the half-lives in force, seconds of cpu, mem, io, jobs

    def load(self, log):
        try:
            data = store.load()
            if data is None:
                return
            self.ledger = Ledger.from_data(data)
        except ValueError as exc:
            from gridtools.spool import quarantine
            quarantine.set_aside_said(store.path(), "usage record", exc, "share-tree usage starts afresh", log)

    def configure(self, policy, now):
        """Follow sched_conf's halftime and halflife_decay_list (a PolicyConfig)."""
        seconds = tuple(policy.half_lives()) + (policy.finished_half_life(),)
        if seconds == self.halftime:
            return
        self.halftime = seconds
        self.ledger.set_half_life(HalfLife(*seconds), now)
        self.dirty = True

    def task_running(self, spec, number, used):
        """Count what a running task has used so far (``spool.jobs.read_usage``); True
        when that is more than was counted before."""
        sample = Sample(spec["id"], number, spec["owner"], spec.get("project") or None,
                        Usage(used["cpu"], used["mem"], used["io"]), used["time"])
        grown = self.ledger.record(sample) != ZERO
        self.dirty = self.dirty or grown
        return grown

    def task_ended(self, spec, number, result, now):
        """Count what an ended task used."""
        used = result.get("usage") or {}
        cpu = float(used.get("ru_utime", 0.0) or 0.0) + float(used.get("ru_stime", 0.0) or 0.0)
        sample = Sample(spec["id"], number, spec["owner"], spec.get("project") or None,
                        Usage(cpu, float(used.get("mem", 0.0) or 0.0), float(used.get("io", 0.0) or 0.0)),
                        float(result.get("end_time") or now))
        self.ledger.finish(sample)
        if isinstance(number, int):          # a task of the job (a slave's is "N.pe.x")
            self.ledger.count_finished(sample.user, sample.project, sample.time)
        self.dirty = True

    def task_gone(self, job_id, number):
        """A task ended with nothing more to count: what its running reports counted
        stays, and the task is no longer followed."""
        if self.ledger.drop(job_id, number):
            self.dirty = True

    def clear(self, now):
        self.ledger.clear(now)
        self.dirty = self.urgent = True

    def save(self):
        """Write the record when it changed; True when it was written."""
        if not self.dirty:
            return False
        store.save(self.ledger.to_data())
        self.dirty = self.urgent = False
        return True

    def users(self):
        """Users with an account."""
        return sorted({k.name for k in self.ledger.accounts if k.holder.value != "project"})

    def usage_of(self, now):
        """``usage_of(kind, name)`` as ``sched.inputs.members`` wants it, at ``now``:
        (decayed usage, long-term usage, in-project usage, decayed finished jobs)."""
        ledger = self.ledger

        def of(kind, name):
            key = AccountKey.user(name) if kind == "user" else AccountKey.of_project(name)
            in_projects = ()
            if kind == "user":
                in_projects = tuple(
                    ProjectUsage(p, ledger.usage(AccountKey.user_in(name, p), now),
                                 ledger.long_term(AccountKey.user_in(name, p)),
                                 ledger.finished_jobs(AccountKey.user_in(name, p), now))
                    for p in ledger.projects_of(name))
            return ledger.usage(key, now), ledger.long_term(key), in_projects, ledger.finished_jobs(key, now)
        return of
