"""Load values of this machine as Grid Engine reports them (via psutil), and how
long its keyboard and console have been idle.

``sample()`` returns the standard load values of host_conf(5): load_avg,
load_short/medium/long, np_load_*, num_proc, mem_*, swap_*, virtual_*,
arch, cpu and the m_* topology counts. ``idle_seconds(input_devices(), now)`` is
HTCondor's KeyboardIdle: the time since the last access of a terminal or input
device.
"""

import os
import platform

_ARCH = {"x86_64": "lx-amd64", "aarch64": "lx-arm64", "i686": "lx-x86", "ppc64le": "lx-ppc64le"}


def arch():
    return _ARCH.get(platform.machine(), "lx-" + platform.machine())


def _mb(nbytes):
    return f"{nbytes / 1024 / 1024:.6f}M"


def sample():
    """A dict of load value name -> value (numbers as float, memory as text)."""
    import psutil
    nproc = os.cpu_count() or 1
    l1, l5, l15 = os.getloadavg()
    vm = psutil.virtual_memory()
    sw = psutil.swap_memory()
    cores = psutil.cpu_count(logical=False) or nproc
    return {
        "arch": arch(), "num_proc": nproc,
        "load_avg": l5, "load_short": l1, "load_medium": l5, "load_long": l15,
        "np_load_avg": l5 / nproc, "np_load_short": l1 / nproc,
        "np_load_medium": l5 / nproc, "np_load_long": l15 / nproc,
        "mem_total": _mb(vm.total), "mem_free": _mb(vm.available), "mem_used": _mb(vm.total - vm.available),
        "swap_total": _mb(sw.total), "swap_free": _mb(sw.free), "swap_used": _mb(sw.used),
        "virtual_total": _mb(vm.total + sw.total), "virtual_free": _mb(vm.available + sw.free),
        "virtual_used": _mb(vm.total - vm.available + sw.used),
        "cpu": psutil.cpu_percent(interval=None),
        "m_socket": 1, "m_core": cores, "m_thread": nproc,
        "m_topology": "S" + "C" * cores, "m_topology_inuse": "S" + "C" * cores,
    }


#: input devices looked at when a host names none (CONSOLE_DEVICES): terminals and /dev/input
_TERMINALS = ("/dev/pts", "/dev/input")
#: console device names of CONSOLE_DEVICES given without a folder live here
_DEV = "/dev"


def input_devices(configured=None):
    """The devices whose last use makes a host busy: the paths of CONSOLE_DEVICES
    (``configured``, names without a ``/`` are under /dev), or else every
    terminal under /dev/pts, /dev/tty[0-9]* and the devices under /dev/input."""
    if configured:
        return [c if c.startswith("/") else os.path.join(_DEV, c) for c in configured]
    found = []
    for folder in _TERMINALS:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        found += [os.path.join(folder, n) for n in names if n not in ("ptmx", "by-id", "by-path")]
    try:
        found += [os.path.join(_DEV, n) for n in os.listdir(_DEV)
                  if n.startswith("tty") and n[3:].isdigit()]
    except OSError:
        pass
    return found


def idle_seconds(devices, now, boot_time=None):
    """Seconds since the last access of any of ``devices`` (HTCondor's KeyboardIdle);
    when none can be looked at, the time since this machine started."""
    last = None
    for dev in devices:
        try:
            st = os.stat(dev)
        except OSError:
            continue
        last = st.st_atime if last is None else max(last, st.st_atime)
    if last is None:
        if boot_time is None:
            import psutil
            boot_time = psutil.boot_time()
        last = boot_time
    return max(0, int(now - last))
