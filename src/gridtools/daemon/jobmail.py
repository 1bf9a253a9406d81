"""Mail about jobs: Grid Engine's (``qsub -m b|e|a|s``, ``-M``) in the words of its
execd and qmaster, and HTCondor's (``notification``, ``notify_user``) in its schedd's.

A Grid Engine job is mailed when a task starts (``b``), when it ends (``e``:
"Complete", with its usage), when its run fails, is rescheduled or puts it
into the error state (``a`` or ``e``: "Aborted", "Rescheduled", "Set in error
state", with the reason), when qdel ends it (``a``: "Killed"), and when it is
suspended or continued (``s``). Its addresses are its ``-M`` list, by default
its owner at its submit host. An HTCondor job is mailed at its end as its
``notification`` says (Always and Complete: every end; Error: an end by a
signal or with a status other than 0), and when HTCondor itself puts a proc
on hold or removes it while it runs ("put on hold", "removed": Always; Error
for a hold that is not the owner's, the job's policy's or its submission's,
or after an exit other than the success exit code), at its NotifyUser, by
default its owner at its submit host.

A Grid Engine job whose start fails, or whose run fails so that its queue or
itself is put into the error state (the shepherd's failure states execd
mails about: ``ADMIN_STATES``), is mailed about to the global configuration's
``administrator_mail`` too, in the words of execd's job_related_adminmail,
with the task's shepherd ``trace`` and ``error`` files.

The mailer is the cell's: sge_conf's ``mailer`` for a Grid Engine job,
condor_config's ``MAIL`` for an HTCondor one (``/usr/bin/mail`` for both by
default), run with the message on its standard input: as ``mailer -s subject
address``, once per address, for Grid Engine's mail (its ``-M`` list split on
commas only, as sge_mailrec does: no more of it than fits in MAIL_LIST_CHARS
characters, as execd keeps it), and once as ``mailer -s subject address...``
for HTCondor's (NotifyUser split on commas and blanks, as email_open does).
It runs in the background: the daemon never waits for it, and kills one that
has not ended after MAILER_TIMEOUT seconds. A mailer about a job runs as the
job's owner (a daemon run by root gives it the owner's uid, group and groups)
with a clean environment, since the addresses and the job's name in the
subject are the owner's words; an address that begins with ``-`` (it would be
an option to the mailer) or holds a control character is not mailed. The
administrator's mail runs as the daemon's own user, as execd runs it as its
own: its arguments are the manager's addresses and a subject of numbers; the
owner's words (the reason, the trace) are only in the message, where a line
that begins with ``~`` (a mailer's escape) is indented. While MOST_RUNNING
mailers of one user run, that user's next mails wait and are sent, in order,
as those end (a large array asking for mail of each task would otherwise have
the daemon start thousands of processes at once). What was sent, and what was
not, is noted in the messages file.
"""

import collections
import os
import pwd
import re
import signal as signals
import stat
import subprocess
import time

#: the mailer when the configuration names none (sge_conf(5) mailer, HTCondor's MAIL)
DEFAULT_MAILER = "/usr/bin/mail"
#: seconds a mailer may run before it is killed (Grid Engine's)
MAILER_TIMEOUT = 60.0
#: characters of a job's mail list, its addresses joined by commas, that are mailed
#: (execd's buffer; the addresses beyond are noted "maillist for job N too long")
MAIL_LIST_CHARS = 1023
#: most mailers of one user running at once: that user's next mails wait for them
MOST_RUNNING = 8
#: most mails of one user waiting for a mailer: one beyond is noted, not sent (it
#: bounds the daemon's memory, not what a user may reasonably ask for)
MOST_WAITING = 20000
#: the mailers running: (Popen, when it was started, the uid it runs as)
_RUNNING = []
#: uid -> the mails waiting for a mailer of that uid: [(label, argv, body, owner), ...]
_WAITING = {}
#: the shepherd's failure states execd mails the administrator about (reaper_execd's
#: cases; 7 and 14, "before prolog" and "before epilog", once while the daemon runs)
ADMIN_STATES = frozenset((3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 26, 27, 28, 29,
                          30, 36, 38))
