//! The fuzz targets of `fuzz/` (cargo-fuzz, nightly only) as a stable, deterministic test:
//! the same checks (`fuzz/src/eventlog.rs`, included below) over the seed corpus
//! (`fuzz/seeds/`), every input that once failed (`fuzz/regressions/`), records made by
//! this crate's writer, and some thousands of mutations of them from a fixed-seed
//! xorshift generator (bit flips, byte insertions and deletions, truncations, quote and
//! number mutations, splices). A failing input is printed with the mutation that made it.
//! See docs/testing.md for running the real fuzzers.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use basalt_eventlog::*;

#[path = "../../../fuzz/src/eventlog.rs"]
#[allow(dead_code)]
mod harness;

/// Mutated lines checked (each input also goes through `split_fields`).
const LINE_MUTATIONS: usize = 20_000;
/// Mutated files checked (each opens, appends and reopens both logs).
const FILE_MUTATIONS: usize = 2_000;

/// xorshift64* — tiny, deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const BYTES: &[u8] = b"\" \t\n\r*-+.#0519e\0\xff\xc3\x80";

const NUMBERS: &[&str] = &[
    "-1",
    "0",
    "-0",
    "+7",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "99999999999999999999999",
    "1048576",
    "1048577",
    "1e308",
    "1e309",
    "-0.4",
    "-0.9999999",
    "-1.000000",
    "0.005",
    "NaN",
    "inf",
    "0x10",
    "1.",
    ".5",
    "",
];

const STRINGS: &[&str] = &[
    "\"\"",
    "\"\"\"\"",
    "\"a \"\"b\"\" c\"",
    "\"2*hostA\"",
    "\"1048576*h\"",
    "\"1048577*h\"",
    "\"18446744073709551617*h\"",
    "\"0*h\"",
    "\"*h\"",
    "\"BASALT\"",
    "\"10.1\"",
    "\"22\"",
    "\"40\"",
    "\"9.13\"",
];

/// One random change to `b`; `others` are inputs to splice from. Returns its name.
fn mutate(rng: &mut Rng, b: &mut Vec<u8>, others: &[Vec<u8>]) -> &'static str {
    let pos = |rng: &mut Rng, b: &Vec<u8>| rng.below(b.len() + 1);
    match rng.below(12) {
        0 if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] ^= 1 << rng.below(8);
            "flip a bit"
        }
        1 if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] = *rng.pick(BYTES);
            "set a byte"
        }
        2 => {
            let i = pos(rng, b);
            let c = *rng.pick(BYTES);
            b.insert(i, c);
            "insert a byte"
        }
        3 if !b.is_empty() => {
            let i = rng.below(b.len());
            let n = (1 + rng.below(16)).min(b.len() - i);
            b.drain(i..i + n);
            "delete bytes"
        }
        4 => {
            let i = pos(rng, b);
            b.truncate(i);
            "truncate"
        }
        5 if !b.is_empty() => {
            let i = rng.below(b.len());
            let n = (1 + rng.below(64)).min(b.len() - i);
            let part = b[i..i + n].to_vec();
            let at = pos(rng, b);
            b.splice(at..at, part);
            "duplicate a range"
        }
        6 | 7 => {
            // Replace a number (or whatever token is there) by an edge case.
            let starts: Vec<usize> = (0..b.len())
                .filter(|&i| b[i].is_ascii_digit() && (i == 0 || b[i - 1] == b' '))
                .collect();
            if starts.is_empty() {
                return "no number to change";
            }
            let s = *rng.pick(&starts);
            let e = (s..b.len()).find(|&i| b[i] == b' ').unwrap_or(b.len());
            b.splice(s..e, rng.pick(NUMBERS).bytes());
            "change a number"
        }
        8 => {
            let quotes: Vec<usize> = (0..b.len()).filter(|&i| b[i] == b'"').collect();
            if quotes.is_empty() {
                b.insert(0, b'"');
                return "insert a quote";
            }
            let q = *rng.pick(&quotes);
            match rng.below(3) {
                0 => {
                    b.remove(q);
                    "delete a quote"
                }
                1 => {
                    b.insert(q, b'"');
                    "double a quote"
                }
                _ => {
                    let at = pos(rng, b);
                    b.insert(at, b'"');
                    "insert a quote"
                }
            }
        }
        9 => {
            // Replace a quoted field by an edge-case string.
            let quotes: Vec<usize> = (0..b.len())
                .filter(|&i| b[i] == b'"' && (i == 0 || b[i - 1] == b' '))
                .collect();
            if quotes.is_empty() {
                return "no string to change";
            }
            let s = *rng.pick(&quotes);
            let e = (s + 1..b.len())
                .find(|&i| b[i] == b'"' && b.get(i + 1).is_none_or(|&c| c == b' '))
                .map_or(b.len(), |i| i + 1);
            b.splice(s..e, rng.pick(STRINGS).bytes());
            "change a string"
        }
        10 if !others.is_empty() => {
            let o = rng.pick(others);
            let from = rng.below(o.len() + 1);
            let at = pos(rng, b);
            b.truncate(at);
            b.extend_from_slice(&o[from..]);
            "splice with another input"
        }
        _ => {
            // Line-level: add, drop or swap whole lines.
            let lines: Vec<Vec<u8>> = b
                .split_inclusive(|&c| c == b'\n')
                .map(<[u8]>::to_vec)
                .collect();
            if lines.len() < 2 {
                b.push(b'\n');
                return "add a newline";
            }
            let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
            let mut lines = lines;
            if rng.below(2) == 0 {
                lines.swap(i, j);
            } else {
                let l = lines[i].clone();
                lines.insert(j, l);
            }
            *b = lines.concat();
            "reorder lines"
        }
    }
}

