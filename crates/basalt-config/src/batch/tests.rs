//! Tests of the lsb.* parsers.

use super::*;
use crate::shared::{HostModel, ResourceDef, ResourceKind};

fn shared() -> Shared {
    Shared {
        clusters: vec!["c".into()],
        cluster_rows: Vec::new(),
        host_types: vec!["linux".into()],
        host_models: vec![HostModel {
            name: "m".into(),
            cpu_factor: 1.0,
            architecture: None,
        }],
        resources: vec![ResourceDef {
            name: "gpu".into(),
            kind: ResourceKind::Numeric,
            interval: Some(10),
            increasing: Some(true),
            description: String::new(),
        }],
    }
}

/// A cluster of hosts h1 and h2.
fn two_hosts() -> ClusterFile {
    let host = |name: &str| crate::cluster::ClusterHost::named(name, 1);
    ClusterFile {
        hosts: vec![host("h1"), host("h2")],
        ..ClusterFile::default()
    }
}

/// What a Limit may name: the hosts of `cluster` and queue `normal`.
fn known(cluster: &ClusterFile) -> names::Known<'_> {
    names::Known {
        cluster,
        host_groups: &[],
        user_groups: &[],
        queues: ["normal".to_owned()].into(),
    }
}

fn with_ctx<T>(f: impl FnOnce(&mut Ctx<'_>) -> T) -> (T, Diag) {
    let mut d = Diag::default();
    let path = Path::new("f");
    let t = f(&mut d.file(path));
    (t, d)
}

#[test]
fn thresholds() {
    let t = |s| Threshold::parse(s).unwrap();
    assert_eq!(
        t("0.7/2.0"),
        Threshold {
            sched: Some(0.7),
            stop: Some(2.0)
        }
    );
    assert_eq!(
        t("4"),
        Threshold {
            sched: Some(4.0),
            stop: None
        }
    );
    assert_eq!(
        t("()/8"),
        Threshold {
            sched: None,
            stop: Some(8.0)
        }
    );
    assert_eq!(
        t("15/()"),
        Threshold {
            sched: Some(15.0),
            stop: None
        }
    );
    assert!(Threshold::parse("a/b").is_err());
    assert!(Threshold::parse("1/2/3").is_err());
}

#[test]
fn job_controls() {
    let m = parse_job_controls(
        "SUSPEND[SIGTSTP] resume[SIGCONT] TERMINATE[kill -9 $LSB_JOBPGIDS; echo [x]]",
    )
    .unwrap();
    assert_eq!(m["SUSPEND"], "SIGTSTP");
    assert_eq!(m["RESUME"], "SIGCONT");
    assert_eq!(m["TERMINATE"], "kill -9 $LSB_JOBPGIDS; echo [x]");
    assert!(parse_job_controls("STOP[SIGSTOP]").is_err());
    assert!(parse_job_controls("SUSPEND[SIGSTOP").is_err());
    assert!(parse_job_controls("SUSPEND").is_err());
    assert!(parse_job_controls("SUSPEND[]").is_err());
}

#[test]
fn queue_keywords() {
    let text = "Begin Queue\nQUEUE_NAME = q\nPRIORITY = 40\nPJOB_LIMIT = 1.5\nUJOB_LIMIT = 2\n\
                USERS = all ~bob\nEXCLUSIVE = Y\nTERMINATE_WHEN = load window\nINTERACTIVE = no\n\
                RERUNNABLE = yes\nRUNLIMIT = 10 60\nPROCLIMIT = 4\nBACKFILL = Y\ngpu = 1/2\n\
                SWAP = 10/5\nDISPATCH_WINDOW = 8-17\nDESCRIPTION =\nEnd Queue\n";
    let (qs, d) = with_ctx(|ctx| parse_queues(ctx, text, &shared(), &ClusterFile::default()));
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    // Only PROCLIMIT is read but not applied (PJOB_LIMIT is, issue 20; BACKFILL, issue
    // 22).
    let w: Vec<(usize, bool)> = d.warnings.iter().map(|w| (w.line, w.not_applied)).collect();
    assert_eq!(w, vec![(12, true)], "{:#?}", d.warnings);
    let q = &qs[0];
    assert!(q.backfill);
    assert_eq!(q.priority, 40);
    assert_eq!(q.pjob_limit, Some(1.5));
    assert_eq!(q.ujob_limit, Some(2));
    assert_eq!(q.users, vec!["all", "~bob"]);
    assert!(q.exclusive && q.rerunnable);
    assert_eq!(q.terminate_when, vec!["LOAD", "WINDOW"]);
    assert_eq!(q.interactive.as_deref(), Some("NO"));
    assert_eq!(q.limits["RUNLIMIT"], "10 60");
    assert_eq!(q.limits["PROCLIMIT"], "4");
    assert!(!q.other.contains_key("BACKFILL"));
    assert_eq!(q.thresholds["gpu"].stop, Some(2.0));
    assert_eq!(q.thresholds["swp"].sched, Some(10.0));
    assert!(q.dispatch_window.is_some());
    assert_eq!(q.description, "");
    assert_eq!(q.line, 1);
}

#[test]
fn stop_and_resume_conditions_are_checked() {
    let text = "Begin Queue\nQUEUE_NAME = q\nSTOP_COND = r1m > 2 && (ut > 0.9 || pg > 20)\n\
                RESUME_COND = (r1m < 1\nEnd Queue\n";
    let (qs, d) = with_ctx(|ctx| parse_queues(ctx, text, &shared(), &ClusterFile::default()));
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    let lines: Vec<usize> = d.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, vec![4], "{:?}", d.warnings);
    assert!(
        d.warnings[0].message.contains("RESUME_COND"),
        "{:?}",
        d.warnings
    );
    assert_eq!(
        qs[0].stop_cond.as_deref(),
        Some("r1m > 2 && (ut > 0.9 || pg > 20)")
    );
    assert_eq!(qs[0].resume_cond.as_deref(), Some("(r1m < 1"));
}

