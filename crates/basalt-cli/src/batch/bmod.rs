//! `bmod [options] job_ID | "job_ID[index]"`: change what a job was submitted with.
//!
//! Every option `bsub` carries out is accepted with bsub's syntax and value checks (the
//! same parser, [`super::bsub::apply`]); `-Xn` resets option `-X` to its default (`-Jn
//! -qn -mn -Rn -wn -in -on -en -En -Epn -un -Pn -Ln -Gn -nn -bn -tn -xn -rn -Nn -Bn -Qn
//! -appn -cwdn` and the limits `-cn -Wn -Mn -vn -Fn -Dn -Sn -Cn -pn`). Options bsub
//! accepts and ignores are accepted and ignored here too (with their `n` forms); `-Z
//! "command"` gives a pending job a new command line; options bsub refuses, and bmod's
//! `-Zs` (a spooled command) and `-a` (esubs), are refused.
//!
//! mbatchd checks the changed job as it checks a submission and answers for the job:
//! `Parameters of job <103> are being changed` on success; otherwise LSF's reason and
//! `Job not modified.` (exit 255). A pending job takes every change; a started job its
//! resource requirement, and with `LSB_MOD_ALL_JOBS=Y` its output and error files,
//! rerunnable flag and CPU, memory and run limits. bmod of an array changes its pending
//! elements (`"id[i]"`: that element). `-J "%k"` of an array changes only its limit on
//! running elements (LSF's `-J "%job_limit"`): the array keeps its name, whatever state
//! its elements are in; on one element it is refused (`Change job name is not allowed
//! for job array`).

use super::bsub::{self, BsubOpts, JobCommand, Submitter, ValueCtx};
use super::opts::{self, Item, Spec};
use basalt_proto::mbatchd::ModifyRequest;
use std::process::ExitCode;

