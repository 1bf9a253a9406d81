"""How an HTCondor job's files move to and from URLs: fetched or sent by the standard
library or by transfer plugins (``exec.transfer`` decides what moves where).

An input file given as a URL of one of ``URL_SCHEMES`` (what the slot ads
offer as ``HasFileTransferPluginMethods``) is fetched under the last name of
its path (``url_name``), as HTCondor's curl plugin fetches it, with the
standard library's URL opener (``chtc+https`` and the like: the scheme after
the last ``+``, ``-`` or ``.``, ``formats.condor.url_scheme``); a fetch that
fails, or lasts over ``URL_TIMEOUT`` seconds without data, fails the input
transfer. An output file is sent (``send``): ``http`` and ``https`` PUT its
bytes, as HTCondor's curl plugin uploads.

A URL whose scheme the job's own plugins move (``transfer_plugins``:
``plugin_table``) is moved by its plugin, copied into the scratch folder with
the input files and run from there with the owner's identity, by HTCondor's
multi-file protocol (``run_plugin``). Else one the pool's plugins move
(``FILETRANSFER_PLUGINS``, ``exec.poolplugins``) is moved by that plugin, run
from where it is installed, by the multi-file protocol or, for a plugin that
does not speak it, once per file (``run_single``). ``mover`` tells which.
"""

import os
import shutil

#: the URL schemes input files may be fetched from (the slot ads' HasFileTransferPluginMethods)
URL_SCHEMES = ("data", "file", "ftp", "http", "https")
#: seconds a URL fetch may wait for data
URL_TIMEOUT = 300
#: seconds a job's transfer plugin may run (HTCondor's MAX_FILE_TRANSFER_PLUGIN_LIFETIME)
PLUGIN_LIFETIME = 72000
#: the files a plugin run reads its transfers from and writes its answers to, in the folder
PLUGIN_IN, PLUGIN_OUT = ".gridtools_plugin.in", ".gridtools_plugin.out"


def plugin_table(text, iwd):
    """The job's own transfer plugins, from its TransferPlugins (``transfer_plugins``:
    entries ``method[,method...]=path`` separated by ``;``, a path relative to ``iwd``;
    an entry without ``=`` is left out): method (in lower case) -> path."""
    table = {}
    for entry in (text or "").split(";"):
        methods, equals, path = entry.partition("=")
        path = path.strip()
        if not equals or not path:
            continue
        for method in methods.replace(",", " ").split():
            table[method.lower()] = os.path.join(iwd, path)
    return table


def mover(url, folder, plugins, pool):
    """(the plugin that moves ``url``, True when it speaks the multi-file protocol): the
    job's own (run from its copy in the scratch folder), else the pool's (``pool``: a
    plan's table, ``exec.poolplugins``); None when neither has one for its scheme."""
    plugin = _plugin_for(url, plugins)
    if plugin is not None:
        return _in_folder(plugin, folder), True
    found = _plugin_for(url, pool)
    return (found[0], bool(found[1])) if found is not None else None


def by_plugin(url, local, folder, plugins, pool=None, env=None):
    """Fetch ``url`` into ``local`` with its plugin (``mover``); False when there is
    none for it."""
    found = mover(url, folder, plugins, pool)
    if found is None:
        return False
    plugin, multi = found
    if multi:
        run_plugin(plugin, [(url, local)], folder, env)
    else:
        run_single(plugin, url, local, folder, env)
    return True


def _plugin_for(url, plugins):
    """The entry of ``plugins`` (a job's table or the pool's) for ``url``: its whole
    scheme's, else that of the scheme after its last ``+``, ``-`` or ``.``; or None."""
    if not plugins:
        return None
    whole = url.partition("://")[0].lower()
    return plugins.get(whole) or plugins.get(plain_url(url)[0])


def _in_folder(plugin, folder):
    """The copy of ``plugin`` that the input files brought into ``folder`` (run from there,
    as HTCondor's starter runs a job's plugin from its sandbox), else ``plugin``."""
    copy = os.path.join(folder, os.path.basename(plugin))
    return copy if os.path.isfile(copy) else plugin


