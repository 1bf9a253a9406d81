"""HTCondor's print masks: the column tables condor_status and condor_q print with,
read from print-format text (``-print-format FILE``, and the built-in views written
the same way: -any, -startd, -gpus).

    SELECT [FROM AUTOCLUSTER | UNIQUE | <AdType>] [BARE | NOTITLE | NOHEADER | NOSUMMARY]
           [LABEL [SEPARATOR s]] [RECORDPREFIX s] [RECORDSUFFIX s] [FIELDPREFIX s] [FIELDSUFFIX s]
      <expr> [AS label] [WIDTH [-]n | WIDTH AUTO] [FIT] [TRUNCATE] [LEFT | RIGHT]
             [PRINTF fmt | PRINTAS fn] [NOPREFIX] [NOSUFFIX] [ALWAYS] [OR c[c]]
      ...
    [WHERE expr]
    [GROUP BY expr [ASCENDING | DESCENDING] ...]
    [SUMMARY [STANDARD | NONE]]
      [<expr> ... : the columns of a custom summary, after a bare SUMMARY]

``parse`` reads the text into a ``Mask`` (its ``messages``: HTCondor's warnings,
printed and then gone past, as HTCondor does); ``Mask.table(ads)`` gives the
heading line and the rows. A column's value, its validity and its width follow
HTCondor's AttrListPrintMask: a column without WIDTH is as wide as its heading
and grows with its values (WIDTH AUTO too), a negative width or LEFT aligns left,
a value longer than a fixed width overflows unless TRUNCATE (condor_status) or
the tool cuts fixed widths (condor_q); a value that is not of the kind its format
wants prints the OR character (nothing by default; doubled, it fills the column).
The PRINTAS functions are in ``printas``.
"""

import re

from gridtools.classad import parse as parse_expr
from gridtools.classad.values import ERROR, UNDEFINED, unparse_value
from gridtools.cli.condor import adformat, printas

#: the keywords that end a SELECT line's expression
_KEYWORDS = frozenset(("ALWAYS", "AS", "AUTO", "FIT", "LEFT", "NOPREFIX", "NOSUFFIX", "OR", "PRINTAS",
                       "PRINTF", "RENDERAS", "RIGHT", "TRUNCATE", "WIDTH"))
#: the characters OR accepts, in HTCondor's order
_ALT_CHARS = " ?*.-_#0"
_PRINTF = re.compile(r"%([-#0 +']*)(\d*)(?:\.(\d*))?[hlLqjzt]*([A-Za-z])")
_KIND_OF_LETTER = {**dict.fromkeys("diouxX", "int"), "c": "int", **dict.fromkeys("eEfFgGaA", "float"),
                   "s": "string", "v": "value", "V": "value", "T": "time", "Y": "date", "p": "int"}


class Column:
    """One SELECT line (HTCondor's Formatter)."""

    def __init__(self, expr, heading):
        self.expr, self.heading = expr, heading
        self.width, self.left, self.auto, self.notrunc = 0, False, True, True
        self.fmt = "%v"                 # a printf format, or None
        self.fn = None                  # a printas.Function
        self.alt, self.alt_wide = 0, False
        self.noprefix = self.nosuffix = self.always = False
        self._tree = None

    def tree(self):
        if self._tree is None:
            try:
                self._tree = parse_expr(self.expr, old=True)
            except Exception:  # noqa: BLE001 - a column that does not parse prints its OR character
                self._tree = False
        return self._tree


