# Source this file from a checkout to use its commands:  . bin/settings.sh
# Puts bin/ (and the checkout's .venv, when there is one) first on the PATH
# and the man pages on MANPATH. GRIDTOOLS_ROOT is left as it is: unset, the
# commands use the personal cell ~/.gridtools. bash and zsh tell a sourced file
# where it is; other shells do not, so there it is sourced from the checkout's
# top folder, as above.
if [ -n "${BASH_VERSION:-}" ]; then
    eval '_gt_self=${BASH_SOURCE[0]}'
elif [ -n "${ZSH_VERSION:-}" ]; then
    eval '_gt_self=${(%):-%x}'
else
    _gt_self=bin/settings.sh
fi
_gt_top=$(cd "$(dirname "$_gt_self")/.." 2>/dev/null && pwd)
if [ -n "$_gt_top" ] && [ -f "$_gt_top/bin/settings.sh" ]; then
    if [ -d "$_gt_top/.venv/bin" ]; then
        PATH="$_gt_top/.venv/bin:$PATH"
    fi
    PATH="$_gt_top/bin:$PATH"
    MANPATH="$_gt_top/man:${MANPATH:-}"
    export PATH MANPATH
else
    echo "settings.sh: source it from the checkout's top folder: . bin/settings.sh" >&2
fi
unset _gt_self _gt_top
