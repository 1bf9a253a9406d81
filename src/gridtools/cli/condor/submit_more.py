"""What only some condor_submit runs need, kept out of the command's start-up
(``cli.condor.submit`` imports it where it is used): the usage text, the
options (every ``-word``) and ``NAME=value`` arguments, the check of a
``-name``d schedd (which condor_q, condor_rm and condor_qedit make too), the
``-terse``, ``-verbose`` and ``-dry-run`` outputs, and the checks of the
parallel environments and GPUs a cluster asks for.
"""

import posix
import re
import sys

from gridtools import cell
from gridtools.errors import InputError, UsageError, lines

USAGE = """\
Usage: condor_submit [options] [<attrib>=<value>] [- | <submit-file>]
    [options] are
\t-file <submit-file>\tRead Submit commands from <submit-file>
\t-terse  \t\tDisplay terse output, jobid ranges only
\t-verbose\t\tDisplay verbose output, jobid and full job ClassAd
\t-append <line>\t\tadd line to submit file before processing
\t              \t\t(overrides submit file; multiple -a lines ok)
\t-queue <queue-opts>\tappend Queue statement to submit file before processing
\t                   \t(submit file must not already have a Queue or Iterate)
\t-batch-name <name>\tappend a line to submit file that sets the batch name
\t-dry-run <filename>\tprocess submit file and write ClassAd attributes to <filename>
\t        \t\tbut do not actually submit the job(s) to the SCHEDD
\t-maxjobs <maxjobs>\tDo not submit if number of jobs would exceed <maxjobs>.
\t-single-cluster\t\tDo not submit if more than one ClusterId is needed.
\t-dump <filename>\tWrite job ClassAds to <filename> instead of
\t                \tsubmitting to a schedd.
\t-interactive\t\tsubmit an interactive session job
\t-factory\t\tSubmit a late materialization job factory
\t-name <name>\t\tsubmit to the specified schedd
\t<attrib>=<value>\tSet <attrib>=<value> before reading the submit file.

    If <submit-file> is omitted or is -, and a -queue is not provided, submit commands
     are read from stdin. Use of - implies verbose output unless -terse is specified
"""


def _prefix(arg, word, least):
    """HTCondor's option matching: ``-word`` abbreviated to at least ``least`` letters."""
    name = arg.lstrip("-")
    return arg.startswith("-") and least <= len(name) <= len(word) and word.startswith(name)


#: the options with a value: (name, fewest letters, the key of the options it sets; None:
#: read and ignored)
_VALUED = (("append", 1, "append"), ("batch-name", 1, "batch_name"), ("file", 2, "file"), ("name", 1, "schedd"), ("remote", 1, "schedd"),
           ("pool", 2, None), ("addr", 2, None))


def option(opts, arg, args):
    """Read option ``arg`` into ``opts`` (its value, when it takes one, from ``args``)."""
    if _prefix(arg, "help", 1):
        opts["help"] = True
    elif _prefix(arg, "verbose", 1):
        opts["verbose"], opts["terse"] = True, False
    elif _prefix(arg, "terse", 3):
        opts["terse"], opts["verbose"] = True, False
    elif _prefix(arg, "queue", 1):
        queue_words(opts, arg, args)
    elif _prefix(arg, "factory", 2) or _prefix(arg, "generator", 1):
        opts["factory"] = True
    elif _prefix(arg, "unused", 1):
        opts["unused"] = not opts.get("unused")        # (each one turns the warnings over)
    elif _prefix(arg, "disable", 1) or _prefix(arg, "spool", 1):
        pass
    elif _prefix(arg, "single-cluster", 3):
        opts["single_cluster"] = True
    elif _prefix(arg, "dump", 2) or _prefix(arg, "dry-run", 3):
        dump = _prefix(arg, "dump", 2)
        if opts["dry_run"] is not None and opts.get("dump", False) != dump:
            raise UsageError("condor_submit: -dump <file> and -dry-run <file> cannot be used together" if dump
                             else "condor_submit: -dry-run <file> and -dump <file> cannot be used together", 1)
        if not args or (args[0].startswith("-") and args[0] != "-"):
            raise UsageError(f"condor_submit: {arg} requires another argument", 1)
        opts["dry_run"], opts["dump"] = args.pop(0), dump
    elif _prefix(arg, "interactive", 1):
        opts["interactive"] = True
    elif _prefix(arg, "maxjobs", 3):
        if not args:
            raise UsageError(f"condor_submit: {arg} requires another argument", 1)
        value = args.pop(0)
        if not re.fullmatch(r"\s*[-+]?\d+", value):            # (strtol, whole)
            raise UsageError(f"Error: Unable to convert argument ({value}) to a number for -maxjobs.", 1)
        if int(value) < -1:
            raise UsageError(f"Error: {int(value)} is not a valid for -maxjobs.", 1)
        opts["max_jobs"] = int(value)
    else:
        for word, least, attr in _VALUED:
            if _prefix(arg, word, least):
                if not args or (args[0].startswith("-") and args[0] != "-"):
                    raise UsageError(f"condor_submit: {arg} requires another argument", 1)
                value = args.pop(0)
                if attr == "append":
                    opts["append"].append(value)
                elif attr:
                    opts[attr] = value
                return
        sys.stderr.write(USAGE)
        raise UsageError(f"condor_submit: unknown option {arg}", 1)


