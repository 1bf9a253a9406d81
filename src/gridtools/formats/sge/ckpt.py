"""Checkpointing environments (checkpoint(5)), as ``qconf -sckpt`` shows them.

``interface`` keeps the spelling it was given (the editor template says
``userdefined``, qconf shows a stored one as ``USERDEFINED``); commands,
``signal`` are text or None (written ``none``); ``when`` is a string of the
letters s, m, x, r.
"""

from gridtools.formats.sge.attrfile import Field, FieldError, Schema
from gridtools.formats.sge.codecs import OptText, Text
from gridtools.formats.sge.names import check_object_name

#: checkpointing interfaces Grid Engine knows
INTERFACES = frozenset({"USERDEFINED", "HIBERNATOR", "TRANSPARENT", "APPLICATION-LEVEL",
                        "CPR", "CRAY-CKPT"})
#: letters of ``when``: at shutdown, at min_cpu_interval, on suspension, on reschedule
WHEN_LETTERS = frozenset("smxr")
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
    Field("when", Text(), "sx"),
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
    """Raise ConfigError for an unknown interface or bad ``when`` letters."""
    SCHEMA.check(obj)
    check_object_name(obj["ckpt_name"], "checkpointing environment", "ckpt_name")
    if obj["interface"].upper() not in INTERFACES:
        raise FieldError(f'invalid value "{obj["interface"]}" for attribute "interface": expected one of '
                         + ", ".join(sorted(INTERFACES)), "interface")
    if not set(obj["when"]) <= WHEN_LETTERS:
        raise FieldError(f'invalid value "{obj["when"]}" for attribute "when": expected letters of s, m, x, r',
                         "when")
