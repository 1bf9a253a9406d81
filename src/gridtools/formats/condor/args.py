"""Job arguments in their two submit syntaxes (the environment's syntax, which quotes
as the new one does, is ``argsenv``'s).

The old syntax (a value not wrapped in double quotes) splits on white space;
``\\"`` is a literal double quote and a bare ``"`` is an error. The new syntax
is wrapped in double quotes: white space separates arguments, single quotes
group (``''`` inside them is one single quote) and ``""`` is one double quote.
Old-syntax arguments go into the job's ``Args`` attribute, new-syntax ones
into ``Arguments`` (the "V2" form, where each run of blanks or single quotes
inside an argument is single-quoted).

Most submit descriptions give arguments, so condor_submit loads this module
with the job ad's attributes (``jobattrs``), at start-up.
"""

from gridtools.errors import InputError, lines

_BLANKS = " \t\r\n"


def is_new_syntax(value):
    """True when a value is in the new (double-quoted) syntax."""
    value = value.strip()
    return len(value) >= 2 and value.startswith('"') and value.endswith('"')


def split_old_args(value):
    """Arguments from the old syntax; InputError on a bare double quote."""
    args, current, pending = [], [], False
    i = 0
    while i < len(value):
        ch = value[i]
        if ch == "\\" and value[i + 1:i + 2] == '"':
            current.append('"')
            pending, i = True, i + 2
            continue
        if ch == '"':
            raise InputError(lines(f"ERROR: Found illegal unescaped double-quote: {value[i:]}",
                                   f"The full arguments you specified were: {value}"))
        if ch in _BLANKS:
            if pending:
                args.append("".join(current))
            current, pending = [], False
        else:
            current.append(ch)
            pending = True
        i += 1
    if pending:
        args.append("".join(current))
    return args


def split_new(value, what="arguments"):
    """Items of a new-syntax value (the text between the outer quotes). A double quote
    inside that is not doubled ends the value where HTCondor's reading ends it, single
    quotes or not: what follows it is refused in HTCondor's words."""
    inner = value.strip()[1:-1]
    _check_quotes(value.strip(), inner, what)
    if '"' not in inner:
        return _split_runs(inner, value, what)
    items, current, pending, i = [], [], False, 0
    while i < len(inner):
        ch = inner[i]
        if ch == '"':
            if inner[i + 1:i + 2] != '"':
                raise InputError(f"Found illegal unescaped double-quote in {what}: {value}")
            current.append('"')
            pending, i = True, i + 2
        elif ch == "'":
            i = _quoted(inner, i + 1, current, value, what, i)
            pending = True
        elif ch in _BLANKS:
            if pending:
                items.append("".join(current))
            current, pending, i = [], False, i + 1
        else:
            current.append(ch)
            pending, i = True, i + 1
    if pending:
        items.append("".join(current))
    return items


#: the blanks that separate items, each made a space (``_split_runs``)
_TO_SPACE = str.maketrans("\t\r\n", "   ")


def _split_runs(inner, value, what):
    """``split_new``'s items of an ``inner`` text without double quotes, read a run at a
    time (the blanks between single-quoted sections, the text inside each) where
    ``split_new`` reads a character at a time: the same items."""
    items, current, pending, i, end = [], [], False, 0, len(inner)
    while i < end:
        j = inner.find("'", i)
        if j < 0:
            j = end
        if j > i:
            words = inner[i:j].translate(_TO_SPACE).split(" ")
            current.append(words[0])
            if len(words) > 1:
                if pending or words[0]:
                    items.append("".join(current))
                items.extend(word for word in words[1:-1] if word)
                current = [words[-1]]
                pending = bool(words[-1])
            elif words[0]:
                pending = True
        if j == end:
            break
        i = j + 1                           # a single-quoted section: '' inside is one quote
        while True:
            k = inner.find("'", i)
            if k < 0:
                raise _unbalanced(inner, j, value, what)
            current.append(inner[i:k])
            if inner[k + 1:k + 2] != "'":
                break
            current.append("'")
            i = k + 2
        i, pending = k + 1, True
    if pending:
        items.append("".join(current))
    return items