#[test]
fn queue_errors() {
    let text = "Begin Queue\nPRIORITY = 1\nEnd Queue\n\
                Begin Queue\nQUEUE_NAME = q\nNICE = x\nr1m = a/b\nEXCLUSIVE = maybe\n\
                INTERACTIVE = sometimes\nTERMINATE_WHEN = NEVER\nJOB_CONTROLS = X[y]\nEnd Queue\n";
    let (qs, d) = with_ctx(|ctx| parse_queues(ctx, text, &shared(), &ClusterFile::default()));
    assert_eq!(qs.len(), 1);
    let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![1, 6, 7, 8, 9, 10, 11], "{:#?}", d.errors);
}

/// A queue's RES_REQ in LSF 9.1's compound or 10.1's alternative form is an error naming
/// its line (those forms are for jobs); a simple one loads as before.
#[test]
fn a_compound_or_alternative_queue_res_req_is_refused_by_name() {
    let text = "Begin Queue\nQUEUE_NAME = a\nRES_REQ = 2*{select[bigmem]} + {select[fs]}\nEnd Queue\n\
                Begin Queue\nQUEUE_NAME = b\nRES_REQ = {select[bigmem]} || {select[fs]}\nEnd Queue\n\
                Begin Queue\nQUEUE_NAME = c\nRES_REQ = 2*{select[bigmem]\nEnd Queue\n\
                Begin Queue\nQUEUE_NAME = d\nRES_REQ = select[bigmem] rusage[mem=1||mem=2]\nEnd Queue\n";
    let (qs, d) = with_ctx(|ctx| parse_queues(ctx, text, &shared(), &ClusterFile::default()));
    let errs: Vec<(usize, &str)> = d
        .errors
        .iter()
        .map(|e| (e.line, e.message.as_str()))
        .collect();
    assert_eq!(errs.len(), 3, "{errs:#?}");
    assert_eq!(errs[0].0, 3);
    assert!(errs[0].1.contains("RES_REQ") && errs[0].1.contains("queue level"));
    assert_eq!(errs[1].0, 7);
    assert!(errs[1].1.contains("queue level"), "{errs:?}");
    assert_eq!(errs[2].0, 11);
    assert!(errs[2].1.contains("not closed"), "{errs:?}");
    let d = qs.iter().find(|q| q.name == "d").expect("queue d");
    assert_eq!(
        d.res_req.as_deref(),
        Some("select[bigmem] rusage[mem=1||mem=2]")
    );
}

#[test]
fn host_lost_grace_is_known() {
    let text = "Begin Parameters\nBASALT_HOST_LOST_GRACE = 20\nEnd Parameters\n";
    let ((p, _), d) = with_ctx(|ctx| parse_params(ctx, text));
    assert!(d.errors.is_empty() && d.warnings.is_empty(), "{d:?}");
    assert_eq!(p.other["BASALT_HOST_LOST_GRACE"], "20");
}

