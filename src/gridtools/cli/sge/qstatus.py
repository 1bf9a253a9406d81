"""The cell's status for the Grid Engine queries (``cli.status``, shared with the
HTCondor dialect): the published snapshot merged with what is still in flight."""

from gridtools.cli.status import (  # noqa: F401
    ACTIVE, SUSPENDED, fault_lines, held_once, load, load_listing, task_hard, task_label, warnings)
