//! `bhist` and `bacct` through the history index (SQLite) and `lsb.events.index` print
//! exactly what a full read of the files prints, on a generated log directory with
//! switched files, a carried-over head, array jobs, damaged lines and torn tails; and they
//! keep working when the index cannot be written, is damaged, or is stale.
//!
//! The large measurement (1,000,000 jobs) is `#[ignore]`d: run it with
//! `cargo test --release -p basalt-cli --test hist_index -- --ignored --nocapture`
//! (`BASALT_HIST_BENCH_DIR=<dir>` keeps the generated files for later runs).

mod common;

use common::{Env, Generated, Spec, damage_line, generate, tear, text};
use std::path::Path;
use std::process::Output;
use std::time::Instant;

const BHIST: &str = env!("CARGO_BIN_EXE_bhist");
const BACCT: &str = env!("CARGO_BIN_EXE_bacct");
const OFF: [(&str, &str); 1] = [("BASALT_HIST_INDEX", "off")];

fn db(env: &Env) -> std::path::PathBuf {
    env.logdir.join("basalt-hist.sqlite")
}

fn remove_db(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(std::path::PathBuf::from(p));
    }
}

/// The id of the first job whose JOB_NEW a switch carried into `lsb.events` (5990 when
/// nothing was carried).
fn carried_job(logdir: &Path) -> u64 {
    let data = std::fs::read_to_string(logdir.join("lsb.events")).unwrap_or_default();
    let first = data.lines().next().unwrap_or_default();
    let offset: usize = first
        .trim_start_matches('#')
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("header {first:?}: {e}"));
    let carried = &data[first.len() + 1..offset];
    let Some(line) = carried.lines().find(|l| l.starts_with("\"JOB_NEW\"")) else {
        return 5990;
    };
    line.split(' ')
        .nth(3)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{line}"))
}

/// A generated log directory: 6,000 jobs, a switch every 600 JOB_CLEANs, four users
/// (the caller first), arrays, a damaged line in the oldest event file and in lsb.acct, torn
/// tails at the end of lsb.events and lsb.acct, and lsb.events.index.
fn fixture() -> (Env, Generated) {
    let env = Env::new();
    let spec = Spec {
        jobs: 6_000,
        per_file: 600,
        users: vec![
            basalt_hist::caller_name(),
            "alice".into(),
            "bob".into(),
            "carol".into(),
        ],
        array_every: 997,
    };
    let g = generate(&env.logdir, &spec);
    assert!(g.old_files >= 8, "{g:?}");
    // The oldest file: it holds none of the jobs the commands below ask for by id.
    damage_line(
        &env.logdir.join(format!("lsb.events.{}", g.old_files)),
        50,
        "\"JOB_STATUS\" \"40\" garbage here",
    );
    damage_line(
        &env.logdir.join("lsb.acct"),
        100,
        "\"JOB_FINISH\" \"40\" 17 x",
    );
    tear(
        &env.logdir.join("lsb.events"),
        "\"JOB_STATUS\" \"40\" 17953",
    );
    tear(&env.logdir.join("lsb.acct"), "\"JOB_FINISH\" \"40\" 17953");
    basalt_eventlog::index::rebuild(&env.logdir).unwrap_or_else(|e| panic!("index: {e}"));
    (env, g)
}

