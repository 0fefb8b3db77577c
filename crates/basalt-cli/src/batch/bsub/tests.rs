//! Unit tests of `bsub`'s option parsing, directives and job building.
use super::*;

fn no_time(_: &[u32]) -> Option<i64> {
    Some(1_000)
}

fn cx(unit: &str) -> ValueCtx<'_> {
    ValueCtx {
        unit,
        resolve_time: no_time,
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
    assert_eq!(o.hosts, Some(words(&["hostA", "hostB"])));
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
    // What follows -Ep is applied as usual; -Ep itself is refused by name.
    let mut o = BsubOpts::default();
    let rest = apply_items(
        items.clone().unwrap_or_default().split_off(1),
        &mut o,
        &cx("KB"),
    );
    assert_eq!(rest, Ok(vec!["echo".to_string(), "hi".to_string()]));
    assert_eq!(o.queue.as_deref(), Some("normal"));
    let mut o = BsubOpts::default();
    assert_eq!(
        apply_items(items.unwrap_or_default(), &mut o, &cx("KB")),
        Err("-Ep: this LSF option is not supported by Basalt yet".to_string())
    );
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
    for name in ["I", "K", "f", "k", "g", "a", "Q", "s"] {
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
