"""Grid Engine's state letters for queue instances, and the words its scheduler uses.

The scheduler works with ``sched.snapshot.QState`` flags and ``HostState``;
``qstat -f`` shows a queue instance's states as letters (``d`` disabled,
``s`` suspended, ``E`` error, ``D``/``C`` disabled/suspended by calendar,
``S`` subordinated, ``u`` unknown, ``c`` ambiguous configuration, ``o``
orphaned, ``a``/``A`` load/suspend alarm), and the spool keeps the letters
administrators set.
"""

from gridtools.formats.sge.statewords import HOST_WORDS, WORDS  # noqa: F401  (offered here too)
from gridtools.sched.snapshot import QState

LETTERS = {QState.DISABLED: "d", QState.SUSPENDED: "s", QState.ERROR: "E",
           QState.CAL_DISABLED: "D", QState.CAL_SUSPENDED: "C", QState.SUBORDINATED: "S",
           QState.UNKNOWN: "u", QState.AMBIGUOUS: "c", QState.ORPHANED: "o",
           QState.LOAD_ALARM: "a", QState.SUSPEND_ALARM: "A"}
_BY_LETTER = {letter: state for state, letter in LETTERS.items()}


def from_letters(letters):
    """QState of a string of state letters (unknown letters ignored)."""
    state = QState.NONE
    for letter in letters or "":
        state |= _BY_LETTER.get(letter, QState.NONE)
    return state


def to_letters(state):
    """State letters in Grid Engine's order of a QState."""
    return "".join(letter for flag, letter in LETTERS.items() if flag in state)
