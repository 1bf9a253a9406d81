"""A cell's configuration from a compact description, without a cell on disk.

The description is a mapping (from a simulator trace or a test scenario)::

    hosts: [h1, h2]                 # execution hosts (or a count: 2); queue all.q on each
    slots: 2                        # slots per host (or {h1: 2, h2: 4})
    queue: {pe_list: "make smp"}    # all.q attributes, in qconf -sq syntax
    queues: {big.q: {seq_no: 10}}   # more queues: like all.q, attributes changed
    sched: {maxujobs: 1}            # sched_conf attributes
    complex: ["gpu gpu INT <= YES YES 0 0"]      # extra complex rows
    exechost: {h1: {complex_values: "gpu=2"}}
    users: {alice: {fshare: 100}}   # user objects (attributes optional)
    projects: {p1: {fshare: 10}}
    sharetree: "id=0\\nname=Root\\n..."           # qconf -sstree text
    objects: {pe/mpi: "pe_name mpi\\n..."}        # any object in qconf text

Everything else comes from the shipped default cell (``etc/``); load
thresholds are off unless the description sets them. Every object goes
through the same parser as ``qconf`` and the daemon use.
"""

import os

from gridtools import cell
from gridtools.formats.sge import defaults
from gridtools.spool.config import FOLDERS, SINGLE, CellConfig, parse


def _shipped():
    files = {}
    top = cell.shipped_etc()
    for folder, _dirs, names in os.walk(top):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as fh:
                files[os.path.relpath(path, top)] = fh.read()
    return files


def replace_attrs(text, attrs):
    """Object text with attributes replaced (or added) as ``name value`` lines."""
    lines, attrs = [], {k: str(v) for k, v in (attrs or {}).items()}
    for line in text.splitlines():
        key = line.split(" ", 1)[0]
        lines.append(f"{key} {attrs.pop(key)}" if key in attrs else line)
    return "\n".join(lines + [f"{k} {v}" for k, v in attrs.items()]) + "\n"


def _member(kind, name, attrs):
    base = {"name": name, "oticket": 0, "fshare": 0}
    if kind == "users":
        base.update(delete_time=0, default_project="NONE")
    else:
        base.update(acl="NONE", xacl="NONE")
    base.update(attrs or {})
    return "".join(f"{k} {v}\n" for k, v in base.items())


def host_names(hosts):
    """The execution hosts of a description: a list of names, or a count N for h1..hN
    (one host, h1, when none is given)."""
    if hosts is None or hosts == []:
        return ["h1"]
    if isinstance(hosts, int) and not isinstance(hosts, bool) and hosts > 0:
        return [f"h{n}" for n in range(1, hosts + 1)]
    if isinstance(hosts, list) and all(isinstance(h, str) and h for h in hosts):
        return list(hosts)
    raise ValueError(f"hosts: expected a list of host names or a number of hosts, not {hosts!r}")


def files_of(desc):
    """The text of every configuration file the description makes."""
    files = _shipped()
    files.update(defaults.default_cell_objects(host_names(desc.get("hosts")), desc.get("slots", 2),
                                               "root"))
    base = replace_attrs(files["queues/all.q"], {"load_thresholds": "NONE", **(desc.get("queue") or {})})
    files["queues/all.q"] = base
    for name, attrs in (desc.get("queues") or {}).items():
        files[f"queues/{name}"] = replace_attrs(base, {"qname": name, **(attrs or {})})
    files["sched_conf"] = replace_attrs(files["sched_conf"], desc.get("sched"))
    if desc.get("complex"):
        # an extra row replaces a shipped attribute of the same name (gpu, tmem, ...)
        names = {row.split()[0] for row in desc["complex"] if row.split()}
        kept = [line for line in files["complex"].rstrip("\n").splitlines() if line.split()[:1] not in
                [[n] for n in names]]
        files["complex"] = "\n".join(kept) + "\n" + "\n".join(desc["complex"]) + "\n"
    for host, attrs in (desc.get("exechost") or {}).items():
        key = f"exechosts/{host}"
        files[key] = replace_attrs(files.get(key, f"hostname {host}\n"), attrs)
    for kind in ("users", "projects"):
        members = desc.get(kind) or {}
        if isinstance(members, (list, tuple)):
            members = dict.fromkeys(members)
        for name, attrs in members.items():
            files[f"{kind}/{name}"] = _member(kind, name, attrs)
    if desc.get("sharetree"):
        files["sharetree"] = desc["sharetree"]
    files.update(desc.get("objects") or {})
    return files


def config(desc):
    """The CellConfig of a description."""
    conf = CellConfig()
    folders = {v: k for k, v in FOLDERS.items()}
    singles = {v: k for k, v in SINGLE.items()}
    for path, text in files_of(desc).items():
        folder, _, name = path.partition("/")
        if name and folder in folders:
            conf.objects[folders[folder]][name] = parse(folders[folder], text)
        elif not name and folder in ("sched_conf", "complex", "sharetree"):
            conf.single[singles[folder]] = parse(singles[folder], text)
    return conf