class Mask:
    def __init__(self):
        self.columns = []
        self.where = None               # the WHERE text
        self.group_by = []              # (expression text, descending)
        self.select_from = ""
        self.aggregate = None           # "autocluster" or "unique": not supported
        self.noheader = self.notitle = False
        self.summary = False            # SUMMARY STANDARD (the default: none)
        self.summary_mask = None        # a bare SUMMARY: the Mask of the lines after it
        self.label_sep = None           # LABEL: each field "label<sep>value"
        self.row_prefix, self.col_prefix, self.col_suffix, self.row_suffix = "", " ", "", "\n"
        self.messages = []
        self.tool = None                # whose own PRINTAS functions: "condor_q", "condor_status"

    def table(self, ads, fold=None):
        """(heading line or None, row lines): the cells are rendered first and the
        heading printed before the rows, as HTCondor does (the columns that grow are
        as wide as their values then; a row's text may widen them further).
        ``fold(rows, ads)``: the rows of (valid, value) cells to print of those rendered
        (condor_status -compact's roll-up of a machine's slots)."""
        rendered = [[_render(col, ad) for col in self.columns] for ad in ads]
        if fold is not None:
            rendered = fold(rendered, ads)
        head = None
        if self.label_sep is None and not self.noheader and self.columns:
            head = self._headings()
        return head, [self._display(cells) for cells in rendered]

    def _headings(self):
        out = [self.row_prefix]
        last = len(self.columns) - 1
        for i, col in enumerate(self.columns):
            if i and not col.noprefix:
                out.append(self.col_prefix)
            out.append(col.heading.ljust(col.width) if col.width else col.heading)
            if i < last and not col.nosuffix:
                out.append(self.col_suffix)
        return "".join(out) + self.row_suffix

    def _display(self, cells):
        out = [self.row_prefix]
        last = len(self.columns) - 1
        for i, (col, (valid, value)) in enumerate(zip(self.columns, cells)):
            if i and not col.noprefix:
                out.append(self.col_prefix)
            out.append(_aligned(col, _text(col, valid, value)))
            if i < last and not col.nosuffix:
                out.append(self.col_suffix)
        return "".join(out) + self.row_suffix


# ---------------------------------------------------------------- reading

def _tokens(line):
    """(start, end, text, quoted) of each token: a quoted string (its quotes taken off)
    or a run of characters without blanks."""
    i, n = 0, len(line)
    while i < n:
        if line[i].isspace():
            i += 1
            continue
        if line[i] in "'\"":
            end = line.find(line[i], i + 1)
            end = n if end < 0 else end
            yield i, min(end + 1, n), line[i + 1:end], True
            i = end + 1
            continue
        start = i
        while i < n and not line[i].isspace():
            i += 1
        yield start, i, line[start:i], False


def _escapes(text):
    return text.replace("\\n", "\n").replace("\\r", "\r").replace("\\t", "\t")


def parse(text, truncate=False, tool=None):
    """A Mask from print-format ``text`` (``truncate``: a fixed WIDTH cuts longer values,
    as condor_q's masks do; condor_status's overflow unless TRUNCATE; ``tool``: whose
    own PRINTAS functions it knows besides the common ones)."""
    mask, section = Mask(), "select"
    mask.tool = tool
    for number, line in enumerate(text.splitlines(), 1):
        toks = list(_tokens(line.strip()))
        line = line.strip()
        if not toks or toks[0][2].startswith("#"):
            continue
        word = toks[0][2] if not toks[0][3] else ""
        if word == "SELECT":
            section = "select"
            _select(mask, toks[1:], number)
            continue
        if word == "SUMMARY":
            section = "summary"
            _summary(mask, toks[1:])
            continue
        if word in ("WHERE", "AND", "JOIN"):
            section = word.lower()
            toks = toks[1:]
            if not toks:
                continue
        elif word == "GROUP":
            section = "group"
            toks = toks[1:]
            if toks and toks[0][2] == "BY" and not toks[0][3]:
                toks = toks[1:]
            if not toks:
                continue
        _line(mask, section, line, toks, number, truncate)
    return mask


def _line(mask, section, line, toks, number, truncate):
    if section == "select":
        _column(mask, line, toks, number, truncate)
    elif section == "summary" and mask.summary_mask is not None:
        _column(mask.summary_mask, line, toks, number, truncate)
        mask.messages.extend(mask.summary_mask.messages)
        mask.summary_mask.messages = []
    elif section == "where":
        mask.where = line[toks[0][0]:].strip()
    elif section == "group":
        _group(mask, line, toks)


def _select(mask, toks, number):
    i = 0
    while i < len(toks):
        word = toks[i][2]
        value = toks[i + 1][2] if i + 1 < len(toks) else None
        if word == "FROM":
            if value is None:
                mask.messages.append(f"expected data set name after FROM at line {number} offset {toks[i][1]} "
                                     "in SELECT")
            else:
                mask.select_from = value
                if value == "AUTOCLUSTER":
                    mask.aggregate = "autocluster"
            i += 2
            continue
        if word in ("UNIQUE", "BARE", "NOTITLE", "NOHEADER", "NOSUMMARY", "LABEL"):
            _select_flag(mask, word)
        elif word in ("RECORDPREFIX", "RECORDSUFFIX", "FIELDPREFIX", "FIELDSUFFIX") or \
                (word == "SEPARATOR" and mask.label_sep is not None):
            if value is not None:
                _separator(mask, word, _escapes(value))
            i += 1
        else:
            mask.messages.append(f"Warning: Unknown header argument {word} for SELECT")
        i += 1


