"""What the launchers in bin/ run: a command's start-up and its end.

A launcher starts Python without the site module (``-I -S``) and with this
package first on its path, then calls ``main``, which

- adds two finders to the import system: ``OwnModules`` first, for
  gridtools' own modules (it goes to a module's file directly where Python's
  path finder looks through every folder and kind of file, which costs a
  command about a third of each import, and a qsub makes two dozen), and
  ``SiteOnDemand`` last, which runs the site module once a library only its
  paths hold is imported (click, lark, yaml, psutil, ...);
- for the short-lived commands of the hot path (``FAST_EXIT``), loads the
  modules of the command from its *bundle* (below);
- runs the command named by the launcher's file name (``cli.entry``);
- for those short-lived commands, runs without the cyclic garbage collector,
  which would only walk objects about to be dropped, and leaves the
  interpreter at once when the command is done, its output flushed: tearing
  down the modules and objects costs more than a third of the interpreter's
  own start-up, and nothing is left to do (every file these commands write
  is closed and on disk before they print).

A bundle, ``__pycache__/launch.<command>.<cache tag>.bundle`` beside the
package's cached bytecode, holds the compiled code of the gridtools modules
the command's module imports (itself included, and the modules they import
in turn: what importing it loads, which their sources decide, not what a
run of the command happens to need besides), in the order their loading
ended (each after the modules it imports), with each source's place in the
package, modification time and size. Loading them from it skips the import system's search and
locking for each, which costs more than their code. The code is kept
without its docstrings (as ``python -OO`` compiles it, but with its
asserts): they are a sixth of it, and reading them costs every start while
no command reads them. A bundle is used only when every source is
unchanged, and written again (when the folder is writable, atomically) when
importing the command loaded modules it lacked. The modules on a hot
command's path are imported at the top of the modules that need them, so
that the bundle holds them.

Only the standard library's built-in modules are imported here (and, when
a bundle is written, ``opcode``).
"""

import sys

#: short-lived commands that leave at once when done: no threads, no exit handlers, no
#: file left open for writing
FAST_EXIT = frozenset({"qsub", "qstat", "qdel", "qhold", "qrls", "condor_submit", "condor_q",
                       "condor_rm", "condor_hold", "condor_release"})

_BOOTSTRAP = sys.modules["_frozen_importlib"]
_EXTERNAL = sys.modules["_frozen_importlib_external"]


#: names the standard library tries to import only to learn that they are missing (the
#: ``copy`` module looks for Jython's ``org.python.core``): no reason to run the site module
PROBES = frozenset({"org"})


