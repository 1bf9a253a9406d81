"""qconf -s…: showing configuration objects and their lists.

Everything here reads etc/ directly (no daemon needed) and prints the stored
text, which is the text Grid Engine's qconf shows. Only the views that
combine several objects parse them: a queue instance (``-sq q@host``), an
execution host with its reported load (``-se``), host group trees, the
share tree views and ``-sds``. Each function takes the option's argument
words and returns the exit code.
"""

import sys

from gridtools import cell
from gridtools.errors import GridError
from gridtools.formats.sge.attrfile import as_shown
from gridtools.spool import config as spool_config

#: kind -> message when a named object does not exist
MISSING = {
    "queue": 'No cluster queue or queue instance matches the phrase "{}"',
    "exechost": "{} is not an execution host",
    "hostgroup": 'Host group "{}" does not exist',
    "pe": "{} is not a parallel environment",
    "ckpt": "{} is not a checkpointing interface definition",
    "calendar": "{} is not a calendar",
    "userset": 'denied: access list "{}" does not exist',
    "user": "{} is not known as user",
    "project": "{} is not known as project",
    "rqs": "No resource quota set found",
    "conf": "configuration {} not defined",
}
#: kind -> message when there is no object of the kind
EMPTY = {
    "queue": "no cqueue list defined", "exechost": "no execution host defined",
    "hostgroup": "no host group list defined", "pe": "no parallel environment defined",
    "ckpt": "no ckpt interface definition defined", "calendar": "no calendar defined",
    "userset": "no userset list defined", "user": "no user list defined",
    "project": "no project list defined", "rqs": "no resource quota set list defined",
    "conf": "no config defined", "managers": "no manager defined", "operators": "no operator defined",
    "adminhosts": "no admin host defined", "submithosts": "no submit host defined",
}
#: the order in which an execution host's load values are shown
LOAD_ORDER = ("load_avg", "load_short", "load_medium", "load_long", "arch", "num_proc", "mem_free",
              "swap_free", "virtual_free", "mem_total", "swap_total", "virtual_total", "mem_used",
              "swap_used", "virtual_used", "cpu", "m_topology", "m_topology_inuse", "m_socket", "m_core",
              "m_thread", "np_load_avg", "np_load_short", "np_load_medium", "np_load_long")


def split(words):
    """Names from comma-separated argument words."""
    return [n for word in words for n in word.split(",") if n]


def error(line):
    sys.stderr.write(line + "\n")
    return 1


def stored(kind, name=None):
    """The stored text of an object, or None (names that are not file names are absent);
    a checkpointing environment's ``when`` letters come in Grid Engine's order."""
    if name is not None and (not name or "/" in name or name.startswith(".")):
        return None
    try:
        text = spool_config.read_raw(kind, name)
        if kind == "ckpt" and text is not None:
            from gridtools.formats.sge.ckpt import in_order
            text = in_order(text)
        return text
    except ValueError:                  # a NUL byte: no file has that name
        return None
    except OSError as exc:
        import errno
        if exc.errno in (errno.ENAMETOOLONG, errno.EISDIR, errno.ENOTDIR):
            return None
        raise GridError(f"error: cannot read {exc.filename}: {exc.strerror}") from None


def parsed(kind, name=None):
    from gridtools.formats.sge import objects
    text = stored(kind, name)
    return None if text is None else objects.parse(kind, text)


#: kinds whose -s… option shows one object: the argument is its name, commas and all
SINGLE_NAME = ("pe", "ckpt", "calendar", "project", "hostgroup", "exechost")


def show_named(kind, words):
    """-sp, -sckpt, -scal, -shgrp, -sprj: the stored text of the one object named;
    -su, -suser, -srqs: of each name of the list (a user's or project's usage is not
    configuration: sge_share_mon shows it).

    As in Grid Engine, -su puts a blank line between the access lists it shows and
    -suser one before every name after the first, shown or not."""
    if kind in SINGLE_NAME:
        names = words[:1]
    elif kind == "user":
        names = [n for word in words for n in word.replace(" ", ",").split(",") if n]
    else:
        names = split(words)
    code, shown = 0, 0
    for number, name in enumerate(names):
        if number and kind == "user":
            sys.stdout.write("\n")
        text = stored(kind, name)
        if text is None:
            sys.stdout.flush()
            code = error(MISSING[kind].format(name))
            continue
        if shown and kind == "userset":
            sys.stdout.write("\n")
        sys.stdout.write(as_shown(text))
        shown += 1
    return code