def _select_flag(mask, word):
    if word == "UNIQUE":
        mask.aggregate = "unique"
    elif word == "BARE":
        mask.noheader = mask.notitle = True
        mask.summary = False
    elif word == "LABEL":
        mask.label_sep = " = "
    else:
        setattr(mask, word.lower(), True)
        if word == "NOSUMMARY":
            mask.summary = False


def _separator(mask, word, value):
    attr = {"RECORDPREFIX": "row_prefix", "RECORDSUFFIX": "row_suffix", "FIELDPREFIX": "col_prefix",
            "FIELDSUFFIX": "col_suffix", "SEPARATOR": "label_sep"}[word]
    setattr(mask, attr, value)


def _summary(mask, toks):
    """SUMMARY [STANDARD | NONE]: a bare SUMMARY asks for a custom summary, the columns
    of the lines after it (``summary_mask``: without separators, as HTCondor's summary
    mask has none), which only condor_q prints (condor_status its standard summary)."""
    mask.summary = True
    mask.summary_mask = Mask()
    mask.summary_mask.tool = mask.tool
    mask.summary_mask.col_prefix = mask.summary_mask.row_suffix = ""
    for _s, _e, word, _q in toks:
        if word == "STANDARD":
            mask.summary, mask.summary_mask = True, None
        elif word == "NONE":
            mask.summary, mask.summary_mask = False, None
        else:
            mask.messages.append(f"Unknown argument {word} for SELECT")


def _group(mask, line, toks):
    expr_end, descending = None, False
    for start, _end, word, quoted in toks:
        if quoted or word not in ("AS", "ASCENDING", "DESCENDING"):
            continue
        expr_end = start if expr_end is None else expr_end
        descending = word == "DESCENDING" if word != "AS" else descending
    text = line[toks[0][0]:expr_end].strip() if expr_end is not None else line[toks[0][0]:].strip()
    if text and not text.startswith("#"):
        mask.group_by.append((text, descending))


def _column(mask, line, toks, number, truncate):
    """One SELECT line (HTCondor's AddAttrListRow); its expression is what comes before
    the first keyword."""
    state = {"name": None, "fmt": "%v", "wid": 0, "from_label": True, "fn": None, "opts": set(),
             "def": {"auto", "notrunc"}, "alt": 0, "alt_wide": False}
    expr_end, i = None, 0
    while i < len(toks):
        start, end, word, quoted = toks[i]
        if quoted or word not in _KEYWORDS:
            i += 1
            continue
        expr_end = start if expr_end is None else expr_end
        i = _keyword(mask, state, toks, i, number, truncate)
    attr = (line[toks[0][0]:expr_end] if expr_end is not None else line).strip()
    if not attr or attr.startswith("#"):
        return
    try:
        parse_expr(attr, old=True)
    except Exception:  # noqa: BLE001 - HTCondor warns and keeps the column
        mask.messages.append(f"attribute or expression is not valid: {attr}")
    mask.columns.append(_made(mask, attr, state, truncate))


