# Source this file from a checkout to use its commands:  . bin/settings.sh
# Puts bin/ (and the checkout's .venv, when there is one) first on the PATH
# and the man pages on MANPATH. GRIDTOOLS_ROOT is left as it is: unset, the
# commands use the personal cell ~/.gridtools.
_gt_top=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)
if [ -d "$_gt_top/.venv/bin" ]; then
    PATH="$_gt_top/.venv/bin:$PATH"
fi
PATH="$_gt_top/bin:$PATH"
MANPATH="$_gt_top/man:${MANPATH:-}"
export PATH MANPATH
unset _gt_top
