//! Unit tests of `bsub`'s option parsing, directives and job building.
use super::*;

fn no_time(_: &[u32]) -> Option<i64> {
    Some(1_000)
}

fn cx(unit: &str) -> ValueCtx<'_> {
    ValueCtx {
        unit,
        resolve_time: no_time,
        max_user_priority: basalt_core::bounds::DEFAULT_MAX_USER_PRIORITY,
    }
}

fn words(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn cmdline(args: &[&str], unit: &str) -> (BsubOpts, Vec<String>) {
    let items = opts::parse(&words(args), &SPEC, true).unwrap_or_default();
    let mut o = BsubOpts::default();
    let rest = apply_items(items, &mut o, &cx(unit)).unwrap_or_default();
    (o, rest)
}

#[test]
fn memory_limits() {
    assert_eq!(parse_size("2000", "KB", false), Some(2000));
    assert_eq!(parse_size("2000", "MB", false), Some(2000 * 1024));
    assert_eq!(parse_size("2048MB", "KB", false), Some(2048 * 1024));
    assert_eq!(parse_size("1048576KB", "MB", false), Some(1_048_576));
    assert_eq!(parse_size("4G", "KB", false), Some(4 * 1024 * 1024));
    assert_eq!(parse_size("4gb", "KB", false), Some(4 * 1024 * 1024));
    assert_eq!(parse_size("1T", "KB", false), Some(1024 * 1024 * 1024));
    // 0.0977 MB = 100.0448 KB, rounded up.
    assert_eq!(parse_size("0.0977", "MB", false), Some(101));
    assert_eq!(parse_size("0.5", "GB", false), Some(512 * 1024));
    for bad in ["", "abc", "-5", "10XB", "10 MB", "0", "1.2.3"] {
        assert_eq!(parse_size(bad, "MB", false), None, "{bad}");
    }
    assert_eq!(parse_size("0", "MB", true), Some(0));
    assert_eq!(limits_unit_kb("MB"), 1024.0);
    assert_eq!(limits_unit_kb(""), 1.0);
}

#[test]
fn run_limits() {
    assert_eq!(parse_minutes("10"), Some(600));
    assert_eq!(parse_minutes("0:5"), Some(300));
    assert_eq!(parse_minutes("01:00"), Some(3600));
    assert_eq!(parse_minutes("60:05"), Some((60 * 60 + 5) * 60));
    assert_eq!(parse_minutes("100:00"), Some(360_000));
    assert_eq!(parse_minutes("10/hostA"), Some(600));
    for bad in ["", "x", "1:", ":5", "-3", "0", "1:2:3", "1.5"] {
        assert_eq!(parse_minutes(bad), None, "{bad}");
    }
}

#[test]
fn processors() {
    assert_eq!(parse_procs("4"), Some((4, 4)));
    assert_eq!(parse_procs("2,8"), Some((2, 8)));
    assert_eq!(parse_procs("0"), None);
    assert_eq!(parse_procs("8,2"), None);
    assert_eq!(parse_procs("x"), None);
}

#[test]
fn time_fields() {
    assert_eq!(parse_time_fields("10:30"), Some(vec![10, 30]));
    assert_eq!(parse_time_fields("2:1:10:30"), Some(vec![2, 1, 10, 30]));
    assert_eq!(parse_time_fields("24:00"), None);
    assert_eq!(parse_time_fields("13:1:10:30"), None);
    assert_eq!(parse_time_fields("10"), None);
    let at = resolve_local_time(&[10, 30]).unwrap_or_default();
    let now = super::super::timefmt::now();
    assert!(at > now - 60 && at <= now + 86_400 + 3600, "{at} vs {now}");
}

#[test]
fn command_line_options() {
    let (o, rest) = cmdline(
        &[
            "-J",
            "Snakemake_rule_r:k=v,k2=v2___(uuid)",
            "-q",
            "short",
            "-n",
            "2,4",
            "-oo",
            "out.%J",
            "-e",
            "err.%J",
            "-W",
            "01:00",
            "-M",
            "4G",
            "-R",
            "span[hosts=1]",
            "-R",
            "rusage[mem=100]",
            "-x",
            "-H",
            "-cwd",
            ".",
            "-P",
            "proj",
            "-G",
            "grp",
            "-m",
            "hostA hostB+2",
            "-w",
            "\"done(5)\"",
            "-env",
            "all, A=1",
            "-gpu",
            "num=2",
            "python",
            "-m",
            "x",
            "--flag",
        ],
        "MB",
    );
    assert_eq!(rest, words(&["python", "-m", "x", "--flag"]));
    assert_eq!(
        o.job_name.as_deref(),
        Some("Snakemake_rule_r:k=v,k2=v2___(uuid)")
    );
    assert_eq!(o.procs, Some((2, 4)));
    assert_eq!(o.out, Some(("out.%J".into(), true)));
    assert_eq!(o.err, Some(("err.%J".into(), false)));
    assert_eq!(o.limits[rlimit::RUN], Some(3600));
    assert_eq!(o.limits[rlimit::RSS], Some(4 * 1024 * 1024));
    assert_eq!(o.res_req, words(&["span[hosts=1]", "rusage[mem=100]"]));
    // The preference level goes to mbatchd with the name.
    assert_eq!(o.hosts, Some(words(&["hostA", "hostB+2"])));
    assert_eq!(o.depend.as_deref(), Some("done(5)"));
    assert!(o.exclusive && o.hold);
    assert_eq!(o.ignored, words(&["gpu"]));
}

#[test]
fn bad_values_are_refused() {
    let items = opts::parse(&words(&["-n", "0", "x"]), &SPEC, true).unwrap_or_default();
    let mut o = BsubOpts::default();
    assert_eq!(
        apply_items(items, &mut o, &cx("KB")),
        Err("0: Bad argument for option -n".to_string())
    );
    let items = opts::parse(&words(&["-M", "lots", "x"]), &SPEC, true).unwrap_or_default();
    assert!(apply_items(items, &mut o, &cx("KB")).is_err());
    assert!(opts::parse(&words(&["-Z", "x"]), &SPEC, true).is_err());
    assert_eq!(
        rejected_line("Queue does not exist"),
        "Queue does not exist. Job not submitted."
    );
    assert_eq!(
        rejected_line("Not allowed due to resource limit."),
        "Not allowed due to resource limit. Job not submitted."
    );
}

/// Issue 31: an over-deep or over-long value is refused at `bsub`, before anything is
/// sent, with the message mbatchd would give.
#[test]
fn over_deep_or_over_long_values_are_refused_before_sending() {
    let who = Submitter {
        cwd: "/home/a".into(),
        home: "/home/a".into(),
        umask: 0o022,
        from_host: "hostA".into(),
        vars: vec![("PATH".into(), "/bin".into())],
    };
    let check = |args: &[&str]| {
        let (o, rest) = cmdline(args, "KB");
        let cmd = JobCommand {
            text: rest.join(" "),
            is_script: false,
            script_name: None,
        };
        check_bounds(&build(&o, &cmd, &who))
    };
    assert_eq!(check(&["-w", "done(1)", "true"]), Ok(()));
    let deep = format!("{}done(1){}", "(".repeat(5000), ")".repeat(5000));
    assert_eq!(
        check(&["-w", &deep, "true"]),
        Err("Bad dependency condition syntax".into())
    );
    let name = "n".repeat(5000);
    assert_eq!(check(&["-J", &name, "true"]), Err("Bad job name".into()));
    let out = format!("/tmp/{}", "%J".repeat(3000));
    assert_eq!(
        check(&["-o", &out, "true"]),
        Err("Bad argument: the output file name (-o) is longer than 4095 characters".into())
    );
    let hosts = "h ".repeat(20_000);
    assert_eq!(
        check(&["-m", &hosts, "true"]),
        Err("Bad host name, host group name or cluster name".into())
    );
    let rr = format!("select[{}]", "mem>1 && ".repeat(3000));
    assert_eq!(
        check(&["-R", &rr, "true"]),
        Err("Bad resource requirement syntax".into())
    );
    // A long command is fine: it travels in the job file.
    let words: Vec<String> = std::iter::once("echo".to_string())
        .chain((0..50_000).map(|_| "word".to_string()))
        .collect();
    let args: Vec<&str> = words.iter().map(String::as_str).collect();
    assert_eq!(check(&args), Ok(()));
}

/// The first item `args` parse to, and the words left for the command.
fn first_item_and_words(args: &[&str]) -> (Option<Item>, Vec<String>) {
    let items = opts::parse(&words(args), &SPEC, true).unwrap_or_default();
    let rest = items
        .iter()
        .filter_map(|i| match i {
            Item::Arg(a) => Some(a.clone()),
            Item::Opt(..) => None,
        })
        .collect();
    (items.first().cloned(), rest)
}

/// `-<name> value true` (or `-<name> true` for a flag).
fn with_value(name: &str) -> (Vec<String>, Option<String>) {
    let flag = SPEC.flags.contains(&name);
    let mut args = vec![format!("-{name}")];
    if !flag {
        args.push("value".into());
    }
    args.push("true".into());
    (args, (!flag).then(|| "value".to_string()))
}

/// Issue 30 item 4: `-Ep /bin/true -q normal echo hi` is `-Ep` with its value, then
/// queue normal and the command `echo hi` — not `-E p` with `/bin/true` as the command.
#[test]
fn ep_is_read_whole_and_the_queue_and_command_follow_it() {
    let items = opts::parse(
        &words(&["-Ep", "/bin/true", "-q", "normal", "echo", "hi"]),
        &SPEC,
        true,
    );
    assert_eq!(
        items,
        Ok(vec![
            Item::Opt("Ep".into(), Some("/bin/true".into())),
            Item::Opt("q".into(), Some("normal".into())),
            Item::Arg("echo".into()),
            Item::Arg("hi".into()),
        ])
    );
    // -Ep is the job's post-execution command; what follows is applied as usual.
    let mut o = BsubOpts::default();
    let rest = apply_items(items.unwrap_or_default(), &mut o, &cx("KB"));
    assert_eq!(rest, Ok(vec!["echo".to_string(), "hi".to_string()]));
    assert_eq!(o.queue.as_deref(), Some("normal"));
    assert_eq!(o.post_exec.as_deref(), Some("/bin/true"));
    // The same option with a one-letter prefix in a bundle is still unbundled.
    let (o, rest) = cmdline(&["-Epre", "echo", "hi"], "KB");
    assert_eq!(o.pre_exec.as_deref(), Some("pre"));
    assert_eq!(rest, vec!["echo".to_string(), "hi".to_string()]);
}

/// Every LSF option Basalt refuses is parsed as itself (not as a bundle of one-letter
/// options) and refused by its own name.
#[test]
fn every_refused_lsf_option_is_parsed_as_itself_and_refused_by_name() {
    for name in NOT_SUPPORTED {
        let (args, value) = with_value(name);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (first, rest) = first_item_and_words(&args);
        assert_eq!(first, Some(Item::Opt((*name).to_string(), value)), "{name}");
        assert_eq!(rest, vec!["true".to_string()], "{name}");
        let items = opts::parse(&words(&args), &SPEC, true).unwrap_or_default();
        let mut o = BsubOpts::default();
        assert_eq!(
            apply_items(items, &mut o, &cx("KB")),
            Err(format!(
                "-{name}: this LSF option is not supported by Basalt yet"
            )),
            "{name}"
        );
    }
}

/// Every LSF option Basalt accepts and ignores is parsed as itself, leaves the job as
/// it was (the command, the queue, the output) and is recorded as ignored.
#[test]
fn every_ignored_lsf_option_is_parsed_as_itself_and_changes_nothing() {
    for name in IGNORED {
        let (mut args, value) = with_value(name);
        args.splice(
            args.len() - 1..,
            ["-q".into(), "normal".into(), "true".into()],
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (first, _) = first_item_and_words(&args);
        assert_eq!(first, Some(Item::Opt((*name).to_string(), value)), "{name}");
        let (o, rest) = cmdline(&args, "KB");
        assert_eq!(rest, vec!["true".to_string()], "{name}");
        let expected = BsubOpts {
            queue: Some("normal".into()),
            ignored: vec![(*name).to_string()],
            ..Default::default()
        };
        assert_eq!(o, expected, "{name}");
    }
}

/// The option list covers LSF 10.1's bsub synopsis: each listed multi-letter option
/// is one of bsub's own names, so none of them is unbundled.
#[test]
fn lsf_10_1_multi_letter_bsub_options_are_all_known_names() {
    let lsf = [
        "Ep",
        "ext",
        "extsched",
        "Lp",
        "mig",
        "pack",
        "tty",
        "jsdl",
        "jsdl_strict",
        "rn",
        "rnc",
        "sla",
        "Is",
        "Ip",
        "IS",
        "ISp",
        "ISs",
        "IX",
        "ul",
        "is",
        "wa",
        "wt",
        "Zs",
        "XF",
        "ar",
        "alloc_flags",
        "app",
        "clusters",
        "cn_cu",
        "cn_mem",
        "core_isolation",
        "csm",
        "cwd",
        "data",
        "datachk",
        "datagrp",
        "env",
        "eo",
        "eptl",
        "freq",
        "gpu",
        "hl",
        "hostfile",
        "Jd",
        "jsm",
        "json",
        "ln_mem",
        "ln_slots",
        "network",
        "nnodes",
        "notify",
        "oo",
        "outdir",
        "ptl",
        "rcacct",
        "smt",
        "sp",
        "stage",
        "step_cgroup",
        "ti",
        "We",
        "yaml",
    ];
    for name in lsf {
        assert!(
            SPEC.flags.contains(&name) || SPEC.valued.contains(&name),
            "-{name} is not one of bsub's names"
        );
    }
    // One-letter options LSF has, including those Basalt refuses or ignores.
    for name in ["I", "K", "f", "k", "g", "a", "s"] {
        assert!(
            SPEC.flags.contains(&name) || SPEC.valued.contains(&name),
            "-{name}"
        );
    }
}

/// `-rn` makes the job not rerunnable; unknown options keep LSF's message.
#[test]
fn rn_makes_the_job_not_rerunnable_and_unknown_options_are_illegal() {
    let (o, rest) = cmdline(&["-r", "-rn", "a"], "KB");
    assert!(!o.rerunnable, "-rn: not rerunnable");
    assert_eq!(rest, vec!["a".to_string()]);
    assert_eq!(
        opts::parse(&words(&["-Zz", "a"]), &SPEC, true).map_err(|e| e.to_string()),
        Err("illegal option -- Z".to_string())
    );
}

#[test]
fn shell_style_words() {
    assert_eq!(
        shell_words(r#" -R "select[type==any]"    # Allow any"#),
        Ok(words(&["-R", "select[type==any]"]))
    );
    assert_eq!(shell_words("-q q "), Ok(words(&["-q", "q"])));
    assert_eq!(
        shell_words(r#"-J 'a b' -o "x \"y\"" c\ d e#f"#),
        Ok(words(&["-J", "a b", "-o", "x \"y\"", "c d", "e#f"]))
    );
    assert!(shell_words("-J 'open").is_err());
}

const SCRIPT: &str = "\n#!/bin/bash\n#BSUB -J dask-worker\n#BSUB -e %J.err\n#BSUB -o %J.out\n#BSUB -q normal \n#BSUB -n 2\n#BSUB -R \"span[hosts=1]\"\n#BSUB -M 2000\n#BSUB -W 00:10\n    #BSUB -J ipengine-3\n#BSUB -R \"select[type==any]\"    # Allow any host type\n\n#BSUB -env \"all\"\n#BSUB -env \"PSIJ_X=1\"\n#BSUBX -q bogus\necho hi\n#BSUB -x\n";

#[test]
fn directive_parsing() {
    let (o, warnings) = script_opts(SCRIPT, &cx("MB")).unwrap_or_default();
    assert!(warnings.is_empty(), "{warnings:?}");
    // The indented directive is a comment.
    assert_eq!(o.job_name.as_deref(), Some("dask-worker"));
    assert_eq!(o.err, Some(("%J.err".into(), false)));
    assert_eq!(o.out, Some(("%J.out".into(), false)));
    assert_eq!(o.queue.as_deref(), Some("normal"));
    assert_eq!(o.procs, Some((2, 2)));
    assert_eq!(o.res_req, words(&["span[hosts=1]", "select[type==any]"]));
    assert_eq!(o.limits[rlimit::RSS], Some(2000 * 1024));
    assert_eq!(o.limits[rlimit::RUN], Some(600));
    assert_eq!(o.env, words(&["all", "PSIJ_X=1"]));
    // Directives after commands still count.
    assert!(o.exclusive);
    assert_eq!(directives(SCRIPT).len(), 12);
}

#[test]
fn command_line_beats_the_script() {
    let (script, _) = script_opts(SCRIPT, &cx("MB")).unwrap_or_default();
    let (cmd, _) = cmdline(
        &["-J", "ipengine[1-4]", "-q", "short", "-R", "rusage[mem=5]"],
        "MB",
    );
    let o = cmd.over(script);
    assert_eq!(o.job_name.as_deref(), Some("ipengine[1-4]"));
    assert_eq!(o.queue.as_deref(), Some("short"));
    assert_eq!(o.procs, Some((2, 2)));
    assert_eq!(
        o.res_req,
        words(&["span[hosts=1]", "select[type==any]", "rusage[mem=5]"])
    );
    let job = build(
        &o,
        &JobCommand {
            text: SCRIPT.into(),
            is_script: true,
            script_name: None,
        },
        &Submitter::default(),
    );
    assert_eq!(job.res_req, "select[type==any] rusage[mem=5] span[hosts=1]");
    assert_eq!(job.job_name, "ipengine[1-4]");
    assert!(job.is_script);
    assert_ne!(job.options2 & sub2::JOB_CMD_SPOOL, 0);
}

#[test]
fn bad_directive_is_reported_with_its_line() {
    let err = script_opts("#!/bin/sh\n#BSUB -n zero\n", &cx("KB"));
    assert_eq!(
        err.map(|_| ()),
        Err("#BSUB at line 2: zero: Bad argument for option -n".to_string())
    );
    let (_, warnings) = script_opts("#BSUB -q a stray\n", &cx("KB")).unwrap_or_default();
    assert_eq!(warnings.len(), 1);
}

#[test]
fn environment_selection() {
    let vars = vec![
        ("A".to_string(), "1".to_string()),
        ("B".to_string(), "2".to_string()),
        ("C".to_string(), "x,y".to_string()),
    ];
    assert_eq!(resolve_env(&[], &vars), words(&["A=1", "B=2", "C=x,y"]));
    assert_eq!(resolve_env(&words(&["none"]), &vars), Vec::<String>::new());
    assert_eq!(
        resolve_env(&words(&["all, ~B, D=4"]), &vars),
        words(&["A=1", "C=x,y", "D=4"])
    );
    assert_eq!(
        resolve_env(&words(&["all", "A=9"]), &vars),
        words(&["A=9", "B=2", "C=x,y"])
    );
    assert_eq!(
        resolve_env(&words(&["B, E=5"]), &vars),
        words(&["B=2", "E=5"])
    );
    // A value with commas stays whole.
    assert_eq!(
        resolve_env(&words(&["LIST=a,b,c"]), &vars),
        words(&["LIST=a,b,c"])
    );
}

#[test]
fn submission_fields_and_option_bits() {
    let (o, rest) = cmdline(
        &[
            "-q", "normal", "-J", "j", "-o", "o", "-eo", "e", "-R", "x", "-m", "h", "-x", "-r",
            "sleep", "10",
        ],
        "KB",
    );
    let cmd = JobCommand {
        text: rest.join(" "),
        is_script: false,
        script_name: None,
    };
    let who = Submitter {
        cwd: "/home/a".into(),
        home: "/home/a".into(),
        umask: 0o022,
        from_host: "hostA".into(),
        vars: vec![("PATH".into(), "/bin".into())],
    };
    let j = build(&o, &cmd, &who);
    assert_eq!(j.command, "sleep 10");
    assert!(!j.is_script);
    assert_eq!(
        j.options,
        sub::PROJECT_NAME
            | sub::QUEUE
            | sub::JOB_NAME
            | sub::OUT_FILE
            | sub::ERR_FILE
            | sub::RES_REQ
            | sub::HOST
            | sub::EXCLUSIVE
            | sub::RERUNNABLE
    );
    assert_eq!(j.options2, sub2::ERR_OVERWRITE);
    assert_eq!(j.rlimits, vec![-1; 11]);
    assert_eq!(j.env, words(&["PATH=/bin"]));
    assert_eq!((j.num_processors, j.max_processors), (1, 1));
    assert_eq!(j.umask, 0o022);

    let (o, _) = cmdline(&["-nnodes", "2", "-n", "8", "true"], "KB");
    let j = build(&o, &cmd, &who);
    assert_ne!(j.options & sub::EXCLUSIVE, 0);
    assert_eq!(j.res_req, "span[ptile=4]");
    assert_eq!(j.num_processors, 8);
    let (o, _) = cmdline(&["-nnodes", "3", "true"], "KB");
    let j = build(&o, &cmd, &who);
    assert_eq!((j.num_processors, j.res_req.as_str()), (3, "span[ptile=1]"));
}

#[test]
fn app_is_sent_to_mbatchd_not_ignored() {
    let (o, rest) = cmdline(&["-app", "fluent", "-G", "physics", "true"], "KB");
    assert_eq!(o.app.as_deref(), Some("fluent"));
    assert!(o.ignored.is_empty());
    let cmd = JobCommand {
        text: rest.join(" "),
        is_script: false,
        script_name: None,
    };
    let j = build(&o, &cmd, &Submitter::default());
    assert_eq!(j.app, "fluent");
    assert_eq!(j.user_group, "physics");
    assert_ne!(j.options & sub::USER_GROUP, 0);
    // A #BSUB -app is used unless the command line names another.
    let (script, _) = script_opts("#BSUB -app cfx\n", &cx("KB")).unwrap_or_default();
    let (cmd_line, _) = cmdline(&["true"], "KB");
    assert_eq!(cmd_line.over(script.clone()).app.as_deref(), Some("cfx"));
    assert_eq!(o.over(script).app.as_deref(), Some("fluent"));
    let (none, _) = cmdline(&["true"], "KB");
    assert_eq!(build(&none, &cmd, &Submitter::default()).app, "");
}

#[test]
fn success_lines() {
    assert_eq!(
        submitted_line(101, "normal", true),
        "Job <101> is submitted to default queue <normal>."
    );
    assert_eq!(
        submitted_line(104, "normal", false),
        "Job <104> is submitted to queue <normal>."
    );
}

fn plain(text: &str) -> JobCommand {
    JobCommand {
        text: text.into(),
        is_script: false,
        script_name: None,
    }
}

fn assignment(line: usize, name: &str, value: &str) -> Assignment {
    Assignment {
        line,
        name: name.into(),
        value: value.into(),
    }
}

/// The parameter file names each option given the way LSF does, strings double-quoted
/// (safe to source: `\ " $` and backquote escaped), numbers bare, switches `Y`; options
/// not given do not appear, nor the command unless `LSB_SUB_COMMANDNAME` asks for it.
#[test]
fn parameter_file_lists_the_options_given_as_lsf_writes_them() {
    let (o, rest) = cmdline(
        &[
            "-q",
            "normal",
            "-x",
            "-P",
            "myproject",
            "-R",
            "r1m rusage[mem=100]",
            "-n",
            "90",
            "-J",
            "say \"hi\" $HOME `id` \\",
            "-m",
            "hostA hostB+1",
            "-W",
            "10",
            "-M",
            "2048",
            "-H",
            "-r",
            "-cwd",
            "/w",
            "-app",
            "fluent",
            "-a",
            "license fluent(x,y)",
            "-E",
            "pre",
            "-o",
            "out.%J",
            "myjob",
        ],
        "KB",
    );
    let cmd = plain(&rest.join(" "));
    let text = parm_file(&o, &cmd, false);
    let lines: Vec<&str> = text.lines().collect();
    for want in [
        r#"LSB_SUB_QUEUE="normal""#,
        "LSB_SUB_EXCLUSIVE=Y",
        r#"LSB_SUB_RES_REQ="r1m rusage[mem=100]""#,
        r#"LSB_SUB_PROJECT_NAME="myproject""#,
        "LSB_SUB_NUM_PROCESSORS=90",
        "LSB_SUB_MAX_NUM_PROCESSORS=90",
        r#"LSB_SUB_JOB_NAME="say \"hi\" \$HOME \`id\` \\""#,
        r#"LSB_SUB_HOSTS="hostA hostB+1""#,
        "LSB_SUB_RLIMIT_RUN=600",
        "LSB_SUB_RLIMIT_RSS=2048",
        "LSB_SUB_HOLD=Y",
        "LSB_SUB_RERUNNABLE=Y",
        r#"LSB_SUB3_CWD="/w""#,
        r#"LSB_SUB3_APP="fluent""#,
        r#"LSB_SUB_ADDITIONAL="license fluent(x,y)""#,
        r#"LSB_SUB_PRE_EXEC="pre""#,
        r#"LSB_SUB_OUT_FILE="out.%J""#,
    ] {
        assert!(lines.contains(&want), "{want} not in\n{text}");
    }
    assert_eq!(lines.len(), 17, "{text}");
    assert!(!text.contains("COMMAND"), "{text}");
    // Nothing given, nothing written.
    assert_eq!(parm_file(&BsubOpts::default(), &cmd, false), "");
    // LSB_SUB_COMMANDNAME=Y: the command's name and line.
    let with = parm_file(&BsubOpts::default(), &plain("sleep \"10\""), true);
    assert_eq!(
        with,
        "LSB_SUB_COMMANDNAME=\"sleep\"\nLSB_SUB_COMMAND_LINE=\"sleep \\\"10\\\"\"\n"
    );
    let script = JobCommand {
        text: "#!/bin/sh\n#BSUB -q x\n\nmyprog -v\n".into(),
        is_script: true,
        script_name: None,
    };
    assert_eq!(command_name(&script), "myprog");
    let file = JobCommand {
        script_name: Some("run.sh".into()),
        ..script
    };
    assert_eq!(
        (command_name(&file), command_line(&file)),
        ("run.sh".into(), "run.sh".into())
    );
}

/// What bsub writes, the reader reads back unchanged (a sourcing shell would too).
#[test]
fn parameter_file_reads_back_as_written() {
    let (o, _) = cmdline(
        &[
            "-J",
            "a \"b\" $c `d` \\e",
            "-q",
            "normal",
            "-n",
            "2,4",
            "-x",
            "true",
        ],
        "KB",
    );
    let text = parm_file(&o, &plain("true"), true);
    let back = parse_assignments(&text, "LSB_SUB_PARM_FILE").unwrap_or_default();
    let get = |n: &str| back.iter().find(|a| a.name == n).map(|a| a.value.clone());
    assert_eq!(
        get("LSB_SUB_JOB_NAME").as_deref(),
        Some("a \"b\" $c `d` \\e")
    );
    assert_eq!(get("LSB_SUB_QUEUE").as_deref(), Some("normal"));
    assert_eq!(get("LSB_SUB_MAX_NUM_PROCESSORS").as_deref(), Some("4"));
    assert_eq!(get("LSB_SUB_EXCLUSIVE").as_deref(), Some("Y"));
    assert_eq!(get("LSB_SUB_COMMAND_LINE").as_deref(), Some("true"));
}

/// An esub's file: quoted or bare values, values over several lines, comments and blank
/// lines; anything else is an error naming the line.
#[test]
fn modify_file_syntax() {
    let text = "# from esub\n\nLSB_SUB_QUEUE=\"short\"\r\nLSB_SUB_PROJECT_NAME=bare value  \n\
                LSB_SUB_RES_REQ='select[a]  rusage[mem=1]'\nLSB_SUB_JOB_NAME=\"two\nlines \\\"q\\\"\"\n\
                LSB_SUB_HOLD=SUB_RESET\nLSB_SUB_MAIL_USER=\"\"\n   LSB_SUB_USER_GROUP = \"g\" \n";
    let got = parse_assignments(text, "LSB_SUB_MODIFY_FILE");
    let want = vec![
        assignment(3, "LSB_SUB_QUEUE", "short"),
        assignment(4, "LSB_SUB_PROJECT_NAME", "bare value"),
        assignment(5, "LSB_SUB_RES_REQ", "select[a]  rusage[mem=1]"),
        assignment(6, "LSB_SUB_JOB_NAME", "two\nlines \"q\""),
        assignment(8, "LSB_SUB_HOLD", "SUB_RESET"),
        assignment(9, "LSB_SUB_MAIL_USER", ""),
    ];
    // `NAME = value`: a blank before `=` is not a name.
    assert!(
        matches!(&got, Err(e) if e.contains("line 10") && e.contains("LSB_SUB_USER_GROUP")),
        "{got:?}"
    );
    let text = text.replace(
        "   LSB_SUB_USER_GROUP = \"g\" \n",
        "LSB_SUB_USER_GROUP=\"g\" \n",
    );
    let mut want = want;
    want.push(assignment(10, "LSB_SUB_USER_GROUP", "g"));
    assert_eq!(parse_assignments(&text, "LSB_SUB_MODIFY_FILE"), Ok(want));
    assert!(want_err("garbage line", "line 1: not NAME=VALUE"));
    assert!(want_err("A=1\n1X=2", "line 2: not a variable name"));
    assert!(want_err(
        "A=\"open\nstill open",
        "line 1: the quote is not closed"
    ));
    assert!(want_err("A=\"x\"y", "line 1: text after the closing quote"));
    assert!(want_err("A='x", "the quote is not closed"));
}

fn want_err(text: &str, part: &str) -> bool {
    match parse_assignments(text, "LSB_SUB_MODIFY_FILE") {
        Err(e) => e.starts_with("LSB_SUB_MODIFY_FILE: ") && e.contains(part),
        Ok(a) => panic!("{text:?} parsed: {a:?}"),
    }
}

/// Each entry of LSB_SUB_MODIFY_FILE overrides its option; SUB_RESET removes it.
#[test]
fn modify_file_overrides_and_resets_options() {
    let (mut o, rest) = cmdline(
        &[
            "-q", "normal", "-R", "a", "-R", "b", "-P", "p", "-x", "-oo", "out", "-n", "2,4", "-W",
            "10", "-m", "h1", "echo", "hi",
        ],
        "KB",
    );
    let mut cmd = plain(&rest.join(" "));
    let text = "LSB_SUB_QUEUE=\"short\"\nLSB_SUB_RES_REQ=\"select[x]\"\nLSB_SUB_PROJECT_NAME=SUB_RESET\n\
                LSB_SUB_EXCLUSIVE=SUB_RESET\nLSB_SUB_HOLD=Y\nLSB_SUB_OUT_FILE=\"o2\"\n\
                LSB_SUB_NUM_PROCESSORS=8\nLSB_SUB_RLIMIT_RUN=SUB_RESET\nLSB_SUB_RLIMIT_CPU=60\n\
                LSB_SUB_HOSTS=\"h2 h3+1\"\nLSB_SUB_COMMAND_LINE=\"echo bye\"\nLSB_SUB_ADDITIONAL=\"x\"\n\
                LSB_SUB_JOB_DESCRIPTION=\"d\"\nLSB_SUB_MAIL_USER=\"\"\n";
    let mods = parse_assignments(text, "LSB_SUB_MODIFY_FILE").unwrap_or_default();
    let warnings = apply_modify(&mut o, &mut cmd, &mods);
    assert_eq!(
        warnings,
        Ok(vec![
            "LSB_SUB_MODIFY_FILE: line 13: LSB_SUB_JOB_DESCRIPTION is not applied by Basalt; ignored"
                .to_string(),
            "LSB_SUB_MODIFY_FILE: line 14: LSB_SUB_MAIL_USER is empty; ignored".to_string(),
        ])
    );
    assert_eq!(o.queue.as_deref(), Some("short"));
    assert_eq!(o.res_req, words(&["select[x]"]));
    assert_eq!(o.project, None);
    assert!(!o.exclusive && o.hold);
    // The new output file keeps -oo's overwrite.
    assert_eq!(o.out, Some(("o2".into(), true)));
    // A new minimum above the old maximum raises it.
    assert_eq!(o.procs, Some((8, 8)));
    assert_eq!(
        (o.limits[rlimit::RUN], o.limits[rlimit::CPU]),
        (None, Some(60))
    );
    assert_eq!(o.hosts, Some(words(&["h2", "h3+1"])));
    assert_eq!(cmd, plain("echo bye"));
    // The modified options make the submission.
    let j = build(&o, &cmd, &Submitter::default());
    assert_eq!(
        (j.queue.as_str(), j.res_req.as_str()),
        ("short", "select[x]")
    );
    assert_eq!(j.options & sub::EXCLUSIVE, 0);
    assert_ne!(j.options2 & sub2::HOLD, 0);
    assert_eq!(j.command, "echo bye");

    // A script file replaced by a command runs that command.
    let mut file = JobCommand {
        text: "#!/bin/sh\ntrue\n".into(),
        is_script: true,
        script_name: Some("run.sh".into()),
    };
    let same = [assignment(1, "LSB_SUB_COMMAND_LINE", "run.sh")];
    assert_eq!(apply_modify(&mut o, &mut file, &same), Ok(vec![]));
    assert!(file.is_script && file.script_name.is_some());
    let other = [assignment(1, "LSB_SUB_COMMAND_LINE", "other.sh -v")];
    assert_eq!(apply_modify(&mut o, &mut file, &other), Ok(vec![]));
    assert_eq!(file, plain("other.sh -v"));
}

/// A value of the wrong kind, or an option Basalt refuses on the command line, stops the
/// submission with the line named.
#[test]
fn modify_file_bad_values_and_refused_options_are_errors() {
    let bad = |name: &str, value: &str| {
        let mut o = BsubOpts::default();
        let mut cmd = plain("true");
        apply_modify(&mut o, &mut cmd, &[assignment(3, name, value)])
    };
    for (name, value) in [
        ("LSB_SUB_NUM_PROCESSORS", "two"),
        ("LSB_SUB_NUM_PROCESSORS", "0"),
        ("LSB_SUB_RLIMIT_RUN", "-5"),
        ("LSB_SUB_RLIMIT_RSS", "1.5"),
        ("LSB_SUB_BEGIN_TIME", "soon"),
        ("LSB_SUB_EXCLUSIVE", "yes"),
        ("LSB_SUB_HOSTS", " + "),
        ("LSB_SUB_COMMAND_LINE", "SUB_RESET"),
    ] {
        let r = bad(name, value);
        assert!(
            matches!(&r, Err(e) if e.starts_with(&format!("LSB_SUB_MODIFY_FILE: line 3: {name}: bad value <{value}>"))),
            "{name}={value}: {r:?}"
        );
    }
    assert_eq!(bad("LSB_SUB_RLIMIT_CORE", "0"), Ok(vec![]));
    assert_eq!(
        bad("LSB_SUB_INTERACTIVE", "Y"),
        Err("LSB_SUB_MODIFY_FILE: line 3: LSB_SUB_INTERACTIVE: an esub cannot change whether a job is interactive".into())
    );
    // Saying what bsub said (or resetting what was not set) changes nothing.
    assert_eq!(bad("LSB_SUB_INTERACTIVE", "SUB_RESET"), Ok(vec![]));
    assert!(bad("LSB_SUB_OTHER_FILES_0", "a > b").is_err());
    assert_eq!(bad("LSB_SUB_OTHER_FILES_0", "SUB_RESET"), Ok(vec![]));
    let mut o = BsubOpts::default();
    let both = [
        assignment(1, "LSB_SUB_NUM_PROCESSORS", "4"),
        assignment(2, "LSB_SUB_MAX_NUM_PROCESSORS", "2"),
    ];
    assert!(apply_modify(&mut o, &mut plain("true"), &both).is_err());
    let max_only = [assignment(1, "LSB_SUB_MAX_NUM_PROCESSORS", "6")];
    assert_eq!(
        apply_modify(&mut o, &mut plain("true"), &max_only),
        Ok(vec![])
    );
    assert_eq!(o.procs, Some((1, 6)));
}

/// LSB_SUB_MODIFY_ENVFILE sets or adds variables of the job's environment; SUB_RESET
/// removes one.
#[test]
fn modify_envfile_sets_and_removes_job_variables() {
    let mut env = words(&["PATH=/bin", "A=1", "B=2"]);
    let vars = parse_assignments(
        "A=\"one two\"\nC=3\nB=SUB_RESET\nNOPE=SUB_RESET\n",
        "LSB_SUB_MODIFY_ENVFILE",
    )
    .unwrap_or_default();
    apply_env(&mut env, &vars);
    assert_eq!(env, words(&["PATH=/bin", "A=one two", "C=3"]));
}

/// `-a "name[(args)] ..."`: names of letters, digits, `_` and `-`, arguments split at
/// commas; a value that is not that is refused as a bad argument.
#[test]
fn esub_application_names() {
    assert_eq!(
        parse_esub_apps(" license  fluent(a, b,c) eas() "),
        Ok(vec![
            ("license".to_string(), vec![]),
            ("fluent".to_string(), words(&["a", "b", "c"])),
            ("eas".to_string(), vec![]),
        ])
    );
    for bad in ["", "  ", "../x", "a/b", "f(a", "f(a)b", "x.y"] {
        assert_eq!(
            parse_esub_apps(bad),
            Err(format!("{bad}: Bad argument for option -a")),
            "{bad:?}"
        );
    }
    // -a is no longer refused; the script's is used unless the command line gives one.
    let (o, rest) = cmdline(&["-a", "fluent", "true"], "KB");
    assert_eq!(
        (o.esub_apps.as_deref(), rest),
        (Some("fluent"), words(&["true"]))
    );
    let (script, _) = script_opts("#BSUB -a license\n", &cx("KB")).unwrap_or_default();
    assert_eq!(
        o.clone().over(script.clone()).esub_apps.as_deref(),
        Some("fluent")
    );
    let (none, _) = cmdline(&["true"], "KB");
    assert_eq!(none.over(script).esub_apps.as_deref(), Some("license"));
}

fn write_exec(dir: &std::path::Path, name: &str, body: &str, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).map_err(|e| e.to_string())?;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).map_err(|e| e.to_string())
}

/// LSF's order: `esub`, then LSB_ESUB_METHOD's, then -a's; a named one that is missing
/// is an error, a plain `esub` that is missing (or not executable) is simply not run.
#[test]
fn esubs_run_in_lsf_order_and_named_ones_must_exist() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let d = dir.path();
    assert_eq!(plan(d, None, None), Ok(vec![]));
    write_exec(d, "esub", "exit 0", 0o644)?;
    assert_eq!(plan(d, None, None), Ok(vec![]));
    write_exec(d, "esub", "exit 0", 0o755)?;
    write_exec(d, "esub.dce", "exit 0", 0o755)?;
    write_exec(d, "esub.fluent", "exit 0", 0o755)?;
    write_exec(d, "esub.license", "exit 0", 0o755)?;
    let got = plan(d, Some("dce"), Some("fluent(4) license dce"))?;
    let names: Vec<(String, Vec<String>)> = got
        .iter()
        .map(|e| {
            let n = e.path.file_name().map(|n| n.to_string_lossy().into_owned());
            (n.unwrap_or_default(), e.args.clone())
        })
        .collect();
    assert_eq!(
        names,
        vec![
            ("esub".to_string(), vec![]),
            ("esub.dce".to_string(), vec![]),
            ("esub.fluent".to_string(), words(&["4"])),
            ("esub.license".to_string(), vec![]),
        ]
    );
    let missing = plan(d, None, Some("fluent nosuch"));
    assert_eq!(
        missing,
        Err(format!(
            "Application <nosuch>: esub.nosuch does not exist in LSF_SERVERDIR ({}) or is not \
             executable",
            d.display()
        ))
    );
    assert!(
        matches!(plan(d, Some("gone"), None), Err(e) if e.starts_with("LSB_ESUB_METHOD application <gone>"))
    );
    Ok(())
}

/// The esubs run with LSF's variables; their stdout is not bsub's; the exit value 97
/// refuses the job, any other lets it through; they share the files they write back;
/// the files are gone afterwards.
#[test]
fn esubs_refuse_with_the_abort_value_and_write_back_changes() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let d = dir.path();
    let log = d.join("log");
    let log = log.display();
    write_exec(
        d,
        "esub",
        &format!(
            ". \"$LSB_SUB_PARM_FILE\"\n\
             echo \"esub $LSB_SUB_QUEUE $LSB_SUB_ABORT_VALUE $LSF_INVOKE_CMD $LSB_SUB_ADDITIONAL $LSB_SUB_PARM_FILE\" >> {log}\n\
             echo 'LSB_SUB_QUEUE=\"short\"' > \"$LSB_SUB_MODIFY_FILE\"\n\
             echo 'for eexec'\n\
             exit 3"
        ),
        0o755,
    )?;
    write_exec(
        d,
        "esub.two",
        &format!(
            "echo \"two $# $1 $2\" >> {log}\n\
             echo 'LSB_SUB_PROJECT_NAME=\"p\"' >> \"$LSB_SUB_MODIFY_FILE\"\n\
             echo 'VAR=\"v\"' > \"$LSB_SUB_MODIFY_ENVFILE\""
        ),
        0o755,
    )?;
    write_exec(
        d,
        "esub.no",
        "echo refused >&2; exit $LSB_SUB_ABORT_VALUE",
        0o755,
    )?;
    let parm = "LSB_SUB_QUEUE=\"normal\"\n";
    let esubs = plan(d, None, Some("two(x,y)"))?;
    let got = run(&esubs, parm, Some("two(x,y)"), false)?;
    assert_eq!(
        got,
        Verdict::Accepted {
            modify: vec![
                assignment(1, "LSB_SUB_QUEUE", "short"),
                assignment(2, "LSB_SUB_PROJECT_NAME", "p"),
            ],
            env: vec![assignment(1, "VAR", "v")],
            stdout: b"for eexec\n".to_vec(),
        }
    );
    let text = std::fs::read_to_string(d.join("log")).map_err(|e| e.to_string())?;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("esub normal 97 bsub two(x,y) /"),
        "{text}"
    );
    assert_eq!(lines[1], "two 2 x y");
    // The temporary files are removed.
    let parm_path = lines[0].rsplit(' ').next().unwrap_or_default();
    assert!(
        !std::path::Path::new(parm_path).exists(),
        "{parm_path} left behind"
    );
    // The abort value stops the chain: esub.two does not run.
    let esubs = plan(d, None, Some("no two"))?;
    assert_eq!(run(&esubs, parm, None, false), Ok(Verdict::Aborted));
    let text = std::fs::read_to_string(d.join("log")).map_err(|e| e.to_string())?;
    assert_eq!(text.lines().count(), 3, "{text}");
    Ok(())
}

