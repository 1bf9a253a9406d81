"""Why a job does not run: condor_q -analyze and -better-analyze, as pure functions.

``summary(job, machines, ...)`` sorts the slots the way condor_q's run
analysis does: rejected by the job's Requirements, rejecting the job by
their own, matching but serving a user with a better priority, matching
but preferring their current job, matching but not preempting it
(PREEMPTION_REQUIREMENTS), available. ``conditions(job, machines)`` splits
the job's Requirements into its top-level ``&&`` conditions (job attributes
replaced by their values), counts the slots each one matches, suggests a
change from the slot that comes closest to matching, and lists the
conflicts: sets of conditions that each match some slot but never together.
``analyze(...)`` renders both as condor_q prints them, with a line for each start
throttle that holds back a job the slots would take (``start_throttles``).
"""

import itertools
import time
from dataclasses import dataclass

from gridtools.classad.match import accepts, rank as ad_rank
from gridtools.classad.nodes import Attr, Binary, Literal, Paren, Scoped
from gridtools.classad.values import truth

#: the submitter priority assumed for names without one
DEFAULT_PRIORITY = 0.5
#: conditions longer than this get their own line in the table
LONG_CONDITION = 46
#: the largest set of conditions reported as a conflict
MAX_CONFLICT = 3
_COMPARISONS = {"<", "<=", ">", ">=", "==", "!=", "=?=", "=!="}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!=", "=?=": "=?=",
            "=!=": "=!="}
_STATUS_TEXT = {2: "Request is being serviced", 5: "Request is held.", 3: "Request is removed.",
                4: "Request is completed."}


@dataclass(frozen=True, slots=True)
class Summary:
    """How the slots of the pool stand toward one job."""
    total: int = 0
    rejected_by_job: int = 0          # the job's Requirements are false
    rejecting_job: int = 0            # the slot's Requirements are false
    better_priority: int = 0          # they serve a user with a better priority
    prefer_current: int = 0           # "reject the job for unknown reasons": rank too low
    will_not_preempt: int = 0         # PREEMPTION_REQUIREMENTS is false
    available: int = 0


@dataclass(frozen=True, slots=True)
class Condition:
    text: str                         # "( TARGET.Memory >= 2048 )"
    matched: int                      # slots it holds for
    suggestion: str = ""              # "", "REMOVE" or "MODIFY TO <value>"


def submitter_of(job):
    group = job.eval("AccountingGroup")
    if isinstance(group, str) and group:
        return group
    owner = job.eval("Owner")
    return owner if isinstance(owner, str) else ""


def at(job, now):
    """``job`` with CurrentTime set to ``now`` (None: as it is)."""
    if now is None:
        return job
    job = job.copy()
    job["CurrentTime"] = int(now)
    return job


def summary(job, machines, priorities=None, preemption_requirements=None, now=None):
    """Count the slots by how they stand toward ``job`` (condor_q's run analysis);
    ``now`` is CurrentTime for expressions that look at it."""
    job = at(job, now)
    priorities = priorities or {}
    mine = priorities.get(submitter_of(job), DEFAULT_PRIORITY)
    counts = dict.fromkeys(Summary.__slots__, 0)
    counts["total"] = len(machines)
    for machine in machines:
        counts[_verdict(job, machine, mine, priorities, preemption_requirements)] += 1
    return Summary(**counts)


def _verdict(job, machine, mine, priorities, preq):
    if not accepts(job, machine):
        return "rejected_by_job"
    if not accepts(machine, job):
        return "rejecting_job"
    user = machine.eval("RemoteUser")
    if not isinstance(user, str) or not user:
        return "available"
    theirs = machine.eval("RemoteUserPrio")
    if type(theirs) not in (int, float):
        theirs = priorities.get(user, DEFAULT_PRIORITY)
    if not theirs > mine:
        return "better_priority"
    slot_rank, current = ad_rank(machine, job), machine.eval("CurrentRank")
    current = float(current) if type(current) in (int, float) else 0.0
    if slot_rank > current:
        return "available"
    if not slot_rank >= current:
        return "prefer_current"
    if preq is not None and truth(preq.eval(machine, job)) is False:
        return "will_not_preempt"
    return "available"


# ---------------------------------------------------------------- conditions

def split_conditions(expr):
    """The top-level ``&&`` conditions of an expression (parentheses around
    conjunctions removed)."""
    inner = _strip(expr)
    if isinstance(inner, Binary) and inner.op.alias == "land":
        return split_conditions(inner.left) + split_conditions(inner.right)
    return [inner]


def _strip(expr):
    while isinstance(expr, Paren):
        expr = expr.inner
    return expr


def flatten(expr, job):
    """``expr`` with the job's own attributes replaced by their (literal) values."""
    cls = expr.__class__
    if cls is Attr and job.lookup(expr.name) is not None or (cls is Scoped and expr.scope.lower() == "my"):
        value = job.eval(expr.name)
        return Literal(value) if type(value) in (int, float, str, bool) else expr
    if cls is Binary:
        return Binary(expr.op, flatten(expr.left, job), flatten(expr.right, job))
    if cls is Paren:
        return Paren(flatten(expr.inner, job))
    return expr


