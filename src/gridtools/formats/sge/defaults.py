"""The configuration a new cell starts with.

``shipped_files()`` is the host-independent tree the repository ships in
its top-level ``etc/`` (generated from the templates of this package, so
the two cannot drift apart); ``default_cell_objects(hosts, slots,
manager)`` is the host-specific part ``gridtools init`` writes on top. Both
return ``{path relative to etc/: text}``; neither touches files.
"""

from gridtools.formats.sge import conf, hostgroup, host, lists, pe, queue, sched, userset
from gridtools.formats.sge import complex as complex_
from gridtools.formats.sge.attrfile import FieldError
from gridtools.formats.sge.codecs import PerHost
from gridtools.formats.sge.names import check_host_name

#: the queue every new cell has, and the host group it serves
DEFAULT_QUEUE = "all.q"
ALL_HOSTS = "@allhosts"
#: slots per host in the queue default when hosts get their own counts
DEFAULT_SLOTS = 1
#: users that manage every cell (the installing user is added)
BUILTIN_MANAGERS = ("root",)
#: parallel environments of a new cell: name -> attributes differing from the template
DEFAULT_PES = {
    "make": {"slots": 999, "allocation_rule": "$round_robin", "control_slaves": True,
             "job_is_first_task": False},
    "smp": {"slots": 999, "allocation_rule": "$pe_slots"},
    "mpi": {"slots": 999, "allocation_rule": "$fill_up"},
}
#: user sets of a new cell: name -> type
DEFAULT_USERSETS = {"arusers": ["ACL"], "deadlineusers": ["ACL"], "defaultdepartment": ["DEPT"]}

SGE_REQUEST = """\
# Default requests of this cell (sge_request(5)).
#
# Every line holds options exactly as they would be given to qsub on the
# command line; several options may share a line. Blank lines and lines
# starting with # are ignored. qsub and qrsh read this file first,
# then .sge_request in the user's home directory (the one the password
# database gives, whatever $HOME says), then .sge_request in the current
# directory; options in the job script and on the command line are
# applied last and win. -clear drops the requests read so far.
#
# Examples (remove the leading # to activate one):
#
# -cwd
# -l h_rt=1:00:00
# -j y
"""

SGE_ALIASES = """\
# Path aliases of this cell (sge_aliases(5)).
#
# When a job is submitted from a directory below a source path, its working
# directory on matching execution hosts starts with the replacement path
# instead. Each line holds four fields separated by blanks:
#
#   source path   submit host   execution host   replacement path
#
# A host field of * matches every host. Blank lines and lines starting
# with # are ignored; $HOME/.sge_aliases is read after this file.
#
# cluster global path aliases file
# src-path   subm-host   exec-host   dest-path
#/tmp_mnt/   *           *           /
"""


#: load_thresholds of all.q in a personal cell: none. The machine is the user's own, its
#: slots are its CPUs, and the load a newcomer's other programs (or other users of a
#: busy machine) cause must not hold the user's own jobs back; a shared cell keeps
#: Grid Engine's np_load_avg=1.75
PERSONAL_LOAD_THRESHOLDS = {}


def _queue(slots, personal=False):
    obj = queue.template(DEFAULT_QUEUE)
    obj["hostlist"] = [ALL_HOSTS]
    obj["slots"] = slots if isinstance(slots, PerHost) else PerHost(slots)
    if personal:
        obj["load_thresholds"] = PerHost(dict(PERSONAL_LOAD_THRESHOLDS))
    # scripts run the Unix way: a "#!" line chooses the interpreter, as
    # batch pipelines written for Grid Engine expect of a fresh install
    obj["shell_start_mode"] = PerHost("unix_behavior")
    return obj


def _sched():
    """The scheduler configuration of a new cell: Grid Engine's defaults (urgency and
    tickets weigh half each, waiting time adds 0.278 per second, -p weighs nothing)."""
    return sched.template()


#: attributes a new cell defines besides Grid Engine's: the GPU consumable and the memory
#: and scratch names snakemake's Grid Engine executor requests (complex(5))
PIPELINE_COMPLEXES = (
    "gpu                 gpu        INT       <=    YES         YES        0        0",
    "tmem                tmem       MEMORY    <=    YES         NO         0        0",
    "tscratch            tscr       MEMORY    <=    YES         NO         0        0",
)


def shipped_complex():
    """The complex of a new cell: Grid Engine's attributes and PIPELINE_COMPLEXES."""
    table = complex_.template()
    for line in PIPELINE_COMPLEXES:
        row = complex_.parse_row(line)
        table[row["name"]] = row
    return table


def shipped_files():
    """The host-independent ``etc/`` tree of a new cell."""
    files = {
        "conf/global": conf.render(conf.template("global")),
        "sched_conf": sched.render(_sched()),
        "complex": complex_.render(shipped_complex()),
        f"queues/{DEFAULT_QUEUE}": queue.render(_queue(DEFAULT_SLOTS)),
        f"hostgroups/{ALL_HOSTS}": hostgroup.render(hostgroup.template(ALL_HOSTS)),
        "exechosts/global": host.render(host.with_reports(host.template("global"), {}, 0)),
        "sge_request": SGE_REQUEST,
        "sge_aliases": SGE_ALIASES,
    }
    for name, values in DEFAULT_PES.items():
        files[f"pe/{name}"] = pe.render({**pe.template(name), **values})
    for name, kinds in DEFAULT_USERSETS.items():
        files[f"usersets/{name}"] = userset.render({**userset.template(name), "type": list(kinds)})
    for kind in lists.LIST_KINDS:
        files[kind] = ""
    return files


def _slots_value(hosts, slots):
    def count(name):
        value = slots.get(name, DEFAULT_SLOTS) if isinstance(slots, dict) else slots
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise FieldError(f'invalid slot count "{value}" for host "{name}"', "slots")
        return value

    if len(hosts) == 1:
        return PerHost(count(hosts[0]))
    return PerHost(DEFAULT_SLOTS, {name: count(name) for name in hosts})


def default_cell_objects(hosts, slots, manager, gpus=0, personal=False):
    """The host-specific ``etc/`` files of a new cell.

    ``hosts``: execution host names; ``slots``: slots per host, one int for
    all or a dict host -> int; ``manager``: the user who runs the cell;
    ``gpus``: the GPUs each host offers as the ``gpu`` consumable (its
    complex_values say ``gpu=N``, ``gpu=0`` on a machine without GPUs, so a
    ``-l gpu=1`` job waits saying the host offers none and ``qhost -F`` shows 0). ``personal``: the cell is a user's own
    (``~/.gridtools``), whose queue has no load threshold. The queue gets
    ``slots N`` for one host and ``1,[host=N],...`` otherwise, as Grid
    Engine's installer writes it.
    """
    hosts = list(dict.fromkeys(hosts))
    if not hosts:
        raise FieldError("a cell needs at least one execution host", "hostlist")
    for name in hosts:
        check_host_name(name, "hostlist")
    files = {f"hostgroups/{ALL_HOSTS}": hostgroup.render({"group_name": ALL_HOSTS, "hostlist": hosts})}
    for name in hosts:
        obj = host.template(name)
        obj["complex_values"] = {"gpu": str(int(gpus or 0))}
        files[f"exechosts/{name}"] = host.render(obj)
    files[f"queues/{DEFAULT_QUEUE}"] = queue.render(_queue(_slots_value(hosts, slots), personal))
    files["managers"] = lists.render(list(dict.fromkeys([*BUILTIN_MANAGERS, manager])))
    files["adminhosts"] = lists.render(hosts)
    files["submithosts"] = lists.render(hosts)
    return files
