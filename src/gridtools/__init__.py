"""gridtools: Grid Engine and HTCondor commands over one spooled queue.

Packages (dependencies point downward only):

- ``cli``        the commands of both dialects; the only layer that prints
- ``daemon``     the dispatcher loop: intake, snapshot, schedule, apply, reap
- ``exec``       the shepherd that runs one job task, job environment, limits
- ``sched``      the pure scheduler: snapshot in, decisions with reasons out
- ``accounting`` accounting records, qacct summaries, usage decay
- ``spool``      the only package that touches a cell's files
- ``formats``    every text format as a parse/render pair
- ``classad``    the ClassAd language
- ``model``      plain records and the job state machine

Modules beside them: ``cell`` (where a cell lives), ``errors``, ``ads`` (the
ClassAd views of jobs and slots both dialects share; the jobs' part is
``jobads``, which commands reading a job load alone), ``seclevels``
(HTCondor's security levels: ALLOW_*/DENY_* lists against a caller),
``records`` (records declared like dataclasses, for modules on a command's
start-up path), ``ospaths`` (paths and the environment over the posix module,
for the modules on a command's start-up path), ``wildcards`` (shell-style
patterns, fnmatch loaded only for real wildcards), ``launch`` (what the launchers
in bin/ run: a command's start-up and its end; the one module outside ``cli``
that reaches into it).

This module imports nothing: every command's start-up pays for it.
"""

__version__ = "0.1.0"
