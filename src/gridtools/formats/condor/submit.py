"""Submit descriptions: the text ``condor_submit`` reads, parsed and turned
into job ClassAds.

A description is a sequence of lines:

  ``name = value``          a submit command or a macro (names are
                            case-insensitive; every command is also a macro)
  ``+Attr = expr`` / ``MY.Attr = expr``   an attribute copied into the job ad
  ``-Attr =``               the attribute made undefined (whatever follows ``=``)
  ``queue ...``             makes jobs from the commands above it (see queue);
                            ``iterate`` (or ``iter``, ``itera``, ``iterat``) is
                            another word for ``queue``
  ``# ...``                 a comment; a line ending in ``\\`` continues

``parse_submit`` returns a ``SubmitDescription``; its ``job_ads`` expands
the macros for every job and builds the ads as HTCondor would (see jobad).
``append`` lines (``condor_submit -append``) go just before the first queue
statement; a ``queue_override`` (``-queue``) replaces a missing queue
statement and is an error when the text has one.
"""

from gridtools.errors import InputError, lines

#: the letters a command's name starts with: ASCII letters and ``_``, and the four other
#: letters that match them when case is ignored (as HTCondor's names are)
NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_\u0130\u0131\u017f\u212a")
#: the characters the rest of a name is made of
NAME_REST = NAME_START | frozenset("0123456789.")


# What an assignment sets (plain constants, as a class would cost a submission more than
# all of its statements):
COMMAND = "command"  # name = value: a submit command and a macro
ATTRIBUTE = "attribute"  # +Name = expr / MY.Name = expr


# The statements are plain slotted classes, equal when their fields are (declaring them
# as records, or with a common base class, costs a submission more than reading them).