/// `-Q "[code ...] [EXCLUDE(code ...)]"`: the job's requeue exit values; anything else is
/// refused before anything is sent.
#[test]
fn q_takes_requeue_exit_values_and_refuses_what_is_not_one() {
    let (o, _) = cmdline(&["-Q", "3 99 EXCLUDE(4)", "true"], "KB");
    assert_eq!(o.requeue_values.as_deref(), Some("3 99 EXCLUDE(4)"));
    let items = opts::parse(&words(&["-Q", "three", "true"]), &SPEC, true).unwrap_or_default();
    let mut o = BsubOpts::default();
    assert!(apply_items(items, &mut o, &cx("KB")).is_err());
}

/// `bsub -k "checkpoint_dir [init=initial_checkpoint_period] [checkpoint_period]
/// [method=method_name]"` (LSF 10.1): periods in minutes, each part at most once.
#[test]
fn k_takes_a_directory_an_initial_period_a_period_and_a_method() {
    assert_eq!(
        Chkpnt::parse("\"/ckpt init=5 30 method=criu\""),
        Some(Chkpnt {
            dir: "/ckpt".into(),
            period: Some(1800),
            init: Some(300),
            method: Some("criu".into()),
        })
    );
    assert_eq!(
        Chkpnt::parse("mydir"),
        Some(Chkpnt {
            dir: "mydir".into(),
            ..Default::default()
        })
    );
    for bad in [
        "",
        "/c 0",
        "/c x",
        "/c 5 6",
        "/c method=",
        "/c method=a/b",
        "/c init=0",
    ] {
        assert_eq!(Chkpnt::parse(bad), None, "{bad:?}");
    }
    // On the command line: the option bits and fields of the submission, a relative
    // directory made absolute.
    let items = opts::parse(&words(&["-k", "ck 10", "true"]), &SPEC, true).unwrap_or_default();
    let mut o = BsubOpts::default();
    apply_items(items, &mut o, &cx("KB")).expect("-k");
    let who = Submitter {
        cwd: "/home/alice".into(),
        vars: vec![("LSB_ECHKPNT_METHOD".into(), "mine".into())],
        ..Default::default()
    };
    let cmd = JobCommand {
        text: "true".into(),
        is_script: false,
        script_name: None,
    };
    let j = build(&o, &cmd, &who);
    assert_eq!(j.chkpnt_dir, "/home/alice/ck");
    assert_eq!(j.chkpnt_period, 600);
    assert_eq!(
        j.chkpnt_method, "mine",
        "LSB_ECHKPNT_METHOD of the environment"
    );
    assert_eq!(
        j.options & (sub::CHKPNT_DIR | sub::CHKPNT_PERIOD),
        sub::CHKPNT_DIR | sub::CHKPNT_PERIOD
    );
    let items = opts::parse(&words(&["-k", "/bad 0", "true"]), &SPEC, true).unwrap_or_default();
    assert!(apply_items(items, &mut BsubOpts::default(), &cx("KB")).is_err());
}

