"""DAG input files (``condor_submit_dag``), rescue DAGs, and which nodes may
run next.

Statements (keywords in any case, node names case-sensitive, ``#`` starts a
comment line; PARENT/CHILD and the node options may come before the JOB
lines they name):

  JOB name submitfile [DIR dir] [NOOP] [DONE]      (also NODE)
  FINAL name submitfile [DIR dir] [NOOP]           runs last, whatever happened
  SERVICE name submitfile [DIR dir] [NOOP]         runs beside the DAG, see below
  PROVISIONER name submitfile [DIR dir] [NOOP]     runs first, see below
  SUBMIT-DESCRIPTION name {         a submit description a node may name in place
    ...                             of a submit file (``JOB A name``); a node's
  }                                 own: ``JOB A {`` ... ``}`` (see dagdesc)
  SUBDAG EXTERNAL name dagfile [DIR dir] [NOOP] [DONE]
  SPLICE name dagfile [DIR dir]     the file's nodes join as ``name+node``
  PARENT p ... CHILD c ...          every parent before every child
  RETRY name|ALL_NODES N [UNLESS-EXIT value]
  VARS name|ALL_NODES [PREPEND|APPEND] key="value" ...
  SCRIPT [DEFER status seconds] [DEBUG file STDOUT|STDERR|ALL] PRE|POST name|ALL_NODES program [args]
  PRIORITY name|ALL_NODES value
  ABORT-DAG-ON name|ALL_NODES status [RETURN value]
  CATEGORY name|ALL_NODES category;  MAXJOBS category value
  CONFIG file
  DOT file [UPDATE|DONT-UPDATE] [OVERWRITE|DONT-OVERWRITE] [INCLUDE header]   see dagdot
  JOBSTATE_LOG file                 the job state log (Pegasus's), see dagjobstate
  NODE_STATUS_FILE file [min_update_time] [ALWAYS-UPDATE]   see dagnodestatus
  INCLUDE file                      the file's statements, read as if written here
  SET_JOB_ATTR name = value         an attribute of the DAG manager job's ad
  ENV GET var ...;  ENV SET name=value;...   the DAG manager job's environment
  SAVE_POINT_FILE name [file]       a save file of the DAG's progress when it starts

A SERVICE node is apart from the graph (``Dag.services``, not ``Dag.nodes``): no
PARENT/CHILD, RETRY, PRIORITY, CATEGORY or SAVE_POINT_FILE may name it, nor DONE
(a warning), nor ALL_NODES; its job is submitted when the DAG starts and
removed when the DAG's other nodes are through, whatever its outcome. The one
PROVISIONER node (a second is refused) has no parents or children either; the
other nodes wait for its job to say the resources are provisioned
(``ProvisionerState`` 2 in its job ad). ALL_NODES names neither, nor FINAL.

Every file a DAG names (INCLUDE, SPLICE, submit files) is taken relative
to the folder of the DAG file given to condor_submit_dag, also in included
files, as DAGMan takes them relative to its working directory. A spliced
file is read in its splice's DIR, as DAGMan changes to that folder to read
it: the files it names are taken there, and the DIRs of splices nested in
it, and of its nodes, add up (``SPLICE S a.dag DIR sub`` whose a.dag has
``SPLICE N b.dag DIR deeper``: b.dag is sub/deeper/b.dag and its nodes'
jobs are submitted from sub/deeper). An absolute DIR is taken as it is.

The file is read in two passes: the first takes the nodes, submit
descriptions (dagdesc) and splices, the second the statements that name them
(PARENT/CHILD here, the others in dagstatements).

Errors read as DAGMan words them: ``ERROR: FILE (line N): ...``. Warnings
go in ``Dag.notes``; those HTCondor's DAGMan makes fatal under DAGMAN_USE_STRICT
are ``Note``s that carry its level (the manager decides, ``cli.condor.dagstrict``).
A spliced file's categories are the splice's own (``S+cat``) but for global ones
(``+cat``); its MAXJOBS join the DAG's, which win (a warning). Rescue
DAGs and the choice of the nodes to run next are in dagstate, the text of
a Dag (``render_dag``) in dagrender.
"""

