"""How the startd shares a host's load among its slots (LoadAvg, CondorLoadAvg,
TotalLoadAvg), what a release leaves in a job's ad (ReleaseReason, LastHoldReason*,
LastReleaseReason), and $(ETC) in every command's configuration."""

import os

from condortools import submit, wait_status
from conftest import wait_for
from gridtools import ads
from gridtools.daemon import hostfacts
from gridtools.formats.condor_config import Config

NOW = 1_700_000_000
SLEEP = "executable = /bin/sleep\narguments = 300\n"


def _config(text=""):
    config = Config()
    config.read_text(text)
    return config


def _loads(slots):
    return [(s.eval("Name"), round(s.eval("LoadAvg"), 3), round(s.eval("CondorLoadAvg"), 3)) for s in slots]


# ---------------------------------------------------------------- owner load (finding 3)

def test_owner_load_goes_to_unclaimed_slots_before_the_claimed_one():
    """The audit's host: load 2.32, one job (1.0) on slot1. HTCondor gives the owner load
    to Unclaimed slots first: slot1 keeps only its job's load."""
    host = ads.HostFacts("h2", cpus=4, memory=4096, disk=10, load_avg=2.32, condor_load_avg=1.0)
    views = {"slot1@h2": ads.SlotView("Claimed", "Busy", NOW, NOW)}
    assert _loads(ads.machine_ads(host, _config(), NOW, views)) == [
        ("slot1@h2", 1.0, 1.0), ("slot2@h2", 1.0, 0.0), ("slot3@h2", 0.32, 0.0), ("slot4@h2", 0.0, 0.0)]


def test_owner_slots_first_and_load_beyond_the_slots_goes_to_none():
    host = ads.HostFacts("h", cpus=3, memory=3000, disk=10, load_avg=9.0)
    views = {"slot1@h": ads.SlotView("Claimed", "Idle", NOW, NOW),
             "slot3@h": ads.SlotView("Owner", "Idle", NOW, NOW)}
    assert _loads(ads.machine_ads(host, _config(), NOW, views)) == [
        ("slot1@h", 1.0, 0.0), ("slot2@h", 1.0, 0.0), ("slot3@h", 1.0, 0.0)]
    light = ads.HostFacts("h", cpus=3, memory=3000, disk=10, load_avg=1.5)
    assert _loads(ads.machine_ads(light, _config(), NOW, views)) == [
        ("slot1@h", 0.0, 0.0), ("slot2@h", 0.5, 0.0), ("slot3@h", 1.0, 0.0)]


def test_a_dynamic_slot_takes_the_owner_load_beyond_its_partitionable_slots_cpus_left():
    cfg = _config("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = true\n")
    host = ads.HostFacts("p", cpus=4, memory=4096, disk=100, load_avg=3.0)
    claims = {"slot1_1@p": ads.Claim("7.0", "alice", "alice", cpus=2, memory=1024, disk=10)}
    views = {"slot1_1@p": ads.SlotView("Claimed", "Idle", NOW, NOW)}
    assert _loads(ads.machine_ads(host, cfg, NOW, views, claims)) == [("slot1@p", 2.0, 0.0),
                                                                       ("slot1_1@p", 1.0, 0.0)]


def test_each_claimed_slot_shows_its_own_jobs_measured_load():
    host = ads.HostFacts("m", cpus=2, memory=10, disk=10, load_avg=1.25, condor_load_avg=0.25,
                         job_loads=(("5.0", 0.25),))
    views = {"slot1@m": ads.SlotView("Claimed", "Busy", NOW, NOW), "slot2@m": ads.SlotView("Claimed", "Busy", NOW, NOW)}
    claims = {"slot1@m": ads.Claim("4.0", "a", "a"), "slot2@m": ads.Claim("5.0", "a", "a")}
    assert _loads(ads.machine_ads(host, _config(), NOW, views, claims)) == [("slot1@m", 1.0, 0.0),
                                                                             ("slot2@m", 0.25, 0.25)]


def test_a_jobs_load_is_its_cpu_time_over_the_last_minute():
    loads = hostfacts.JobLoads()
    loads.note("3.0", "h", 1000.0, 10.0, 1020.0)     # 10 s of CPU in its first 20 s
    loads.note("4.0", "h", 1000.0, 2.0, 1020.0)
    loads.note("5.0", "other", 1000.0, 20.0, 1020.0)
    assert loads.of("h") == {"3.0": 0.5, "4.0": 0.1}
    loads.note("3.0", "h", 1000.0, 30.0, 1080.0)      # a minute on: 20 s more in the last 60 s
    loads.note("3.0", "h", 1000.0, 30.0, 1100.0)      # idle since
    assert round(loads.of("h")["3.0"], 3) == round(20.0 / 80.0, 3)
    loads.keep({"3.0"})
    assert set(loads.of("h")) == {"3.0"} and loads.of("other") == {}
    assert hostfacts.job_loads({"3.0": 0.5}, 2, 4.0) == (("3.0", 1.0),)   # (a host loaded beyond its CPUs)


def test_host_facts_take_the_measured_loads_of_the_hosts_jobs(monkeypatch):
    facts = hostfacts.Facts()
    monkeypatch.setattr(facts, "disk", lambda now: 1000)
    monkeypatch.setattr(facts, "keyboard_idle", lambda devices, now: 0)
    facts.jobs.note("8.0", "n1", NOW - 30, 15.0, NOW)
    found, _overlay = facts.of("n1", _config(), {"load_short": 2.0, "load_avg": 2.0}, 4, 2, NOW)
    assert (found.condor_load_avg, found.job_loads) == (0.5, (("8.0", 0.5),))


