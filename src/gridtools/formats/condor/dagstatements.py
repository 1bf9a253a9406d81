"""The statements of a DAG input file that set what its nodes do, read in the
second pass over its lines (``dag.parse_dag``), once every node is known: RETRY,
VARS, SCRIPT, PRIORITY, ABORT-DAG-ON, CATEGORY, MAXJOBS, CONFIG, DOT, PRE_SKIP,
NODE_STATUS_FILE, JOBSTATE_LOG, DONE, SET_JOB_ATTR, ENV and SAVE_POINT_FILE (their
forms in ``dag``'s description). Each handler takes the DAG, the line's number,
its words and its text; an error is ``dag.DagError`` in DAGMan's words, a warning
HTCondor's DAGMan makes fatal under DAGMAN_USE_STRICT a ``dag.Note`` of its level.
"""

import os
import re

from gridtools.formats.condor.dag import (
    DEBUG_STREAMS, REGULAR, DotFile, Effect, Script, ScriptWhen, StatusFile, _error, _targets, _where, warn)


def _int(dag, number, text, what):
    try:
        return int(text)
    except (TypeError, ValueError):
        raise _error(dag, number, f"invalid {what} \"{text}\"") from None


_LEADING_NUMBER = re.compile(r"\s*([+-]?[0-9]+)")


def _c_int(dag, number, text, words):
    """``text`` read as HTCondor's DAGMan reads a RETRY count or a PRIORITY value: the
    number it begins with (strtol: what follows is not looked at), held to 64 bits
    (beyond them the largest or least one), then cut to a 32-bit int (its low 32 bits,
    two's complement: 4294967297 is 1, a number beyond 64 bits -1). No number at its start
    is an error, in ``words``."""
    found = _LEADING_NUMBER.match(text or "")
    if not found:
        raise _error(dag, number, f"{words} \"{text}\"")
    value = max(-(1 << 63), min(int(found.group(1)), (1 << 63) - 1))
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _retry(dag, number, words, _line, _splices):
    if len(words) < 3:
        raise _error(dag, number, "expected RETRY name count [UNLESS-EXIT value]")
    count = _c_int(dag, number, words[2], "Invalid Retry value")
    if count < 0:
        raise _error(dag, number, f"Invalid Retry value \"{count}\" (cannot be negative)")
    unless = None
    if len(words) >= 5 and words[3].upper() == "UNLESS-EXIT":
        unless = _int(dag, number, words[4], "UNLESS-EXIT value")
    elif len(words) > 3:
        raise _error(dag, number, f"invalid parameter \"{words[3]}\"")
    for node in _targets(dag, number, words[1], "can not have a retry specification"):
        node.retry, node.retry_unless_exit = count, unless


_VAR = re.compile(r'\s*([A-Za-z_+][A-Za-z0-9_.+]*)\s*=\s*"((?:[^"\\]|\\.)*)"')


def _vars(dag, number, words, line, _splices):
    if len(words) < 3:
        raise _error(dag, number, 'expected VARS name [PREPEND|APPEND] key="value" ...')
    placed = words[2].upper() if words[2].upper() in ("PREPEND", "APPEND") else ""
    skip = 3 if placed else 2
    if len(words) <= skip:
        raise _error(dag, number, 'expected VARS name [PREPEND|APPEND] key="value" ...')
    rest = line.split(None, skip)[skip]
    pairs, at = {}, 0
    while rest[at:].strip():
        m = _VAR.match(rest, at)
        if not m:
            raise _error(dag, number, f"Unexpected characters in VARS line: {rest[at:].strip()}")
        if m.group(1).lower().startswith("queue"):
            raise _error(dag, number, f"Illegal variable name: {m.group(1)}")
        pairs[m.group(1)] = re.sub(r"\\(.)", r"\1", m.group(2))
        at = m.end()
    for node in _targets(dag, number, words[1]):
        places = {"PREPEND": node.prepend_vars, "APPEND": node.append_vars, "": node.vars}
        for key, value in pairs.items():
            if any(key in other for other in places.values()):
                warn(dag, 3, f'Warning: VAR "{key}" is already defined in node "{node.name}" '
                             f'(Discovered at file "{_where(dag)}", line {number})')
                dag.notes.append(f'Warning: Setting VAR "{key}" = "{value}"')
            for other in places.values():
                other.pop(key, None)        # the last definition of a macro is the one used
            places[placed][key] = value


