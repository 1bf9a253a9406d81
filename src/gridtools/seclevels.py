"""HTCondor's security levels for a cell on one machine: who may read, write, administer.

A caller is known by the file system (the owner of the request file it
wrote, or the user running a query): ``Identity`` is that user in the
cell's UID_DOMAIN, calling from this machine (its host names and
addresses). ``verify(get, level, who)`` decides as HTCondor's daemons do,
from the configuration (``get(NAME)``: expanded text or None):

- lists ``ALLOW_<LEVEL>`` and ``DENY_<LEVEL>`` (a daemon's own
  ``ALLOW_<LEVEL>_<SUBSYSTEM>`` replaces the general one), and the older
  host-only ``HOSTALLOW_<LEVEL>`` / ``HOSTDENY_<LEVEL>``;
- an entry is ``user@domain/host``; without ``/`` it is a user when it has
  an ``@``, else a host; ``*`` is a wildcard (``*@cs.wisc.edu/*``,
  ``*/*.wisc.edu``); a host may be an address with a net mask
  (``192.168.12.1/255.255.192.0`` or ``/18``), ``{:local_ips:}`` is this
  machine;
- a DENY that matches refuses; with neither list every caller is allowed;
  with a DENY but no ALLOW every caller the DENY does not name is allowed
  (the warning of HTCondor's manual); with an ALLOW only callers it names
  are, or callers allowed at a level that implies this one (WRITE,
  NEGOTIATOR and CONFIG imply READ; ADMINISTRATOR and DAEMON imply
  WRITE, so READ too). The implication is transitive and comes from ALLOW
  entries: a caller an ALLOW_ADMINISTRATOR names may read though no
  ALLOW_WRITE is set, and an ALLOW_WRITE that does not name it changes
  nothing; a level without ALLOW, which lets in anybody, gives nobody a
  level below it (else ALLOW_READ would restrict nothing). A DENY on a
  level between stops the chain. CONFIG without an ALLOW allows no one.

``ALLOW_ADMINISTRATOR`` and ``ALLOW_DAEMON`` default to the cell's managers
(``manager_defaults``): without a configured list only they change
priorities or reconfigure, and only they act as the pool's own daemons
(condor_checkpoint: HTCondor's daemons run as its own account, which here
is the managers').
No files, no clock; ``identity`` asks the system for this machine's name.
"""

import enum
import fnmatch
import os

from gridtools.records import record


class Level(enum.Enum):
    READ = "READ"
    WRITE = "WRITE"
    ADMINISTRATOR = "ADMINISTRATOR"
    CONFIG = "CONFIG"
    DAEMON = "DAEMON"
    NEGOTIATOR = "NEGOTIATOR"


#: the levels whose permission implies a level's (HTCondor's hierarchy)
IMPLIED_BY = {Level.READ: (Level.WRITE, Level.NEGOTIATOR, Level.CONFIG),
              Level.WRITE: (Level.ADMINISTRATOR, Level.DAEMON)}
#: the entry that stands for every address of this machine
LOCAL_IPS = "{:local_ips:}"


@record(frozen=True)
class Identity:
    """A caller: a user of a domain, on this machine."""
    user: str
    domain: str
    hosts: tuple = ()                 # host names of this machine, the first is shown
    addresses: tuple = ("127.0.0.1",)

    @property
    def name(self):
        return f"{self.user}@{self.domain}"


@record(frozen=True)
class Verdict:
    allowed: bool
    reason: str


def split_entry(entry):
    """(user pattern, host pattern) of one list entry, as HTCondor splits it."""
    first, slash, rest = entry.partition("/")
    if not slash:
        return (entry, "*") if "@" in entry else ("*", entry)
    if "/" in rest:                               # user/network/mask
        return first, rest
    if ("@" in first) or first.startswith("*"):   # user/host (and */host)
        return first, rest
    return "*", entry                             # network/mask


def entries(text):
    return [split_entry(e) for e in (text or "").replace(",", " ").split() if e]


def _user_matches(pattern, who):
    if pattern == "*":
        return True
    if "@" not in pattern:
        pattern += "@*"
    return fnmatch.fnmatchcase(who.name.lower(), pattern.lower())


def _host_matches(pattern, who):
    if pattern in ("*", LOCAL_IPS):
        return True
    for host in who.hosts:
        if fnmatch.fnmatchcase(host.lower(), pattern.lower()):
            return True
    for address in who.addresses:
        if _address_matches(pattern, address):
            return True
    return False


def _address_matches(pattern, address):
    if "/" in pattern:
        network, _, mask = pattern.partition("/")
        import ipaddress
        try:
            net = ipaddress.ip_network(f"{network}/{mask}", strict=False)
            return ipaddress.ip_address(address) in net
        except ValueError:
            return False
    return fnmatch.fnmatchcase(address, pattern)