def show_names(kind, _words=()):
    """-sql, -spl, -sel ...: the names of all objects of a kind."""
    names = spool_config.names(kind)
    if kind == "exechost":
        names = [n for n in names if n != "global"]
    if kind == "conf":
        names = [n for n in names if n != "global"]
    if not names:
        return error(EMPTY[kind])
    sys.stdout.write("".join(n + "\n" for n in names))
    return 0


def show_list(kind, _words=()):
    """-sm, -so, -sh, -ss: one name per line, sorted by their bytes as Grid Engine sorts
    them (strcmp: upper case before lower case), whatever order they were added in."""
    names = sorted(spool_config.read_list(kind), key=lambda n: n.encode("utf-8", "surrogateescape"))
    if not names:
        return error(EMPTY[kind])
    sys.stdout.write("".join(n + "\n" for n in names))
    return 0


def show_single(kind, missing, _words=()):
    """-ssconf, -sc, -sstree: the one object of its kind."""
    text = stored(kind)
    if text is None:
        return error(missing)
    sys.stdout.write(as_shown(text))
    return 0


# ---------------------------------------------------------------- queues

def show_queues(words):
    """-sq [wc_queue_list]: the template, cluster queues or queue instances."""
    from gridtools.formats.sge import objects
    if not words:
        sys.stdout.write(objects.render("queue", objects.template("queue")))
        return 0
    code, texts = 0, []
    for spec in split(words):
        found = _queue_texts(spec)
        if not found:
            code = error(MISSING["queue"].format(spec))
        texts.extend(found)
    sys.stdout.write(as_shown("\n".join(texts)))
    return code


def _queue_texts(spec):
    from gridtools.formats.sge.names import is_pattern, wildcard_match
    qpart, at, hpart = spec.partition("@")
    names = [q for q in spool_config.names("queue") if wildcard_match(qpart or "*", q)] \
        if is_pattern(qpart or "*") else ([qpart] if stored("queue", qpart) is not None else [])
    if not at:
        return [stored("queue", q) for q in names]
    texts = []
    for qname in names:
        texts.extend(_instance_texts(qname, hpart))
    return texts


def _instance_texts(qname, hpart):
    """Texts of the instances (or the domain) of queue ``qname`` named by ``hpart``."""
    from gridtools.sched import inputs as view
    from gridtools.formats.sge import objects
    from gridtools.formats.sge.names import wildcard_match
    conf = spool_config.load()
    groups = view.hostgroups(conf)
    queue = conf.objects["queue"][qname]
    if hpart.startswith("@"):
        return [objects.render("queue", _resolved(queue, [hpart], hpart, groups))] \
            if hpart in groups and hpart in _keys(queue) else []
    hosts = view.queue_hosts(queue, groups, set(view.exec_hosts(conf)))
    return [objects.render("queue", _resolved(queue, [h], h, groups))
            for h in hosts if wildcard_match(hpart, h, fold_case=True)]


def _keys(queue):
    from gridtools.formats.sge.codecs import PerHost
    keys = set(queue.get("hostlist") or [])
    for value in queue.values():
        if isinstance(value, PerHost):
            keys.update(value.overrides)
    return keys


def _resolved(queue, hostlist, key, groups):
    """The queue with every per-host value resolved for one host (or host group)."""
    from gridtools.formats.sge.codecs import PerHost
    shown = {}
    for attr, value in queue.items():
        if isinstance(value, PerHost):
            if key.startswith("@"):
                value = value.overrides.get(key, value.default)
            else:
                value = value.for_host(key, groups)
            shown[attr] = PerHost(value)
        else:
            shown[attr] = value
    shown["hostlist"] = list(hostlist)
    return shown


def show_detached(_words=()):
    """-sds: per-host values for hosts or groups no longer in a queue's host list."""
    from gridtools.sched import inputs as view
    from gridtools.formats.sge.codecs import PerHost
    conf = spool_config.load()
    groups = view.hostgroups(conf)
    for qname, queue in sorted(conf.objects["queue"].items()):
        members = set(queue.get("hostlist") or [])
        for entry in list(members):
            members |= groups.get(entry, set())
        for attr, value in queue.items():
            if isinstance(value, PerHost):
                for key in value.overrides:
                    if key not in members:
                        sys.stdout.write(f"{qname}: {attr} [{key}]\n")
    return 0


