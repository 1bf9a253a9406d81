"""Printing ClassAds as HTCondor's query tools do: -long, -autoformat, -format, -json.

Shared by the commands that list ads (condor_status, condor_userprio -l).

- ``long_form``: ``Name = value`` lines, attributes sorted by name, a blank
  line after each ad.
- ``autoformat``: ``-af[:jlhVr,tng] ATTR ...``; each argument is an
  attribute or an expression evaluated in the ad; strings print bare (with
  ``V`` quoted), other values as the long form writes them, a missing
  attribute as ``undefined``. Qualifiers: ``l`` label each value,
  ``h`` column headings, ``V`` quote strings, ``r`` (or ``o``) raw
  (unevaluated) values, ``,`` a comma between values (none after the last),
  ``t`` a tab instead of a space between values, ``n`` a newline after each
  value, ``g`` a newline between ads, ``j`` the ad's id first. Other letters
  are ignored, as HTCondor's tools ignore them.
- ``printf``: ``-format FMT ATTR`` pairs, printf-style (``%d %i %s %f %e %g
  %x %o %c %v %V %%``); a pair whose attribute is undefined prints nothing.
- ``json``: a JSON list of objects (expressions as ``\\/Expr(...)\\/``).
"""

import json
import re

from gridtools.classad import ClassAd, parse
from gridtools.classad.values import ERROR, UNDEFINED, unparse_value
from gridtools.errors import UsageError
from gridtools.formats.safetext import unicode_only

class Formatter:
    """A list of -af / -format items, printed per ad."""

    def __init__(self):
        self.items = []          # ("af", qualifiers, [exprs]) or ("fmt", text, expr)
        self.target = None       # the ad TARGET names (condor_status -target), or None

    def add_autoformat(self, qualifiers, exprs):
        self.items.append(("af", qualifiers, list(exprs)))

    def add_format(self, text, expr):
        self.items.append(("fmt", text, expr))

    def __bool__(self):
        return bool(self.items)

    def render(self, ads, ad_id=None):
        """The text for ``ads`` (``ad_id(ad)``: the id ``j`` prints). A lone -af item is
        printed as condor_q prints it (``formatting.autoformat``: the heading of ``h``
        over aligned columns); otherwise each item in turn, per ad."""
        if len(self.items) == 1 and self.items[0][0] == "af":
            return self._autoformat(ads, ad_id, *self.items[0][1:])
        out = []
        heads = [q for kind, q, _ in self.items if kind == "af" and "h" in q]
        if heads:
            out.append(self._headings())
        for ad in ads:
            out.append(self._one(ad, ad_id))
        return "".join(out)

    def _autoformat(self, ads, ad_id, qualifiers, exprs):
        from gridtools.cli.condor import formatting
        return formatting.autoformat(ads, exprs, _with_id(qualifiers, ad_id), _cell(qualifiers, self.target),
                                     ad_id)

    def _headings(self):
        names = [e for kind, q, exprs in self.items if kind == "af" for e in exprs]
        return " ".join(names) + "\n"

    def _one(self, ad, ad_id):
        parts = []
        for kind, spec, arg in self.items:
            if kind == "fmt":
                parts.append(printf(spec, arg, ad, self.target))
            else:
                parts.append(_autoformat(ad, spec, arg, ad_id, self.target))
        return "".join(parts)


def _with_id(qualifiers, ad_id):
    """The qualifiers, without ``j`` when the ads have no id to print."""
    return qualifiers if ad_id is not None else qualifiers.replace("j", "")


def _cell(qualifiers, target):
    """The text of one -af field of an ad (``r`` or ``o`` raw, ``V`` strings quoted)."""
    if "r" in qualifiers or "o" in qualifiers:
        return _raw
    quote = "V" in qualifiers
    return lambda ad, text: shown(value_of(ad, text, target), quote)


