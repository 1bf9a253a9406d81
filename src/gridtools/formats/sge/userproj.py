"""Users (user(5)) and projects (project(5)), as ``qconf -suser`` / ``-sprj`` show them.

Both are written without name padding (``name alice``). A user's
``delete_time`` is a POSIX time (0: never deleted automatically); a
project's ``acl`` / ``xacl`` are lists of user list names.
"""

from gridtools.formats.sge.attrfile import Field, Schema
from gridtools.formats.sge.codecs import Integer, NameList, OptText, Text
from gridtools.formats.sge.names import check_object_name, require_known

USER_SCHEMA = Schema([
    Field("name", Text(), "template"),
    Field("oticket", Integer(), 0),
    Field("fshare", Integer(), 0),
    Field("delete_time", Integer(), 0),
    Field("default_project", OptText(), None),
], 0)

PROJECT_SCHEMA = Schema([
    Field("name", Text(), "template"),
    Field("oticket", Integer(), 0),
    Field("fshare", Integer(), 0),
    Field("acl", NameList(), []),
    Field("xacl", NameList(), []),
], 0)


#: lines ``qconf -suser``/``-sprj`` show about usage: read back, they are ignored
USAGE_LINES = ("usage", "usage_time_stamp", "long_term_usage")


def without_usage(text):
    """Object text without the usage lines qconf shows (they are not configuration)."""
    return "".join(line for line in text.splitlines(keepends=True)
                   if line.split(None, 1)[0:1] not in ([name] for name in USAGE_LINES))


def parse_user(text):
    """A user dict from ``qconf -suser`` text."""
    return USER_SCHEMA.parse(without_usage(text))


def render_user(obj):
    """``qconf -suser`` text of a user dict."""
    return USER_SCHEMA.render(obj)


def user_template(name="template"):
    """The user ``qconf -auser`` opens in the editor."""
    return USER_SCHEMA.template(name=name)


def validate_user(obj, known=None):
    """Raise ConfigError for a malformed user or an unknown default project."""
    USER_SCHEMA.check(obj)
    check_object_name(obj["name"], "user", "name")
    if obj["default_project"] is not None:
        require_known([obj["default_project"]], known, "project", "default_project", "project")


def parse_project(text):
    """A project dict from ``qconf -sprj`` text."""
    return PROJECT_SCHEMA.parse(without_usage(text))


def render_project(obj):
    """``qconf -sprj`` text of a project dict."""
    return PROJECT_SCHEMA.render(obj)


def project_template(name="template"):
    """The project ``qconf -aprj`` opens in the editor."""
    return PROJECT_SCHEMA.template(name=name)


def validate_project(obj, known=None):
    """Raise ConfigError for a malformed project or unknown user lists."""
    PROJECT_SCHEMA.check(obj)
    check_object_name(obj["name"], "project", "name")
    for attr in ("acl", "xacl"):
        require_known(obj[attr], known, "userset", attr, "user list")
