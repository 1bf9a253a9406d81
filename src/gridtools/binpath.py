"""Where this installation's commands lie: the folder whose launchers the jobs find
as ``SGE_BINARY_PATH``, condor_config_val's RELEASE_DIR and the cell's common files
name, and whose ``condor_dagman`` DAGMan jobs run."""

import os
import sys

_BINARY_PATH = []


def binary_path():
    """The folder of the gridtools commands: the bin/ of the checkout this package lies
    in, else the launchers beside this interpreter (an installed copy's bin/); "" when
    neither holds gridtools' own qsub. Looked for once per process."""
    if not _BINARY_PATH:
        src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        found = ""
        for folder in (os.path.join(os.path.dirname(src), "bin"), os.path.dirname(sys.executable)):
            if is_launcher(os.path.join(folder, "qsub")):
                found = folder
                break
        _BINARY_PATH.append(found)
    return _BINARY_PATH[0]


def is_launcher(path):
    """True when ``path`` is a program that is one of gridtools' launchers."""
    try:
        with open(path, "rb") as fh:
            return os.access(path, os.X_OK) and b"gridtools" in fh.read(512)
    except OSError:
        return False