def _script(dag, number, words, line, _splices):
    parts = line.split(None, 1)[1].split() if len(words) > 1 else []
    status, delay = None, 0
    if parts and parts[0].upper() == "DEFER":
        if len(parts) < 3:
            raise _error(dag, number, "expected SCRIPT DEFER status time")
        status = _int(dag, number, parts[1], "DEFER status")
        delay = _int(dag, number, parts[2], "DEFER time")
        parts = parts[3:]
    debug_file, streams = "", ""
    if parts and parts[0].upper() == "DEBUG":
        if len(parts) < 3:
            raise _error(dag, number, "expected SCRIPT [DEFER status time] DEBUG file STDOUT|STDERR|ALL")
        debug_file, streams = parts[1], parts[2].upper()
        if streams not in DEBUG_STREAMS:
            raise _error(dag, number, f"invalid DEBUG output type \"{parts[2]}\" "
                                      "(expected STDOUT, STDERR or ALL)")
        parts = parts[3:]
    if len(parts) < 3:
        raise _error(dag, number, "expected SCRIPT [DEFER status time] [DEBUG file type] "
                                  "PRE|POST|HOLD node program")
    try:
        when = ScriptWhen(parts[0].upper())
    except ValueError:
        raise _error(dag, number, f"expected PRE, POST or HOLD, found {parts[0]}") from None
    # SCRIPT [DEFER s t] [DEBUG f t] WHEN NODE, then the command
    skip = 3 + (3 if status is not None else 0) + (3 if debug_file else 0)
    command = line.split(None, skip)[skip].strip()
    for node in _targets(dag, number, parts[1]):
        node.scripts[when] = Script(when, command, status, delay, debug_file, streams)


def _priority(dag, number, words, _line, _splices):
    if len(words) != 3:
        raise _error(dag, number, "expected PRIORITY name value")
    value = _c_int(dag, number, words[2], "Invalid PRIORITY value")
    for node in _targets(dag, number, words[1], "can not have a priority"):
        if node.priority and node.priority != value:
            warn(dag, 2, f"Warning: new priority {value} for node {node.name} overrides old value "
                         f"{node.priority}")
        node.priority = value


def _abort(dag, number, words, _line, _splices):
    if len(words) not in (3, 5) or len(words) == 5 and words[3].upper() != "RETURN":
        raise _error(dag, number, "expected ABORT-DAG-ON name status [RETURN value]")
    status = _int(dag, number, words[2], "ABORT-DAG-ON status")
    value = _int(dag, number, words[4], "RETURN value") if len(words) == 5 else None
    if value is not None and not 0 <= value <= 255:
        raise _error(dag, number, f"RETURN value {value} must be between 0 and 255")
    for node in _targets(dag, number, words[1]):
        node.abort_on, node.abort_return = status, value


def _category(dag, number, words, _line, _splices):
    if len(words) != 3:
        raise _error(dag, number, "expected CATEGORY name category")
    for node in _targets(dag, number, words[1], "can not be added to a category"):
        if node.category and node.category != words[2]:
            warn(dag, 3, f"Warning: new category {words[2]} for node {node.name} overrides old value "
                         f"{node.category}")
        node.category = words[2]


def _maxjobs(dag, number, words, _line, _splices):
    if len(words) != 3:
        raise _error(dag, number, "expected MAXJOBS category value")
    limit = _int(dag, number, words[2], "MAXJOBS value")
    if limit < 0:
        raise _error(dag, number, f"MAXJOBS value {limit} must be 0 or more")
    old = dag.maxjobs.get(words[1])
    if old is not None and old != limit:
        warn(dag, 3, f"Warning: new maxjobs value {limit} for category {words[1]} overrides old "
                     f"value {old}")
    dag.maxjobs[words[1]] = limit