import enum
import os
from dataclasses import dataclass, field

from gridtools.errors import InputError
from gridtools.formats.condor import dagdesc

ALL_NODES = "ALL_NODES"
#: what SCRIPT DEBUG may capture
DEBUG_STREAMS = ("STDOUT", "STDERR", "ALL")
SPLICE_SEPARATOR = "+"
RESERVED = ("PARENT", "CHILD", ALL_NODES)


class NodeKind(enum.Enum):
    JOB = "JOB"
    FINAL = "FINAL"
    SUBDAG = "SUBDAG"
    SERVICE = "SERVICE"
    PROVISIONER = "PROVISIONER"


#: the kinds of nodes that belong to the graph and that ALL_NODES names
REGULAR = (NodeKind.JOB, NodeKind.SUBDAG)


class ScriptWhen(enum.Enum):
    PRE = "PRE"
    POST = "POST"
    HOLD = "HOLD"


@dataclass
class Script:
    when: ScriptWhen
    command: str  # the program and its arguments, as written
    defer_status: int | None = None  # exit status that defers the script
    defer_time: int = 0  # seconds to wait before running it again
    debug_file: str = ""  # DEBUG: the file its output is appended to
    debug_streams: str = ""  # DEBUG: STDOUT, STDERR or ALL


@dataclass
class Node:
    name: str
    submit_file: str
    kind: NodeKind = NodeKind.JOB
    directory: str = ""
    noop: bool = False
    done: bool = False
    retry: int = 0
    retry_unless_exit: int | None = None
    vars: dict = field(default_factory=dict)  # neither: as DAGMAN_DEFAULT_APPEND_VARS says
    prepend_vars: dict = field(default_factory=dict)  # PREPEND: before the submit file
    append_vars: dict = field(default_factory=dict)  # APPEND: after it
    scripts: dict = field(default_factory=dict)  # ScriptWhen -> Script
    priority: int = 0
    abort_on: int | None = None  # exit status of the node that aborts the DAG
    abort_return: int | None = None  # the DAG's exit status then (default: the node's)
    pre_skip: int | None = None  # a PRE script's exit status that skips the node (done)
    category: str = ""
    save_file: str = ""  # SAVE_POINT_FILE: written the first time the node starts
    description: str | None = None  # its own submit description, written in the DAG file
    line: int = 0
    source: str = ""  # the file that defines it (an INCLUDEd one, or the DAG file)


@dataclass
class StatusFile:
    """NODE_STATUS_FILE: the node status file and when it is rewritten."""

    path: str
    min_update: int = 60  # the fewest seconds between two rewrites (the last is always written)
    always: bool = False  # ALWAYS-UPDATE: rewritten even when no node changed


@dataclass
class DotFile:
    """DOT: the file the DAG's graph is drawn in (dot syntax)."""

    path: str
    update: bool = False  # UPDATE: drawn again whenever the DAG's progress changes
    overwrite: bool = True  # DONT-OVERWRITE: each drawing in a new file, path.0, path.1, ...
    include: str = ""  # INCLUDE: a file whose text goes in each drawing, after its label


@dataclass
class Effect(enum.Enum):
    """What a warning does once DAGMAN_USE_STRICT makes it fatal, as HTCondor's DAGMan."""

    STOP = "stop"           # the DAG ends at once: rescue DAG, FINAL node, exit status 1
    REFUSE = "refuse"       # the file is not taken: the manager exits, no rescue DAG
    GO_ON = "go on"         # the fatal line is written and the DAG goes on


class Note(str):
    """A warning of the DAG's files that DAGMAN_USE_STRICT may make fatal: its text (as
    DAGMan writes it in DAGFILE.dagman.out), ``level`` (1 the most severe, 3 the least)
    and ``effect`` once fatal."""

    level = None
    effect = Effect.STOP

    def __new__(cls, text, level, effect=Effect.STOP):
        note = super().__new__(cls, text)
        note.level, note.effect = level, effect
        return note