#[test]
fn params_defaults_and_errors() {
    let (p, d) = with_ctx(|ctx| parse_params(ctx, "Begin Parameters\nEnd Parameters\n"));
    assert!(d.errors.is_empty());
    assert_eq!(p.0, BatchParams::default());
    assert_eq!(p.0.mbd_sleep_time_secs, 60);
    assert_eq!(p.0.max_jobid, 999_999);

    let text = "Begin Parameters\nMBD_SLEEP_TIME = 0\nCLEAN_PERIOD = soon\nHIST_HOURS = -1\n\
                RESOURCE_RESERVE_PER_SLOT = Y\nMAX_JOB_PREEMPT = 3\nJOB_SPOOL_DIR = /tmp\nEnd Parameters\n";
    let (p, d) = with_ctx(|ctx| parse_params(ctx, text));
    let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![2, 3, 4]);
    // JOB_SPOOL_DIR is read but not applied; MBD_SLEEP_TIME, CLEAN_PERIOD,
    // RESOURCE_RESERVE_PER_SLOT, MAX_JOB_PREEMPT (issue 23) and HIST_HOURS (issue 24)
    // are applied (HIST_HOURS = -1 is an error).
    let w: Vec<(usize, bool)> = d.warnings.iter().map(|w| (w.line, w.not_applied)).collect();
    assert_eq!(w, vec![(7, true)], "{d:#?}");
    assert!(p.0.resource_reserve_per_slot);
    assert!(p.0.resource_reserve_per_slot);
    assert_eq!(p.0.max_job_preempt, Some(3));
    assert_eq!(p.0.other["JOB_SPOOL_DIR"], "/tmp");
    assert_eq!(p.0.event_sync, "fdatasync");

    let text = "Begin Parameters\nBASALT_EVENT_SYNC = FSYNC\nBASALT_EVENT_LOCK_HEARTBEAT = 3\n\
                End Parameters\n";
    let (p, d) = with_ctx(|ctx| parse_params(ctx, text));
    assert!(d.errors.is_empty() && d.warnings.is_empty(), "{d:?}");
    assert_eq!(p.0.event_sync, "fsync");
    assert_eq!(p.0.event_lock_heartbeat_secs, 3);
    let text = "Begin Parameters\nBASALT_EVENT_SYNC = sometimes\nBASALT_EVENT_LOCK_HEARTBEAT = 0\n\
                End Parameters\n";
    let (_, d) = with_ctx(|ctx| parse_params(ctx, text));
    let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![2, 3]);
}

#[test]
fn hosts_and_groups() {
    let text = "Begin Host\nHOST_NAME MXJ JL/U gpu CHKPNT bogus\nh1 4 1 1/2 (/ckpt) x\n\
                h2 many () () () ()\nh3 ! () () () () \nEnd Host\n\
                Begin HostGroup\nGROUP_NAME GROUP_MEMBER\ng1 (all)\ng2 (h1 g1 ~h2 !)\ng2 ()\nEnd HostGroup\n\
                Begin HostPartition\nEnd HostPartition\n";
    let (b, d) = with_ctx(|ctx| {
        let mut b = Batch::default();
        parse_hosts(ctx, text, &shared(), &mut b);
        b
    });
    // A HostPartition needs its HPART_NAME (issue 24: host partitions apply).
    let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![4, 11, 13], "{:#?}", d.errors);
    let wl: Vec<(usize, bool)> = d.warnings.iter().map(|e| (e.line, e.not_applied)).collect();
    // The unknown column, then CHKPNT, read but not applied.
    assert_eq!(wl, vec![(2, false), (2, true)], "{:#?}", d.warnings);
    assert!(
        d.warnings[1]
            .message
            .starts_with("CHKPNT is read but not applied yet")
    );
    assert_eq!(b.hosts[0].mxj, Some(Mxj::Slots(4)));
    assert_eq!(b.hosts[0].other["CHKPNT"], "/ckpt");
    assert_eq!(b.hosts[0].thresholds["gpu"].sched, Some(1.0));
    assert_eq!(b.hosts[2].mxj, Some(Mxj::Ncpus));
    assert_eq!(b.host_groups.len(), 2);
    assert_eq!(b.host_groups[1].members, vec!["h1", "g1", "~h2", "!"]);
}

#[test]
fn limits_vertical_and_horizontal() {
    let text = "Begin Limit\nNAME = day\nUSERS = alice bob\nSLOTS = 10 8:00-18:00\nMEM = 100\nEnd Limit\n\
                Begin Limit\nNAME PER_HOST SLOTS JOBS\nL1 (h1 h2) 4 -\nL2 () - 3\nEnd Limit\n\
                Begin Limit\nNAME = bad\nSLOTS = 10 25:00-1\nJOBS = many\nWIDGETS = 1\nEnd Limit\n\
                Begin Limit\nUSERS = x\nEnd Limit\n";
    let (limits, d) = with_ctx(|ctx| {
        let mut out = Vec::new();
        parse_resources(
            ctx,
            text,
            &Shared::default(),
            &known(&two_hosts()),
            &mut out,
            &mut Vec::new(),
        );
        out
    });
    let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![14, 15, 18], "{:#?}", d.errors);
    // SLOTS, JOBS and MEM (in MB) are applied; WIDGETS is unknown.
    let w: Vec<(usize, bool)> = d.warnings.iter().map(|w| (w.line, w.not_applied)).collect();
    assert_eq!(w, vec![(16, false)]);
    assert_eq!(limits.len(), 4);
    assert_eq!(limits[0].users, vec!["alice", "bob"]);
    assert_eq!(limits[0].slots, Some(10));
    assert!(limits[0].slots_window.as_ref().unwrap().is_open(1, 9 * 60));
    assert_eq!(limits[0].other["MEM"], "100");
    assert_eq!(limits[1].name, "L1");
    assert_eq!(limits[1].per_host, vec!["h1", "h2"]);
    assert_eq!(limits[1].jobs, None);
    assert_eq!(limits[1].line, 9);
    assert_eq!(limits[2].jobs, Some(3));
    assert!(limits[2].per_host.is_empty());
}

