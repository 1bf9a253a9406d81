"""condor_q -aaf[:V|r|T|Y] ATTR ...: columns appended to a per-proc table.

As HTCondor's condor_q adds them: each word is a line of a print format's SELECT
(``ATTR [AS heading] [WIDTH n] [PRINTF fmt | PRINTAS fn] ...``), its heading the
attribute (or its AS name), as wide as the heading and growing with the values,
left-aligned; a value is printed as %v prints it (an undefined one as
``undefined``), or as the qualifier's %V, %r, %T or %Y. The table's last column
(CMD, HOST(S), HOLD_REASON ...) is then as wide as its widest cell (at least 3)
so that the new columns line up. Without -wide the table is not cut to the
terminal. The batch view and the ads' own forms refuse -aaf, in HTCondor's words;
-batch:0's rows and -print-format's table take the columns too. Loaded only when
-aaf is given.
"""

from gridtools.cli.condor import printmask
from gridtools.errors import UsageError

#: the qualifier's default format of a column
_DEFAULTS = {"": "%v", "V": "%V", "r": "%r", "T": "%T", "Y": "%Y"}


def check(opts):
    """Refuse -aaf where HTCondor does; the columns otherwise. -batch:0 (batch mode 0:
    the batch view's columns, a row per job) takes them, as in HTCondor."""
    view, aaf = opts.view, opts.aaf
    if view == "batch" and not opts.unreduced:
        raise UsageError("Error: -aaf cannot be used with -batch mode output (the default), "
                         "did you intend to use -af ?", 1)
    if view in ("long", "json", "xml", "af", "format", "analyze"):
        raise UsageError("Error: output formatting options conflict with -aaf options", 1)
    return columns(aaf)


def columns(aaf):
    """The appended columns (printmask Columns) of the -aaf ``(qualifier, words)`` given."""
    made = []
    for qual, words in aaf:
        if qual[:1] and qual[0] in "TVYr":
            default, rest = _DEFAULTS[qual[0]], qual[1:]
        else:
            default, rest = "%v", qual
        if rest:
            raise UsageError(f"Error: {rest} is invalid -aaf format qualifier. "
                             "only one of V,r,T, or Y is permitted.", 1)
        for word in words:
            mask = printmask.parse(word, truncate=True, tool="condor_q")
            if not mask.columns:            # (an empty word, or a comment: nothing to add)
                continue
            col = mask.columns[0]
            if col.fn is None and col.fmt == "%v" and default != "%v":
                if default == "%r":
                    col.fn = _Raw(col.expr)
                col.fmt = None if default == "%r" else default
            made.append(col)
            if mask.messages and any("not valid" in m for m in mask.messages):
                break                       # (HTCondor stops at a column it cannot parse)
    return made


class _Raw:
    """%r: the expression of the attribute as written (``undefined`` when absent)."""
    kind, fmt, formats = "string", None, True

    def __init__(self, expr):
        self.expr = expr.strip()

    def render(self, _value, ad):
        from gridtools.cli.condor import adformat
        from gridtools.classad import parse
        full = adformat.full(ad)
        found = full.lookup(self.expr) if self.expr.replace("_", "").isalnum() else None
        if found is not None:
            return True, found.unparse(True)
        if self.expr.replace("_", "").isalnum():
            return True, "undefined"
        return True, parse(self.expr, old=True).unparse(True)

    def format(self, value):
        return value


def append(table, ads, cols):
    """``table`` (its heading line, then a row per ad of ``ads``) with ``cols`` after its
    last column, which is widened to its widest cell first."""
    lines = table.split("\n")[:-1]
    if not lines:
        return table
    mask = printmask.Mask()
    mask.columns = cols
    head, rows = mask.table(ads)
    width = max(3, max(len(line) for line in lines))
    out = [lines[0].ljust(width) + " " + head.rstrip("\n")]
    for line, row in zip(lines[1:], rows):
        out.append(line.ljust(width) + " " + row.rstrip("\n"))
    return "\n".join(out) + "\n"


def extend(mask, cols):
    """A -print-format mask with ``cols`` after its columns: a last column of width 0
    that does not grow becomes one that does, left-aligned (as HTCondor's)."""
    if mask.columns:
        last = mask.columns[-1]
        if last.width == 0 and not last.auto:
            last.width, last.left, last.auto, last.notrunc = 3, True, True, True
    mask.columns = mask.columns + cols
    return mask


def procs_of_rows(opts, chosen, source):
    """The procs of a table's rows, in their order: the first of each hold code and
    subcode (-hold-codes), the DAG order (-dag), or the chosen ones."""
    if opts.view == "hold" and opts.grouped:
        groups = {}
        for p in chosen:
            hold = p.hold or ["", 0, 0]
            groups.setdefault((int(hold[1]), int(hold[2])), []).append(p)
        return [min(held, key=lambda p: (p.cluster, p.proc)) for _key, held in sorted(groups.items())]
    if opts.view == "nobatch" and opts.dag:
        from gridtools.cli.condor.q import dag_order
        return dag_order(chosen, source)[0]
    if opts.view == "batch":                # (-batch:0: qbatchraw's order)
        return sorted(chosen, key=lambda p: (p.cluster, p.proc))
    return chosen
