"""condor_submit's warning of the lines of a description that nothing used, as
HTCondor's SubmitHash::warn_unused gives it after a submission that queued jobs.
Standard library only and without ``re``: every submission goes through it.
"""

#: the submit commands HTCondor's condor_submit reads (and the job attributes it also
#: takes them by), in lower case: a line that sets one is never "unused", whether or not
#: the description's universe and other commands make it count
KNOWN_COMMANDS = frozenset((
    "_container_port accounting_group accounting_group_user accountinggroup acctgroupuser "
    "allow_arguments_v1 allow_environment_v1 allowed_execute_duration allowed_job_duration append_files "
    "appendfiles arc_application arc_data_staging arc_resources arc_rte arcapplication arcdatastaging "
    "arcresources arcrte args arguments arguments2 aws_access_key_id_file aws_region "
    "aws_secret_access_key_file azure_admin_key azure_admin_username azure_auth_file azure_image "
    "azure_location azure_size azureadminkey azureadminusername azureauthfile azureimage azurelocation "
    "azuresize batch_extra_submit_args batch_id batch_name batch_project batch_queue batch_runtime "
    "batchextrasubmitargs batchproject batchqueue batchruntime buffer_block_size buffer_files buffer_size "
    "checkpoint_destination checkpoint_exit_code cloud_label_ cloud_label_names cluster cmd "
    "commoninputfiles compress_files concurrency_limits concurrency_limits_expr container_image "
    "container_is_common container_service_names container_target_dir containerimage "
    "containerservicenames core_size cron_day_of_month cron_day_of_week cron_hour cron_minute cron_month "
    "cron_prep_time cron_window cronpreptime cronwindow cuda_version dagman_job_id dagman_log "
    "deferral_prep_time deferral_time deferral_window deferralpreptime deferraltime deferralwindow "
    "delegate_job_gsi_credentials_lifetime delegatejobgsicredentialslifetime description disk_usage "
    "diskusage docker_image docker_network_type docker_override_entrypoint docker_pull_policy "
    "docker_send_credentials dockerimage dont_encrypt_input_files dont_encrypt_output_files "
    "ec2_access_key_id ec2_ami_id ec2_availability_zone ec2_block_device_mapping ec2_ebs_volumes "
    "ec2_elastic_ip ec2_iam_profile_arn ec2_iam_profile_name ec2_instance_type ec2_key_pair_file "
    "ec2_keyp_air ec2_keypair ec2_keypair_file ec2_parameter_ ec2_parameter_names ec2_secret_access_key "
    "ec2_security_groups ec2_security_ids ec2_spot_price ec2_tag_ ec2_tag_names ec2_user_data "
    "ec2_user_data_file ec2_vpc_ip ec2_vpc_subnet ec2accesskeyid ec2amiid ec2availabilityzone "
    "ec2blockdevicemapping ec2elasticblockstoragevolumes ec2elasticip ec2iamprofilearn ec2iamprofilename "
    "ec2instancetype ec2keypair ec2keypairfile ec2paramnames ec2secretaccesskey ec2securitygroups "
    "ec2securityids ec2spotprice ec2userdata ec2userdatafile ec2vpcip ec2vpcsubnet email_attributes "
    "encrypt_execute_directory encrypt_input_files encrypt_output_files env environment environment2 "
    "erase_output_and_error_on_restart error executable exit_requirements fetch_files file_remaps "
    "gce_account gce_auth_file gce_image gce_json_file gce_machine_type gce_metadata gce_metadata_file "
    "gce_preemptible gceaccount gceauthfile gceimage gcejsonfile gcemachinetype gcemetadata "
    "gcemetadatafile gcepreemptible get_env getenv gpus_maximum_capability gpus_minimum_capability "
    "gpus_minimum_memory gpus_minimum_runtime gpusmaxcapability gpusmincapability gpusminmemory "
    "gpusminruntime grid_resource gridresource gs_access_key_id_file gs_secret_access_key_file hold "
    "hold_kill_sig holdkillsig image_size imagesize initial_dir initialdir input interactive_args "
    "interactive_executable iwd jar_files java_vm_args java_vm_arguments java_vm_arguments2 javavmargs "
    "job_ad_information_attrs job_iwd job_lease_duration job_machine_attrs "
    "job_machine_attrs_history_length job_max_vacate_time jobmaterializelimit jobmaterializemaxidle "
    "jobmaxretries jobnotification jobset jobsuccessexitcode jobuniverse jobvm_macaddr jobvm_vcpus "
    "jobvmcheckpoint jobvmmemory jobvmnetworking jobvmnetworkingtype jobvmtype jobvmvncconsole "
    "keep_claim_idle kill_sig kill_sig_timeout killsig killsigtimeout leave_in_queue leavejobinqueue "
    "load_profile local_files log log_xml machine_count machinecount manifest manifest_dir "
    "match_list_length materialize_max_idle max_idle max_job_retirement_time max_materialize max_retries "
    "max_transfer_input_mb max_transfer_output_mb memory_usage mount_under_scratch next_job_start_delay "
    "nice_user niceuser node_count nodecount noop_job noop_job_exit_code noop_job_exit_signal "
    "notification notify_user on_evict_checks on_exit_hold on_exit_hold_reason on_exit_hold_subcode "
    "on_exit_remove onexithold onexitholdreason onexitholdsubcode onexitremove output output_destination "
    "output_directory parallel_script_shadow parallel_script_starter periodic_hold periodic_hold_reason "
    "periodic_hold_subcode periodic_release periodic_remove periodic_vacate periodichold "
    "periodicholdreason periodicholdsubcode periodicrelease periodicremove periodicvacate preferences "
    "preserve_relative_paths primary_unix_group prio priority process project_name projectname "
    "public_input_files publicinputfiles rank remote_ remote_initialdir remove_kill_sig removekillsig "
    "rendezvousdir request_ request_cpus request_disk request_gpu_memory request_gpus request_memory "
    "requestcpus requestdisk requestgpus requestmemory require_ require_gpus requiregpus requirements "
    "retry_request_disk retry_request_memory retry_request_memory_increase retry_request_memory_max "
    "retry_until run_as_owner s3_access_key_id_file s3_secret_access_key_file scitokens_file "
    "scitokensfile send_credential shell should_transfer_files skip_filechecks skip_if_dataflow "
    "stack_size starter_debug starter_log stderr stdin stdout stream_error stream_input stream_output "
    "streamerr streamin streamout submit_event_notes submit_event_notes_attrs submit_event_user_notes "
    "submit_file submitallowduplicatematches submitfailemptymatches submitmatchdirectories "
    "submitwarnduplicatematches submitwarnemptymatches success_exit_code suspend_job_at_exec "
    "suspendjobatexec tasks_per_job tool_daemon_args tool_daemon_arguments tool_daemon_arguments2 "
    "tool_daemon_cmd tool_daemon_error tool_daemon_input tool_daemon_output tooldaemonargs tooldaemoncmd "
    "tooldaemonerror tooldaemoninput tooldaemonoutput transfer_checkpoint_files transfer_common_input "
    "transfer_container transfer_error transfer_executable transfer_input transfer_input_files "
    "transfer_output transfer_output_files transfer_output_remaps transfer_plugins transfererr "
    "transferexecutable transferin transferinputfiles transferout transferoutputfiles "
    "transferoutputremaps transform_body_ transformonevict ulog_execute_attrs universe use_oauth_services "
    "use_scitoken use_scitokens use_x509userproxy useoauthservices vm_checkpoint vm_disk vm_macaddr "
    "vm_memory vm_networking vm_networking_type vm_no_output_vm vm_type vm_vcpus vm_vnc want_ads "
    "want_graceful_removal want_io_proxy want_job_networking wantnametag when_to_transfer_output "
    "x509userproxy xen_initrd xen_kernel xen_kernel_params xen_root "
).split())
#: names condor_submit counts as used whatever the description does (HTCondor's
#: SubmitHash::warn_unused)
ALWAYS_USED = frozenset(("dag_status", "failed_count", "job", "retry", "submitwarnemptymatches",
                         "submitfailemptymatches", "submitwarnduplicatematches", "submitfailemptyfields",
                         "submitwarnemptyfields"))
