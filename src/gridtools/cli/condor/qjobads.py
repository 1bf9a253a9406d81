"""condor_q -jobads FILE: the jobs of a file of job ads instead of the queue.

The file holds ads as condor_q and condor_history print them (``-`` reads
the standard input), in the form ``-jobads:FORM`` names (``long``, ``json``,
``jsonl``, ``xml``, ``new``, ``newl`` or ``auto``; another word is ``auto``)
or, by default, the form its first line shows, as HTCondor's reader tells
them: ``<?xml`` the XML form, ``[`` then ``{`` the JSON form (a list of
objects), a line ``{...}`` JSON lines, ``{`` then ``[`` or a line ``[...]``
the new ClassAd form, anything else the long form. In the long form, one
``Name = value`` a line (``condor_q -l``, ``condor_history -l``), as
HTCondor's reader does, a blank line, a line starting with ``...`` or
``***`` (condor_history's banner) ends an ad; a ``-- Schedd: NAME : ADDR``
title line ends one too and is otherwise passed over (it names the schedd
-better-analyze reports); ``#`` lines are comments; an ad with a line that
does not parse is skipped up to the next separator (and so is an ad of the
other forms that does not parse). Every job of the file is shown, whoever
owns it (the file is not the caller's queue): the ids, users and
``-constraint`` select among them, and every view of condor_q works on them
with the title ``-- Jobads: FILE @ DATE`` (``qlog.show``). A file that
cannot be opened: ``Can't open file of ClassAds: FILE``, exit 1.
``-slotads`` reads its file the same way (``read_ads``).
"""

import sys
import time

from gridtools.cli.condor import qlog, queue as Q
from gridtools.errors import GridError

#: the forms a -jobads:FORM (and -slotads:FORM) qualifier names, as HTCondor's words
FORMS = ("long", "json", "jsonl", "xml", "new", "newl", "auto")


def form_of(qualifier):
    """The form a ``-jobads:FORM`` or ``-slotads:FORM`` qualifier names (another word:
    ``auto``)."""
    word = qualifier.strip()
    return word if word in FORMS else "auto"


class Header:
    """What a ``-- Schedd:`` (or ``-- Submitter:``) line of the file said."""

    def __init__(self):
        self.kind = self.name = self.address = ""


def _text(path):
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        raise GridError(f"Can't open file of ClassAds: {path}", 1) from None


def _header(line, header):
    rest = line[3:]
    for kind in ("Schedd", "Submitter"):
        if rest.startswith(kind + ":"):
            import re
            m = re.match(r"[: \t]*([^: \t]*)[: \t]*(\S*)", rest[len(kind) + 1:])
            header.kind, header.name, header.address = kind, m.group(1), m.group(2)


def read_ads(path, header=None, form="auto"):
    """The ads of the file ``path`` in their order (``form``: as ``form_of`` names it)."""
    return ads_of_text(_text(path), header, form)


def ads_of_text(text, header=None, form="auto"):
    """The ads of a file's ``text`` in their order (``form``: as ``form_of`` names it)."""
    header = header if header is not None else Header()
    if form == "auto":
        form = detect(text)
    if form in ("json", "jsonl"):
        return _json_ads(text, form == "jsonl")
    if form == "xml":
        return _xml_ads(text)
    if form in ("new", "newl"):
        return _new_ads(text)
    return _long_ads(text, header)


def detect(text):
    """The form of the file's text, told from its first line as HTCondor's reader does."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    first = lines[0] if lines else ""
    rest = text.lstrip()[1:].lstrip()
    if first.startswith("<?xml"):
        return "xml"
    if first[:1] == "[" and rest[:1] == "{":
        return "json"
    if first[:1] == "{" and rest[:1] == "[":
        return "new"
    if len(first) > 2 and first[0] == "{" and first[-1] == "}":
        return "jsonl"
    if len(first) > 2 and first[0] == "[" and first[-1] == "]":
        return "newl"
    return "long"


def _long_ads(text, header):
    from gridtools.classad import parse_ad
    from gridtools.classad.parser import ClassAdSyntaxError
    found, block = [], []

    def close():
        if block:
            try:
                found.append(parse_ad("\n".join(block)))
            except ClassAdSyntaxError:
                pass                    # (the ad is skipped, as HTCondor skips it)
            block.clear()
    for line in text.splitlines():
        if not line.strip() or line.startswith(("...", "***")):
            close()
        elif line.startswith("-- "):
            _header(line, header)
            close()
        elif not line.lstrip().startswith("#"):
            block.append(line)
    close()
    return found


def _expr_text(value):
    """ClassAd text of a JSON value (HTCondor's JSON form: an expression is the string
    ``/Expr(TEXT)/``)."""
    import re
    from gridtools.classad.values import unparse_value
    if value is None:
        return "undefined"
    if isinstance(value, str):
        m = re.fullmatch(r"/Expr\((.*)\)/", value, re.S)
        return m.group(1) if m else unparse_value(value)
    if isinstance(value, list):
        return "{ " + ", ".join(_expr_text(item) for item in value) + " }"
    if isinstance(value, dict):
        return "[ " + "; ".join(f"{name} = {_expr_text(item)}" for name, item in value.items()) + " ]"
    return unparse_value(value)


def _ad_of(pairs):
    """A ClassAd of (name, expression text) pairs; None when one does not parse."""
    from gridtools.classad import ClassAd, parse
    ad = ClassAd()
    try:
        for name, text in pairs:
            ad[name] = parse(text)
    except Exception:  # noqa: BLE001 - an ad that does not parse is skipped
        return None
    return ad


def _json_ads(text, lines):
    import json
    try:
        objects = [json.loads(line) for line in text.splitlines() if line.strip()] if lines else json.loads(text)
    except ValueError:
        return []
    ads = (_ad_of((name, _expr_text(value)) for name, value in obj.items())
           for obj in objects if isinstance(obj, dict))
    return [ad for ad in ads if ad is not None]


def _xml_text(element):
    """ClassAd text of an element of HTCondor's XML form."""
    from gridtools.classad.values import unparse_value
    tag, body = element.tag, element.text or ""
    if tag == "s":
        return unparse_value(body)
    if tag in ("i", "r", "e"):
        return body
    if tag == "b":
        return "true" if element.get("v") == "t" else "false"
    if tag == "l":
        return "{ " + ", ".join(_xml_text(item) for item in element) + " }"
    if tag == "c":
        return "[ " + "; ".join(f"{a.get('n')} = {_xml_text(a[0])}" for a in element if len(a)) + " ]"
    if tag in ("er", "error"):
        return "error"
    return "undefined"


