"""sge_share_mon: the live share tree, node by node, as the scheduler's last pass left it.

Each collection prints one record per node (rows of the published status's
``share_tree``), as Grid Engine's monitor does: the fields below, in this
order unless ``-f`` picks others (a name it does not know is passed over, as
Grid Engine's monitor passes it over; a node with no field to print prints
nothing, not even ``-l``), each followed by the delimiter (``-d``, a tab),
each node ending with ``-l`` (a newline); every collection but the last is
followed at once by ``-r`` (a newline). ``-n`` prints ``name=value``; ``-h``
prints the field names once, before the first collection, followed by ``-l``
and ``-r``. level% and total% are fractions (0 to 1). usage_time is, on a
user's node, the time the usage shown was brought up to date: the last pass,
which decays every user's usage and stamps it, as Grid Engine's scheduler
does on each pass (0 on nodes that are no user, and for a user who never
used anything). usage, cpu, mem and io are the decayed usage as of the last
pass; ``-u`` decays them on to now with sched_conf's halftime (not
halflife_decay_list), and a user's usage_time is then now, as Grid Engine's
monitor brings each user's usage up to date before it prints it. ltcpu,
ltmem and ltio are the long-term usage. ``-x`` prints leaf nodes only,
``-t`` times as ctime(3) text; node names print only those nodes.

``-c`` collections ``-i`` seconds apart (default: forever, every 15 seconds),
each number read as sscanf(3) reads an int (leading blanks and a sign, then
digits; what follows them is passed over), as Grid Engine's monitor reads
them: ``-c -1`` prints forever, ``-c 0`` (or below -1) prints nothing; ``-i``
may also hold a fraction, ``-i 0`` does not wait, and a negative interval
waits as long as the C library's sleep(3) waits for it (turned unsigned).
``-o`` opens its file anew for each collection with ``-m``'s fopen(3) mode
(``a``; ``w``: the file holds the latest collection; ``r``: nothing can be
written; a mode fopen refuses: Invalid argument), as ``ownfiles.open_own``
opens a file where others may write; ``-m`` is not looked at without ``-o``.

Options are read as getopt(3) reads them: grouped (``-xn``), a value joined
to its letter (``-c1``), and before or after the node names (until ``--``;
with POSIXLY_CORRECT set, until the first name). Each bad option (an unknown
letter, a missing value, a count or interval that is no number) is said on
standard error as it is met, then the usage, and the command exits 1, as
Grid Engine's monitor does; ``-help`` is ``-h -e -l p`` there, so an unknown
``-e``.
"""

import errno
import os
import re
import sys
import time

from gridtools.errors import UsageError, lines

FIELDS = ("curr_time", "usage_time", "node_name", "user_name", "project_name", "shares",
          "job_count", "level%", "total%", "long_target_share", "short_target_share",
          "actual_share", "usage", "cpu", "mem", "io", "ltcpu", "ltmem", "ltio")
USAGE = ("usage: sge_share_mon [-cdfhilmnorstux] [node_names ...]\n"
         "\n"
         "   -c count          collections to print (default: no end; -1 too)\n"
         "   -d delimiter      what follows each field (default: a tab)\n"
         "   -f field[,field]  the fields to print, in this order\n"
         "   -h                print the field names first\n"
         "   -i interval       seconds between collections (default: 15)\n"
         "   -l delimiter      what ends each node (default: a newline)\n"
         "   -m output_mode    fopen(3) mode of the output file (default: a)\n"
         "   -n                print each field as name=value\n"
         "   -o output_file    print to this file\n"
         "   -r delimiter      what follows each collection (default: a newline)\n"
         "   -s string_format  printf format of names and times (default: %s)\n"
         "   -t                print times as ctime(3) text\n"
         "   -u                decay the usage on to the time of printing\n"
         "   -x                print leaf nodes only\n"
         "\n")
#: letters that take a value, and the option each sets
_VALUED = {"c": "count", "d": "delim", "f": "fields", "i": "interval", "l": "node_delim",
           "m": "mode", "o": "output", "r": "record_delim", "s": "string_format"}
#: letters that take none
_FLAGS = {"h": "header", "n": "names", "t": "ctime", "u": "decayed", "x": "leaves"}
#: an int as sscanf(3) "%d" finds it at the start of a value (blanks, a sign, digits)
_INT = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")
#: an interval: such an int, or one with a fraction
_SECONDS = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+(?:\.[0-9]*)?)")
#: how far sleep(3) waits for a negative interval (an unsigned int)
_UNSIGNED = 2 ** 32


