//! Unit tests of `bacct`'s formats and selection.
use super::*;
use basalt_cli::batch::timefmt;
use basalt_eventlog::{Record, parse_line};

fn fx() -> Fx {
    Fx {
        tm: timefmt::utc,
        now: 1_795_400_000,
        short_hosts: true,
    }
}

/// event-log.md §5: the OpenLava 4 lsb.acct record of job 102.
const FINISH_102: &str = "\"JOB_FINISH\" \"40\" 1795339540 102 0 33554451 1 1795339535 0 0 1795339540 \"root\" \"normal\" \"\" \"\" \"\" \"vm\" \"/home/alice/run\" \"\" \"/home/alice/run/out.%J\" \"\" \"1795339535.102\" 0 1 \"vm\" 64 100.0 \"myjob\" \"env | grep -E \"\"^LSB_|^LSF_|^LS_\"\" | sort\" 0.008610 0.015018 3976 0 -1 0 0 1053 3 0 912 32 -1 0 0 0 24 6 -1 \"\" \"default\" 0 1 \"\" 0 3976 11224 \"\" \"\"";

fn finish(line: &str) -> JobFinish {
    match parse_line(line) {
        Ok(Some(Record::JobFinish(f))) => *f,
        other => panic!("cannot parse {line}: {other:?}"),
    }
}

/// Job 103: submitted at 09:25:35, started 09:25:45, exited with 3 at 09:27:15
/// after 20 s of CPU, 200 MB of memory.
fn exited_103() -> JobFinish {
    let mut f = finish(FINISH_102);
    f.job_id = 103;
    f.header.time = 1_795_339_635;
    f.start_time = 1_795_339_545;
    f.j_status = status::EXIT;
    f.exit_status = 3 << 8;
    f.options &= !basalt_core::job::sub::JOB_NAME;
    f.job_name = String::new();
    f.command = "sleep 100".into();
    f.out_file = String::new();
    f.rusage.utime = 15.0;
    f.rusage.stime = 5.0;
    f.max_rmem = 200 * 1024;
    f.max_rswap = 300 * 1024;
    f.user_name = "alice".into();
    f.queue = "short".into();
    f
}

fn all() -> Filter {
    Filter::new(
        &Args {
            user: Some("all".into()),
            ..Args::default()
        },
        Vec::new(),
        "root",
    )
}

#[test]
fn accounting_figures() {
    let a = acct(&finish(FINISH_102));
    assert_eq!(a.wait, 5);
    assert_eq!(a.turnaround, 5);
    assert!(a.done);
    assert!((a.cpu - 0.023628).abs() < 1e-9);
    assert_eq!(a.mem_mb, 3);
    assert_eq!(a.swap_mb, 10);
    let b = acct(&exited_103());
    assert_eq!((b.wait, b.turnaround, b.done), (10, 100, false));
    assert!((b.hog - 0.2).abs() < 1e-12);
    // A job killed while pending waited until its end.
    let mut c = exited_103();
    c.start_time = 0;
    assert_eq!(acct(&c).wait, 100);
}

#[test]
fn long_report_matches_lsf() {
    let recs = vec![finish(FINISH_102)];
    let ids = super::super::parse_ids(&["102".into()]).unwrap_or_default();
    let filter = Filter::new(&Args::default(), ids, "nobody");
    let text = report(&recs, true, &filter, &fx()).unwrap_or_default();
    let expected = "
Accounting information about jobs that are: 
  - submitted by all users.
  - accounted on all projects.
  - completed normally or exited
  - executed on all hosts.
  - submitted to all queues.
  - accounted on all service classes.
------------------------------------------------------------------------------

Job <102>, Job Name <myjob>, User <root>, Project <default>, Status <DONE>, Que
                     ue <normal>, Command <env | grep -E \"^LSB_|^LSF_|^LS_\" | s
                     ort>
Sun Nov 22 09:25:35: Submitted from host <vm>, CWD </home/alice/run>, Output Fi
                     le </home/alice/run/out.%J>;
Sun Nov 22 09:25:40: Dispatched to <vm>;
Sun Nov 22 09:25:40: Completed <done>.

Accounting information about this job:
     CPU_T     WAIT     TURNAROUND   STATUS     HOG_FACTOR    MEM    SWAP
      0.02        5              5     done         0.0047     3M     10M
------------------------------------------------------------------------------

SUMMARY:      ( time unit: second ) 
 Total number of done jobs:       1      Total number of exited jobs:     0
 Total CPU time consumed:       0.0      Average CPU time consumed:     0.0
 Maximum CPU time of a job:     0.0      Minimum CPU time of a job:     0.0
 Total wait time in queues:     5.0
 Average wait time in queue:    5.0
 Maximum wait time in queue:    5.0      Minimum wait time in queue:    5.0
 Average turnaround time:         5 (seconds/job)
 Maximum turnaround time:         5      Minimum turnaround time:         5
 Average hog factor of a job:  0.00 ( cpu time / turnaround time )
 Maximum hog factor of a job:  0.00      Minimum hog factor of a job:  0.00

";
    assert_eq!(text, expected);
    assert!(text.contains("Completed <done>"));
}

