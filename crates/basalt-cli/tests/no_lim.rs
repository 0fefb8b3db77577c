//! The commands' behaviour without a running cluster: version flag, LIM down,
//! bad options, bad configuration.

use basalt_config::embedded::{DefaultCluster, DefaultHost};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn write_default(top: &Path) -> PathBuf {
    let host = DefaultHost {
        name: "hostA".into(),
        // Nothing listens here: a loopback address no test uses.
        address: Some(IpAddr::V4(Ipv4Addr::new(127, 78, 4, 1))),
        server: true,
    };
    let mut spec = DefaultCluster::new("basalt", "nobody", vec![host]);
    spec.lim_port = 17870;
    spec.write(top).expect("write default configuration")
}

fn run(exe: &str, envdir: &Path, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        .env("LSF_ENVDIR", envdir)
        .env_remove("LSF_SERVER_HOSTS")
        .env("BASALT_HOST", "hostA")
        .output()
        .expect("run command")
}

const COMMANDS: [&str; 5] = [
    env!("CARGO_BIN_EXE_lsid"),
    env!("CARGO_BIN_EXE_lsload"),
    env!("CARGO_BIN_EXE_lshosts"),
    env!("CARGO_BIN_EXE_lsclusters"),
    env!("CARGO_BIN_EXE_lsinfo"),
];

#[test]
fn version_flag_prints_the_dotted_version_and_exits_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    for exe in COMMANDS {
        let out = run(exe, &envdir, &["-V"]);
        assert!(out.status.success(), "{exe} -V failed");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("10.1.0.13"), "{exe} -V printed {stderr:?}");
    }
}

#[test]
fn lim_down_exits_255_with_lsf_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    for exe in [COMMANDS[0], COMMANDS[1], COMMANDS[2]] {
        let out = run(exe, &envdir, &[]);
        assert_eq!(out.status.code(), Some(255), "{exe}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("LIM is down; try later"), "{exe}: {stderr}");
    }
}

#[test]
fn lsinfo_needs_no_lim() {
    // lsinfo reads lsf.shared: it works while the LIM is down.
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    let out = run(COMMANDS[4], &envdir, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("RESOURCE_NAME"), "{stdout}");
    assert!(stdout.contains("MODEL_NAME"), "{stdout}");
}

#[test]
fn bad_option_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    let out = run(COMMANDS[1], &envdir, &["-Z"]);
    assert!(!out.status.success());
    assert!(!out.stderr.is_empty());
}

#[test]
fn broken_configuration_is_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    std::fs::write(envdir.join("lsf.shared"), "Begin Cluster\nClusterName\n").expect("write");
    let out = run(COMMANDS[0], &envdir, &[]);
    assert_eq!(out.status.code(), Some(255));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("lsf.shared"), "{stderr}");
}