#: the failure states mailed about once, and those that were
_ADMIN_ONCE, _ADMIN_SENT = frozenset((7, 14)), set()
#: the product and version in the subject of the administrator's mail
PRODUCT = "SGE 8.1.9"
#: the shepherd's files the administrator's mail carries, and the most of each it takes
SHEPHERD_FILES, SHEPHERD_FILE_BYTES = ("trace", "error", "pe_hostfile"), 65536


# ---------------------------------------------------------------- Grid Engine

def _gridengine(job):
    """True for a Grid Engine job (None: a reservation, Grid Engine's too)."""
    return job is None or not job.spec.get("condor_ad")


def _letters(job):
    return str(job.spec.get("mail_options") or "")


def _subject(job, number, what):
    name = job.spec.get("name", "")
    if job.is_array:
        return f"Job-array task {job.id}.{number} ({name}) {what}"
    return f"Job {job.id} ({name}) {what}"


def _when(stamp):
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(stamp)) if stamp else "<unknown>"


def _hms(seconds):
    from gridtools.formats.values import format_time
    return format_time(max(0, seconds))


def _memory(nbytes):
    if not nbytes:
        return "NA"
    from gridtools.cli.sge import loadvalues
    return loadvalues.memory(float(nbytes))


def started(state, job, number, now):
    """A task was dispatched: ``-m b``'s mail."""
    if not _gridengine(job) or "b" not in _letters(job):
        return
    task = job.task(number)
    subject = _subject(job, number, "Started")
    body = (f"{subject}\n User       = {job.spec['owner']}\n Queue      = {task.queue}@{task.host}\n"
            f" Host       = {task.host}\n Start Time = {_when(task.start_time or now)}\n")
    send(state, job, subject, body)


def ended(state, job, task, result):
    """A task's run ended (``result``: its shepherd's): ``-m e``'s mail when it ran to its
    end, ``-m a`` or ``-m e``'s when it failed, was rescheduled or went into the error
    state. A run qdel ended was mailed about when it was deleted (``killed``)."""
    if not _gridengine(job) or result.get("deleted") or task.deleting:
        return
    administrator(state, job, task, result)
    letters = _letters(job)
    usage = result.get("usage") or {}
    failed = int(result.get("failed") or 0)
    user, queue, host = job.spec["owner"], f"{task.queue}@{task.host}", task.host
    start, end = task.start_time, float(result.get("end_time") or 0) or time.time()
    cpu = float(usage.get("ru_utime", 0.0) or 0.0) + float(usage.get("ru_stime", 0.0) or 0.0)
    cpu_text = _hms(cpu) if cpu else "NA"
    vmem = _memory(usage.get("maxvmem"))
    status = int(result.get("exit_status") or 0)
    if not failed and not result.get("error_state") and not result.get("requeue"):
        if "e" not in letters:
            return
        subject = _subject(job, task.number, "Complete")
        body = (f"{subject}\n User             = {user}\n Queue            = {queue}\n"
                f" Host             = {host}\n Start Time       = {_when(start)}\n"
                f" End Time         = {_when(end)}\n"
                f" User Time        = {_hms(float(usage.get('ru_utime', 0.0) or 0.0))}\n"
                f" System Time      = {_hms(float(usage.get('ru_stime', 0.0) or 0.0))}\n"
                f" Wallclock Time   = {_hms(end - start if start else 0)}\n"
                f" CPU              = {cpu_text}\n Max vmem         = {vmem}\n Exit Status      = {status}\n")
        send(state, job, subject, body)
        return
    if "a" not in letters and "e" not in letters:
        return
    from gridtools.accounting.report import FAILED, UNKNOWN_FAILED
    if result.get("requeue"):
        action, comment = "Rescheduled", ""
    elif result.get("error_state"):
        action = "Set in error state"
        comment = '\nUse "qmod -c <jobid>" to clear job error state\nonce the problem is fixed.'
    else:
        action, comment = "Aborted", ""
    number = int(result.get("signal") or 0)
    try:
        sig = signals.Signals(number).name[3:] if number else "unknown signal"
    except ValueError:
        sig = "unknown signal"
    reason = result.get("error_reason") or result.get("failed_reason") or "<unknown reason>"
    subject = _subject(job, task.number, action)
    body = (f"{subject}\n Exit Status      = {status}\n Signal           = {sig}\n User             = {user}\n"
            f" Queue            = {queue}\n Host             = {host}\n Start Time       = {_when(start)}\n"
            f" End Time         = {_when(end)}\n CPU              = {cpu_text}\n Max vmem         = {vmem}\n"
            f"failed {FAILED.get(failed, UNKNOWN_FAILED)} because:\n{reason}{comment}\n")
    send(state, job, subject, body)


