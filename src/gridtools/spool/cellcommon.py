"""``$SGE_ROOT/$SGE_CELL/common/``: where Grid Engine's users find a cell's common files.

Jobs run with ``SGE_ROOT`` the cell's root and ``SGE_CELL=default``. Scripts
written for Grid Engine read the accounting file as
``$SGE_ROOT/$SGE_CELL/common/accounting`` (accounting(5)) and source
``$SGE_ROOT/$SGE_CELL/common/settings.sh`` (or ``settings.csh``) to reach the
cell's commands. The folder holds:

- ``accounting``: a symbolic link to the spool's accounting file;
- ``settings.sh`` and ``settings.csh``: set ``GRIDTOOLS_ROOT``, ``SGE_ROOT``,
  ``SGE_CELL``, ``SGE_ARCH`` and put the folder of the gridtools commands
  first in ``PATH`` (and their manual pages in ``MANPATH``).

Beside it, ``$SGE_ROOT/util/resources/jsv/jsv_include.sh`` is where Grid
Engine's job submission verifiers written in sh find their functions: a link
to the copy this installation ships (``gridtools/data/jsv``), pointed there
again when it points elsewhere (another installation); a file an
administrator put there instead is left alone.

Made by ``gridtools init`` and, in a cell made before, by the daemon when it
starts; what exists is left alone. Everything belongs to the cell's owner and
is writable by nobody else (folders 0755, files 0644); a path in the way
that is not the folder or file it should be (a link, say) is refused.
"""

import os
import shlex
import stat

from gridtools.errors import ConfigError
from gridtools.spool.files import atomic_write, makedirs

CELL = "default"


def folder(root):
    return os.path.join(root, CELL, "common")


def _quoted_csh(text):
    """A word for csh: single-quoted (csh has no escape inside quotes but for ! and newlines)."""
    if any(c in text for c in "'!\n"):
        raise ConfigError(f"cannot write {text!r} into settings.csh")
    return f"'{text}'"


def settings_sh(root, bin_dir, arch):
    q = shlex.quote
    lines = [f"# gridtools cell {root}: source this file (. settings.sh) to use the cell's commands",
             f"GRIDTOOLS_ROOT={q(root)}; export GRIDTOOLS_ROOT",
             f"SGE_ROOT={q(root)}; export SGE_ROOT",
             f"SGE_CELL={CELL}; export SGE_CELL",
             f"SGE_ARCH={q(arch)}; export SGE_ARCH"]
    if bin_dir:
        lines.append(f'PATH={q(bin_dir)}:"$PATH"; export PATH')
    man = _man_dir(bin_dir)
    if man:
        lines.append(f'MANPATH={q(man)}:"${{MANPATH:-}}"; export MANPATH')
    return "\n".join(lines) + "\n"


def settings_csh(root, bin_dir, arch):
    q = _quoted_csh
    lines = [f"# gridtools cell {root}: source this file (source settings.csh) to use the cell's commands",
             f"setenv GRIDTOOLS_ROOT {q(root)}",
             f"setenv SGE_ROOT {q(root)}",
             f"setenv SGE_CELL {CELL}",
             f"setenv SGE_ARCH {q(arch)}"]
    if bin_dir:
        lines.append(f'setenv PATH {q(bin_dir)}:"$PATH"')
    man = _man_dir(bin_dir)
    if man:
        lines += ["if ( $?MANPATH ) then",
                  f'    setenv MANPATH {q(man)}:"$MANPATH"',
                  "else",
                  f"    setenv MANPATH {q(man)}:",
                  "endif"]
    return "\n".join(lines) + "\n"


def _man_dir(bin_dir):
    """The manual pages beside the commands' folder (a checkout's man/), if there."""
    if not bin_dir:
        return ""
    man = os.path.join(os.path.dirname(bin_dir), "man")
    return man if os.path.isdir(os.path.join(man, "man1")) else ""


def _own_dir(path):
    """Make folder ``path`` (0755) or check that the one there is a folder of ours."""
    if not os.path.lexists(path):
        makedirs(path, 0o755)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        raise ConfigError(f"{path} is not a folder of the cell's owner")
    if st.st_mode & 0o022:
        os.chmod(path, 0o755)


def ensure(root, bin_dir, arch):
    """Create what is missing of the common folder of the cell at ``root``; the paths made."""
    root = os.path.abspath(root)
    made = []
    _own_dir(os.path.join(root, CELL))
    common = folder(root)
    _own_dir(common)
    link = os.path.join(common, "accounting")
    if not os.path.lexists(link):
        os.symlink(os.path.join("..", "..", "spool", "accounting"), link)
        made.append(link)
    elif not os.path.islink(link):
        raise ConfigError(f"{link} is not the link to the cell's accounting file")
    made += _jsv_library(root)
    for name, text in (("settings.sh", settings_sh), ("settings.csh", settings_csh)):
        path = os.path.join(common, name)
        if os.path.lexists(path):
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                raise ConfigError(f"{path} is not a file of the cell's owner")
            if st.st_mode & 0o022:
                os.chmod(path, 0o644)
            continue
        atomic_write(path, text(root, bin_dir, arch), mode=0o644)
        made.append(path)
    return made


#: the JSV functions for sh that this installation ships
JSV_LIBRARY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "jsv",
                           "jsv_include.sh")


def _jsv_library(root):
    """``util/resources/jsv/jsv_include.sh`` under ``root``: a link to JSV_LIBRARY."""
    folder_path = root
    for part in ("util", "resources", "jsv"):
        folder_path = os.path.join(folder_path, part)
        _own_dir(folder_path)
    link = os.path.join(folder_path, "jsv_include.sh")
    if os.path.lexists(link):
        if not os.path.islink(link) or os.readlink(link) == JSV_LIBRARY:
            return []
        os.unlink(link)
    os.symlink(JSV_LIBRARY, link)
    return [link]


def ensure_here(root):
    """``ensure`` with this installation's commands folder and this machine's architecture."""
    from gridtools.binpath import binary_path
    from gridtools.exec.load import arch
    return ensure(root, binary_path(), arch())
