"""The cell's HTCondor configuration as the daemon uses it.

``etc/condor_config`` (or the file ``CONDOR_CONFIG`` names in the daemon's
environment) and the local files it names are read once for the cell and
once per execution host: a host's copy is read with ``HOSTNAME`` and
``FULL_HOSTNAME`` set to the host's name and ``SUBSYSTEM`` to ``STARTD``,
so ``LOCAL_CONFIG_FILE = $(ETC)/hosts/$(HOSTNAME).local`` gives each host
its own policy. The files are read again when one of them changed (looked
at once a second) or at once on ``condor_reconfig``. A file that cannot be
read keeps the last good configuration and is reported in the daemon's
messages; at start-up the built-in defaults stand in (``unread`` says why),
and a request at a security level the file could restrict is refused
meanwhile (``daemon.condorsec``): the ALLOW and DENY lists of a file that
does not read are not known, and the defaults would let every caller past
them.

What the daemon derives from it (the negotiator's knobs, the accountant's
settings, each host's startd policy, the security levels) is cached per
reading, ``generation`` counts the readings.

Each reading is followed by the settings condor_config_val -set and -rset made
(``daemon.confset``: persistent ones from PERSISTENT_CONFIG_DIR, then runtime
ones, as the first reading's ENABLE_PERSISTENT_CONFIG and ENABLE_RUNTIME_CONFIG
allow); a setting is not one of the files looked at for changes, so it is in
use from the next reading on, as in HTCondor.
"""

import os
import time

from gridtools import cell
from gridtools.errors import ConfigError
from gridtools.formats import condor_config

#: seconds between two looks whether a configuration file changed
CHECK_EVERY = 1.0
#: the subsystem name a host's configuration is read for
STARTD = "STARTD"


def config_path():
    """The global file the daemon reads (CONDOR_CONFIG in its environment, else the
    cell's etc/condor_config)."""
    return condor_config.locate(cell.etc("condor_config"))


def _defaults(host=None):
    found = condor_config.builtin_defaults()
    found["SUBSYSTEM"] = "NEGOTIATOR"
    found["ETC"] = cell.etc()
    found["SPOOL"] = cell.spool()
    if host:
        found.update({"HOSTNAME": host.split(".")[0], "FULL_HOSTNAME": host, "SUBSYSTEM": STARTD})
    return found


def stamp(reading):
    """The identity and times of the global file and of the files ``reading`` (a
    Config, or None) came from: another stamp means a file changed."""
    paths = [config_path()] + (reading.sources() if reading is not None else [])
    marks = []
    for path in dict.fromkeys(paths):
        try:
            st = os.stat(path)
            marks.append((path, st.st_ino, st.st_mtime_ns, st.st_size))
        except OSError:
            marks.append((path, None, None, None))
    return tuple(marks)


def read_for(host):
    """The configuration as host ``host`` reads it (ConfigError when it does not read)."""
    return _read(config_path(), host)


def _read(path, host=None):
    """The configuration at ``path`` (built-in defaults only when it does not exist)."""
    if not os.path.exists(path):
        return condor_config.load("ONLY_ENV", defaults=_defaults(host))
    return condor_config.load(path, defaults=_defaults(host))


class CondorConf:
    """The cell's condor_config, per host and for the cell."""

    def __init__(self):
        self.main = None
        self.unread = None          # why the configuration in use is not the cell's (defaults)
        self.generation = 0
        self.checked = 0.0
        self._stamp = None
        self._hosts = {}
        self._derived = {}
        self.dynamic = None         # what the first reading says of settings (confset.Dynamic)
        self.runtime = {}           # name -> the assignment of each runtime setting (-rset)

    def refresh(self, log, force=False, now=None):
        """Read the files again when they changed (or ``force``); True when it did."""
        now = time.time() if now is None else now
        if not force and self.main is not None and now - self.checked < CHECK_EVERY:
            return False
        self.checked = now
        stamp = self._current_stamp()
        if not force and self.main is not None and stamp == self._stamp:
            return False
        try:
            main = self._overlaid(_read(config_path()), log)
        except ConfigError as exc:
            if self.main is not None:
                log(f"E|condor_config not read, the configuration read before is kept: {exc}")
                self._stamp = stamp
                return False
            log(f"E|condor_config not read, the built-in defaults stand in, and HTCondor "
                f"requests at a level it could restrict are refused until it reads: {exc}")
            main, self.unread = condor_config.load("ONLY_ENV", defaults=_defaults()), str(exc)
        else:
            self.unread = None
        self.main, self._hosts, self._derived = main, {}, {}
        self._stamp = self._current_stamp()
        self.generation += 1
        return True

    def _current_stamp(self):
        return stamp(self.main)

    def _overlaid(self, config, log=None):
        """``config`` with the settings of condor_config_val -set and -rset defined last
        (what they are allowed to be is fixed by the first reading)."""
        from gridtools.daemon import confset
        if self.dynamic is None:
            self.dynamic = confset.Dynamic(config)
            if self.dynamic.problem and log is not None:
                log(f"E|{self.dynamic.problem}: condor_config_val -set is refused")
        return confset.overlay(config, self.dynamic, self.runtime, log)

    def host(self, name):
        """The configuration as host ``name`` reads it."""
        found = self._hosts.get(name)
        if found is None:
            try:
                found = self._overlaid(_read(config_path(), name))
            except ConfigError:
                found = self.main
            self._hosts[name] = found
        return found

    def derived(self, key, make):
        """``make()`` once per reading, remembered under ``key``."""
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]

    def get(self, name, default=None):
        return self.main.get(name, default) if self.main is not None else default
