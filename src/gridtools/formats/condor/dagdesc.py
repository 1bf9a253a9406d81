"""Submit descriptions written in a DAG file.

A named one (``SUBMIT-DESCRIPTION name {``), or a node's own (``JOB name {``,
also NODE, FINAL, SERVICE and PROVISIONER lines), takes the lines up to a line
that holds only ``}``: blank lines and lines that start with ``#`` or ``//``
are left out, every other line is kept without its leading and trailing
blanks. ``@=TAG`` in place of ``{`` ends the description at a line holding only
``@TAG``. As in HTCondor's DAGMan, a node line's options (DIR, NOOP, DONE)
follow the closing token, on its line (``} DIR sub NOOP``); words after the
opening token are passed over.

A node names a description as it names a submit file (``JOB A name``); the
name is looked up when the node's job is submitted, among the descriptions of
all the DAG's files, wherever they are written: a description is taken before
a file of the same name. A description without a queue statement queues one
job (``with_queue``), as DAGMan's direct submission does.
"""

#: the statements whose submit description may be written in the DAG file
INLINE_KEYWORDS = frozenset({"JOB", "NODE", "FINAL", "SERVICE", "PROVISIONER", "SUBMIT-DESCRIPTION"})


class InlineError(ValueError):
    """A description that cannot be read (DAGMan's words)."""


def closing_token(word):
    """The line that ends a description opened by ``word`` (``}`` for ``{...``,
    ``@TAG`` for ``@=TAG``), "" for ``@=`` without a tag, None when ``word``
    opens none."""
    if word.startswith("{"):
        return "}"
    if word.startswith("@="):
        return "@" + word[2:] if len(word) > 2 else ""
    return None


def opens(words):
    """Whether the statement ``words`` opens a description written in the file."""
    return len(words) >= 3 and words[0].upper() in INLINE_KEYWORDS \
        and closing_token(words[2]) is not None


def read_body(words, lines, at):
    """(the description's text, the index of the line after its closing line, the
    words after the closing token) of the statement ``words``, its body starting at
    ``lines[at]``."""
    end = closing_token(words[2])
    if not end:
        raise InlineError("No inline description closing token specified (@=TOKEN)")
    body = []
    while at < len(lines):
        line = lines[at].strip()
        at += 1
        if not line or line.startswith(("#", "//")):
            continue
        if line == end or line.startswith(end + " ") or line.startswith(end + "\t"):
            return "".join(b + "\n" for b in body), at, line[len(end):].split()
        body.append(line)
    raise InlineError(f"Missing inline description closing token: {end}")


def has_queue(text):
    """Whether submit description text holds a queue (or iterate) statement."""
    from gridtools.formats.condor.submit import queue_statement_arguments
    return any(queue_statement_arguments(line.strip()) is not None for line in text.splitlines())


def with_queue(text):
    """A description's text, with a queue statement (one job) when it has none."""
    return text if has_queue(text) else text + "queue\n"


def render_body(opening, text, after=""):
    """The lines of a description written in a DAG file: ``opening`` (the statement up
    to its ``{``), the text, the closing line with ``after`` (node options)."""
    lines = [f"{opening} {{"] + text.splitlines()
    lines.append("}" + (f" {after}" if after else ""))
    return lines
