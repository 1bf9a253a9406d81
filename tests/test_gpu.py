"""GPUs and the names pipelines request: the shipped complexes gpu, tmem and tscratch;
distinct device indices per host in CUDA_VISIBLE_DEVICES and SGE_HGR_gpu; what qhost -F
shows as left; detection that never fails."""

import os

from conftest import wait_for
from qtools import jid_of, state_of, wait_state


def env_of(path):
    wait_for(lambda: os.path.exists(path) and open(path).read().endswith("END\n"))
    return dict(line.split("=", 1) for line in open(path).read().splitlines() if "=" in line)


def gpu_job(cell, workdir, name, amount, seconds):
    out = os.path.join(workdir, name)
    script = (f'echo CUDA="$CUDA_VISIBLE_DEVICES"; echo HGR="$SGE_HGR_gpu"; echo END; sleep {seconds}\n')
    return jid_of(cell.qsub("-l", f"gpu={amount}", "-o", out, "-j", "y", "-N", name, input=script)), out


def test_devices_are_distinct_and_freed(cell, workdir):
    cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=3", "testhost", check=True)
    two, out_two = gpu_job(cell, workdir, "two", 2, 30)
    one, out_one = gpu_job(cell, workdir, "one", 1, 1)
    first, second = env_of(out_two), env_of(out_one)
    held = set(first["CUDA"].split(",")) | set(second["CUDA"].split(","))
    assert len(first["CUDA"].split(",")) == 2 and len(second["CUDA"].split(",")) == 1
    assert held == {"0", "1", "2"}
    assert first["HGR"] == first["CUDA"].replace(",", " ")
    cell.wait_finished(one)
    again, out_again = gpu_job(cell, workdir, "again", 1, 1)
    assert env_of(out_again)["CUDA"] == second["CUDA"]          # the freed index is given again
    cell.run("qdel", str(two), check=True)


def test_a_third_gpu_job_waits_and_qhost_shows_what_is_left(workdir):
    """Two hosts served by their own execution daemons; testhost offers gpu=2, node2 none."""
    from conftest import destroy_cell, make_cell
    cell = make_cell(hosts=["testhost", "node2"], execds=True)
    try:
        cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=2", "testhost", check=True)
        big, out = gpu_job(cell, workdir, "big", 2, 60)
        assert sorted(env_of(out)["CUDA"].split(",")) == ["0", "1"]
        third, _ = gpu_job(cell, workdir, "third", 1, 1)
        wait_for(lambda: "hc:gpu" in cell.run("qstat", "-j", str(third)).stdout)
        assert state_of(cell, third) == "qw"
        why = cell.run("qstat", "-j", str(third)).stdout
        assert 'cannot run at host "testhost" because it offers only hc:gpu=0.000000' in why
        assert 'cannot run at host "node2" because it offers only hc:gpu=0.000000' in why
        shown = cell.run("qhost", "-F", "gpu").stdout.splitlines()
        named = "    Host Resource(s):      hc:gpu=0.000000"      # (the first -F names under each host)
        assert shown[3:] == ["node2                   " + shown[3][24:], named,
                             "testhost                " + shown[5][24:], named]
        cell.run("qdel", str(big), check=True)
        wait_state(cell, third, "r")
    finally:
        destroy_cell(cell)


def test_a_cell_without_gpus_keeps_gpu_jobs_waiting_and_runs_pipeline_requests(cell, workdir):
    waiting = jid_of(cell.qsub("-l", "gpu=1", "-b", "y", "true"))
    plain = jid_of(cell.qsub("-l", "h_vmem=1G,tmem=1G,tscratch=2G", "-pe", "make", "1", "-b", "y", "true"))
    cell.wait_finished(plain)
    reason = wait_for(lambda: [l for l in cell.run("qstat", "-j", str(waiting)).stdout.splitlines()
                               if l.startswith("scheduling info")])
    assert 'cannot run at host "testhost" because it offers only hc:gpu=0.000000' in reason[0]
    assert state_of(cell, waiting) == "qw"
    assert "    Host Resource(s):      hc:gpu=0.000000" in cell.run("qhost", "-F", "gpu").stdout.splitlines()
    assert "complex_values        gpu=0" in cell.run("qconf", "-se", "testhost").stdout
    names = {line.split()[0] for line in cell.run("qconf", "-sc").stdout.splitlines() if line[:1] != "#"}
    assert {"gpu", "tmem", "tscratch"} <= names


