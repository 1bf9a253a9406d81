"""The values of submit options: each parser checks one option argument.

Used by the option table (``options``) that qsub, qalter, qrsh, ``#$``
lines and sge_request files share. A bad value raises ``UsageError`` with
Grid Engine's sentence for it and the exit status qsub ends with (2 for
a semantic error, 7 for a syntax error, as Grid Engine's answer codes);
the command prints it as ``qsub: <sentence>``. ``Rejected`` is a job
Grid Engine would refuse at submission ("Unable to run job: ...").

Imports stay on the standard library core: this runs on every qsub.
"""

import time

from gridtools.errors import GridError, UsageError

#: Grid Engine's answer status of a semantic and of a syntax error (qsub's exit status)
SEMANTIC, SYNTAX = 2, 7
_DIGITS = frozenset("0123456789")
#: characters a job name may not hold besides "/" (Grid Engine's object name rule for
#: job names), with the words Grid Engine uses for them
_NAME_CHARS = {"\n": "Return", "\t": "Tab", "\r": "Carriage return", ":": "Colon", "@": "At",
               "\\": "Backslash", "*": "Asterisk", "?": "Questionmark"}
#: letters of a checkpoint occasion (-c): m(inimum interval), s(hutdown), x (suspend),
#: n(o checkpoint), r (auto reschedule)
CKPT_LETTERS = frozenset("msxnr")
#: mail events of -m
MAIL_LETTERS = frozenset("beasn")


class Rejected(GridError):
    """The job was refused: printed as 'Unable to run job: ...' then 'Exiting.'"""


def fail(message, code=SEMANTIC):
    """The UsageError of one bad option value."""
    return UsageError(message, exit_code=code)


def is_uint(text):
    """True for a non-empty string of ASCII digits."""
    return bool(text) and all(c in _DIGITS for c in text)


def must_have(opt, text):
    """Refuse an empty argument: ``-P option must have argument``."""
    if text == "":
        raise fail(f"{opt} option must have argument")
    return text


def parse_yes_no(opt, text):
    low = text.lower()
    if low in ("y", "yes"):
        return True
    if low in ("n", "no"):
        return False
    raise fail(f"invalid option argument \"{opt} {text}\"")


def parse_unsigned(text, message):
    """A non-negative integer; anything else raises ``message``."""
    if not is_uint(text):
        raise fail(message)
    return int(text)


def parse_priority(text):
    body = text[1:] if text[:1] in ("-", "+") else text
    if not is_uint(body) or not -1023 <= int(text) <= 1024:
        raise fail(f'invalid priority "{text}".  Must be an integer from -1023 to 1024', SYNTAX)
    return int(text)


def parse_task_concurrency(text):
    body = text[1:] if text[:1] in ("-", "+") else text
    if not is_uint(body) or int(text) < 0:
        raise fail(f"invalid task concurrency number {text}. "
                   "Must be an integer greater or equal to 0.", SYNTAX)
    return int(text)


def parse_datetime(text, now=None, opt="-a"):
    """Grid Engine's ``[[CC]YY]MMDDhhmm[.SS]`` as epoch seconds (local time): a two-digit
    year below 70 is 20YY, else 19YY, as Grid Engine reads it. A bad one is refused with
    Grid Engine's sentence, "ERROR! " included, after the line that says what is wrong
    (written to standard error first, as Grid Engine's parser writes it)."""
    body, _, secs = text.partition(".")
    why = None
    if secs and len(secs) != 2:
        why = "Invalid format of seconds field."
    elif len(body) not in (8, 10, 12):
        why = "Invalid format of date/hour-minute field."
    elif is_uint(body) and (not secs or is_uint(secs)):
        lt = time.localtime(now if now is not None else time.time())
        year = lt.tm_year
        if len(body) == 12:
            year, body = int(body[:4]), body[4:]
        elif len(body) == 10:
            year, body = int(body[:2]), body[2:]
            year += 2000 if year < 70 else 1900
        month, day, hour, minute = (int(body[i:i + 2]) for i in range(0, 8, 2))
        sec = int(secs) if secs else 0
        why = "Invalid month specification." if not 1 <= month <= 12 else \
            "Invalid day specification." if not 1 <= day <= 31 else \
            "Invalid hour specification." if hour > 23 else \
            "Invalid minute specification." if minute > 59 else \
            "Invalid seconds specification." if sec > 59 else None
        if why is None:
            try:
                moment = time.mktime((year, month, day, hour, minute, sec, 0, 0, -1)) if year <= 9999 else -1
            except (OverflowError, ValueError):
                moment = -1
            if moment < 0:
                why = "Couldn't generate date from input. Perhaps a date before 1970 was specified."
            elif year == 9999:          # (the last moment a job may name: its last day but one)
                from gridtools.formats.jobcheck import MAX_MOMENT
                if moment <= MAX_MOMENT:
                    return moment
            else:
                return moment
    if why is not None:
        import sys
        sys.stderr.write(f"\n{why}\n")
    raise fail(f'ERROR! Wrong date/time format "{text}" specified to {opt} option')