def check_counts(opts, clusters):
    """-maxjobs and -single-cluster: refuse, in condor_submit's words, a submission of
    more jobs or clusters (nothing is queued)."""
    most = opts.get("max_jobs") or 0
    if most > 0 and sum(len(ads) for _c, ads in clusters) > most:
        raise InputError(lines("", f"ERROR: Number of submitted jobs would exceed -maxjobs ({most})"))
    if opts.get("single_cluster") and len(clusters) > 1:
        raise InputError(lines("", "ERROR: Number of submitted clusters would exceed 1 and -single-cluster "
                               "was specified"))


def queue_words(opts, arg, args):
    """``-queue`` and the words after it (up to the next option) as the queue statement's
    arguments."""
    if not args or args[0].startswith("-"):
        raise UsageError(f"condor_submit: {arg} requires at least one argument", 1)
    if opts["queue"] is not None:
        raise UsageError(f"condor_submit: only one {arg} command allowed", 1)
    words = []
    while args and (args[0] == "-" or not args[0].startswith("-")):
        words.append(args.pop(0))
    opts["queue"] = " ".join(words)


def variable(opts, arg):
    """A ``NAME=value`` argument (``+NAME`` is ``MY.NAME``), set before the file is read."""
    name, _, value = arg.partition("=")
    name, value = name.strip(), value.strip()
    if name.startswith("+"):
        name = "MY." + name[1:]
    if not name or not (name[0].isalpha() or name[0] == "_") or \
            not all(c.isalnum() or c in "_." for c in name):
        raise UsageError(f"condor_submit: invalid attribute name '{name}' for attrib=value assigment", 1)
    opts["variables"][name] = value


def knob_on(name):
    """Boolean knob ``name`` of this host's configuration, False when it is not set or
    not a boolean."""
    from gridtools.cli.condor.machineviews import client_config
    from gridtools.formats import condor_config
    try:
        return condor_config.boolean(client_config(), name, False)
    except condor_config.ConfigError:
        return False


def known_schedd(name):
    """True when ``name`` is this cell's schedd (its host, by any of its names)."""
    import socket
    names = {cell.hostname(), socket.gethostname(), socket.getfqdn(), "localhost"}
    return name in names or name.split("@")[-1] in names


def pe_names():
    """The parallel environments the cell defines."""
    try:
        return set(posix.listdir(cell.etc("pe")))
    except OSError:
        return set()


def complexes():
    """The names of the cell's complex attributes."""
    try:
        with open(cell.etc("complex"), encoding="utf-8") as fh:
            return {line.split()[0] for line in fh if line.strip() and not line.startswith("#")}
    except OSError:
        return set()


def countable_complexes():
    """Name in lower case -> name of the cell's machine resources
    (``formats.sge.complex.machine_resources``), as the daemon counts them; none when
    the complex cannot be read (the daemon checks the job again)."""
    from gridtools.formats.sge.complex import machine_resources_in
    return machine_resources_in(cell.etc("complex"))


