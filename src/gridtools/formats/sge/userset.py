"""User access lists and departments (access_list(5)), as ``qconf -su`` shows them.

``type`` is a list holding ``ACL``, ``DEPT`` or both; ``entries`` is a list
of user names and ``@unixgroup`` names (written comma-separated).
"""

from gridtools.formats.sge.attrfile import Field, Schema
from gridtools.formats.sge.codecs import Codec, Integer, NameList, Text, ValueProblem, split_words
from gridtools.formats.sge.names import check_object_name

#: userset types: access list and functional-policy department
USERSET_TYPES = ("ACL", "DEPT")
#: name column width of qconf -su
WIDTH = 7


class UsersetType(Codec):
    """``ACL``, ``DEPT`` or both (``ACL DEPT``), any case."""

    expected = "ACL, DEPT or both"

    def parse(self, text):
        words = {w.upper() for w in split_words(text)}
        if not words or not words <= set(USERSET_TYPES):
            raise ValueProblem(f"expected {self.expected}")
        return [t for t in USERSET_TYPES if t in words]

    def render(self, value):
        if isinstance(value, str):
            raise TypeError(value)
        return " ".join(t for t in USERSET_TYPES if t in value)


SCHEMA = Schema([
    Field("name", Text(), "template"),
    Field("type", UsersetType(), ["ACL"]),
    Field("fshare", Integer(), 0),
    Field("oticket", Integer(), 0),
    Field("entries", NameList(sep=","), []),
], WIDTH)


def parse(text):
    """A userset dict from ``qconf -su`` text."""
    return SCHEMA.parse(text)


def render(obj):
    """``qconf -su`` text of a userset dict."""
    return SCHEMA.render(obj)


def template(name="template"):
    """A new, empty access list."""
    return SCHEMA.template(name=name)


def contains(userset, user, groups=()):
    """True when ``user`` (or one of the UNIX ``groups`` it belongs to) is listed."""
    entries = userset["entries"] if isinstance(userset, dict) else userset
    return user in entries or any("@" + g in entries for g in groups)


def validate(obj, known=None):
    """Raise ConfigError for a malformed userset."""
    SCHEMA.check(obj)
    check_object_name(obj["name"], "user list", "name")
