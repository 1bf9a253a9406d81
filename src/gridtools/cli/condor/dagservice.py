"""The DAG runner's SERVICE and PROVISIONER nodes.

``ServiceNodes`` is a part of ``dagrun.Runner``. As HTCondor's DAGMan runs
them:

- every SERVICE node starts when the DAG starts ("Starting service node
  S..."), before any other node: its PRE script runs (within -MaxPre), then its
  job is submitted, with ``DAGLifetimeJob = true`` in its ads (a NOOP one submits
  nothing; a failed PRE script submits nothing); when its job ends of itself
  while the DAG runs, its POST script runs. It is not a node of the graph: it is
  never retried, its scripts do not show in the node counts, and whether its
  scripts or its job succeed, fail or are removed does not count for the DAG (its
  end is logged). Once the DAG's other
  nodes are through (its FINAL node too, also after ABORT-DAG-ON or condor_rm,
  which leave it running until then), a service job still in the queue is
  removed (condor_rm, reason "Removed by DAGMan"). A held manager leaves it
  running; one that recovers the DAG follows it again (``recover_service``).
- the PROVISIONER node starts first (``dagstate.ready_nodes``); no other node
  starts until its job's ad holds ``ProvisionerState`` 2
  (PROVISIONING_COMPLETE), which the job sets itself (``condor_qedit``), or
  the node is done. Its job leaving the queue before that ends the DAG at once
  (exit status 1, no rescue DAG). It is otherwise a node like the others: the
  DAG waits for its job to end (it is not removed), and its outcome counts.
"""

import os

from gridtools.errors import GridError

#: ProvisionerState::PROVISIONING_COMPLETE, the value that lets the other nodes start
PROVISIONING_COMPLETE = 2
#: the reason a service node's job is removed with, as HTCondor's DAGMan gives it
SERVICE_REMOVE_REASON = "Removed by DAGMan"


class ServiceNodes:
    """SERVICE and PROVISIONER nodes of a run (module docstring)."""

    def _init_services(self):
        self.services = {}                  # SERVICE node -> (cluster, procs) while queued
        self.services_started = set()       # SERVICE nodes submitted (or recovered) by this run
        from gridtools.formats.condor.dag import NodeKind
        self.provisioner = next((n for n, node in self.dag.nodes.items()
                                 if node.kind is NodeKind.PROVISIONER), None)
        self.provisioned = self.provisioner is None or self.dag.nodes[self.provisioner].done
        self.provisioner_lost = False       # its job left the queue before provisioning

    def node_of(self, name):
        """The Node of a name, a SERVICE node's too."""
        return self.dag.nodes.get(name) or self.dag.services[name]

    def start_services(self):
        """Start the SERVICE nodes this run has not started: their PRE scripts, then their
        jobs (``_submit_service``)."""
        for name in self.dag.services:
            if name in self.services_started:
                continue
            self.services_started.add(name)
            self.log(f"Starting service node {name}...")
            self._queue_script(name, "PRE", None, lambda pre, name=name: self._submit_service(name, pre))

    def _submit_service(self, name, pre):
        """A SERVICE node's PRE script ended (``pre``: its status, None without one): its
        job submitted, unless the script failed or was cut short."""
        from gridtools.cli.condor.dagscripts import CUT_SHORT
        if pre is CUT_SHORT:
            return
        if pre:
            self.log(f"Service node {name}: its PRE script failed, its job is not submitted; "
                     "a service node's outcome does not count for the DAG")
            return
        node = self.dag.services[name]
        if node.noop:
            self.log(f"Node {name}: NOOP, its job is not submitted")
            return
        try:
            submitted = self._submit(name, node)
        except (GridError, OSError, ArithmeticError, ValueError, TypeError) as exc:
            self.log(f"Warning: unable to start service node {name} ({exc}). "
                     "Proceeding with the DAG workflow.")
            return
        self._note_service(name, submitted.cluster, submitted.procs)
        self.log(f"Submitting HTCondor Node {name} job(s)...")
        self.log(f"\tassigned HTCondor ID ({submitted.cluster}.0.0)")
        self.log(f"{submitted.procs} job(s) submitted to cluster {submitted.cluster}.")

    def _note_service(self, name, cluster, procs):
        self.services[name] = self.jobs[name] = (cluster, procs)

    def recover_service(self, name, cluster, procs):
        """A SERVICE node whose job a manager before this one submitted: followed again."""
        self.services_started.add(name)
        self._note_service(name, cluster, procs)
        self.log(f"Recovery: service node {name} has job(s) in cluster {cluster}; following it")

    def follow_services(self, scripts=True):
        """Note the SERVICE nodes whose jobs ended (their outcome does not count), and run
        their POST scripts (``scripts``: while the DAG runs, not once it is through)."""
        for name, (cluster, procs) in list(self.services.items()):
            codes = self.watcher.outcome(cluster, procs)
            if codes is None:
                continue
            del self.services[name]
            bad = [c for c in codes if c != 0]
            status = "removed" if any(c is None for c in bad) else (bad[0] if bad else 0)
            self.log(f"Service node {name} job(s) (cluster {cluster}) ended with status {status}; "
                     "a service node's outcome does not count for the DAG")
            if scripts:
                from gridtools.cli.condor.dagrun import RETURN_NO_JOB
                self._queue_script(name, "POST", RETURN_NO_JOB if status == "removed" else status, lambda _post: None)

    def remove_services(self):
        """condor_rm of the SERVICE node jobs still in the queue, once the DAG is through."""
        if not self.services:
            return
        from gridtools.cli.ask import outcomes
        targets = [{"id": cluster, "tasks": None} for cluster, _procs in self.services.values()]
        for name, (cluster, _procs) in self.services.items():
            self.log(f"Removing service node {name} job(s) (cluster {cluster})")
        try:
            outcomes("condor_rm", {"targets": targets, "force": False, "reason": SERVICE_REMOVE_REASON})
        except GridError as exc:
            self.log(f"ERROR: removing the service node jobs failed: {exc}")
        self.services.clear()

    def check_provisioner(self):
        """Whether the other nodes may start: the PROVISIONER node is done, or its job's
        ad holds ProvisionerState 2. Its job gone before that: ``provisioner_lost``."""
        if self.provisioned:
            return True
        name = self.provisioner
        if name in self.done:
            self.provisioned = True
            return True
        if name in self.failed:
            self.lose_provisioner(name)
        if name not in self.running:
            return False
        if _provisioner_state(self.running[name][0]) == PROVISIONING_COMPLETE:
            self.provisioned = True
            self.log(f"Provisioner node {name} reports PROVISIONING_COMPLETE; "
                     "starting the other nodes")
            return True
        return False

    def lose_provisioner(self, name):
        """The PROVISIONER node's job left the queue before provisioning: the DAG ends."""
        if not self.provisioner_lost:
            self.provisioner_lost = True
            self.log(f"ERROR: Provisioner node {name} job exited before giving DAGMan the go ahead!")


def _provisioner_state(cluster):
    """The ProvisionerState of a job's first proc (None when it has none or the job is gone)."""
    from gridtools.cli.condor import queue as Q
    from gridtools.spool import status as spool_status
    snap = spool_status.read() or {}
    procs = [p for p in Q.procs(snap, {cluster}) if p.cluster == cluster]
    if not procs:
        return None
    user = "root" if os.geteuid() == 0 else Q.me()
    value = Q.AdSource(snap, user).ad(procs[0]).eval("ProvisionerState")
    return value if isinstance(value, int) and not isinstance(value, bool) else None
