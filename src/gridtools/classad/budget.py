"""The cost of one ClassAd evaluation.

An expression comes from a user (a job's Requirements, a condor_qedit) and is evaluated
by the daemon; its cost is bounded so that no expression can hold it up. One evaluation
(ClassAd.eval, Expr.eval) may take STEPS steps: an attribute evaluated or taken again
from the evaluation's memo, a function called, NODES_PER_STEP nodes of an attribute's
expression of more than FREE_NODES nodes, an element of a list walked by a
function, one step per STEP_CHARS characters of the strings functions build (or of
a long value taken again), and one per LOOP_CHARS characters functions read one by
one in Python (split, the argument and environment functions, versions, the
spelling of strings in lists). Every STEP_CHUNK steps the clock is looked at too: an
evaluation that ran SECONDS is over its budget however few steps it took. Functions
build no string longer than MAX_STRING characters (ERROR), and regular expressions
match for REGEX_SECONDS at most in one evaluation (see regexfuncs); the time they take
is charged as steps too, STEPS_PER_SECOND of them a second (``charge_seconds``), so that
a pattern that backtracks costs what evaluating for as long would. An evaluation over
its budget is ERROR, as is one that runs out of memory or of recursion depth.

The steps every evaluation took are added up for the process (``steps_taken``): a
caller that compares the count before and after some evaluations knows what they cost
in steps, which, unlike seconds, are the same on every machine and at every load (but
for the time of regular-expression matching, which the evaluator measures anyway), and
read no clock (the scheduler bounds what one owner's matching may take in a pass so:
``sched.evalbudget``).
"""

from gridtools.classad.values import _CURRENT, ERROR

#: most steps of one evaluation (an ordinary Requirements takes a few dozen)
STEPS = 300_000
#: steps between two looks at the clock
STEP_CHUNK = 1024
#: characters of a built string that cost one step
STEP_CHARS = 256
#: characters read one by one in Python that cost one step (about what a step costs)
LOOP_CHARS = 4
#: most seconds one evaluation may take, whatever its steps (a backstop)
SECONDS = 1.0
#: most seconds regular expressions may spend matching in one evaluation
REGEX_SECONDS = 0.2
#: steps a second of timed work costs (regular-expression matching, ``timing.timed``):
#: about what evaluating takes in a second (a step is a microsecond or two of attributes
#: and function calls), so that a step costs about the same time whatever spent it
STEPS_PER_SECOND = 1_000_000
#: nodes of an expression evaluated as a whole that cost no step of their own (an
#: ordinary Requirements has a few dozen) ...
FREE_NODES = 64
#: ... and, above, how many of its nodes cost a step: walking an expression of literal
#: operands (``Memory < 1 || Memory < 2 || ...``) takes time without any attribute or
#: function to charge it (``Expr.entry``)
NODES_PER_STEP = 4
#: longest string a function builds (characters)
MAX_STRING = 1 << 21


class TooCostly(Exception):
    """An evaluation went over its budget; it is ERROR."""


class Run(set):
    """One evaluation: the attributes in the middle of evaluation (a set of (ad id,
    name), for cycle detection), the steps left until the next look at the budget,
    the memo of attribute values (from the first look on: see evaluator.eval_attr), and
    how often a value depended on more than its ad, its name and its target (a cycle
    met, random()): ``impure``; ``rootless`` when it began in no ad (an absolute reference
    is then ERROR wherever it sits); ``written``: the lists evaluated from items that
    print otherwise than their values, with what they were written as (``keep_written``)."""

    __slots__ = ("left", "spent", "deadline", "memo", "impure", "regex_left", "rootless", "written")

    def __init__(self):
        self.left = STEP_CHUNK
        self.spent = 0
        self.deadline = None
        self.memo = None
        self.impure = 0
        self.regex_left = REGEX_SECONDS
        self.rootless = False
        self.written = None

    def keep_written(self, value, node):
        """Remember that the list ``value`` was evaluated from the list expression
        ``node`` (by the list's id; the list is kept too, so that its id stays its own)."""
        written = self.written
        if written is None:
            written = self.written = {}
        written[id(value)] = (value, node)

    def written_as(self, value):
        """The list expression the list ``value`` was evaluated from, or None."""
        written = self.written
        found = written.get(id(value)) if written else None
        return found[1] if found is not None and found[0] is value else None

    def refill(self):
        """The steps of the last chunk are spent: raise TooCostly when the budget or
        the time is over, else give the next chunk."""
        self.spent += STEP_CHUNK - self.left
        self.left = STEP_CHUNK
        if self.spent > STEPS:
            raise TooCostly
        import time
        now = time.monotonic()
        if self.deadline is None:
            self.deadline = now + SECONDS
            self.memo = {}
        elif now > self.deadline:
            raise TooCostly


#: how many evaluations of this process went over their budget or ran out of memory
_OVER = [0]


def over_budget():
    """How many evaluations of this process went over their budget or ran out of memory
    so far: a caller that compares it before and after an evaluation knows whether its
    ERROR was one of those (and may leave the expression alone afterwards)."""
    return _OVER[0]


#: the steps of every evaluation of this process that ended (see ``steps_taken``)
_TAKEN = [0]


def steps_taken():
    """The steps the evaluations of this process took so far: each evaluation's, counted
    when it ends (whether it gave a value or went over its budget), and one more for each
    (an ordinary evaluation takes none, and is not free)."""
    return _TAKEN[0]


def taken_seconds(seconds):
    """Count ``seconds`` of work done for a job outside any evaluation (compiling its
    Grid Engine request patterns) in ``steps_taken``, STEPS_PER_SECOND steps a second, so
    that the scheduler's budget of its owner sees it as it sees an evaluation's."""
    _TAKEN[0] += int(seconds * STEPS_PER_SECOND)


def current_run():
    """The Run of the evaluation going on, or None."""
    return _CURRENT[0]


def charge(steps):
    """Count ``steps`` against the evaluation going on (if any)."""
    run = _CURRENT[0]
    if run is not None:
        run.left -= steps
        if run.left < 0:
            run.refill()


def charge_seconds(run, seconds):
    """Count ``seconds`` of timed work against ``run`` as STEPS_PER_SECOND steps a second:
    its budget sees them as it sees steps (TooCostly when they take it over), and so does
    the count of the steps taken (``steps_taken``)."""
    run.left -= int(seconds * STEPS_PER_SECOND)
    if run.left < 0:
        run.refill()


def built(text):
    """A string a function built: ERROR when longer than MAX_STRING, else the text
    (its length charged)."""
    size = len(text)
    if size > MAX_STRING:
        return ERROR
    if size >= STEP_CHARS:
        charge(size // STEP_CHARS)
    return text