def _same_fields(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    for name in self.FIELDS:
        if getattr(self, name) != getattr(other, name):
            return False
    return True


def _fields_repr(self):
    return f"{type(self).__name__}{tuple(getattr(self, name) for name in self.FIELDS)!r}"


class Assignment:
    __slots__ = FIELDS = ("name", "value", "kind", "line")
    __eq__, __repr__, __hash__ = _same_fields, _fields_repr, None

    def __init__(self, name, value, kind=COMMAND, line=0):
        self.name, self.value, self.kind, self.line = name, value, kind, line

    def render(self):
        prefix = "+" if self.kind == ATTRIBUTE else ""
        return f"{prefix}{self.name} = {self.value}"


#: the queue statement whose jobs are being built (the last one whose arguments were
#: read), and whether its items have been read since: where condor_submit says a macro's
#: problem is (``MacroReport``)
_current_queue = [None, False]


class QueueStatement:
    """A queue statement: ``args``, the text after ``queue`` (macros not yet expanded);
    ``inline``, the lines of a list opened by ``(`` on its line (None: none); ``line``,
    the line the statement's own text ends on (its last when ``\\`` continues it: where
    HTCondor's condor_submit has read to when it reads the statement's arguments; 0 for
    the ``-queue`` argument); ``end``, the line its items end on (that of the ``)`` that
    closes its list of lines, else ``line``)."""

    __slots__ = ("_args", "_inline", "line", "end")
    FIELDS = ("_args", "_inline", "line")
    __eq__, __repr__, __hash__ = _same_fields, _fields_repr, None

    def __init__(self, args="", inline=None, line=0, end=None):
        self._args = args
        self._inline = inline
        self.line = line
        self.end = line if end is None else end

    @property
    def args(self):
        # (its jobs are built after their arguments are read, and expanded)
        _current_queue[0], _current_queue[1] = self, False
        return self._args

    @args.setter
    def args(self, value):
        self._args = value

    @property
    def inline(self):
        if _current_queue[0] is self:       # (its items are read after its arguments)
            _current_queue[1] = True
        return self._inline

    @inline.setter
    def inline(self, value):
        self._inline = value

    def render(self):
        head = f"queue {self.args}".rstrip()
        if self.inline is None:
            return head
        return head + "\n" + "".join(line + "\n" for line in self.inline) + ")"


class SubmitDescription:
    """The statements of a submit description, in order."""

    __slots__ = ("statements", "source")

    def __init__(self, statements=None, source="submit file"):
        self.statements = [] if statements is None else statements
        self.source = source

    @property
    def queues(self):
        return [s for s in self.statements if isinstance(s, QueueStatement)]

    def render(self):
        return "".join(s.render() + "\n" for s in self.statements)

    def job_ads(self, cluster_id, context, procid=0):
        """The job ClassAds, item data expanded; see jobad.build_jobs."""
        return [draft.classad() for draft in self.job_drafts(cluster_id, context, procid)]

    def job_drafts(self, cluster_id, context, procid=0):
        """The job ads as ``classad.draft.DraftAd``s (what condor_submit prints and
        queues without making ClassAds of them)."""
        from gridtools.formats.condor.jobad import build_jobs
        if "$" not in self.render():
            return build_jobs(self, cluster_id, context, procid)
        from gridtools.formats.condor.macros import Expander
        Expander.report = MacroReport(self.source)
        try:
            return build_jobs(self, cluster_id, context, procid)
        finally:
            Expander.report = None
            _current_queue[0], _current_queue[1] = None, False


class MacroReport:
    """How condor_submit refuses a problem of a macro function (``$INT()`` of a value
    that is no integer, ``$RANDOM_INTEGER()`` of a bad range...) met while its jobs are
    built, as HTCondor 24's condor_submit does (its macro code stops the program, which
    says the problem where it is): ``ERROR at Queue statement on Line N: ...``
    (``ERROR with -queue argument: ...``) and, once the statement's items are read, a
    line of the job's step and item index; no job is submitted and the exit code is 4
    (HTCondor's JOB_EXCEPTION). N is the line condor_submit has read the description to:
    the statement's own (its last) while its arguments are expanded, then that of the
    ``)`` closing its list of lines, when its items are written on the lines after it."""

    #: condor_submit's exit code after such a problem
    EXIT_CODE = 4

    def __init__(self, source):
        self.source = source

    def __call__(self, exp, message):
        """The InputError that refuses ``message`` met by the expansion ``exp``."""
        statement, items = _current_queue
        if statement is None:
            where = ""
        elif statement.line == 0:
            where = " with -queue argument"
        else:
            where = f" at Queue statement on Line {statement.end if items else statement.line}"
        said = [f"ERROR{where}: {message}"]
        step, index = exp.lookup("step"), exp.lookup("itemindex")
        if statement is not None and items and step is not None and index is not None:
            said.append(f"\t at Step {step}, ItemIndex {index}")
        return InputError(lines(*said), self.EXIT_CODE)


def error_at(line, message, source="submit file"):
    return InputError(f"ERROR: on Line {line} of {source}: {message}")


class LogicalLines:
    """The logical lines of a text: (line number, text) of each (``\\`` joins lines;
    the number is that of its first line); ``last``, the number of the last line read
    (the last line of the logical line given last)."""

    __slots__ = ("_lines", "last")

    def __init__(self, text):
        self._lines = text.replace("\r\n", "\n").split("\n")
        self.last = 0

    def __iter__(self):
        return self

    def __next__(self):
        lines, i = self._lines, self.last
        end = len(lines)
        if i >= end:
            raise StopIteration
        line = lines[i]
        i += 1
        if "\\" not in line:                  # (no continuation: most lines)
            self.last = i
            return i, line
        start, parts = i, []
        while line.rstrip().endswith("\\") and i < end and not _is_comment(line):
            parts.append(line.rstrip()[:-1])
            line = lines[i]
            i += 1
        parts.append(line)
        self.last = i
        return start, "".join(parts)


def logical_lines(text):
    """(line number, text) of each logical line (``\\`` joins lines): a LogicalLines."""
    return LogicalLines(text)


def _is_comment(line):
    return line.lstrip().startswith("#")


def parse_submit(text, *, append=(), queue_override=None, source="submit file", variables=None, cwd=None):
    """A SubmitDescription from submit text; ``append`` lines go before the
    first queue statement (or at the end), ``queue_override`` is the
    argument of ``-queue``. ``variables`` (NAME -> value: condor_submit's NAME=value
    arguments, a DAG node's VARS) are macros defined before the text is read, which its
    conditions, includes and messages see; ``cwd`` is the folder its includes are read and
    run in (None: the current one). Raises InputError with HTCondor's wording."""
    desc = SubmitDescription(source=source)
    lines = iter(logical_lines(text))
    for number, line in lines:
        try:
            found = statement(number, line, lines, source)
        except InputError:
            from gridtools.formats.condor import submitblocks
            if not submitblocks.is_special(line.strip()):
                raise           # (if, include, error, @= ...: read by the module that knows them)
            return submitblocks.parse(text, append=append, queue_override=queue_override, source=source,
                                      variables=variables, cwd=cwd)
        if found is not None:
            desc.statements.append(found)
    return finish(desc, append, queue_override, source)


def finish(desc, append, queue_override, source):
    """``desc`` with its ``append`` lines and ``queue_override`` (see parse_submit)."""
    _add_append(desc, append, source)
    if queue_override is not None:
        if desc.queues:
            raise error_at(desc.queues[0].line,
                           "-queue argument conflicts with queue statement in submit file", source)
        _check_queue_args(queue_override, 0, source)
        desc.statements.append(QueueStatement(queue_override.strip(), None, 0))
    return desc


def _add_append(desc, append, source):
    extra = []
    lines = iter((0, line) for line in append)
    for number, line in lines:
        found = statement(number, line, lines, source)
        if found is not None:
            extra.append(found)
    queues = [i for i, s in enumerate(desc.statements) if isinstance(s, QueueStatement)]
    at = queues[0] if queues else len(desc.statements)
    if any(isinstance(s, QueueStatement) for s in extra) and queues:
        raise InputError("ERROR: -append queue may not be used with a submit file "
                         "that has a queue statement")
    desc.statements[at:at] = extra


def statement(number, line, lines, source):
    """The statement of one logical line (None for a blank line or a comment); a queue
    statement that opens a list takes its lines from ``lines``."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    args = queue_arguments(stripped) if stripped[0] in "qQ" else None   # (only q lowers to q)
    if args is not None:
        return _queue_statement(number, args.strip(), lines, source)
    found = assignment(stripped)
    if found is not None:
        kind, name, value = found
        return Assignment(name, value.strip(), kind, number)
    args = iterate_arguments(stripped) if stripped[0] in "iI" else None
    if args is not None:
        return _queue_statement(number, args, lines, source)
    raise error_at(number, f"Submit file syntax error: {stripped}", source)


def queue_arguments(text):
    """The text after ``queue`` when ``text`` is a queue statement (``queue`` in any
    case, then blanks or nothing), else None."""
    if text[:5].lower() == "queue" and (len(text) == 5 or text[5].isspace()):
        return text[5:]
    return None


def queue_statement_arguments(stripped):
    """The text after the keyword when line ``stripped`` is a queue or iterate statement,
    as ``statement`` reads it (a line that assigns to a macro named ``iter`` is an
    assignment), else None."""
    if stripped[:1] in ("q", "Q"):
        return queue_arguments(stripped)
    if stripped[:1] in ("i", "I") and assignment(stripped) is None:
        return iterate_arguments(stripped)
    return None


def iterate_arguments(text):
    """The text after ``iterate`` when ``text`` is an iterate statement (``iter``,
    ``itera``, ``iterat`` or ``iterate`` in any case, then blanks or nothing), else
    None: HTCondor's other word for ``queue`` (a line that assigns to a macro of that
    name is an assignment)."""
    end = 0
    while end < len(text) and text[end] not in " \t\r\n":
        end += 1
    if 4 <= end <= 7 and "iterate".startswith(text[:end].lower()):
        return text[end:].strip()
    return None


def assignment(text):
    """(kind, name, the text after ``=``) of ``[+|MY.]name = value`` (the prefix in any
    case, blanks before ``=``), or None when ``text`` is none; ``-name = ...`` is the
    attribute made undefined (its value "", whatever the text after ``=``)."""
    if text.startswith("+"):
        found = _name_equals(text, 1)
        return None if found is None else (ATTRIBUTE,) + found
    if text.startswith("-"):
        found = _name_equals(text, 1)
        return None if found is None else (ATTRIBUTE, found[0], "")
    if text[:1] in "mM" and text[:3].lower() == "my.":      # (only m lowers to m)
        found = _name_equals(text, 3)
        if found is not None:
            return (ATTRIBUTE,) + found
    found = _name_equals(text, 0)                # ``MY.`` followed by no name is a name
    return None if found is None else (COMMAND,) + found


def _name_equals(text, start):
    """(name, the text after ``=``) when ``text`` from ``start`` is a name, blanks and
    ``=``; else None."""
    at = text.find("=", start)
    name = text[start:at].rstrip() if at >= 0 else ""
    if not name or name[0] not in NAME_START:
        return None
    if not (name.replace(".", "_").isidentifier() if name.isascii() else NAME_REST.issuperset(name)):
        return None                             # (an ASCII name is an identifier, dots aside)
    return name, text[at + 1:]


def _queue_statement(number, args, lines, source):
    number = getattr(lines, "last", number)    # (the statement's last line, as HTCondor counts;
    #                                             -append lines have none)
    is_open = _check_queue_args(args, number, source)
    if not is_open:
        return QueueStatement(args, None, number)
    inline = []
    for _, line in lines:
        if line.lstrip().startswith(")"):
            return QueueStatement(args, inline, number, getattr(lines, "last", number))
        if not line.lstrip().startswith("#"):           # a comment, as HTCondor skips it
            inline.append(line)
    raise InputError("Reached end of file without finding closing brace ')' "
                     f"for Queue command on line {number}")


def _check_queue_args(args, number, source):
    """Whether the statement opens a list; syntax errors carry the line."""
    if "$" in args:  # checked once macros are known
        from gridtools.formats.condor.queue import opens_list
        return opens_list(args)
    if plain_count(args) is not None:
        return False
    from gridtools.formats.condor.queue import parse_queue
    try:
        _, is_open = parse_queue(args)
    except InputError as exc:
        raise error_at(number, str(exc), source) from None
    return is_open


def plain_count(args):
    """The count of a queue statement that is nothing but a count in decimal digits
    (none: 1) below HTCondor's INT_MAX, as ``queue.parse_queue`` reads it; None for
    every other statement, which that module reads (and refuses, for a larger count):
    a plain ``queue`` or ``queue N`` needs none of it."""
    text = args.strip()
    if not text:
        return 1
    if text.isascii() and text.isdigit() and len(text) <= 10 and (text == "0" or text[0] != "0") \
            and int(text) < 2 ** 31 - 1:
        return int(text)
    return None
