"""qmod: suspend, enable, clear and reschedule jobs and queues (Grid Engine dialect).

One action per call, applied to jobs (``7``, ``7.2-4``, ``7 -t 2``, job
names and patterns), queues (``all.q``), queue instances (``all.q@node1``)
and queue domains (``all.q@@rack1``), wildcards allowed. ``-s``, ``-us``,
``-c`` and ``-r`` take jobs and queues alike; ``-sj``, ``-usj``, ``-cj``
and ``-rj`` only jobs; ``-sq``, ``-usq``, ``-cq``, ``-rq``, ``-d`` and
``-e`` only queues. The daemon checks the rights and answers with Grid
Engine's messages, which go to stdout as Grid Engine prints them.
"""

import sys

from gridtools.errors import GridError, UsageError

#: option -> (operation, what its words name)
ACTIONS = {
    "-s": ("suspend", "any"), "-sj": ("suspend", "job"), "-sq": ("suspend", "queue"),
    "-us": ("unsuspend", "any"), "-usj": ("unsuspend", "job"), "-usq": ("unsuspend", "queue"),
    "-d": ("disable", "queue"), "-e": ("enable", "queue"),
    "-c": ("clear", "any"), "-cj": ("clear", "job"), "-cq": ("clear", "queue"),
    "-r": ("reschedule", "any"), "-rj": ("reschedule", "job"), "-rq": ("reschedule", "queue"),
}
#: long spellings of the options
LONG = {"--suspend": "-s", "--unsuspend": "-us", "--disable": "-d", "--enable": "-e",
        "--clear": "-c", "--clearjob": "-cj", "--clearqueue": "-cq", "--reschedule": "-r",
        "--force": "-f", "--help": "-help"}
#: seconds to wait for the daemon's answer

USAGE = """usage: qmod [options]
   [-c job_wc_queue_list]  clear error state
   [-cj job_list]          clear job error state
   [-cq wc_queue_list]     clear queue error state
   [-d wc_queue_list]      disable
   [-e wc_queue_list]      enable
   [-f]                    force action
   [-help]                 print this help
   [-r job_wc_queue_list]  reschedule jobs (running in queue)
   [-rj job_list]          reschedule jobs
   [-rq wc_queue_list]     reschedule all jobs in a queue
   [-s job_wc_queue_list]  suspend
   [-sj job_list]          suspend jobs
   [-sq wc_queue_list]     suspend queues
   [-us job_wc_queue_list] unsuspend
   [-usj job_list]         unsuspend jobs
   [-usq wc_queue_list]    unsuspend queues

job_wc_queue_list          {job_tasks|wc_queue}[{','|' '}{job_tasks|wc_queue}[{','|' '}...]]
job_list                   {job_tasks}[{','|' '}job_tasks[{','|' '}...]]
job_tasks                  {{job_id'.'task_id_range}|job_name|pattern}[' -t 'task_id_range]
task_id_range              task_id['-'task_id[':'step]]
wc_cqueue                  wildcard expression matching a cluster queue
wc_host                    wildcard expression matching a host
wc_hostgroup               wildcard expression matching a hostgroup
wc_qinstance               wc_cqueue@wc_host
wc_qdomain                 wc_cqueue@wc_hostgroup
wc_queue                   wc_cqueue|wc_qdomain|wc_qinstance
wc_queue_list              wc_queue[','wc_queue[','...]]
"""


def parse_args(argv):
    """(action option or None, force, help wanted, argument words)."""
    action, force, wants_help, words = None, False, False, []
    for word in argv:
        word = LONG.get(word, word)
        if word == "-f":
            force = True
        elif word in ("-help", "-h"):
            wants_help = True
        elif word in ACTIONS:
            if action is not None and action != word:
                raise UsageError(f'only one action at a time: "{action}" and "{word}" given')
            action = word
        elif word == "-t" or not word.startswith("-") or (words and words[-1] == "-t"):
            words.append(word)
        else:
            raise UsageError(f'invalid option argument "{word}"')
    return action, force, wants_help, words


def _items(words):
    from gridtools.cli.sge import jobsel
    return [{"word": name, "tasks": tasks} for name, tasks in jobsel.split_items(words)]


def send(payload):
    """Send a qmod request and print the daemon's answer; returns the exit code."""
    from gridtools.cli.ask import ask
    return ask("qmod", payload)


def main(argv, prog="qmod"):
    try:
        action, force, wants_help, words = parse_args(argv)
        items = _items(words)
    except UsageError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    if wants_help:
        sys.stdout.write("SGE 8.1.9\n" + USAGE)
        return 0
    if action is None:
        problem = f'invalid option argument "{words[0]}"' if words else "no option argument"
        sys.stderr.write(f"SGE 8.1.9\n{USAGE}error: {problem}\n")
        return 1
    if not items:
        sys.stderr.write(f'error: option "{action}" needs a list of {_names(action)}\n')
        return 1
    op, scope = ACTIONS[action]
    try:
        return send({"op": op, "scope": scope, "items": items, "force": force})
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code


def _names(action):
    scope = ACTIONS[action][1]
    return {"job": "jobs", "queue": "queues"}.get(scope, "jobs or queues")
