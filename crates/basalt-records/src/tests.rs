//! Round trips through the lsb.events text: event → line → event.

use super::*;

/// Event → lsb.events line → event.
fn through_the_log(ev: &Event) -> Event {
    let line = to_record(ev).to_line();
    let rec = el::parse_line(&line)
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .unwrap_or_else(|| panic!("{line}: no record"));
    from_record(&rec).unwrap_or_else(|| panic!("{line}: not replayed"))
}

fn status(term_reason: &str, usage: Option<Usage>) -> Event {
    Event::JobStatus {
        time: 1_800_000_100,
        key: (42, 3),
        status: 32,
        reasons: 0,
        subreasons: 0,
        cpu_time: 1.5,
        end_time: 1_800_000_100,
        usage,
        exit_status: 33280,
        term_reason: term_reason.into(),
    }
}

#[test]
fn term_reasons_survive_the_log() {
    let usage = Usage {
        utime: 1.0,
        stime: 0.5,
        max_mem_kb: 2048,
        avg_mem_kb: 1024,
        ..Default::default()
    };
    for ev in [
        status("TERM_RUNLIMIT", Some(usage.clone())),
        status("TERM_MEMLIMIT", Some(usage)),
        status("TERM_OWNER", None),
        status("", None),
    ] {
        assert_eq!(through_the_log(&ev), ev);
    }
}

/// brun and brun -f are told apart in the log (JOB_FORCE options, LSF's
/// RUNJOB_OPT_NORMAL / RUNJOB_OPT_NOSTOP), so a replayed mbatchd knows which job load
/// may suspend.
#[test]
fn brun_and_brun_f_survive_the_log() {
    for no_stop in [false, true] {
        let ev = Event::JobForce {
            time: 1_795_342_025,
            key: (6, 0),
            uid: 0,
            user: "root".into(),
            hosts: vec!["vm".into()],
            no_stop,
        };
        assert_eq!(through_the_log(&ev), ev);
    }
    let line = "\"JOB_FORCE\" \"22\" 1795342025 6 0 0 1 1  \"vm\" \"root\"\n";
    let rec = el::parse_line(line)
        .ok()
        .flatten()
        .expect("volclava's plain brun");
    assert!(matches!(
        from_record(&rec),
        Some(Event::JobForce { no_stop: false, .. })
    ));
}

