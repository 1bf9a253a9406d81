"""The HTCondor dialect's commands.

- ``config_val``  condor_config_val
- ``status``      condor_status; ``machineviews`` its tables, summaries and the
                  submitter and schedd ads made from the job queue
- ``userprio``    condor_userprio; ``userprio_table`` its table
- ``reconfig``    condor_reconfig
- ``submit_dag``  condor_submit_dag; ``dagman`` (``gridtools dagman``), ``dagrun``
                  and ``dagwatch``: the DAG's manager, its loop and how it learns
                  that node jobs ended
- ``jobsubmit``   a submit description to a submit request (the path DAG nodes take)
- ``adformat``    -long, -af, -format, -json and -constraint for ad listings
"""
