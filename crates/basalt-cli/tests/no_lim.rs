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

/// Issue 30 item 10: bad options and arguments of lsload/lshosts get LSF's message and
/// the usage on stderr (not clap's), exit 255; conflicting options print the usage.
#[test]
fn lsload_and_lshosts_option_errors_are_lsf_messages_with_the_usage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    let cases: [(&str, &[&str], &str); 6] = [
        (
            COMMANDS[1],
            &["-Z"],
            "lsload: illegal option -- Z\nUsage: lsload ",
        ),
        (
            COMMANDS[1],
            &["-R"],
            "lsload: option requires an argument -- R\nUsage: lsload ",
        ),
        (COMMANDS[1], &["-N", "-E"], "Usage: lsload "),
        (COMMANDS[1], &["-s", "-l"], "Usage: lsload "),
        (
            COMMANDS[2],
            &["-x"],
            "lshosts: illegal option -- x\nUsage: lshosts ",
        ),
        (COMMANDS[2], &["-l", "-w"], "Usage: lshosts "),
    ];
    for (exe, args, start) in cases {
        let out = run(exe, &envdir, args);
        assert_eq!(out.status.code(), Some(255), "{exe} {args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with(start), "{exe} {args:?}: {stderr}");
        assert!(stderr.contains(" -s ["), "{exe} {args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{exe} {args:?}");
    }
}

/// Issue 30 item 10: `lshosts -s` and `bhosts -s` list the ResourceMap's shared
/// resources in LSF's layouts, and say so when there are none; `bhosts -s` needs
/// mbatchd for what is reserved (issue 20).
#[test]
fn lshosts_s_and_bhosts_s_list_the_resource_map() {
    let bhosts = env!("CARGO_BIN_EXE_bhosts");
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    let out = run(COMMANDS[2], &envdir, &["-s"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "No static shared resources defined \n"
    );
    let out = run(bhosts, &envdir, &["-s"]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "lsb_sharedresourceinfo: No resource defined\n"
    );

    let shared = envdir.join("lsf.shared");
    let text = std::fs::read_to_string(&shared).expect("read lsf.shared");
    let text = text.replacen(
        "End Resource",
        "licA  Numeric  ()  N  (License A)\nEnd Resource",
        1,
    );
    std::fs::write(&shared, text).expect("write lsf.shared");
    let cluster = envdir.join("lsf.cluster.basalt");
    let mut text = std::fs::read_to_string(&cluster).expect("read lsf.cluster");
    text.push_str(
        "\nBegin ResourceMap\nRESOURCENAME  LOCATION\nlicA  (5@[hostA])\nEnd ResourceMap\n",
    );
    std::fs::write(&cluster, text).expect("write lsf.cluster");

    let out = run(COMMANDS[2], &envdir, &["-s"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        format!("RESOURCE{}VALUE{}LOCATION", " ".repeat(32), " ".repeat(7))
    );
    assert_eq!(
        lines[1],
        format!("licA{}5{}hostA ", " ".repeat(40), " ".repeat(7))
    );
    // bhosts -s asks mbatchd what is reserved (lsb_sharedresourceinfo): without one it
    // fails like every batch command (its layout: batch_shared, with a cluster).
    let out = run(bhosts, &envdir, &["-s", "licA"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(out.stdout.is_empty());
    let out = run(COMMANDS[2], &envdir, &["-s", "nosuch"]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ls_sharedresourceinfo: Bad resource name\n"
    );
}
