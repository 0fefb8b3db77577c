//! The `resreq` fuzz target of `fuzz/` (cargo-fuzz, nightly only) as a stable,
//! deterministic test: the same checks (`fuzz/src/resreq.rs`, included below: `-R`
//! merging, `span[]` and select expressions) over the seeds (`fuzz/seeds/resreq/`), every
//! input that once failed (`fuzz/regressions/resreq/`) and a few thousand mutations of
//! them from a fixed-seed xorshift generator (`fuzz/src/mutate.rs`). See docs/testing.md.

use std::path::{Path, PathBuf};

/// `fuzz/src/resreq.rs` reaches `merge` as `super::cli_resreq::merge`.
use basalt_cli::batch::resreq as cli_resreq;

#[path = "../../../fuzz/src/resreq.rs"]
#[allow(dead_code)]
mod harness;

#[path = "../../../fuzz/src/mutate.rs"]
#[allow(dead_code)]
mod mutate;

const MUTATIONS: usize = 6_000;

const DICT: &[&str] = &[
    "select[",
    "rusage[",
    "order[",
    "span[",
    "same[",
    "cu[",
    "affinity[",
    "filter[",
    "]",
    "[",
    "(",
    ")",
    "&&",
    "||",
    "!",
    "==",
    "!=",
    "<=",
    ">=",
    "=",
    " and ",
    " or ",
    " not ",
    " gt ",
    "r1m",
    "mem",
    "swp",
    "type",
    "any",
    "hosts=1",
    "ptile=",
    ":",
    ",",
    "\"",
    "'",
    "-",
    "*",
    "/",
    "+",
    "1e3",
    "\n",
    "duration=10",
    "core(2)",
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

#[test]
fn resource_requirements_never_panic() {
    let fuzz = fuzz_dir();
    let seeds: Vec<Vec<u8>> = mutate::read_dir_files(&fuzz.join("seeds/resreq"))
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    assert!(
        seeds.len() >= 10,
        "the seed corpus {} is missing",
        fuzz.join("seeds/resreq").display()
    );
    for (name, data) in mutate::read_dir_files(&fuzz.join("regressions/resreq")) {
        mutate::run_one(&format!("regression {name}"), &data, harness::check_resreq);
    }
    for (i, s) in seeds.iter().enumerate() {
        mutate::run_one(&format!("seed {i}"), s, harness::check_resreq);
    }
    mutate::mutants(&seeds, DICT, MUTATIONS, 0x5e1e_c7ba_5a17_0001, |what, b| {
        mutate::run_one(what, b, harness::check_resreq)
    });
}

#[test]
fn merged_selects_are_checked() {
    // The seeds reach the property about merged plain select expressions.
    harness::check_resreq(b"r1m > 1\nmem < 100 || swp > 2\n!ut");
    assert_eq!(
        cli_resreq::merge(&["r1m > 1".into(), "mem < 100".into()]),
        "select[(r1m > 1) && (mem < 100)]"
    );
}
