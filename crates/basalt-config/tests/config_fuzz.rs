//! The `config_files` fuzz target of `fuzz/` (cargo-fuzz, nightly only) as a stable,
//! deterministic test: the same checks (`fuzz/src/config.rs`, included below) over the
//! seed bundles (`fuzz/seeds/config_files/`), every input that once failed
//! (`fuzz/regressions/config_files/`), the embedded default configuration, and a few
//! thousand mutations of them from a fixed-seed xorshift generator (`fuzz/src/mutate.rs`).
//! A failing input is printed with the mutations that made it. See docs/testing.md.

use std::path::{Path, PathBuf};

use basalt_config::embedded::{DefaultCluster, DefaultHost};

#[path = "../../../fuzz/src/config.rs"]
#[allow(dead_code)]
mod harness;

#[path = "../../../fuzz/src/mutate.rs"]
#[allow(dead_code)]
mod mutate;

/// Mutated bundles checked (each is written and loaded three times).
const MUTATIONS: usize = 800;

/// Words the loader gives a meaning to.
const DICT: &[&str] = &[
    "Begin ",
    "End ",
    "Begin Queue\n",
    "End Queue\n",
    "Begin Host\n",
    "End Host\n",
    "Begin Parameters\n",
    "End Parameters\n",
    "Begin HostGroup\n",
    "Begin UserGroup\n",
    "Begin Limit\n",
    "Begin Cluster\n",
    "Begin Resource\n",
    "Begin HostModel\n",
    "QUEUE_NAME = ",
    "PRIORITY = ",
    "RUN_WINDOW = ",
    "DISPATCH_WINDOW = ",
    "STOP_COND = ",
    "RESUME_COND = ",
    "JOB_CONTROLS = ",
    "r1m = ",
    "MXJ",
    "!",
    "()",
    "(",
    ")",
    "-",
    "\\\n",
    "#",
    "=",
    "\"",
    "LSF_CONFDIR=",
    "LSB_CONFDIR=",
    "ClusterName\n",
    "HOSTNAME",
    "==> ",
    " <==\n",
    "==> lsb.queues <==\n",
    "==> lsf.shared <==\n",
    "5:19:00-1:8:30",
    "20:00-8:30",
    "0.7/2.0",
    "SUSPEND[SIGTSTP]",
    "all ~x",
    "default",
    "@",
    "~",
    "[",
    "]",
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The embedded default configuration as a bundle, with relative directories (as in the
/// seed `embedded-default`).
fn embedded_bundle() -> Vec<u8> {
    let top = Path::new("/TOP");
    let hosts = (1..=2)
        .map(|i| DefaultHost {
            name: format!("h{i}"),
            address: None,
            server: i == 1,
        })
        .collect();
    let mut out = String::new();
    for (rel, text) in DefaultCluster::new("c1", "root", hosts).render(top) {
        let name = rel.file_name().map(|n| n.to_string_lossy().into_owned());
        let text = text.replace("/TOP/conf", ".").replace("/TOP", "..");
        out.push_str(&harness::marker(&name.unwrap_or_default()));
        out.push('\n');
        out.push_str(&text);
    }
    out.into_bytes()
}

#[test]
fn config_bundles_never_panic() {
    let fuzz = fuzz_dir();
    let mut seeds: Vec<Vec<u8>> = mutate::read_dir_files(&fuzz.join("seeds/config_files"))
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    assert!(
        seeds.len() >= 4,
        "the seed corpus {} is missing",
        fuzz.join("seeds/config_files").display()
    );
    seeds.push(embedded_bundle());
    let dir = tempfile::tempdir().unwrap();
    let check = |b: &[u8]| harness::check_bundle(dir.path(), b);
    for (name, data) in mutate::read_dir_files(&fuzz.join("regressions/config_files")) {
        mutate::run_one(&format!("regression {name}"), &data, check);
    }
    for (i, s) in seeds.iter().enumerate() {
        mutate::run_one(&format!("seed {i}"), s, check);
    }
    mutate::mutants(&seeds, DICT, MUTATIONS, 0xc0f1_65ee_d5ba_5a17, |what, b| {
        mutate::run_one(what, b, check)
    });
}

#[test]
fn seeds_load() {
    // The realistic seeds are valid configurations: the checks see loaded configs too.
    let dir = tempfile::tempdir().unwrap();
    for name in ["embedded-default", "reference-examples", "queues-full"] {
        let data = std::fs::read(fuzz_dir().join("seeds/config_files").join(name)).unwrap();
        let env = dir.path().join(name);
        harness::write_bundle(&env, &harness::split_bundle(&data));
        if let Err(e) = basalt_config::load(&env) {
            panic!("seed {name} does not load:\n{e}");
        }
    }
    let env = dir.path().join("embedded");
    harness::write_bundle(&env, &harness::split_bundle(&embedded_bundle()));
    if let Err(e) = basalt_config::load(&env) {
        panic!("the embedded default does not load:\n{e}");
    }
}

#[test]
fn bundle_splitting() {
    let files = harness::split_bundle(
        b"A=1\n==> lsf.shared <==\nx\n==> ../evil <==\ny\n==> lsb.queues <==\nq\n",
    );
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["lsf.conf", "lsf.shared", "lsb.queues"]);
    assert_eq!(files[0].1, b"A=1\n");
    assert_eq!(files[2].1, b"q\n");
    assert_eq!(harness::split_bundle(b"==> lsf.shared <==\n").len(), 1);
}
