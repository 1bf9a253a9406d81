"""condor_q's batch view and totals from the published job listing (``spool.listing``).

The listing's runs are turned into groups of procs that share an owner, a
batch and a JobStatus, and the batches and totals are counted group by
group, where a record per proc (``queue.procs``) would cost several times
more. A cluster without a batch name whose procs are all in one group (most
are) is its own row, made at once without a batch to count (``_lone_rows``).
What is shown is what ``qviews.batch_view`` and ``qviews.summary`` show of
the procs.

The daemon publishes the batch view's table ready-made with each listing
(``Published``): everybody's, and each owner's, each in its own section of
the status file. A condor_q of one owner's jobs (its caller's, by default)
or of everybody's reads the one it shows and writes it as it is, when it
shows times as the daemon does (``spool.listing.zone``); other selections
(several users), and a status without them, are counted from the listing.
``-nobatch`` writes a row per proc from the listing's runs
(``nobatch_table``), taking the rows the daemon made of a run when they are
all it would write.
"""

from gridtools.cli.condor import cut, qviews, queue as Q
from gridtools.spool import listing as L
from gridtools.spool.status import TABLE


class Group:
    """The procs ``procs`` (numbers from 0) of ``clusters`` consecutive clusters from
    ``cluster``, all of one owner, batch and status."""

    __slots__ = ("cluster", "clusters", "procs", "status", "owner", "batch", "qdate", "submitted", "dag",
                 "dagman", "unmade", "universe")

    def __init__(self, run, procs, status):
        job = run[L.JOB]
        self.cluster, self.clusters, self.procs, self.status = run[L.ID], run[L.COUNT], procs, status
        self.owner, self.batch, self.qdate = job[L.J_OWNER], job[L.J_BATCH], run[L.SUBMITTED]
        self.submitted = job[L.J_SUBMITTED]
        made = (job[L.J_BOOK] or {}).get("materialized")
        self.unmade = self.submitted - made if made is not None else 0   # (procs not in the queue yet)
        self.dag = job[L.J_DAG] if len(job) > L.J_DAG else None     # a DAG manager's node counts
        self.dagman = job[L.J_DAGMAN] if len(job) > L.J_DAGMAN else 0   # a DAG node's manager
        self.universe = job[L.J_UNIVERSE]

    @property
    def size(self):
        return self.clusters * len(self.procs)


def _numbers(tasks):
    if tasks is None:
        return (1,)
    if type(tasks) is int:
        return (tasks,)
    return [n for first, last, step in tasks for n in range(first, last + 1, step)]


def groups(listing):
    """The groups of the listing's procs, by cluster and first proc."""
    found = []
    for run in listing["runs"]:
        state, book = run[L.STATE], run[L.JOB][L.J_BOOK] or {}
        by_status = {}
        for number in _numbers(run[L.TASKS]):
            status = Q._status(state, book, number, run[L.HOLD])
            if status is not None:
                by_status.setdefault(status, []).append(number - 1)
        found.extend(Group(run, procs, status) for status, procs in by_status.items())
    found.sort(key=lambda g: (g.cluster, g.procs[0]))
    return found


class _Batch:
    """What the batch view shows of one batch, counted group by group. A DAG's batch
    counts its node jobs, and takes the nodes done and in all from its manager's job,
    which it does not count (as HTCondor's condor_q shows a DAG)."""

    def __init__(self, owner, name, qdate):
        self.owner, self.name, self.first, self.last, self.qdate = owner, name, None, None, qdate
        self.size, self.counts = 0, {}
        self.totals = {}             # cluster -> procs submitted (clusters of several groups)
        self.unmade = {}             # cluster -> its procs not in the queue yet (daemon.factory)
        self.whole = 0               # procs submitted by clusters of one group each
        self.manager, self.dag = None, None

    def add(self, group, first, last, clusters):
        if self.first is None:
            self.first = self.last = first
        self.last = max(self.last, last)
        self.size += clusters * len(group.procs)
        self.counts[group.status] = self.counts.get(group.status, 0) + clusters * len(group.procs)
        if clusters > 1:
            self.whole += clusters * group.submitted          # jobs that are no arrays
        else:
            self.totals[first[0]] = group.submitted
            self.unmade[first[0]] = group.unmade

    def row(self):
        run = self.counts.get(Q.RUNNING, 0) + self.counts.get(Q.TRANSFERRING, 0)
        idle = self.counts.get(Q.IDLE, 0) + self.counts.get(Q.SUSPENDED, 0)
        total = self.whole + sum(self.totals.values())
        counts = (max(0, total - self.size - sum(self.unmade.values())), run, idle, self.counts.get(Q.HELD, 0),
                  total)
        if self.dag is not None:
            counts = (self.dag[1],) + counts[1:4] + (self.dag[0],)
        first, last = self.first or self.manager, self.last or self.manager
        if first == last:
            ids = f"{first[0]}.{first[1]}"
        elif first[0] == last[0]:
            ids = f"{first[0]}.{first[1]}-{last[1]}"
        else:
            ids = f"{first[0]}.{first[1]} ... {last[0]}.{last[1]}"
        return (self.owner, self.name, self.qdate, counts, ids)


