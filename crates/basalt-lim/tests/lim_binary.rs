//! The `lim` binary refuses a bad configuration before doing anything, naming
//! every problem with its file and line.

use basalt_config::embedded::{DefaultCluster, DefaultHost};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn write_default(top: &Path) -> PathBuf {
    let hosts = ["hostA", "hostB"]
        .iter()
        .enumerate()
        .map(|(i, n)| DefaultHost {
            name: (*n).to_owned(),
            address: Some(IpAddr::V4(Ipv4Addr::new(127, 77, 3, i as u8 + 1))),
            server: true,
        })
        .collect();
    let mut spec = DefaultCluster::new("basalt", "nobody", hosts);
    spec.lim_port = 17869;
    spec.write(top).expect("write default configuration")
}

fn lim(envdir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lim"))
        .args(args)
        .env("LSF_ENVDIR", envdir)
        .env_remove("BASALT_LOG")
        .output()
        .expect("run lim")
}

fn line_of(path: &Path, needle: &str) -> usize {
    let text = std::fs::read_to_string(path).expect("read");
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .expect("needle present")
}

#[test]
fn check_accepts_the_embedded_default() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    let out = lim(&envdir, &["-C"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "lim -C failed: {stderr}");
    assert!(stderr.contains("No errors found"), "{stderr}");
}

#[test]
fn check_refuses_a_missing_or_public_cluster_key() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    let key = envdir.join("basalt.key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let out = lim(&envdir, &["-C"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a readable key was accepted: {stderr}"
    );
    assert!(stderr.contains("chmod 600"), "{stderr}");
    std::fs::remove_file(&key).expect("rm");
    let out = lim(&envdir, &["-C"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a missing key was accepted: {stderr}"
    );
    assert!(stderr.contains("basalt.key"), "{stderr}");
}

#[test]
fn malformed_lines_are_all_reported_with_file_and_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    let cluster = envdir.join("lsf.cluster.basalt");
    let text = std::fs::read_to_string(&cluster).expect("read");
    std::fs::write(
        &cluster,
        text.replace("EXINTERVAL = 1", "EXINTERVAL = fast"),
    )
    .expect("write");
    let conf = envdir.join("lsf.conf");
    let mut text = std::fs::read_to_string(&conf).expect("read");
    text.push_str("this is not a setting\n");
    std::fs::write(&conf, text).expect("write");

    for args in [&["-C"][..], &["-H", "hostA"][..]] {
        let out = lim(&envdir, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "lim {args:?} accepted a bad configuration"
        );
        let exline = format!(
            "{}:{}",
            cluster.display(),
            line_of(&cluster, "EXINTERVAL = fast")
        );
        let confline = format!(
            "{}:{}",
            conf.display(),
            line_of(&conf, "this is not a setting")
        );
        assert!(stderr.contains(&exline), "no {exline} in:\n{stderr}");
        assert!(stderr.contains(&confline), "no {confline} in:\n{stderr}");
        assert!(stderr.contains("not starting"), "{stderr}");
    }
}

#[test]
fn unknown_host_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    let out = lim(&envdir, &["-H", "hostZ"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("hostZ"), "{stderr}");
}

#[test]
fn version_goes_to_stderr() {
    let out = Command::new(env!("CARGO_BIN_EXE_lim"))
        .arg("-V")
        .output()
        .expect("run lim");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("10.1.0.13"));
}
