//! `bmgroup` and `bugroup` run on a written configuration, without daemons: they read
//! lsb.hosts and lsb.users, and ask `LSF_SERVERDIR/egroup` about `(!)` groups.

use basalt_config::embedded::{DefaultCluster, DefaultHost};
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BMGROUP: &str = env!("CARGO_BIN_EXE_bmgroup");
const BUGROUP: &str = env!("CARGO_BIN_EXE_bugroup");

/// The default configuration for server hosts hostA..hostC and client hostD; returns
/// `LSF_ENVDIR`.
fn write_default(top: &Path) -> PathBuf {
    let host = |name: &str, last: u8, server: bool| DefaultHost {
        name: name.into(),
        // Nothing listens here: the commands need no daemon.
        address: Some(IpAddr::V4(Ipv4Addr::new(127, 78, 5, last))),
        server,
    };
    let hosts = vec![
        host("hostA", 1, true),
        host("hostB", 2, true),
        host("hostC", 3, true),
        host("hostD", 4, false),
    ];
    let mut spec = DefaultCluster::new("basalt", "nobody", hosts);
    spec.lim_port = 17890;
    spec.write(top).expect("write default configuration")
}

fn batch_dir(envdir: &Path) -> PathBuf {
    envdir.join("lsbatch/basalt/configdir")
}

fn append(path: &Path, text: &str) {
    let mut all = std::fs::read_to_string(path).unwrap_or_default();
    all.push_str(text);
    std::fs::write(path, all).expect("write configuration file");
}