def test_detection_never_fails_without_a_driver(tmp_path, monkeypatch):
    from gridtools.exec import gpus
    monkeypatch.setenv("PATH", str(tmp_path))                  # no nvidia-smi anywhere
    assert gpus._from_proc(str(tmp_path / "absent")) is None
    assert gpus.count() == (gpus._from_proc() or 0)
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'GPU 0: Tesla (UUID: a)'\necho 'GPU 1: Tesla (UUID: b)'\n")
    fake.chmod(0o755)
    assert gpus.count() == 2


def test_init_offers_the_detected_gpus(tmp_path):
    import subprocess
    import sys
    from conftest import BIN
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/bin/sh\necho 'GPU 0: A (UUID: a)'\necho 'GPU 1: B (UUID: b)'\n")
    (fake / "nvidia-smi").chmod(0o755)
    root = tmp_path / "cell"
    env = dict(os.environ, GRIDTOOLS_ROOT=str(root), GRIDTOOLS_NO_AUTOSTART="1",
               PATH=os.pathsep.join([str(fake), BIN, os.path.dirname(sys.executable), os.environ["PATH"]]))
    subprocess.run(["gridtools", "init", "--host", "g1", "--host", "g2"], env=env, check=True,
                   capture_output=True)
    for host in ("g1", "g2"):
        text = (root / "etc" / "exechosts" / host).read_text()
        assert [l.split() for l in text.splitlines() if l.startswith("complex_values")] == [
            ["complex_values", "gpu=2"]]


def test_condor_jobs_see_the_gpus_in_the_slot_ads_and_share_them(workdir):
    """A host of three slots offers gpu=2: its slot ads say GPUs 1, 1, 0 (TotalGPUs 2);
    three HTCondor jobs asking for one GPU each run two at a time, each with its own."""
    from conftest import destroy_cell, make_cell
    from condortools import statuses, submit, wait_status
    cell = make_cell(slots=3)
    try:
        cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=2", "testhost", check=True)
        shown = cell.run("condor_status", "-af", "Name", "GPUs", "TotalGPUs").stdout.split("\n")
        assert shown[:3] == ["slot1@testhost 1 2", "slot2@testhost 1 2", "slot3@testhost 0 2"]
        text = ("executable = /bin/sh\narguments = \"-c 'echo $CUDA_VISIBLE_DEVICES; sleep 30'\"\n"
                "request_gpus = 1\noutput = out.$(Process)\nqueue 3\n")
        cluster = submit(cell, text, cwd=workdir)
        wait_for(lambda: sorted(statuses(cell, str(cluster)).values()) == [1, 2, 2])
        outs = [os.path.join(workdir, f"out.{p}") for p in range(3)]
        seen = wait_for(lambda: (lambda found: found if len(found) >= 2 else None)(
            sorted(open(p).read().strip() for p in outs if os.path.exists(p) and open(p).read().strip())))
        assert seen == ["0", "1"]
        why = cell.run("condor_q", "-better-analyze", f"{cluster}.2").stdout
        assert "( TARGET.GPUs >= RequestGPUs )" in why
        running = [jid for jid, st in statuses(cell, str(cluster)).items() if st == 2]
        cell.run("condor_rm", running[0], check=True)
        wait_status(cell, next(j for j, st in statuses(cell, str(cluster)).items() if j not in running), 2)
        cell.run("condor_rm", str(cluster), check=True)
    finally:
        destroy_cell(cell)