def administrator(state, job, task, result):
    """A task failed in one of execd's ADMIN_STATES: the mail of job_related_adminmail to
    the global configuration's administrator_mail, sent as the daemon's user."""
    failed = int(result.get("failed") or 0)
    conf = state.config.objects["conf"].get("global") or {}
    addresses = _mail_list(conf.get("administrator_mail"))
    if failed not in ADMIN_STATES or not addresses or failed in _ADMIN_SENT:
        return
    if failed in _ADMIN_ONCE:
        _ADMIN_SENT.add(failed)
    from gridtools.accounting.report import FAILED, UNKNOWN_FAILED
    queue = f"{task.queue}@{task.host}" if task.queue else "<unknown>"
    if job.is_array:
        subject = f"{PRODUCT}: Job-array task {job.id}.{task.number} failed"
    else:
        subject = f"{PRODUCT}: Job {job.id} failed"
    reason = result.get("error_reason") or result.get("failed_reason") or "<unknown reason>"
    end = float(result.get("end_time") or 0) or time.time()
    body = (f"Job {job.id} caused action: {_action(job, task, result, failed)}\n User        = {job.spec['owner']}\n"
            f" Queue       = {queue}\n Start Time  = {_when(task.start_time or result.get('start_time'))}\n"
            f" End Time    = {_when(end)}\nfailed {FAILED.get(failed, UNKNOWN_FAILED)}:{reason}"
            + _shepherd_files(job.id, task.number))
    body = "".join(" " + line if line.startswith("~") else line for line in body.splitlines(True))
    try:
        name = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        name = str(os.geteuid())
    mail(state, f"job {job.id}", {"owner": name, "uid": os.geteuid(), "gid": os.getegid()},
         _mailer(state, job), subject, body + "\n", addresses)


def _action(job, task, result, failed):
    """What the failure halted, in execd's words (MSG_GFSTATE_*)."""
    if result.get("queue_error"):
        return f'All Queues on host "{task.host}" set to ERROR' if failed in (7, 36) \
            else f'Queue "{task.queue}@{task.host}" set to ERROR'
    if result.get("error_state"):
        return f"Job-array task {job.id}.{task.number} set to ERROR" if job.is_array else f"Job {job.id} set to ERROR"
    return "none"


def _shepherd_files(job_id, number):
    """The task's shepherd files that are not empty, as the administrator's mail carries them."""
    from gridtools.spool import jobs as jobstore
    folder, text = jobstore.task_dir(job_id, number), ""
    for name in SHEPHERD_FILES:
        try:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            data = os.read(fd, SHEPHERD_FILE_BYTES) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
        except OSError:
            data = b""
        finally:
            os.close(fd)
        if data:
            text += f"\nShepherd {name}:\n" + data.decode("utf-8", "replace")
    return text


def killed(state, job, number, by):
    """qdel took a task away (``by``: user@host of the request): ``-m a``'s mail."""
    if not _gridengine(job) or "a" not in _letters(job):
        return
    name = job.spec.get("name", "")
    if job.is_array:
        subject = f"Job-array task {job.id}.{number} ({name}) Killed"
        body = f"Job-array task {job.id}.{number} ({name}) was killed by {by}\n"
    else:
        subject = f"Job {job.id} ({name}) Killed"
        body = f"Job {job.id} ({name})  was killed by {by}\n"
    send(state, job, subject, body)