def terse_lines(clusters):
    """``-terse``: the first and last id of each cluster."""
    return [f"{c}.{ads[0].eval('ProcId')} - {c}.{ads[-1].eval('ProcId')}" for c, ads in clusters]


def verbose_text(clusters):
    """``-verbose`` (and a description read from ``-``): each proc's id and ad."""
    return "".join(f"\n** Proc {c}.{ad.eval('ProcId')}:\n{ad}" for c, ads in clusters for ad in ads)


def write_dry_run(target, clusters, dump=False):
    """The ads in long form, a blank line after each, into ``target`` ("-": stdout), for
    -dry-run or (``dump``) -dump."""
    text = "".join(f"{ad}\n" for _c, ads in clusters for ad in ads)
    if target == "-":
        sys.stdout.write(text)
        return
    from gridtools import ownfiles
    try:
        with ownfiles.open_text(target) as fh:     # (not through a link another user planted)
            fh.write(text)
    except OSError as exc:
        what = "to dump ClassAds into" if dump else "-dry-run output file"
        raise InputError(f"ERROR: Failed to open file {what} ({exc.strerror})") from None


def dump_report(opts, clusters):
    """What -dump into a file prints (-dump - prints only the ads): the proc dots after
    "Storing job ClassAd(s)" and a line per cluster, as a submission says them; -terse's
    ranges, or -verbose's ads."""
    if opts["terse"]:
        return "".join(line + "\n" for line in terse_lines(clusters))
    if opts["verbose"]:
        return verbose_text(clusters)
    dots = "".join("." for _c, ads in clusters for _ad in ads)
    return f"Storing job ClassAd(s){dots}\n" + "".join(
        f"{len(ads)} job(s) submitted to cluster {c}.\n" for c, ads in clusters)


# ---------------------------------------------------------------- -interactive

#: the waiting program of an interactive job (INTERACTIVE_SUBMIT_CMD_OVERRIDE,
#: INTERACTIVE_SUBMIT_ARGS_OVERRIDE): as HTCondor's, it waits 180 seconds at most for
#: its session (the directory .condor_ssh_to_job_1 condor_ssh_to_job makes in the
#: scratch directory for the session condor_submit opens), then as long as that
#: directory is there, every 3 seconds; here, as long as the process its ``owner`` file
#: names (pid and start time) goes on: the session's end removes the file (the directory
#: stays for this program to see and remove), and a session whose process ended without
#: removing it (its client killed) is over too. It ends with exit status 0 as soon as
#: its session has, not after 180 seconds in any case.
INTERACTIVE_COMMAND = "/bin/sh"
INTERACTIVE_ARGS = ("\"-c 'd=${_CONDOR_SCRATCH_DIR}/.condor_ssh_to_job_1; i=0; "
                    "while test $i -lt 180 && ! test -d $d; do /bin/sleep 1; i=$((i+1)); done; "
                    "while read p t < $d/owner && read s < /proc/$p/stat && set -- ${s##*) } "
                    "&& test ${20} = $t; do /bin/sleep 3; done 2>/dev/null; rm -rf $d; exit 0'\"")
#: the description of ``condor_submit -interactive`` without a file: HTCondor's
#: interactive.sub (its shell logs out after 2 hours idle: TMOUT)
INTERACTIVE_TEXT = (f"universe = vanilla\nexecutable = {INTERACTIVE_COMMAND}\narguments = {INTERACTIVE_ARGS}\n"
                    "environment = \"TMOUT=7200\"\ntransfer_executable = false\nnotification = never\n"
                    "priority = 1000\nrequest_memory = 512m\nqueue\n")
#: the JobDescription of an interactive job that has none (as HTCondor's)
INTERACTIVE_DESCRIPTION = '"interactive job"'


