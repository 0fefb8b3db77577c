//! The `basalt-hollow` binary refuses what would let a hollow host become master: a
//! cluster without LSF_MASTER_LIST, or a host named in it. (Also makes `cargo test`
//! build the binary the process-level `hollow_hosts` test runs.)

use basalt_config::embedded::{DefaultCluster, DefaultHost};
use std::net::{IpAddr, Ipv4Addr};
use std::process::Command;

fn cluster(top: &std::path::Path, master_list: Option<&str>) -> std::path::PathBuf {
    let host = |name: &str, last: u8| DefaultHost {
        name: name.to_owned(),
        address: Some(IpAddr::V4(Ipv4Addr::new(127, 0, 99, last))),
        server: true,
    };
    let dc = DefaultCluster::new(
        "hollowtest",
        "root",
        vec![host("hostA", 1), host("hv00001", 2)],
    );
    let envdir = dc.write(top).expect("config written");
    if let Some(list) = master_list {
        let conf = envdir.join("lsf.conf");
        let text = std::fs::read_to_string(&conf).expect("lsf.conf");
        std::fs::write(&conf, format!("{text}LSF_MASTER_LIST=\"{list}\"\n")).expect("lsf.conf");
    }
    envdir
}

fn run(envdir: &std::path::Path, host: &str) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_basalt-hollow"))
        .arg("-d")
        .arg(envdir)
        .arg(host)
        .env_remove("LSF_ENVDIR")
        .output()
        .expect("basalt-hollow runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn without_a_master_list_or_for_a_candidate_it_refuses_to_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = cluster(dir.path(), None);
    let (code, err) = run(&envdir, "hv00001");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("lsf.conf has no LSF_MASTER_LIST"), "{err}");

    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = cluster(dir.path(), Some("hostA"));
    let (code, err) = run(&envdir, "hostA");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("hostA is a master candidate"), "{err}");
    // A host the cluster does not name.
    let (code, err) = run(&envdir, "nosuchhost");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("nosuchhost"), "{err}");
}
