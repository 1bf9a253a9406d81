# jsv_include.sh: functions for job submission verifiers (JSV) written in sh.
#
# A JSV defines jsv_on_start and jsv_on_verify, sources this file and calls
# jsv_main, which speaks the JSV protocol with qsub (see qsub(1), -jsv):
#
#   #!/bin/sh
#   . "$SGE_ROOT/util/resources/jsv/jsv_include.sh"
#   jsv_on_start() { jsv_send_env; }
#   jsv_on_verify() {
#       if [ "$(jsv_get_param pe_name)" = "" ] && [ "$(jsv_get_param b)" = "y" ]; then
#           jsv_reject "binary jobs need a parallel environment"; return
#       fi
#       jsv_sub_add_param l_hard h_rt 3600
#       jsv_correct "h_rt set"
#   }
#   jsv_main
#
# The job's parameters and (after jsv_send_env in jsv_on_start) its environment
# are kept in shell variables; their values are never evaluated. Names that are
# not shell names are ignored. Part of gridtools; written for POSIX sh.

_jsv_names=""          # the parameters received, in order
_jsv_env_names=""      # the environment variables received
_jsv_changed=""        # parameters set or deleted since BEGIN
_jsv_env_changes=""    # "ADD name", "MOD name", "DEL name" since BEGIN
_jsv_want_env=false

_jsv_is_name() {
    case "$1" in
        ""|[0-9]*|*[!A-Za-z0-9_]*) return 1 ;;
    esac
    return 0
}

_jsv_send() {
    printf '%s\n' "$*"
}

_jsv_in_list() {        # word list
    case " $2 " in
        *" $1 "*) return 0 ;;
    esac
    return 1
}

# ---------------------------------------------------------------- parameters

jsv_clear_params() {
    for _jsv_n in $_jsv_names; do
        unset "_jsv_p_$_jsv_n" "_jsv_set_$_jsv_n" "_jsv_l_$_jsv_n"
    done
    _jsv_names=""
    _jsv_changed=""
}

jsv_is_param() {
    _jsv_is_name "$1" || { echo false; return; }
    if eval "[ \"\${_jsv_set_$1+x}\" = x ]"; then echo true; else echo false; fi
}

jsv_get_param() {
    _jsv_is_name "$1" || return 0
    eval "printf '%s\n' \"\${_jsv_p_$1-}\""
}

_jsv_store() {          # name value (as received, not a change)
    _jsv_is_name "$1" || return 0
    eval "_jsv_p_$1=\$2; _jsv_set_$1=x"
    # (whether the name is listed is a variable of its own: a job's thousands of
    # parameters take as many steps, not a look through the list for each)
    eval "[ -n \"\${_jsv_l_$1-}\" ]" || { _jsv_names="$_jsv_names $1"; eval "_jsv_l_$1=x"; }
}

_jsv_changed_now() {
    _jsv_in_list "$1" "$_jsv_changed" || _jsv_changed="$_jsv_changed $1"
}

jsv_set_param() {
    _jsv_is_name "$1" || return 0
    if [ -z "$2" ]; then
        jsv_del_param "$1"
        return
    fi
    _jsv_store "$1" "$2"
    _jsv_changed_now "$1"
}

jsv_del_param() {
    _jsv_is_name "$1" || return 0
    unset "_jsv_p_$1" "_jsv_set_$1"
    _jsv_changed_now "$1"
}

# list parameters (ac, hold_jid, l_hard, l_soft, M, masterq, q_hard, q_soft):
# comma-separated items "name" or "name=value"

jsv_sub_is_param() {
    _jsv_list=$(jsv_get_param "$1")
    _jsv_old_ifs=$IFS; IFS=,
    for _jsv_item in $_jsv_list; do
        if [ "${_jsv_item%%=*}" = "$2" ]; then IFS=$_jsv_old_ifs; echo true; return; fi
    done
    IFS=$_jsv_old_ifs
    echo false
}

jsv_sub_get_param() {
    _jsv_list=$(jsv_get_param "$1")
    _jsv_old_ifs=$IFS; IFS=,
    for _jsv_item in $_jsv_list; do
        if [ "${_jsv_item%%=*}" = "$2" ]; then
            IFS=$_jsv_old_ifs
            case "$_jsv_item" in *=*) printf '%s\n' "${_jsv_item#*=}" ;; *) echo "" ;; esac
            return
        fi
    done
    IFS=$_jsv_old_ifs
    echo ""
}

_jsv_sub_rebuild() {    # param, name to drop, replacement item ("" for none)
    _jsv_list=$(jsv_get_param "$1")
    _jsv_new=""
    _jsv_done=false
    _jsv_old_ifs=$IFS; IFS=,
    for _jsv_item in $_jsv_list; do
        if [ "${_jsv_item%%=*}" = "$2" ]; then
            [ -n "$3" ] && ! $_jsv_done && _jsv_new="$_jsv_new,$3"
            _jsv_done=true
        else
            _jsv_new="$_jsv_new,$_jsv_item"
        fi
    done
    IFS=$_jsv_old_ifs
    [ -n "$3" ] && ! $_jsv_done && _jsv_new="$_jsv_new,$3"
    jsv_set_param "$1" "${_jsv_new#,}"
}