def test_condor_jobs_count_down_a_machine_resource_of_the_cell(workdir):
    """A consumable complex of whole units that a host offers is a machine resource:
    its slot ads publish it, request_<name> asks for it, and the jobs that hold it
    count it down as qsub -l jobs do."""
    from conftest import destroy_cell, make_cell
    from condortools import statuses, submit
    from qtools import add_complex
    cell = make_cell(slots=3)
    try:
        add_complex(cell, "licence lic INT <= YES YES 0 0")
        cell.run("qconf", "-mattr", "exechost", "complex_values", "licence=2", "testhost", check=True)
        shown = cell.run("condor_status", "-af", "Name", "licence", "Totallicence").stdout.split("\n")
        assert shown[:3] == ["slot1@testhost 1 2", "slot2@testhost 1 2", "slot3@testhost 0 2"]
        text = "executable = /bin/sleep\narguments = 30\nrequest_licence = 1\nqueue 3\n"
        cluster = submit(cell, text, cwd=workdir)
        assert "licence=1" in cell.run("qstat", "-j", str(cluster)).stdout
        wait_for(lambda: sorted(statuses(cell, str(cluster)).values()) == [1, 2, 2])
        assert "hc:licence=0" in cell.run("qstat", "-F", "licence").stdout
        cell.run("condor_rm", str(cluster), check=True)
    finally:
        destroy_cell(cell)


#: a job that prints the devices it was given (to out.<proc>) and runs on
SHOW_DEVICES = ("executable = /bin/sh\narguments = \"-c 'echo $CUDA_VISIBLE_DEVICES; sleep 30'\"\n"
                "output = out.$(Process)\n")


def devices_seen(cell, workdir, gpus, text, proc):
    """Offer ``gpus`` GPUs on testhost, submit ``text`` (SHOW_DEVICES and queue
    statements); (its cluster, the devices proc ``proc`` saw once it runs)."""
    from condortools import submit, wait_status
    cell.run("qconf", "-mattr", "exechost", "complex_values", f"gpu={gpus}", "testhost", check=True)
    cluster = submit(cell, SHOW_DEVICES + text, cwd=workdir)
    wait_status(cell, f"{cluster}.{proc}", 2)
    out = os.path.join(workdir, f"out.{proc}")
    return cluster, wait_for(lambda: os.path.exists(out) and open(out).read().strip())


def test_a_condor_job_of_several_cpus_holds_its_gpus_once(workdir):
    """request_cpus = 2 with request_gpus = 1 on a host with one GPU: the job runs on two
    slots holding the one GPU (HTCondor counts request_gpus for the job, not per CPU);
    a second job asking for a GPU waits until it is free."""
    from conftest import destroy_cell, make_cell
    from condortools import statuses, submit
    cell = make_cell(slots=3)
    try:
        big, seen = devices_seen(cell, workdir, 1, "request_cpus = 2\nrequest_gpus = 1\nqueue\n", 0)
        assert seen == "0"
        assert wait_for(lambda: "hc:gpu=0" in cell.run("qstat", "-F", "gpu").stdout)
        small = submit(cell, "executable = /bin/true\nrequest_gpus = 1\nqueue\n", cwd=workdir)
        wait_for(lambda: "gpu" in cell.run("qstat", "-j", str(small)).stdout)
        assert statuses(cell, f"{small}.0")[f"{small}.0"] == 1
        cell.run("condor_rm", str(big), check=True)
        wait_for(lambda: statuses(cell, f"{small}.0").get(f"{small}.0") in (None, 2, 4))
    finally:
        destroy_cell(cell)


def test_a_later_proc_of_several_cpus_holds_its_gpu_once_and_the_views_count_one(workdir):
    """Proc 0 asks for 1 CPU, proc 1 for 2 CPUs and 1 GPU, on a host with two GPUs: proc 1
    sees one device, the one of its first slot (slot2, CUDA1: proc 0 holds slot1); qstat -F
    counts one GPU held, and qsub -w p finds the other free."""
    from conftest import destroy_cell, make_cell
    cell = make_cell(slots=4)
    try:
        cluster, seen = devices_seen(cell, workdir, 2, "queue\nrequest_cpus = 2\nrequest_gpus = 1\nqueue\n", 1)
        assert cell.run("condor_q", f"{cluster}.1", "-af", "RemoteHost").stdout == "slot2@testhost\n"
        assert seen == "1"
        assert wait_for(lambda: "hc:gpu=1" in cell.run("qstat", "-F", "gpu").stdout)
        verified = cell.run("qsub", "-w", "p", "-l", "gpu=1", "-b", "y", "true")
        assert verified.stdout == "verification: found suitable queue(s)\n", verified.stderr
        cell.run("condor_rm", str(cluster), check=True)
    finally:
        destroy_cell(cell)


