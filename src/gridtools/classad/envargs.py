"""Argument and environment strings: argsToList(), listToArgs(),
envV1ToV2() and mergeEnvironment(). Registered in ``functions.FUNCTIONS``.

The new (V2) syntax separates words with white space; a single-quoted part
keeps white space, and inside it two single quotes stand for one. The old
(V1) environment syntax separates ``name=value`` entries with semicolons.
Words are written back in V2 syntax: each run of white space and single
quotes is put in single quotes (the quotes doubled), an empty word is ``''``.
"""

from gridtools.classad.functions import builtin, exceptional
from gridtools.classad.budget import LOOP_CHARS, MAX_STRING, built, charge
from gridtools.classad.values import ERROR, UNDEFINED

MANY = 1 << 30


def quote_word(word):
    """A word in V2 syntax: each run of white space and single quotes in single quotes,
    the quotes doubled."""
    if not word:
        return "''"
    charge(len(word) // LOOP_CHARS)
    out, run = [], []
    for ch in word:
        if ch == "'" or ch.isspace():
            run.append("''" if ch == "'" else ch)
            continue
        if run:
            out.append("'" + "".join(run) + "'")
            run = []
        out.append(ch)
    if run:
        out.append("'" + "".join(run) + "'")
    return "".join(out)


def split_words(text):
    """The words of a V2 string, or None when a quote is not closed."""
    charge(len(text) // LOOP_CHARS)
    words, current, in_word, i, n = [], [], False, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "'":
            end = i + 1
            while True:
                end = text.find("'", end)
                if end < 0:
                    return None
                if text[end + 1:end + 2] != "'":
                    break
                end += 2
            current.append(text[i + 1:end].replace("''", "'"))
            in_word, i = True, end + 1
        elif ch.isspace():
            if in_word:
                words.append("".join(current))
                current, in_word = [], False
            i += 1
        else:
            current.append(ch)
            in_word, i = True, i + 1
    if in_word:
        words.append("".join(current))
    return words


@builtin("argsToList")
def fn_args_to_list(text):
    if type(text) is not str:
        return ERROR
    words = split_words(text)
    return ERROR if words is None else words


@builtin("listToArgs")
def fn_list_to_args(items):
    if type(items) is not list or any(type(item) is not str for item in items):
        return ERROR
    if sum(len(item) for item in items) > MAX_STRING:
        return ERROR
    return built(" ".join(quote_word(item) for item in items))


@builtin("envV1ToV2")
def fn_env_v1_to_v2(text):
    if text is UNDEFINED:
        return UNDEFINED
    if type(text) is not str:
        return ERROR
    entries = [entry for entry in text.split(";") if entry]
    if any("=" not in entry or not entry.partition("=")[0].strip() for entry in entries):
        return ERROR                    # (an entry without a name too, as HTCondor)
    return built(" ".join(quote_word(entry) for entry in entries))


@builtin("mergeEnvironment", args=(0, MANY))
def fn_merge_environment(*texts):
    bad = exceptional(*texts)
    if bad is ERROR:
        return ERROR
    if sum(len(text) for text in texts if type(text) is str) > MAX_STRING:
        return ERROR
    merged = {}
    for text in texts:
        if text is UNDEFINED:
            continue
        if type(text) is not str:
            return ERROR
        words = split_words(text)
        if words is None or any("=" not in word for word in words):
            return ERROR
        for word in words:
            name, _, value = word.partition("=")
            merged[name] = value
    return built(" ".join(quote_word(f"{name}={merged[name]}") for name in sorted(merged)))


@builtin("userMap", args=(2, 4))
def fn_user_map(name, key, preferred=None, default=UNDEFINED):
    """The value of ``key`` in the schedd's user map ``name`` (``formats.condor.usermaps``):
    the whole list it maps to; given ``preferred``, that item of the list when it is one
    (in any case), else its first; UNDEFINED (the 4-argument form: ``default``) when
    the map does not hold ``key`` or is not configured."""
    if type(name) is not str or type(key) is not str:
        return ERROR if name is ERROR or key is ERROR else default
    from gridtools.formats.condor.usermaps import mapping
    found = mapping(name, key)
    if found is None:
        return default
    if preferred is None:
        return found
    items = [item for item in found.split(",") if item]
    chosen = next((item for item in items if type(preferred) is str and item.lower() == preferred.lower()),
                  items[0] if items else None)
    return default if chosen is None else chosen