class Options:
    count = None                        # collections to print (None: no end)
    delim = "\t"
    fields = FIELDS                     # the known fields -f names, in its order
    interval = 15.0
    node_delim = "\n"
    mode = "a"
    output = None
    record_delim = "\n"
    string_format = "%s"
    header = names = ctime = decayed = leaves = False
    nodes = ()                          # node names to print (all when empty)


def parse_args(argv, prog="sge_share_mon"):
    """The options, read as Grid Engine's monitor reads them with getopt(3): the
    letters may be grouped and a value joined to its letter, and options may follow
    the node names (up to ``--``). UsageError saying every bad option, one a line,
    in the order they were met."""
    opts = Options()
    complaints = []
    found, opts.nodes = _getopt(list(argv), prog)
    for letter, value in found:
        if letter is None:
            complaints.append(value)
        elif letter in _FLAGS:
            setattr(opts, _FLAGS[letter], True)
        else:
            complaints.append(_set(opts, _VALUED[letter], value))
    complaints = [c for c in complaints if c]
    if complaints:
        raise UsageError(lines(*complaints))
    return opts


def _getopt(words, prog):
    """([(option letter, value)], node names) as getopt(3) of the GNU C library reads
    ``words``: the names are gathered from among the options unless POSIXLY_CORRECT is
    set; an unknown letter or a missing value is (None, what getopt says of it), in its
    place among the options."""
    pairs, names = [], []
    in_order = "POSIXLY_CORRECT" in os.environ
    at = 0
    while at < len(words):
        word = words[at]
        at += 1
        if word == "--":
            names += words[at:]
            break
        if not word.startswith("-") or word == "-":
            if in_order:
                names += words[at - 1:]
                break
            names.append(word)
            continue
        for place, letter in enumerate(word[1:], 2):
            if letter in _FLAGS:
                pairs.append((letter, None))
            elif letter not in _VALUED:
                pairs.append((None, f"{prog}: invalid option -- '{letter}'"))
            elif place < len(word):
                pairs.append((letter, word[place:]))
                break
            elif at < len(words):
                pairs.append((letter, words[at]))
                at += 1
            else:
                pairs.append((None, f"{prog}: option requires an argument -- '{letter}'"))
    return pairs, tuple(names)


def _set(opts, name, value):
    """Set option ``name`` from ``value``; what is wrong with it, or None."""
    if name == "count":
        found = _INT.match(value)
        if not found:
            return f'"{value[:100]}" is not a valid count'
        count = int(found.group(1))
        value = None if count == -1 else max(count, 0)
    elif name == "interval":
        found = _SECONDS.match(value)
        if not found:
            return f'"{value[:100]}" is not a valid interval'
        value = float(found.group(1))
        if value < 0:
            value = float(int(value) % _UNSIGNED)
    elif name == "fields":
        value = tuple(f for f in value.split(",") if f in FIELDS)
    setattr(opts, name, value)
    return None


def _time(opts, when):
    """A time field: seconds, or ctime(3) text with -t (0 stays 0)."""
    if opts.ctime and when:
        return _format(opts.string_format, time.ctime(when))
    return str(int(when))


def _values(row, now, since, factor, opts):
    """The fields of ``row`` from the pass at ``since``; on a user's node whose usage was
    ever brought up to date, usage_time is when it last was: ``since``, as Grid Engine's
    scheduler decays and stamps each user's usage on every pass, and with -u ``now``, as
    its monitor decays it (by ``factor``) to the time of printing and stamps it so."""
    text = {"node_name": row["path"], "user_name": row.get("user") or "",
            "project_name": row.get("project") or ""}
    values = {k: _format(opts.string_format, v) for k, v in text.items()}
    stamp = row.get("usage_time") or 0
    if stamp:
        stamp = now if opts.decayed else since
    values.update({
        "curr_time": _time(opts, now), "usage_time": _time(opts, stamp),
        "shares": str(row["shares"]), "job_count": str(row["job_count"]),
        "level%": f"{row['level']:.6f}", "total%": f"{row['total']:.6f}",
        "long_target_share": f"{row['long_target']:.6f}",
        "short_target_share": f"{row['short_target']:.6f}",
        "actual_share": f"{row['actual']:.6f}",
        "ltcpu": f"{row['ltcpu']:.6f}", "ltmem": f"{row['ltmem']:.6f}", "ltio": f"{row['ltio']:.6f}",
    })
    for name in ("usage", "cpu", "mem", "io"):
        values[name] = f"{row[name] * factor:.6f}"
    return values


