"""sge_share_mon: the live share tree, node by node, as the scheduler's last pass left it.

Each collection prints one record per node (rows of the published status's
``share_tree``), as Grid Engine's monitor does: the fields below, in this
order unless ``-f`` picks others, each followed by the delimiter (``-d``,
a tab), each node ending with ``-l`` (a newline); every collection but the
last is followed at once by ``-r`` (a newline). ``-n`` prints
``name=value``; ``-h`` prints the field names once, before the first
collection, followed by ``-l`` and ``-r``. level% and total% are fractions
(0 to 1). usage_time is when a user's usage was last brought up to date (0
on nodes that are no user). usage, cpu, mem and io are the decayed usage as
of the last pass; ``-u`` decays them on to now with sched_conf's halftime
(not halflife_decay_list), and a user's usage_time is then now, as Grid
Engine's monitor brings each user's usage up to date before it prints it.
ltcpu, ltmem and ltio are the long-term usage. ``-x`` prints leaf nodes
only, ``-t`` times as ctime(3) text; node names print only those nodes;
``-c`` collections ``-i`` seconds apart (default: forever, every 15
seconds). ``-o`` opens its file anew for each collection, with ``-m``'s
mode (``a``; with ``w`` the file holds the latest collection), as
``ownfiles.open_text`` opens a file where others may write. Options are
read as getopt(3) reads them: grouped (``-xn``), a value joined to its
letter (``-c1``), and before or after the node names (until ``--``).
"""

import getopt
import sys
import time

from gridtools.errors import UsageError

FIELDS = ("curr_time", "usage_time", "node_name", "user_name", "project_name", "shares",
          "job_count", "level%", "total%", "long_target_share", "short_target_share",
          "actual_share", "usage", "cpu", "mem", "io", "ltcpu", "ltmem", "ltio")
USAGE = ("usage: sge_share_mon [-c count] [-d delimiter] [-f field,field...] [-h] [-i interval]\n"
         "                     [-l delimiter] [-m output_mode] [-n] [-o output_file] [-r delimiter]\n"
         "                     [-s string_format] [-t] [-u] [-x] [node_names ...]\n")
_VALUED = {"-c": "count", "-d": "delim", "-f": "fields", "-i": "interval", "-l": "node_delim",
           "-m": "mode", "-o": "output", "-r": "record_delim", "-s": "string_format"}
_FLAGS = {"-h": "header", "-n": "names", "-t": "ctime", "-u": "decayed", "-x": "leaves"}
#: the options as getopt(3) is given them (a colon: the letter takes a value)
_GETOPT = "".join(k[1] + ":" for k in _VALUED) + "".join(k[1] for k in _FLAGS)


class Options:
    count = None
    delim = "\t"
    fields = FIELDS
    interval = 15.0
    node_delim = "\n"
    mode = "a"
    output = None
    record_delim = "\n"
    string_format = "%s"
    header = names = ctime = decayed = leaves = False
    nodes = ()                          # node names to print (all when empty)


def parse_args(argv):
    """The options, read as Grid Engine's monitor reads them with getopt(3): the
    letters may be grouped and a value joined to its letter, and options may follow
    the node names (up to ``--``)."""
    opts = Options()
    words = list(argv)
    if "-help" in words[:words.index("--") if "--" in words else len(words)]:
        sys.stdout.write(USAGE)
        raise SystemExit(0)
    try:
        pairs, opts.nodes = getopt.gnu_getopt(words, _GETOPT)
    except getopt.GetoptError as exc:
        if "requires argument" in exc.msg:
            raise UsageError(f"option -{exc.opt} needs an argument") from None
        raise UsageError(f'invalid option "-{exc.opt}"') from None
    for word, value in pairs:
        if word in _FLAGS:
            setattr(opts, _FLAGS[word], True)
        else:
            _set(opts, _VALUED[word], value, word)
    opts.nodes = tuple(opts.nodes)
    return opts


def _set(opts, name, value, word):
    if name == "count":
        if not value.isdigit() or int(value) < 1:
            raise UsageError(f'invalid count "{value}" for {word}')
        value = int(value)
    elif name == "interval":
        try:
            value = float(value)
        except ValueError:
            raise UsageError(f'invalid interval "{value}" for {word}') from None
        if value <= 0:
            raise UsageError(f'invalid interval "{value}" for {word}')
    elif name == "fields":
        value = tuple(f.strip() for f in value.split(",") if f.strip())
        unknown = [f for f in value if f not in FIELDS]
        if unknown or not value:
            raise UsageError(f'unknown field "{unknown[0] if unknown else value}"; fields are '
                             + ", ".join(FIELDS))
    elif name == "mode" and value not in ("w", "a"):
        raise UsageError(f'invalid output mode "{value}" (w or a)')
    setattr(opts, name, value)


def _time(opts, when):
    """A time field: seconds, or ctime(3) text with -t (0 stays 0)."""
    if opts.ctime and when:
        return _format(opts.string_format, time.ctime(when))
    return str(int(when))


def _values(row, now, factor, opts):
    """The fields of ``row``; with -u its usage decayed on by ``factor`` and, on a user's
    node whose usage was ever brought up to date, usage_time ``now``: Grid Engine's monitor
    decays each user's usage to the time of printing and stamps it with that time."""
    text = {"node_name": row["path"], "user_name": row.get("user") or "",
            "project_name": row.get("project") or ""}
    values = {k: _format(opts.string_format, v) for k, v in text.items()}
    stamp = row.get("usage_time") or 0
    if opts.decayed and stamp:
        stamp = now
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
    """The text of one collection from a published status snapshot."""
    rows = snap.get("share_tree") or []
    if opts.leaves:
        rows = [r for r in rows if _is_leaf(snap.get("share_tree"), r)]
    if opts.nodes:
        rows = [r for r in rows if r["path"] in opts.nodes]
    factor = _factor(snap, now, opts)
    lines = []
    for row in rows:
        values = _values(row, now, factor, opts)
        lines.append("".join((f"{f}={values[f]}" if opts.names else values[f]) + opts.delim
                             for f in opts.fields) + opts.node_delim)
    return "".join(lines)


def main(argv, prog="sge_share_mon"):
    from gridtools.cli.sge import qstatus
    try:
        opts = parse_args(argv)
    except UsageError as exc:
        sys.stderr.write(f"{prog}: {exc}\n{USAGE}")
        return 2
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
    each collection with -m's mode as Grid Engine's monitor opens it, and as
    ``ownfiles.open_text`` opens a file where others may write (a link or a file another
    user left at its name is not written through). False, said as Grid Engine's monitor
    says it, when the file cannot be opened."""
    if not opts.output:
        sys.stdout.write(text)
        sys.stdout.flush()
        return True
    from gridtools.ownfiles import open_text
    try:
        with open_text(opts.output, opts.mode, 0o666) as out:
            out.write(text)
    except OSError as exc:
        sys.stderr.write(f"can't open file {opts.output}: {exc.strerror or exc}\n")
        return False
    return True