def warn(dag, level, text, effect=Effect.STOP):
    """Note a warning of strictness ``level`` (see ``Note``)."""
    dag.notes.append(Note(text, level, effect))


@dataclass
class Dag:
    nodes: dict = field(default_factory=dict)  # name -> Node, in file order
    services: dict = field(default_factory=dict)  # name -> the SERVICE Node, in file order
    descriptions: dict = field(default_factory=dict)  # SUBMIT-DESCRIPTION: name -> its text
    edges: set = field(default_factory=set)  # (parent, child)
    maxjobs: dict = field(default_factory=dict)  # category -> limit
    config: str = ""
    job_attrs: dict = field(default_factory=dict)  # SET_JOB_ATTR: name -> ClassAd value text
    env_get: list = field(default_factory=list)  # ENV GET: names taken from the submitter's
    env_set: dict = field(default_factory=dict)  # ENV SET: name -> value
    jobstate_log: str = ""  # JOBSTATE_LOG: the job state log (the first one given counts)
    status_file: StatusFile | None = None  # NODE_STATUS_FILE (the first one given counts)
    dot: DotFile | None = None  # DOT (a later one names another file)
    notes: list = field(default_factory=list)  # what was accepted but ignored (str or Note)
    spliced_maxjobs: list = field(default_factory=list)  # (splice, category, limit) to merge
    source: str = "dag file"
    at: str = ""  # the file of the statement being read (INCLUDE), while parsing

    def parents(self, name):
        return {p for p, c in self.edges if c == name}

    def children(self, name):
        return {c for p, c in self.edges if p == name}


class DagError(InputError):
    """A DAG file that DAGMan would refuse."""


def _where(dag):
    return dag.at or dag.source


def _error(dag, line, message):
    return DagError(f"ERROR: {_where(dag)} (line {line}): {message}")


# -------------------------------------------------------------------- parsing

def parse_dag(text, source="dag file", read=None, into=None, scope="root", splicing=(), folder=""):
    """A validated Dag from DAG file text. ``read(path)`` returns the text
    of a spliced or included file (SPLICE and INCLUDE are refused without it);
    ``folder``: the folder the file is read in, relative to the DAG's (a splice's
    DIR, those of the splices it is in before it; "" for the DAG's own).
    With ``into`` (the Dag of the DAG files before this one on a condor_submit_dag
    command line) the file's nodes join it: their names must be new, and its
    statements may name the nodes of the earlier files, as HTCondor's DAGMan reads
    several DAG files as one DAG. ``scope``: the splice it is read for (``S+``; ``root``
    for the DAG itself), as its warnings name it; ``splicing``: the files of the splices
    it is read inside (a file that splices itself, at any depth, is refused)."""
    dag = into if into is not None else Dag(source=source)
    lines = _lines(dag, text, source, read, [os.path.normpath(os.path.basename(source))], folder)
    splices, lifted = [], {}
    for where, number, line, body in lines:  # first pass: the statements that make nodes
        dag.at = where
        words = line.split()
        keyword = words[0].upper()
        if keyword in _NODE_KINDS:
            _add_node(dag, number, words, _NODE_KINDS[keyword], body)
        elif keyword == "SUBMIT-DESCRIPTION":
            _description(dag, number, words, body)
        elif keyword == "SUBDAG":
            if len(words) < 2 or words[1].upper() != "EXTERNAL":
                raise _error(dag, number, "SUBDAG must be followed by EXTERNAL")
            _add_node(dag, number, words[1:], NodeKind.SUBDAG)
        elif keyword == "SPLICE":
            splices.append(_splice(dag, number, words, read, lifted,
                                   splicing or (os.path.normpath(source),), folder))
    _lift_descriptions(dag, lifted)
    for where, number, line, _body in lines:  # second pass: everything else
        dag.at = where
        _statement(dag, number, line, splices)
    dag.at = ""
    _merge_spliced_maxjobs(dag, scope)
    validate(dag)
    return dag