def _keyword(mask, state, toks, i, number, truncate):
    """Apply the keyword at ``toks[i]``; the index after it and its argument."""
    word = toks[i][2]
    arg = toks[i + 1] if i + 1 < len(toks) else None
    if word in ("AS", "PRINTF", "PRINTAS", "RENDERAS", "OR", "WIDTH") and arg is None:
        what = {"AS": "column name after AS", "PRINTF": "format after PRINTF", "OR": "? or ?? after OR",
                "PRINTAS": "function name after PRINTAS", "RENDERAS": "function name after RENDERAS",
                "WIDTH": "number or AUTO after WIDTH"}[word]
        mask.messages.append(f"expected {what} at line {number} offset {toks[i][1]} in SELECT")
        return i + 1
    if word == "AS":
        state["name"] = _escapes(arg[2]) if arg[3] else arg[2]
        return i + 2
    if word == "PRINTF":
        state["fmt"] = _escapes(arg[2])
        return i + 2
    if word in ("PRINTAS", "RENDERAS"):
        _printas(mask, state, word, arg[2])
        return i + 2
    if word == "OR":
        if arg[2] and arg[2][0] in _ALT_CHARS:
            state["alt"] = _ALT_CHARS.index(arg[2][0])
            state["alt_wide"] = len(arg[2]) > 1 and arg[2][0] == arg[2][1]
        else:
            mask.messages.append(f"Unknown argument {arg[2]} for OR")
        return i + 2
    if word == "WIDTH":
        _width(state, arg[2], truncate)
        return i + 2
    flags = {"NOSUFFIX": "nosuffix", "NOPREFIX": "noprefix", "LEFT": "left", "ALWAYS": "always"}
    if word in flags:
        state["opts"].add(flags[word])
    elif word == "RIGHT":
        state["opts"].discard("left")
    elif word == "FIT":
        state["opts"].add("notrunc")
    elif word == "TRUNCATE":
        state["opts"].discard("notrunc")
        state["def"].discard("notrunc")
    else:                                   # AUTO alone
        mask.messages.append(f"{word} was unexpected at line {number} offset {toks[i][0]} in SELECT")
    return i + 1


def _printas(mask, state, word, name):
    fn = printas.lookup(name, mask.tool)
    if fn is None:
        mask.messages.append(f"Unknown argument {name} for {word}")
        return
    state["fn"] = fn
    if word == "PRINTAS" or (state["fmt"] == "%v" and fn.fmt is not None):
        state["fmt"] = fn.fmt


def _width(state, value, truncate):
    if value == "AUTO":
        state["opts"].add("auto")
        state["def"] |= {"auto", "notrunc"}
        return
    state["wid"] = _atoi(value)
    state["def"].discard("auto")
    if truncate:
        state["def"].discard("notrunc")
    state["from_label"] = False
    if state["fmt"] == "%v":
        state["fmt"] = None


def _atoi(text):
    m = re.match(r"\s*([-+]?\d+)", text)
    return int(m.group(1)) if m else 0


def _made(mask, attr, state, truncate):
    """The Column of a SELECT line's settings (HTCondor's registerFormat)."""
    opts = state["opts"] | state["def"]
    label = state["name"] if state["name"] is not None else attr
    fmt, wid = state["fmt"], state["wid"]
    col = Column(attr, label)
    if mask.label_sep is not None:
        if fmt is None:
            spec = "%" + (str(wid) if "notrunc" in opts else f"{wid}.{abs(wid)}") if wid else "%"
            fmt = spec + ("s" if state["fn"] else "v")
        fmt, wid = label + mask.label_sep + fmt, 0
    elif state["from_label"]:
        wid = -len(label)
    if mask.label_sep is None and state["fn"] is None and fmt is None and wid and truncate:
        if wid < 0:
            opts.add("left")
        fmt = "%" + ("-" if wid < 0 else "") + str(abs(wid)) + ("" if "notrunc" in opts else f".{abs(wid)}") + "v"
    col.fmt, col.fn = fmt, state["fn"]
    col.width, col.left = abs(wid), "left" in opts or wid < 0
    col.auto, col.notrunc = "auto" in opts, "notrunc" in opts
    col.noprefix, col.nosuffix, col.always = "noprefix" in opts, "nosuffix" in opts, "always" in opts
    col.alt, col.alt_wide = state["alt"], state["alt_wide"]
    info = printf_info(fmt)
    if fmt and info and not wid:
        col.width = info[1]
        col.left = col.left or "-" in info[0]
    return col


def printf_info(fmt):
    """(flags, width, kind, letter) of a printf format's first conversion; None when it
    has none (HTCondor prints such a format as it is)."""
    if not fmt:
        return None
    m = _PRINTF.search(fmt)
    if m is None or m.group(4) not in _KIND_OF_LETTER:
        return None
    return m.group(1), int(m.group(2) or 0), _KIND_OF_LETTER[m.group(4)], m.group(4)


# ---------------------------------------------------------------- rendering

def _evaluated(col, ad):
    """The value of a column's expression in ``ad`` (None when it does not parse)."""
    tree = col.tree()
    if tree is False:
        return None
    return tree.eval(adformat.full(ad))