def value_of(ad, text, target=None):
    """The value of attribute or expression ``text`` in ``ad`` (with ``target`` as TARGET);
    an expression is read in the old syntax, as HTCondor reads an -af or -format one."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        return ad.eval(text, target)
    try:
        return parse(text, old=True).eval(full(ad), target)
    except Exception:  # noqa: BLE001 - an expression that does not parse is an error value
        return ERROR


def shown(value, quote=False):
    """A value as -af prints it."""
    if value is UNDEFINED:
        return "undefined"
    if value is ERROR:
        return "error"
    if isinstance(value, str):
        return unparse_value(value) if quote else value
    return unparse_value(value, True)


def _raw(ad, text):
    ad = full(ad)
    expr = ad.lookup(text) if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text) else None
    if expr is not None:
        return expr.unparse(True)
    return "undefined" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text) else text


def _autoformat(ad, qualifiers, exprs, ad_id, target=None):
    """One -af item of one ad, among other items (their separators as condor_q's)."""
    from gridtools.cli.condor import formatting
    return formatting.autoformat([ad], exprs, _with_id(qualifiers, ad_id).replace("h", ""),
                                 _cell(qualifiers, target), ad_id)


def printf(fmt, expr, ad, target=None):
    """One -format pair for ``ad``, as condor_q prints it (``formatting.format_one``:
    nothing at all when the value is not of the kind of the conversion)."""
    from gridtools.cli.condor import formatting
    return formatting.format_one(full(ad), fmt, expr, lambda text: value_of(ad, text, target))


def long_form(ad):
    """``Name = value`` lines sorted by name, then a blank line."""
    ad = full(ad)
    lines = [f"{name} = {ad.lookup(name).unparse(True)}" for name in sorted(ad, key=str.lower)]
    return "\n".join(lines) + "\n\n"


def _json_value(expr, depth=1):
    """The JSON text of an attribute's expression, as HTCondor's ClassAdJsonUnParser
    writes it: a literal as JSON (a real ``%.16G``, as the long form), a list as an
    array and a nested ad as an object (one item a line, two spaces deeper for each
    level: ``depth``), anything else (an operator, a reference, a call, ``error``, an
    infinite or NaN real) as ``"\\/Expr(text)\\/"``, which its readers turn back into
    an expression. ``depth`` None: all on one line (-jsonl)."""
    from gridtools.classad.compound import AdExpr, ListExpr
    from gridtools.classad.nodes import Literal
    if expr.__class__ is Literal:
        return _json_plain(expr.value, depth, expr)
    if expr.__class__ is ListExpr:
        return _json_items([_json_value(item, _deeper(depth)) for item in expr.items], "[]", depth)
    if expr.__class__ is AdExpr:
        return _json_object([(name, _json_value(e, _deeper(depth))) for name, e in expr.pairs], depth)
    return _json_expr(expr.unparse())


def _json_plain(value, depth, expr=None):
    """The JSON text of a value (``expr``: the literal it came from, for \\/Expr)."""
    if value is UNDEFINED:
        return "null"
    if isinstance(value, str):
        return json.dumps(unicode_only(value))
    if isinstance(value, (bool, int)):
        return json.dumps(value)
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return unparse_value(value, True)
    if isinstance(value, list):
        return _json_items([_json_plain(v, _deeper(depth)) for v in value], "[]", depth)
    if isinstance(value, ClassAd):
        return _json_object([(n, _json_value(value.lookup(n), _deeper(depth))) for n in value], depth)
    return _json_expr(expr.unparse() if expr is not None else unparse_value(value))


def _json_expr(text):
    return '"\\/Expr(' + json.dumps(unicode_only(text))[1:-1] + ')\\/"'


def _json_object(pairs, depth):
    return _json_items([f"{json.dumps(unicode_only(n))}: {v}" for n, v in pairs], "{}", depth)


def _deeper(depth):
    return None if depth is None else depth + 1


def _json_items(items, brackets, depth):
    """A JSON array or object of ``depth`` (the top ad's attributes are at 1; None:
    on one line, as HTCondor's one-line writer puts it: ``[1,2]``)."""
    if depth is None:
        return brackets[0] + ",".join(items) + brackets[1]
    inner, outer = "\n" + "  " * (depth + 1), "\n" + "  " * depth
    return brackets[0] + ",".join(inner + item for item in items) + outer + brackets[1]


def json_form(ads):
    """The ads as HTCondor's -json prints them (condor_status, condor_q, condor_history):
    a list of objects, attributes sorted by name; nothing at all for no ads."""
    if not ads:
        return ""
    parts = []
    for ad in map(full, ads):
        body = ",\n".join(f"  {json.dumps(unicode_only(name))}: {_json_value(ad.lookup(name))}"
                          for name in sorted(ad, key=str.lower))
        parts.append("{\n" + body + "\n}")
    return "[\n" + "\n,\n".join(parts) + "\n]\n"


def json_line(ad):
    """An ad as -jsonl prints it: HTCondor's one-line JSON, ``{"A": 1,"B": [1,2]}``
    (attributes sorted by name, as -json's)."""
    ad = full(ad)
    return _json_object([(n, _json_value(ad.lookup(n), None)) for n in sorted(ad, key=str.lower)], None)


#: the XML form's escapes (what HTCondor's XML writer replaces)
_XML_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}


