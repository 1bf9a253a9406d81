"""DAGMAN_USE_STRICT: which of a DAG manager's warnings end the DAG, as HTCondor's
DAGMan decides.

Each warning HTCondor's DAGMan can make fatal has a level: 1 the most severe, 2 of
medium severity, 3 almost all the others. The setting (0 to 3, 1 by default; the
DAG's CONFIG file over the cell's condor_config, ``dagman.apply_config``) makes
those of its level and below fatal: the warning is followed in DAGFILE.dagman.out
by ``FATAL_LINE``, and then, as the warning's ``Effect`` says
(``formats.condor.dag``):

- STOP: the DAG ends at once as an aborted one does (``dagrun.Runner``): the rescue
  DAG is written, the node jobs in the queue are removed, the FINAL node runs, and
  the manager exits with status 1 (0 when the FINAL node succeeds); the DAG's
  status is 1 (DAG_STATUS_ERROR);
- REFUSE: the DAG file (or rescue DAG) is not taken: the manager exits with status 1
  at once, running nothing and writing no rescue DAG;
- GO_ON: nothing more; the DAG goes on.

The warnings of the DAG's files (``Dag.notes``) are written when the manager has
read them (``Strictness.notes``); those of the run as they happen
(``Runner.warn``).
"""

#: HTCondor's default setting: the most severe warnings are fatal
DEFAULT = 1
#: the settings there are: 0, no warning is fatal, to 3, almost all are
LOWEST, HIGHEST = 0, 3
#: the line that follows a warning the setting makes fatal, in HTCondor's DAGMan's words
FATAL_LINE = "ERROR: Warning is fatal error because of DAGMAN_USE_STRICT setting"


class Strictness:
    """The setting of one run, and its verdict on each warning."""

    def __init__(self, setting, log):
        self.setting, self.log = int(setting), log

    def fatal(self, level):
        """Whether a warning of ``level`` is fatal: then ``FATAL_LINE`` is written."""
        if self.setting >= level:
            self.log(FATAL_LINE)
            return True
        return False

    def notes(self, notes):
        """Write the warnings of the DAG's files, in order, up to the first fatal one that
        stops the DAG or refuses its file: its Effect (else None)."""
        from gridtools.formats.condor.dag import Effect
        for note in notes:
            self.log(str(note))
            level = getattr(note, "level", None)
            if level is not None and self.fatal(level) and note.effect is not Effect.GO_ON:
                return note.effect
        return None