#[derive(Debug, PartialEq, Eq)]
struct Seen {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn seen(o: Output) -> Seen {
    Seen {
        code: o.status.code(),
        stdout: text(&o.stdout),
        stderr: text(&o.stderr),
    }
}

fn commands(logdir: &Path) -> Vec<(&'static str, Vec<String>)> {
    let carried = carried_job(logdir).to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        (BHIST, s(&["-l", "4321"])),
        (BHIST, s(&["-l", "1994"])),
        (BHIST, vec!["-l".into(), carried.clone()]),
        (BHIST, vec!["-b".into(), carried, "5".into(), "5999".into()]),
        (BHIST, s(&["-w", "7", "8", "9", "4500"])),
        (BHIST, s(&["-l", "1994[2]"])),
        (BHIST, s(&["-a"])),
        (BHIST, s(&["-a", "-w", "-n", "2"])),
        (BHIST, s(&["-a", "-u", "alice", "-n", "0"])),
        (BHIST, s(&["-l", "-a", "-u", "bob", "-n", "3"])),
        (BHIST, s(&["-d", "-q", "long", "-n", "0"])),
        (BHIST, s(&["-a", "-u", "all", "-J", "job7*", "-n", "0"])),
        (BHIST, s(&[])),
        (BHIST, s(&["999999"])),
        (
            BHIST,
            s(&[
                "-f",
                &logdir.join("lsb.events.2").to_string_lossy(),
                "-d",
                "-u",
                "carol",
            ]),
        ),
        (BACCT, s(&[])),
        (BACCT, s(&["-u", "all"])),
        (BACCT, s(&["-u", "alice"])),
        (BACCT, s(&["-l", "4321"])),
        (BACCT, s(&["-l", "1994[2]"])),
        (BACCT, s(&["-l", "1994"])),
        (BACCT, s(&["-u", "all", "-q", "long"])),
        (BACCT, s(&["-u", "bob", "-d"])),
        (BACCT, s(&["-u", "carol", "-e"])),
        (BACCT, s(&["-u", "all", "-P", "proj3"])),
        (BACCT, s(&["-u", "all", "-J", "job7*"])),
        (BACCT, s(&["-u", "alice", "-m", "hostA", "-e"])),
        (BACCT, s(&["-l", "1", "2", "3", "100"])),
        (BACCT, s(&["424242"])),
        (
            BACCT,
            s(&[
                "-f",
                &logdir.join("lsb.acct").to_string_lossy(),
                "-u",
                "bob",
            ]),
        ),
    ]
}

fn run_all(env: &Env, cmds: &[(&str, Vec<String>)], extra: &[(&str, &str)]) -> Vec<Seen> {
    cmds.iter()
        .map(|(exe, args)| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            seen(env.run(exe, &args, extra))
        })
        .collect()
}

fn assert_same(
    what: &str,
    cmds: &[(&str, Vec<String>)],
    want: &[Seen],
    got: &[Seen],
    stderr: bool,
) {
    for (((exe, args), w), g) in cmds.iter().zip(want).zip(got) {
        let name = Path::new(exe)
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        assert_eq!(w.code, g.code, "{what}: {name} {args:?}: exit code");
        assert!(
            w.stdout == g.stdout,
            "{what}: {name} {args:?}: stdout differs\n--- want\n{}\n--- got\n{}",
            w.stdout,
            g.stdout
        );
        if stderr {
            assert_eq!(w.stderr, g.stderr, "{what}: {name} {args:?}: stderr");
        }
    }
}

#[test]
fn the_index_changes_no_output() {
    let (env, g) = fixture();
    let oldest = format!("lsb.events.{} at line 50", g.old_files);
    let cmds = commands(&env.logdir);
    let index_file = env.logdir.join("lsb.events.index");
    let saved = std::fs::read(&index_file).unwrap_or_default();

    // The reference: every file read in full, no index of any kind.
    std::fs::remove_file(&index_file).unwrap_or_else(|e| panic!("{e}"));
    let reference = run_all(&env, &cmds, &OFF);
    assert!(!db(&env).exists());
    // Sanity: the reference shows what the fixture holds.
    assert_eq!(reference[0].code, Some(0), "{:?}", reference[0]);
    assert!(
        reference[0].stdout.contains("Job <4321>"),
        "{}",
        reference[0].stdout
    );
    assert!(
        reference[6].stdout.contains("Summary of time"),
        "{:?}",
        reference[6]
    );
    assert!(reference[13].code == Some(255));
    assert!(reference[16].stdout.contains("Total number of done jobs:"));
    assert!(
        reference[16].stderr.contains("incomplete last line"),
        "{}",
        reference[16].stderr
    );
    assert!(
        reference[16].stderr.contains("at line 100"),
        "{}",
        reference[16].stderr
    );

    // lsb.events.index: the same output; bhist by id reads fewer files, so fewer warnings
    // about damaged lines in files that do not hold the job.
    std::fs::write(&index_file, &saved).unwrap_or_else(|e| panic!("{e}"));
    let narrowed = run_all(&env, &cmds, &OFF);
    assert_same("lsb.events.index", &cmds, &reference, &narrowed, false);
    assert!(
        reference[0].stderr.contains(&oldest),
        "{}",
        reference[0].stderr
    );
    assert!(
        !narrowed[0].stderr.contains(&oldest),
        "{}",
        narrowed[0].stderr
    );

    // The SQLite index, built by the first command, then used warm; and each command
    // with a cold index of its own.
    let warm = run_all(&env, &cmds, &[]);
    assert!(db(&env).exists(), "no index in the log directory");
    assert_same("first run", &cmds, &narrowed, &warm, true);
    let warm = run_all(&env, &cmds, &[]);
    assert_same("warm index", &cmds, &narrowed, &warm, true);
    for (i, c) in cmds.iter().enumerate().step_by(4) {
        remove_db(&db(&env));
        let cold = run_all(&env, std::slice::from_ref(c), &[]);
        assert_same(
            "cold index",
            std::slice::from_ref(c),
            &narrowed[i..=i],
            &cold,
            true,
        );
    }
}

