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
package's cached bytecode, holds as its *eager* entries the compiled code of
the gridtools modules the command's module imports (itself included, and the
modules they import in turn: what importing it loads, which their sources
decide, not what a run of the command happens to need besides), in the order
their loading ended (each after the modules it imports), with each source's
place in the package, modification time and size. Loading them from it skips
the import system's search and locking for each, which costs more than their
code. Its *lazy* entries are the modules the command's runs imported later,
inside its functions (the ClassAd parser for a submit description's
expressions, the job store for ``qstat -j``): each the bytes of its
marshalled code, with its source's place, modification time and size. The
bundle is a short prefix (``BUNDLE_MAGIC`` and the length of the head), the
head (the eager entries and the lazy entries' index, marshalled) and the
lazy entries' code. A start reads only the prefix and the head, and keeps
the bundle open: none of the lazy code is read or run then (reading it would
cost a plain qstat a few hundredths of its time, in the pages the bytes
fill). When a run imports a lazy module, the finder reads its code from the
bundle (one ``pread``) while its source is unchanged: the import system's
search and locking remain, the opening and reading of its cached bytecode
go. The code is kept without its docstrings (as ``python -OO`` compiles it,
but with its asserts): they are a sixth of it, and reading them costs every
start while no command reads them. The eager entries are used only when
every one of their sources is unchanged, a lazy entry only when its own is.
The bundle is written again (when the folder is writable, atomically) when
importing the command loaded modules it lacked, and when a run that ended by
returning from the command imported modules its lazy entries lacked or held
for another source: then with the lazy entries it held whose sources are
unchanged and those the run imported. A module the command's module imports
is eager, never lazy. The modules on a hot command's path are imported at
the top of the modules that need them, so that the bundle holds them.

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

#: what a bundle starts with: the bytecode's magic number and the bundle's own format; then
#: comes the length of its head (4 bytes, little-endian), the head, and the lazy entries' code
BUNDLE_MAGIC = _EXTERNAL.MAGIC_NUMBER + b"bdl2"


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
    """Loads a gridtools module from a bundle's lazy entry for this very source when
    there is one (``bundled``: the finder, and the entry; an entry that cannot be read
    is dropped, so that the bundle is written again); else from its cached bytecode
    when the cache holds the source's modification time and size (what Python's own
    loader checks), else as Python's own loader does (compiling the source and
    caching it). Tells ``loaded`` of each module it loaded."""

    def __init__(self, name, path, cached, source, loaded=None, bundled=None):
        super().__init__(name, path)
        self.cached, self.source, self.loaded, self.bundled = cached, source, loaded, bundled

    def get_code(self, fullname):
        if self.bundled is not None:
            import marshal
            finder, entry = self.bundled
            try:
                code = marshal.loads(finder.code_of(entry))
                sys.modules["_imp"]._fix_co_filename(code, self.path)
                return code
            except (EOFError, ValueError, TypeError):
                finder.lazy.pop(fullname, None)
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
    (name, source, its stat, code) of each module loaded, in the order loading ended.
    ``lazy``: a bundle's lazy entries, name -> (source's place in the package, its
    modification time in nanoseconds, its size, where its marshalled code starts in
    the bundle's tail, its length); a module whose source is still that one is
    loaded from there. ``tail``: the bundle, open, and where its tail starts."""

    def __init__(self, folder, tag):
        self.folder, self.tag, self.loaded, self.lazy, self.tail = folder, tag, [], {}, None

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
            held = self.lazy.get(name)
            bundled = (self, held) if held is not None and held[1] == st.st_mtime_ns \
                and held[2] == st.st_size and self.folder + held[0] == source else None
            return self.spec(name, source, st, package, self.loaded, bundled)
        return None

    def code_of(self, entry):
        """The marshalled code of lazy entry ``entry``, read from the bundle (b"" when
        it cannot be)."""
        import posix
        try:
            fd, start = self.tail
            data = posix.pread(fd, entry[4], start + entry[3])
        except (OSError, TypeError, ValueError, IndexError, OverflowError):
            return b""
        return data if len(data) == entry[4] else b""

    def spec(self, name, source, st, package, loaded=None, bundled=None):
        head, _, tail = source.rpartition("/")
        cached = f"{head}/__pycache__/{tail[:-3]}.{self.tag}.pyc"
        spec = _BOOTSTRAP.ModuleSpec(name, CachedLoader(name, source, cached, st, loaded, bundled), origin=source,
                                     is_package=package)
        spec.has_location, spec.cached = True, cached
        if package:
            spec.submodule_search_locations = [head]
        return spec


class Bundle:
    """The bundle of one command (see the module's docstring). ``order`` is the list the
    finder tells of the modules it loaded, in the order loading ended; the bundle adds
    those it loads itself, so the list is the order to load them all in next time.
    Its first ``eager`` entries are what importing the command loaded, the others what
    its run imported later."""

    def __init__(self, finder, command):
        self.finder, self.order, self.held, self.eager = finder, finder.loaded, set(), 0
        self.path = f"{finder.folder}/__pycache__/launch.{command}.{finder.tag}.bundle"

    def read(self):
        """(name, source, its stat, code) of the eager modules of the bundle when it is
        whole and their sources are unchanged, else []. Reads only the head: gives the
        finder the lazy entries and the bundle, left open, to read their code from
        when their modules are imported (each entry is checked then)."""
        import marshal
        import posix
        found, folder, finder = [], self.finder.folder, self.finder
        try:
            fd = posix.open(self.path, posix.O_RDONLY)
        except OSError:
            return []
        try:
            prefix = posix.read(fd, len(BUNDLE_MAGIC) + 4)
            length = int.from_bytes(prefix[-4:], "little")
            head = posix.read(fd, length) if prefix[:-4] == BUNDLE_MAGIC else b""
            if len(head) != length or not length:
                return []
            entries, lazy = marshal.loads(head)
            if type(lazy) is dict and lazy:
                finder.lazy, finder.tail, fd = lazy, (fd, len(prefix) + length), None
            for name, where, mtime, size, code in entries:
                source = folder + where
                st = posix.stat(source)
                if st.st_mtime_ns != mtime or st.st_size != size:
                    return []
                sys.modules["_imp"]._fix_co_filename(code, source)
                found.append((name, source, st, code))
        except (OSError, EOFError, ValueError, TypeError, MemoryError):     # (a length gone wrong)
            return []
        finally:
            if fd is not None:
                posix.close(fd)
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

    def started(self):
        """The command's module is imported: what is loaded so far is the eager part.
        Write the bundle again when it did not hold all of it."""
        self.eager = len(self.order)
        if any(name not in self.held for name, _source, _st, _code in self.order):
            self.write()

    def ended(self):
        """The command ran: write the bundle again when the run imported modules the
        bundle's lazy entries did not hold (or held for another source)."""
        if len(self.order) == self.eager:
            return
        lazy, folder = self.finder.lazy, self.finder.folder
        for name, source, st, _code in self.order[self.eager:]:
            held = lazy.get(name)
            if held is None or held[1] != st.st_mtime_ns or held[2] != st.st_size or folder + held[0] != source:
                self.write()
                return

    def write(self):
        """Write the bundle again: as its eager entries, the modules loaded when the
        command's module was imported, in the order loading ended; as its lazy entries,
        those loaded since (from the lazy entries the bundle held when their source is
        that one) and the lazy entries it held for modules not loaded whose sources are
        unchanged. A module is never both."""
        import marshal
        import posix
        folder = self.finder.folder
        if not posix.access(f"{folder}/__pycache__", posix.W_OK):
            return                  # a shared install: compiling the entries would be for nothing
        entries = [(name, source[len(folder):], st.st_mtime_ns, st.st_size, without_docstrings(code))
                   for name, source, st, code in self.order[:self.eager] if source.startswith(folder + "/")]
        eager = {entry[0] for entry in entries}
        kept = {}
        for name, held in self.finder.lazy.items():
            try:
                st = posix.stat(folder + held[0])
            except (OSError, TypeError, IndexError):
                continue
            data = b""
            if name not in eager and held[1] == st.st_mtime_ns and held[2] == st.st_size:
                data = self.finder.code_of(held)
            if data:
                kept[name] = (held[0], held[1], held[2], data)
        for name, source, st, code in self.order[self.eager:]:
            where = source[len(folder):]
            if name in eager or not source.startswith(folder + "/") \
                    or kept.get(name, ())[:3] == (where, st.st_mtime_ns, st.st_size):
                continue
            kept[name] = (where, st.st_mtime_ns, st.st_size, marshal.dumps(without_docstrings(code)))
        lazy, codes, start = {}, [], 0
        for name, (where, mtime, size, data) in kept.items():
            lazy[name] = (where, mtime, size, start, len(data))
            codes.append(data)
            start += len(data)
        head = marshal.dumps((entries, lazy))
        tmp = f"{self.path}.{posix.getpid()}"
        try:
            with open(tmp, "xb") as fh:
                fh.write(BUNDLE_MAGIC + len(head).to_bytes(4, "little") + head + b"".join(codes))
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


#: what Python's locale coercion (PEP 538) sets LC_CTYPE to when the caller's locale is
#: C or POSIX
COERCED_CTYPES = (b"C.UTF-8", b"C.utf8", b"UTF-8")


def keep_callers_locale():
    """Undo Python's locale coercion in the environment: under the C or POSIX locale the
    interpreter sets LC_CTYPE=C.UTF-8 in its own environment before any code runs (the
    launchers' -I takes PYTHONCOERCECLOCALE away), and what the commands pass on (qsub
    -V and -v, qalter, qrsh, condor_submit getenv, the programs they start) would carry
    a variable the caller never set, or another value than the caller's. The
    environment the process was started with stays in /proc/self/environ: LC_CTYPE goes
    back to its value there, or away when it had none. Only read when LC_CTYPE holds a
    value the coercion sets."""
    import posix
    value = posix.environ.get(b"LC_CTYPE")
    if value not in COERCED_CTYPES:
        return
    try:
        with open("/proc/self/environ", "rb") as given:
            entries = given.read().split(b"\0")
    except OSError:
        return
    original = next((entry[9:] for entry in entries if entry.startswith(b"LC_CTYPE=")), None)
    if original == value:
        return
    if original is None:
        del posix.environ[b"LC_CTYPE"]
        posix.unsetenv(b"LC_CTYPE")
    else:
        posix.environ[b"LC_CTYPE"] = original
        posix.putenv(b"LC_CTYPE", original)


def main():
    """Run the command a launcher is named after, with sys.argv; never returns."""
    keep_callers_locale()
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
    if bundle is not None:
        bundle.started()
    code = entry.run(name)
    if bundle is not None:
        bundle.ended()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - a closed pipe: the interpreter's own exit reports it
        sys.exit(code)
    import posix
    posix._exit(code)
