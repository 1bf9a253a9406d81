"""The Grid Engine dialect: one module per command, and what several share.

Commands: ``qsub``, ``qrsh`` (with ``qrsh_inherit`` for ``qrsh -inherit``),
``qalter`` (``qalter_verify``), ``qdel``, ``qhold`` (qhold and qrls), ``qmod``,
``qstat`` (``qstat_select``, ``qstat_text``, ``qstat_queues``, ``qstat_views``,
``qstat_report``, ``qstat_j``, ``qstat_jxml``, ``qstat_xml``, ``qstat_msgs``,
``qstat_usage``), ``qselect``, ``qhost`` (``qhost_xml``), ``qacct``, ``qconf`` (``qconf_show``,
``qconf_change``, ``qconf_attr``, ``qconf_usage``), ``qquota``, ``qrsub``,
``qrstat``, ``qrdel``, ``share_mon``.

Shared: ``options`` (the submit option table of qsub, qalter, qrsh, ``#$`` lines
and sge_request files), ``tokens`` (option words of files and scripts),
``submit`` (job descriptions, quick name checks), ``arlist`` (advance
reservations as queries see them), ``cellfacts`` (configuration facts read by
hand, and the admission rules before a job is queued), ``jobsel`` (job lists
of qdel/qhold/qalter), ``qstatus`` (the published status plus requests in
flight), ``verify`` (the scheduler's view for -w and qquota), ``loadvalues``,
``usage_text``, ``sync`` (-sync y, -now y), ``xmlout``.
"""