#[test]
fn changes_to_the_files_are_followed() {
    let (env, _) = fixture();
    let cmds = commands(&env.logdir);
    run_all(&env, &cmds[..3], &[]);
    assert!(db(&env).exists());

    // A log switch: .N -> .N+1, the current file's history becomes .1, a new current file.
    let l = &env.logdir;
    let mut olds: Vec<u64> = std::fs::read_dir(l)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_prefix("lsb.events.")?
                .parse()
                .ok()
        })
        .collect();
    olds.sort_unstable_by(|a, b| b.cmp(a));
    for n in olds {
        std::fs::rename(
            l.join(format!("lsb.events.{n}")),
            l.join(format!("lsb.events.{}", n + 1)),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    let cur = std::fs::read_to_string(l.join("lsb.events")).unwrap_or_default();
    let cut = cur.rfind('\n').map_or(0, |i| i + 1);
    let first = cur.lines().next().unwrap_or_default();
    let offset: usize = first.trim_start_matches('#').trim().parse().unwrap_or(0);
    std::fs::write(
        l.join("lsb.events.1"),
        format!("#{:<37}\n{}", common::T0 + 30_000, &cur[offset..cut]),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let fresh = format!(
        "#{:<37}\n\"LOG_SWITCH\" \"40\" {} 20000\n",
        39,
        common::T0 + 30_000
    );
    std::fs::write(l.join("lsb.events.tmp"), fresh).unwrap_or_else(|e| panic!("{e}"));
    std::fs::rename(l.join("lsb.events.tmp"), l.join("lsb.events"))
        .unwrap_or_else(|e| panic!("{e}"));
    basalt_eventlog::index::update_after_switch(l).unwrap_or_else(|e| panic!("{e}"));
    // lsb.acct grows; a record is appended without its newline yet.
    let acct = std::fs::read_to_string(l.join("lsb.acct")).unwrap_or_default();
    let mut fields: Vec<&str> = acct.lines().nth(5).unwrap_or_default().split(' ').collect();
    fields[3] = "20006";
    let last_line = fields.join(" ");
    let cut = acct.rfind('\n').map_or(0, |i| i + 1);
    std::fs::write(
        l.join("lsb.acct"),
        format!("{}{last_line}\n{last_line}", &acct[..cut]),
    )
    .unwrap_or_else(|e| panic!("{e}"));

    let cmds = commands(&env.logdir);
    let reference = run_all(&env, &cmds, &OFF);
    let got = run_all(&env, &cmds, &[]);
    assert_same("after a switch", &cmds, &reference, &got, true);

    // A file changed in place (same inode, same size, same beginning): two lines swap
    // places, so the offsets the index holds no longer start the lines it expects.
    let acct = std::fs::read(l.join("lsb.acct")).unwrap_or_default();
    let lines: Vec<&[u8]> = acct.split_inclusive(|b| *b == b'\n').collect();
    let mut swapped: Vec<u8> = Vec::with_capacity(acct.len());
    for (i, line) in lines.iter().enumerate() {
        let pick = match i {
            200 => lines[201],
            201 => lines[200],
            _ => line,
        };
        swapped.extend_from_slice(pick);
    }
    assert_eq!(swapped.len(), acct.len());
    std::fs::OpenOptions::new()
        .write(true)
        .open(l.join("lsb.acct"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, &swapped))
        .unwrap_or_else(|e| panic!("{e}"));
    let line200 = String::from_utf8_lossy(lines[200]).into_owned();
    let id200 = line200.split(' ').nth(3).unwrap_or_default().to_owned();
    let args = ["-l", id200.as_str()];
    let want = seen(env.run(BACCT, &args, &OFF));
    let got = seen(env.run(BACCT, &args, &[]));
    assert_eq!(want, got);
    assert_eq!(got.code, Some(0), "{got:?}");
    let got = seen(env.run(BACCT, &args, &[]));
    assert_eq!(want, got, "after the stale file was indexed again");
}

#[test]
fn an_index_that_cannot_be_written_or_is_damaged_is_not_a_failure() {
    let (env, _) = fixture();
    let cmds = commands(&env.logdir);
    let cmds = &cmds[..3];
    let cmds_acct: Vec<(&str, Vec<String>)> = commands(&env.logdir)
        .into_iter()
        .filter(|(e, _)| *e == BACCT)
        .take(3)
        .collect();
    let reference = run_all(&env, cmds, &OFF);
    let reference_acct = run_all(&env, &cmds_acct, &OFF);

    // The log directory refuses the database (a directory is in its way): the per-user
    // cache is used instead.
    std::fs::create_dir(db(&env)).unwrap_or_else(|e| panic!("{e}"));
    let got = run_all(&env, cmds, &[]);
    assert_same("per-user cache", cmds, &reference, &got, true);
    let cached: Vec<_> = std::fs::read_dir(env.top.join("cache/basalt/hist"))
        .unwrap_or_else(|e| panic!("no cache: {e}"))
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".sqlite"))
        .collect();
    assert_eq!(cached.len(), 1);

    // Neither place works: the files are read.
    std::fs::remove_dir_all(env.top.join("cache")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(env.top.join("cache"), "not a directory").unwrap_or_else(|e| panic!("{e}"));
    let got = run_all(&env, cmds, &[]);
    assert_same("no index at all", cmds, &reference, &got, true);
    let got = run_all(&env, &cmds_acct, &[]);
    assert_same("no index at all", &cmds_acct, &reference_acct, &got, true);

    // A damaged database is rebuilt.
    std::fs::remove_dir(db(&env)).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(db(&env), vec![0x5a; 8192]).unwrap_or_else(|e| panic!("{e}"));
    let got = run_all(&env, &cmds_acct, &[]);
    assert_same("damaged index", &cmds_acct, &reference_acct, &got, true);
    let head = std::fs::read(db(&env)).unwrap_or_default();
    assert!(
        head.starts_with(b"SQLite format 3\0"),
        "the index was not rebuilt"
    );

    // An explicit place, and an explicit "off".
    let here = env.top.join("elsewhere.sqlite");
    let got = run_all(
        &env,
        &cmds_acct,
        &[("BASALT_HIST_INDEX", &here.to_string_lossy())],
    );
    assert_same("explicit place", &cmds_acct, &reference_acct, &got, true);
    assert!(here.exists());
}

/// One command's wall time.
fn timed(env: &Env, exe: &str, args: &[&str], extra: &[(&str, &str)]) -> (f64, Seen) {
    let t = Instant::now();
    let o = env.run(exe, args, extra);
    (t.elapsed().as_secs_f64(), seen(o))
}

/// The measurement at scale: 1,000,000 finished jobs.
#[test]
#[ignore = "large: generates about 1.5 GB of logs; run in release mode with --ignored"]
fn a_million_jobs() {
    let keep = std::env::var_os("BASALT_HIST_BENCH_DIR").map(std::path::PathBuf::from);
    let tmp;
    let env = match &keep {
        Some(dir) => {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{e}"));
            Env::at(dir)
        }
        None => {
            tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            Env::at(tmp.path())
        }
    };
    let jobs: u64 = std::env::var("BASALT_HIST_BENCH_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    if !env.logdir.join("lsb.acct").exists() {
        let t = Instant::now();
        let users: Vec<String> = std::iter::once(basalt_hist::caller_name())
            .chain((1..100).map(|i| format!("user{i}")))
            .collect();
        let g = generate(
            &env.logdir,
            &Spec {
                jobs,
                per_file: 10_000,
                users,
                array_every: 0,
            },
        );
        let t_idx = Instant::now();
        basalt_eventlog::index::rebuild(&env.logdir).unwrap_or_else(|e| panic!("{e}"));
        println!(
            "generated {jobs} jobs ({} old event files, {} JOB_FINISH) in {:.1} s; lsb.events.index in {:.2} s",
            g.old_files,
            g.finishes,
            t_idx.duration_since(t).as_secs_f64(),
            t_idx.elapsed().as_secs_f64()
        );
    }
    let mid = (jobs / 2 + 7).to_string();
    let queries: Vec<(&str, Vec<&str>)> = vec![
        (BACCT, vec!["-l", &mid]),
        (BHIST, vec!["-l", &mid]),
        (BACCT, vec!["-u", "user7"]),
        (BACCT, vec!["-u", "all"]),
        (BACCT, vec![]),
        (BHIST, vec!["-a", "-u", "user7"]),
        (BHIST, vec!["-a", "-u", "user7", "-n", "0"]),
    ];
    println!(
        "{:<28} {:>10} {:>10} {:>10}",
        "command", "no index", "cold", "warm"
    );
    for (exe, args) in &queries {
        let name = format!(
            "{} {}",
            Path::new(exe)
                .file_name()
                .unwrap_or_default()
                .to_string_lossy(),
            args.join(" ")
        );
        let (t_off, off) = timed(&env, exe, args, &OFF);
        remove_db(&db(&env));
        let (t_cold, cold) = timed(&env, exe, args, &[]);
        let (t_warm, warm) = timed(&env, exe, args, &[]);
        assert_eq!(off.stdout, cold.stdout, "{name}");
        assert_eq!(off.stdout, warm.stdout, "{name}");
        assert_eq!(off.code, warm.code, "{name}");
        println!("{name:<28} {t_off:>9.3}s {t_cold:>9.3}s {t_warm:>9.3}s");
    }
    // bhist by id without lsb.events.index: every old file is read (or indexed).
    let index_file = env.logdir.join("lsb.events.index");
    let saved = env.logdir.join("lsb.events.index.saved");
    std::fs::rename(&index_file, &saved).unwrap_or_else(|e| panic!("{e}"));
    let args = ["-l", mid.as_str()];
    let (t_off, off) = timed(&env, BHIST, &args, &OFF);
    remove_db(&db(&env));
    let (t_cold, cold) = timed(&env, BHIST, &args, &[]);
    let (t_warm, warm) = timed(&env, BHIST, &args, &[]);
    std::fs::rename(&saved, &index_file).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(off.stdout, cold.stdout);
    assert_eq!(off.stdout, warm.stdout);
    println!(
        "{:<28} {t_off:>9.3}s {t_cold:>9.3}s {t_warm:>9.3}s",
        format!("bhist -l {mid} (no lsb.events.index)")
    );

    // Everything indexed at once.
    remove_db(&db(&env));
    let (t_full, _) = timed(&env, BACCT, &["-u", "all"], &[]);
    let (t_full2, _) = timed(&env, BHIST, &["-a", "-u", "user7", "-n", "0"], &[]);
    println!("cold build: lsb.acct {t_full:.2} s, every event file {t_full2:.2} s");
    if let Ok(m) = std::fs::metadata(db(&env)) {
        println!("index size: {} MB", m.len() / 1_000_000);
    }

    // Incremental: 10,000 more JOB_FINISH records, then the file is put back.
    let acct = env.logdir.join("lsb.acct");
    let len = std::fs::metadata(&acct).map(|m| m.len()).unwrap_or(0);
    let data = std::fs::read(&acct).unwrap_or_default();
    let more: Vec<u8> = data
        .split_inclusive(|b| *b == b'\n')
        .take(10_000)
        .flatten()
        .copied()
        .collect();
    tear(&acct, &String::from_utf8_lossy(&more));
    let (t_inc, _) = timed(&env, BACCT, &["-u", "user7"], &[]);
    let (t_inc2, _) = timed(&env, BACCT, &["-u", "user7"], &[]);
    println!("after 10,000 more JOB_FINISH: bacct -u user7 {t_inc:.3} s, then {t_inc2:.3} s");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&acct)
        .and_then(|f| f.set_len(len))
        .unwrap_or_else(|e| panic!("{e}"));
}