def _xml_text(text):
    return "".join(_XML_ESCAPES.get(ch, ch) for ch in unicode_only(text))


def _xml_value(expr):
    """The XML element of an attribute's expression: ``<i>`` an integer, ``<r>`` a real,
    ``<s>`` a string, ``<b v="t"/>`` a boolean, ``<un/>`` undefined, ``<er/>`` error,
    ``<l>`` a list of literals, ``<e>`` any other expression (its text)."""
    from gridtools.classad.compound import ListExpr
    from gridtools.classad.nodes import Literal
    if expr.__class__ is Literal:
        value = expr.value
        if value is UNDEFINED:
            return "<un/>"
        if value is ERROR:
            return "<er/>"
        if isinstance(value, bool):
            return f'<b v="{"t" if value else "f"}"/>'
        if isinstance(value, int):
            return f"<i>{value}</i>"
        if isinstance(value, float):
            return f"<r>{expr.unparse()}</r>"
        if isinstance(value, str):
            return f"<s>{_xml_text(value)}</s>"
    if expr.__class__ is ListExpr and all(item.__class__ is Literal for item in expr.items):
        return "<l>" + "".join(_xml_value(item) for item in expr.items) + "</l>"
    return f"<e>{_xml_text(expr.unparse())}</e>"


def xml_form(ads, blank_after=False):
    """The ads as HTCondor's -xml prints them (condor_q, condor_history, condor_status):
    the ``classads`` document, a ``c`` element per ad, an ``a`` element (its ``n`` the
    name) per attribute, sorted by name as -long is; ``blank_after``: a blank line after
    each ad, as condor_status prints them (condor_q's writer adds none)."""
    parts = ['<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n']
    for ad in map(full, ads):
        parts.append("<c>\n")
        parts += [f'    <a n="{_xml_text(name)}">{_xml_value(ad.lookup(name))}</a>\n'
                  for name in sorted(ad, key=str.lower)]
        parts.append("</c>\n\n" if blank_after else "</c>\n")
    parts.append("</classads>\n")
    return "".join(parts)


def constraint(text):
    """A -constraint expression (in the old ClassAd syntax, as HTCondor's tools read it:
    adjacent strings are refused), or UsageError in HTCondor's words."""
    try:
        return parse(text, old=True)
    except Exception:  # noqa: BLE001 - any parse error of the user's expression
        raise UsageError(f"Error: Invalid constraint expression: {text}") from None


def selected(ads, expr):
    """The ads for which ``expr`` is true."""
    if expr is None:
        return list(ads)
    return [ad for ad in ads if expr.eval(full(ad)) is True]


class PlainAd:
    """An ad of the status snapshot, ``[literal values, expression texts]``: literal
    attributes are read as they are; the ClassAd is built only when an expression must
    be evaluated (tables of many slots then cost a dictionary lookup per cell)."""

    __slots__ = ("values", "exprs", "_full")

    def __init__(self, values, exprs):
        self.values, self.exprs, self._full = values, exprs, None

    def eval(self, name, target=None):
        if target is None and name in self.values:
            return self.values[name]
        return self.full().eval(name, target)

    def full(self):
        if self._full is None:
            ad = ClassAd(self.values)
            for name, text in self.exprs.items():
                try:
                    ad[name] = parse(text)
                except Exception:  # noqa: BLE001 - published by the daemon; a bad one stays text
                    ad[name] = text
            self._full = ad
        return self._full


def full(ad):
    """The ClassAd of an ad (a PlainAd is built now)."""
    return ad.full() if isinstance(ad, PlainAd) else ad


def from_plain(item):
    """An ad from the status snapshot's ``[literal values, expression texts]``."""
    values, exprs = item
    return PlainAd(values, exprs)
