"""Job deferral and cron schedules in a submit description (loaded only for one that
gives them), as HTCondor 24's condor_submit writes them:

- ``deferral_time`` (or ``DeferralTime``): when the job is to begin executing, an
  expression; a literal must be a non-negative integer ("deferral_time = 5.5 is
  invalid, must eval to a non-negative integer.");
- ``cron_minute``, ``cron_hour``, ``cron_day_of_month``, ``cron_month``,
  ``cron_day_of_week``: a schedule in crontab's fields (``CronMinute`` ...,
  strings, as written); the daemon works out each next time
  (``formats.condor.crontab``);
- for either, ``DeferralWindow`` (``cron_window``, else ``deferral_window``; 0
  by default) and ``DeferralPrepTime`` (``cron_prep_time``, else
  ``deferral_prep_time``; 300 by default): literals must be non-negative
  integers too;
- the job's Requirements then end with ``TARGET.HasJobDeferral`` (but in the
  local universe) and the clause that lets it match from its prep time before
  its deferral time (a schedd interval ahead) until the window closes; the ad
  gets ``ScheddInterval`` (``SCHEDD_INTERVAL``, 300 by default);
- a scheduler universe job with a deferral time is refused ("DeferralTime does
  not work for scheduler universe jobs.").
"""

from gridtools.errors import InputError, lines
from gridtools.formats.condor.jobattrs import expr, fail
#: the cron commands and the attributes they set, in the order HTCondor looks at them
CRON = (("cron_minute", "CronMinute"), ("cron_hour", "CronHour"), ("cron_day_of_month", "CronDayOfMonth"),
        ("cron_month", "CronMonth"), ("cron_day_of_week", "CronDayOfWeek"))
DEFAULT_WINDOW = 0
DEFAULT_PREP_TIME = 300
DEFAULT_SCHEDD_INTERVAL = 300
#: the clause HTCondor puts at the end of a deferred job's Requirements
TIME_CLAUSE = ("(((time() + ScheddInterval) >= (DeferralTime - DeferralPrepTime)) && "
               "(time() < (DeferralTime + DeferralWindow)))")


def attributes(cmd, universe, schedd_interval=None):
    """(attributes to set, Requirements terms to add) of a description's deferral and
    cron commands (``cmd``: a command's expanded value by its name, or None); InputError
    in condor_submit's words. Nothing when it gives neither a deferral time nor a
    schedule."""
    from gridtools.formats.condor.jobattrs import LOCAL, SCHEDULER
    found = {}
    for name, attr in CRON:
        value = _given(cmd, name)
        if value is not None:
            found[attr] = value                 # (a string, as written)
    when = _given(cmd, "deferral_time", "deferraltime")
    if when is not None:
        found["DeferralTime"] = _non_negative("deferral_time", "DeferralTime", when)
    if not found:
        return {}, ()
    if universe == SCHEDULER and "DeferralTime" in found:
        first = next(attr for attr in [a for _n, a in CRON] + ["DeferralTime"] if attr in found)
        raise InputError(lines(f"ERROR: {first} does not work for scheduler universe jobs.",
                               "Consider submitting this job using the local universe, instead"))
    window = _given(cmd, "cron_window", "cronwindow") or _given(cmd, "deferral_window", "deferralwindow")
    found["DeferralWindow"] = DEFAULT_WINDOW if window is None else \
        _non_negative("deferral_window", "DeferralWindow", window)
    prep = _given(cmd, "cron_prep_time", "cronpreptime") or _given(cmd, "deferral_prep_time", "deferralpreptime")
    found["DeferralPrepTime"] = DEFAULT_PREP_TIME if prep is None else \
        _non_negative("deferral_prep_time", "DeferralPrepTime", prep)
    interval = (schedd_interval or "").strip()
    found["ScheddInterval"] = expr("ScheddInterval", interval) if interval else DEFAULT_SCHEDD_INTERVAL
    terms = () if universe == LOCAL else ("TARGET.HasJobDeferral",)
    return found, terms + (TIME_CLAUSE,)


def _given(cmd, *names):
    """The first of the commands ``names`` a description gives a value that is not blank."""
    for name in names:
        value = cmd(name)
        if value is not None and value.strip():
            return value.strip()
    return None


def _non_negative(command, attr, text):
    """The expression of ``text``; a literal must be a non-negative integer."""
    value = expr(attr, text)
    if type(value) in (int, float, bool, str) or value is None:
        literal, plain = True, value
    else:
        from gridtools.classad.nodes import Literal
        from gridtools.classad.parser import ClassAdSyntaxError, parse
        try:
            node = parse(text, old=True)
        except ClassAdSyntaxError:
            node = None
        literal = node.__class__ is Literal
        plain = node.value if literal else None
    if literal and not (type(plain) is int and plain >= 0):
        raise fail(f"{command} = {text} is invalid, must eval to a non-negative integer.")
    return value

