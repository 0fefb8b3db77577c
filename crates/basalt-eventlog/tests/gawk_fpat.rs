//! A Basalt `JOB_NEW` with no asked hosts keeps the gawk positions clients read
//! (event-log.md §3.1): `$4` jobId, `$5` userId, `$42` jobName, `$43` command, when split
//! the way snakemake-lsf does, with `FPAT = "([^ ]+)|(\"[^\"]+\")"`.
//!
//! gawk matches FPAT leftmost-longest (POSIX): at each field start the longer of "a run of
//! non-spaces" and "a quote, one or more non-quotes, a quote" wins. `fpat_split` below is
//! that rule. What it yields for the quoting cases (pinned by the tests):
//!
//! * `""` (empty string): one field `""` (the quoted alternative needs one character).
//! * `"a b"` (spaces, no embedded quote): one field.
//! * `"done(""x"")"` (embedded doubled quotes, no space): one field, quotes and all.
//! * `"env | grep -E ""^LSB_"" | sort"` (doubled quotes and spaces): several fields,
//!   `"env | grep -E "`, `"^LSB_""`, `|`, `sort"`; every later position shifts.
//!
//! So a quoted command still starts at `$43`, and `$42`/`$43` move only when a field
//! before them holds both a quote and a space.

use basalt_eventlog::{Header, JobNew, Record, split_fields};

/// gawk's field splitting with `FPAT = "([^ ]+)|(\"[^\"]+\")"`.
fn fpat_split(line: &str) -> Vec<&str> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        // Both alternatives can only start at a non-space, so the leftmost match starts
        // at the first non-space.
        while i < b.len() && b[i] == b' ' {
            i += 1;
        }
        if i >= b.len() {
            return out;
        }
        let run = b[i..].iter().take_while(|&&c| c != b' ').count();
        let quoted = if b[i] == b'"' {
            match b[i + 1..].iter().position(|&c| c == b'"') {
                Some(k) if k > 0 => k + 2,
                _ => 0,
            }
        } else {
            0
        };
        let len = run.max(quoted);
        out.push(&line[i..i + len]);
        i += len;
    }
}

/// `$n` in awk terms.
fn dollar<'a>(f: &[&'a str], n: usize) -> &'a str {
    f[n - 1]
}

fn job(name: &str, command: &str) -> JobNew {
    JobNew {
        header: Header::new(1_795_339_535),
        job_id: 102,
        user_id: 1234,
        options: 0x0200_0013,
        user_name: "alice".into(),
        host_spec: String::new(),
        host_factor: 1.0, // written "  1.00": padding must not move anything
        queue: "normal".into(),
        from_host: "vm".into(),
        cwd: "/home/alice/run dir".into(),
        out_file: "/home/alice/run dir/out.%J".into(),
        sub_home_dir: "/home/alice".into(),
        job_file: "1795339535.102".into(),
        job_name: name.into(),
        command: command.into(),
        project_name: "default".into(),
        specified_cwd: "/scratch/%J".into(),
        ..JobNew::default()
    }
}

fn line_of(j: JobNew) -> String {
    Record::JobNew(Box::new(j)).to_line()
}

#[test]
fn fpat_quoting_rules() {
    assert_eq!(fpat_split(r#""" "a b" x"#), [r#""""#, r#""a b""#, "x"]);
    assert_eq!(fpat_split(r#""done(""x"")" 1"#), [r#""done(""x"")""#, "1"]);
    assert_eq!(
        fpat_split(r#""env | grep -E ""^LSB_"" | sort" 0"#),
        [r#""env | grep -E ""#, r#""^LSB_"""#, "|", r#"sort""#, "0"]
    );
}

#[test]
fn positions_kept_with_no_asked_hosts() {
    let line = line_of(job("myjob", "sleep 30"));
    let f = fpat_split(&line);
    assert_eq!(dollar(&f, 1), r#""JOB_NEW""#);
    assert_eq!(dollar(&f, 4), "102");
    assert_eq!(dollar(&f, 5), "1234");
    assert_eq!(dollar(&f, 39), "0", "numAskedHosts");
    assert_eq!(dollar(&f, 42), r#""myjob""#);
    assert_eq!(dollar(&f, 43), r#""sleep 30""#);
    // FPAT and the real tokenizer agree on this line.
    assert_eq!(f.len(), split_fields(&line).unwrap().len());

    // A name with spaces is one FPAT field too.
    let line = line_of(job("my job", "sleep 30"));
    let f = fpat_split(&line);
    assert_eq!(dollar(&f, 42), r#""my job""#);
    assert_eq!(dollar(&f, 43), r#""sleep 30""#);
}

#[test]
fn doubled_quotes_in_the_command_split_it_but_keep_its_start() {
    let command = r#"env | grep -E "^LSB_|^LSF_|^LS_" | sort"#;
    let line = line_of(job("myjob", command));
    assert!(line.contains(r#""env | grep -E ""^LSB_|^LSF_|^LS_"" | sort""#));
    let f = fpat_split(&line);
    assert_eq!(dollar(&f, 4), "102");
    assert_eq!(dollar(&f, 5), "1234");
    assert_eq!(dollar(&f, 42), r#""myjob""#);
    assert_eq!(dollar(&f, 43), r#""env | grep -E ""#, "first fragment only");
    assert_eq!(dollar(&f, 44), r#""^LSB_|^LSF_|^LS_"""#);
    assert_eq!(
        f.len(),
        split_fields(&line).unwrap().len() + 3,
        "later fields shift by 3"
    );

    // Quotes without spaces stay one field.
    let line = line_of(job("myjob", r#"echo "hi""#));
    let f = fpat_split(&line);
    assert_eq!(dollar(&f, 43), r#""echo ""#, "the space splits it");
    assert_eq!(dollar(&f, 44), r#""hi""""#);
    let line = line_of(job("myjob", r#"echo"hi""#));
    let f = fpat_split(&line);
    assert_eq!(dollar(&f, 43), r#""echo""hi""""#);
}

#[test]
fn only_quotes_with_spaces_before_jobname_move_it() {
    let mut j = job("myjob", "sleep 30");
    j.depend_cond = r#"done("first")"#.into();
    let f_line = line_of(j.clone());
    let f = fpat_split(&f_line);
    assert_eq!(
        dollar(&f, 42),
        r#""myjob""#,
        "quotes without a space: no shift"
    );

    j.depend_cond = r#"done("a b")"#.into();
    let f_line = line_of(j);
    let f = fpat_split(&f_line);
    assert_eq!(
        dollar(&f, 43),
        r#""myjob""#,
        "quote and space in dependCond: shifted by one"
    );
}