jsv_sub_add_param() {
    if [ $# -ge 3 ] && [ -n "$3" ]; then
        _jsv_sub_rebuild "$1" "$2" "$2=$3"
    else
        _jsv_sub_rebuild "$1" "$2" "$2"
    fi
}

jsv_sub_del_param() {
    [ "$(jsv_sub_is_param "$1" "$2")" = true ] || return 0
    _jsv_sub_rebuild "$1" "$2" ""
}

jsv_show_params() {
    for _jsv_n in $_jsv_names; do
        [ "$(jsv_is_param "$_jsv_n")" = true ] && jsv_log_info "got param $_jsv_n=$(jsv_get_param "$_jsv_n")"
    done
}

# ---------------------------------------------------------------- environment

jsv_send_env() {
    _jsv_want_env=true
}

jsv_clear_envs() {
    for _jsv_n in $_jsv_env_names; do
        unset "_jsv_e_$_jsv_n" "_jsv_eset_$_jsv_n" "_jsv_el_$_jsv_n"
    done
    _jsv_env_names=""
    _jsv_env_changes=""
}

jsv_is_env() {
    _jsv_is_name "$1" || { echo false; return; }
    if eval "[ \"\${_jsv_eset_$1+x}\" = x ]"; then echo true; else echo false; fi
}

jsv_get_env() {
    _jsv_is_name "$1" || return 0
    eval "printf '%s\n' \"\${_jsv_e_$1-}\""
}

_jsv_env_store() {
    _jsv_is_name "$1" || return 0
    eval "_jsv_e_$1=\$2; _jsv_eset_$1=x"
    eval "[ -n \"\${_jsv_el_$1-}\" ]" || { _jsv_env_names="$_jsv_env_names $1"; eval "_jsv_el_$1=x"; }
}

jsv_add_env() {
    _jsv_is_name "$1" || return 0
    if [ "$(jsv_is_env "$1")" = true ]; then _jsv_how=MOD; else _jsv_how=ADD; fi
    _jsv_env_store "$1" "${2-}"
    _jsv_env_changes="$_jsv_env_changes $_jsv_how:$1"
}

jsv_mod_env() {
    jsv_add_env "$@"
}

jsv_del_env() {
    [ "$(jsv_is_env "$1")" = true ] || return 0
    unset "_jsv_e_$1" "_jsv_eset_$1"
    _jsv_env_changes="$_jsv_env_changes DEL:$1"
}

jsv_show_envs() {
    for _jsv_n in $_jsv_env_names; do
        [ "$(jsv_is_env "$_jsv_n")" = true ] && jsv_log_info "got env $_jsv_n=$(jsv_get_env "$_jsv_n")"
    done
}

# ---------------------------------------------------------------- results and logging

jsv_accept() {
    _jsv_send "RESULT STATE ACCEPT${1:+ $1}"
}

jsv_correct() {
    for _jsv_n in $_jsv_changed; do
        if [ "$(jsv_is_param "$_jsv_n")" = true ]; then
            _jsv_send "PARAM $_jsv_n $(jsv_get_param "$_jsv_n")"
        else
            _jsv_send "PARAM $_jsv_n"
        fi
    done
    for _jsv_c in $_jsv_env_changes; do
        _jsv_n=${_jsv_c#*:}
        case "$_jsv_c" in
            DEL:*) _jsv_send "ENV DEL $_jsv_n" ;;
            *) _jsv_send "ENV ${_jsv_c%%:*} $_jsv_n $(jsv_get_env "$_jsv_n")" ;;
        esac
    done
    _jsv_send "RESULT STATE CORRECT${1:+ $1}"
}

jsv_reject() {
    _jsv_send "RESULT STATE REJECT${1:+ $1}"
}

jsv_reject_wait() {
    _jsv_send "RESULT STATE REJECT_WAIT${1:+ $1}"
}

jsv_log_info() {
    _jsv_send "LOG INFO ${1-}"
}

jsv_log_warning() {
    _jsv_send "LOG WARNING ${1-}"
}

jsv_log_error() {
    _jsv_send "LOG ERROR ${1-}"
}

# ---------------------------------------------------------------- the conversation

jsv_main() {
    while IFS= read -r _jsv_line; do
        _jsv_cmd=${_jsv_line%% *}
        _jsv_rest=${_jsv_line#"$_jsv_cmd"}
        _jsv_rest=${_jsv_rest# }
        _jsv_key=${_jsv_rest%% *}
        if [ "$_jsv_key" = "$_jsv_rest" ]; then _jsv_val=""; else _jsv_val=${_jsv_rest#* }; fi
        case "$_jsv_cmd" in
            START)
                jsv_clear_params
                jsv_clear_envs
                _jsv_want_env=false
                jsv_on_start
                $_jsv_want_env && _jsv_send "SEND ENV"
                _jsv_send "STARTED" ;;
            PARAM)
                _jsv_store "$_jsv_key" "$_jsv_val" ;;
            ENV)
                _jsv_name=${_jsv_val%% *}
                if [ "$_jsv_name" = "$_jsv_val" ]; then _jsv_value=""; else _jsv_value=${_jsv_val#* }; fi
                [ "$_jsv_key" = ADD ] && _jsv_env_store "$_jsv_name" "$_jsv_value" ;;
            BEGIN)
                _jsv_changed=""
                _jsv_env_changes=""
                jsv_on_verify ;;
            QUIT)
                return 0 ;;
        esac
    done
}
