"""qconf -aattr/-Aattr/-dattr/-Dattr/-mattr/-Mattr/-rattr/-Rattr, -purge, -sobjl,
share tree nodes and daemon control (-km, -ks, -ke[j], -at, -tsm, -cq).

The attribute options only name the change; the daemon applies it (see
``gridtools.daemon.confattr`` for the semantics of each mode). ``-sobjl``
reads etc/ directly.
"""

import sys
import time

from gridtools.cli.sge.qconf_change import _guard, read_file, send
from gridtools.cli.sge.qconf_show import error, split
from gridtools.errors import GridError

#: the obj_nm words the attribute options accept
OBJECTS = ("queue", "exechost", "pe", "ckpt", "hostgroup", "resource_quota")
#: attributes that name an object (ignored when an attribute file holds them)
NAME_FIELDS = frozenset({"qname", "hostname", "group_name", "pe_name", "ckpt_name", "name"})
#: execution host attributes the host reports itself
REPORTED = frozenset({"load_values", "processors"})
#: seconds -km waits for the daemon to stop
STOP_WAIT = 10.0


def attr_change(mode, from_file, words):
    """-aattr obj attr value ids / -Aattr obj file ids (and d, m, r)."""
    def run():
        obj = words[0]
        if obj not in OBJECTS:
            # Grid Engine's qconf text, on standard error, exit 1
            return error(f'Modification of object "{obj}" not supported')
        if from_file:
            attrs = file_attributes(read_file(words[1]), obj)
            targets = split(words[2:])
        else:
            attrs = [[words[1], words[2]]]
            targets = split(words[3:])
        if not targets:
            return error(f"-{mode[0]}attr: missing object list")
        return send({"op": "attr", "object": obj, "mode": mode, "attrs": attrs, "targets": targets})
    return _guard(run)


def file_attributes(text, obj="queue"):
    """``[[name, value text], ...]`` of an attribute file in an object's own format.

    Lines naming the object, the values a host reports (in a file saved
    from ``qconf -se``) and the braces of a resource quota set are skipped.
    """
    from gridtools.formats.sge.attrfile import logical_lines, split_attr
    skip = NAME_FIELDS | (REPORTED if obj == "exechost" else frozenset()) | {"{", "}"}
    attrs = []
    for _number, line in logical_lines(text):
        name, value = split_attr(line.strip())
        if name not in skip:
            attrs.append([name, value])
    if not attrs:
        raise GridError("error: the file names no attribute")
    return attrs


def purge(words):
    """-purge queue attr,... queue@host|queue@@group."""
    if words[0] != "queue":
        return error(f'error: "{words[0]}" is not a valid object name (use queue)')
    return send({"op": "purge", "object": "queue", "attrs": split(words[1:2]), "target": words[2]})


# ---------------------------------------------------------------- -sobjl

def show_objects(words):
    """-sobjl queue|queue_domain|queue_instance|exechost attr_pattern value_pattern."""
    from gridtools.spool import config as spool_config
    what, attr_pattern, value_pattern = words[:3]
    if what not in ("queue", "queue_domain", "queue_instance", "exechost"):
        return error(f'error: "{what}" is not a valid object name '
                     "(use queue, queue_domain, queue_instance or exechost)")
    kind = "exechost" if what == "exechost" else "queue"
    conf = spool_config.load()
    objs = conf.objects[kind]
    if kind == "exechost":
        # the load values and processors the hosts report count, as qconf -se shows them
        from gridtools.cli.sge.qconf_show import with_reports
        from gridtools.spool import status
        snap = status.read() or {}
        objs = {name: with_reports(name, obj, snap) for name, obj in objs.items()}
    found = []
    for name, obj in sorted(objs.items()):
        for shown in _matches(kind, what, name, obj, attr_pattern, value_pattern):
            if shown not in found:
                found.append(shown)
    sys.stdout.write("".join(n + "\n" for n in found))
    return 0


def _matches(kind, what, name, obj, attr_pattern, value_pattern):
    """Names (object, queue domain or instance) whose attribute values match."""
    from gridtools.formats.sge.codecs import PerHost
    from gridtools.formats.sge.names import wildcard_match
    module = __import__("gridtools.formats.sge." + ("queue" if kind == "queue" else "host"),
                        fromlist=["SCHEMA"])
    for attr, value in obj.items():
        if not wildcard_match(attr_pattern, attr):
            continue
        codec = module.SCHEMA.codec_for(attr)
        inner = getattr(codec, "inner", codec)
        if isinstance(value, PerHost):
            candidates = [(None, value.default)] + list(value.overrides.items())
        else:
            candidates = [(None, value)]
        for key, item in candidates:
            if not _value_matches(inner, item, value_pattern):
                continue
            if what in ("queue", "exechost"):
                yield name
            elif key is not None and key.startswith("@") == (what == "queue_domain"):
                yield f"{name}@{key}"


def _value_matches(codec, value, pattern):
    from gridtools.formats.sge.codecs import split_words
    from gridtools.formats.sge.names import wildcard_match
    try:
        text = codec.render(value)
    except (TypeError, ValueError, AttributeError):
        text = str(value)
    return wildcard_match(pattern, text) or any(wildcard_match(pattern, w) for w in split_words(text))


# ---------------------------------------------------------------- share tree nodes

def stnode(mode, words):
    """-astnode / -mstnode path=shares,... and -dstnode path,..."""
    items = []
    for item in split(words):
        if mode == "delete":
            items.append([item, None])
            continue
        path, eq, shares = item.partition("=")
        if not eq or not path or not shares.isdigit():
            return error(f"{item} is not a valid argument, see node_shares_list format")
        items.append([path, int(shares)])
    return send({"op": "stnode", "object": "sharetree", "mode": mode, "items": items})


# ---------------------------------------------------------------- daemon control

def kill_master(_words=()):
    from gridtools.spool import daemonctl as control
    code = send({"op": "kill", "target": "m"})
    if code == 0:
        end = time.time() + STOP_WAIT
        while control.running() and time.time() < end:
            time.sleep(0.02)
    return code


def kill_scheduler(_words=()):
    return send({"op": "kill", "target": "s"})


def kill_execds(with_jobs, words):
    return send({"op": "kill", "target": "ej" if with_jobs else "e", "hosts": split(words)})


def kill_thread(words):
    if words[0] != "scheduler":
        return error(f'thread with name "{words[0]}" is not supported')
    return kill_scheduler()


def start_thread(words):
    return send({"op": "start", "name": words[0]})


def trigger_monitoring(_words=()):
    return send({"op": "tsm"})


def clear_usage(_words=()):
    return send({"op": "clearusage"})


def clean_queues(words):
    return send({"op": "clean", "queues": split(words)})