def _check_quotes(value, inner, what):
    i = 0
    while True:
        i = inner.find('"', i)
        if i < 0:
            return
        if inner[i + 1:i + 2] != '"':
            raise _trailing(value, value[i + 1:], what)
        i += 2


def _shown(value, what):
    return f"The full arguments you specified were: {value}" if what == "arguments" \
        else f"The environment you specified was: '{value}'"


def _trailing(value, rest, what):
    """HTCondor's refusal of a new-syntax value whose closing quote ``rest`` starts at
    has more after it."""
    return InputError(lines("ERROR: Unexpected characters following double-quote.  Did you forget to "
                            "escape the double-quote by repeating it?  Here is the quote and trailing "
                            f"characters: {rest}", "", _shown(value, what)))


def _check_opened(value, what):
    """A value that starts with a double quote is in the new syntax, as HTCondor reads
    it: one that does not end with its closing quote is refused in its words (text after
    that quote, or no closing quote)."""
    text = value.strip()
    if not text.startswith('"') or is_new_syntax(text):
        return
    i = 1
    while True:
        j = text.find('"', i)
        if j < 0:
            raise InputError(lines("ERROR: Unterminated double-quote.", _shown(value, what)))
        if text[j + 1:j + 2] != '"':
            raise _trailing(value, text[j:], what)
        i = j + 2


def _quoted(inner, i, current, value, what, start):
    """Consume a single-quoted section starting after its quote (at ``start``); return
    the index after its closing quote."""
    while i < len(inner):
        ch = inner[i]
        if ch == "'":
            if inner[i + 1:i + 2] == "'":
                current.append("'")
                i += 2
                continue
            return i + 1
        if ch == '"' and inner[i + 1:i + 2] == '"':
            current.append('"')
            i += 2
            continue
        current.append(ch)
        i += 1
    raise _unbalanced(inner, start, value, what)


def _unbalanced(inner, start, value, what):
    """HTCondor's refusal of a single quote (at ``inner[start]``) that is never closed:
    the text from it on (a doubled double quote read as one), then the whole value."""
    rest = inner[start:].replace('""', '"')
    return InputError(lines(f"ERROR: Unbalanced quote starting here: {rest}", _shown(value, what)))


def quote_v2(item):
    """One argument in the V2 form: blanks and single quotes go inside
    single quotes (a single quote doubled), an empty argument is ``''``."""
    if item == "":
        return "''"
    if "'" not in item:                 # each run of blanks between quotes, in one pass
        quoted = item.replace(" ", "' '").replace("\t", "'\t'").replace("\r", "'\r'").replace("\n", "'\n'")
        return quoted.replace("''", "") if len(quoted) != len(item) else item
    out = []
    for ch in item:
        if ch in _BLANKS or ch == "'":
            if out and out[-1] == "'":
                out.pop()
            else:
                out.append("'")
            out.append("''" if ch == "'" else ch)
            out.append("'")
        else:
            out.append(ch)
    return "".join(out)


#: the items of the last texts join_v2 made (a few, by text): split_v2_args gives them back
#: without reading the text again (a submission reads back the arguments it wrote)
_JOINED = {}


def join_v2(items):
    items = tuple(items)
    text = " ".join(quote_v2(item) for item in items)
    if len(_JOINED) >= 8:
        _JOINED.clear()
    _JOINED[text] = items
    return text


def join_v1(items):
    return " ".join(items)


def parse_arguments(value):
    """(attribute name, value) for the job ad from a submit ``arguments``."""
    _check_opened(value, "arguments")
    if is_new_syntax(value):
        return "Arguments", join_v2(split_new(value))
    return "Args", join_v1(split_old_args(value))


def split_v2_args(text):
    """Arguments from a V2 attribute value (inverse of ``join_v2``: the items of a text it
    made lately, as they were)."""
    known = _JOINED.get(text)
    if known is not None:
        return list(known)
    return split_new('"' + text.replace('"', '""') + '"')
