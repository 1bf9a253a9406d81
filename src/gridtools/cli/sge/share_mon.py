"""sge_share_mon: the live share tree, node by node, as the scheduler's last pass left it.

Each collection prints one record per node (rows of the published status's
``share_tree``): the fields below, in this order unless ``-f`` picks others,
tab separated (``-d``), one node per line (``-l``), collections separated by
a blank line (``-r``). ``-n`` prints ``name=value``, ``-h`` a header line,
``-u`` decayed usage instead of long-term usage in the usage columns, ``-x``
leaf nodes only, ``-t`` times as ctime(3) text; ``-c`` collections ``-i``
seconds apart (default: forever, every 15 seconds).
"""

import sys
import time

from gridtools.errors import UsageError

FIELDS = ("curr_time", "usage_time", "node_name", "user_name", "project_name", "shares",
          "job_count", "level%", "total%", "long_target_share", "short_target_share",
          "actual_share", "usage", "cpu", "mem", "io", "ltcpu", "ltmem", "ltio")
USAGE = ("usage: sge_share_mon [-c count] [-d delimiter] [-f field,field...] [-h] [-i interval]\n"
         "                     [-l delimiter] [-m output_mode] [-n] [-o output_file] [-r delimiter]\n"
         "                     [-s string_format] [-t] [-u] [-x]\n")
_VALUED = {"-c": "count", "-d": "delim", "-f": "fields", "-i": "interval", "-l": "node_delim",
           "-m": "mode", "-o": "output", "-r": "record_delim", "-s": "string_format"}
_FLAGS = {"-h": "header", "-n": "names", "-t": "ctime", "-u": "decayed", "-x": "leaves"}


class Options:
    count = None
    delim = "\t"
    fields = FIELDS
    interval = 15.0
    node_delim = "\n"
    mode = "w"
    output = None
    record_delim = "\n"
    string_format = "%s"
    header = names = ctime = decayed = leaves = False


def parse_args(argv):
    opts = Options()
    words = list(argv)
    while words:
        word = words.pop(0)
        if word in _FLAGS:
            setattr(opts, _FLAGS[word], True)
        elif word in _VALUED:
            if not words:
                raise UsageError(f"option {word} needs an argument")
            _set(opts, _VALUED[word], words.pop(0), word)
        elif word == "-help":
            sys.stdout.write(USAGE)
            raise SystemExit(0)
        else:
            raise UsageError(f'invalid option "{word}"')
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


def _values(row, now, published, opts):
    when = time.ctime(now) if opts.ctime else str(int(now))
    stamp = time.ctime(published) if opts.ctime else str(int(published))
    usage = ("cpu", "mem", "io") if opts.decayed else ("ltcpu", "ltmem", "ltio")
    return {
        "curr_time": when, "usage_time": stamp, "node_name": row["path"],
        "user_name": row.get("user") or "", "project_name": row.get("project") or "",
        "shares": str(row["shares"]), "job_count": str(row["job_count"]),
        "level%": f"{row['level'] * 100:.2f}", "total%": f"{row['total'] * 100:.2f}",
        "long_target_share": f"{row['long_target']:.6f}",
        "short_target_share": f"{row['short_target']:.6f}",
        "actual_share": f"{row['actual']:.6f}", "usage": f"{row['usage']:.6f}",
        "cpu": f"{row[usage[0]]:.6f}", "mem": f"{row[usage[1]]:.6f}", "io": f"{row[usage[2]]:.6f}",
        "ltcpu": f"{row['ltcpu']:.6f}", "ltmem": f"{row['ltmem']:.6f}", "ltio": f"{row['ltio']:.6f}",
    }


def _is_leaf(rows, row):
    prefix = row["path"].rstrip("/") + "/"
    return not any(other["path"].startswith(prefix) for other in rows if other is not row)


def _format(fmt, text):
    """``text`` through a printf-style string format (a bad format leaves it as it is)."""
    try:
        return fmt % text
    except (TypeError, ValueError):
        return text


def collection(snap, opts, now):
    """The text of one collection from a published status snapshot."""
    rows = snap.get("share_tree") or []
    if opts.leaves:
        rows = [r for r in rows if _is_leaf(snap.get("share_tree"), r)]
    lines = []
    if opts.header and not opts.names:
        lines.append(opts.delim.join(opts.fields))
    for row in rows:
        values = _values(row, now, snap.get("time") or now, opts)
        items = [(f, _format(opts.string_format, values[f])) for f in opts.fields]
        lines.append(opts.delim.join(f"{f}={v}" if opts.names else v for f, v in items))
    return opts.node_delim.join(lines) + opts.node_delim


def main(argv, prog="sge_share_mon"):
    from gridtools.cli.sge import qstatus
    try:
        opts = parse_args(argv)
    except UsageError as exc:
        sys.stderr.write(f"{prog}: {exc}\n{USAGE}")
        return 2
    out = sys.stdout
    if opts.output:
        try:
            out = open(opts.output, opts.mode, encoding="utf-8")
        except OSError as exc:
            sys.stderr.write(f"{prog}: cannot open {opts.output}: {exc.strerror}\n")
            return 1
    done = 0
    while opts.count is None or done < opts.count:
        snap = qstatus.load()
        if not snap.get("share_tree"):
            sys.stderr.write(f"{prog}: no share tree\n")
            return 1
        if done:
            out.write(opts.record_delim)
        out.write(collection(snap, opts, time.time()))
        out.flush()
        done += 1
        if opts.count is None or done < opts.count:
            time.sleep(opts.interval)
    return 0