def _xml_ads(text):
    import xml.etree.ElementTree as ET
    try:
        root = ET.fromstring("\n".join(line for line in text.splitlines()
                                       if not line.lstrip().startswith("<!DOCTYPE")))
    except ET.ParseError:
        return []
    ads = (_ad_of((a.get("n"), _xml_text(a[0])) for a in c if a.tag == "a" and len(a))
           for c in root.findall("c"))
    return [ad for ad in ads if ad is not None]


def _new_ads(text):
    """The ``[ ... ]`` ads of the new ClassAd form (a list of them, or one a line)."""
    from gridtools.classad import parse_ad
    found, depth, start, quote, escaped = [], 0, None, False, False
    for at, ch in enumerate(text):
        if quote:
            escaped, quote = (not escaped and ch == "\\"), quote and not (ch == '"' and not escaped)
            continue
        if ch == '"':
            quote = True
        elif ch == "[":
            depth += 1
            start = at if depth == 1 else start
        elif ch == "]" and depth:
            depth -= 1
            if depth == 0:
                try:
                    found.append(parse_ad(text[start:at + 1]))
                except Exception:  # noqa: BLE001 - an ad that does not parse is skipped
                    pass
    return found


def _number(value, default=0):
    return value if type(value) in (int, float) and not isinstance(value, bool) else default


def proc_of(ad):
    """The ``queue.Proc`` condor_q's tables show of a job ad: RUN_TIME is its earlier
    runs' RemoteWallClockTime and, running, the time since its ShadowBday."""
    proc = qlog.proc_of(ad)
    proc.wall = _number(ad.eval("RemoteWallClockTime"))
    if proc.status in (Q.RUNNING, Q.TRANSFERRING, Q.SUSPENDED):
        proc.start = _number(ad.eval("ShadowBday")) or _number(ad.eval("JobCurrentStartDate"))
    args = ad.eval("Arguments")
    if not isinstance(args, str):
        args = ad.eval("Args")
    proc.args = args.split() if isinstance(args, str) and args.strip() else []
    proc.universe = int(_number(ad.eval("JobUniverse"), 5))
    proc.is_condor = True
    return proc


def _has_ids(ad):
    return all(type(ad.eval(name)) is int for name in ("ClusterId", "ProcId"))


def run(opts, select, attributes):
    """condor_q's text for the job ads of ``opts.jobads``; ``select`` and ``attributes``
    are condor_q's own (``q.select``, ``q._attributes``)."""
    header = Header()
    ads = read_ads(opts.jobads, header, opts.jobads_form)
    if opts.autocluster:            # (the file's ads are autocluster or group ads)
        from gridtools.cli.condor import qautocluster
        return qautocluster.from_file(opts, ads, attributes, f"Jobads: {opts.jobads}", time.time())
    ads = [ad for ad in ads if _has_ids(ad)]
    by_id = {}
    for ad in ads:                      # (a job given twice: the first ad counts)
        by_id.setdefault((ad.eval("ClusterId"), ad.eval("ProcId")), ad)
    ads = [by_id[key] for key in sorted(by_id)]
    everyone, source = [proc_of(ad) for ad in ads], qlog.LogAds(ads)
    submitted = {}
    for ad in ads:
        count = ad.eval("TotalSubmitProcs")
        submitted.setdefault(ad.eval("ClusterId"), count if type(count) is int else 0)
    opts.selection.allusers = True
    label = f"Jobads: {opts.jobads}"
    if opts.view == "analyze" and header.name:
        label = f"{header.kind}: {header.name} : {header.address}"
    return qlog.show(opts, select, attributes, everyone, source, label, Q.me(), time.time(), submitted)
