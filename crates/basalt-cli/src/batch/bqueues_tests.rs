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

/// Issue 50 item 11: bqueues -l shows everything in force as LSF does: the commands,
/// requeue values, rerunnable, checkpointing, the scheduling policies, slot
/// reservation, the conditions, job controls, the admin comment; USERS and HOSTS as
/// configured (groups with their `/`), not expanded; RUNLIMIT in minutes.
#[test]
fn issue_50_item_11_long_shows_everything_in_force() {
    let mut q = normal();
    q.name = "eng".into();
    q.description = "Engineering".into();
    q.is_default = false;
    q.open = false;
    q.admin_comment = "maintenance friday".into();
    q.users = vec!["alice".into(), "bob".into()];
    q.users_configured = vec!["eng/".into()];
    q.hosts = vec!["hostA".into(), "hostB".into()];
    q.hosts_configured = vec!["hg_ab/".into()];
    q.settings.insert("RUNLIMIT".into(), "10".into());
    q.pre_exec = "/bin/pre".into();
    q.post_exec = "/bin/post".into();
    q.job_starter = "/bin/starter".into();
    q.requeue_exit_values = "99".into();
    q.rerunnable = true;
    q.chkpnt_dir = "/scratch/chk".into();
    q.chkpnt_period = 600;
    q.backfill = true;
    q.exclusive = true;
    q.slot_reserve_secs = 50;
    q.resume_cond = "r1m<1.0".into();
    q.stop_cond = "r1m>3.0".into();
    q.job_controls.insert("SUSPEND".into(), "SIGTSTP".into());
    q.terminate_when = vec!["WINDOW".into()];
    q.mig_minutes = Some(30);
    q.accept_interval_secs = Some(20);
    let got = queues_long(&[q]);
    for want in [
        "\nQUEUE: eng\n  -- Engineering\n\nPARAMETERS/STATISTICS\n",
        "Closed:Active",
        "    0    0\nMigration threshold is 30 minutes\nInterval for a host to accept two jobs is 20 seconds\n",
        "\n RUNLIMIT                \n 10.0 min                \n\nSCHEDULING PARAMETERS\n",
        "\nSCHEDULING POLICIES:  BACKFILL  EXCLUSIVE\n",
        "\nUSERS: eng/\nHOSTS:  hg_ab/\n",
        "\nPRE_EXEC:  /bin/pre\nPOST_EXEC:  /bin/post\nREQUEUE_EXIT_VALUES:  99\n",
        "\nMaximum slot reservation time: 50 seconds\nRESUME_COND:  r1m<1.0\nSTOP_COND:  r1m>3.0\nJOB_STARTER:  /bin/starter\nRERUNNABLE :  yes\nCHKPNTDIR : /scratch/chk\nCHKPNTPERIOD : 600\nADMIN ACTION COMMENT: \"maintenance friday\"\n\nJOB_CONTROLS:\n    SUSPEND:     [SIGTSTP]\n\nTERMINATE_WHEN = WINDOW\n",
    ] {
        assert!(got.contains(want), "missing {want:?} in\n{got}");
    }
    assert!(!got.contains("alice"), "{got}");
    assert!(!got.contains("\n 10\n"), "{got}");
    // A default and a maximum: LSF's two blocks; a host spec stays with its limit.
    let mut q = normal();
    q.settings.insert("RUNLIMIT".into(), "5 1:30".into());
    q.settings.insert("CPULIMIT".into(), "10/hostA".into());
    let got = queues_long(&[q]);
    assert!(
        got.contains(
            "\nDEFAULT LIMITS:\n RUNLIMIT                \n 5.0 min                 \n\nMAXIMUM LIMITS:\n CPULIMIT                 RUNLIMIT                \n 10.0 min of hostA        90.0 min                \n"
        ),
        "{got}"
    );
    // Nothing configured: none of these lines.
    let got = queues_long(&[normal()]);
    for absent in [
        "PRE_EXEC",
        "POLICIES",
        "RERUNNABLE",
        "CHKPNT",
        "ADMIN ACTION",
        "JOB_CONTROLS",
        "COND",
        "Maximum slot",
        "LIMITS",
        "TERMINATE_WHEN",
        "Migration",
        "Interval",
    ] {
        assert!(!got.contains(absent), "{absent} in\n{got}");
    }
    assert!(got.contains("\nUSERS: all\nHOSTS:  all\n"), "{got}");
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