# ---------------------------------------------------------------- the 1-minute load (finding 4)

def test_slot_load_is_the_one_minute_average_grid_engines_the_five_minute_one(monkeypatch):
    """The audit's /proc/loadavg (9.78 3.56 1.39): Grid Engine's load_avg and np_load_avg
    stay the 5-minute figure; HTCondor's TotalLoadAvg and LoadAvg are the 1-minute one."""
    from gridtools.exec import load
    monkeypatch.setattr(os, "getloadavg", lambda: (9.78, 3.56, 1.39))
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    sample = load.sample()
    assert (sample["load_avg"], sample["np_load_avg"], sample["load_short"]) == (3.56, 0.89, 9.78)
    facts = hostfacts.Facts()
    monkeypatch.setattr(facts, "disk", lambda now: 1000)
    monkeypatch.setattr(facts, "keyboard_idle", lambda devices, now: 0)
    found, _overlay = facts.of("h2", _config(), sample, 4, 0, NOW)
    first = ads.machine_ads(found, _config(), NOW)[0]
    assert (first.eval("TotalLoadAvg"), first.eval("LoadAvg")) == (9.78, 1.0)
    assert ads.HostFacts.from_load("h2", sample).load_avg == 9.78


# ---------------------------------------------------------------- release reasons (finding 5)

def _attrs(cell, jid, *names):
    return cell.run("condor_q", jid, "-af", *names).stdout


def test_release_and_hold_move_the_reasons_as_the_schedd_does(cell, workdir):
    cell.run("qconf", "-rattr", "queue", "slots", "0", "all.q", check=True)     # (nothing runs)
    cluster = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    assert cell.run("condor_release", "-reason", "go ahead", jid).returncode == 0
    wait_status(cell, jid, 1)
    long = cell.run("condor_q", "-l", jid).stdout
    assert 'ReleaseReason = "go ahead (by user root)"' in long
    assert "LastHoldReason = \"submitted on hold at user's request\"" in long
    assert "LastHoldReasonCode = 15" in long and "LastHoldReasonSubCode = 0" in long
    assert "\nHoldReason" not in long and "LastReleaseReason" not in long
    assert cell.run("condor_hold", "-reason", "again", "-subcode", "4", jid).returncode == 0
    wait_status(cell, jid, 5)
    assert _attrs(cell, jid, "HoldReason", "HoldReasonSubCode", "ReleaseReason", "LastReleaseReason",
                  "LastHoldReasonCode") == "again (by user root) 4 undefined go ahead (by user root) 15\n"
    assert cell.run("condor_release", jid).returncode == 0
    wait_status(cell, jid, 1)
    assert _attrs(cell, jid, "ReleaseReason", "LastReleaseReason", "LastHoldReason", "LastHoldReasonCode",
                  "LastHoldReasonSubCode", "HoldReason") == \
        "via condor_release (by user root) go ahead (by user root) again (by user root) 1 4 undefined\n"


def test_grid_engine_qrls_and_a_periodic_release_set_the_reasons(cell, workdir):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("PERIODIC_EXPR_INTERVAL = 1\n")
    cell.run("qconf", "-rattr", "queue", "slots", "0", "all.q", check=True)
    plain = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    assert cell.run("qrls", str(plain)).returncode == 0
    wait_status(cell, f"{plain}.0", 1)
    assert _attrs(cell, f"{plain}.0", "ReleaseReason", "LastHoldReasonCode", "HoldReasonCode") == \
        "via qrls (by user root) 15 undefined\n"
    periodic = submit(cell, SLEEP + "hold = true\nperiodic_release = NumJobStarts == 0\nqueue\n", cwd=workdir,
                      name="p.sub")
    jid = f"{periodic}.0"
    wait_status(cell, jid, 1, timeout=30)
    assert wait_for(lambda: _attrs(cell, jid, "LastHoldReasonCode", "HoldReason") == "15 undefined\n")
    assert "PeriodicRelease" in _attrs(cell, jid, "ReleaseReason")


# ---------------------------------------------------------------- $(ETC) (finding 8)

def test_etc_means_the_same_for_every_command(cell, workdir):
    """LOCAL_CONFIG_FILE = $(ETC)/hosts/$(HOSTNAME).local: every command looks for the
    same file condor_config_val names (here missing: the same error from each)."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("LOCAL_CONFIG_FILE = $(ETC)/hosts/$(HOSTNAME).local\nALLOW_WRITE = *\n")
    wanted = os.path.join(cell.root, "etc", "hosts")
    val = cell.run("condor_config_val", "ETC")
    assert val.returncode != 0 and wanted in val.stderr
    rm = cell.run("condor_rm", "1")
    assert rm.returncode != 0 and f"cannot read configuration file {wanted}/" in rm.stderr + rm.stdout
    os.makedirs(wanted, exist_ok=True)
    host = os.uname().nodename.split(".")[0]
    with open(os.path.join(wanted, f"{host}.local"), "w") as fh:
        fh.write("MARK = from-the-host-file\n")
    assert cell.run("condor_config_val", "MARK").stdout == "from-the-host-file\n"
    cluster = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    assert cell.run("condor_rm", str(cluster)).returncode == 0