fn read_dir_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .filter_map(|e| {
            let data = std::fs::read(e.path()).ok()?;
            Some((e.path().display().to_string(), data))
        })
        .collect();
    out.sort();
    out
}

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// Records made by this crate's writer, in each dialect.
fn written_records() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for v in ["10.1", "40", "22", "10.108"] {
        let h = || Header {
            version: v.to_owned(),
            time: 1_795_339_535,
        };
        let recs: Vec<Record> = vec![
            JobNew {
                header: h(),
                job_id: 77,
                user_id: 1000,
                user_name: "alice".into(),
                queue: "normal".into(),
                asked_hosts: vec!["hostA".into(), "hostB".into()],
                job_name: "a[1-4]%2".into(),
                command: "echo \"hi there\" | cat".into(),
                xf: vec![XFile {
                    sub_fn: "in".into(),
                    exec_fn: "/tmp/in".into(),
                    options: 3,
                }],
                options: basalt_core::job::sub::INTERACTIVE | VOLCLAVA_SUB_POST_EXEC,
                options2: basalt_core::job::sub2::BSUB_BLOCK | basalt_core::job::sub2::JOB_DESC,
                nios_port: 4000,
                specified_cwd: "/scratch/%J".into(),
                is_script: true,
                ..JobNew::default()
            }
            .into(),
            JobStart {
                header: h(),
                job_id: 77,
                j_status: 4,
                host_factor: 100.0,
                exec_hosts: vec!["hostA".into(), "hostA".into(), "hostB".into()],
                user_group: "g".into(),
                effective_res_req: "select[type==any]".into(),
                ..JobStart::default()
            }
            .into(),
            JobStatus {
                header: h(),
                job_id: 77,
                j_status: 32,
                cpu_time: 1.5,
                rusage: Some(Rusage {
                    utime: 1.0,
                    stime: 0.5,
                    ..Rusage::default()
                }),
                exit_status: 256,
                mem: Some(MemUsage {
                    max_mem: 4096,
                    avg_mem: 2048,
                }),
                term_reason: "TERM_OWNER".into(),
                ..JobStatus::default()
            }
            .into(),
            JobFinish {
                header: h(),
                job_id: 77,
                user_name: "alice".into(),
                exec_hosts: vec!["hostA".into()],
                command: "sleep 1".into(),
                ..JobFinish::default()
            }
            .into(),
            LoadIndex {
                header: h(),
                names: vec!["r15s".into(), "mem".into()],
            }
            .into(),
            MbdDie {
                header: h(),
                master: "hostA".into(),
                num_remove_jobs: 0,
                exit_code: 202,
                message: "reconfig".into(),
            }
            .into(),
        ];
        for r in recs {
            out.push(r.to_line().into_bytes());
        }
    }
    out
}

