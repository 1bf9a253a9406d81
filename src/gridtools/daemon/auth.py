"""Who may do what: managers, operators, job owners, queue owners.

Managers may change everything; operators, in the configuration, only usersets
(and clean queues), and jobs and queues as Grid Engine lets them; a user only their
own jobs. ``root`` is always a manager.
Hold letters: ``u`` may be set by the owner, ``o`` by operators, ``s`` by
managers only.
"""


def is_manager(state, user):
    return user == "root" or user in state.config.managers


def is_operator(state, user):
    return is_manager(state, user) or user in state.config.operators


def may_modify_job(state, user, job):
    return job.spec["owner"] == user or is_operator(state, user)


def may_hold(state, user, job, letters):
    if "s" in letters and not is_manager(state, user):
        return False
    if "o" in letters and not is_operator(state, user):
        return False
    return may_modify_job(state, user, job)
