//! `bhist` and `bacct` run as processes on a small log directory written here:
//! `LSB_SHAREDIR/basalt/logdir/` with an old `lsb.events.1`, a current `lsb.events`
//! whose head was carried over by a log switch, and `lsb.acct`.

use basalt_config::embedded::{DefaultCluster, DefaultHost};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BHIST: &str = env!("CARGO_BIN_EXE_bhist");
const BACCT: &str = env!("CARGO_BIN_EXE_bacct");

/// Submission, start, and so on of the test jobs (seconds since the epoch).
const T0: i64 = 1_795_339_535;

fn job_new(id: u64, t: i64, user: &str, name: &str) -> String {
    // SUB_PROJECT_NAME | SUB_QUEUE, and SUB_JOB_NAME for a named job.
    let options = 33554434 | u32::from(!name.is_empty());
    format!(
        "\"JOB_NEW\" \"40\" {t} {id} 1000 {options} 1 {t} 0 0 -65535 0 0 \"{user}\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"hostA\" \"/home/{user}/run\" \"\" \"\" \"\" \"\" \"/home/{user}\" \"{t}.{id}\" 0 \"\" \"\" \"{name}\" \"sleep 30\" 0 \"\" \"default\" 1 \"linux\" \"\" 1040 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1\n"
    )
}

fn start(id: u64, t: i64) -> String {
    format!(
        "\"JOB_START\" \"40\" {t} {id} 4 0 0 100.0 1 \"hostA\" \"\" \"\" 2097160 0 \"\"\n\
         \"JOB_START_ACCEPT\" \"40\" {t} {id} 4242 4242 0 2097152\n"
    )
}

fn done(id: u64, t: i64) -> String {
    format!("\"JOB_STATUS\" \"40\" {t} {id} 64 0 0 0.0236 {t} 0 0 0\n")
}

fn finish(id: u64, submit: i64, start: i64, end: i64, user: &str) -> String {
    format!(
        "\"JOB_FINISH\" \"40\" {end} {id} 1000 33554434 1 {submit} 0 0 {start} \"{user}\" \"normal\" \"\" \"\" \"\" \"hostA\" \"/home/{user}/run\" \"\" \"\" \"\" \"{submit}.{id}\" 0 1 \"hostA\" 64 100.0 \"\" \"sleep 30\" 0.008610 0.015018 3976 0 -1 0 0 1053 3 0 912 32 -1 0 0 0 24 6 -1 \"\" \"default\" 0 1 \"\" 0 3976 11224 \"\" \"\"\n"
    )
}

struct Env {
    _dir: tempfile::TempDir,
    envdir: PathBuf,
}

impl Env {
    /// The configuration and the log files; every job belongs to the user running the
    /// test (so that the commands' defaults select them).
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let host = DefaultHost {
            name: "hostA".into(),
            // Nothing listens here, and the commands never connect anywhere.
            address: Some(IpAddr::V4(Ipv4Addr::new(127, 78, 6, 1))),
            server: true,
        };
        let mut spec = DefaultCluster::new("basalt", "nobody", vec![host]);
        spec.lim_port = 17872;
        let envdir = spec
            .write(dir.path())
            .unwrap_or_else(|e| panic!("write configuration: {e}"));
        let logdir = dir.path().join("work/basalt/logdir");
        std::fs::create_dir_all(&logdir).unwrap_or_else(|e| panic!("mkdir: {e}"));
        let user = basalt_hist::caller_name();
        write_logs(&logdir, &user);
        Env { _dir: dir, envdir }
    }

    fn run(&self, exe: &str, args: &[&str]) -> Output {
        Command::new(exe)
            .args(args)
            .env("LSF_ENVDIR", &self.envdir)
            .env_remove("LSF_SERVER_HOSTS")
            .env("TZ", "UTC")
            .output()
            .unwrap_or_else(|e| panic!("run {exe}: {e}"))
    }
}