#: the deepest nesting of INCLUDE files
MAX_INCLUDE_DEPTH = 64


def _lines(dag, text, source, read, stack, folder=""):
    """(file, line number, statement, description) of every statement of ``text``, the
    statements of INCLUDEd files in place of their INCLUDE line (``stack``: the files
    being read, the outermost first, to refuse an include cycle; ``folder``: the one
    they are read in, see ``parse_dag``). ``description`` is the
    text of a description written in the file (else None); its statement then ends
    with ``{`` and the words after its closing token."""
    out = []
    lines, at = text.splitlines(), 0
    while at < len(lines):
        number, line = at + 1, lines[at].strip()
        at += 1
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if dagdesc.opens(words):
            dag.at = source
            try:
                body, at, after = dagdesc.read_body(words, lines, at)
            except dagdesc.InlineError as exc:
                raise _error(dag, number, str(exc)) from None
            out.append((source, number, " ".join(words[:2] + ["{"] + after), body))
            continue
        if words[0].upper() != "INCLUDE":
            out.append((source, number, line, None))
            continue
        dag.at = source
        if len(words) != 2:
            raise _error(dag, number, "expected INCLUDE filename")
        path = words[1]
        if read is None:
            raise _error(dag, number, "INCLUDE needs the included file, which was not given")
        key = os.path.normpath(_within(folder, path))
        if key in stack:
            raise _error(dag, number, f"INCLUDE of {path} makes a cycle of includes ("
                         f"{' -> '.join(stack + [key])})")
        if len(stack) > MAX_INCLUDE_DEPTH:
            raise _error(dag, number, f"INCLUDE files nested more than {MAX_INCLUDE_DEPTH} deep")
        try:
            inner = read(_within(folder, path))
        except OSError as exc:
            raise _error(dag, number, f"Could not open INCLUDE file {path}: "
                         f"{exc.strerror or exc}") from None
        out += _lines(dag, inner, path, read, stack + [key], folder)
    dag.at = ""
    return out


def _check_name(dag, number, name):
    if name.upper() in RESERVED:
        raise _error(dag, number, f"token ({name}) is a reserved word")
    if SPLICE_SEPARATOR in name:
        raise _error(dag, number, f"node name {name} contains illegal character {SPLICE_SEPARATOR}")


_NODE_KINDS = {"JOB": NodeKind.JOB, "NODE": NodeKind.JOB, "FINAL": NodeKind.FINAL,
               "SERVICE": NodeKind.SERVICE, "PROVISIONER": NodeKind.PROVISIONER}


def _add_node(dag, number, words, kind, body=None):
    """A node of a JOB, NODE, FINAL, SERVICE, PROVISIONER or SUBDAG EXTERNAL line
    (``body``: its own submit description, written in the file)."""
    if len(words) < 3:
        raise _error(dag, number, f"expected {words[0].upper()} name file")
    name, path = words[1], words[2]
    _check_name(dag, number, name)
    if name in dag.nodes or name in dag.services:
        raise _error(dag, number, f"node name '{name}' already exists in DAG")
    node = Node(name, "" if body is not None else path, kind, line=number, source=_where(dag),
                description=body)
    _node_options(dag, number, node, words[3:])
    for single in (NodeKind.FINAL, NodeKind.PROVISIONER):
        if kind is single and any(n.kind is single for n in dag.nodes.values()):
            raise _error(dag, number, f"only one {single.value} node is allowed")
    (dag.services if kind is NodeKind.SERVICE else dag.nodes)[name] = node