#: what condor_submit says of a line nothing used (after ``WARNING: ``)
UNUSED_LINE = "the line '{name} = {value}' was unused by condor_submit. Is it a typo?"
#: what condor_submit says of a queue statement's variable nothing used
UNUSED_VARIABLE = "the Queue variable '{name}' was unused by condor_submit. Is it a typo?"


def warn_unused_on(opts, knobs):
    """Whether condor_submit warns of unused lines: WARN_ON_UNUSED_SUBMIT_FILE_MACROS (true
    when not set, or not a boolean), turned over by each -unused."""
    text = (knobs.get("WARN_ON_UNUSED_SUBMIT_FILE_MACROS") or "").strip().lower()
    on = text not in ("false", "no", "f", "n", "0")
    return on != bool(opts.get("unused"))


def unused_lines(desc, text, variables=None, files=None):
    """The warnings of the description's command lines that nothing used: no submit
    command of that name (nor the job attribute it sets), no reference to it as a macro
    (``$(name)``, a function's argument, an ``if`` condition), not a ``+``/``MY.``
    attribute, nor another dotted name, as condor_submit says them after a submission
    that queued jobs (by names in order, any case; a name as first written, with the
    value it was given last). Command-line ``NAME=value`` settings (``variables``) count
    as lines before the description's, and a queue statement's variables (``files``:
    what a table's heading is read through) that nothing refers to are said too, as
    condor_submit says them: a variable that is also a line's name is that line, whose
    value is ``<Queue_item>`` once a queue statement after it has gone through its items
    (HTCondor's live variables take the line's place and are left so)."""
    from gridtools.formats.condor import jobattrs
    from gridtools.formats.condor.jobad import ALIASES
    variables = variables or {}
    text = "\n".join([text, *variables.values()])
    used = set(ALWAYS_USED)
    for inside in _references(text):
        used.update(word.lower() for word in _names(inside))
    for line in text.splitlines():
        word, _, condition = line.lstrip(" \t").replace("\t", " ").partition(" ")
        if word.lower() in ("if", "elif"):
            used.update(word.lower() for word in _names(condition))
    names = _named(desc, variables, files, used)
    found = []
    for key in sorted(names):
        if key in used or "." in key or key in KNOWN_COMMANDS or _custom_request(key) \
                or key in ALIASES or key in ALIASES.values() or key in jobattrs.MORE_COMMANDS \
                or key in jobattrs.DEFERRAL_COMMANDS or key in jobattrs.CONTAINER_COMMANDS:
            continue
        name, value, queued = names[key]
        found.append(UNUSED_VARIABLE.format(name=name) if queued else UNUSED_LINE.format(name=name, value=value))
    return found