def stopped(state, job, task, suspended):
    """A running task was suspended (or continued): ``-m s``'s mail."""
    if not _gridengine(job) or "s" not in _letters(job):
        return
    subject = _subject(job, task.number, "Suspended" if suspended else "Continued")
    body = (f"{subject}\n Master queue    = {task.queue}@{task.host}\n Owner           = {job.spec['owner']}\n"
            f" Submission time = {_when(job.spec.get('submit_time'))}\n"
            f" Start time      = {_when(task.start_time)}\n")
    send(state, job, subject, body)


# ---------------------------------------------------------------- HTCondor

def _condor_head(job, number, ad, host):
    """The lines that open the schedd's mail about a proc: the machine, the job's id, its
    command and arguments, batch name and submit folder."""
    cmd = ad.eval("Cmd")
    args = ad.eval("Arguments")
    if not isinstance(args, str) or not args:
        args = ad.eval("Args")          # (arguments in the old syntax)
    lines = ["This is an automated email from the Condor system", f'on machine "{host}".  Do not reply.', "",
             f"Condor job {job.id}.{number - 1}"]
    if isinstance(cmd, str) and cmd:
        lines.append(f"\t{cmd} {args}" if isinstance(args, str) and args else f"\t{cmd}")
    batch, iwd = ad.eval("JobBatchName"), ad.eval("Iwd")
    if isinstance(batch, str) and batch:
        lines.append(f"\tfrom batch {batch}")
    if isinstance(iwd, str) and iwd:
        lines.append(f"\tsubmitted from directory {iwd}")
    return lines


def condor_started(state, job, number, ad, host, address):
    """An HTCondor job's proc began to run, and its notification is Start."""
    lines = _condor_head(job, number, ad, host) + ["has started", ""]
    _condor_send(state, job, f"Condor Job {job.id}.{number - 1}", lines, address)


def condor_ended(state, job, task, result, ad, host, address, now):
    """An HTCondor job's proc ended, and its notification asks for mail (``address``: its
    NotifyUser, or its owner at the submit host): the schedd's message."""
    from gridtools.cli.condor.qviews import format_time      # (HTCondor's ddd+hh:mm:ss)
    proc = f"{job.id}.{task.number - 1}"
    lines = _condor_head(job, task.number, ad, host)
    number = int(result.get("signal") or 0)
    lines.append(f"died on signal {number}" if number else
                 f"exited normally with status {int(result.get('exit_status') or 0)}")
    submitted = float(job.spec.get("submit_time") or now)
    usage = result.get("usage") or {}
    utime, stime = float(usage.get("ru_utime", 0.0) or 0.0), float(usage.get("ru_stime", 0.0) or 0.0)
    wall = max(0.0, now - task.start_time) if task.start_time else 0.0
    image = ad.eval("ImageSize")
    lines += ["", "", f"Submitted at:        {time.ctime(submitted)}"]
    if not number:
        lines += [f"Completed at:        {time.ctime(now)}", f"Real Time:           {format_time(now - submitted)}"]
    lines += ["", f"Virtual Image Size:  {image if isinstance(image, int) else 0} Kilobytes", "",
              "Statistics from last run:", f"Allocation/Run time:     {format_time(wall)}",
              f"Remote User CPU Time:    {format_time(utime)}",
              f"Remote System CPU Time:  {format_time(stime)}",
              f"Total Remote CPU Time:   {format_time(utime + stime)}", ""]
    _condor_send(state, job, f"Condor Job {proc}", lines, address)


def condor_action(state, job, number, ad, host, address, action, reason):
    """HTCondor put an HTCondor job's proc on hold or removed it (``action``: "put on
    hold", "removed") for ``reason``, and its notification asks for such mail."""
    lines = _condor_head(job, number, ad, host) + ["", f"is being {action}.", "", reason]
    _condor_send(state, job, f"Condor Job {job.id}.{number - 1} {action}", lines, address)


#: what email_open puts before each subject
CONDOR_SUBJECT_PROLOG = "[Condor] "