def interactive_text(opts, knobs):
    """-interactive: (the description's text, its name): the file given (its executable
    and arguments replaced by INTERACTIVE_SUBMIT_CMD_OVERRIDE and
    INTERACTIVE_SUBMIT_ARGS_OVERRIDE, as HTCondor rewrites them), else
    INTERACTIVE_SUBMIT_FILE, else the built-in one; the jobs are marked InteractiveJob,
    and described as "interactive job" unless the description says otherwise."""
    from gridtools.cli.condor.submit import read_text
    opts["append"].append("MY.InteractiveJob = True")
    opts["variables"].setdefault("MY.JobDescription", INTERACTIVE_DESCRIPTION)
    if opts["factory"]:
        raise InputError(lines("", "ERROR: Interactive jobs cannot be materialized late"))
    if opts["file"] not in (None, "-"):
        text, source = read_text(opts)
        command = knobs.get("INTERACTIVE_SUBMIT_CMD_OVERRIDE") or INTERACTIVE_COMMAND
        arguments = knobs.get("INTERACTIVE_SUBMIT_ARGS_OVERRIDE") or INTERACTIVE_ARGS
        opts["append"] += [f"executable = {command}", f"arguments = {arguments}", "transfer_executable = false"]
        return text, source
    path = (knobs.get("INTERACTIVE_SUBMIT_FILE") or "").strip()
    if path:
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                return fh.read(), path
        except OSError as exc:
            raise InputError(f"ERROR: Failed to open command file ({path}) ({exc.strerror})") from None
    return INTERACTIVE_TEXT, "interactive.sub"


def start_session(clusters):
    """-interactive, once the job is queued: condor_ssh_to_job to its first proc, waiting
    for it to start; an interrupt removes it. The session's exit status."""
    from gridtools.cli.condor import ssh_to_job
    sys.stdout.flush()
    cluster = clusters[0][0]
    return ssh_to_job.main(["-auto-retry", "-remove-on-interrupt", "-X", f"{cluster}.0"], submitted=True)


# ---------------------------------------------------------------- unused lines

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


def warn_unused_on(opts, knobs):
    """Whether condor_submit warns of unused lines: WARN_ON_UNUSED_SUBMIT_FILE_MACROS (true
    when not set, or not a boolean), turned over by each -unused."""
    text = (knobs.get("WARN_ON_UNUSED_SUBMIT_FILE_MACROS") or "").strip().lower()
    on = text not in ("false", "no", "f", "n", "0")
    return on != bool(opts.get("unused"))


def unused_lines(desc, text):
    """The warnings of the description's command lines that nothing used: no submit
    command of that name (nor the job attribute it sets), no reference to it as a macro
    (``$(name)``, a function's argument, an ``if`` condition), not a ``+``/``MY.``
    attribute, nor another dotted name, as condor_submit says them after a submission
    that queued jobs (the last line of a name, by names in order, any case)."""
    from gridtools.formats.condor import jobattrs
    from gridtools.formats.condor.jobad import ALIASES
    from gridtools.formats.condor.submit import COMMAND, Assignment
    used = set(ALWAYS_USED)
    for reference in re.finditer(r"\$\$?[A-Za-z_]*\(([^()]*(?:\([^()]*\)[^()]*)*)\)", text):
        used.update(word.lower() for word in re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", reference.group(1)))
    for condition in re.finditer(r"(?mi)^[ \t]*(?:if|elif)[ \t]+(.*)$", text):
        used.update(word.lower() for word in re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", condition.group(1)))
    lines = {}
    for statement in desc.statements:
        if isinstance(statement, Assignment) and statement.kind == COMMAND:
            lines[statement.name.lower()] = statement
    found = []
    for key in sorted(lines):
        if key in used or "." in key or key in KNOWN_COMMANDS or _custom_request(key) \
                or key in ALIASES or key in ALIASES.values() or key in jobattrs.MORE_COMMANDS \
                or key in jobattrs.DEFERRAL_COMMANDS or key in jobattrs.CONTAINER_COMMANDS:
            continue
        found.append(UNUSED_LINE.format(name=lines[key].name, value=lines[key].value))
    return found


def _custom_request(key):
    """True for ``request_<name>`` of a resource (a name of at least two characters, not
    starting with ``_``), which condor_submit reads."""
    return key.startswith("request_") and len(key) >= 10 and key[8] != "_"
