"""Scheduler configuration (sched_conf(5)), as ``qconf -ssconf`` shows them.

Floating point weights are floats written with six decimals, as qconf
writes them; times keep their text (``0:0:15``); ``job_load_adjustments``
maps load values to adjustment text; ``usage_weight_list`` maps cpu, mem,
io to floats; ``params`` and ``halflife_decay_list`` are text or None
(written ``none``).
"""


from gridtools.formats.sge.attrfile import Field, FieldError, Refusal, Schema
from gridtools.formats.sge.codecs import (
    Boolean, Choice, Integer, KeyValues, OptText, Real, Text, Time, TimeSpec)

#: scheduling algorithms (Grid Engine has one)
ALGORITHMS = ("default",)
#: how queue instances are ordered: by load formula or by sequence number
QUEUE_SORT_METHODS = ("load", "seqno")
#: letters of policy_hierarchy: override, functional, share tree, deadline
POLICY_LETTERS = frozenset("OFSD")
#: name column width of qconf -ssconf
WIDTH = 33


def _weight(name, default):
    return Field(name, Real(), default)


SCHEMA = Schema([
    Field("algorithm", Choice(ALGORITHMS), "default"),
    Field("schedule_interval", Time(), TimeSpec("0:0:15")),
    Field("maxujobs", Integer(), 0),
    Field("queue_sort_method", Choice(QUEUE_SORT_METHODS), "load"),
    Field("job_load_adjustments", KeyValues(), {"np_load_avg": "0.50"}),
    Field("load_adjustment_decay_time", Time(), TimeSpec("0:7:30")),
    Field("load_formula", Text(), "np_load_avg"),
    Field("schedd_job_info", Text(spaces=True), "true"),
    Field("flush_submit_sec", Integer(), 0),
    Field("flush_finish_sec", Integer(), 0),
    Field("params", OptText("none", spaces=True), None),
    Field("reprioritize_interval", Time(), TimeSpec("0:0:0")),
    Field("halftime", Integer(), 168),
    Field("usage_weight_list", KeyValues(real=True), {"cpu": 1.0, "mem": 0.0, "io": 0.0}),
    _weight("compensation_factor", 5.0),
    _weight("weight_user", 0.25),
    _weight("weight_project", 0.25),
    _weight("weight_department", 0.25),
    _weight("weight_job", 0.25),
    Field("weight_tickets_functional", Integer(), 0),
    Field("weight_tickets_share", Integer(), 0),
    Field("share_override_tickets", Boolean(), True),
    Field("share_functional_shares", Boolean(), True),
    Field("max_functional_jobs_to_schedule", Integer(), 200),
    Field("report_pjob_tickets", Boolean(), True),
    Field("max_pending_tasks_per_job", Integer(), 50),
    Field("halflife_decay_list", OptText("none", spaces=True), None),
    Field("policy_hierarchy", Text(), "OFS"),
    _weight("weight_ticket", 0.5),
    _weight("weight_waiting_time", 0.278),
    _weight("weight_deadline", 3600000.0),
    _weight("weight_urgency", 0.5),
    _weight("weight_priority", 0.0),
    Field("max_reservation", Integer(), 0),
    Field("default_duration", Time(), TimeSpec("INFINITY")),
], WIDTH)


def parse(text):
    """A scheduler configuration dict from ``qconf -ssconf`` text."""
    return SCHEMA.parse(text)


def render(obj):
    """``qconf -ssconf`` text of a scheduler configuration dict."""
    return SCHEMA.render(obj)


def template(name=None):
    """The default scheduler configuration."""
    return SCHEMA.template()


def _check_job_info(value):
    word, _, rest = value.partition(" ")
    if value.lower() in ("true", "false"):
        return
    if word.lower() == "job_list" and rest.strip() and all(
            part.strip().isdigit() for part in rest.replace(",", " ").split()):
        return
    raise FieldError(f'invalid value "{value}" for attribute "schedd_job_info": '
                     "expected true, false or job_list followed by job ids", "schedd_job_info")


#: usage kinds halflife_decay_list may name
DECAY_KINDS = ("cpu", "mem", "io", "finished_jobs")
#: Grid Engine's refusal of a halflife_decay_list without one valid entry
BAD_DECAY_LIST = "Invalid halflife_day_list. Ignoring the setting."
#: the number at the start of an entry's value, as sscanf's %lf reads it (a pattern; re is
#: imported when a list is read, not by every reader of scheduler objects)
_LEADING_NUMBER = r"\s*([-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf(?:inity)?))"


