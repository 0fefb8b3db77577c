//! The `bsub_script` fuzz target of `fuzz/` (cargo-fuzz, nightly only) as a stable,
//! deterministic test: the same checks (`fuzz/src/bsub.rs`, included below: `#BSUB`
//! directives, option values, the submission built from them) over the seeds
//! (`fuzz/seeds/bsub_script/`), every input that once failed
//! (`fuzz/regressions/bsub_script/`) and a few thousand mutations of them from a
//! fixed-seed xorshift generator (`fuzz/src/mutate.rs`). See docs/testing.md.

use std::path::{Path, PathBuf};

#[path = "../../../fuzz/src/bsub.rs"]
#[allow(dead_code)]
mod harness;

#[path = "../../../fuzz/src/mutate.rs"]
#[allow(dead_code)]
mod mutate;

const MUTATIONS: usize = 3_000;

const DICT: &[&str] = &[
    "#BSUB ",
    "\n#BSUB -",
    "-J ",
    "-q ",
    "-n ",
    "-o ",
    "-oo ",
    "-e ",
    "-W ",
    "-M ",
    "-R ",
    "-env ",
    "-b ",
    "-t ",
    "-c ",
    "-m ",
    "-w ",
    "-nnodes ",
    "-x",
    "-H",
    "--",
    "-",
    "'",
    "\"",
    "\\",
    "#",
    "2:30",
    "1:2:3:4:5",
    "4G",
    "1.5MB",
    "0",
    "1,8",
    "span[hosts=1]",
    "rusage[mem=5]",
    "all, ~HOME",
    "A=1,B",
    "\r\n",
    "\n",
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

#[test]
fn bsub_scripts_never_panic() {
    let fuzz = fuzz_dir();
    let seeds: Vec<Vec<u8>> = mutate::read_dir_files(&fuzz.join("seeds/bsub_script"))
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    assert!(
        seeds.len() >= 5,
        "the seed corpus {} is missing",
        fuzz.join("seeds/bsub_script").display()
    );
    for (name, data) in mutate::read_dir_files(&fuzz.join("regressions/bsub_script")) {
        mutate::run_one(&format!("regression {name}"), &data, harness::check_script);
    }
    for (i, s) in seeds.iter().enumerate() {
        mutate::run_one(&format!("seed {i}"), s, harness::check_script);
    }
    mutate::mutants(&seeds, DICT, MUTATIONS, 0xb5cb_5c21_9700_0001, |what, b| {
        mutate::run_one(what, b, harness::check_script)
    });
}