/// bmod's usage text.
pub const USAGE: &str = "Usage: bmod [-h] [-V] [-x | -xn] [-r | -rn] [-N | -Nn] [-B | -Bn]
            [-q \"queue_name ...\" | -qn] [-J job_name | -J \"%job_limit\" | -Jn]
            [-n min_proc[,max_proc] | -nn]
            [-o out_file | -oo out_file | -on] [-e err_file | -eo err_file | -en]
            [-i in_file | -in] [-W [hour:]minute | -Wn] [-M mem_limit | -Mn]
            [-c [hour:]minute | -cn] [-F file_limit | -Fn] [-D data_limit | -Dn]
            [-S stack_limit | -Sn] [-C core_limit | -Cn] [-v swap_limit | -vn]
            [-p process_limit | -pn] [-R res_req | -Rn] [-m \"host_name ...\" | -mn]
            [-w depend_cond | -wn] [-b [[[YY:]MM:]DD:]hh:mm | -bn]
            [-t [[[YY:]MM:]DD:]hh:mm | -tn] [-E pre_exec_command | -En]
            [-Ep post_exec_command | -Epn] [-L login_shell | -Ln] [-u mail_user | -un]
            [-P project_name | -Pn] [-G user_group | -Gn] [-cwd dir | -cwdn]
            [-app profile | -appn] [-Q requeue_exit_values | -Qn]
            [-Z \"new_command\"] job_ID | \"job_ID[index]\"
";

/// `-Xn` and the option it resets (the name mbatchd knows).
const RESETS: &[(&str, &str)] = &[
    ("Jn", "J"),
    ("qn", "q"),
    ("mn", "m"),
    ("Rn", "R"),
    ("wn", "w"),
    ("in", "i"),
    ("on", "o"),
    ("en", "e"),
    ("En", "E"),
    ("Epn", "Ep"),
    ("un", "u"),
    ("Pn", "P"),
    ("Ln", "L"),
    ("Gn", "G"),
    ("nn", "n"),
    ("bn", "b"),
    ("tn", "t"),
    ("xn", "x"),
    ("rn", "r"),
    ("Nn", "N"),
    ("Bn", "B"),
    ("Qn", "Q"),
    ("appn", "app"),
    ("cwdn", "cwd"),
    ("cn", "c"),
    ("Wn", "W"),
    ("Mn", "M"),
    ("vn", "v"),
    ("Fn", "F"),
    ("Dn", "D"),
    ("Sn", "S"),
    ("Cn", "C"),
    ("pn", "p"),
];

/// Resets of options bsub accepts and ignores: accepted and ignored.
const IGNORED_RESETS: &[&str] = &[
    "spn",
    "Tn",
    "Wen",
    "Jdn",
    "gn",
    "Lpn",
    "slan",
    "Un",
    "gpun",
    "extschedn",
    "extn",
];

/// bmod's own options Basalt does not carry out: refused.
const NOT_SUPPORTED: &[&str] = &[
    "Zs", "Zsn", "a", "f", "fn", "k", "kn", "s", "sn", "is", "isn",
];

/// bmod's options.
pub const SPEC: Spec = Spec {
    flags: &[
        "h",
        "V",
        "x",
        "r",
        "N",
        "B",
        "Jn",
        "qn",
        "mn",
        "Rn",
        "wn",
        "in",
        "on",
        "en",
        "En",
        "Epn",
        "un",
        "Pn",
        "Ln",
        "Gn",
        "nn",
        "bn",
        "tn",
        "xn",
        "rn",
        "Nn",
        "Bn",
        "Qn",
        "appn",
        "cwdn",
        "cn",
        "Wn",
        "Mn",
        "vn",
        "Fn",
        "Dn",
        "Sn",
        "Cn",
        "pn",
        "spn",
        "Tn",
        "Wen",
        "Jdn",
        "gn",
        "Lpn",
        "slan",
        "Un",
        "gpun",
        "extschedn",
        "extn",
        "Zsn",
        "fn",
        "kn",
        "sn",
        "isn",
    ],
    valued: &[
        "J", "q", "m", "R", "w", "i", "o", "oo", "e", "eo", "E", "Ep", "u", "P", "L", "G", "n",
        "b", "t", "Q", "app", "cwd", "c", "W", "M", "v", "F", "D", "S", "C", "p", "sp", "T", "We",
        "Jd", "g", "Lp", "sla", "U", "gpu", "ext", "extsched", "Z", "Zs", "a", "f", "k", "s", "is",
    ],
};

/// A bmod command line.
#[derive(Debug, Default)]
pub struct BmodArgs {
    /// The new values (bsub's options).
    pub opts: BsubOpts,
    /// Options given a new value, as mbatchd names them.
    pub set: Vec<String>,
    /// Options reset (`-Xn`), as mbatchd names them.
    pub reset: Vec<String>,
    /// The job as given (`103`, `103[4]`).
    pub job: String,
    /// `-Z`: the new command line.
    pub command: Option<String>,
}

/// Read a parsed command line. Errors are printed after `bmod: ` with the usage when
/// they start with "illegal option", else as a refusal.
pub fn parse(items: Vec<Item>, cx: &ValueCtx) -> Result<BmodArgs, String> {
    let mut a = BmodArgs::default();
    let mut jobs = Vec::new();
    for it in items {
        let (name, value) = match it {
            Item::Arg(j) => {
                jobs.push(j);
                continue;
            }
            Item::Opt(n, v) => (n, v),
        };
        if NOT_SUPPORTED.contains(&name.as_str()) {
            return Err(format!(
                "-{name}: this LSF option is not supported by Basalt yet"
            ));
        }
        if IGNORED_RESETS.contains(&name.as_str()) {
            continue;
        }
        if let Some((_, base)) = RESETS.iter().find(|(n, _)| *n == name) {
            push_once(&mut a.reset, base);
            continue;
        }
        if name == "Z" {
            match value.filter(|v| !v.trim().is_empty()) {
                Some(v) => a.command = Some(v),
                None => return Err("Bad argument for option -Z".into()),
            }
            push_once(&mut a.set, "Z");
            continue;
        }
        let before = a.opts.ignored.len();
        bsub::apply(&mut a.opts, &name, value.as_deref(), cx)?;
        if a.opts.ignored.len() == before {
            push_once(&mut a.set, &name);
        }
    }
    if let Some(both) = a.set.iter().find(|s| {
        let base = match s.as_str() {
            "oo" => "o",
            "eo" => "e",
            other => other,
        };
        a.reset.iter().any(|r| r == base)
    }) {
        return Err(format!("-{both} and -{both}n cannot be used together"));
    }
    match jobs.as_slice() {
        [job] => a.job = job.clone(),
        [] => return Err("illegal option -- job ID missing".into()),
        _ => return Err("illegal option -- only one job ID may be given".into()),
    }
    if a.set.is_empty() && a.reset.is_empty() {
        return Err("illegal option -- no option given".into());
    }
    Ok(a)
}

fn push_once(v: &mut Vec<String>, name: &str) {
    // `-o` after `-oo` (or the reverse): the last one given.
    let same = |n: &String| {
        n == name
            || matches!(
                (n.as_str(), name),
                ("o", "oo") | ("oo", "o") | ("e", "eo") | ("eo", "e")
            )
    };
    v.retain(|n| !same(n));
    v.push(name.to_owned());
}

/// The request for a command line.
pub fn request(a: &BmodArgs, who: &Submitter) -> Result<ModifyRequest, String> {
    let mut refs = super::parse_job_id(&a.job)
        .filter(|r| r.len() == 1)
        .ok_or_else(|| format!("{}: Illegal job ID", a.job))?;
    let cmd = JobCommand {
        text: a.command.clone().unwrap_or_default(),
        is_script: false,
        script_name: None,
    };
    let values = bsub::build(&a.opts, &cmd, who);
    Ok(ModifyRequest {
        job: refs.pop(),
        values: Some(values),
        set: a.set.clone(),
        reset: a.reset.clone(),
    })
}

/// The success line.
pub fn changed_line(job: &str) -> String {
    format!("Parameters of job <{job}> are being changed")
}

/// The refusal line.
pub fn refused_line(reason: &str) -> String {
    let r = reason.trim().trim_end_matches('.');
    format!("{r}. Job not modified.")
}

/// `bmod`.
pub fn main(args: Vec<String>) -> ExitCode {
    let items = match opts::parse(&args, &SPEC, false) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("bmod: {e}");
            eprint!("{USAGE}");
            return crate::fail();
        }
    };
    if let Some(code) = super::help_or_version(&items, USAGE) {
        return code;
    }
    let config = match super::load_config("bmod") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let unit = bsub::limits_unit(&config);
    let cx = ValueCtx {
        unit: &unit,
        resolve_time: bsub::resolve_local_time,
        max_user_priority: bsub::max_user_priority(&config),
    };
    let items: Vec<Item> = items
        .into_iter()
        .filter(|i| !matches!(i, Item::Opt(n, _) if n == "h" || n == "V"))
        .collect();
    let a = match parse(items, &cx) {
        Ok(a) => a,
        Err(e) if e.starts_with("illegal option") => {
            eprintln!("bmod: {e}");
            eprint!("{USAGE}");
            return crate::fail();
        }
        Err(e) => {
            eprintln!("{}", refused_line(&e));
            return crate::fail();
        }
    };
    let who = Submitter {
        cwd: String::new(),
        home: String::new(),
        umask: 0o022,
        from_host: String::new(),
        vars: Vec::new(),
    };
    let req = match request(&a, &who) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return crate::fail();
        }
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        match client.modify(req).await {
            Ok(r) => match r.into_inner().results.first() {
                Some(res) if res.ok => {
                    println!("{}", changed_line(&a.job));
                    ExitCode::SUCCESS
                }
                Some(res) => {
                    eprintln!("{}", refused_line(&res.message));
                    crate::fail()
                }
                None => {
                    eprintln!("{}", refused_line("No answer from mbatchd"));
                    crate::fail()
                }
            },
            Err(s) => {
                eprintln!("{}", refused_line(&super::status_text(&s)));
                crate::fail()
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx() -> ValueCtx<'static> {
        ValueCtx {
            unit: "KB",
            resolve_time: |_| Some(1_900_000_000),
            max_user_priority: basalt_core::bounds::DEFAULT_MAX_USER_PRIORITY,
        }
    }

    fn args(line: &[&str]) -> Result<BmodArgs, String> {
        let v: Vec<String> = line.iter().map(|s| s.to_string()).collect();
        let items = opts::parse(&v, &SPEC, false).map_err(|e| e.to_string())?;
        parse(items, &cx())
    }

    fn who() -> Submitter {
        Submitter::default()
    }

    #[test]
    fn options_are_set_or_reset_by_name() {
        let a = args(&[
            "-q",
            "short",
            "-Jn",
            "-W",
            "10",
            "-R",
            "rusage[mem=5]",
            "-xn",
            "103",
        ])
        .expect("parse");
        assert_eq!(a.set, vec!["q", "W", "R"]);
        assert_eq!(a.reset, vec!["J", "x"]);
        assert_eq!(a.job, "103");
        let r = request(&a, &who()).expect("request");
        let v = r.values.expect("values");
        assert_eq!(v.queue, "short");
        assert_eq!(v.rlimits[basalt_core::rlimit::RUN], 600);
        assert_eq!(v.res_req, "rusage[mem=5]");
        let j = r.job.expect("job");
        assert_eq!((j.job_id, j.has_idx), (103, false));
    }

    #[test]
    fn an_array_element_is_named_with_its_index() {
        let a = args(&["-u", "bob", "7[3]"]).expect("parse");
        let j = request(&a, &who()).expect("request").job.expect("job");
        assert_eq!((j.job_id, j.idx, j.has_idx), (7, 3, true));
        assert_eq!(
            changed_line("7[3]"),
            "Parameters of job <7[3]> are being changed"
        );
        let a = args(&["-u", "bob", "7[1-3]"]).expect("parse");
        assert_eq!(
            request(&a, &who()).map(|_| ()),
            Err("7[1-3]: Illegal job ID".into())
        );
    }

    #[test]
    fn values_are_checked_as_bsub_checks_them() {
        assert_eq!(
            args(&["-W", "abc", "1"]).map(|_| ()),
            Err("abc: Bad argument for option -W".into())
        );
        assert_eq!(
            args(&["-Zs", "new command", "1"]).map(|_| ()),
            Err("-Zs: this LSF option is not supported by Basalt yet".into())
        );
        // -Z: the new command line goes as the request's command.
        let a = args(&["-Z", "sleep 5; echo 'a b'", "1"]).expect("parse");
        let req = request(&a, &who()).expect("request");
        assert_eq!(req.set, vec!["Z".to_owned()]);
        assert_eq!(
            req.values.map(|v| v.command).as_deref(),
            Some("sleep 5; echo 'a b'")
        );
        assert!(args(&["-Z", " ", "1"]).is_err());
        assert_eq!(
            args(&["-J", "a", "-Jn", "1"]).map(|_| ()),
            Err("-J and -Jn cannot be used together".into())
        );
        assert!(args(&["1"]).is_err_and(|e| e.starts_with("illegal option")));
        assert!(args(&["-Jn"]).is_err_and(|e| e.starts_with("illegal option")));
        assert!(args(&["-Jn", "1", "2"]).is_err_and(|e| e.starts_with("illegal option")));
        // Ignored as bsub ignores them; nothing else given.
        assert!(args(&["-sp", "5", "1"]).is_err_and(|e| e.starts_with("illegal option")));
        assert_eq!(
            refused_line("Job has already finished"),
            "Job has already finished. Job not modified."
        );
    }

    /// The option table knows every reset, ignored and refused name (they are listed
    /// twice: SPEC must be a constant).
    #[test]
    fn spec_lists_every_reset_ignored_and_refused_name() {
        for n in RESETS
            .iter()
            .map(|(n, _)| *n)
            .chain(IGNORED_RESETS.iter().copied())
        {
            assert!(SPEC.flags.contains(&n), "{n}");
        }
        for n in NOT_SUPPORTED {
            assert!(SPEC.flags.contains(n) || SPEC.valued.contains(n), "{n}");
        }
    }

    #[test]
    fn the_last_of_o_and_oo_wins() {
        let a = args(&["-o", "a", "-oo", "b", "1"]).expect("parse");
        assert_eq!(a.set, vec!["oo"]);
        assert_eq!(a.opts.out, Some(("b".into(), true)));
    }
}