def _condor_send(state, job, subject, lines, address):
    """Mail ``lines`` and email_close's signature with one mailer, whose arguments are the
    addresses of ``address`` split on commas and blanks (email_open's)."""
    conf = state.condor.conf if state.condor is not None else {}
    custom = conf.get("EMAIL_SIGNATURE")
    if custom is not None:
        tail = ["", "", str(custom)]
    else:
        tail = ["", "", "-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=",
                "Questions about this message or HTCondor in general?"]
        helper = conf.get("CONDOR_SUPPORT_EMAIL") or conf.get("CONDOR_ADMIN")
        if helper is not None:
            tail.append(f"Email address of the local HTCondor administrator: {helper}")
        tail.append("The Official HTCondor Homepage is https://htcondor.org/")
    addresses = [part for part in re.split("[, ]", str(address)) if part]
    mail(state, f"job {job.id}", job.spec, _mailer(state, job), CONDOR_SUBJECT_PROLOG + subject,
         "\n".join(lines + tail) + "\n", addresses, together=True)


# ---------------------------------------------------------------- sending

def _mail_list(text):
    """The addresses of a mail list written as one text (commas between them, as
    sge_mailrec reads it), without repeats; none for "none"."""
    text = str(text or "").strip()
    if text.lower() == "none":
        return []
    return list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))


def _addresses(job):
    listed = [str(a).strip() for a in job.spec.get("mail_list") or () if str(a).strip()]
    return list(dict.fromkeys(listed)) or [f"{job.spec['owner']}@{job.spec.get('submit_host') or 'localhost'}"]


def _mailer(state, job):
    if _gridengine(job):
        found = (state.config.objects["conf"].get("global") or {}).get("mailer")
    else:
        found = state.condor.conf.get("MAIL") if state.condor is not None else None
    found = str(found or "").strip()
    return found if found and found.upper() != "NONE" else DEFAULT_MAILER


def send(state, job, subject, body, addresses=None):
    """Mail ``body`` about ``job`` to each of its addresses, in the background."""
    mail(state, f"job {job.id}", job.spec, _mailer(state, job), subject, body, addresses or _addresses(job))


def _bounded(state, label, addresses):
    """The first of ``addresses`` that fit in MAIL_LIST_CHARS characters, joined by
    commas (execd's mail list); those beyond are noted, not mailed."""
    size, kept = -1, []
    for address in addresses:
        size += len(address) + 1
        if size > MAIL_LIST_CHARS:
            left = addresses[len(kept):]
            state.log(f"E|maillist for {label} too long: no mail to its last {len(left)} addresses "
                      f"({', '.join(left[:3])}{', ...' if len(left) > 3 else ''})")
            break
        kept.append(address)
    return kept


def _refused(address):
    return not address or address.startswith("-") or any(ord(c) < 32 or c == "\x7f" for c in address)


def mail(state, label, owner, mailer, subject, body, addresses, together=False):
    """Mail ``body`` with ``mailer`` to ``addresses`` as ``owner`` (a mapping with the
    ``owner``'s name, ``uid`` and ``gid``), in the background: one mailer per address,
    or one for them all (``together``: HTCondor's); ``label`` names what it is about in
    the messages. A mail waits while MOST_RUNNING mailers of its user run."""
    reap()
    subject = " ".join(subject.split())                 # (one line, whatever a name holds)
    good = []
    for address in _bounded(state, label, [a.strip() for a in addresses]):
        if _refused(address):
            state.log(f"W|{label}: no mail to {address!r}: not an address")
        else:
            good.append(address)
    uid = int(owner.get("uid", os.getuid()))
    for group in ([good] if together and good else [[a] for a in good]):
        _queue(uid, (state.log, label, [mailer, "-s", subject, *group], body, owner))
        _start_waiting(uid)             # (so that only a mail that does wait is said to)


def _queue(uid, item):
    log, label, argv = item[:3]
    waiting = _WAITING.setdefault(uid, collections.deque())
    if len(waiting) >= MOST_WAITING:
        log(f"W|{label}: no mail to {' '.join(argv[3:])} ({argv[2]}): "
            f"{len(waiting)} mails of its user wait for a mailer already")
        return
    if _running(uid) >= MOST_RUNNING:
        log(f"I|{label}: mail to {' '.join(argv[3:])} waits: {MOST_RUNNING} mailers of its user run ({argv[2]})")
    waiting.append(item)