/// Show an input so that it can be pasted into a regression file.
fn show(data: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(data))
}

fn run_one(what: &str, data: &[u8], check: impl Fn(&[u8])) {
    if catch_unwind(AssertUnwindSafe(|| check(data))).is_err() {
        panic!(
            "{what} panicked (message above); input ({} bytes), save it under fuzz/regressions/:\n{}",
            data.len(),
            show(data)
        );
    }
}

fn mutants(seeds: &[Vec<u8>], n: usize, seed: u64, mut each: impl FnMut(&str, &[u8])) {
    let mut rng = Rng(seed);
    for i in 0..n {
        let base = i % seeds.len();
        let mut b = seeds[base].clone();
        let mut how = Vec::new();
        for _ in 0..1 + rng.below(4) {
            how.push(mutate(&mut rng, &mut b, seeds));
        }
        each(
            &format!("mutation {i} of seed {base} ({})", how.join(", ")),
            &b,
        );
    }
}

#[test]
fn lines_never_panic() {
    let dir = fuzz_dir();
    let mut seeds: Vec<Vec<u8>> = read_dir_files(&dir.join("seeds/eventlog_line"))
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    assert!(
        seeds.len() >= 40,
        "the seed corpus {} is missing",
        dir.join("seeds/eventlog_line").display()
    );
    seeds.extend(written_records());
    for (name, data) in read_dir_files(&dir.join("regressions/eventlog_line")) {
        run_one(&format!("regression {name}"), &data, harness::check_line);
    }
    for (i, s) in seeds.iter().enumerate() {
        run_one(&format!("seed {i}"), s, harness::check_line);
        // Every seed is a valid record.
        let text = String::from_utf8_lossy(s);
        assert!(
            parse_line(&text).is_ok(),
            "seed {i} does not parse: {}",
            show(s)
        );
    }
    mutants(&seeds, LINE_MUTATIONS, 0x005e_ed1e_55ba_5a17, |what, b| {
        run_one(what, b, harness::check_line)
    });
}

#[test]
fn files_never_panic() {
    let fuzz = fuzz_dir();
    let mut seeds: Vec<Vec<u8>> = read_dir_files(&fuzz.join("seeds/eventlog_file"))
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    assert!(
        seeds.len() >= 8,
        "the seed corpus {} is missing",
        fuzz.join("seeds/eventlog_file").display()
    );
    let mut written = written_records();
    for l in &mut written {
        l.push(b'\n');
    }
    seeds.push(written.concat());
    // tmpfs when there is one: the appenders fsync on every check.
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .unwrap();
    let check = |b: &[u8]| harness::check_files(dir.path(), b);
    for (name, data) in read_dir_files(&fuzz.join("regressions/eventlog_file")) {
        run_one(&format!("regression {name}"), &data, check);
    }
    for (i, s) in seeds.iter().enumerate() {
        run_one(&format!("seed {i}"), s, check);
    }
    mutants(&seeds, FILE_MUTATIONS, 0xf11e_5eed_0bad_cafe, |what, b| {
        run_one(what, b, check)
    });
}

#[test]
fn mutator_is_deterministic_and_mutates() {
    let seeds = vec![br#""JOB_CLEAN" "10.1" 1 2 0"#.to_vec()];
    let run = || {
        let mut v = Vec::new();
        mutants(&seeds, 200, 7, |_, b| v.push(b.to_vec()));
        v
    };
    let a = run();
    assert_eq!(a, run());
    let changed = a.iter().filter(|b| **b != seeds[0]).count();
    assert!(changed > 150, "only {changed} of 200 mutants differ");
}
