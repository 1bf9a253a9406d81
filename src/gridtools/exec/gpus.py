"""How many GPUs this machine has: ``nvidia-smi -L`` lines, else the entries of
``/proc/driver/nvidia/gpus``, else 0. Never fails: a machine without the driver or
the tool simply has none."""

import os
import subprocess

#: seconds nvidia-smi may take before the machine is taken to have none
PROBE_TIMEOUT = 10.0


def _from_tool():
    try:
        proc = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return sum(1 for line in proc.stdout.splitlines() if line.startswith("GPU "))


def _from_proc(folder="/proc/driver/nvidia/gpus"):
    try:
        return len([n for n in os.listdir(folder) if not n.startswith(".")])
    except OSError:
        return None


def count():
    """The number of GPUs found (0 when none or when nothing can tell)."""
    found = _from_tool()
    if found is None:
        found = _from_proc()
    return found or 0