def _range_number(text, whole):
    if not is_uint(text):
        raise fail(f'Numerical value invalid: the initial portion of string "{whole}" '
                   "contains no decimal number", SYNTAX)
    return int(text)


def parse_task_range(text):
    """``n[-m[:s]]`` as [first, last, step]; a reversed range is swapped as Grid Engine does."""
    if "," in text:
        raise fail("-t option only allows one range specification", SYNTAX)
    body, colon, step = text.partition(":")
    first, dash, last = body.partition("-")
    a = _range_number(first, text)
    b = _range_number(last, text) if dash else a
    s = _range_number(step, text) if colon else 1
    if a > b:
        a, b = b, a
    if a < 1 or s < 1:
        raise fail(f'invalid task id range "{text}": task ids and step must be positive', SYNTAX)
    b = a + (b - a) // s * s
    return [a, b, s]


def parse_slot_range(text, what="job"):
    """A PE slot range ``n``, ``n-m``, ``-m``, ``n-`` as [min, max] (max 0 = unlimited);
    ``what``: the object a refusal names ("job", "advance_reservation")."""
    lo, dash, hi = text.partition("-")
    a = _range_number(lo, text) if lo else 1
    b = (_range_number(hi, text) if hi else None) if dash else a
    if b is not None and a > b:
        a, b = b, a
    if a < 1 or b == 0:
        raise Rejected(f'"{what}" rejected: pe range must be greater than zero')
    return [a, b or 0]


def parse_ckpt_when(text):
    """-c: occasion letters (``msxnr``) or a checkpoint interval (a time value)."""
    if text[:1].isdigit() or text[:1] == ":":
        from gridtools.errors import InputError
        from gridtools.formats.values import parse_time
        try:
            seconds = parse_time(text)
        except InputError:
            seconds = 0
        if not seconds:
            raise fail("-c argument invalid")
        return text
    if not text or any(c not in CKPT_LETTERS for c in text):
        raise fail("-c specifier invalid")
    return text


def parse_job_name(text):
    """-N: refused as Grid Engine refuses a job name."""
    if "/" in text:
        raise fail("argument to -N option must not contain /")
    if text == "":
        raise fail("empty string argument to -N option invalid")
    for char, word in _NAME_CHARS.items():
        if char in text:
            shown = f" ('{char}')" if char.isprintable() else ""
            raise fail(f"{word}{shown} not allowed in objectname", SYNTAX)
    if not (text.isascii() and text.isprintable()) or " " in text:
        # the first byte that is not a graphic ASCII character, as Grid Engine names it
        odd = next(b for b in text.encode("utf-8", "surrogateescape") if not 0x21 <= b <= 0x7e)
        raise fail(f"Non-graphic character (hex {odd:x}) not allowed in objectname", SYNTAX)
    if text[0] in _DIGITS:
        raise fail(f'denied: "{text}" is not a valid object name (cannot start with a digit)')
    if text.upper() in ("NONE", "ALL", "TEMPLATE"):
        raise fail(f'Keyword ("{text.upper()}") not allowed as objectname', SYNTAX)
    return text


#: the types a -binding request may name before its strategy
BINDING_TYPES = ("env", "pe", "set")