def decay_list(value):
    """``halflife_decay_list`` as {usage kind: minutes} (< 0: only what was counted since
    the previous pass, 0: no decay); empty for ``none``.

    Read as Grid Engine reads it: entries separated by colons, each a name, ``=`` and a
    value that begins with a number (``2min`` is 2); an entry whose value does not is
    left out, and so is a name other than cpu, mem, io and finished_jobs (names are
    case-sensitive; the first entry of a name counts). A Refusal when no entry at all is
    valid."""
    text = str(value or "").strip()
    if not text or text.lower() == "none":
        return {}
    import re
    found, valid = {}, 0
    for part in filter(None, text.split(":")):
        words = [w for w in part.split("=") if w]
        number = re.match(_LEADING_NUMBER, words[1], re.IGNORECASE) if len(words) >= 2 else None
        if number is None:
            continue
        valid += 1
        if words[0] in DECAY_KINDS and words[0] not in found:
            found[words[0]] = float(number.group(1))
    if not valid:
        raise Refusal(BAD_DECAY_LIST, "halflife_decay_list")
    return found


def validate(obj, known=None):
    """Raise ConfigError for malformed values."""
    SCHEMA.check(obj)
    hierarchy = obj["policy_hierarchy"]
    if hierarchy.upper() != "NONE" and (not set(hierarchy) <= POLICY_LETTERS
                                        or len(set(hierarchy)) != len(hierarchy)):
        raise FieldError(f'invalid value "{hierarchy}" for attribute "policy_hierarchy": '
                         "expected distinct letters of O, F, S, D or NONE", "policy_hierarchy")
    _check_job_info(obj["schedd_job_info"])
    decay_list(obj["halflife_decay_list"])
    unknown = set(obj["usage_weight_list"]) - {"cpu", "mem", "io"}
    if unknown:
        raise FieldError(f'invalid value "{sorted(unknown)[0]}" in attribute "usage_weight_list": '
                         "expected cpu, mem and io", "usage_weight_list")
    why = _params_refusal(obj["params"]) or _limits_refusal(obj) or \
        _formula_refusal(str(obj["load_formula"]), (known or {}).get("complex"))
    if why:
        raise Refusal(why, "params")


#: the names params may set: Grid Engine's, NEGOTIATOR and OWNER_MATCH_STEPS (sched_conf(5))
PARAMS = frozenset({"PROFILE", "MONITOR", "JC_FILTER", "DURATION_OFFSET", "PE_RANGE_ALG", "NONE",
                    "NEGOTIATOR", "OWNER_MATCH_STEPS"})
#: params whose value is a whole number of 0 or more
WHOLE_PARAMS = frozenset({"OWNER_MATCH_STEPS"})


def _params_refusal(text):
    """Grid Engine's refusal of a params entry it does not know, or of a value that is not
    a whole number where one is needed; None when there is none."""
    for item in str(text or "").replace(";", ",").replace(" ", ",").split(","):
        name, _, value = item.partition("=")
        name = name.strip().upper()
        if item and name not in PARAMS:
            return f'found unknown param: "{item}"'
        if name in WHOLE_PARAMS and not value.strip().isdigit():
            return f'invalid value "{value.strip()}" for param "{name}": expected a whole number'
    return None


def _limits_refusal(obj):
    if obj["max_pending_tasks_per_job"] == 0:
        return 'invalid setting for param: "max_pending_tasks_per_job"(should be ">0")'
    if obj["max_reservation"] != 0 and obj["default_duration"].seconds == 0:
        return "denied: resource reservation requires valid default duration"
    return None


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _formula_refusal(formula, complexes):
    """Grid Engine's refusal of a load_formula naming an attribute that does not exist,
    or one of a string type; None when ``complexes`` (the complex) is not at hand."""
    if not complexes or formula.lower() == "none":
        return 'The keyword "none" is not allowed in "load_formula"' if complexes else None
    import re
    from gridtools.formats.sge.complex import STRING_TYPES, lookup
    for factor in re.split(r"[-+*/]", formula.replace(" ", "")):
        name = factor.lstrip("$")
        if not name or _is_number(name):
            continue
        row = lookup(complexes, name)
        if row is None:
            return f'"load_formula" references not existing complex attribute "{name}"'
        if row["type"] in STRING_TYPES:
            return f'String, CString, ReString or Host attributes are not allowed in "load_formula": "{name}"'
    return None
