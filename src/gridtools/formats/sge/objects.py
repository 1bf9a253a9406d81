"""The registry: parse, render, template, validate and name any object kind.

Kinds: ``queue`` ``exechost`` ``hostgroup`` ``conf`` ``sched`` ``complex``
``pe`` ``ckpt`` ``calendar`` ``userset`` ``user`` ``project`` ``rqs``
``sharetree`` ``managers`` ``operators`` ``adminhosts`` ``submithosts``.
See the package docstring for the shape of each object.
"""

from gridtools.errors import ConfigError
from gridtools.formats.sge import (
    calendar, ckpt, complex as complex_, conf, host, hostgroup, lists, pe, queue, rqs, sched,
    sharetree, userproj, userset)


class Kind:
    """How one kind of object is read, written, created and checked."""

    __slots__ = ("parse", "render", "template", "validate", "name_field")

    def __init__(self, parse, render, template, validate, name_field=None):
        self.parse, self.render, self.template = parse, render, template
        self.validate, self.name_field = validate, name_field


def _list_kind(kind):
    return Kind(lists.parse, lists.render, lambda name=None: [],
                lambda obj, known=None: lists.validate(kind, obj, known))


REGISTRY = {
    "queue": Kind(queue.parse, queue.render, queue.template, queue.validate, "qname"),
    "exechost": Kind(host.parse, host.render, host.template, host.validate, "hostname"),
    "hostgroup": Kind(hostgroup.parse, hostgroup.render, hostgroup.template, hostgroup.validate,
                      "group_name"),
    "conf": Kind(conf.parse, conf.render, conf.template, conf.validate, "conf_name"),
    "sched": Kind(sched.parse, sched.render, sched.template, sched.validate),
    "complex": Kind(complex_.parse, complex_.render, complex_.template, complex_.validate),
    "pe": Kind(pe.parse, pe.render, pe.template, pe.validate, "pe_name"),
    "ckpt": Kind(ckpt.parse, ckpt.render, ckpt.template, ckpt.validate, "ckpt_name"),
    "calendar": Kind(calendar.parse, calendar.render, calendar.template, calendar.validate,
                     "calendar_name"),
    "userset": Kind(userset.parse, userset.render, userset.template, userset.validate, "name"),
    "user": Kind(userproj.parse_user, userproj.render_user, userproj.user_template,
                 userproj.validate_user, "name"),
    "project": Kind(userproj.parse_project, userproj.render_project, userproj.project_template,
                    userproj.validate_project, "name"),
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
