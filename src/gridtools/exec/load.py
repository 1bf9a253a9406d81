"""Load values of this machine as Grid Engine reports them (via psutil).

``sample()`` returns the standard load values of host_conf(5): load_avg,
load_short/medium/long, np_load_*, num_proc, mem_*, swap_*, virtual_*,
arch, cpu and the m_* topology counts.
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