#[test]
fn users_and_applications() {
    let text = "Begin User\nUSER_NAME MAX_JOBS JL/P MAX_PEND_JOBS\nbob 10 0.5 100\nbob 1 1 1\namy x - -\nEnd User\n";
    let (b, d) = with_ctx(|ctx| {
        let mut b = Batch::default();
        parse_users(ctx, text, &mut b);
        b
    });
    let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![4, 5]);
    assert_eq!(b.users[0].jl_p, Some(0.5));
    assert_eq!(b.users[0].other["MAX_PEND_JOBS"], "100");

    let text = "Begin Application\nNAME = a\nNICE = 5\nFOO = 1\nEnd Application\n\
                Begin Application\nDESCRIPTION = x\nEnd Application\n";
    let (apps, d) = with_ctx(|ctx| {
        let mut out = Vec::new();
        parse_applications(ctx, text, &mut out);
        out
    });
    assert_eq!(apps.len(), 1);
    assert_eq!(apps[0].other["NICE"], "5");
    assert_eq!(d.errors.len(), 1);
    // NICE is read but not applied; FOO is unknown.
    let w: Vec<(usize, bool)> = d.warnings.iter().map(|w| (w.line, w.not_applied)).collect();
    assert_eq!(w, vec![(3, true), (4, false)]);
}

/// GROUP_ADMIN is kept for bugroup -l / bmgroup -l; a user group's administrators are
/// applied (they control the members' jobs), only `[usershares]` rights are not.
#[test]
fn group_admins_are_stored_and_usershares_rights_not_applied() {
    let text = "Begin UserGroup\nGROUP_NAME GROUP_MEMBER GROUP_ADMIN USER_SHARES\n\
                g1 (alice bob) (carol dave[full]) ([alice,2] [bob,1])\ng2 (all) - -\n\
                End UserGroup\n";
    let (_, d) = with_ctx(|ctx| {
        let mut b = Batch::default();
        parse_users(ctx, text, &mut b);
        b
    });
    assert!(
        !d.warnings
            .iter()
            .any(|w| w.not_applied && w.message.starts_with("GROUP_ADMIN")),
        "{d:?}"
    );
    let text = "Begin UserGroup\nGROUP_NAME GROUP_MEMBER GROUP_ADMIN USER_SHARES\n\
                g1 (alice bob) (carol erin[usershares]) ([alice,2] [bob,1])\ng2 (all) - -\n\
                End UserGroup\n";
    let (b, d) = with_ctx(|ctx| {
        let mut b = Batch::default();
        parse_users(ctx, text, &mut b);
        b
    });
    assert!(d.errors.is_empty(), "{d:?}");
    assert_eq!(b.user_groups[0].admins, vec!["carol", "erin[usershares]"]);
    assert!(b.user_groups[1].admins.is_empty());
    assert!(
        d.warnings
            .iter()
            .any(|w| w.not_applied && w.message.starts_with("GROUP_ADMIN")),
        "{d:?}"
    );
    let text =
        "Begin HostGroup\nGROUP_NAME GROUP_MEMBER GROUP_ADMIN\nhg (h1) (carol)\nEnd HostGroup\n";
    let (b, _) = with_ctx(|ctx| {
        let mut b = Batch::default();
        parse_hosts(ctx, text, &shared(), &mut b);
        b
    });
    assert_eq!(b.host_groups[0].admins, vec!["carol"]);
}

/// The errors of an lsb.params made of `body`, as `(line, message)`.
fn params_errors(body: &str) -> (BatchParams, Vec<(usize, String)>) {
    let text = format!("Begin Parameters\n{body}\nEnd Parameters\n");
    let ((p, _), d) = with_ctx(|ctx| parse_params(ctx, &text));
    assert!(d.warnings.is_empty(), "{d:?}");
    let errs = d
        .errors
        .iter()
        .map(|e| (e.line, e.message.clone()))
        .collect();
    (p, errs)
}