def _node_options(dag, number, node, rest):
    """DIR dir, NOOP and DONE after a node's submit file (DONE is passed over, with a
    warning of strictness 1, on a FINAL, SERVICE or PROVISIONER node)."""
    rest = list(rest)
    while rest:
        option = rest.pop(0).upper()
        if option == "DIR" and rest:
            node.directory = rest.pop(0)
        elif option == "NOOP":
            node.noop = True
        elif option == "DONE" and node.kind in REGULAR:
            node.done = True
        elif option == "DONE":
            warn(dag, 1, f"{_where(dag)} (line {number}): WARNING: {node.kind.value} node "
                         f"{node.name} can not be marked as DONE", Effect.GO_ON)
        else:
            raise _error(dag, number, f"invalid parameter \"{option}\"")


def _description(dag, number, words, body):
    """SUBMIT-DESCRIPTION name { ... }: a later description of the same name replaces
    the earlier one (a warning), as in HTCondor's DAGMan."""
    if len(words) < 2:
        raise _error(dag, number, "No submit description name provided")
    if body is None:
        raise _error(dag, number, "No inline description provided")
    name = words[1]
    if name in dag.descriptions:
        dag.notes.append(f"{_where(dag)} (line {number}): Warning: Inline Description name "
                         f"'{name}' used multiple times; the last one is used")
    dag.descriptions[name] = body


def _lift_descriptions(dag, lifted):
    """The descriptions of spliced files join the DAG's; a name the DAG's own files
    (or an earlier splice) define keeps its description (a warning when they differ)."""
    for name, (text, splice) in lifted.items():
        if name not in dag.descriptions:
            dag.descriptions[name] = text
        elif dag.descriptions[name] != text:
            dag.notes.append(f"WARNING: Conflicting inline descriptions using the same name "
                             f"'{name}' between {dag.source} and splice {splice}")


def description_of(dag, node):
    """The submit description text a node's job is submitted from when it is written in
    the DAG file (its own, or the SUBMIT-DESCRIPTION it names), else None (a file)."""
    if node.description is not None:
        return node.description
    if node.kind is NodeKind.SUBDAG:
        return None
    return dag.descriptions.get(node.submit_file)


def _statement(dag, number, line, splices):
    words = line.split()
    keyword = words[0].upper()
    handler = _handlers().get(keyword)
    if handler is None:
        raise _error(dag, number, "expected JOB, SUBDAG, FINAL, SCRIPT, PARENT, RETRY, "
                                  "ABORT-DAG-ON, DOT, VARS, PRIORITY, CATEGORY, MAXJOBS, CONFIG, "
                                  "SPLICE, NODE_STATUS_FILE, JOBSTATE_LOG, PRE_SKIP, INCLUDE, SET_JOB_ATTR, "
                                  "ENV, SAVE_POINT_FILE, SERVICE, PROVISIONER, SUBMIT-DESCRIPTION, "
                                  "or DONE token")
    handler(dag, number, words, line, splices)


def _targets(dag, number, name, what=""):
    """The nodes a statement names (ALL_NODES: the JOB and SUBDAG nodes); ``what``
    given (``can not have a retry specification``), a SERVICE or PROVISIONER node
    is refused."""
    if name == ALL_NODES:
        return [n for n in dag.nodes.values() if n.kind in REGULAR]
    node = dag.nodes.get(name) or dag.services.get(name)
    if node is None:
        raise _error(dag, number, f"Unknown Node {name}")
    if what and node.kind in (NodeKind.SERVICE, NodeKind.PROVISIONER):
        raise _error(dag, number, f"{node.kind.value} node {name} {what}")
    return [node]


def _parent(dag, number, words, _line, splices):
    upper = [w.upper() for w in words]
    if "CHILD" not in upper:
        raise _error(dag, number, "Expected CHILD token")
    at = upper.index("CHILD")
    parents, children = words[1:at], words[at + 1:]
    if not parents or not children:
        raise _error(dag, number, "PARENT and CHILD need at least one node each")
    for parent in _expand_splices(dag, number, parents, splices, final=True):
        for child in _expand_splices(dag, number, children, splices, final=False):
            if parent == child:
                raise _error(dag, number, f"node {parent} is its own parent")
            if (parent, child) in dag.edges:
                warn(dag, 3, f"Warning: parent {parent} already has child {child}")
            dag.edges.add((parent, child))


