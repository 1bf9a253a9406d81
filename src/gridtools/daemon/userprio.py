"""The accountant: HTCondor's user priorities kept by the daemon in ``spool/userprio.json``.

``accounting.userprio.Accountant`` does the arithmetic; this module feeds
it. Every pass charges each accounting name (a job's AccountingGroup, else
``nice-user.<owner>`` or its owner; a Grid Engine job's project makes it
``project.owner``) with the weighted slots its running tasks hold, suspended
ones included, as HTCondor charges claimed slots. The settings
(PRIORITY_HALFLIFE, DEFAULT_PRIO_FACTOR, NICE_USER_PRIO_FACTOR, GROUP_NAMES,
GROUP_PRIO_FACTOR_<g>, ...) come from condor_config. The file is written
after the passes that changed it, at most every SAVE_EVERY seconds, and on
every edit made with condor_userprio; when what the submitters hold changed,
with the status snapshot that shows the change (just before it).

What is shared with the share tree's usage record (``daemon.usage``): the
names (users, and ``project.user`` for Grid Engine projects) and
``qconf -clearusage``, which clears both. The two keep their own measures
and half-lives: the share tree weighs the CPU, memory and I/O jobs used
(sched_conf's halftime), the accountant the slots users hold over time
(PRIORITY_HALFLIFE).
"""

from gridtools.accounting.userprio import Accountant, Settings
from gridtools.spool import condorstate

#: least seconds between two writes of the priorities that only aged
SAVE_EVERY = 5.0


class Priorities:
    """The accountant and whether it must be written."""

    def __init__(self):
        self.accountant = Accountant()
        self.dirty = False
        self.saved = 0.0
        self.in_use = None
        self.held_changed = False    # what submitters hold changed since the last write

    def load(self, log, settings):
        try:
            data = condorstate.load(condorstate.USERPRIO, strict=True)
            if data is not None:
                self.accountant = Accountant.from_data(data, settings)
                return
        except ValueError as exc:
            from gridtools.spool import quarantine
            quarantine.set_aside_said(condorstate.path(condorstate.USERPRIO), "user priorities", exc,
                                      "every user starts afresh", log)
        self.accountant = Accountant(settings)

    def configure(self, settings):
        self.accountant.settings = settings

    def charge(self, in_use, now):
        """Age every priority to ``now``; ``in_use``: name -> weighted slots held from now on."""
        changed = in_use != self.in_use
        self.accountant.update(now, in_use)
        self.in_use = dict(in_use)
        self.dirty = True
        if changed:                     # written with the next status snapshot
            self.held_changed = True
        return changed

    def effective(self, names):
        return self.accountant.effective_map(names)

    def clear(self, now):
        """qconf -clearusage: every real priority back to the best, usage forgotten."""
        for record in self.accountant.records.values():
            record.priority = 0.5
        self.accountant.reset_all(now)
        self.dirty = True
        self.saved = 0.0

    def save_due(self):
        """When the priorities must be written next (None: nothing to write)."""
        return self.saved + SAVE_EVERY if self.dirty else None

    def save(self, now, force=False, publishing=False):
        """Write the priorities when they changed: at once with ``force``, with a status
        snapshot (``publishing``) when what submitters hold changed, else at most every
        SAVE_EVERY seconds."""
        due = force or now - self.saved >= SAVE_EVERY or (publishing and self.held_changed)
        if self.dirty and due:
            condorstate.save(condorstate.USERPRIO, self.accountant.to_data())
            self.dirty = self.held_changed = False
            self.saved = now


def settings_of(conf):
    """The accountant's settings from the cell's condor_config."""
    return conf.derived("accountant", lambda: Settings.from_config(conf.main))