#[test]
fn basalt_event_sync_values() {
    for (v, want) in [
        ("fdatasync", "fdatasync"),
        ("FSYNC", "fsync"),
        ("none", "none"),
    ] {
        let (p, errs) = params_errors(&format!("BASALT_EVENT_SYNC = {v}"));
        assert!(errs.is_empty(), "{v}: {errs:?}");
        assert_eq!(p.event_sync, want);
    }
    let (p, errs) = params_errors("MBD_SLEEP_TIME = 10\nBASALT_EVENT_SYNC = sometimes");
    assert_eq!(
        errs,
        vec![(
            3,
            "BASALT_EVENT_SYNC must be fdatasync, fsync or none, found `sometimes`".to_owned()
        )]
    );
    assert_eq!(p.event_sync, "fdatasync");
}

#[test]
fn basalt_event_lock_heartbeat_values() {
    let (p, errs) = params_errors("BASALT_EVENT_LOCK_HEARTBEAT = 7");
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(p.event_lock_heartbeat_secs, 7);
    for (v, msg) in [
        (
            "0",
            "BASALT_EVENT_LOCK_HEARTBEAT must be at least 1, found `0`",
        ),
        (
            "often",
            "BASALT_EVENT_LOCK_HEARTBEAT: expected a non-negative integer, found `often`",
        ),
    ] {
        let (p, errs) = params_errors(&format!("BASALT_EVENT_LOCK_HEARTBEAT = {v}"));
        assert_eq!(errs, vec![(2, msg.to_owned())], "{v}");
        assert_eq!(p.event_lock_heartbeat_secs, 1);
    }
}

#[test]
fn basalt_sbd_hello_interval_values() {
    for v in ["3", "0"] {
        let (p, errs) = params_errors(&format!("BASALT_SBD_HELLO_INTERVAL = {v}"));
        assert!(errs.is_empty(), "{v}: {errs:?}");
        assert_eq!(p.other["BASALT_SBD_HELLO_INTERVAL"], v);
    }
    for v in ["3s", "-1", "1.5"] {
        let (_, errs) = params_errors(&format!("\nBASALT_SBD_HELLO_INTERVAL = {v}"));
        assert_eq!(
            errs,
            vec![(
                3,
                format!("BASALT_SBD_HELLO_INTERVAL: expected a non-negative integer, found `{v}`")
            )]
        );
    }
}

#[test]
fn basalt_host_lost_grace_values() {
    let (p, errs) = params_errors("BASALT_HOST_LOST_GRACE = 20");
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(p.other["BASALT_HOST_LOST_GRACE"], "20");
    let (_, errs) = params_errors("BASALT_HOST_LOST_GRACE = 2m");
    assert_eq!(
        errs,
        vec![(
            2,
            "BASALT_HOST_LOST_GRACE: expected a non-negative integer, found `2m`".to_owned()
        )]
    );
}

#[test]
fn basalt_params_errors_name_the_file() {
    let path = Path::new("/conf/lsbatch/c1/configdir/lsb.params");
    let mut diag = Diag::default();
    let text = "Begin Parameters\nBASALT_HOST_LOST_GRACE = soon\nEnd Parameters\n";
    let _ = parse_params(&mut diag.file(path), text);
    assert_eq!(diag.errors.len(), 1, "{:?}", diag.errors);
    assert_eq!(
        diag.errors[0].to_string(),
        "/conf/lsbatch/c1/configdir/lsb.params:2: \
         BASALT_HOST_LOST_GRACE: expected a non-negative integer, found `soon`"
    );
}