def _socket_core(text):
    socket, comma, core = text.partition(",")
    return comma and is_uint(socket) and is_uint(core)


def parse_binding(words):
    """-binding ``[env|pe|set] linear[:n[:socket,core]]``, ``striding:n:step[:socket,core]``
    or ``explicit:socket,core[:socket,core...]``: the words joined by a blank."""
    strategy = words[-1]
    name, _, rest = strategy.partition(":")
    parts = rest.split(":") if rest else []
    if name == "linear":
        ok = len(parts) <= 2 and all(is_uint(p) for p in parts[:1]) and all(_socket_core(p) for p in parts[1:])
    elif name == "striding":
        ok = len(parts) in (2, 3) and is_uint(parts[0]) and is_uint(parts[1]) \
            and all(_socket_core(p) for p in parts[2:])
    elif name == "explicit":
        ok = bool(parts) and all(_socket_core(p) for p in parts)
    else:
        ok = False
    if not ok:
        raise fail(f'-binding option contains errors: "{strategy}" is not linear[:n[:socket,core]], '
                   "striding:n:step[:socket,core] or explicit:socket,core[:...]")
    return " ".join(words)


def parse_mail_options(text):
    """-m's letters, each one of ``MAIL_LETTERS`` (no commas); ``n`` among them
    excludes all the others (sge_parse_mail_options ORs the bits, and NO_MAIL clears them)."""
    if not text or any(c not in MAIL_LETTERS for c in text):
        raise fail(f'Wrong mail options list format "{text}" specified to -m option')
    return "" if "n" in text else text


def parse_path_list(text, opt="-o"):
    """``[host:]path[,[host:]path...]`` as [[host or None, path], ...]."""
    what = {"-o": "stdout path list", "-S": "shell list"}.get(opt, "path list")
    result = []
    for item in text.split(","):
        host, colon, path = item.partition(":")
        if colon and "/" not in host:
            if not host or not path:
                result = None
                break
            result.append([host, path])
        elif item:
            result.append([None, item])
        else:
            result = None
            break
    if not result or any("\0" in p for _, p in result):
        raise fail(f'Wrong {what} format "{text}" specified to {opt} option')
    return result


def parse_resource_list(text):
    """``name[=value],...`` as an ordered dict (name -> value text or "TRUE")."""
    from gridtools.cli.sge.tokens import split_list
    result = {}
    items = split_list(text)
    for item in items:
        name, eq, value = item.partition("=")
        if not name or (eq and value == "") or "=" in value:
            items = None
            break
        result[name] = value if eq else "TRUE"
    if not items:
        raise fail(f'Wrong resource list format "{text}" specified to -l option')
    return result


def parse_env_list(text, env):
    """``-v`` list: ``NAME=value`` or ``NAME`` (taken from the submit environment)."""
    result = {}
    for item in text.split(","):
        name, eq, value = item.partition("=")
        if not name or "\0" in item:
            raise fail(f'Wrong variable list format -v "{text}" or environment variable not set')
        result[name] = value if eq else env.get(name, "")
    return result


def parse_context(text, opt):
    """-ac/-sc ``name[=value],...`` and -dc ``name,...`` as [(name, value), ...]."""
    from gridtools.cli.sge.tokens import split_list
    items = []
    for item in split_list(text):
        name, eq, value = item.partition("=")
        if not name or (eq and opt == "-dc"):
            items = []
            break
        items.append((name, value))
    if not items:
        raise fail(f'Wrong context list format {opt} "{text}"')
    return items


def parse_mail_list(text):
    """-M's ``address[,address...]``: split on commas only (an address may hold blanks, as
    sge_mailrec reads it), without repeats."""
    names = list(dict.fromkeys(part for part in text.split(",") if part))
    if not names:
        raise fail(f'Wrong mail list format "{text}" specified to -M option')
    return names


def parse_names(text, message):
    """A non-empty comma- or blank-separated list of names (queues, jobs, mail addresses)."""
    from gridtools.cli.sge.tokens import split_list
    names = split_list(text)
    if not names:
        raise fail(message)
    return names
