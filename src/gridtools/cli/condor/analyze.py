"""condor_q -analyze and -better-analyze: why jobs do not run.

The text comes from ``sched.analysis`` (a job ad against slot ads);
-better-analyze analyses the match of running and held jobs too. The
slot ads are the ones the daemon publishes (what condor_status shows:
states, claims, GPUs); before the daemon has published any, those every
execution host of the cell offers (``ads.machine_ads``), made from the
hosts' published load values, GPUs and the cell's condor_config, with the
slots that run tasks Claimed/Busy by the owners of those tasks and the
others Unclaimed/Idle.
"""

import shutil

from gridtools.cli.condor import queue as Q


def _config():
    from gridtools import cell
    from gridtools.formats import condor_config

    class Empty:
        def get(self, name, default=None):
            return default
    try:
        return condor_config.load(condor_config.locate(cell.etc("condor_config")))
    except Exception:  # noqa: BLE001 - an unreadable configuration: the defaults
        return Empty()


def _free_disk_kib():
    from gridtools import cell
    try:
        return shutil.disk_usage(cell.root()).free // 1024
    except OSError:
        return 0


def _gpus(values):
    """The GPUs of a host's published complex values (its ``gpu`` consumable)."""
    from gridtools.formats.sge.complex import whole_amount
    return whole_amount((values or {}).get("gpu", 0))


def slot_ads(snap, everyone, now):
    """The slot ads of every execution host of the cell."""
    from gridtools import ads
    config = _config()
    hosts = snap.get("hosts") or {}
    names = list(snap.get("exechosts") or sorted(hosts))
    disk = _free_disk_kib()
    found = []
    for name in names:
        facts = ads.HostFacts.from_load(name, hosts.get(name) or {}, disk=disk,
                                        gpus=_gpus((snap.get("host_values") or {}).get(name)))
        running = [p for p in everyone if p.host == name and p.status in (Q.RUNNING, Q.SUSPENDED)]
        views, claims = {}, {}
        busy = iter(running)
        for lay in ads.layout(facts, config):
            proc = next(busy, None)
            if proc is None:
                break
            views[lay.name] = ads.SlotView("Claimed", "Busy", proc.start, proc.start)
            claims[lay.name] = ads.Claim(proc.id, proc.owner, proc.owner, start=proc.start)
        found.extend(ads.machine_ads(facts, config, now, views, claims))
    return found


def report(snap, chosen, everyone, source, better, now):
    """The analysis of every chosen proc."""
    from gridtools.sched import analysis
    if snap.get("slots"):
        from gridtools.cli.condor import adformat
        machines = [adformat.full(adformat.from_plain(item)) for item in snap["slots"]]
    else:
        machines = slot_ads(snap, everyone, now)
    out = []
    for proc in chosen:
        ad = source.ad(proc)
        if better and ad.eval("JobStatus") != Q.IDLE:   # -better-analyze looks at the match anyway
            ad = ad.copy()
            ad["JobStatus"] = Q.IDLE
        out.append(analysis.analyze(ad, machines, better=better, now=now))
    return "".join(out)