#[test]
fn requeue_exit_values_take_codes_all_with_exceptions_and_exclude() {
    use crate::batch::RequeueValues;
    let v = RequeueValues::parse("all ~1 ~2 EXCLUDE(9)").expect("parse");
    assert_eq!(v.requeue_for(9), Some(true));
    assert_eq!(v.requeue_for(1), None);
    assert_eq!(v.requeue_for(2), None);
    assert_eq!(v.requeue_for(3), Some(false));
    assert_eq!(v.requeue_for(0), None);
    let v = RequeueValues::parse("99 100").expect("parse");
    assert_eq!((v.requeue_for(99), v.requeue_for(1)), (Some(false), None));
    for bad in ["x", "256", "EXCLUDE 3", "EXCLUDE(3", "~1"] {
        assert!(RequeueValues::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn reservation_usage_methods_and_errors() {
    let mut shared = Shared::default();
    shared.resources.push(crate::shared::ResourceDef {
        name: "licA".into(),
        kind: crate::shared::ResourceKind::Numeric,
        interval: None,
        increasing: None,
        description: String::new(),
    });
    shared.resources.push(crate::shared::ResourceDef {
        name: "fast".into(),
        kind: crate::shared::ResourceKind::Boolean,
        interval: None,
        increasing: None,
        description: String::new(),
    });
    let text = "Begin ReservationUsage\nRESOURCE METHOD RESERVE\nlicA PER_JOB N\nmem PER_TASK\n\
                fast PER_JOB N\nnosuch PER_HOST N\ntmp PER_NODE N\nswp PER_HOST Y\nlicA PER_TASK N\n\
                End ReservationUsage\n";
    let (usage, d) = with_ctx(|ctx| {
        let mut usage = Vec::new();
        parse_resources(
            ctx,
            text,
            &shared,
            &known(&two_hosts()),
            &mut Vec::new(),
            &mut usage,
        );
        usage
    });
    let got: Vec<(&str, ReserveMethod, bool)> = usage
        .iter()
        .map(|u| (u.resource.as_str(), u.method, u.reserve))
        .collect();
    assert_eq!(
        got,
        vec![
            ("licA", ReserveMethod::PerJob, false),
            ("mem", ReserveMethod::PerTask, false),
            ("swp", ReserveMethod::PerHost, true),
        ]
    );
    // A Boolean, an unknown resource, a bad METHOD, a resource given twice.
    let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![5, 6, 7, 9], "{:#?}", d.errors);
    // RESERVE=Y is read and not applied.
    let w: Vec<(usize, bool)> = d.warnings.iter().map(|w| (w.line, w.not_applied)).collect();
    assert_eq!(w, vec![(8, true)]);
}

/// SLOTS_PER_PROCESSOR applies with PER_HOST; without it it is read but not applied; a
/// value that is not a positive number is an error.
#[test]
fn slots_per_processor_needs_per_host() {
    let text = "Begin Limit\nNAME = a\nPER_HOST = all\nSLOTS_PER_PROCESSOR = 1.5\nEnd Limit\n\
                Begin Limit\nNAME = b\nUSERS = all\nSLOTS_PER_PROCESSOR = 2\nEnd Limit\n\
                Begin Limit\nNAME = c\nPER_HOST = all\nSLOTS_PER_PROCESSOR = many\nEnd Limit\n";
    let (limits, d) = with_ctx(|ctx| {
        let mut out = Vec::new();
        parse_resources(
            ctx,
            text,
            &Shared::default(),
            &known(&two_hosts()),
            &mut out,
            &mut Vec::new(),
        );
        out
    });
    assert_eq!(limits.len(), 3);
    let w: Vec<(usize, bool)> = d.warnings.iter().map(|w| (w.line, w.not_applied)).collect();
    assert_eq!(w, vec![(9, true)], "{:#?}", d.warnings);
    let e: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
    assert_eq!(e, vec![14], "{:#?}", d.errors);
}

/// JOB_INCLUDE_POSTPROC takes Y or N and JOB_POSTPROC_TIMEOUT a number of minutes more
/// than 0, in lsb.params and in an application profile (where they apply, no warning).
#[test]
fn job_include_postproc_and_postproc_timeout_values() {
    let (p, errs) = params_errors("JOB_INCLUDE_POSTPROC = y\nJOB_POSTPROC_TIMEOUT = 5");
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(p.other["JOB_INCLUDE_POSTPROC"], "Y");
    assert_eq!(p.other["JOB_POSTPROC_TIMEOUT"], "5");
    let (p, errs) = params_errors("JOB_INCLUDE_POSTPROC = maybe\nJOB_POSTPROC_TIMEOUT = 0");
    assert_eq!(
        errs,
        vec![
            (
                2,
                "JOB_INCLUDE_POSTPROC must be Y or N, found `maybe`".to_owned()
            ),
            (
                3,
                "JOB_POSTPROC_TIMEOUT must be more than 0 minutes".to_owned()
            ),
        ]
    );
    assert!(!p.other.contains_key("JOB_INCLUDE_POSTPROC"));
    let text = "Begin Application\nNAME = a\nJOB_INCLUDE_POSTPROC = N\nJOB_POSTPROC_TIMEOUT = x\n\
                End Application\n";
    let (apps, d) = with_ctx(|ctx| {
        let mut out = Vec::new();
        parse_applications(ctx, text, &mut out);
        out
    });
    assert!(d.warnings.is_empty(), "{d:?}");
    let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![4]);
    assert_eq!(apps[0].other["JOB_INCLUDE_POSTPROC"], "N");
    assert!(!apps[0].other.contains_key("JOB_POSTPROC_TIMEOUT"));
}

#[test]
fn preemption_settings_are_parsed_and_checked() {
    let text = "Begin Parameters\nPREEMPT_FOR = HOST_JLU MINI_JOB\nPREEMPTION_WAIT_TIME = 60\n\
                NO_PREEMPT_RUN_TIME = 50%\nNO_PREEMPT_FINISH_TIME = 10\nEnd Parameters\n";
    let (p, d) = with_ctx(|ctx| parse_params(ctx, text));
    assert!(d.errors.is_empty() && d.warnings.is_empty(), "{d:#?}");
    assert!(p.0.preempt_for_keys.host_jlu && p.0.preempt_for_keys.mini_job);
    assert_eq!(p.0.preemption_wait_time_secs, Some(60));
    assert_eq!(p.0.no_preempt_run_time, Some(NoPreemptTime::Percent(50.0)));
    assert_eq!(p.0.no_preempt_finish_time, Some(NoPreemptTime::Minutes(10)));
    let text =
        "Begin Parameters\nPREEMPT_FOR = ALWAYS\nNO_PREEMPT_RUN_TIME = later\nEnd Parameters\n";
    let (_, d) = with_ctx(|ctx| parse_params(ctx, text));
    let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![2, 3]);
}

