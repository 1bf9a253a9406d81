"""What the launchers in bin/ run: a command's start-up and its end.

A launcher starts Python without the site module (``-I -S``) and with this
package first on its path, then calls ``main``, which

- adds two finders to the import system: ``OwnModules`` first, for
  gridtools' own modules (it goes to a module's file directly where Python's
  path finder looks through every folder and kind of file, which costs a
  command about a third of each import, and a qsub makes two dozen), and
  ``SiteOnDemand`` last, which runs the site module once a library only its
  paths hold is imported (click, lark, yaml, psutil, ...);
- runs the command named by the launcher's file name (``cli.entry``);
- for the short-lived commands of the hot path (``FAST_EXIT``), runs without
  the cyclic garbage collector, which would only walk objects about to be
  dropped, and leaves the interpreter at once when the command is done, its
  output flushed: tearing down the modules and objects costs more than a
  third of the interpreter's own start-up, and nothing is left to do (every
  file these commands write is closed and on disk before they print).

Only the standard library's built-in modules are imported here.
"""

import sys

#: short-lived commands that leave at once when done: no threads, no exit handlers, no
#: file left open for writing
FAST_EXIT = frozenset({"qsub", "qstat", "qdel", "qhold", "qrls", "condor_submit", "condor_q",
                       "condor_rm", "condor_hold", "condor_release"})

_BOOTSTRAP = sys.modules["_frozen_importlib"]
_EXTERNAL = sys.modules["_frozen_importlib_external"]


class SiteOnDemand:
    """The last finder: runs the site module once, then looks again."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        sys.meta_path.remove(SiteOnDemand)
        import importlib.util
        import site
        site.main()
        return importlib.util.find_spec(name) if path is None else None


class CachedLoader(_EXTERNAL.SourceFileLoader):
    """Loads a gridtools module from its cached bytecode when the cache holds the
    source's modification time and size (what Python's own loader checks), else as
    Python's own loader does (compiling the source and caching it)."""

    def __init__(self, name, path, cached, source):
        super().__init__(name, path)
        self.cached, self.source = cached, source

    def get_code(self, fullname):
        try:
            with open(self.cached, "rb", buffering=0) as fh:
                data = fh.readall()
        except OSError:
            data = b""
        st = self.source
        if data[:8] == _EXTERNAL.MAGIC_NUMBER + b"\0\0\0\0" \
                and data[8:12] == (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") \
                and data[12:16] == (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"):
            import marshal
            return marshal.loads(memoryview(data)[16:])
        return super().get_code(fullname)


class OwnModules:
    """The first finder, for gridtools' own modules (a package folder, then a module
    file, as Python's path finder tries them); None for every other name."""

    def __init__(self, folder, tag):
        self.folder, self.tag = folder, tag

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("gridtools."):
            return None
        import posix
        base = self.folder + name[9:].replace(".", "/")
        for source, package in ((base + "/__init__.py", True), (base + ".py", False)):
            try:
                st = posix.stat(source)
            except OSError:
                continue
            head, _, tail = source.rpartition("/")
            cached = f"{head}/__pycache__/{tail[:-3]}.{self.tag}.pyc"
            spec = _BOOTSTRAP.ModuleSpec(name, CachedLoader(name, source, cached, st), origin=source,
                                         is_package=package)
            spec.has_location, spec.cached = True, cached
            if package:
                spec.submodule_search_locations = [base]
            return spec
        return None


def main():
    """Run the command a launcher is named after, with sys.argv; never returns."""
    name = sys.argv[0].rpartition("/")[2]
    if "site" not in sys.modules:
        sys.meta_path.append(SiteOnDemand)
    tag = sys.implementation.cache_tag
    if tag and not sys.flags.optimize:
        sys.meta_path.insert(0, OwnModules(__file__.rpartition("/")[0], tag))
    from gridtools.cli.entry import run
    if name not in FAST_EXIT:
        sys.exit(run(name))
    import gc
    gc.disable()
    code = run(name)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - a closed pipe: the interpreter's own exit reports it
        sys.exit(code)
    import posix
    posix._exit(code)
