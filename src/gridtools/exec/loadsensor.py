"""Grid Engine's load sensors: site programs that report load values of their own.

``load_sensor`` in a host's configuration (else the global one; sge_conf(5))
names programs, separated by commas. The execution side of each host runs
each of them (``/bin/sh -c`` with the text, as the daemon's user, with ``HOST``
set to the host's name) and talks to it through its standard input and
output:

- a line (an empty one) on its input asks for a report, ``quit`` asks it to
  end;
- it answers ``begin`` (or ``start``), one ``host:name:value`` line per value
  (``host`` is a host's name, or ``global`` for a value of the whole cell),
  then ``end``.

A report is asked for when the sensor starts and then every
``load_report_time`` of the host; the values are those of the sensor's last
complete report, taken as soon as it is complete. A line that does not read
as ``host:name:value`` (three parts, none empty; the value is the rest of the
line, at most ``LONGEST_VALUE`` characters) is left out and logged: the first
one of a report, and how many there were when the report ends. A sensor that
ended, or whose program file changed, is started again when the next report is
due; one no longer named is asked to quit, and killed if it has not ended
``QUIT_TIMEOUT`` seconds later.

The values join the host's load values (a sensor may report one of the
standard ones, which it then replaces): they show in ``qhost -F`` and
``qstat -F`` (``hl:``; ``gl:`` for global ones), count for ``-l`` requests,
load thresholds and the load formula of a complex attribute of that name.
"""

import os

from gridtools.exec.piped import Piped

#: seconds a sensor asked to quit has before it is killed
QUIT_TIMEOUT = 10.0
#: values one report may have (the rest are dropped)
MOST_VALUES = 10000
#: the longest value kept (a longer one is left out, as a line that does not read)
LONGEST_VALUE = 1024


def programs(text):
    """The programs a ``load_sensor`` value names (none for ``none``)."""
    if text is None:
        return []
    found = [part.strip() for part in str(text).replace("\n", ",").split(",")]
    return [part for part in found if part and part.lower() != "none"]


def programs_of(conf, host):
    """The programs ``load_sensor`` names for ``host`` in the cell's configuration
    (``spool.config.CellConfig``): the host's own configuration's, else the global one's."""
    confs = conf.objects["conf"]
    for which in (host, "global"):
        value = (confs.get(which) or {}).get("load_sensor")
        if value is not None and str(value).strip():
            return programs(value)
    return []


def parse_line(line):
    """(host, name, value) of a report line, or None when it does not read as one."""
    host, sep, rest = line.partition(":")
    name, sep2, value = rest.partition(":")
    if not (sep and sep2 and host and name and value):
        return None
    return host, name, value


def _stamp(command):
    try:
        st = os.stat(command)
    except (OSError, ValueError):
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


class LoadSensor:
    """One sensor program run for one host (see the module docstring)."""

    def __init__(self, host, command, log=None):
        self.host, self.command = host, command
        self.log = log or (lambda text: None)
        self.piped = None
        self.values = {}            # (host, name) -> value of the last complete report
        self._partial = []
        self._stamp = None
        self._bad = 0               # lines of the report being read that were left out

    def start(self):
        self._partial, self._stamp = [], _stamp(self.command)
        try:
            self.piped = Piped(["/bin/sh", "-c", self.command], env=dict(os.environ, HOST=self.host),
                               with_input=True)
        except OSError as exc:
            self.piped = None
            self.log(f"E|load sensor {self.command} of host {self.host} not started: {exc}")
            return
        self.piped.send("\n")

    def due(self):
        """A report is due: start the sensor again when it ended or its program changed,
        else ask it for the next report."""
        if self.piped is None or self.piped.ended or not self.piped.running() \
                or _stamp(self.command) != self._stamp:
            self.stop(kill=True)
            self.start()
        else:
            self.piped.send("\n")

    def fileno(self):
        return self.piped.fd if self.piped is not None else None

    def pump(self):
        """Read what the sensor wrote; True when a report completed with other values."""
        if self.piped is None:
            return False
        changed = False
        for line in self.piped.lines():
            line = line.lstrip()
            if not line:
                continue
            if line in ("begin", "start"):
                self._partial = []
            elif line == "end":
                values = dict(((host, name), value) for host, name, value in self._partial)
                self._partial = []
                changed = changed or values != self.values
                self.values = values
                if self._bad > 1:
                    self.log(f"W|load sensor {self.command} of host {self.host}: "
                             f"{self._bad} lines of its report were left out")
                self._bad = 0
            else:
                found = parse_line(line)
                if found is None or len(found[2]) > LONGEST_VALUE:
                    self._bad += 1
                    if self._bad == 1:
                        self.log(f"W|load sensor {self.command} of host {self.host}: "
                                 f"format error in line {line[:100]!r}")
                elif len(self._partial) < MOST_VALUES:
                    self._partial.append(found)
        return changed

    def stop(self, kill=False):
        """Ask the sensor to quit (``kill``: kill it); the Piped to kill later, or None."""
        piped, self.piped = self.piped, None
        if piped is None:
            return None
        if kill:
            piped.kill()
            return None
        piped.send("quit\n")
        piped.close()
        return piped