class SiteOnDemand:
    """The last finder: runs the site module once, then looks again (not for ``PROBES``)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in PROBES:
            return None
        sys.meta_path.remove(SiteOnDemand)
        import importlib.util
        import site
        site.main()
        return importlib.util.find_spec(name) if path is None else None


class CachedLoader(_EXTERNAL.SourceFileLoader):
    """Loads a gridtools module from its cached bytecode when the cache holds the
    source's modification time and size (what Python's own loader checks), else as
    Python's own loader does (compiling the source and caching it). Tells ``loaded``
    of each module it loaded."""

    def __init__(self, name, path, cached, source, loaded=None):
        super().__init__(name, path)
        self.cached, self.source, self.loaded = cached, source, loaded

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
            code = marshal.loads(memoryview(data)[16:])
            sys.modules["_imp"]._fix_co_filename(code, self.path)     # as Python's loader does
            return code
        return super().get_code(fullname)

    def exec_module(self, module):
        code = self.get_code(module.__name__)
        exec(code, module.__dict__)
        if self.loaded is not None:
            self.loaded.append((module.__name__, self.path, self.source, code))


class OwnModules:
    """The first finder, for gridtools' own modules (a package folder, then a module
    file, as Python's path finder tries them); None for every other name. ``loaded``:
    (name, source, its stat, code) of each module loaded, in the order loading ended."""

    def __init__(self, folder, tag):
        self.folder, self.tag, self.loaded = folder, tag, []

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
            return self.spec(name, source, st, package, self.loaded)
        return None

    def spec(self, name, source, st, package, loaded=None):
        head, _, tail = source.rpartition("/")
        cached = f"{head}/__pycache__/{tail[:-3]}.{self.tag}.pyc"
        spec = _BOOTSTRAP.ModuleSpec(name, CachedLoader(name, source, cached, st, loaded), origin=source,
                                     is_package=package)
        spec.has_location, spec.cached = True, cached
        if package:
            spec.submodule_search_locations = [head]
        return spec


class Bundle:
    """The bundle of one command (see the module's docstring). ``order`` is the list the
    finder tells of the modules it loaded, in the order loading ended; the bundle adds
    those it loads itself, so the list is the order to load them all in next time."""

    def __init__(self, finder, command):
        self.finder, self.order, self.held = finder, finder.loaded, set()
        self.path = f"{finder.folder}/__pycache__/launch.{command}.{finder.tag}.bundle"

    def read(self):
        """(name, source, its stat, code) of the modules of the bundle when it is whole
        and its sources are unchanged, else []."""
        import marshal
        import posix
        found, folder = [], self.finder.folder
        try:
            with open(self.path, "rb", buffering=0) as fh:
                magic, entries = marshal.loads(fh.readall())
            if magic != _EXTERNAL.MAGIC_NUMBER:
                return []
            for name, where, mtime, size, code in entries:
                source = folder + where
                st = posix.stat(source)
                if st.st_mtime_ns != mtime or st.st_size != size:
                    return []
                sys.modules["_imp"]._fix_co_filename(code, source)
                found.append((name, source, st, code))
        except (OSError, EOFError, ValueError, TypeError):
            return []
        return found

    def load(self):
        """Load the bundle's modules that are not loaded yet; on any failure, take back
        the ones it loaded (the import system loads them then, and says what failed).
        A package whose ``__init__`` imports its own modules ends loading after them:
        those find it in ``sys.modules`` as a module not yet run (a *shell*), which
        runs when its turn comes."""
        entries = self.read()
        self.held = {entry[0] for entry in entries}
        packages = {entry[0]: entry for entry in entries if entry[1].endswith("/__init__.py")}
        made, start, shells = [], len(self.order), {}
        try:
            for name, source, st, code in entries:
                if name not in sys.modules or name in shells:
                    self._load(name, source, st, code, packages, shells, made)
            if shells:
                raise ImportError(f"bundle: packages never run: {sorted(shells)}")
        except Exception:  # noqa: BLE001 - see the docstring
            for name in made:
                sys.modules.pop(name, None)
            del self.order[start:]
            self.held = set()

    def _load(self, name, source, st, code, packages, shells, made):
        parent, _, child = name.rpartition(".")
        module = shells.pop(name, None) if shells else None
        if module is None:
            if parent not in sys.modules:
                self._shell(parent, packages, shells, made)
            module = self._module(name, source, st)
            made.append(name)
        exec(code, module.__dict__)
        setattr(sys.modules[parent], child, module)
        self.order.append((name, source, st, code))

    def _shell(self, name, packages, shells, made):
        """Put package ``name`` in ``sys.modules`` as a shell when the bundle holds it
        (its own parents first)."""
        if name not in packages:
            return
        parent = name.rpartition(".")[0]
        if parent not in sys.modules:
            self._shell(parent, packages, shells, made)
        _name, source, st, _code = packages[name]
        shells[name] = self._module(name, source, st)
        made.append(name)

    def _module(self, name, source, st):
        """A new module for ``name`` from ``source``, set up as the import system sets
        one up, in ``sys.modules``."""
        package = source.endswith("/__init__.py")
        spec = self.finder.spec(name, source, st, package)
        module = type(sys)(name)
        module.__spec__, module.__loader__, module.__file__ = spec, spec.loader, source
        module.__cached__, module.__package__ = spec.cached, name if package else name.rpartition(".")[0]
        if package:
            module.__path__ = spec.submodule_search_locations
        sys.modules[name] = module
        return module

    def stale(self):
        """True when importing the command loaded modules the bundle did not hold."""
        return any(name not in self.held for name, _source, _st, _code in self.order)

    def write(self):
        """Write the bundle again: the modules loaded so far, in the order loading ended."""
        import marshal
        import posix
        folder = self.finder.folder
        entries = [(name, source[len(folder):], st.st_mtime_ns, st.st_size, without_docstrings(code))
                   for name, source, st, code in self.order if source.startswith(folder + "/")]
        tmp = f"{self.path}.{posix.getpid()}"
        try:
            with open(tmp, "xb") as fh:
                fh.write(marshal.dumps((_EXTERNAL.MAGIC_NUMBER, entries)))
            posix.rename(tmp, self.path)
        except (OSError, ValueError):
            try:
                posix.unlink(tmp)
            except OSError:
                pass


#: co_flags of a function's code (CO_OPTIMIZED | CO_NEWLOCALS): a module's and a class
#: body's have neither
_FUNCTION = 0x3


def without_docstrings(code):
    """``code`` and the code it holds without docstrings, as ``-OO`` compiles them: a
    function's docstring (its first constant, which no instruction reads: the function
    takes it from there) and the text a module or class body stores as ``__doc__``
    become None. A text an instruction also reads is kept."""
    import opcode
    consts = list(code.co_consts)
    for i, const in enumerate(consts):
        if isinstance(const, type(code)):
            consts[i] = without_docstrings(const)
    steps = list(_instructions(code.co_code, opcode.EXTENDED_ARG))
    reads = [arg for op, arg in steps if op in opcode.hasconst]
    if code.co_flags & _FUNCTION == _FUNCTION:
        if consts and isinstance(consts[0], str) and not code.co_name.startswith("<") and 0 not in reads:
            consts[0] = None
    else:
        load, store = opcode.opmap["LOAD_CONST"], opcode.opmap["STORE_NAME"]
        for (op, arg), (next_op, next_arg) in zip(steps, steps[1:]):
            if op == load and next_op == store and code.co_names[next_arg] == "__doc__" \
                    and isinstance(consts[arg], str) and reads.count(arg) == 1:
                consts[arg] = None
    return code.replace(co_consts=tuple(consts))


def _instructions(raw, extended):
    """(opcode, argument) of each instruction of bytecode ``raw`` (EXTENDED_ARG folded in,
    the inline caches, opcode 0, left out)."""
    high = 0
    for at in range(0, len(raw), 2):
        op, arg = raw[at], raw[at + 1] | high
        if op == extended:
            high = arg << 8
            continue
        high = 0
        if op:
            yield op, arg


def main():
    """Run the command a launcher is named after, with sys.argv; never returns."""
    name = sys.argv[0].rpartition("/")[2]
    if "site" not in sys.modules:
        sys.meta_path.append(SiteOnDemand)
    tag = sys.implementation.cache_tag
    finder = OwnModules(__file__.rpartition("/")[0], tag) if tag and not sys.flags.optimize else None
    if finder is not None:
        sys.meta_path.insert(0, finder)
    if name not in FAST_EXIT:
        from gridtools.cli.entry import run
        sys.exit(run(name))
    import gc
    gc.disable()
    bundle = Bundle(finder, name) if finder is not None else None
    if bundle is not None:
        bundle.load()
    from gridtools.cli import entry
    entry.command_module(name)
    if bundle is not None and bundle.stale():
        bundle.write()
    code = entry.run(name)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - a closed pipe: the interpreter's own exit reports it
        sys.exit(code)
    import posix
    posix._exit(code)