def _config(dag, number, words, _line, _splices):
    if len(words) != 2:
        raise _error(dag, number, "expected CONFIG file")
    if dag.config and dag.config != words[1]:
        raise _error(dag, number, f"only one CONFIG file is allowed ({dag.config} already given)")
    dag.config = words[1]


_DOT_FLAGS = {"UPDATE": ("update", True), "DONT-UPDATE": ("update", False),
              "OVERWRITE": ("overwrite", True), "DONT-OVERWRITE": ("overwrite", False)}


def _dot(dag, number, words, _line, _splices):
    """DOT file [UPDATE|DONT-UPDATE] [OVERWRITE|DONT-OVERWRITE] [INCLUDE header]: a later
    DOT names another file and changes the options it gives; other words are passed
    over, as DAGMan passes them."""
    if len(words) < 2:
        raise _error(dag, number, "Missing dot file name")
    if dag.dot is None:
        dag.dot = DotFile(words[1])
    dag.dot.path = words[1]
    rest = iter(words[2:])
    for word in rest:
        if word.upper() in _DOT_FLAGS:
            name, value = _DOT_FLAGS[word.upper()]
            setattr(dag.dot, name, value)
        elif word.upper() == "INCLUDE":
            dag.dot.include = next(rest, "")
            if not dag.dot.include:
                raise _error(dag, number, "Missing include file name.")


def _pre_skip(dag, number, words, _line, _splices):
    if len(words) < 3:
        raise _error(dag, number, "Missing exit code" if len(words) == 2 else "Missing node name")
    if len(words) > 3:
        raise _error(dag, number, f"invalid parameter \"{words[3]}\"")
    try:
        code = int(words[2])
    except ValueError:
        raise _error(dag, number, f"Invalid exit code \"{words[2]}\"") from None
    for node in _targets(dag, number, words[1]):
        if node.pre_skip is not None:
            # (two blanks after "value", as DAGMan writes it)
            warn(dag, 3, f"Warning: new PRE_SKIP value  {code} for node {node.name} overrides old "
                         f"value {node.pre_skip}")
        node.pre_skip = code


def _status_file(dag, number, words, _line, _splices):
    """NODE_STATUS_FILE file [min_update_time] [ALWAYS-UPDATE]: a later one does not
    override the first (a warning)."""
    if len(words) < 2:
        raise _error(dag, number, "Missing node status file name")
    spec = StatusFile(words[1])
    if len(words) > 2:
        try:
            spec.min_update = int(words[2])
        except ValueError:
            raise _error(dag, number, f"Invalid min update time value \"{words[2]}\"") from None
    if len(words) > 3:
        if words[3].upper() != "ALWAYS-UPDATE":
            raise _error(dag, number, f"invalid parameter \"{words[3]}\"")
        spec.always = True
    if len(words) > 4:
        raise _error(dag, number, f"Extra token ({words[4]}) on NODE_STATUS_FILE line")
    if dag.status_file is not None:
        warn(dag, 3, f"{_where(dag)} (line {number}): Warning: Attempt to set NODE_STATUS_FILE to "
                     f"{words[1]} does not override existing value of {dag.status_file.path}")
        return
    dag.status_file = spec


def _jobstate_log(dag, number, words, _line, _splices):
    """JOBSTATE_LOG file: a later one does not override the first (a warning)."""
    if len(words) < 2:
        raise _error(dag, number, "Missing jobstate log file name")
    if len(words) > 2:
        raise _error(dag, number, f"Extra token ({words[2]}) on JOBSTATE_LOG line")
    if dag.jobstate_log:
        warn(dag, 3, f"{_where(dag)} (line {number}): Warning: Attempt to set JOBSTATE_LOG to "
                     f"{words[1]} does not override existing value of {dag.jobstate_log}")
        return
    dag.jobstate_log = words[1]


