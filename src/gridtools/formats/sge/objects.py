"""The registry: parse, render, template, validate and name any object kind.

Kinds: ``queue`` ``exechost`` ``hostgroup`` ``conf`` ``sched`` ``complex``
``pe`` ``ckpt`` ``calendar`` ``userset`` ``user`` ``project`` ``rqs``
``sharetree`` ``managers`` ``operators`` ``adminhosts`` ``submithosts``.
See the package docstring for the shape of each object.
"""

from gridtools.errors import ConfigError
from gridtools.formats.sge.attrfile import FieldError
from gridtools.formats.sge.codecs import ValueProblem
from gridtools.formats.sge import (
    calendar, ckpt, complex as complex_, conf, host, hostgroup, lists, pe, queue, rqs, sched,
    sharetree, userproj, userset)


class Kind:
    """How one kind of object is read, written, created and checked."""

    __slots__ = ("parse", "render", "template", "validate", "name_field", "schema")

    def __init__(self, parse, render, template, validate, name_field=None, schema=None):
        self.parse, self.render, self.template = parse, render, template
        self.validate, self.name_field, self.schema = validate, name_field, schema


def _list_kind(kind):
    return Kind(lists.parse, lists.render, lambda name=None: [],
                lambda obj, known=None: lists.validate(kind, obj, known))


REGISTRY = {
    "queue": Kind(queue.parse, queue.render, queue.template, queue.validate, "qname", queue.SCHEMA),
    "exechost": Kind(host.parse, host.render, host.template, host.validate, "hostname", host.SCHEMA),
    "hostgroup": Kind(hostgroup.parse, hostgroup.render, hostgroup.template, hostgroup.validate,
                      "group_name", hostgroup.SCHEMA),
    "conf": Kind(conf.parse, conf.render, conf.template, conf.validate, "conf_name", conf.SCHEMA),
    "sched": Kind(sched.parse, sched.render, sched.template, sched.validate, None, sched.SCHEMA),
    "complex": Kind(complex_.parse, complex_.render, complex_.template, complex_.validate),
    "pe": Kind(pe.parse, pe.render, pe.template, pe.validate, "pe_name", pe.SCHEMA),
    "ckpt": Kind(ckpt.parse, ckpt.render, ckpt.template, ckpt.validate, "ckpt_name", ckpt.SCHEMA),
    "calendar": Kind(calendar.parse, calendar.render, calendar.template, calendar.validate,
                     "calendar_name", calendar.SCHEMA),
    "userset": Kind(userset.parse, userset.render, userset.template, userset.validate, "name",
                    userset.SCHEMA),
    "user": Kind(userproj.parse_user, userproj.render_user, userproj.user_template,
                 userproj.validate_user, "name", userproj.USER_SCHEMA),
    "project": Kind(userproj.parse_project, userproj.render_project, userproj.project_template,
                    userproj.validate_project, "name", userproj.PROJECT_SCHEMA),
    "rqs": Kind(rqs.parse, rqs.render, rqs.template, rqs.validate, "name"),
    "sharetree": Kind(sharetree.parse, sharetree.render, sharetree.template, sharetree.validate, "name"),
    **{kind: _list_kind(kind) for kind in lists.LIST_KINDS},
}

#: every object kind, in the order the package docstring lists them
KINDS = tuple(REGISTRY)


def kind_of(kind):
    """The ``Kind`` entry; raises ConfigError for an unknown kind."""
    try:
        return REGISTRY[kind]
    except KeyError:
        raise ConfigError(f'unknown configuration object kind "{kind}"') from None


def parse(kind, text):
    """The typed object of ``kind`` read from ``text``; raises ConfigError."""
    return kind_of(kind).parse(text)


def render(kind, obj):
    """The text ``qconf -s…`` prints for ``obj``; raises ConfigError for invalid values."""
    return kind_of(kind).render(obj)


def template(kind, name=None):
    """The new object ``qconf -a…`` opens in the editor (``name`` set when given)."""
    entry = kind_of(kind)
    return entry.template() if name is None else entry.template(name)


def validate(kind, obj, known=None):
    """Raise ConfigError if ``obj`` is malformed or (given ``known``, a mapping
    of kind -> existing names) refers to objects that do not exist."""
    kind_of(kind).validate(obj, known)


def name_of(kind, obj):
    """The object's name (qname, hostname, group_name, pe_name, ...); None for
    kinds that have one object per cell (sched, complex, the lists)."""
    field = kind_of(kind).name_field
    return None if field is None else obj.get(field)


def _schema(kind):
    schema = kind_of(kind).schema
    if schema is None:
        raise ConfigError(f'objects of kind "{kind}" have no attribute lines')
    return schema


def attributes(kind):
    """Attribute names of a kind written one per line, in qconf order."""
    return tuple(f.name for f in _schema(kind).fields)


def parse_attribute(kind, attribute, text):
    """The typed value of one attribute from its text, as ``qconf -mattr``,
    ``-aattr`` and friends get it; raises ConfigError naming the attribute."""
    codec = _schema(kind).codec_for(attribute)
    if codec is None:
        raise FieldError(f'unknown attribute "{attribute}"', attribute)
    try:
        return codec.parse(text.strip())
    except ValueProblem as err:
        raise FieldError(f'invalid value "{text}" for attribute "{attribute}": {err}', attribute) from None


def render_attribute(kind, attribute, value):
    """The text of one attribute value as qconf writes it."""
    return _schema(kind).value_text({attribute: value}, attribute)