fn egroup(envdir: &Path, body: &str) {
    let config = basalt_config::load(envdir).expect("configuration").config;
    let dir = config.serverdir();
    std::fs::create_dir_all(&dir).expect("serverdir");
    let path = dir.join("egroup");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write egroup");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn run(exe: &str, envdir: &Path, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        .env("LSF_ENVDIR", envdir)
        .env_remove("LSF_SERVER_HOSTS")
        .output()
        .expect("run command")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Exit 0, nothing on stderr, and this standard output.
fn ok(out: &Output, expected: &str) {
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    assert_eq!(text(&out.stdout), expected);
}

const HOST_GROUPS: &str = "
Begin HostGroup
GROUP_NAME   GROUP_MEMBER          GROUP_ADMIN
small        (hostA)               (carol)
big          (small HOSTB)         ()
rest         (all ~small)          ()
dyn          (!)                   ()
End HostGroup
";

const USER_GROUPS: &str = "
Begin UserGroup
GROUP_NAME   GROUP_MEMBER          USER_SHARES            GROUP_ADMIN
devs         (alice bob)           ([alice,2] [bob,1])    (carol)
eng          (devs dave ~bob)      ()                     (devs)
everyone     (all ~eve)            ()                     ()
udyn         (!)                   ()                     ()
End UserGroup
";

const EGROUP: &str = "[ \"$1\" = -m ] && [ \"$2\" = dyn ] && echo 'hostC hostA' && exit 0
[ \"$1\" = -u ] && [ \"$2\" = udyn ] && echo 'zed yan' && exit 0
exit 1";

#[test]
fn no_groups_configured_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    let out = run(BMGROUP, &envdir, &[]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(
        text(&out.stderr),
        "host group: No host group defined in the system\n"
    );
    assert!(out.stdout.is_empty());
    let out = run(BUGROUP, &envdir, &[]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(
        text(&out.stderr),
        "user group: No user group defined in the system\n"
    );
}

#[test]
fn bmgroup_and_bugroup_show_the_configured_groups() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    append(&batch_dir(&envdir).join("lsb.hosts"), HOST_GROUPS);
    append(&batch_dir(&envdir).join("lsb.users"), USER_GROUPS);
    egroup(&envdir, EGROUP);

    ok(
        &run(BMGROUP, &envdir, &[]),
        "GROUP_NAME    HOSTS\n\
         small        hostA\n\
         big          small/ hostB\n\
         rest         all ~small\n\
         dyn          hostA hostC\n",
    );
    // -r: host names only; `all` is the server hosts (not client hostD).
    ok(
        &run(BMGROUP, &envdir, &["-r"]),
        "GROUP_NAME    HOSTS\n\
         small        hostA\n\
         big          hostA hostB\n\
         rest         hostB hostC\n\
         dyn          hostA hostC\n",
    );
    ok(
        &run(BMGROUP, &envdir, &["-l", "small"]),
        "GROUP_NAME:  small\nHOSTS:       hostA\nGROUP_ADMIN: carol\n",
    );

    ok(
        &run(BUGROUP, &envdir, &[]),
        "GROUP_NAME    USERS\n\
         devs         alice bob\n\
         eng          devs/ dave ~bob\n\
         everyone     all users ~eve\n\
         udyn         yan zed\n",
    );
    ok(
        &run(BUGROUP, &envdir, &["-r"]),
        "GROUP_NAME    USERS\n\
         devs         alice bob\n\
         eng          alice dave\n\
         everyone     all users ~eve\n\
         udyn         yan zed\n",
    );
    ok(
        &run(BUGROUP, &envdir, &["-l", "devs", "eng"]),
        "GROUP_NAME:  devs\n\
         USERS:       alice bob\n\
         GROUP_ADMIN: carol\n\
         SHARES:      [alice, 2] [bob, 1]\n\
         \n\
         GROUP_NAME:  eng\n\
         USERS:       devs/ dave ~bob\n\
         GROUP_ADMIN: alice bob\n",
    );

    // An unknown group: LSF's message, exit 255, the known ones still shown.
    let out = run(BUGROUP, &envdir, &["nosuch", "devs"]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(text(&out.stderr), "nosuch: No such user/host group\n");
    assert_eq!(
        text(&out.stdout),
        "GROUP_NAME    USERS\ndevs         alice bob\n"
    );
    let out = run(BMGROUP, &envdir, &["nosuch"]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(text(&out.stderr), "nosuch: No such user/host group\n");
    assert!(out.stdout.is_empty());

    // A bad option: LSF's complaint and the usage.
    let out = run(BMGROUP, &envdir, &["-x"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(
        text(&out.stderr).starts_with("bmgroup: illegal option -- x\nUsage: bmgroup "),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_failing_egroup_shows_no_dynamic_members_and_warns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    append(&batch_dir(&envdir).join("lsb.hosts"), HOST_GROUPS);
    egroup(&envdir, "echo hostA; exit 2");
    let out = run(BMGROUP, &envdir, &["dyn", "small"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        "GROUP_NAME    HOSTS\ndyn\nsmall        hostA\n"
    );
    let err = text(&out.stderr);
    assert!(err.starts_with("bmgroup: egroup -m dyn: "), "{err}");
    assert!(err.contains("exited with"), "{err}");
    // Groups without `!` do not call egroup at all.
    let out = run(BMGROUP, &envdir, &["small"]);
    ok(&out, "GROUP_NAME    HOSTS\nsmall        hostA\n");
}

/// `bresources` reads lsb.resources: its Limit sections and ReservationUsage rows.
#[test]
fn bresources_shows_the_reservation_usage_and_limits_of_lsb_resources() {
    const BRESOURCES: &str = env!("CARGO_BIN_EXE_bresources");
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_default(dir.path());
    let out = run(BRESOURCES, &envdir, &["-s"]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(
        text(&out.stderr),
        "No reservation usage configuration defined.\n"
    );
    append(
        &batch_dir(&envdir).join("lsb.resources"),
        "Begin ReservationUsage\nRESOURCE METHOD RESERVE\nmem PER_TASK N\nEnd ReservationUsage\n\
         Begin Limit\nNAME = perUser\nPER_USER = all\nSLOTS = 2\nEnd Limit\n",
    );
    ok(
        &run(BRESOURCES, &envdir, &["-s"]),
        "Begin ReservationUsage\nRESOURCE             METHOD       RESERVE\n\
         mem                  PER_TASK     N\nEnd ReservationUsage\n",
    );
    ok(
        &run(BRESOURCES, &envdir, &[]),
        "Begin Limit\nNAME         = perUser\nPER_USER     = all\nSLOTS        = 2\nEnd Limit\n\n\
         Begin ReservationUsage\nRESOURCE             METHOD       RESERVE\n\
         mem                  PER_TASK     N\nEnd ReservationUsage\n",
    );
    let out = run(BRESOURCES, &envdir, &["-s", "tmp"]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(
        text(&out.stderr),
        "tmp: Resource not found in ReservationUsage\n"
    );
    let out = run(BRESOURCES, &envdir, &["-g", "pool"]);
    assert_eq!(out.status.code(), Some(255));
}