def _factor(snap, now, opts):
    """What is left at ``now`` (-u) of the usage published with the last pass: decayed
    with sched_conf's halftime alone, as Grid Engine's monitor decays it (it passes no
    halflife_decay_list). One factor for cpu, mem and io alike, so the combined usage
    (their weighted sum) decays by it too, and every node's part of the tree's usage
    (actual_share) stays as it was."""
    if not opts.decayed:
        return 1.0
    from gridtools.accounting.usage import decay_factor
    halftime = snap.get("share_halftime")
    if not isinstance(halftime, (int, float)) or isinstance(halftime, bool):
        return 1.0
    elapsed = now - float(snap.get("time") or now)
    return decay_factor(float(halftime), elapsed)


def _is_leaf(rows, row):
    prefix = row["path"].rstrip("/") + "/"
    return not any(other["path"].startswith(prefix) for other in rows if other is not row)


def _format(fmt, text):
    """``text`` through a printf-style string format (a bad format leaves it as it is)."""
    try:
        return fmt % text
    except (TypeError, ValueError):
        return text


def header(opts):
    """The field names, each followed by the delimiter, then the line and record ends."""
    return "".join(f + opts.delim for f in opts.fields) + opts.node_delim + opts.record_delim


def collection(snap, opts, now):
    """The text of one collection from a published status snapshot: a line for each
    node, none for a node when there is no field to print."""
    rows = snap.get("share_tree") or []
    if opts.leaves:
        rows = [r for r in rows if _is_leaf(snap.get("share_tree"), r)]
    if opts.nodes:
        rows = [r for r in rows if r["path"] in opts.nodes]
    if not opts.fields:
        return ""
    factor = _factor(snap, now, opts)
    since = float(snap.get("time") or now)
    records = []
    for row in rows:
        values = _values(row, now, since, factor, opts)
        records.append("".join((f"{f}={values[f]}" if opts.names else values[f]) + opts.delim
                             for f in opts.fields) + opts.node_delim)
    return "".join(records)


def main(argv, prog="sge_share_mon"):
    try:
        opts = parse_args(argv, prog)
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n{USAGE}")
        return 1
    from gridtools.cli.sge import qstatus
    done = 0
    while opts.count is None or done < opts.count:
        snap = qstatus.load()
        if not snap.get("share_tree"):
            sys.stderr.write("No share tree\n")
            return 2
        done += 1
        more = opts.count is None or done < opts.count
        text = header(opts) if done == 1 and opts.header else ""
        text += collection(snap, opts, time.time()) + (opts.record_delim if more else "")
        if not _put(text, opts):
            return 1
        if more:
            time.sleep(opts.interval)
    return 0


def _put(text, opts):
    """Print one collection (the record delimiter after it when another follows, as Grid
    Engine's monitor prints it at once): to standard output, or to -o's file, opened for
    each collection with -m's fopen(3) mode as Grid Engine's monitor opens it, and as
    ``ownfiles.open_own`` opens a file where others may write (a link or a file another
    user left at its name is not written through). False, said as Grid Engine's monitor
    says it, when the file cannot be opened or written."""
    if not opts.output:
        sys.stdout.write(text)
        sys.stdout.flush()
        return True
    from gridtools.ownfiles import open_own
    try:
        flags = _open_flags(opts.mode)
        if flags is None:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        fd = open_own(opts.output, flags, 0o666)
    except OSError as exc:
        sys.stderr.write(f"can't open file {opts.output}: {exc.strerror or exc}\n")
        return False
    try:
        _write_all(fd, text.encode("utf-8", "surrogateescape"))
    except OSError:
        sys.stderr.write("write failed\n")
        return False
    finally:
        os.close(fd)
    return True


def _open_flags(mode):
    """The open(2) flags of fopen(3) ``mode`` as the GNU C library reads it: r, w or a,
    then among the next six letters + (read and write) and x (the file must be new),
    the others passed over; None for a mode it refuses (EINVAL)."""
    first = {"r": os.O_RDONLY, "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
             "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND}
    if not mode or mode[0] not in first:
        return None
    flags = first[mode[0]]
    for letter in mode[1:7]:
        if letter == "+":
            flags = (flags & ~os.O_ACCMODE) | os.O_RDWR
        elif letter == "x":
            flags |= os.O_EXCL
    return flags


def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]
