//! Tests of `bqueues` and `bhosts`' formats (shared with `policies` and `hq_custom`).

use super::*;

/// The default `normal` queue as bqueues gets it (shared with `policies`' tests).
pub(crate) fn normal() -> QueueInfo {
    QueueInfo {
        name: "normal".into(),
        description: "For normal low priority jobs.".into(),
        priority: 30,
        open: true,
        active: true,
        max_jobs: -1,
        jl_u: -1,
        jl_p: -1.0,
        jl_h: -1,
        is_default: true,
        ..Default::default()
    }
}

#[test]
fn queue_table_matches_the_reference() {
    let got = queues_table(&[normal()], false);
    assert_eq!(
        got,
        "QUEUE_NAME      PRIO STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN  SUSP \n\
normal           30  Open:Active       -    -    -    -     0     0     0     0\n"
    );
    let mut q = normal();
    q.name = "a_very_long_queue_name".into();
    q.open = false;
    q.active = false;
    q.max_jobs = 10;
    q.jl_p = 2.0;
    q.njobs = 3;
    q.pend = 1;
    q.run = 1;
    q.ssusp = 1;
    q.ususp = 0;
    let got = queues_table(&[q.clone()], false);
    assert!(
        got.ends_with(
            "*ong_queue_name  30  Closed:Inact     10    -    2    -     3     1     1     1\n"
        ),
        "{got}"
    );
    let got = queues_table(&[q], true);
    assert!(
        got.contains("a_very_long_queue_name  30  Closed:Inact"),
        "{got}"
    );
}

#[test]
fn queue_long_format() {
    let mut q = normal();
    q.load_sched.insert("r15s".into(), 0.3);
    let got = queues_long(&[q.clone(), q]);
    assert!(got.starts_with("\nQUEUE: normal\n  -- For normal low priority jobs.  This is the default queue.\n\nPARAMETERS/STATISTICS\nPRIO NICE     STATUS       MAX JL/U JL/P JL/H NJOBS  PEND  RUN  SSUSP USUSP  RSV\n  30    0     Open:Active    -    -    -    -     0     0    0      0     0    0\n"), "{got}");
    assert!(got.contains("\nSCHEDULING PARAMETERS\n           r15s"));
    assert!(got.contains(" loadSched  0.3 "));
    assert!(got.contains(&format!("{}\n\nQUEUE: normal", "-".repeat(79))));
}

fn vm() -> BatchHostInfo {
    BatchHostInfo {
        name: "vm".into(),
        status: "ok".into(),
        long_status: "ok".into(),
        jl_u: -1,
        max: 2,
        cpu_factor: 100.0,
        ..Default::default()
    }
}

#[test]
fn host_table_matches_the_reference() {
    let got = hosts_table(&[vm()], false);
    assert_eq!(
        got,
        "HOST_NAME          STATUS       JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV \n\
vm                 ok              -      2      0      0      0      0      0\n"
    );
    let mut h = vm();
    h.name = "a-very-long-host-name.example.org".into();
    h.status = "closed".into();
    h.long_status = "closed_Adm".into();
    h.jl_u = 1;
    h.njobs = 2;
    h.run = 2;
    let got = hosts_table(&[h.clone()], false);
    assert!(
        got.ends_with(
            "\n*-name.example.org closed          1      2      2      2      0      0      0\n"
        ),
        "{got}"
    );
    let got = hosts_table(&[h], true);
    assert!(
        got.starts_with("HOST_NAME          STATUS          JL/U"),
        "{got}"
    );
    assert!(
        got.contains("\na-very-long-host-name.example.org closed_Adm         1      2"),
        "{got}"
    );
}

#[test]
fn host_long_format() {
    let mut h = vm();
    h.load = vec![
        basalt_proto::common::LoadValue {
            name: "r15s".into(),
            value: 0.5,
        },
        basalt_proto::common::LoadValue {
            name: "ut".into(),
            value: 0.25,
        },
        basalt_proto::common::LoadValue {
            name: "mem".into(),
            value: 2048.0,
        },
    ];
    h.message = "maintenance".into();
    h.reserved = vec![basalt_proto::common::LoadValue {
        name: "mem".into(),
        value: 800.0,
    }];
    let got = hosts_long(&[h]);
    assert!(got.starts_with("HOST  vm\nSTATUS           CPUF  JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV DISPATCH_WINDOW\nok             100.00     -      2      0      0      0      0      0 -\n"), "{got}");
    assert!(got.contains(" ADMIN ACTION COMMENT: \"maintenance\"\n"));
    assert!(
        got.contains(
            " Total         0.5     -     -   25%     -     -    -     -     -     -  2.0G\n"
        ),
        "{got}"
    );
    assert!(
        got.contains(
            " Reserved      0.0   0.0   0.0    0%   0.0     0    0     0    0M    0M  800M\n"
        ),
        "{got}"
    );
    assert!(got.contains(" LOAD THRESHOLD USED FOR SCHEDULING:\n           r15s"));
    assert!(!got.contains("scratch"));
}

/// Issue 50 item 10: bhosts -l shows the external indices (an ELIM's) after the
/// built-in ones: their load and reservations, and their thresholds.
#[test]
fn host_long_shows_external_indices() {
    let lv = |name: &str, value| basalt_proto::common::LoadValue {
        name: name.into(),
        value,
    };
    let mut h = vm();
    h.load = vec![lv("r15s", 0.5), lv("scratch", 100.0), lv("licences", 3.0)];
    h.reserved = vec![lv("licences", 1.0)];
    h.load_stop.insert("scratch".into(), 10.0);
    let got = hosts_long(&[h]);
    let (load, thresholds) = got
        .split_once(" LOAD THRESHOLD USED FOR SCHEDULING:\n")
        .expect("sections");
    assert!(
        load.ends_with(
            " Reserved      0.0   0.0   0.0    0%   0.0     0    0     0    0M    0M    0M\n\n              licences scratch\n Total             3.0   100.0\n Reserved          1.0     0.0\n\n"
        ),
        "{got}"
    );
    assert!(
        thresholds.ends_with(
            "\n              licences scratch\n loadSched           -       -\n loadStop            -    10.0\n\n"
        ),
        "{got}"
    );
}
