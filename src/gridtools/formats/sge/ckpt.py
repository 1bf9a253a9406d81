"""Checkpointing environments (checkpoint(5)), as ``qconf -sckpt`` shows them.

``interface`` keeps the spelling it was given (the editor template says
``userdefined``) and is one of Grid Engine's interfaces in any case; commands,
``signal`` are text or None (written ``none``); ``when`` is a string of the
letters s, m, x, r, kept in Grid Engine's order (x s m r, so ``sx`` is stored
and shown as ``xs``), or ``n`` alone, or None (written ``NONE``) when
``qconf -dattr`` took every letter away, as Grid Engine's master keeps it.
"""

from gridtools.formats.sge.attrfile import Field, Refusal, Schema
from gridtools.formats.sge.codecs import OptText, Text, is_none_word
from gridtools.formats.sge.names import check_object_name

#: checkpointing interfaces Grid Engine knows (named in any case)
INTERFACES = frozenset({"USERDEFINED", "HIBERNATOR", "TRANSPARENT", "APPLICATION-LEVEL", "CPR",
                        "CRAY-CKPT"})
#: the variables the commands of an environment may name (``$ckpt_dir``, ...)
VARIABLES = frozenset({"sge_root", "sge_cell", "host", "job_owner", "job_id", "job_name", "queue",
                       "job_pid", "ckpt_dir", "ckpt_signal"})
COMMANDS = ("ckpt_command", "migr_command", "restart_command", "clean_command")
#: letters of ``when`` in the order Grid Engine writes them: on suspension, at shutdown of
#: the execution daemon, at min_cpu_interval, on reschedule; ``n`` (never) stands alone
WHEN_ORDER = "xsmr"
NEVER = "n"


def normal_when(text):
    """``when`` letters in Grid Engine's order, each once (``sx`` -> ``xs``, ``n`` stays);
    text that is not such letters comes back as it is, for ``validate`` to refuse."""
    letters = set(text)
    if text and letters <= set(WHEN_ORDER):
        return "".join(c for c in WHEN_ORDER if c in letters)
    return NEVER if letters == {NEVER} else text


def in_order(text):
    """Stored ``qconf -sckpt`` text with its ``when`` letters in Grid Engine's order: an
    environment written before they were kept in that order shows them so too."""
    import re
    return re.sub(r"(?m)^(when[ \t]+)(\S+)[ \t]*$", lambda m: m.group(1) + normal_when(m.group(2)), text)


def when_valid(text):
    """True for Grid Engine's ``when`` letters, and for None (no letter left)."""
    return text is None or text == NEVER or bool(text) and set(text) <= set(WHEN_ORDER)


class When(Text):
    """The ``when`` letters, put in Grid Engine's order as they are read; ``NONE`` (how
    Grid Engine shows a ``when`` without letters) is None."""

    def parse(self, text):
        if is_none_word(text):
            return None
        return normal_when(super().parse(text))

    def render(self, value):
        return "NONE" if value is None else super().render(value)
#: name column width of qconf -sckpt
WIDTH = 18

SCHEMA = Schema([
    Field("ckpt_name", Text(), "template"),
    Field("interface", Text(), "userdefined"),
    Field("ckpt_command", OptText("none", spaces=True), None),
    Field("migr_command", OptText("none", spaces=True), None),
    Field("restart_command", OptText("none", spaces=True), None),
    Field("clean_command", OptText("none", spaces=True), None),
    Field("ckpt_dir", Text(), "/tmp"),
    Field("signal", OptText("none"), None),
    Field("when", When(), "sx"),
], WIDTH)


def parse(text):
    """A checkpointing environment dict from ``qconf -sckpt`` text."""
    return SCHEMA.parse(text)


def render(obj):
    """``qconf -sckpt`` text of a checkpointing environment dict."""
    return SCHEMA.render(obj)


def template(name="template"):
    """The environment ``qconf -ackpt`` opens in the editor."""
    return SCHEMA.template(ckpt_name=name)


def validate(obj, known=None):
    """Raise ConfigError for bad ``when`` letters or an unknown interface, in the words of
    Grid Engine's master (which checks ``when`` first)."""
    SCHEMA.check(obj)
    check_object_name(obj["ckpt_name"], "checkpointing environment", "ckpt_name")
    when = obj["when"]
    if not when_valid(when if when is None else normal_when(when)):
        raise Refusal(f'Invalid "when" attribute for ckpt "{obj["ckpt_name"]}"', "when")
    if obj["interface"].upper() not in INTERFACES:
        raise Refusal(f"no valid checkpoint interface {obj['interface']}", "interface")
    for field in COMMANDS:
        fault = variable_fault(obj[field])
        if fault:
            raise Refusal(f'parameter {field} of ckpt environment "{obj["ckpt_name"]}": {fault}', field)
    if obj["signal"] is not None and not is_signal(obj["signal"]):
        raise Refusal(f'"{obj["signal"]}" is not a signal string (like HUP, INT, WINCH, ..)', "signal")


def variable_fault(command):
    """Why Grid Engine refuses a command line for its ``$`` variables, or None: each
    ``$`` must start the name of one of VARIABLES."""
    import re
    for match in re.finditer(r"\$([A-Za-z0-9_]*)", command or ""):
        if not match.group(1):
            return "variables need at least one character"
        if match.group(1) not in VARIABLES:
            return f'unknown variable "{match.group(1)}"'
    return None


def is_signal(text):
    """True for a signal Grid Engine can name: HUP, usr1, SIGTERM, or a number."""
    import signal
    if text.isdigit():
        return int(text) in signal.valid_signals()
    name = text.upper()
    return isinstance(getattr(signal, name if name.startswith("SIG") else "SIG" + name, None), signal.Signals)