#[test]
fn host_partitions() {
    let text = "Begin HostPartition\nHPART_NAME = part1\nHOSTS = hostA hostB\n\
                USER_SHARES = [alice, 2] [default, 1]\nEnd HostPartition\n\
                Begin HostPartition\nHPART_NAME = part1\nHOSTS = all\n\
                USER_SHARES = [bob, 1]\nEnd HostPartition\n\
                Begin HostPartition\nHPART_NAME = p2\nHOSTS = all\n\
                USER_SHARES = [bob]\nEnd HostPartition\n";
    let (b, d) = with_ctx(|ctx| {
        let mut b = Batch::default();
        parse_hosts(ctx, text, &shared(), &mut b);
        b
    });
    let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![6, 14, 11], "{:#?}", d.errors);
    assert_eq!(b.host_partitions.len(), 1);
    let p = &b.host_partitions[0];
    assert_eq!(
        (p.name.as_str(), p.hosts.len(), p.user_shares.len()),
        ("part1", 2, 2)
    );
}

/// lsb.hosts MIG: minutes (the automatic-migration threshold of the host's jobs), `()`
/// for none; anything else is an error naming the line.
#[test]
fn host_mig_column() {
    let text = "Begin Host\nHOST_NAME MXJ MIG\nh1 4 5\nh2 4 ()\nh3 4 soon\nEnd Host\n";
    let (b, d) = with_ctx(|ctx| {
        let mut b = Batch::default();
        parse_hosts(ctx, text, &shared(), &mut b);
        b
    });
    let lines: Vec<usize> = d.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![5], "{:#?}", d.errors);
    assert!(d.warnings.is_empty(), "{:#?}", d.warnings);
    assert_eq!(b.hosts[0].other["MIG"], "5");
    assert!(!b.hosts[1].other.contains_key("MIG"));
}

fn parse_user_map(text: &str) -> (Batch, Diag) {
    with_ctx(|ctx| {
        let mut b = Batch::default();
        parse_users(ctx, text, &mut b);
        b
    })
}

/// LSF's UserMap: LOCAL, REMOTE (`user@cluster`), DIRECTION; a list in parentheses.
#[test]
fn user_map_rows_are_read_with_their_lists_in_order() {
    let text = "Begin UserMap\n\
                LOCAL        REMOTE                       DIRECTION\n\
                alice        bob@west                     import\n\
                (carol dave) (eve@west frank@north)       EXPORT\n\
                End UserMap\n";
    let (b, d) = parse_user_map(text);
    assert!(d.errors.is_empty() && d.warnings.is_empty(), "{d:?}");
    let r = |u: &str, c: &str| RemoteUser {
        user: u.into(),
        cluster: c.into(),
    };
    assert_eq!(
        b.user_map.rows,
        vec![
            UserMapRow {
                local: vec!["alice".into()],
                remote: vec![r("bob", "west")],
                direction: MapDirection::Import,
                line: 3,
            },
            UserMapRow {
                local: vec!["carol".into(), "dave".into()],
                remote: vec![r("eve", "west"), r("frank", "north")],
                direction: MapDirection::Export,
                line: 4,
            },
        ]
    );
}

/// "import maps remote users to the local one for jobs received": by the remote user
/// and the cluster the job comes from; "export maps local users to remote ones for jobs
/// sent": by the local user and the cluster it goes to.
#[test]
fn user_map_imports_by_remote_user_and_cluster_and_exports_by_local_user_and_cluster() {
    let text = "Begin UserMap\n\
                LOCAL          REMOTE                        DIRECTION\n\
                alice          bob@west                      import\n\
                (user6 user8)  (user3@west user3@north)      import\n\
                user9          user3@west                    import\n\
                (carol dave)   (eve@west frank@north)        export\n\
                carol          zed@west                      export\n\
                End UserMap\n";
    let (b, d) = parse_user_map(text);
    assert!(d.errors.is_empty(), "{d:?}");
    let m = &b.user_map;
    assert_eq!(m.import("west", "bob"), vec!["alice"]);
    // Another cluster's bob, or a direction the row does not give: no mapping.
    assert!(m.import("north", "bob").is_empty());
    assert!(m.import("west", "alice").is_empty());
    assert!(m.import("west", "eve").is_empty());
    // Several local users: in file order, each once.
    assert_eq!(m.import("west", "user3"), vec!["user6", "user8", "user9"]);
    assert_eq!(m.import("north", "user3"), vec!["user6", "user8"]);
    // Export: the cluster's user of the first row naming the local user.
    assert_eq!(m.export("carol", "west"), Some("eve"));
    assert_eq!(m.export("dave", "north"), Some("frank"));
    assert_eq!(m.export("carol", "east"), None);
    assert_eq!(m.export("alice", "west"), None);
    assert_eq!(m.export("bob", "west"), None);
}

