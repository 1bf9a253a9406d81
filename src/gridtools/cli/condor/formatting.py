"""Printing attributes of ClassAds: ``-autoformat`` (``-af``) and ``-format``,
shared by condor_q and condor_history.

``-af[:qualifiers] ATTR ...`` prints the values of attributes or expressions
of each ad, one ad per line, separated by a space. Qualifiers: ``j`` the
job id first, ``l`` label each field (``Name = value``), ``h`` a heading
line (then the columns are aligned), ``V`` strings in quotes, ``r`` the
expression as written, unevaluated, ``t`` a tab between fields, ``n`` a
newline after each field, ``,`` a comma between fields (HTCondor's column
suffix, none after the last), ``g`` an empty line between ads, ``T`` values
as elapsed times, ``Y`` as dates.

Reals print as HTCondor's old-ClassAd unparser writes them (``%.16G``, with
``.0`` added to a whole number: ``10.0``, ``0.008332967758178711``).

``-format FMT ATTR`` prints with a printf conversion: ``%s``, ``%d``,
``%f`` (with flags, width and precision), ``%v`` (the value as it reads),
``%V`` (as in the long form: strings quoted), ``%r`` (unevaluated).
``\\n`` and ``\\t`` in the format are a newline and a tab. An attribute
that is undefined prints nothing with ``%d`` and ``%f``.
"""

import time

from gridtools.classad import ERROR, UNDEFINED, parse
from gridtools.classad.values import unparse_value

#: the pattern of a -format conversion (compiled on first use: ``re`` costs the other
#: views more than their work)
_CONVERSION = []


def _conversions():
    if not _CONVERSION:
        import re
        _CONVERSION.append(re.compile(r"%([-+ #0]*)(\d*)(?:\.(\d+))?([sdifgGeExXvVr%])"))
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
    try:
        return parse(text)
    except Exception:  # noqa: BLE001 - not an expression: nothing to show
        return None


def field_value(ad, attr, raw=False, quoted=False, elapsed=False, date=False):
    """The text of attribute or expression ``attr`` of ``ad``."""
    if raw:
        expr = ad.lookup(attr) if attr.replace("_", "").isalnum() else None
        if expr is None:
            expr = _expr(attr)
        return expr.unparse(True) if expr is not None else "undefined"
    value = ad.eval(attr) if attr.replace("_", "").isalnum() and attr in ad else _eval(ad, attr)
    if elapsed and type(value) in (int, float):
        return _elapsed(value)
    if date and type(value) in (int, float):
        return time.strftime("%m/%d/%y %H:%M:%S", time.localtime(value))
    return value_text(value, quoted)


def _eval(ad, text):
    expr = _expr(text)
    return expr.eval(ad) if expr is not None else UNDEFINED


def _elapsed(seconds):
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    return f"{days}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def job_id(ad):
    return f"{ad.eval('ClusterId')}.{ad.eval('ProcId')}"


def autoformat(ads, attrs, qualifiers=""):
    """The -af text of ``ads``."""
    q = set(qualifiers)
    opts = {"raw": "r" in q, "quoted": "V" in q, "elapsed": "T" in q, "date": "Y" in q}
    names = (["ID"] if "j" in q else []) + list(attrs)
    rows = []
    for ad in ads:
        row = [job_id(ad)] if "j" in q else []
        row += [field_value(ad, attr, **opts) for attr in attrs]
        rows.append(row)
    if "h" in q:
        return _table(names, rows)
    sep = "\t" if "t" in q else " "
    after = "," if "," in q else ""
    out = []
    for row in rows:
        cells = [f"{name} = {cell}" if "l" in q else cell for name, cell in zip(names, row)]
        if "n" in q:
            out.append("".join(cell + after + "\n" for cell in cells))
        else:
            out.append((after + sep).join(cells) + "\n")
        if "g" in q:
            out.append("\n")
    return "".join(out)


def _table(names, rows):
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]
    lines = [" ".join(n.ljust(w) for n, w in zip(names, widths)).rstrip()]
    lines += [" ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "".join(line + "\n" for line in lines)


def unescape(fmt):
    return fmt.replace("\\n", "\n").replace("\\t", "\t")


def format_one(ad, fmt, attr):
    """One -format item for one ad."""
    fmt = unescape(fmt)
    out, pos = [], 0
    for m in _conversions().finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        out.append(_convert(ad, attr, m))
    out.append(fmt[pos:])
    return "".join(out)


def _convert(ad, attr, m):
    flags, width, precision, kind = m.groups()
    if kind == "%":
        return "%"
    if kind == "r":
        return field_value(ad, attr, raw=True)
    value = ad.eval(attr) if attr in ad else _eval(ad, attr)
    spec = "%" + flags + width + (f".{precision}" if precision else "")
    if kind in "vV":
        return (spec + "s") % value_text(value, quoted=kind == "V")
    if kind == "s":
        return (spec + "s") % value_text(value)
    if isinstance(value, bool):
        value = int(value)
    if type(value) not in (int, float):
        return ""
    if kind in "dixX":
        return (spec + kind.replace("i", "d")) % int(value)
    return (spec + kind) % float(value)


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
    """Ads in the long form, an empty line after each (condor_q -l)."""
    return "".join(f"{ad}\n" for ad in ads)


def projected(ads, attributes):
    """The ads -long, -json and -xml show (condor_q, condor_status, condor_history): with
    ``-attributes``, only the attributes named (any case); without, the ads as they are."""
    if not attributes:
        return ads
    from gridtools.classad import ClassAd
    keep = {a.lower() for a in attributes}
    return [ClassAd([(n, ad.lookup(n)) for n in ad if n.lower() in keep]) for ad in ads]