def _running(uid):
    return sum(1 for entry in _RUNNING if entry[2] == uid)


def _start_waiting(uid):
    """Start the mails of ``uid`` that wait, while fewer than MOST_RUNNING of its mailers run."""
    waiting = _WAITING.get(uid) or ()
    while waiting and _running(uid) < MOST_RUNNING:
        log, label, argv, body, owner = waiting.popleft()
        problem = _start(argv, body, owner)
        if problem:
            log(f"W|{label}: no mail to {' '.join(argv[3:])} ({argv[2]}): {problem}")
        else:
            log(f"I|{label}: mail to {' '.join(argv[3:])}: {argv[2]}")
    if not waiting:
        _WAITING.pop(uid, None)


# ---------------------------------------------------------------- advance reservations

#: the mail of a reservation: option letter and event -> (what the subject says, what
#: the body's time is)
_AR_EVENTS = {"start": ("b", "Started", "Start Time"), "end": ("e", "Finished", "End Time"),
              "deleted": ("e", "Deleted", "Delete Time"), "error": ("a", "Error", "Error Time"),
              "resolved": ("a", "Error resolved", "Error resolved Time")}


def reservation(state, data, event, when):
    """An advance reservation started, ended, was deleted, went into error or out of it
    (``event``, at ``when``): the mail ``qrsub -m`` asked for, in Grid Engine's words."""
    letter, what, label = _AR_EVENTS[event]
    if letter not in str(data.get("mail_options") or ""):
        return
    owner = str(data.get("owner") or "")
    try:
        entry = pwd.getpwnam(owner)
    except KeyError:
        state.log(f"W|advance reservation {data.get('id')}: no mail: its owner {owner} is unknown")
        return
    name = data.get("name") or "none"
    subject = f"Advance Reservation {data.get('id')} ({name}) {what}"
    body = f"{subject}\n User       = {owner}\n {label} = {_when(when)}\n"
    addresses = [str(a) for a in data.get("mail_list") or () if str(a).strip()]
    from gridtools import cell
    mail(state, f"advance reservation {data.get('id')}", {"owner": owner, "uid": entry.pw_uid, "gid": entry.pw_gid},
         _mailer(state, None), subject, body, addresses or [f"{owner}@{cell.hostname()}"])


def _start(argv, body, spec):
    """Start the mailer (``argv``) as ``spec``'s owner; what went wrong, or None."""
    import tempfile
    uid, gid = int(spec.get("uid", os.getuid())), int(spec.get("gid", os.getgid()))
    try:
        entry = pwd.getpwuid(uid)
        home, name = entry.pw_dir, entry.pw_name
    except KeyError:
        home, name = "/", str(spec.get("owner", uid))
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "USER": name, "LOGNAME": name,
           "LANG": "C.UTF-8"}
    kwargs = {}
    if os.geteuid() == 0 and uid != 0:
        try:
            groups = os.getgrouplist(name, gid)
        except OSError:
            groups = [gid]
        kwargs = {"user": uid, "group": gid, "extra_groups": groups}
    try:
        with tempfile.TemporaryFile() as text:
            text.write(body.encode("utf-8", "replace"))
            text.seek(0)
            proc = subprocess.Popen(argv, stdin=text, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, env=env, cwd="/", close_fds=True,
                                    start_new_session=True, **kwargs)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return f"{argv[0]}: {getattr(exc, 'strerror', None) or exc}"
    _RUNNING.append((proc, time.monotonic(), uid))
    return None


def waiting():
    """True when mails wait for a mailer of their user to end (the daemon's loop then
    reaps as soon as it wakes: a mailer that ends wakes it)."""
    return bool(_WAITING)


def reap():
    """Collect the mailers that ended, kill those that ran too long, and start the
    mails that wait for them."""
    now = time.monotonic()
    for entry in list(_RUNNING):
        proc, began, _uid = entry
        if proc.poll() is not None:
            _RUNNING.remove(entry)
        elif now - began > MAILER_TIMEOUT:
            try:
                os.killpg(proc.pid, signals.SIGKILL)
            except OSError:
                pass
            proc.poll()
    for uid in list(_WAITING):
        _start_waiting(uid)
