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
  moreattrs, deferral  what fewer descriptions need, loaded only for one that
            does: one-attribute commands, retries ...; job deferral and cron
            schedules
  crontab   a cron schedule's fields and the next time it names
  spec      a cluster's ads as a gridtools job description, and what running
            one proc needs (run_facts)
  fsview    the only file access submit processing needs (item files,
            globs, executable size), behind a small interface
  userlog   the job event log ("user log"): events rendered and read back
  submitreqs, transforms, usermaps  the schedd's submit requirements, job transforms
            and ClassAd user maps (userMap())
  usagetable the resource table of the terminate event
  dag       DAG input files for condor_submit_dag: parse (INCLUDE files in
            place), validate
  dagstatements the DAG statements that set what its nodes do (RETRY, VARS, SCRIPT ...)
  dagdesc   the submit descriptions a DAG file writes itself (SUBMIT-DESCRIPTION,
            a node's inline { ... })
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


#: the version and platform gridtools gives as HTCondor's (job ads, slot ads, -version)
VERSION = "$CondorVersion: 24.0.0 gridtools $"
PLATFORM = "$CondorPlatform: X86_64-Linux gridtools $"


def url_scheme(text):
    """The scheme of a URL as HTCondor reads one (``http`` of ``http://x``; the part after
    the last ``+``, ``-`` or ``.`` of one like ``chtc+https``), or "" for no URL: a letter,
    letters, digits, ``+``, ``-`` and ``.``, then ``://`` and something."""
    head, sep, rest = text.partition("://")
    if not (sep and rest and head[:1].isascii() and head[:1].isalpha()):
        return ""
    if not all(ch.isascii() and (ch.isalnum() or ch in "+-.") for ch in head):
        return ""
    for mark in "+-.":
        head = head.rpartition(mark)[2] if mark in head else head
    return head


def c_atoi(text):
    """The number C's ``atoi`` reads from ``text``, as HTCondor's tools read numbers
    (condor_submit's machine_count, the tools' -limit, -match, -wide:N ...):
    leading blanks, a sign and the digits that follow (0 when there are none; what comes
    after is ignored), saturated to 64 bits and then wrapped to a 32-bit int, as glibc's
    ``(int) strtol`` does (``1.5`` is 1, ``4294967297`` is 1, ``abc`` is 0)."""
    rest = text.lstrip(" \t\n\v\f\r")
    sign = -1 if rest[:1] == "-" else 1
    rest = rest[1:] if rest[:1] in ("-", "+") else rest
    digits = len(rest) - len(rest.lstrip("0123456789"))
    number = rest[:digits].lstrip("0")
    value = sign * (int(number or "0") if len(number) <= 19 else 2 ** 63)     # (beyond 64 bits: saturated)
    value = max(-2 ** 63, min(2 ** 63 - 1, value))
    return (value + 2 ** 31) % 2 ** 32 - 2 ** 31