def pretty(expr):
    """HTCondor's analysis spelling: parentheses with blanks inside them."""
    cls = expr.__class__
    if cls is Paren:
        return f"( {pretty(expr.inner)} )"
    if cls is Binary:
        symbol = {"=?=": "is", "=!=": "isnt"}.get(expr.op.symbol, expr.op.symbol)
        return f"{pretty(expr.left)} {symbol} {pretty(expr.right)}"
    return expr.unparse()


def conditions(job, machines, now=None):
    """(conditions sorted by how many slots they match, conflicts as tuples of
    1-based positions in that order)."""
    job = at(job, now)
    req = job.lookup("Requirements")
    if req is None:
        return [], []
    conds = [flatten(c, job) for c in split_conditions(req)]
    values = [[truth(c.eval(job, m)) for m in machines] for c in conds]
    masks = [sum(1 << k for k, v in enumerate(row) if v is True) for row in values]
    closest = _closest(conds, values, machines)
    order = sorted(range(len(conds)), key=lambda i: bin(masks[i]).count("1"))
    out = [Condition(f"( {pretty(conds[i])} )", bin(masks[i]).count("1"),
                     _suggest(conds[i], values[i], closest, machines)) for i in order]
    position = {i: n + 1 for n, i in enumerate(order)}
    found = [tuple(sorted(position[i] for i in c)) for c in _conflicts(masks)]
    return out, sorted(found)


def _closest(conds, values, machines):
    """The slot with the fewest failing conditions (numeric misses weigh their distance)."""
    best, best_cost = None, None
    for k, machine in enumerate(machines):
        cost = 0.0
        for c, row in zip(conds, values):
            if row[k] is not True:
                cost += 1.0 + _distance(c, machine, machines)
        if best_cost is None or cost < best_cost:
            best, best_cost = k, cost
    return best


def _comparison(cond):
    """(attribute, operator as seen from the attribute, literal value) of a simple
    ``TARGET.attr OP value`` condition, else None."""
    if not isinstance(cond, Binary) or cond.op.symbol not in _COMPARISONS:
        return None
    left, right, symbol = _strip(cond.left), _strip(cond.right), cond.op.symbol
    if isinstance(right, (Attr, Scoped)) and isinstance(left, Literal):
        left, right, symbol = right, left, _FLIPPED[symbol]
    if isinstance(left, (Attr, Scoped)) and isinstance(right, Literal):
        return left.name, symbol, right.value
    return None


def _distance(cond, machine, machines):
    simple = _comparison(cond)
    if simple is None or type(simple[2]) not in (int, float):
        return 0.0
    value = machine.eval(simple[0])
    if type(value) not in (int, float):
        return 0.0
    spread = [m.eval(simple[0]) for m in machines]
    spread = [v for v in spread if type(v) in (int, float)] + [simple[2]]
    width = (max(spread) - min(spread)) or 1.0
    return abs(value - simple[2]) / width


def _suggest(cond, row, closest, machines):
    if closest is None or row[closest] is True:
        return ""
    if row[closest] is None:
        return "REMOVE"
    simple = _comparison(cond)
    if simple is None or simple[1] in ("!=", "=!="):
        return "REMOVE"
    value = machines[closest].eval(simple[0])
    if type(value) in (int, float) and type(simple[2]) in (int, float):
        value = value - 1 if simple[1] == ">" else value + 1 if simple[1] == "<" else value
    elif type(value) is not str:
        return "REMOVE"
    return "MODIFY TO " + Literal(value).unparse()


def _conflicts(masks):
    """Minimal sets (2 to MAX_CONFLICT conditions) that each match a slot alone but
    never together."""
    live = [i for i, m in enumerate(masks) if m]
    found = []
    for size in range(2, MAX_CONFLICT + 1):
        for combo in itertools.combinations(live, size):
            joint = masks[combo[0]]
            for i in combo[1:]:
                joint &= masks[i]
            if joint == 0 and not any(set(f) <= set(combo) for f in found):
                found.append(combo)
    return found


# ---------------------------------------------------------------- text

