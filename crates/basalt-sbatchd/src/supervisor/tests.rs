//! Unit tests of the supervisor's pure helpers.

use super::control::Control;
use super::files::{output_path, place_job_file};
use super::launch::{ChildInfo, ChildMsg, parse_child_msgs};
use super::{limit, limit_value};
use basalt_proto::sbatchd::JobSpec;
use nix::sys::signal::Signal;
use std::os::unix::fs::MetadataExt;

#[test]
fn job_controls_are_signals_or_commands() {
    assert_eq!(Control::parse("SIGTSTP"), Control::Signal(Signal::SIGTSTP));
    assert_eq!(Control::parse("usr2"), Control::Signal(Signal::SIGUSR2));
    assert_eq!(Control::parse("9"), Control::Signal(Signal::SIGKILL));
    assert_eq!(
        Control::parse("kill -STOP -$LSB_JOBPGIDS"),
        Control::Command("kill -STOP -$LSB_JOBPGIDS".into())
    );
    assert_eq!(
        Control::parse("/usr/local/bin/stopper"),
        Control::Command("/usr/local/bin/stopper".into())
    );
}

#[test]
fn limits() {
    let spec = JobSpec {
        rlimits: vec![-1, 0, 100, -1, 0, 2048, -1, -1, -1, 60],
        ..Default::default()
    };
    assert_eq!(limit_value(&spec, limit::CPU), None);
    assert_eq!(limit_value(&spec, limit::FSIZE), None);
    assert_eq!(limit_value(&spec, limit::DATA), Some(100));
    assert_eq!(limit_value(&spec, limit::CORE), Some(0));
    assert_eq!(limit_value(&spec, limit::RSS), Some(2048));
    assert_eq!(limit_value(&spec, limit::RUN), Some(60));
    assert_eq!(limit_value(&spec, limit::PROCESS), None);
}

#[test]
fn output_paths() {
    let spec = JobSpec {
        job_id: 9,
        idx: 2,
        is_array: true,
        ..Default::default()
    };
    assert_eq!(output_path("o.%J.%I", &spec, "out"), "o.9.2");
    assert_eq!(output_path("/tmp/", &spec, "out"), "/tmp/9_2.out");
    let plain = JobSpec {
        job_id: 9,
        ..Default::default()
    };
    assert_eq!(output_path("/tmp", &plain, "err"), "/tmp/9.err");
}

#[test]
fn job_file_names_never_collide() {
    let d = tempfile::tempdir().expect("tempdir");
    let home = d.path().to_string_lossy().into_owned();
    let me = nix::unistd::geteuid();
    let a = place_job_file(&home, me, "100.5", b"a").expect("first");
    let b = place_job_file(&home, me, "100.5", b"b").expect("second");
    assert_eq!(a, d.path().join(".lsbatch/100.5"));
    assert_eq!(b, d.path().join(".lsbatch/100.5.1"));
    assert_eq!(std::fs::read(&b).expect("read"), b"b");
    let md = std::fs::metadata(d.path().join(".lsbatch")).expect("md");
    assert_eq!(md.mode() & 0o777, 0o700);
}

#[test]
fn child_messages() {
    let ready = serde_json::to_string(&ChildMsg::Ready(ChildInfo::default())).expect("j");
    let failed = serde_json::to_string(&ChildMsg::Failed("boom".into())).expect("j");
    match parse_child_msgs(&format!("{ready}\n{failed}\n")) {
        Some(ChildMsg::Failed(m)) => assert_eq!(m, "boom"),
        other => panic!("unexpected {other:?}"),
    }
    assert!(matches!(
        parse_child_msgs(&format!("{ready}\n")),
        Some(ChildMsg::Ready(_))
    ));
    assert!(parse_child_msgs("not json\n").is_none());
}
