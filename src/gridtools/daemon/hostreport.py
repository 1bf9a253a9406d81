"""Load reports of execution daemons (``gridtools execd --host NAME``).

An execution daemon samples the load of the machine it runs on (``exec.load``)
every ``load_report_time`` of its host's configuration (sge_conf(5)) and
writes it to ``spool/execd/NAME/load``: the time of the sample and its values,
as JSON. The dispatcher takes a host's load values from its report, so that
each machine of a cluster shows its own load. A host whose execution daemon
holds its lock but has reported before and not for longer than
``max_unheard`` counts as unknown, like one whose daemon went away.
"""

import json
import time

from gridtools.errors import GridError
from gridtools.formats import values
from gridtools.spool import files

#: the report's file in the host's execd folder
REPORT = "load"


def path(host):
    from gridtools.daemon.execd import host_dir
    return host_dir(host, REPORT)


def write(host, sample=None, now=None):
    """Write the host's report (``sample``: load values; this machine's by default)."""
    if sample is None:
        from gridtools.exec import load
        sample = load.sample()
    body = json.dumps({"time": time.time() if now is None else now, "values": sample})
    files.atomic_write(path(host), body, fsync=False)


def read(host):
    """(time, load values) of the host's last report, or None without a readable one."""
    try:
        with open(path(host), encoding="utf-8") as fh:
            data = json.loads(fh.read(1 << 20))
        return float(data["time"]), dict(data["values"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def setting(conf, host, name):
    """Seconds of the time attribute ``name`` of sge_conf(5) (load_report_time,
    max_unheard, reschedule_unknown) for ``host``: its own configuration's, else the
    global one's, else the format's default."""
    for which in (host, "global"):
        value = (conf.objects["conf"].get(which) or {}).get(name)
        if value is not None and str(value).strip():
            try:
                return float(values.parse_time(str(value)))
            except (GridError, ValueError):
                continue
    from gridtools.formats.sge.conf import SCHEMA
    return float(values.parse_time(str(SCHEMA.by_name[name].default)))


def unheard(conf, host, heard, now):
    """True when the host's execution daemon, last heard at ``heard`` (None: it has not
    reported yet), has not reported for longer than its max_unheard."""
    return heard is not None and now - heard > setting(conf, host, "max_unheard")


class Reporter:
    """The execution daemon's side: a report now and then every load_report_time."""

    def __init__(self, host):
        self.host = host
        self.due = 0.0

    def tick(self, now):
        """Report when due; returns the seconds until the next report."""
        if now >= self.due:
            try:
                write(self.host, now=now)
            except GridError as exc:
                import sys
                sys.stderr.write(f"gridtools execd: cannot write the load report: {exc}\n")
            self.due = now + self._every()
        return max(0.0, self.due - now)

    def _every(self):
        from gridtools.spool import config as confstore
        try:
            conf = confstore.load(on_error=lambda *_args: None)
        except GridError:
            conf = confstore.CellConfig()
        return max(1.0, setting(conf, self.host, "load_report_time"))
