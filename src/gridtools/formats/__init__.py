"""Every text format gridtools reads or writes, as parse/render pairs, and the checks of
what clients send. Nothing here touches files.

- ``spoolyaml``     the YAML subset of the spool (job descriptions, requests, results)
- ``values``        Grid Engine time and memory values, booleans, INFINITY
- ``accounting``    the accounting file's lines
- ``condor_config`` the HTCondor configuration language (``condor_conditions``: its
  if/elif/else/endif blocks; ``condor_metaknobs``: the templates of its use statements;
  ``condor_params``: the defaults of the knobs gridtools reads)
- ``sge/``          Grid Engine's configuration objects (queues, hosts, PEs, ...)
- ``jobcheck``      a job description checked field by field (daemon and qsub alike)
- ``reqcheck``      the body of every request kind, checked before the daemon uses it
- ``safetext``      users' text made safe to log and to print (control characters shown)
"""