class LoadSensors:
    """The sensors the execution side runs, by (host, program)."""

    def __init__(self, log=None):
        self.log = log or (lambda text: None)
        self.sensors = {}
        self.ending = []            # (deadline, Piped) of sensors asked to quit
        self.due_at = {}            # host -> when its next report is due

    def configure(self, wanted, now):
        """Run the sensors of ``wanted`` ((host, program) pairs) and stop the others."""
        wanted = list(dict.fromkeys(wanted))
        for key in list(self.sensors):
            if key not in wanted:
                self._stop(self.sensors.pop(key), now)
        for host, command in wanted:
            if (host, command) not in self.sensors:
                sensor = self.sensors[(host, command)] = LoadSensor(host, command, self.log)
                sensor.start()
        hosts = {host for host, _command in wanted}
        self.due_at = {host: at for host, at in self.due_at.items() if host in hosts}

    def _stop(self, sensor, now):
        piped = sensor.stop()
        if piped is not None:
            self.ending.append((now + QUIT_TIMEOUT, piped))

    def tick(self, now, every):
        """Ask for the reports due (``every(host)``: seconds between a host's reports) and
        kill the sensors that did not quit in time; the next time something is due."""
        for host in {host for host, _command in self.sensors}:
            at = self.due_at.get(host)
            if at is None:
                self.due_at[host] = now + every(host)
            elif now >= at:
                for (owner, _command), sensor in self.sensors.items():
                    if owner == host:
                        sensor.due()
                self.due_at[host] = now + every(host)
        left = []
        for deadline, piped in self.ending:
            if not piped.running():
                continue
            if now >= deadline:
                piped.kill()
            else:
                left.append((deadline, piped))
        self.ending = left
        times = list(self.due_at.values()) + [deadline for deadline, _piped in self.ending]
        return min(times) if times else None

    def fds(self):
        """fd -> sensor, of the sensors whose output is open."""
        found = {}
        for sensor in self.sensors.values():
            fd = sensor.fileno()
            if fd is not None:
                found[fd] = sensor
        return found

    def pump(self, ready=None):
        """Read the sensors (those of the fds ``ready``, else all); True when a report
        brought other values."""
        fds = self.fds()
        changed = False
        for fd, sensor in fds.items():
            if ready is None or fd in ready:
                changed = sensor.pump() or changed
        return changed

    def values(self):
        """host -> {name: value} of every sensor's last report (``global`` included); a
        later sensor of the list wins over an earlier one."""
        found = {}
        for sensor in self.sensors.values():
            for (host, name), value in sensor.values.items():
                found.setdefault(host, {})[name] = value
        return found

    def stop_all(self, wait=1.0):
        """Ask every sensor to quit, give them ``wait`` seconds, then kill the rest."""
        import time
        for sensor in self.sensors.values():
            piped = sensor.stop()
            if piped is not None:
                self.ending.append((0.0, piped))
        self.sensors = {}
        deadline = time.monotonic() + wait
        while any(piped.running() for _at, piped in self.ending) and time.monotonic() < deadline:
            time.sleep(0.02)
        for _at, piped in self.ending:
            piped.kill()
        self.ending = []
