"""Printing attributes of ClassAds: ``-autoformat`` (``-af``) and ``-format``,
shared by condor_q and condor_history.

``-af[:qualifiers] ATTR ...`` prints the values of attributes or expressions
of each ad, one ad per line, separated by a space. Qualifiers: ``j`` the
job id first, ``l`` label each field (``Name = value``), ``h`` a heading
line (then the columns are aligned), ``V`` strings in quotes, ``r`` the
expression as written, unevaluated, ``t`` a tab before each field but the
first, ``,`` or ``n`` (the last given wins) a comma or a newline after each
field but the last, ``g`` an empty line before each ad and nothing before
a field; ``o`` is ``r``. Other letters are ignored, as HTCondor 24's
parse_autoformat_args ignores them (``T`` and ``Y``, elapsed times and dates
in later versions, print the plain values). (HTCondor's parse_autoformat_args:
a column prefix, a column suffix, a row prefix.)

Reals print as HTCondor's old-ClassAd unparser writes them (``%.16G``, with
``.0`` added to a whole number: ``10.0``, ``0.008332967758178711``). An
expression given to -af or -format is read in the old ClassAd syntax, as
-constraint is (``"a\\nb"`` is four characters).

``-format FMT ATTR`` prints with a printf conversion: ``%s``, ``%d``,
``%f`` (with flags, width and precision), ``%v`` (the value as it reads),
``%V`` (as in the long form: strings quoted), ``%r`` (unevaluated).
``\\n`` and ``\\t`` in the format are a newline and a tab. As in HTCondor's
print mask, a value that is not of the kind the conversion wants makes the
whole item print nothing (not even its other text): ``%d`` and ``%f`` want a
number (a boolean is 1 or 0), ``%s`` a string (an attribute of the ad that is
not one prints as written; an expression or a missing attribute prints
nothing); ``%v`` takes anything (``undefined`` too).
"""

from gridtools.classad import ERROR, UNDEFINED, parse
from gridtools.classad.values import unparse_value

#: the pattern of a -format conversion (compiled on first use: ``re`` costs the other
#: views more than their work)
_CONVERSION = []


def _conversions():
    if not _CONVERSION:
        import re
        _CONVERSION.append(re.compile(r"%([-+ #0]*)(\d*)(?:\.(\d+))?([sdiufgGeExXocvVr%])"))
    return _CONVERSION[0]


def value_text(value, quoted=False):
    """A value as -af prints it (strings bare unless ``quoted``)."""
    if value is UNDEFINED:
        return "undefined"
    if value is ERROR:
        return "error"
    if isinstance(value, str) and not quoted:
        return value
    return unparse_value(value, True)


def _expr(text):
    """The expression of an -af or -format argument, read as HTCondor reads one
    (ParseClassAdRvalExpr): in the old syntax, as -constraint is (a backslash is
    itself, adjacent strings are refused); None for text that does not parse."""
    try:
        return parse(text, old=True)
    except Exception:  # noqa: BLE001 - not an expression: nothing to show
        return None


def field_value(ad, attr, raw=False, quoted=False):
    """The text of attribute or expression ``attr`` of ``ad``."""
    if raw:
        expr = ad.lookup(attr) if attr.replace("_", "").isalnum() else None
        if expr is None:
            expr = _expr(attr)
        return expr.unparse(True) if expr is not None else "undefined"
    value = ad.eval(attr) if attr.replace("_", "").isalnum() and attr in ad else _eval(ad, attr)
    return value_text(value, quoted)


def _eval(ad, text):
    expr = _expr(text)
    return expr.eval(ad) if expr is not None else UNDEFINED


def job_id(ad):
    return f"{ad.eval('ClusterId')}.{ad.eval('ProcId')}"


#: the -af qualifiers that print expressions as written (HTCondor's ``r`` and ``o``)
RAW = frozenset("ro")


def autoformat(ads, attrs, qualifiers="", cell=None, ad_id=job_id):
    """The -af text of ``ads``: ``cell(ad, attr)`` the text of one field (by default
    ``field_value`` with the qualifiers' options), ``ad_id(ad)`` the id ``j`` prints."""
    q = set(qualifiers)
    if cell is None:
        opts = {"raw": bool(q & RAW), "quoted": "V" in q}

        def cell(ad, attr):
            return field_value(ad, attr, **opts)
    layout = af_layout(qualifiers)
    if "h" in q:
        return _table(ads, attrs, "j" in q and ad_id, cell, layout)
    out = []
    for ad in ads:
        fields = [f"{attr} = {cell(ad, attr)}" if "l" in q else cell(ad, attr) for attr in attrs]
        if "j" in q:
            fields.insert(0, ("ID = " if "l" in q else "") + ad_id(ad))
        out.append(af_line(fields, layout))
    return "".join(out)


def af_layout(qualifiers):
    """(row prefix, column prefix, column suffix) of -af's qualifiers, set letter by
    letter as HTCondor's parse_autoformat_args does: ``,`` and ``n`` the suffix (the
    last wins), ``t`` a tab prefix, ``g`` an empty line before the row and no prefix."""
    row, before, after = "", " ", ""
    for letter in qualifiers:
        if letter in ",n":
            after = "," if letter == "," else "\n"
        elif letter == "g":
            row, before = "\n", ""
        elif letter == "t":
            before = "\t"
    return row, before, after