def _unknown(dag, number, name):
    """A statement that names no node of the DAG where HTCondor's DAGMan passes it over
    with a warning of strictness 1 (the file is refused when that is fatal)."""
    if name in dag.nodes or name in dag.services or name == "ALL_NODES":
        return False
    warn(dag, 1, f"Warning: {_where(dag)} (line {number}): Unknown Node {name}", Effect.REFUSE)
    return True


def _done(dag, number, words, _line, _splices):
    """DONE name: the node is done; a FINAL, SERVICE or PROVISIONER node is not (a warning
    of strictness 1, as an unknown node)."""
    if len(words) != 2:
        raise _error(dag, number, "expected DONE name")
    if _unknown(dag, number, words[1]):
        return
    for node in _targets(dag, number, words[1]):
        if node.kind not in REGULAR:
            warn(dag, 1, f"{_where(dag)} (line {number}): WARNING: {node.kind.value} "
                         f"node(s) can not be referenced by the DONE command", Effect.REFUSE)
            continue
        node.done = True


_ATTR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*$")


def _set_job_attr(dag, number, _words, line, _splices):
    """SET_JOB_ATTR name = value: an attribute of the manager job's ad (the last value
    given for a name is used)."""
    rest = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
    name, equals, value = rest.partition("=")
    name, value = name.strip(), value.strip()
    if not equals or not name or not value:
        raise _error(dag, number, "expected SET_JOB_ATTR name = value")
    if not _ATTR_NAME.match(name):
        raise _error(dag, number, f"invalid attribute name \"{name}\"")
    from gridtools.classad import ClassAdSyntaxError, parse
    try:
        parse(value)
    except (ClassAdSyntaxError, ValueError):
        raise _error(dag, number, f"invalid value of attribute {name}: {value}") from None
    dag.job_attrs[name] = value


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def _env(dag, number, words, line, _splices):
    """ENV GET name ... (names may be separated by commas too) | ENV SET name=value;..."""
    if len(words) < 3 or words[1].upper() not in ("GET", "SET"):
        raise _error(dag, number, "expected ENV GET name ... or ENV SET name=value;...")
    rest = line.split(None, 2)[2]
    if words[1].upper() == "GET":
        for name in rest.replace(",", " ").split():
            if not _ENV_NAME.match(name):
                raise _error(dag, number, f"invalid environment variable name \"{name}\"")
            if name not in dag.env_get:
                dag.env_get.append(name)
        return
    for pair in rest.split(";"):
        if not pair.strip():
            continue
        name, equals, value = pair.strip().partition("=")
        if not equals or not _ENV_NAME.match(name.strip()):
            raise _error(dag, number, f"invalid ENV SET setting \"{pair.strip()}\" (expected name=value)")
        dag.env_set[name.strip()] = value


def _save_point(dag, number, words, _line, _splices):
    """SAVE_POINT_FILE name [file]: the default file is NAME-DAGFILE.save, DAGFILE the
    name of the file the statement is in."""
    if len(words) not in (2, 3):
        raise _error(dag, number, "expected SAVE_POINT_FILE name [file]")
    if _unknown(dag, number, words[1]):
        return
    for node in _targets(dag, number, words[1], "can not have a SAVE_POINT_FILE"):
        node.save_file = words[2] if len(words) == 3 else \
            f"{node.name}-{os.path.basename(_where(dag))}.save"


HANDLERS = {
    "RETRY": _retry, "VARS": _vars, "SCRIPT": _script, "PRIORITY": _priority, "ABORT-DAG-ON": _abort,
    "CATEGORY": _category, "MAXJOBS": _maxjobs, "CONFIG": _config, "DOT": _dot, "DONE": _done,
    "PRE_SKIP": _pre_skip, "NODE_STATUS_FILE": _status_file, "JOBSTATE_LOG": _jobstate_log,
    "SET_JOB_ATTR": _set_job_attr, "ENV": _env, "SAVE_POINT_FILE": _save_point,
}