def _expand_splices(dag, number, names, splices, final):
    out = []
    for name in names:
        splice = next((s for s in splices if s[0] == name), None)
        if splice is not None:
            out += splice[2] if final else splice[1]
        elif name in dag.services or name in dag.nodes \
                and dag.nodes[name].kind is NodeKind.PROVISIONER:
            kind = (dag.services.get(name) or dag.nodes[name]).kind.value
            raise _error(dag, number, f"Tried to add a {'parent' if not final else 'child'} "
                                      f"to the {kind} node {name}")
        elif name in dag.nodes:
            out.append(name)
        else:
            raise _error(dag, number, f"Unknown Node {name}")
    return out


def _node_pass(*_args):
    """Statements handled by the first pass."""


#: the statements the first pass reads (nodes, descriptions, splices); the others
#: are ``dagstatements``' (``_handlers``)
_FIRST_PASS = ("JOB", "NODE", "FINAL", "SUBDAG", "SERVICE", "PROVISIONER", "SUBMIT-DESCRIPTION", "SPLICE")
_HANDLERS = {}


def _handlers():
    """Keyword -> the function that reads its statement in the second pass."""
    if not _HANDLERS:
        from gridtools.formats.condor import dagstatements
        _HANDLERS.update(dict.fromkeys(_FIRST_PASS, _node_pass))
        _HANDLERS["PARENT"] = _parent
        _HANDLERS.update(dagstatements.HANDLERS)
    return _HANDLERS


#: most splices one inside the other (a cycle through names that differ is cut there)
MOST_SPLICE_DEPTH = 64


def _within(folder, path):
    """``path`` taken in ``folder`` (a DIR; "" for the DAG's folder): an absolute path,
    or any path in "", stays as it is, as HTCondor's DAGMan prefixes a node's DIR."""
    if not folder or os.path.isabs(path):
        return path
    return os.path.join(folder, path) if path else folder


def _splice(dag, number, words, read, lifted, splicing, folder=""):
    """Add a spliced file's nodes; return (name, initial nodes, final nodes). The file
    is read in the splice's DIR (within ``folder``, the one of the file that splices
    it), where its nodes' jobs are submitted from. Its
    SUBMIT-DESCRIPTIONs go in ``lifted`` (name -> (text, splice)), the first of a name
    kept; its warnings join the DAG's; its categories become the splice's (``S+cat``;
    not a global one, ``+cat``), their MAXJOBS merged once the DAG is read."""
    if len(words) not in (3, 5) or len(words) == 5 and words[3].upper() != "DIR":
        raise _error(dag, number, "expected SPLICE name file [DIR directory]")
    name, path = words[1], words[2]
    _check_name(dag, number, name)
    if read is None:
        raise _error(dag, number, "SPLICE needs the spliced file, which was not given")
    directory = words[4] if len(words) == 5 else ""
    here = _within(folder, directory)
    key = os.path.normpath(_within(here, path))
    if key in splicing:
        raise _error(dag, number, f"Splice {name}: recursive splice ({' -> '.join(splicing + (key,))})")
    if len(splicing) > MOST_SPLICE_DEPTH:
        raise _error(dag, number, f"Splice {name}: splices nested more than {MOST_SPLICE_DEPTH} deep")
    inner = parse_dag(read(_within(here, path)), source=path, read=read,
                      scope=f"{name}{SPLICE_SEPARATOR}", splicing=splicing + (key,), folder=here)
    dag.notes += inner.notes
    rename = {old: f"{name}{SPLICE_SEPARATOR}{old}" for old in inner.nodes}
    for old, node in inner.nodes.items():
        if node.kind is NodeKind.FINAL:
            raise _error(dag, number, f"a spliced DAG may not have a FINAL node ({old})")
        if node.kind is NodeKind.PROVISIONER and any(
                n.kind is NodeKind.PROVISIONER for n in dag.nodes.values()):
            raise _error(dag, number, "only one PROVISIONER node is allowed")
        node.name = rename[old]
        node.directory = _within(directory, node.directory)
        node.category = _scoped(name, node.category)
        if rename[old] in dag.nodes:
            raise _error(dag, number, f"node name '{rename[old]}' already exists in DAG")
        dag.nodes[rename[old]] = node
    for old, node in inner.services.items():
        node.name = f"{name}{SPLICE_SEPARATOR}{old}"
        node.directory = _within(directory, node.directory)
        if node.name in dag.nodes or node.name in dag.services:
            raise _error(dag, number, f"node name '{node.name}' already exists in DAG")
        dag.services[node.name] = node
    for key, text in inner.descriptions.items():
        lifted.setdefault(key, (text, name))
    dag.spliced_maxjobs += [(name, _scoped(name, category), limit)
                            for category, limit in inner.maxjobs.items()]
    dag.edges |= {(rename[p], rename[c]) for p, c in inner.edges}
    initial = [rename[n] for n in inner.nodes if not inner.parents(n)]
    final = [rename[n] for n in inner.nodes if not inner.children(n)]
    return name, initial, final


