//! The `#BSUB` script checks of the fuzz target `bsub_script`, also run on stable by
//! `crates/basalt-cli/tests/bsub_fuzz.rs` (which includes this file with `#[path]`).
//!
//! **Input**: a job script (bytes, read as lossy UTF-8 like `bsub` reads a script).
//!
//! **Checks** ([`check_script`]), besides "never panics":
//! * `directives`: line numbers rise and name lines of the script; the words of a
//!   directive, each quoted in `'…'`, split back into the same words (`shell_words`);
//! * the script with CRLF line ends gives the same options and warnings;
//! * the directives are the command line: every directive's words on one command line
//!   (parsed with bsub's option table and `apply_items`) give the same options, and as
//!   many positional words as the script gave warnings (unless a directive holds `--`,
//!   which ends options on a command line);
//! * `over` with empty options on either side changes nothing;
//! * `build` makes a submission with `1 <= num_processors <= max_processors`, the
//!   `RES_REQ` bit set exactly when it has a resource requirement, and (without
//!   `-nnodes`) the requirement `resreq::merge` makes of the `-R` values; `resolve_env`
//!   gives `NAME=value` strings;
//! * the value parsers on every directive word: `parse_size` gives a positive size (or 0
//!   where allowed), `parse_minutes` whole minutes above 0, `parse_procs` `1 <= min <=
//!   max`, `parse_time_fields` 2 to 5 fields; `-b`/`-t` are also resolved in local time.

use basalt_cli::batch::bsub::{
    BsubOpts, JobCommand, SPEC, Submitter, ValueCtx, apply_items, build, directives, parse_minutes,
    parse_procs, parse_size, parse_time_fields, resolve_env, resolve_local_time, script_opts,
    shell_words,
};
use basalt_cli::batch::opts;
use basalt_cli::batch::resreq;
use basalt_core::job::sub;

/// `-b`/`-t` resolved without a clock: the fields as one number.
fn fixed_time(fields: &[u32]) -> Option<i64> {
    Some(
        fields
            .iter()
            .fold(0i64, |a, &f| a.wrapping_mul(100).wrapping_add(i64::from(f))),
    )
}

fn cx(unit: &str) -> ValueCtx<'_> {
    ValueCtx {
        unit,
        resolve_time: fixed_time,
        max_user_priority: basalt_core::bounds::DEFAULT_MAX_USER_PRIORITY,
    }
}

/// `w` quoted for a shell: `'…'`, with `'` written `'\''`.
fn quote(w: &str) -> String {
    format!("'{}'", w.replace('\'', "'\\''"))
}

/// The checks listed in the module documentation on one script.
pub fn check_script(data: &[u8]) {
    let script = String::from_utf8_lossy(data).into_owned();
    let nlines = script.lines().count();

    let dirs = directives(&script);
    let mut last = 0;
    let mut all_words: Vec<String> = Vec::new();
    let mut has_dashdash = false;
    for (line, words) in &dirs {
        assert!(
            *line > last && *line <= nlines,
            "directive line {line} (previous {last}, {nlines} lines)"
        );
        last = *line;
        let Ok(words) = words else { continue };
        let quoted: Vec<String> = words.iter().map(|w| quote(w)).collect();
        let joined = quoted.join(" ");
        assert_eq!(
            shell_words(&joined).as_ref(),
            Ok(words),
            "quoted words do not split back: {joined:?}"
        );
        has_dashdash |= words.iter().any(|w| w == "--");
        for w in words {
            check_value(w);
        }
        all_words.extend(words.iter().cloned());
    }

    for unit in ["KB", "MB", "GB"] {
        let res = script_opts(&script, &cx(unit));
        if !script.contains('\r') {
            let crlf = script.replace('\n', "\r\n");
            assert_eq!(
                script_opts(&crlf, &cx(unit)),
                res,
                "CRLF line ends change the options"
            );
        }
        let Ok((o, warnings)) = res else { continue };
        if !has_dashdash {
            let items = match opts::parse(&all_words, &SPEC, false) {
                Ok(i) => i,
                Err(e) => panic!("the directives parse one by one but not together: {e}"),
            };
            let mut cmdline = BsubOpts::default();
            let words = match apply_items(items, &mut cmdline, &cx(unit)) {
                Ok(w) => w,
                Err(e) => panic!("the directives apply one by one but not together: {e}"),
            };
            assert_eq!(cmdline, o, "the directives on one command line differ");
            assert_eq!(words.len(), warnings.len(), "positional words and warnings");
        }
        check_opts(&o);
    }

    // The real clock, as bsub resolves -b and -t (only "never panics": the result
    // depends on the time of day).
    let local = ValueCtx {
        unit: "MB",
        resolve_time: resolve_local_time,
        max_user_priority: basalt_core::bounds::DEFAULT_MAX_USER_PRIORITY,
    };
    let _ = script_opts(&script, &local);
}

/// `over`, `build` and `resolve_env` on parsed options.
pub fn check_opts(o: &BsubOpts) {
    assert_eq!(
        &o.clone().over(BsubOpts::default()),
        o,
        "over(empty) changes options"
    );
    assert_eq!(
        &BsubOpts::default().over(o.clone()),
        o,
        "empty.over changes options"
    );

    let cmd = JobCommand {
        text: "#!/bin/sh\ntrue\n".to_owned(),
        is_script: true,
        script_name: Some("job.sh".to_owned()),
    };
    let who = Submitter {
        cwd: "/home/u".to_owned(),
        home: "/home/u".to_owned(),
        umask: 0o22,
        from_host: "hostA".to_owned(),
        vars: vec![
            ("PATH".to_owned(), "/bin".to_owned()),
            ("HOME".to_owned(), "/home/u".to_owned()),
            ("A_1".to_owned(), "x=y,z".to_owned()),
        ],
    };
    let job = build(o, &cmd, &who);
    assert!(
        1 <= job.num_processors && job.num_processors <= job.max_processors,
        "processors {}..{}",
        job.num_processors,
        job.max_processors
    );
    assert_eq!(
        job.options & sub::RES_REQ != 0,
        !job.res_req.is_empty(),
        "RES_REQ bit and res_req {:?}",
        job.res_req
    );
    if o.nnodes.is_none() {
        assert_eq!(job.res_req, resreq::merge(&o.res_req));
    }
    for e in resolve_env(&o.env, &who.vars) {
        assert!(e.contains('='), "resolve_env gave {e:?}");
    }
}

/// The value parsers on one word.
pub fn check_value(w: &str) {
    for unit in ["", "KB", "MB", "GB", "TB", "EB", "x"] {
        if let Some(kb) = parse_size(w, unit, false) {
            assert!(kb > 0, "parse_size({w:?}, {unit:?}) = {kb}");
        }
        if let Some(kb) = parse_size(w, unit, true) {
            assert!(kb >= 0, "parse_size({w:?}, {unit:?}, zero) = {kb}");
        }
    }
    if let Some(s) = parse_minutes(w) {
        assert!(s > 0 && s % 60 == 0, "parse_minutes({w:?}) = {s}");
    }
    if let Some((a, b)) = parse_procs(w) {
        assert!(1 <= a && a <= b, "parse_procs({w:?}) = ({a}, {b})");
    }
    if let Some(f) = parse_time_fields(w) {
        assert!(
            (2..=5).contains(&f.len()),
            "parse_time_fields({w:?}) = {f:?}"
        );
        let _ = resolve_local_time(&f);
    }
}
