"""The cells of the tests are copies of a cell made once by ``gridtools init``
(conftest.copy_cell): a copy must hold exactly what ``gridtools init`` makes
at its path, or the tests would run against something else than a real cell."""

import os
import shutil
import stat
import tempfile

import pytest

from conftest import copy_cell, init_cell, template_cell


def tree(root):
    """Every entry under ``root``: relative path -> (type, mode, owner, content), ``root``
    in the contents written as ROOT."""
    found = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names + ([] if folder != root else ["."]):
            path = os.path.normpath(os.path.join(folder, name))
            st = os.lstat(path)
            content = None
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as fh:
                    content = fh.read().replace(root.encode(), b"ROOT")
            elif stat.S_ISLNK(st.st_mode):
                content = os.readlink(path).replace(root, "ROOT")
            found[os.path.relpath(path, root)] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode),
                                                  st.st_uid, st.st_gid, content)
    return found


@pytest.mark.parametrize("slots,hosts", [(2, ["testhost"]), (1, ["testhost", "node2"])])
def test_a_copied_cell_is_what_init_makes_there(slots, hosts):
    made = tempfile.mkdtemp(prefix="gtcell-", dir="/tmp")
    copied = tempfile.mkdtemp(prefix="gtcell-", dir="/tmp")
    try:
        init_cell(made, slots, hosts)
        copy_cell(template_cell(slots, hosts), copied)
        expected = tree(made)
        assert "etc/conf/global" in expected and "spool/wakeup" in expected
        assert "default/common/accounting" in expected
        assert tree(copied) == expected
    finally:
        shutil.rmtree(made, ignore_errors=True)
        shutil.rmtree(copied, ignore_errors=True)