def analyze(job, machines, priorities=None, preemption_requirements=None, better=False, now=None,
            values="", reasons=()):
    """condor_q -analyze (or -better-analyze) text for one job; ``values``: text shown
    with -better-analyze after the job's Requirements (the slot attributes they
    refer to, of a single slot); ``reasons``: why the last pass left the job waiting,
    as the status publishes them (``[code, args...]``), of which the start throttles
    are told (``start_throttles``)."""
    job = at(job, now)
    cluster, proc = _int(job.eval("ClusterId")), _int(job.eval("ProcId"))
    status = _int(job.eval("JobStatus"))
    if status in _STATUS_TEXT:
        return _not_idle(job, cluster, proc, status)
    s = summary(job, machines, priorities, preemption_requirements)
    nice = job.eval("NiceUser") is True or submitter_of(job).startswith("nice-user.")
    out = [f"---\n{cluster:03d}.{proc:03d}:  Run analysis summary.  Of {s.total} machines,\n",
           f"  {s.rejected_by_job:5d} are rejected by your job's requirements\n",
           f"  {s.rejecting_job:5d} reject your job because of their own requirements\n",
           f"  {s.better_priority:5d} match, but are serving users with a better priority in the pool"
           f"{'(*)' if nice else ''}\n",
           f"  {s.prefer_current:5d} match, but reject the job for unknown reasons\n",
           f"  {s.will_not_preempt:5d} match, but will not currently preempt their existing job\n",
           f"  {s.available:5d} are available to run your job\n"]
    out.append(_match_times(job))
    out.append(start_throttles(reasons))
    if nice:
        out.append('\n\t(*)  Since this is a "nice-user" request, this request has a\n'
                   "\t     very low priority and is unlikely to preempt other requests.\n")
    if s.total and s.rejected_by_job == s.total:
        out.append("\nWARNING:  Be advised:\n   No machines matched job's requirements\n")
        if better:
            out.append("\n")
        else:
            req = job.lookup("Requirements")
            out.append("   Check the Requirements expression below:\n\n"
                       f"{req.unparse(True) if req is not None else ''}\n\n")
    if better and s.rejected_by_job:
        out.append(_requirements_table(job, machines, values))
    elif better and values:
        out.append(values)
    if s.total and s.rejecting_job == s.total:
        out.append(f"\nWARNING:  Be advised:   Request {cluster}.{proc} did not match any "
                   "resource's constraints\n\n")
    return "".join(out)


#: the codes of the start throttles among a job's reasons (``sched.reasons.Why``)
_MAX_STARTERS, _START_DELAY = "max_starters", "start_delay"
_THROTTLED = "\tThe job waits to start: "


def start_throttles(reasons):
    """A line for each start throttle that held back the job in the last pass (its
    published reasons, ``[code, args...]``), in the words qstat -j uses: a host that
    runs MAX_STARTERS jobs already (its free slots stay Unclaimed: they match the job,
    but none starts there), a next_job_start_delay of a job its owner started, which
    holds back the next start until a time. Nothing for any other reason."""
    out, hosts = [], set()
    for reason in reasons or ():
        if not isinstance(reason, (list, tuple)) or not reason:
            continue
        if reason[0] == _MAX_STARTERS and len(reason) > 3 and reason[2] not in hosts:
            hosts.add(reason[2])
            out.append(f'{_THROTTLED}host "{reason[2]}" is busy: it runs MAX_STARTERS ({reason[3]}) jobs\n')
        elif reason[0] == _START_DELAY and len(reason) > 1 and type(reason[1]) in (int, float):
            until = time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(reason[1]))
            line = (f"{_THROTTLED}a job started with next_job_start_delay holds back the next start "
                    f"until {until}\n")
            if line not in out:
                out.append(line)
    return "".join(out)


def _not_idle(job, cluster, proc, status):
    text = f"---\n{cluster:03d}.{proc:03d}:  {_STATUS_TEXT[status]}\n\n"
    reason = job.eval("HoldReason")
    if status == 5 and isinstance(reason, str) and reason:
        text += f"Hold reason: {reason}\n\n"
    return text


def _match_times(job):
    last, rejected = _int(job.eval("LastMatchTime")), _int(job.eval("LastRejMatchTime"))
    out = ""
    if last:
        out += f"\tLast successful match: {time.ctime(last)}\n"
    elif rejected:
        out += "\tNo successful match recorded.\n"
    if rejected > last:
        out += f"\tLast failed match: {time.ctime(rejected)}\n"
        reason = job.eval("LastRejMatchReason")
        if isinstance(reason, str) and reason:
            out += f"\tReason for last match failure: {reason}\n"
    return out


def _requirements_table(job, machines, values=""):
    req = job.lookup("Requirements")
    if req is None:
        return "Job ClassAd is missing Requirements expression.\n"
    rows, conflicts = conditions(job, machines)
    out = ["\nThe Requirements expression for your job is:\n\n", wrap(pretty(req)), "\n\n",
           values[1:] + "\n" if values else "",
           f"    {'Condition':<34}{'Machines Matched':<20}Suggestion\n",
           f"    {'---------':<34}{'----------------':<20}----------\n"]
    for n, row in enumerate(rows, 1):
        suggestion = row.suggestion or " "
        if len(row.text) < LONG_CONDITION:
            out.append(f"{n:<4d}{row.text:<34}{row.matched:<20d}{suggestion}\n")
        else:
            out.append(f"{n:<4d}{row.text}\n{'':38}{row.matched:<20d}{suggestion}\n")
    if conflicts:
        out.append("\nConflicts:\n\n")
        out.extend(f"  conditions: {', '.join(str(i) for i in c)}\n" for c in conflicts)
    return "".join(out)


def wrap(text, width=80):
    """Break an expression for an 80-column screen after the last ``&&`` that fits."""
    lines, line = [], text
    while len(line) > width:
        cut = line.rfind("&&", 0, width)
        if cut <= 0:
            break
        lines.append(line[:cut + 2])
        line = line[cut + 2:].lstrip(" ")
    lines.append(line)
    return "\n".join(lines)


def _int(value):
    return int(value) if type(value) in (int, float) and value - value == 0 else 0