def test_qalter_of_the_gpus_of_a_pending_condor_job_changes_its_request_gpus(cell, workdir):
    """qalter -l gpu=N of a held HTCondor job sets its ads' RequestGPUs to N, as
    condor_qedit of RequestGPUs changes its gpu request; a new list without gpu sets 0.
    Released on a host of two GPUs, it runs with two devices."""
    from condortools import submit, wait_status
    cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=2", "testhost", check=True)
    cluster = submit(cell, SHOW_DEVICES + "request_gpus = 1\nhold = true\nqueue 2\n", cwd=workdir)
    shown = cell.run("condor_q", str(cluster), "-af", "RequestGPUs").stdout
    assert shown == "1\n1\n"
    cell.run("qalter", "-l", "gpu=2", str(cluster), check=True)
    assert cell.run("condor_q", str(cluster), "-af", "RequestGPUs").stdout == "2\n2\n"
    assert "gpu=2" in cell.run("qstat", "-j", str(cluster)).stdout
    cell.run("qalter", "-l", "h_rt=600", str(cluster), check=True)
    assert cell.run("condor_q", str(cluster), "-af", "RequestGPUs").stdout == "0\n0\n"
    cell.run("qalter", "-l", "gpu=2", str(cluster), check=True)
    cell.run("condor_rm", f"{cluster}.1", check=True)
    cell.run("condor_release", str(cluster), check=True)
    wait_status(cell, f"{cluster}.0", 2)
    out = os.path.join(workdir, "out.0")
    seen = wait_for(lambda: os.path.exists(out) and open(out).read().strip())
    assert sorted(seen.split(",")) == ["0", "1"]
    cell.run("condor_rm", str(cluster), check=True)


def test_qalter_of_a_machine_resource_changes_the_request_of_a_condor_job(cell, workdir):
    from condortools import submit
    from qtools import add_complex
    add_complex(cell, "licence lic INT <= YES YES 0 0")
    cell.run("qconf", "-mattr", "exechost", "complex_values", "licence=4", "testhost", check=True)
    cluster = submit(cell, "executable = /bin/true\nrequest_licence = 1\nhold = true\nqueue\n", cwd=workdir)
    cell.run("qalter", "-l", "licence=3", str(cluster), check=True)
    assert cell.run("condor_q", str(cluster), "-af", "RequestLicence", "RequestGPUs").stdout == "3 undefined\n"
    assert "licence=3" in cell.run("qstat", "-j", str(cluster)).stdout
    cell.run("condor_rm", str(cluster), check=True)


def test_a_condor_job_in_a_static_slot_gets_that_slots_gpus(workdir):
    """A host of three static slots offers gpu=2 (slot1 CUDA0, slot2 CUDA1): while a job
    without GPUs holds slot1, a job asking for one GPU runs in slot2 and sees device 1,
    the one slot2's ad names, not the host's first free one."""
    from conftest import destroy_cell, make_cell
    from condortools import submit, wait_status
    cell = make_cell(slots=3)
    try:
        cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=2", "testhost", check=True)
        shown = cell.run("condor_status", "-af", "Name", "AssignedGPUs").stdout.split("\n")
        assert shown[:3] == ["slot1@testhost CUDA0", "slot2@testhost CUDA1", "slot3@testhost undefined"]
        first = submit(cell, "executable = /bin/sleep\narguments = 60\nqueue\n", cwd=workdir)
        wait_status(cell, f"{first}.0", 2)
        assert cell.run("condor_q", f"{first}.0", "-af", "RemoteHost").stdout == "slot1@testhost\n"
        cluster, seen = devices_seen(cell, workdir, 2, "request_gpus = 1\nqueue\n", 0)
        assert cell.run("condor_q", f"{cluster}.0", "-af", "RemoteHost").stdout == "slot2@testhost\n"
        assert seen == "1"
        assert wait_for(lambda: "hc:gpu=1" in cell.run("qstat", "-F", "gpu").stdout)
        cell.run("condor_rm", str(first), str(cluster), check=True)
    finally:
        destroy_cell(cell)