def run_plugin(plugin, pairs, folder, env=None, upload=False):
    """Transfer ``pairs`` ((URL, local path) each) with a job's transfer plugin, by
    HTCondor's multi-file protocol: it reads an ad per transfer (``Url``,
    ``LocalFileName``) from the file ``-infile`` names, and writes an ad per transfer
    (``TransferSuccess``, ``TransferError``, ``TransferUrl``, ``TransferFileName``) to
    the one ``-outfile`` names; ``-upload`` sends local files to the URLs. Run in
    ``folder``; OSError (the plugin's exit status, or EIO) saying, in HTCondor's words,
    what failed."""
    import subprocess
    from gridtools.classad.parser import ClassAdSyntaxError, parse_bracketed_ads
    from gridtools.classad.values import quote_string
    infile, outfile = os.path.join(folder, PLUGIN_IN), os.path.join(folder, PLUGIN_OUT)
    with open(infile, "w") as fh:
        fh.write("".join(f"[ Url = {quote_string(url)}; LocalFileName = {quote_string(path)} ]\n"
                         for url, path in pairs))
    open(outfile, "w").close()
    argv = [plugin, "-infile", infile, "-outfile", outfile] + (["-upload"] if upload else [])
    try:
        done = subprocess.run(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=PLUGIN_LIFETIME)
        with open(outfile, errors="replace") as fh:
            said = fh.read()
    except (OSError, subprocess.SubprocessError) as exc:
        raise OSError(5, f"FILETRANSFER:1:failed to run {plugin}: {exc}") from None
    finally:
        for path in (infile, outfile):
            try:
                os.unlink(path)
            except OSError:
                pass
    try:
        answers = parse_bracketed_ads(said)
    except ClassAdSyntaxError:
        answers = []
    failed = [ad for ad in answers if ad.eval("TransferSuccess") is not True]
    if done.returncode == 0 and len(answers) >= len(pairs) and not failed:
        return
    bad = failed[0] if failed else None
    error = bad.eval("TransferError") if bad is not None else None
    url = bad.eval("TransferUrl") if bad is not None else pairs[0][0]
    why = f"FILETRANSFER:1:non-zero exit ({done.returncode}) from {plugin}." if done.returncode else \
        f"FILETRANSFER:1:{plugin} did not transfer every file."
    if isinstance(error, str) and error:
        why += f" |Error: {error} ( URL file = {url} )|"
    raise OSError(done.returncode or 5, why)


def failed_url(exc, pairs):
    """The URL a failed run of a multi-file plugin names (``run_plugin``'s words), else
    the first it was given."""
    said = str(exc.strerror or "")
    start = said.rfind("( URL file = ")
    return said[start + 13:].rpartition(" )|")[0] if start >= 0 else pairs[0][0]


def run_single(plugin, source, destination, folder, env=None):
    """Copy ``source`` to ``destination`` (one of them a URL) with a plugin that moves one
    file a run, as HTCondor runs one: ``<plugin> <source> <destination>``, in ``folder``; its
    output is ``Name = value`` lines (``TransferError``, ``TransferUrl`` when it fails).
    OSError (its exit status, else EIO) saying, in HTCondor's words, what failed."""
    import subprocess
    try:
        done = subprocess.run([plugin, source, destination], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=PLUGIN_LIFETIME)
    except subprocess.TimeoutExpired:
        raise OSError(62, f"FILETRANSFER:1:File transfer plugin {plugin} timed out after "
                          f"{PLUGIN_LIFETIME} seconds.") from None          # (ETIME)
    except OSError as exc:
        raise OSError(5, f"FILETRANSFER:1:Failed to execute {plugin}: {exc.strerror or exc}") from None
    if done.returncode == 0:
        return
    said = stats(done.stdout.decode("utf-8", "replace"))
    error = said.get("TransferError") or \
        f"File transfer plugin {plugin} exited unexpectedly without producing an error message "
    url = said.get("TransferUrl", "")
    how = f"exit by signal {-done.returncode}" if done.returncode < 0 else f"non-zero exit ({done.returncode})"
    raise OSError(max(done.returncode, 0) or 5,
                  f"FILETRANSFER:1:{how} from {plugin}. |Error: {error} ( URL file = {url} )|")


def stats(text):
    """The string values of the ``Name = "value"`` lines of a plugin's output."""
    from gridtools.classad import ClassAd, ClassAdSyntaxError, parse
    found = {}
    for line in text.splitlines():
        name, eq, value = line.partition("=")
        if not eq:
            continue
        try:
            node = parse(value.strip())
        except (ClassAdSyntaxError, ValueError):
            continue
        got = ClassAd({"v": node}).eval("v")
        if isinstance(got, str):
            found[name.strip()] = got
    return found


def plain_url(url):
    """(the scheme of ``url`` in lower case, the URL with that scheme: ``chtc+https://x``
    is ``https://x``)."""
    from gridtools.formats.condor import url_scheme
    scheme = url_scheme(url).lower()
    return scheme, scheme + "://" + url.partition("://")[2]


def url_name(url):
    """The name a file fetched from ``url`` takes: the last name of its path."""
    import urllib.parse
    return os.path.basename(urllib.parse.urlparse(plain_url(url)[1]).path.rstrip("/")) or "index"


def fetch(url, folder):
    """Fetch ``url`` into ``folder`` under the last name of its path."""
    import urllib.request
    scheme, plain = plain_url(url)
    if scheme not in URL_SCHEMES:
        raise OSError(f"no plugin for {scheme or url} URLs")
    with urllib.request.urlopen(plain, timeout=URL_TIMEOUT) as answer, \
            open(os.path.join(folder, url_name(url)), "wb") as out:
        shutil.copyfileobj(answer, out)


def send(path, url):
    """Send the file at ``path`` to ``url`` (see the module docstring)."""
    import urllib.request
    scheme, plain = plain_url(url)
    if scheme not in ("http", "https"):
        raise OSError(95, f"no plugin sends files to {scheme or url} URLs")    # (EOPNOTSUPP)
    with open(path, "rb") as fh:
        request = urllib.request.Request(plain, data=fh, method="PUT",
                                         headers={"Content-Length": str(os.fstat(fh.fileno()).st_size)})
        try:
            with urllib.request.urlopen(request, timeout=URL_TIMEOUT) as answer:
                answer.read()
        except OSError as exc:
            raise OSError(5, f"{url}: {exc}") from None                        # (EIO)
