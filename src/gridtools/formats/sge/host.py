"""Execution hosts (host_conf(5)), as ``qconf -se`` shows them.

``load_values`` and ``processors`` are reported by the host, not
configured: ``qconf -se`` shows them, the ``qconf -ae`` editor template does
not. They are optional here: present in the dict only when present in the
text (or set by the code that builds the object to show). ``load_scaling``
and ``usage_scaling`` map names to floats (written ``%f``); ``complex_values``
and ``load_values`` map names to value text.
"""

from gridtools.formats.sge.attrfile import Field, Schema
from gridtools.formats.sge.codecs import Integer, KeyValues, NameList, Text
from gridtools.formats.sge.names import check_host_name, require_known

#: name column width of qconf -se
WIDTH = 21

SCHEMA = Schema([
    Field("hostname", Text(), "template"),
    Field("load_scaling", KeyValues(real=True), {}),
    Field("complex_values", KeyValues(), {}),
    Field("load_values", KeyValues(), {}, optional=True),
    Field("processors", Integer(), 0, optional=True),
    Field("user_lists", NameList(), []),
    Field("xuser_lists", NameList(), []),
    Field("projects", NameList(), []),
    Field("xprojects", NameList(), []),
    Field("usage_scaling", KeyValues(real=True), {}),
    Field("report_variables", NameList(sep=","), []),
], WIDTH)

#: the attributes only a running host reports
REPORTED = ("load_values", "processors")


def parse(text):
    """An execution host dict from ``qconf -se`` text."""
    return SCHEMA.parse(text)


def render(obj):
    """``qconf -se`` text of an execution host dict."""
    return SCHEMA.render(obj)


def template(name="template"):
    """The host ``qconf -ae`` opens in the editor (no reported values)."""
    return SCHEMA.template(hostname=name)


def with_reports(obj, load_values, processors):
    """A copy of ``obj`` with the reported values filled in, for display."""
    shown = {}
    for field in SCHEMA.fields:
        if field.name == "load_values":
            shown["load_values"] = dict(load_values)
        elif field.name == "processors":
            shown["processors"] = int(processors)
        elif field.name in obj:
            shown[field.name] = obj[field.name]
    return shown


def validate(obj, known=None):
    """Raise ConfigError for a malformed host, a reserved name or missing references."""
    SCHEMA.check(obj)
    check_host_name(obj["hostname"], "hostname", allow_global=True)
    for attr, kind, what in (("user_lists", "userset", "user list"),
                             ("xuser_lists", "userset", "user list"),
                             ("projects", "project", "project"),
                             ("xprojects", "project", "project"),
                             ("complex_values", "complex", "complex attribute"),
                             ("load_scaling", "complex", "complex attribute"),
                             ("report_variables", "complex", "complex attribute")):
        require_known(list(obj[attr]), known, kind, attr, what)
    if known:
        from gridtools.formats.sge.complex import check_values
        check_values(obj["complex_values"], known.get("complex"), "complex_values", consumables=True)
