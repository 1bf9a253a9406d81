"""The pool's file transfer plugins (FILETRANSFER_PLUGINS): what they offer, as the
slot ads publish it, and the transfers they make for jobs, run as the job's owner."""

import os
import pwd

from condortools import store_plugin, submit, wait_events, write
from conftest import wait_for
from gridtools.exec import movers, poolplugins

#: what the multi-file plugin for store:// URLs says of itself
MULTI = ('MultipleFileSupport = true\nPluginVersion = "0.2"\nPluginType = "FileTransfer"\n'
         'SupportedMethods = "store,https"\nStoreRegion = "north"\nStartdAttrs = "StoreRegion"\n')

#: a plugin that moves one file a run (``<plugin> <source> <destination>``) for one:// URLs
SINGLE = """#!/bin/sh
if [ "$1" = -classad ]; then
    echo '# one file a run'
    echo 'SupportedMethods = "one"'
    echo 'this line is no attribute'
    exit 0
fi
echo "$(id -u)" >> {store}/single_ran_as
case "$1" in
one://*) from={store}/${{1#one://*/}}; to=$2 ;;
*) from=$1; to={store}/${{2#one://*/}} ;;
esac
if ! cp "$from" "$to" 2>/dev/null; then
    echo 'TransferError = "cannot copy"'
    echo "TransferUrl = \\"$1\\""
    exit 4
fi
"""


def _plugins(folder):
    store = os.path.join(folder, "store")
    os.makedirs(store, exist_ok=True)
    os.chmod(store, 0o777)
    multi = write(os.path.join(folder, "store_plugin.py"), store_plugin(store, "multi_ran_as", MULTI), 0o755)
    single = write(os.path.join(folder, "one_plugin"), SINGLE.format(store=store), 0o755)
    return store, multi, single


def test_the_plugins_are_asked_what_they_offer_as_htcondor_s_starter_asks(tmp_path):
    """``-classad``: SupportedMethods (a later plugin takes a method from an earlier one,
    and from the built-in ones), MultipleFileSupport, StartdAttrs; a plugin that cannot
    run, writes nothing or names no method is left out, in HTCondor's words."""
    _store, multi, single = _plugins(str(tmp_path))
    silent = write(str(tmp_path / "silent_plugin"), "#!/bin/sh\nexit 0\n", 0o755)
    found = poolplugins.query({"FILETRANSFER_PLUGINS": f"{single}, {multi} {silent}\n"
                                                       f"{tmp_path}/gone_plugin relative_plugin"})
    assert found.table == {"store": [multi, True], "https": [multi, True], "one": [single, False]}
    assert found.methods_text() == "data,file,ftp,http,https,one,store"
    assert {name: str(expr) for name, expr in found.attrs.items()} == {"StoreRegion": '"north"'}
    assert found.problems == [
        f"W|FILETRANSFER: No output from {silent} -classad, ignoring",
        f"W|FILETRANSFER: Failed to execute {tmp_path}/gone_plugin -classad: No such file or directory skipping",
        "W|FILETRANSFER: relative_plugin is not a full path, skipping"]
    no_multi = poolplugins.query({"FILETRANSFER_PLUGINS": f"{multi},{single}",
                                  "ENABLE_MULTIFILE_TRANSFER_PLUGINS": "false"})
    assert no_multi.table == {"one": [single, False]} and no_multi.attrs == {}
    off = poolplugins.query({"FILETRANSFER_PLUGINS": multi, "ENABLE_URL_TRANSFERS": "False"})
    assert (off.table, off.methods_text()) == ({}, None)
    plain = poolplugins.query({})
    assert (plain.table, plain.methods_text(), plain.problems) == ({}, "data,file,ftp,http,https", [])


def test_a_plugin_of_one_file_a_run_is_called_and_its_failure_said_as_htcondor_says_it(tmp_path):
    store, _multi, single = _plugins(str(tmp_path))
    write(os.path.join(store, "in.txt"), "kept\n")
    folder = str(tmp_path / "scratch")
    os.mkdir(folder)
    movers.run_single(single, "one://box/in.txt", os.path.join(folder, "in.txt"), folder)
    assert open(os.path.join(folder, "in.txt")).read() == "kept\n"
    try:
        movers.run_single(single, "one://box/missing.txt", os.path.join(folder, "x"), folder)
    except OSError as exc:
        assert exc.errno == 4
        assert exc.strerror == (f"FILETRANSFER:1:non-zero exit (4) from {single}. "
                                "|Error: cannot copy ( URL file = one://box/missing.txt )|")
    else:
        raise AssertionError("a failed copy passed")
    mute = write(str(tmp_path / "mute_plugin"), "#!/bin/sh\nexit 2\n", 0o755)
    try:
        movers.run_single(mute, "one://box/in.txt", os.path.join(folder, "x"), folder)
    except OSError as exc:
        assert exc.strerror == (f"FILETRANSFER:1:non-zero exit (2) from {mute}. |Error: File transfer plugin "
                                f"{mute} exited unexpectedly without producing an error message  ( URL file =  )|")
    else:
        raise AssertionError("a failed plugin passed")


def _published(cell, attr):
    proc = cell.run("condor_status", "-af", attr)
    return proc.stdout.split("\n")[0] if proc.returncode == 0 else None