/// Job 50 lives only in `lsb.events.1` (finished before the switch). Job 101 was
/// submitted before the switch (its `JOB_NEW` is in `lsb.events.1` and was carried into
/// `lsb.events`) and ran after it. Job 102 is still pending.
fn write_logs(logdir: &Path, user: &str) {
    let old = format!(
        "#{}\n{}{}{}{}",
        T0 - 100,
        job_new(50, T0 - 2000, user, "old"),
        start(50, T0 - 1990),
        done(50, T0 - 1900),
        job_new(101, T0, user, ""),
    );
    std::fs::write(logdir.join("lsb.events.1"), old).unwrap_or_else(|e| panic!("write: {e}"));

    let carried = job_new(101, T0, user, "");
    let fresh = format!(
        "{}\"JOB_EXECUTE\" \"40\" {} 101 1000 4242 \"/home/{user}/run\" \"/home/{user}\" \"{user}\" 4242 0\n{}{}this line is damaged\n",
        start(101, T0 + 5),
        T0 + 5,
        done(101, T0 + 35),
        job_new(102, T0 + 40, user, "waiting"),
    );
    // A switched file's header is `#<offset>` padded to 38 characters.
    let header_len = 39;
    let offset = header_len + carried.len();
    let header = format!("#{offset:<37}\n");
    assert_eq!(header.len(), header_len);
    std::fs::write(
        logdir.join("lsb.events"),
        format!("{header}{carried}{fresh}"),
    )
    .unwrap_or_else(|e| panic!("write: {e}"));

    let acct = format!(
        "{}{}",
        finish(50, T0 - 2000, T0 - 1990, T0 - 1900, user),
        finish(101, T0, T0 + 5, T0 + 35, user)
    );
    std::fs::write(logdir.join("lsb.acct"), acct).unwrap_or_else(|e| panic!("write: {e}"));
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn bhist_long_all_names_the_project_of_every_job() {
    let env = Env::new();
    let out = env.run(BHIST, &["-l", "-a"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    // snakemake: `bhist -l -a | grep Project` must find `Project <name>`.
    assert_eq!(stdout.matches("Project <default>").count(), 2, "{stdout}");
    assert!(stdout.contains("Job <101>, User <"), "{stdout}");
    assert!(stdout.contains("Job <102>, Job Name <waiting>"), "{stdout}");
    assert!(
        stdout.contains("Done successfully. The CPU time used is 0.0 seconds;"),
        "{stdout}"
    );
    assert!(stdout.contains("Starting (Pid 4242);"), "{stdout}");
    assert!(
        stdout.contains(
            "Summary of time in seconds spent in various states by  Sun Nov 22 09:26:10\n  PEND     PSUSP    RUN      USUSP    SSUSP    UNKWN    TOTAL\n  5        0        30       0        0        0        35"
        ),
        "{stdout}"
    );
    // Only the current file is read by default: job 50 is in lsb.events.1.
    assert!(!stdout.contains("Job <50>"), "{stdout}");
    // The damaged line is reported, the rest is still shown.
    let stderr = text(&out.stderr);
    assert!(stderr.contains("at line"), "{stderr}");
}

#[test]
fn bhist_by_id_reads_the_older_files_once() {
    let env = Env::new();
    let out = env.run(BHIST, &["-l", "101"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    // The JOB_NEW is in lsb.events.1 and in the carried part of lsb.events: shown once.
    assert_eq!(
        stdout.matches("Submitted from host <hostA>").count(),
        1,
        "{stdout}"
    );
    assert!(!stdout.contains("Job <102>"), "{stdout}");

    let out = env.run(BHIST, &["50"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.starts_with("Summary of time in seconds spent in various states:\nJOBID   USER    JOB_NAME  PEND    PSUSP   RUN     USUSP   SSUSP   UNKWN   TOTAL\n50      "),
        "{stdout}"
    );
    assert!(
        stdout.contains(" old       10      0       90      0       0       0       100"),
        "{stdout}"
    );
}

#[test]
fn bhist_default_shows_unfinished_jobs_and_complains_when_none_match() {
    let env = Env::new();
    let out = env.run(BHIST, &[]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("\n102     "), "{stdout}");
    assert!(!stdout.contains("\n101     "), "{stdout}");

    let out = env.run(BHIST, &["999"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr).lines().last(),
        Some("No matching job found")
    );

    let out = env.run(BHIST, &["-u", "someone_else"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(text(&out.stderr).contains("No matching job found"));
}

#[test]
fn bacct_long_reports_completion_and_accounting() {
    let env = Env::new();
    let out = env.run(BACCT, &["-l", "101"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    // toil matches `Completed <done>` / `Completed <exit>`.
    assert!(
        stdout.contains("Sun Nov 22 09:26:10: Completed <done>.\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Accounting information about this job:\n     CPU_T     WAIT     TURNAROUND   STATUS     HOG_FACTOR    MEM    SWAP\n      0.02        5             35     done         0.0007     3M     10M\n"),
        "{stdout}"
    );
    assert!(stdout.contains("  - submitted by all users.\n"), "{stdout}");
    assert!(!stdout.contains("Job <50>"), "{stdout}");

    let out = env.run(BACCT, &[]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(
            " Total number of done jobs:       2      Total number of exited jobs:     0\n"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("Job <"), "{stdout}");

    let out = env.run(BACCT, &["-l", "7"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(text(&out.stderr).contains("No matching job found"));
}

#[test]
fn version_usage_and_bad_options() {
    let env = Env::new();
    for exe in [BHIST, BACCT] {
        let out = env.run(exe, &["-V"]);
        assert_eq!(out.status.code(), Some(0), "{exe} -V");
        assert!(
            text(&out.stderr).contains(&basalt_core::version::product_line()),
            "{exe}: {}",
            text(&out.stderr)
        );
        let out = env.run(exe, &["-h"]);
        assert_eq!(out.status.code(), Some(0), "{exe} -h");
        assert!(text(&out.stderr).starts_with("Usage: "), "{exe}");
        let out = env.run(exe, &["-Z"]);
        assert_eq!(out.status.code(), Some(255), "{exe} -Z");
        assert!(text(&out.stderr).contains("illegal option -- Z"), "{exe}");
        let out = env.run(exe, &["12x"]);
        assert_eq!(out.status.code(), Some(255), "{exe} 12x");
        assert!(text(&out.stderr).contains("12x: Illegal job ID."), "{exe}");
    }
}