#[test]
fn summary_over_several_jobs_with_throughput() {
    let recs = vec![finish(FINISH_102), exited_103()];
    let text = report(&recs, false, &all(), &fx()).unwrap_or_default();
    let expected = "
Accounting information about jobs that are: 
  - submitted by all users.
  - accounted on all projects.
  - completed normally or exited
  - executed on all hosts.
  - submitted to all queues.
  - accounted on all service classes.
------------------------------------------------------------------------------

SUMMARY:      ( time unit: second ) 
 Total number of done jobs:       1      Total number of exited jobs:     1
 Total CPU time consumed:      20.0      Average CPU time consumed:    10.0
 Maximum CPU time of a job:    20.0      Minimum CPU time of a job:     0.0
 Total wait time in queues:    15.0
 Average wait time in queue:    7.5
 Maximum wait time in queue:   10.0      Minimum wait time in queue:    5.0
 Average turnaround time:        52 (seconds/job)
 Maximum turnaround time:       100      Minimum turnaround time:         5
 Average hog factor of a job:  0.10 ( cpu time / turnaround time )
 Maximum hog factor of a job:  0.20      Minimum hog factor of a job:  0.00
 Total throughput:            75.79 (jobs/hour)  during    0.03 hours
 Beginning time:       Nov 22 09:25      Ending time:          Nov 22 09:27

";
    assert_eq!(text, expected);
}

#[test]
fn exited_job_block_and_selection_lines() {
    let recs = vec![finish(FINISH_102), exited_103()];
    let a = Args {
        user: Some("alice".into()),
        queue: Some("short".into()),
        exited: true,
        long: true,
        ..Args::default()
    };
    let filter = Filter::new(&a, Vec::new(), "root");
    let text = report(&recs, true, &filter, &fx()).unwrap_or_default();
    assert!(text.starts_with(
            "\nAccounting information about jobs that are: \n  - submitted by users alice, \n  - accounted on all projects.\n  - exited\n  - executed on all hosts.\n  - submitted to queues short, \n"
        ));
    assert!(text.contains(
            "\nJob <103>, User <alice>, Project <default>, Status <EXIT>, Queue <short>, Comma\n                     nd <sleep 100>\n"
        ));
    assert!(text.contains("Sun Nov 22 09:27:15: Completed <exit>.\n"));
    assert!(
        text.contains(
            "     20.00       10            100     exit         0.2000   200M    300M\n"
        )
    );
    assert!(!text.contains("Job <102>"));
}

#[test]
fn selection() {
    let recs = vec![finish(FINISH_102), exited_103()];
    let pick = |a: &Args, ids: &[&str], caller: &str| -> Vec<u64> {
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        let f = Filter::new(a, super::super::parse_ids(&ids).unwrap_or_default(), caller);
        recs.iter()
            .filter(|r| f.matches(r))
            .map(|r| r.job_id)
            .collect()
    };
    let d = Args::default();
    assert_eq!(pick(&d, &[], "root"), vec![102]);
    assert_eq!(pick(&d, &[], "alice"), vec![103]);
    assert!(pick(&d, &[], "bob").is_empty());
    assert_eq!(pick(&d, &["103"], "bob"), vec![103]);
    let done = Args {
        user: Some("all".into()),
        done: true,
        ..Args::default()
    };
    assert_eq!(pick(&done, &[], "bob"), vec![102]);
    let named = Args {
        user: Some("all".into()),
        job_name: Some("sleep*".into()),
        ..Args::default()
    };
    assert_eq!(pick(&named, &[], "bob"), vec![103]);
    let host = Args {
        user: Some("all".into()),
        host: Some("other".into()),
        ..Args::default()
    };
    assert!(pick(&host, &[], "bob").is_empty());
    assert!(report(&recs, false, &Filter::new(&d, Vec::new(), "bob"), &fx()).is_none());
}

#[test]
fn arguments() {
    let items = basalt_cli::batch::opts::parse(
        &["-l".into(), "-uall".into(), "7".into(), "8[2]".into()],
        &SPEC,
        false,
    )
    .unwrap_or_default();
    let a = args_from(items);
    assert!(a.long);
    assert_eq!(a.user.as_deref(), Some("all"));
    assert_eq!(a.ids, vec!["7".to_string(), "8[2]".to_string()]);
}