def _shared_clusters(chosen):
    """The clusters of more than one group (procs of several statuses): their rows add
    groups up. Groups come by cluster and first proc, so only neighbours can share."""
    shared, reach = set(), -1
    for g in chosen:
        if g.cluster <= reach:
            shared.update(range(g.cluster, min(reach, g.cluster + g.clusters - 1) + 1))
        reach = max(reach, g.cluster + g.clusters - 1)
    return shared


def _lone_rows(g, found):
    """The rows of a group of clusters without a batch name, none of them in another
    group: one row each, alike but for the id (what ``_Batch`` would count)."""
    size, status = len(g.procs), g.status
    counts = (max(0, g.submitted - size - g.unmade), size if status in (Q.RUNNING, Q.TRANSFERRING) else 0,
              size if status in (Q.IDLE, Q.SUSPENDED) else 0, size if status == Q.HELD else 0,
              g.submitted)
    first, last = g.procs[0], g.procs[-1]
    tail = f".{first}" if first == last else f".{first}-{last}"
    owner, qdate = g.owner, g.qdate
    for c in range(g.cluster, g.cluster + g.clusters):
        found[("", c)] = (owner, f"ID: {c}", qdate, counts, f"{c}{tail}")


def batch_rows(chosen, fold_dags=False):
    """The batch view's rows (``qviews.batch_table``) of the groups ``chosen``; a DAG's
    node jobs are in its row whatever their own batch names. Rows are keyed as
    ``qviews.batches`` keys them (``fold_dags``: -batch:2)."""
    found = {}
    dags, named = {}, {}            # manager's cluster -> its row; (owner, batch name) -> the first row
    for g in chosen:
        if g.dag is not None and g.batch:
            name = (g.owner, g.batch)
            dags[g.cluster] = named.setdefault(name, name) if fold_dags else ("dag", g.cluster)
            named.setdefault(name, dags[g.cluster])
        elif g.batch and g.dagman not in dags:
            named.setdefault((g.owner, g.batch), (g.owner, g.batch))
    shared = _shared_clusters(chosen)
    for g in chosen:
        last_cluster = g.cluster + g.clusters - 1
        if not g.batch and g.dag is None and g.dagman not in dags and \
                not (shared and shared.intersection(range(g.cluster, last_cluster + 1))):
            _lone_rows(g, found)
            continue
        if g.dagman in dags:
            parts = [(dags[g.dagman], g.cluster, last_cluster)]
        elif g.dag is not None and g.batch:
            parts = [(dags[g.cluster], g.cluster, last_cluster)]
        elif g.batch:
            parts = [(named[g.owner, g.batch], g.cluster, last_cluster)]
        else:
            parts = [(("", c), c, c) for c in range(g.cluster, last_cluster + 1)]
        for key, first, last in parts:
            batch = found.get(key)
            if batch is None:
                batch = found[key] = _Batch(g.owner, g.batch or f"ID: {first}", g.qdate)
            if g.dag is not None and g.batch:
                if batch.dag is None:
                    batch.manager, batch.dag = (first, g.procs[0]), g.dag
                else:                   # (-batch:2: another DAG of the name, its nodes added up)
                    batch.dag = [a + b for a, b in zip(batch.dag, g.dag)]
                continue
            batch.add(g, (first, g.procs[0]), (last, g.procs[-1]), last - first + 1)
    return [b if b.__class__ is tuple else b.row() for b in found.values()]


def tally(chosen):
    """(procs, {JobStatus: procs}) of the groups ``chosen`` the standard summary counts:
    not the scheduler universe's (``qviews.counted``)."""
    counts = {}
    for g in chosen:
        if g.universe == qviews.SCHEDULER_UNIVERSE:
            continue
        counts[g.status] = counts.get(g.status, 0) + g.size
    return sum(counts.values()), counts


#: the section of the batch view of everybody's jobs; an owner's is ``BATCH:owner``
BATCH = f"{TABLE}batch"