def test_the_pool_s_plugins_move_a_job_s_files_as_its_owner_and_the_slots_offer_their_methods(
        cell, workdir, users):
    """FILETRANSFER_PLUGINS: after condor_reconfig the slot ads offer the plugins' methods
    and StartdAttrs; a job's URLs of those schemes are fetched and sent by them, run with
    the job owner's identity (multi-file protocol, a job's input files in one run; or one
    file a run); a failed fetch
    holds the job (13) with the plugin's words and its exit status as subcode."""
    user = users[0]
    uid = pwd.getpwnam(user).pw_uid
    os.chmod(workdir, 0o777)
    store, multi, single = _plugins(workdir)
    write(os.path.join(store, "a.txt"), "from the store\n", 0o644)
    write(os.path.join(store, "b.txt"), "from one\n", 0o644)
    write(os.path.join(store, "c.txt"), "and more\n", 0o644)
    assert _published(cell, "HasFileTransferPluginMethods") == "data,file,ftp,http,https"
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(f"FILETRANSFER_PLUGINS = {multi}, {single}\n")
    cell.run("condor_reconfig", check=True)
    assert wait_for(lambda: _published(cell, "HasFileTransferPluginMethods") == "data,file,ftp,http,https,one,store",
                    20)
    assert _published(cell, "StoreRegion") == "north"
    cluster = submit(cell, "executable = /bin/sh\n"
                           "arguments = \"-c 'cat a.txt b.txt c.txt > got.txt; echo 1 > o1; echo 2 > o2'\"\n"
                           "should_transfer_files = YES\n"
                           "transfer_input_files = store://box/a.txt, one://box/b.txt, store://box/c.txt\n"
                           "transfer_output_files = got.txt, o1, o2\n"
                           "transfer_output_remaps = \"got.txt = one://box/got.txt; o1 = store://box/o1; "
                           "o2 = store://box/o2\"\n"
                           "log = p.log\nqueue\n", cwd=workdir, user=user)
    wait_events(os.path.join(workdir, "p.log"), f"{cluster}.0", [0, 40, 40, 1, 40, 40, 5])
    assert open(os.path.join(store, "got.txt")).read() == "from the store\nfrom one\nand more\n"
    assert [open(os.path.join(store, name)).read() for name in ("o1", "o2")] == ["1\n", "2\n"]
    assert not os.path.exists(os.path.join(workdir, "got.txt"))
    # the input files of the multi-file plugin in one run, its output files in another
    assert open(os.path.join(store, "multi_ran_as")).read() == f"{uid} False\n{uid} True\n"
    assert open(os.path.join(store, "single_ran_as")).read() == f"{uid}\n{uid}\n"
    gone = submit(cell, "executable = /bin/true\nshould_transfer_files = YES\n"
                        "transfer_input_files = one://box/nothere.txt\nlog = g.log\nqueue\n",
                  cwd=workdir, user=user, name="g.sub")
    wait_events(os.path.join(workdir, "g.log"), f"{gone}.0", [0, 40, 40, 12])
    proc = cell.run("condor_q", f"{gone}.0", "-af", "HoldReasonCode", "HoldReasonSubCode", "HoldReason")
    code, subcode, reason = proc.stdout.strip().split(" ", 2)
    assert (code, subcode) == ("13", "4")
    assert f"non-zero exit (4) from {single}. |Error: cannot copy ( URL file = one://box/nothere.txt )|" in reason
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("ENABLE_URL_TRANSFERS = false\n")
    cell.run("condor_reconfig", check=True)
    assert wait_for(lambda: _published(cell, "HasFileTransferPluginMethods") == "undefined", 20)
    assert _published(cell, "HasJobTransferPlugins") == "undefined"


def test_an_execution_daemon_asks_the_plugins_of_its_host(workdir):
    """A host served by an execution daemon of its own has its plugins asked there, as
    its condor_config names them: its slot ads publish what that asking found, and a
    job on it fetches its URLs with that plugin."""
    from conftest import destroy_cell, make_cell
    cell = make_cell(slots=1, hosts=["testhost", "node2"], start=False)
    try:
        store = os.path.join(workdir, "store")
        os.makedirs(store)
        write(os.path.join(store, "a.txt"), "from the box\n", 0o644)
        plugin = write(os.path.join(workdir, "box_plugin"), f"""#!/bin/sh
if [ "$1" = -classad ]; then
    echo 'SupportedMethods = "box"'
    echo "AskedBy = \\"$PPID\\""
    echo 'StartdAttrs = "AskedBy"'
    exit 0
fi
cp {store}/${{1#box://*/}} "$2"
""", 0o755)
        with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
            fh.write(f"FILETRANSFER_PLUGINS = {plugin}\n")
        cell.start_daemon()
        execd, = cell.start_execds(["node2"])

        def asked():
            rows = dict(line.split(None, 1) for line in cell.run(
                "condor_status", "-af", "Machine", "AskedBy").stdout.splitlines())
            return rows.get("node2", "").strip() == str(execd.pid) and rows
        rows = wait_for(asked, timeout=20)
        assert rows["testhost"].strip() not in ("", "undefined", str(execd.pid))     # asked by the dispatcher
        assert "box" in _published(cell, "HasFileTransferPluginMethods").split(",")
        cluster = submit(cell, "executable = /bin/cat\narguments = a.txt\noutput = out.txt\n"
                               "should_transfer_files = YES\ntransfer_input_files = box://any/a.txt\n"
                               "requirements = Machine == \"node2\"\nlog = r.log\nqueue\n", cwd=workdir)
        wait_events(os.path.join(workdir, "r.log"), f"{cluster}.0", [0, 40, 40, 1, 40, 40, 5])
        assert open(os.path.join(workdir, "out.txt")).read() == "from the box\n"
    finally:
        destroy_cell(cell)
