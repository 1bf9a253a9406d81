"""Parallel environments (sge_pe(5)), as ``qconf -sp`` shows them.

``allocation_rule`` is an int (slots per host) or one of ``$pe_slots``,
``$fill_up``, ``$round_robin``; ``urgency_slots`` is an int or ``min``,
``max``, ``avg``. The start/stop procedures are command lines or None.
"""

from gridtools.formats.sge.attrfile import Field, Schema
from gridtools.formats.sge.codecs import Boolean, Integer, IntOrChoice, NameList, OptText, Text
from gridtools.formats.sge.names import check_object_name, require_known

#: symbolic allocation rules
ALLOCATION_RULES = ("$pe_slots", "$fill_up", "$round_robin")
#: how the slot count of a job with a slot range is guessed for urgency
URGENCY_SLOTS = ("min", "max", "avg")
#: name column width of qconf -sp
WIDTH = 18

SCHEMA = Schema([
    Field("pe_name", Text(), "template"),
    Field("slots", Integer(0, 9999999), 0),
    Field("user_lists", NameList(), []),
    Field("xuser_lists", NameList(), []),
    Field("start_proc_args", OptText(spaces=True), None),
    Field("stop_proc_args", OptText(spaces=True), None),
    Field("allocation_rule", IntOrChoice(ALLOCATION_RULES, lo=1), "$pe_slots"),
    Field("control_slaves", Boolean(), False),
    Field("job_is_first_task", Boolean(), True),
    Field("urgency_slots", IntOrChoice(URGENCY_SLOTS), "min"),
    Field("accounting_summary", Boolean(), False),
    Field("qsort_args", OptText(spaces=True), None),
], WIDTH)


#: Grid Engine's refusal of an explicit slots request (sge_object.c, compress_ressources)
NO_DIRECT_SLOTS = '"job" denied: use parallel environments instead of requesting slots explicitly'


def single_host_pe(rules, listed):
    """The parallel environment a job asking ``-l slots=N`` gets (``rules``: name ->
    allocation_rule of each PE; ``listed``: the names some queue's pe_list holds): one
    whose rule is $pe_slots (all slots on one host), one listed before one not, ``smp``
    before the others, else the first by name; None when there is none."""
    found = [name for name, rule in rules.items() if str(rule).lower() == "$pe_slots"]
    return min(found, key=lambda n: (n not in listed, n != "smp", n)) if found else None


def parse(text):
    """A parallel environment dict from ``qconf -sp`` text."""
    return SCHEMA.parse(text)


def render(obj):
    """``qconf -sp`` text of a parallel environment dict."""
    return SCHEMA.render(obj)


def template(name="template"):
    """The parallel environment ``qconf -ap`` opens in the editor."""
    return SCHEMA.template(pe_name=name)


def validate(obj, known=None):
    """Raise ConfigError for a malformed PE or unknown user lists."""
    SCHEMA.check(obj)
    check_object_name(obj["pe_name"], "parallel environment", "pe_name")
    for attr in ("user_lists", "xuser_lists"):
        require_known(obj[attr], known, "userset", attr, "user list")