def _matching(pairs, who):
    return next((f"{u}/{h}" for u, h in pairs if _user_matches(u, who) and _host_matches(h, who)), None)


def _lists(get, level, subsystem, defaults):
    """(allow entries or None, deny entries or None) of one level."""
    def setting(kind):
        for name in ([f"{kind}_{level.value}_{subsystem}"] if subsystem else []) + [f"{kind}_{level.value}"]:
            value = get(name)
            if value is not None and value.strip():
                return value
        return None
    allow, deny = setting("ALLOW"), setting("DENY")
    host_allow, host_deny = get(f"HOSTALLOW_{level.value}"), get(f"HOSTDENY_{level.value}")
    allow_list = entries(allow) if allow is not None else None
    if host_allow and host_allow.strip():
        allow_list = (allow_list or []) + [("*", h) for _u, h in entries(host_allow)]
    if allow_list is None and level.value in (defaults or {}):
        allow_list = entries(defaults[level.value])
    deny_list = entries(deny) if deny is not None else None
    if host_deny and host_deny.strip():
        deny_list = (deny_list or []) + [("*", h) for _u, h in entries(host_deny)]
    return allow_list, deny_list


def verify(get, level, who, subsystem="", defaults=None):
    """May ``who`` act at ``level``? (see the module docstring)"""
    return _verify(get, level, who, subsystem, defaults, False)[0]


def _verify(get, level, who, subsystem, defaults, chain=True):
    """(Verdict, the Verdict of an ALLOW entry naming ``who`` at ``level`` or at a level
    that implies it, or None). The second says whether ``level`` implies the levels
    below it for ``who``: a level without ALLOW that lets in anybody (or everybody its
    DENY does not name) gives nobody a lower level, but passes on what a level above
    it gives (ADMINISTRATOR -> WRITE -> READ holds without an ALLOW_WRITE). Without
    ``chain`` only the Verdict counts (the second is None where the first says it all)."""
    allow, deny = _lists(get, level, subsystem, defaults)
    host = who.hosts[0] if who.hosts else "localhost"
    if deny:
        hit = _matching(deny, who)
        if hit is not None:
            return Verdict(False, f"{level.value} authorization policy denies {who.name} from "
                                  f"hostname {host} (DENY entry {hit})"), None
    if allow is not None:
        hit = _matching(allow, who)
        if hit is not None:
            found = Verdict(True, f"{level.value} authorization policy allows {who.name} (ALLOW entry {hit})")
            return found, found
    if allow is None and level is Level.CONFIG:
        return Verdict(False, f"{level.value} authorization policy denies all access"), None
    implied = _implied(get, level, who, subsystem, defaults) if chain or allow is not None else None
    if allow is None:
        if deny:
            return Verdict(True, f"{level.value} authorization policy does not deny, so allowing"), implied
        return Verdict(True, f"{level.value} authorization policy allows access by anyone"), implied
    if implied is not None:
        return implied, implied
    return Verdict(False, f"{level.value} authorization policy contains no matching ALLOW entry for this "
                          f"request; identifiers used for this host: {','.join(who.hosts or (host,))}"), None


def _implied(get, level, who, subsystem, defaults):
    """The Verdict of the first level implying ``level`` whose ALLOW entries (its own or,
    transitively, those of a level implying it) name ``who``, or None."""
    for parent in IMPLIED_BY.get(level, ()):
        found = _verify(get, parent, who, subsystem, defaults)[1]
        if found is not None:
            return Verdict(True, f"{level.value} is implied by {parent.value}; {found.reason}")
    return None


def identity(user, get, host=""):
    """The Identity of local ``user``: UID_DOMAIN (else this machine's full name) is its
    domain; ``host`` (the cell's name for this machine) and the system's names its hosts."""
    full = os.uname().nodename
    names = [n for n in (host, full, full.split(".")[0], "localhost") if n]
    domain = (get("UID_DOMAIN") or "").strip() or (get("FULL_HOSTNAME") or "").strip() or full
    return Identity(user, domain, tuple(dict.fromkeys(names)), ("127.0.0.1", "::1"))


def manager_defaults(managers):
    """The built-in lists: ALLOW_ADMINISTRATOR and ALLOW_DAEMON name the cell's managers,
    root always."""
    names = ["root"] + sorted(m for m in managers if m != "root")
    listed = ", ".join(f"{m}@*/*" for m in names)
    return {Level.ADMINISTRATOR.value: listed, Level.DAEMON.value: listed}


def denied_line(who, method="FS"):
    """What an HTCondor tool prints when a daemon refused its command."""
    return f'SECMAN:2010:Received "DENIED" from server for user {who.name} using method {method}.'