def _render(col, ad):
    """(valid, value) of one cell (HTCondor's render)."""
    info = printf_info(col.fmt) if col.fn is None else None
    if col.fn is None and col.fmt and info is None:
        if col.auto:
            _grow(col, len(col.fmt))
        return True, col.fmt
    value = _evaluated(col, ad)
    if value is None:
        return False, UNDEFINED
    if col.fn is not None:
        valid, value = col.fn.render(value, ad)
        kind = col.fn.kind if col.fn.formats else "value"
    else:
        kind = info[2] if info else "value"
        valid, value = _typed(kind, value, col, ad)
    if valid and col.auto:
        _grow(col, _value_width(col, kind, value))
    return valid, value


def _value_width(col, kind, value):
    """The width a value asks of its column before it is printed (HTCondor's
    calc_column_width): a number as its format prints it (as written, for a
    value or string format; not at all for a PRINTAS formatter), a string its
    length."""
    if isinstance(value, str):
        return len(value)
    if type(value) not in (int, float):
        return col.width
    if kind in ("float", "int", "time", "date"):
        if col.fn is not None:       # (a function's own text is measured when it is printed)
            return col.width
        return len(_printf(col.fmt, printf_info(col.fmt), value, col))
    return len(str(value) if type(value) is int else unparse_value(value, True))


def _typed(kind, value, col, ad):
    if kind in ("int", "time", "date"):
        return _is_number(value), int(value) if _is_number(value) else 0
    if kind == "float":
        return _is_number(value), float(value) if _is_number(value) else 0.0
    if kind == "string":
        if isinstance(value, str):
            return True, value
        name = col.expr.strip()
        expr = adformat.full(ad).lookup(name) if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else None
        if expr is not None:     # an attribute that is not a string prints as written (HTCondor's %s)
            return True, expr.unparse(True)
        return False, value
    return True, value


def _is_number(value):
    return type(value) in (int, float, bool)


def _grow(col, length):
    col.width = max(col.width, length)


def _text(col, valid, value):
    """A cell's text before alignment."""
    if col.fn is not None and col.fn.formats:
        if valid or col.always:
            try:
                return col.fn.format(value)
            except (TypeError, ValueError):
                return ""
        return _alt(col)
    if not valid:
        return _alt(col)
    fmt = col.fmt
    if not fmt or fmt == "%s":
        return value if isinstance(value, str) else ""
    info = printf_info(fmt)
    if info is None:
        return fmt
    return _printf(fmt, info, value, col)


def _alt(col):
    char = _ALT_CHARS[col.alt]
    if col.alt_wide:
        width = col.width
        if width < 3:
            return char if width else ""
        return ("[" + "?" * (width - 2) + "]") if char == "?" else char * width
    return "" if char == " " else char


def _shown(value, letter):
    """A value as %v prints it (a string bare; %V quotes it) or %V."""
    if value is UNDEFINED:
        return "undefined"
    if value is ERROR:
        return "error"
    if isinstance(value, str) and letter == "v":
        return value
    return unparse_value(value) if isinstance(value, str) else unparse_value(value, True)


def _printf(fmt, info, value, col):
    """The text of ``fmt`` for a value of its conversion's kind."""
    _flags, _w, kind, letter = info
    m = _PRINTF.search(fmt)
    spec = re.sub(r"[hlLqjzt']+", "", fmt[m.start():m.end() - 1])
    try:
        if kind == "time":
            body = format_time_of(value)
        elif kind == "date":
            body = printas.format_date(int(value))
        elif kind == "int":
            body = (spec + ("x" if letter == "p" else letter)) % int(value)
        elif kind == "float":
            body = (spec + letter) % float(value)
        elif kind == "string":
            body = (spec + "s") % value
        else:
            body = (spec + "s") % _shown(value, letter)
    except (TypeError, ValueError):
        body = ""
    text = fmt[:m.start()] + body + fmt[m.end():]
    if kind in ("time", "date", "int", "float") and col.width > len(text):
        text = text.rjust(col.width)
    return text


def format_time_of(value):
    return printas.format_time(int(value))


def _aligned(col, text):
    """A cell's text in its column (HTCondor's display)."""
    if col.auto:
        _grow(col, len(text))
    if not col.width:
        return text
    if len(text) > col.width:
        return text if col.notrunc else text[:col.width]
    return text.ljust(col.width) if col.left else text.rjust(col.width)