def _shown_owner(sel, user):
    """Whose jobs the batch view shows: an owner's name, None for everybody's, False for
    several users'."""
    if sel.users:
        named = set(sel.users)
        return named.pop() if len(named) == 1 else False
    from gridtools.cli.condor.q import only_mine
    return user if only_mine(sel, user) else None


def wanted_tables(opts, user):
    """The sections of ready-made tables condor_q's view would show (``view``)."""
    if opts.view == "nobatch":
        return (NOBATCH,)
    if opts.view != "batch":
        return ()
    owner = _shown_owner(opts.selection, user)
    if owner is None:
        return (BATCH,)
    return (BATCH, f"{BATCH}:{owner}") if owner else ()


def _ready_table(listing, sel, user):
    """The published table of the batch view (``Published``), or None when there is none
    to show as it is."""
    tables = listing.get("tables")
    if not tables or BATCH not in tables or listing.get("zone") != L.zone():
        return None
    owner = _shown_owner(sel, user)
    if owner is None:
        return tables[BATCH]
    if owner is False:
        return None
    own = tables.get(f"{BATCH}:{owner}", False)
    return tables[BATCH] if own is None else (own or None)


class Published:
    """Makes the tables the daemon publishes with a listing (``spool.status.encode``'s
    ``tables``): the batch view of everybody's jobs (``BATCH``) and of each owner's
    (None where it is everybody's: an only owner's), and the per-proc table's rows of
    each run that can be made once (``NOBATCH``). Remembers the last listing's: a
    listing whose runs are the last one's is not counted again."""

    def __init__(self):
        self.runs, self.made = None, []

    def __call__(self, listing):
        runs = listing["runs"]
        if runs == self.runs:
            return self.made
        qviews.forget()
        everyone = groups(listing)
        whole = qviews.batch_table(batch_rows(everyone))
        owners = {}
        for g in everyone:
            owners.setdefault(g.owner, []).append(g)
        made = [(BATCH, whole)]
        for owner, mine in owners.items():
            text = whole if len(owners) == 1 else qviews.batch_table(batch_rows(mine))
            made.append((f"{BATCH}:{owner}", None if text == whole else text))
        made.append((NOBATCH, [_ready_rows(run) for run in runs]))
        self.runs, self.made = runs, made
        return made


def _visible_args(user):
    """owner -> {job id: private facts} of the jobs whose arguments the caller sees (its
    own; everyone's for root), from the files the daemon publishes for each user: a
    file is trusted only for the jobs of the user it is for (``spool.status.read_private``)."""
    import posix
    from gridtools.spool import status as spool_status
    uid = posix.getuid()
    files = spool_status.read_private(uid)
    if uid != 0:
        return {user: files.get(uid) or {}}
    import pwd
    found = {}
    for owner_uid, facts in files.items():
        try:
            found[pwd.getpwuid(owner_uid).pw_name] = facts
        except KeyError:
            found[str(owner_uid)] = facts
    return found


def _args_of(facts, cluster, number):
    mine = facts.get(cluster)
    if not mine:
        return ""
    own = mine.get("procs")
    own = own.get(str(number)) if own else None
    args = own if own is not None else mine.get("args")
    return " " + " ".join(args) if args else ""


def _run_procs(run, now):
    """(proc number, fields of its row of the per-proc table: ``qviews.nobatch_layout``)
    of each proc of a listing run that condor_q shows, by proc number."""
    job = run[L.JOB]
    state, book, owner = run[L.STATE], job[L.J_BOOK] or _NOTHING, job[L.J_OWNER]
    start = float(run[L.TIME]) if Q.holds_slot(state) else 0.0
    date, cmd = qviews.format_date(run[L.SUBMITTED]), qviews.base_name(job[L.J_CMD] or job[L.J_NAME])
    walls, prios, letters = book.get("tasks") or _NOTHING, book.get("procs") or _NOTHING, Q.STATUS_LETTER
    image = job[L.J_IMAGE] if len(job) > L.J_IMAGE else 0
    for number in _numbers(run[L.TASKS]):
        status = Q._status(state, book, number, run[L.HOLD])
        if status is None:
            continue
        mine = walls.get(str(number)) or _NOTHING
        spent = float(mine.get("wall") or 0.0)
        if start and status in (Q.RUNNING, Q.SUSPENDED, Q.HELD):
            spent += now - start
        own = prios.get(str(number))
        prio = str(int(own.get("prio") or 0) if own is not None else job[L.J_PRIO])
        yield number, (owner, date, qviews.format_time(spent), letters.get(status, "?"), prio,
                       qviews.size_text(mine.get("size"), image), cmd)


