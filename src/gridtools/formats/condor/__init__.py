"""HTCondor's file formats on the submit side, as pure parse/render code.

Modules:
  submit    submit descriptions: statements (commands, +Attr, queue),
            parse_submit(), render(); -append lines and a -queue override
  macros    $(name), $(name:default), $ENV, $INT, $REAL, $F..., $SUBSTR,
            $CHOICE, $RANDOM_CHOICE, $RANDOM_INTEGER
  queue     the queue statement (count, in, from, matching, slices) and its
            item rows
  argsenv   arguments and environment in the old and new quoting
  jobattrs  the job attributes each group of submit commands sets
  jobad     SubmitContext and build_jobs(): job ads as HTCondor makes them (drafts,
            see classad.draft)
  spec      a cluster's ads as a gridtools job description, and what running
            one proc needs (run_facts)
  fsview    the only file access submit processing needs (item files,
            globs, executable size), behind a small interface
  userlog   the job event log ("user log"): events rendered and read back
  dag       DAG input files for condor_submit_dag: parse (INCLUDE files in
            place), validate
  dagrender the text of a parsed DAG (reads back to the same DAG)
  dagstate  rescue DAGs (write, read, find the latest), where save point
            files go, and the nodes ready to run, retries and ABORT-DAG-ON
            outcomes
  dagprogress a running DAG's progress as the DAG_Status, DAG_Nodes* and
            DAG_Jobs* attributes of its manager's job ad
  dagjobstate the job state log's lines (JOBSTATE_LOG), as Pegasus reads them
  dagnodestatus the node status file (NODE_STATUS_FILE): DAGMan's ClassAds
  dagdot    the DAG drawn in dot syntax (DOT)
"""