def af_line(fields, layout):
    """One row: the prefix before every field but the first, the suffix after every
    field but the last (the job id of ``j`` is one field, ``4.0``)."""
    row, before, after = layout
    return row + (after + before).join(fields) + "\n"


def _table(ads, attrs, ad_id, cell, layout):
    """-af:h: a heading line, then the rows, each column as wide as its widest cell
    and left aligned (the job id of ``j``: ``%4d.`` under `` ID``, ``%-3d`` under a blank)."""
    heads = list(attrs)
    rows = [[cell(ad, attr) for attr in attrs] for ad in ads]
    if ad_id:
        heads[:0] = [" ID", " "]
        for row, ad in zip(rows, ads):
            cluster, _, proc = ad_id(ad).partition(".")
            row[:0] = [cluster.rjust(4) + ".", proc.ljust(3)]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]
    lines = [_aligned(heads, widths, ad_id, layout)]
    lines += [_aligned(row, widths, ad_id, layout) for row in rows]
    return "".join(lines)


def _aligned(cells, widths, ad_id, layout):
    cells = [c.ljust(w) for c, w in zip(cells, widths)]
    if ad_id:                           # (the cluster's column has no suffix, the proc's no prefix)
        cells[:2] = [cells[0] + cells[1]]
    return af_line(cells, layout)


def unescape(fmt):
    return fmt.replace("\\n", "\n").replace("\\t", "\t")


def format_one(ad, fmt, attr, evaluate=None):
    """One -format item for one ad, as HTCondor's print mask renders a printf column: the
    value goes into the conversion (into each, when there are more); a value not of a
    conversion's kind (a column HTCondor marks invalid) makes the item print nothing at
    all. ``evaluate(text)``: the value of an expression in the ad (by default, evaluated
    in the ad alone)."""
    fmt = unescape(fmt)
    evaluate = evaluate or (lambda text: _value(ad, text))
    out, pos = [], 0
    for m in _conversions().finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        text = "%" if m.group(4) == "%" else _converted(ad, attr, m, evaluate)
        if text is None:
            return ""
        out.append(text)
    out.append(fmt[pos:])
    return "".join(out)


def _value(ad, text):
    return ad.eval(text) if text in ad else _eval(ad, text)


def _converted(ad, attr, m, evaluate):
    """The text of conversion ``m`` of ``attr``, None when HTCondor's column is invalid."""
    flags, width, precision, kind = m.groups()
    spec = "%" + flags + width + (f".{precision}" if precision else "")
    if kind == "r":
        text = _raw_text(ad, attr)
        return None if text is None else (spec + "s") % text
    if kind == "s":
        text = _string_text(ad, attr, evaluate)
        return None if text is None else (spec + "s") % text
    value = evaluate(attr)
    if kind in "vV":
        return (spec + "s") % value_text(value, quoted=kind == "V")
    if type(value) not in (int, float, bool):
        return None
    if kind in "dixXouc":
        return (spec + {"i": "d", "u": "d"}.get(kind, kind)) % int(value)
    return (spec + kind) % float(value)


def _raw_text(ad, attr):
    """``%r``: the attribute's expression as written; for an expression, its own text
    (a name the ad lacks: ``undefined``); None for text that does not parse."""
    from gridtools.classad.nodes import Attr
    expr = ad.lookup(attr) if attr.replace("_", "").isalnum() else None
    if expr is not None:
        return expr.unparse(True)
    expr = _expr(attr)
    if expr is None:
        return None
    return "undefined" if isinstance(expr, Attr) else expr.unparse(True)


def _string_text(ad, attr, evaluate):
    """``%s``: a string value; an attribute of the ad that is no string as written (an
    attribute reference as ``undefined``, as HTCondor 24.0 unparses one); else None."""
    value = evaluate(attr)
    if isinstance(value, str):
        return value
    expr = ad.lookup(attr) if attr.replace("_", "").isalnum() else None
    if expr is None:
        return None
    from gridtools.classad.nodes import Attr
    return "undefined" if isinstance(expr, Attr) else expr.unparse(True)


def format_ads(ads, items):
    """The -format text of ``ads``: ``items`` is [(fmt, attr)], applied in order to each ad."""
    return "".join(format_one(ad, fmt, attr) for ad in ads for fmt, attr in items)


def json_ads(ads):
    """Ads in HTCondor's JSON form (condor_status -json's, one writer for both)."""
    from gridtools.cli.condor.adformat import json_form
    return json_form(ads)


def xml_ads(ads):
    """Ads in HTCondor's XML form (condor_status -xml's, one writer for both)."""
    from gridtools.cli.condor.adformat import xml_form
    return xml_form(ads)


def long_ads(ads):
    """Ads in the long form, an empty line after each (condor_q -l, condor_history -l):
    attributes sorted by name, any case, as HTCondor's ad writer sorts them."""
    return "".join("".join(sorted(str(ad).splitlines(True), key=_line_name)) + "\n" for ad in ads)


def _line_name(line):
    """The sort key of a long-form line: its attribute name (before `` = ``), any case."""
    return line.partition(" = ")[0].lower()


def projected(ads, attributes):
    """The ads -long, -json and -xml show (condor_q, condor_status, condor_history): with
    ``-attributes``, only the attributes named (any case); without, the ads as they are."""
    if not attributes:
        return ads
    from gridtools.classad import ClassAd
    keep = {a.lower() for a in attributes}
    return [ClassAd([(n, ad.lookup(n)) for n in ad if n.lower() in keep]) for ad in ads]
