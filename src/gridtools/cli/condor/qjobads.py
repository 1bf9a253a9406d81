"""condor_q -jobads FILE: the jobs of a file of job ads instead of the queue.

The file holds ads in long form, one ``Name = value`` a line, as ``condor_q
-l`` and ``condor_history -l`` write them (``-`` reads the standard input).
As HTCondor's reader does, a blank line, a line starting with ``...`` or
``***`` (condor_history's banner) ends an ad; a ``-- Schedd: NAME : ADDR``
title line ends one too and is otherwise passed over (it names the schedd
-better-analyze reports); ``#`` lines are comments; an ad with a line that
does not parse is skipped up to the next separator. Every job of the file is
shown, whoever owns it (the file is not the caller's queue): the ids, users
and ``-constraint`` select among them, and every view of condor_q works on
them with the title ``-- Jobads: FILE @ DATE`` (``qlog.show``). A file that
cannot be opened: ``Can't open file of ClassAds: FILE``, exit 1. Only the
long form is read: ``-jobads:json`` and ``-jobads:xml`` are refused by name.
"""

import sys
import time

from gridtools.cli.condor import qlog, queue as Q
from gridtools.errors import GridError

#: the forms a -jobads:FORM (and -slotads:FORM) qualifier may name that are read
LONG_FORMS = ("long", "new", "auto")


def form_of(option, qualifier):
    """Refuse a FORM qualifier naming a form other than the long one."""
    word = qualifier.strip().lower()
    if word and not any(form.startswith(word) for form in LONG_FORMS):
        from gridtools.errors import UsageError
        raise UsageError(f"Error: -{option}:{qualifier} is not supported by this condor_q: "
                         "only ads in long form are read", 1)


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


def read_ads(path, header=None):
    """The ads of the file ``path`` in long form, in their order."""
    from gridtools.classad import parse_ad
    from gridtools.classad.parser import ClassAdSyntaxError
    header = header if header is not None else Header()
    found, block = [], []

    def close():
        if block:
            try:
                found.append(parse_ad("\n".join(block)))
            except ClassAdSyntaxError:
                pass                    # (the ad is skipped, as HTCondor skips it)
            block.clear()
    for line in _text(path).splitlines():
        if not line.strip() or line.startswith(("...", "***")):
            close()
        elif line.startswith("-- "):
            _header(line, header)
            close()
        elif not line.lstrip().startswith("#"):
            block.append(line)
    close()
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
    ads = [ad for ad in read_ads(opts.jobads, header) if _has_ids(ad)]
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