/// A bad UserMap row is an error naming the file and its line; the good rows stay.
#[test]
fn bad_user_map_rows_are_errors_naming_file_and_line() {
    let text = "Begin UserMap\n\
                LOCAL   REMOTE      DIRECTION\n\
                alice   bob@west    import\n\
                alice   bob         import\n\
                alice   bob@west    both\n\
                a@west  bob@west    export\n\
                alice   bob@west\n\
                alice   (bob@west @north x@) export\n\
                End UserMap\n\
                Begin UserMap\n\
                LOCAL   REMOTE\n\
                alice   bob@west\n\
                End UserMap\n";
    let (b, d) = parse_user_map(text);
    let errs: Vec<String> = d.errors.iter().map(ToString::to_string).collect();
    let at = |line: usize, what: &str| {
        assert!(
            errs.iter()
                .any(|e| e.starts_with(&format!("f:{line}: ")) && e.contains(what)),
            "no error at line {line} about {what}: {errs:#?}"
        );
    };
    at(4, "REMOTE `bob`: expected user@cluster");
    at(5, "DIRECTION must be import or export, found `both`");
    at(6, "LOCAL `a@west`");
    at(7, "missing DIRECTION");
    at(8, "REMOTE `@north`");
    at(8, "REMOTE `x@`");
    at(11, "required column DIRECTION is missing");
    assert_eq!(errs.len(), 7, "{errs:#?}");
    assert_eq!(b.user_map.rows.len(), 1);
    assert_eq!(b.user_map.rows[0].line, 3);
}

/// What cannot take effect is said: a user group in LOCAL is an error (users only), a
/// remote cluster that is not one a warning, and so is an export a row above already
/// gives.
#[test]
fn user_map_entries_that_cannot_apply_are_refused_or_warned_about() {
    let text = "Begin UserGroup\n\
                GROUP_NAME  GROUP_MEMBER\n\
                staff       (alice bob)\n\
                End UserGroup\n\
                Begin UserMap\n\
                LOCAL   REMOTE              DIRECTION\n\
                staff   bob@west            import\n\
                alice   bob@nowhere         import\n\
                alice   (x@west y@here)     export\n\
                alice   z@west              export\n\
                End UserMap\n";
    let mut cluster = ClusterFile {
        name: "here".into(),
        ..Default::default()
    };
    cluster.remote_clusters.push(crate::cluster::RemoteCluster {
        name: "west".into(),
        equiv: false,
        cache_interval: 60,
        recv_from: true,
        auth: None,
    });
    let (_, d) = with_ctx(|ctx| {
        let mut b = Batch::default();
        parse_users(ctx, text, &mut b);
        check_user_map(ctx, &b, &shared(), &cluster);
        b
    });
    let errs: Vec<(usize, String)> = d
        .errors
        .iter()
        .map(|e| (e.line, e.message.clone()))
        .collect();
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].0, 7);
    assert!(errs[0].1.contains("`staff` is a user group"), "{errs:#?}");
    let warns: Vec<(usize, String)> = d
        .warnings
        .iter()
        .map(|w| (w.line, w.message.clone()))
        .collect();
    assert_eq!(
        warns.iter().map(|w| w.0).collect::<Vec<_>>(),
        vec![8, 9, 10],
        "{warns:#?}"
    );
    assert!(warns[0].1.contains("bob@nowhere") && warns[0].1.contains("RemoteClusters"));
    assert!(warns[1].1.contains("y@here") && warns[1].1.contains("is this cluster"));
    assert!(
        warns[2]
            .1
            .contains("already exported to cluster west at line 9")
    );
}

#[test]
fn basalt_requeue_delay_values() {
    let (p, errs) = params_errors("BASALT_REQUEUE_DELAY = 30");
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(p.other["BASALT_REQUEUE_DELAY"], "30");
    for (v, msg) in [
        (
            "0",
            "BASALT_REQUEUE_DELAY must be at least 1 second".to_owned(),
        ),
        (
            "1m",
            "BASALT_REQUEUE_DELAY: expected a non-negative integer, found `1m`".to_owned(),
        ),
    ] {
        let (p, errs) = params_errors(&format!("BASALT_REQUEUE_DELAY = {v}"));
        assert_eq!(errs, vec![(2, msg)], "{v}");
        assert!(!p.other.contains_key("BASALT_REQUEUE_DELAY"), "{v}");
    }
}