def _scoped(splice, category):
    """A spliced node's category: its splice's own, but for a global one (``+cat``)."""
    if not category or category.startswith(SPLICE_SEPARATOR):
        return category
    return f"{splice}{SPLICE_SEPARATOR}{category}"


def _merge_spliced_maxjobs(dag, scope):
    """The MAXJOBS of the spliced files join the DAG's: a limit the DAG itself sets for
    the same category wins (a warning when they differ), as HTCondor's DAGMan lifts them."""
    for splice, category, limit in dag.spliced_maxjobs:
        own = dag.maxjobs.get(category)
        if own is not None and own != limit:
            warn(dag, 2, f"Warning: higher-level ({scope}) maxjobs value of {own} for category "
                         f"{category} overrides splice {splice} value of {limit}")
        else:
            dag.maxjobs[category] = limit
    dag.spliced_maxjobs = []


def check_categories(dag):
    """The warnings HTCondor's DAGMan gives of the DAG's categories once all is read: a
    MAXJOBS whose category has no node, a category of nodes without MAXJOBS."""
    used = {n.category for n in dag.nodes.values() if n.category}
    for category in sorted(used | set(dag.maxjobs)):
        if category not in used:
            warn(dag, 2, f"Warning: category {category} has no assigned nodes, so the throttle "
                         f"setting ({dag.maxjobs[category]}) will have no effect")
        if category not in dag.maxjobs:
            warn(dag, 2, f"Warning: category {category} has no throttle value set")


# ----------------------------------------------------------------- validation

def validate(dag):
    """Refuse FINAL nodes with dependencies and cycles, as DAGMan does."""
    for parent, child in dag.edges:
        for name in (parent, child):
            if dag.nodes[name].kind is NodeKind.FINAL:
                raise DagError(f"ERROR: {dag.nodes[name].source or dag.source} "
                               f"(line {dag.nodes[name].line}): "
                               f"FINAL node {name} cannot have parents or children")
    if find_cycle(dag):
        raise DagError("ERROR: a cycle exists in the dag, please check input")


def find_cycle(dag):
    """A list of node names forming a cycle, or [] when there is none."""
    children = {name: sorted(dag.children(name)) for name in dag.nodes}
    state, path = {}, []

    def visit(name):
        state[name] = "open"
        path.append(name)
        for child in children[name]:
            if state.get(child) == "open":
                return path[path.index(child):] + [child]
            if child not in state:
                found = visit(child)
                if found:
                    return found
        state[name] = "closed"
        path.pop()
        return []
    for name in dag.nodes:
        if name not in state:
            found = visit(name)
            if found:
                return found
    return []