/// An esub sees `-k` as LSB_SUB_CHKPNT_DIR (as given) and LSB_SUB_CHKPNT_PERIOD
/// (seconds), and may change them: a new directory or period, SUB_RESET of the
/// directory to make the job not checkpointable; a period without a directory is
/// refused.
#[test]
fn an_esub_sees_and_changes_the_checkpoint_directory_and_period() {
    let mut o = BsubOpts {
        chkpnt: Chkpnt::parse("ck 10"),
        ..Default::default()
    };
    let text = parm_file(&o, &plain("true"), false);
    assert!(
        text.lines().any(|l| l == r#"LSB_SUB_CHKPNT_DIR="ck""#),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l == "LSB_SUB_CHKPNT_PERIOD=600"),
        "{text}"
    );
    let mut cmd = plain("true");
    apply_modify(
        &mut o,
        &mut cmd,
        &[
            assignment(1, "LSB_SUB_CHKPNT_DIR", "/shared/ck"),
            assignment(2, "LSB_SUB_CHKPNT_PERIOD", "1800"),
        ],
    )
    .expect("modify");
    let c = o.chkpnt.clone().expect("checkpointable");
    assert_eq!((c.dir.as_str(), c.period), ("/shared/ck", Some(1800)));
    apply_modify(
        &mut o,
        &mut cmd,
        &[assignment(1, "LSB_SUB_CHKPNT_DIR", "SUB_RESET")],
    )
    .expect("reset");
    assert_eq!(o.chkpnt, None);
    let r = apply_modify(
        &mut o,
        &mut cmd,
        &[assignment(4, "LSB_SUB_CHKPNT_PERIOD", "60")],
    );
    assert!(
        matches!(&r, Err(e) if e.contains("line 4: LSB_SUB_CHKPNT_PERIOD")),
        "{r:?}"
    );
}

/// Issue 49 item 11: LSF's ranges. `-sp` is 1..MAX_USER_PRIORITY (100 unless lsb.params
/// sets it): not a positive number is "Illegal job priority", above the maximum "Bad user
/// priority". `-W`/`-c` take `[hour:]minute` whose seconds fit LSF's int: beyond is
/// "RUNLIMIT value is too big" / "CPULIMIT value is too big". Both once were accepted.
#[test]
fn issue49_item11_priorities_and_time_limits_are_held_to_lsf_ranges() {
    let one = |args: &[&str]| -> Result<BsubOpts, String> {
        let items = opts::parse(&words(args), &SPEC, true).map_err(|e| e.to_string())?;
        let mut o = BsubOpts::default();
        apply_items(items, &mut o, &cx("KB"))?;
        Ok(o)
    };
    let err = |args: &[&str]| {
        one(args)
            .err()
            .unwrap_or_else(|| panic!("{args:?} accepted"))
    };
    for v in ["2147483648", "99999999999999999999", "0", "-1", "x", "1.5"] {
        assert_eq!(
            err(&["-sp", v, "true"]),
            format!("{v}: Illegal job priority"),
            "-sp {v}"
        );
    }
    assert_eq!(err(&["-sp", "101", "true"]), "Bad user priority");
    for v in ["1", "100"] {
        assert!(one(&["-sp", v, "true"]).is_ok(), "-sp {v}");
    }
    // 35,791,394 minutes is the most whose seconds fit in 2^31 - 1.
    for (opt, name) in [("-W", "RUNLIMIT"), ("-c", "CPULIMIT")] {
        for v in ["99999999999", "35791395", "596523:15", "35791395/hostA"] {
            assert_eq!(
                err(&[opt, v, "true"]),
                format!("{v}: {name} value is too big"),
                "{opt} {v}"
            );
        }
        for v in ["35791394", "596523:14"] {
            assert!(one(&[opt, v, "true"]).is_ok(), "{opt} {v}");
        }
    }
    assert!(one(&["-We", "99999999999", "true"]).is_err());
}

/// Issue 50 item 7: `-R "select[bigmem"` ran as if the bracket were closed (a second
/// `-R` closed it in the merge); LSF refuses it: `Bad resource requirement syntax`.
#[test]
fn item7_an_unclosed_bracket_in_r_is_refused() {
    for args in [
        &["-R", "select[bigmem", "x"][..],
        &["-R", "select[bigmem", "-R", "rusage[mem=1]", "x"],
        &["-R", "select[bigmem]]", "x"],
    ] {
        let items = opts::parse(&words(args), &SPEC, true).unwrap_or_default();
        let mut o = BsubOpts::default();
        assert_eq!(
            apply_items(items, &mut o, &cx("KB")),
            Err("Bad resource requirement syntax".to_string()),
            "{args:?}"
        );
    }
    let (o, rest) = cmdline(&["-R", "select[bigmem]", "-R", "rusage[mem=1]", "x"], "KB");
    assert_eq!((o.res_req.len(), rest), (2, words(&["x"])));
}