#: the section of the per-proc table's rows of each run of the listing, when they are
#: the same whenever they are shown (``_ready_rows``)
NOBATCH = f"{TABLE}nobatch"
#: the width of the PRI column of the ready-made rows (the least the table gives it)
READY_PRIO_WIDTH = 3


def _ready_rows(run):
    """The rows of the per-proc table of a run of jobs that are no arrays and whose rows
    do not change with the time (none is running), without their arguments, with a
    PRI column ``READY_PRIO_WIDTH`` wide; else None."""
    if run[L.TASKS] is not None or Q.holds_slot(run[L.STATE]):
        return None
    procs = list(_run_procs(run, 0.0))
    if len(procs) != 1 or len(procs[0][1][4]) > READY_PRIO_WIDTH:
        return None
    rest = qviews.nobatch_layout(READY_PRIO_WIDTH)[1]("", *procs[0][1])
    first = run[L.ID]
    return "".join([f"{c:4d}.0  {rest}\n" for c in range(first, first + run[L.COUNT])])


def nobatch_table(listing, shown, user, now):
    """condor_q -nobatch's table (``qviews.nobatch``) of the listing's procs whose owners
    ``shown`` accepts, in cluster and proc order: the procs of a run of jobs that show
    alike differ in their ids and arguments only. The rows the daemon made of a run
    (``NOBATCH``) are written as they are when none of them has arguments the caller
    sees, the PRI column is as wide and times are shown as the daemon showed them."""
    runs = listing["runs"]
    ready = (listing.get("tables") or _NOTHING).get(NOBATCH)
    if type(ready) is not list or len(ready) != len(runs) or listing.get("zone") != L.zone():
        ready = None
    args_by_owner = _visible_args(user) if user else {}
    blocks, prio_width = [], READY_PRIO_WIDTH
    for i, run in enumerate(runs):
        owner = run[L.JOB][L.J_OWNER]
        if not shown(owner):
            continue
        first, count = run[L.ID], run[L.COUNT]
        args = args_by_owner.get(owner) if user in (owner, "root") else None
        text = ready[i] if ready is not None else None
        if text is not None and args and any(c in args for c in range(first, first + count)):
            text = None
        for number, fields in _run_procs(run, now):
            prio_width = max(prio_width, len(fields[4]))
            blocks.append((first, number - 1, count, fields, args, text))
    blocks.sort(key=_block_order)
    head, row = qviews.nobatch_layout(prio_width)
    lines = [head + "\n"]
    as_ready = prio_width == READY_PRIO_WIDTH
    for first, proc, count, fields, args, text in blocks:
        if text is not None and as_ready:
            lines.append(text)
            continue
        rest = row("", *fields)
        if count == 1:
            lines.append(f"{first:4d}.{proc:<3d}{rest}{_args_of(args, first, proc + 1) if args else ''}\n")
        elif args:
            lines.extend([f"{c:4d}.0  {rest}{_args_of(args, c, 1)}\n" for c in range(first, first + count)])
        else:
            lines.extend([f"{c:4d}.0  {rest}\n" for c in range(first, first + count)])
    return "".join(lines)


_NOTHING = {}


def _everyone(_owner):
    return True


def _block_order(block):
    return block[0], block[1]


def view(opts, listing, user, now, schedd, width=None):
    """condor_q's text for the batch view or -totals of the listing (its lines cut to
    ``width``: the package's ``cut``): the published table when the listing comes with it
    (``wanted_tables``)."""
    everyone = groups(listing)
    sel = opts.selection
    from gridtools.cli.condor.q import only_mine
    mine_shown = only_mine(sel, user)
    if sel.users:
        shown = set(sel.users).__contains__
    elif not mine_shown:
        shown = _everyone
    else:
        shown = user.__eq__
    chosen = everyone if shown is _everyone else [g for g in everyone if shown(g.owner)]
    mine = [g for g in everyone if g.owner == user] if mine_shown else None
    totals = qviews.totals_text(*(None if part is None else qviews.tally_text(*tally(part))
                                  for part in (chosen, mine, everyone)), user)
    head = qviews.title(schedd, now)
    if opts.view == "totals":
        return head + totals
    if opts.view == "nobatch":
        return head + cut(nobatch_table(listing, shown, user, now), width) + "\n" + totals + "\n"
    zero, fold = opts.zero, opts.fold_dags
    table = _ready_table(listing, sel, user) if zero == "_" and not fold else None   # (made without)
    if table is None:
        table = qviews.batch_table(batch_rows(chosen, fold), zero)
    return head + cut(table, width) + "\n" + totals + "\n"