# ---------------------------------------------------------------- hosts and groups

def _load_text(value):
    if isinstance(value, float):
        return "%f" % value
    return str(value)


def show_exechosts(words):
    """-se host: the host's configuration with the load values it reports."""
    from gridtools.formats.sge import objects
    from gridtools.spool import status
    code = 0
    snap = None
    for name in words[:1]:              # one host, as in Grid Engine
        obj = parsed("exechost", name)
        if obj is None:
            code = error(MISSING["exechost"].format(name))
            continue
        if snap is None:
            snap = status.read() or {}
        sys.stdout.write(objects.render("exechost", with_reports(name, obj, snap)))
    return code


def with_reports(name, obj, snap):
    """Host ``name``'s configuration ``obj`` with the load values and processors its
    execution daemon last reported (in the daemon's published status ``snap``), as
    ``qconf -se`` shows them."""
    from gridtools.formats.sge import host
    load = {} if name == "global" else dict((snap.get("hosts") or {}).get(name) or {})
    # the slot state (Idle, Running ...) travels with the load report for the
    # HTCondor views; an execution daemon reports no such load value
    load.pop("state", None)
    ordered = {k: _load_text(load[k]) for k in LOAD_ORDER if k in load}
    ordered.update({k: _load_text(v) for k, v in sorted(load.items()) if k not in ordered})
    processors = int(load.get("num_proc", 0) or 0)
    return host.with_reports(obj, ordered, processors)


def _hostgroups():
    from gridtools.formats.sge import objects
    return {name: objects.parse("hostgroup", stored("hostgroup", name))
            for name in spool_config.names("hostgroup")}


def show_hostgroup_tree(words, resolved=False):
    """-shgrp_tree / -shgrp_resolved group."""
    from gridtools.errors import ConfigError
    from gridtools.formats.sge import hostgroup
    code = 0
    groups = _hostgroups()
    for name in split(words):
        if name not in groups:
            code = error(MISSING["hostgroup"].format(name))
            continue
        try:
            render = hostgroup.render_resolved if resolved else hostgroup.render_tree
            sys.stdout.write(render(name, groups))
        except ConfigError as exc:
            code = error(f"error: {exc}")
    return code


# ---------------------------------------------------------------- configurations

def show_conf(words):
    """-sconf [host,...|global]: a blank line before every host after the first."""
    code = 0
    for number, name in enumerate(split(words) or ["global"]):
        if number:
            sys.stdout.write("\n")
            sys.stdout.flush()
        text = stored("conf", name)
        if text is None:
            code = error(MISSING["conf"].format(name))
        else:
            sys.stdout.write(as_shown(text))
    return code


def show_rqs(words):
    """-srqs [name,...]: the named resource quota sets, or all of them."""
    names = split(words)
    if not names:
        names = spool_config.names("rqs")
        if not names:
            return error(EMPTY["rqs"])
    return show_named("rqs", names)


# ---------------------------------------------------------------- share tree

def _tree():
    return parsed("sharetree")


def show_tree(_words=()):
    """-sst: the share tree as an indented name=shares list."""
    from gridtools.formats.sge import sharetree
    tree = _tree()
    if tree is None:
        return error("no sharetree element")
    sys.stdout.write(sharetree.render_tree(tree))
    return 0


def show_nodes(words, recursive=False):
    """-sstnode / -rsstnode node_path,..."""
    from gridtools.errors import ConfigError
    from gridtools.formats.sge import sharetree
    tree = _tree()
    if tree is None:
        return error("no sharetree element")
    code = 0
    for path in split(words):
        try:
            sys.stdout.write(sharetree.render_nodes(tree, path, recursive))
        except ConfigError as exc:
            code = error(str(exc))
    return code


def show_event_clients(_words=()):
    """-secl: the scheduler is the one event client, when the daemon runs."""
    from gridtools.spool import daemonctl as control
    if not control.running():
        return error("no event clients registered")
    sys.stdout.write(f"{'ID':>8} {'NAME':<15} {'HOST':<25}\n{'-' * 50}\n"
                     f"{1:>8} {'scheduler':<15} {cell.hostname():<25}\n")
    return 0
