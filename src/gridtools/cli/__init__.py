"""The commands: only this package prints.

- ``entry``     the command table: a launcher's name -> the module that runs it
- ``sge``       the Grid Engine dialect (qsub, qstat, qdel, qconf, ...)
- ``condor``    the HTCondor dialect (condor_submit, condor_q, condor_rm, ...)
- ``status``    the cell's status for queries of both dialects: the published
                snapshot merged with submits still in flight, or its job listing
                alone when nothing is in flight
- ``ask``       the one door through which commands send requests to the daemon
- ``identity``  the submitting user's identity every job description carries
- ``cellinit``  making sure a cell exists (the personal cell on first use)
- ``admin``, ``hostctl``, ``classad_cmd``  gridtools init/daemon/host, llctl,
                gridtools classad
"""
