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


#: the department of every user no other department lists
DEFAULT_DEPARTMENT = "defaultdepartment"


def refusal(obj, modifying):
    """Grid Engine's refusal of a userset the daemon checks beyond its form, or None:
    defaultdepartment must be a DEPT without entries, and a plain access list that is
    modified (not added, as Grid Engine checks it) may not carry fshare or oticket."""
    kinds = obj.get("type") or ()
    if obj.get("name") == DEFAULT_DEPARTMENT:
        if "DEPT" not in kinds:
            return 'the "defaultdepartment" has to be of type "DEPT"'
        if obj.get("entries"):
            return 'all users are assigned to the "defaultdepartment" automatically'
    if modifying and "DEPT" not in kinds:
        if obj.get("fshare", 0) > 0:
            return 'not allowed to set "fshare" for ACL lists'
        if obj.get("oticket", 0) > 0:
            return 'not allowed to set "oticket" for ACL lists'
    return None