#: the value condor_submit leaves a queue statement's variables with once it has gone
#: through its items (what a line of the same name then says it was)
QUEUE_ITEM = "<Queue_item>"


def _named(desc, variables, files, used):
    """The names the command-line settings, the command lines and the queue statements'
    variables define, in lower case: (the name as first written, its value, whether it
    is a queue variable that no line names); ``used`` takes ``item`` when a queue
    statement of a count gives it a value (as HTCondor marks it used then)."""
    from gridtools.formats.condor.submit import COMMAND, Assignment, QueueStatement
    names, defs = {}, {}

    def define(name, value):
        key = name.lower()
        if "$" in value:
            from gridtools.formats.condor.macros import expand_self
            value = expand_self(value, key, defs.get(key))
        defs[key] = value

    for name, value in variables.items():
        if name[:1] != "+" and name[:3].lower() != "my.":
            names.setdefault(name.lower(), [name, value, False])[1:] = [value, False]
            define(name, value)
    for statement in desc.statements:
        if isinstance(statement, Assignment):
            if statement.kind == COMMAND:
                names.setdefault(statement.name.lower(), [statement.name, statement.value, False])[1:] = \
                    [statement.value, False]
                define(statement.name, statement.value)
        elif isinstance(statement, QueueStatement):
            found = _queue_names(statement, defs, files)
            if found is None:
                continue
            if not found:
                used.add("item")
            for name in found:
                names.setdefault(name.lower(), [name, QUEUE_ITEM, True])[1] = QUEUE_ITEM
    return names


def _queue_names(statement, defs, files):
    """The variables of a queue statement (its arguments expanded with the macros
    ``defs``: name in lower case -> value) that iterates over items; [] for a queue of a
    count; None for one that cannot be read."""
    from gridtools.errors import InputError
    from gridtools.formats.condor.queue import Mode, parse_queue, piped_command
    from gridtools.formats.condor.submit import plain_count
    args = statement.args
    try:
        if "$" in args:
            from gridtools.formats.condor.macros import Expander
            args = Expander(lambda name: defs.get(name.lower())).expand(args)
        if statement.inline is None and plain_count(args) is not None:
            return []
        spec, _ = parse_queue(args, lambda _text: 1)
        if spec.mode is Mode.COUNT:
            return []
        if statement.inline is not None:
            spec.inline = (spec.inline or []) + statement.inline
        if spec.table is not None and (spec.inline is not None or piped_command(spec.source) is None):
            spec.rows(files)        # (the heading names the variables)
    except InputError:
        return None
    return spec.names


def _custom_request(key):
    """True for ``request_<name>`` of a resource (a name of at least two characters, not
    starting with ``_``), which condor_submit reads."""
    return key.startswith("request_") and len(key) >= 10 and key[8] != "_"


def _references(text):
    """What stands between the parentheses of each macro reference of ``text``
    (``$(name)``, ``$$(name)``, ``$FUNC(args)``; one level of parentheses inside)."""
    found, at = [], text.find("$")
    while at >= 0:
        pos = at + 1
        if text[pos:pos + 1] == "$":
            pos += 1
        while pos < len(text) and (text[pos].isalpha() or text[pos] == "_") and text[pos].isascii():
            pos += 1
        if text[pos:pos + 1] == "(":
            depth, end = 0, pos + 1
            while end < len(text):
                char = text[end]
                if char == "(":
                    depth += 1
                    if depth > 1:
                        break
                elif char == ")":
                    if not depth:
                        found.append(text[pos + 1:end])
                        break
                    depth -= 1
                end += 1
        at = text.find("$", at + 1)
    return found


_HEAD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_TAIL = _HEAD | frozenset("0123456789.")


def _names(text):
    """The words of ``text`` that may name a macro: a letter or ``_``, then letters,
    digits, ``_`` and dots."""
    names, pos = [], 0
    while pos < len(text):
        if text[pos] in _HEAD:
            end = pos + 1
            while end < len(text) and text[end] in _TAIL:
                end += 1
            names.append(text[pos:end])
            pos = end
        elif text[pos] in _TAIL:
            while pos < len(text) and text[pos] in _TAIL:
                pos += 1
        else:
            pos += 1
    return names