#[test]
fn an_array_is_one_job_new_and_elements_carry_their_index() {
    let sub = Submission {
        user: "alice".into(),
        uid: 1000,
        queue: "normal".into(),
        job_name: "arr[1-10]%2".into(),
        command: "echo $LSB_JOBINDEX".into(),
        out_file: "out.%J.%I".into(),
        depend_cond: "done(first) && ended(7[2])".into(),
        rlimits: [-1; 11].into(),
        num_processors: 1,
        max_processors: 1,
        job_file: "1800000000.42".into(),
        ..Default::default()
    };
    let new = Event::JobNew {
        time: 1_800_000_000,
        job_id: 42,
        sub: Box::new(sub),
    };
    let line = to_record(&new).to_line();
    assert!(line.contains(r#""arr[1-10]%2""#), "{line}");
    assert_eq!(through_the_log(&new), new);
    let start = Event::JobStart {
        time: 1_800_000_001,
        key: (42, 7),
        hosts: vec!["hostA".into()],
        effective_res_req: String::new(),
    };
    assert_eq!(through_the_log(&start), start);
    let signal = Event::JobSignal {
        time: 1_800_000_002,
        key: (42, 7),
        uid: 1000,
        user: "alice".into(),
        signal: "KILL".into(),
    };
    assert_eq!(through_the_log(&signal), signal);
}

/// Issue 50 item 13: a spooled script's command is logged as one line of its lines
/// joined by `;` (the record writer deletes line breaks, which glued them into
/// `#!/bin/shn=0if ...` for bhist and for a replayed mbatchd).
#[test]
fn a_scripts_command_is_logged_with_its_lines_joined_by_semicolons() {
    let sub = Submission {
        user: "alice".into(),
        queue: "normal".into(),
        command: "#!/bin/sh\nn=0\nif [ $n -eq 0 ]; then\n  echo zero\nfi\n".into(),
        rlimits: [-1; 11].into(),
        num_processors: 1,
        max_processors: 1,
        ..Default::default()
    };
    let new = Event::JobNew {
        time: 1_800_000_000,
        job_id: 7,
        sub: Box::new(sub),
    };
    let line = to_record(&new).to_line();
    let want = "#!/bin/sh;n=0;if [ $n -eq 0 ]; then;  echo zero;fi";
    assert!(line.contains(&format!("\"{want}\"")), "{line}");
    match through_the_log(&new) {
        Event::JobNew { sub, .. } => assert_eq!(&*sub.command, want),
        other => panic!("{other:?}"),
    }
}

/// bsub -Ep and -Q are logged after the submission token (Basalt's JOB_NEW fields) and
/// replayed; a job without them writes no extra fields.
#[test]
fn post_exec_and_requeue_values_survive_the_log() {
    let sub = |extras: Option<Box<basalt_sched::SubExtras>>, token: &str| Submission {
        user: "alice".into(),
        queue: "normal".into(),
        command: "true".into(),
        rlimits: [-1; 11].into(),
        num_processors: 1,
        max_processors: 1,
        submit_token: token.into(),
        extras,
        ..Default::default()
    };
    for (extras, token) in [
        (
            Some(Box::new(basalt_sched::SubExtras {
                post_exec: "rm -rf /tmp/scratch.$LSB_JOBID".into(),
                requeue_exit_values: "3 EXCLUDE(4)".into(),
                esub_output: "token \"quoted\"\nline 2".into(),
                app: "fluent".into(),
                files: vec![basalt_sched::FileTransfer {
                    local: "/home/alice/in data".into(),
                    remote: "in".into(),
                    ops: basalt_core::job::xf::SUB2EXEC | basalt_core::job::xf::EXEC2SUB,
                }],
                ..Default::default()
            })),
            "",
        ),
        (
            // bsub -k "dir 10 method=criu" (LSF's chkpntDir and chkpntPeriod, Basalt's
            // method), and a brestart of an array element.
            Some(Box::new(basalt_sched::SubExtras {
                chkpnt_dir: "/ckpt".into(),
                chkpnt_period: 600,
                chkpnt_method: "criu".into(),
                restart_job: Some((41, 3)),
                ..Default::default()
            })),
            "tok",
        ),
        (
            // -k "dir" alone: LSF's fields carry it.
            Some(Box::new(basalt_sched::SubExtras {
                chkpnt_dir: "/ckpt".into(),
                ..Default::default()
            })),
            "",
        ),
        (
            // bsub -f alone: LSF's own xf field carries it.
            Some(Box::new(basalt_sched::SubExtras {
                files: vec![basalt_sched::FileTransfer {
                    local: "/a".into(),
                    remote: "/b".into(),
                    ops: basalt_core::job::xf::EXEC2SUB_APPEND,
                }],
                ..Default::default()
            })),
            "tok",
        ),
        (None, "tok"),
        (None, ""),
    ] {
        let ev = Event::JobNew {
            time: 1_800_000_000,
            job_id: 7,
            sub: Box::new(sub(extras, token)),
        };
        match (through_the_log(&ev), &ev) {
            (Event::JobNew { sub: back, .. }, Event::JobNew { sub: sent, .. }) => {
                assert_eq!(back.extras, sent.extras);
                assert_eq!(back.submit_token, sent.submit_token);
            }
            (other, _) => panic!("{other:?}"),
        }
    }
}

/// A checkpoint's order is JOB_SIGACT (`SIG_CHKPNT`, ACT_START, LSB_CHKPNT_* flags, the
/// new period or -1) and its end CHKPNT (with Basalt's reason only when it failed);
/// both replay as they were. Another JOB_SIGACT is not a checkpoint.
#[test]
fn checkpoint_records_survive_the_log() {
    for ev in [
        Event::ChkpntStart {
            time: 1_800_000_002,
            key: (9, 0),
            flags: 0x5,
            period: None,
        },
        Event::ChkpntStart {
            time: 1_800_000_002,
            key: (9, 2),
            flags: 0,
            period: Some(300),
        },
        Event::ChkpntEnd {
            time: 1_800_000_003,
            key: (9, 0),
            ok: true,
            pid: 77,
            flags: 0x5,
            period: 0,
            message: String::new(),
        },
        Event::ChkpntEnd {
            time: 1_800_000_003,
            key: (9, 0),
            ok: false,
            pid: 0,
            flags: 0,
            period: 600,
            message: "the job did not write /c/9/chkpnt.done within 60 s of SIGWINCH".into(),
        },
    ] {
        assert_eq!(through_the_log(&ev), ev);
    }
    let line = to_record(&Event::ChkpntEnd {
        time: 1_800_000_003,
        key: (9, 0),
        ok: true,
        pid: 77,
        flags: 1,
        period: 0,
        message: String::new(),
    })
    .to_line();
    assert!(line.ends_with(" 9 0 77 1 1 0"), "OpenLava's layout: {line}");
    let other =
        el::parse_line("\"JOB_SIGACT\" \"10.1\" 1800000004 9 0 0 4 0 0 1 \"SIG_SUSP_USER\" 0")
            .expect("parse")
            .expect("a record");
    assert_eq!(from_record(&other), None);
}

/// The `rusage[]` alternative a job was dispatched with is JOB_START's `effectiveResReq`
/// (LSF's field, after "userGroup"); a job without alternatives writes it empty, and a
/// record without it (an older OpenLava-layout JOB_START) replays as empty.
#[test]
fn the_rusage_alternative_survives_the_log() {
    let start = Event::JobStart {
        time: 1_800_000_001,
        key: (42, 0),
        hosts: vec!["hostA".into(), "hostA".into()],
        effective_res_req: "rusage[mem=10000MB:swp=10000MB:duration=10]".into(),
    };
    let line = to_record(&start).to_line();
    assert!(
        line.ends_with(r#""" "rusage[mem=10000MB:swp=10000MB:duration=10]""#),
        "{line}"
    );
    assert_eq!(through_the_log(&start), start);
    let plain = Event::JobStart {
        time: 1_800_000_001,
        key: (42, 0),
        hosts: vec!["hostA".into()],
        effective_res_req: String::new(),
    };
    assert_eq!(through_the_log(&plain), plain);
    // An OpenLava JOB_START: no effectiveResReq.
    let old = r#""JOB_START" "2.0" 1800000001 42 4 0 0 1.0 1 "hostA" "" "" 0 0"#;
    let rec = el::parse_line(old).unwrap().unwrap();
    assert_eq!(from_record(&rec), Some(plain));
}

/// MultiCluster (seed 004): JOB_FORWARD and JOB_ACCEPT keep the cluster, the remote
/// queue, the job's id there and the forward attempt; LSF's field order comes first.
#[test]
fn job_forward_and_job_accept_survive_the_log() {
    let fwd = Event::JobForward {
        time: 1_700_000_000,
        key: (12, 0),
        cluster: "east".into(),
        queue: "recv".into(),
    };
    assert_eq!(through_the_log(&fwd), fwd);
    let line = to_record(&fwd).to_line();
    assert!(
        line.starts_with("\"JOB_FORWARD\" \"10.1\" 1700000000 12 0 \"east\" 0 1 \"recv\""),
        "{line}"
    );
    let acc = Event::JobAccept {
        time: 1_700_000_001,
        key: (5, 0),
        cluster: "west".into(),
        src: (12, 3),
        attempt: 2,
    };
    assert_eq!(through_the_log(&acc), acc);
    let line = to_record(&acc).to_line();
    assert!(
        line.starts_with("\"JOB_ACCEPT\" \"10.1\" 1700000001 5 12 \"west\" 0 4 3 2"),
        "{line}"
    );
}
