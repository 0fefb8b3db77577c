//! `JOB_MODIFY2` (`bmod`): OpenLava's layout, Basalt's tail after the mark, and how
//! foreign dialects are read.

use basalt_core::job::sub;
use basalt_eventlog::*;

/// event-log.md §5: OpenLava 4's `bmod -J newname 103`.
const OPENLAVA: &str = r#""JOB_MODIFY2" "40" 1795339586 "103" 8388609 4096 0 0 "root" 1795339586 18 2147483646 0 0 0 0 "newname" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 "/root" "" "vm" "" 956046368 2147483646 "" 0"#;

fn parse(line: &str) -> Record {
    match parse_line(line) {
        Ok(Some(r)) => r,
        other => panic!("{line}: {other:?}"),
    }
}

fn modify2(r: &Record) -> &JobModify2 {
    match r {
        Record::JobModify2(m) => m,
        other => panic!("not a JOB_MODIFY2: {other:?}"),
    }
}

#[test]
fn the_openlava_example_rewrites_byte_for_byte() {
    let r = parse(OPENLAVA);
    assert_eq!(r.kind(), "JOB_MODIFY2");
    assert_eq!(
        (r.job_id(), r.idx(), r.time()),
        (Some(103), Some(0), 1_795_339_586)
    );
    assert_eq!(modify2(&r).job_name, "newname");
    assert_eq!(r.to_line(), OPENLAVA);
}

#[test]
fn openlava_surplus_fields_are_ignored_and_missing_ones_are_errors() {
    let r = parse(&format!("{OPENLAVA} \"extra\" 5"));
    assert_eq!(r.to_line(), OPENLAVA);
    // delOptions2 missing: OpenLava's reader refuses the line too.
    let short = OPENLAVA.strip_suffix(" 0").unwrap_or(OPENLAVA);
    let e = parse_line(short).unwrap_err();
    assert_eq!(e.field, 36, "{e}");
    // A field the options announce is missing (queue with SUB_QUEUE set).
    let bad = OPENLAVA.replace(" 8388609 ", " 8388611 ");
    assert!(parse_line(&bad).is_err());
}

#[test]
fn basalt_writes_the_mark_and_its_fields_at_the_end() {
    let m = JobModify2 {
        header: Header::new(1_795_339_600),
        job_id_str: "103[3]".into(),
        options: sub::QUEUE | sub::MODIFY,
        user_name: "alice".into(),
        queue: "short".into(),
        basalt_options: modify::REQUEUE | modify::CWD_DEL,
        requeue_exit_values: "99 EXCLUDE(2)".into(),
        ..JobModify2::default()
    };
    let r = Record::from(m.clone());
    assert_eq!((r.job_id(), r.idx()), (Some(103), Some(3)));
    let line = r.to_line();
    assert_eq!(
        line,
        "\"JOB_MODIFY2\" \"10.1\" 1795339600 \"103[3]\" 8388610 0 0 0 \"alice\" 0 18 \
         2147483646 0 0 0 0 \"short\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" \"\" \"\" \"\" \
         0 2147483646 \"\" 0 \"BASALT\" 132 \"\" \"99 EXCLUDE(2)\" \"\" \"\" \"\""
    );
    assert_eq!(parse(&line), r);
    // A newer Basalt's fields after userGroup are kept verbatim.
    let later = format!("{line} 7 \"x\"");
    let m2 = modify2(&parse(&later)).clone();
    assert_eq!(m2.basalt_extra, vec![Field::int(7), Field::str("x")]);
    assert_eq!(Record::from(m2).to_line(), later);
    // Basalt's fields are read while present.
    let cut = line.replace(" 132 \"\" \"99 EXCLUDE(2)\" \"\" \"\" \"\"", " 132");
    let m3 = modify2(&parse(&cut)).clone();
    assert_eq!(m3.basalt_options, 132);
    assert!(m3.requeue_exit_values.is_empty());
}

#[test]
fn a_dotted_record_without_the_mark_is_kept_verbatim() {
    // An IBM LSF record: its layout is not OpenLava's; it stays Unknown, byte for byte.
    let ibm = OPENLAVA.replace("\"40\"", "\"10.108\"");
    let r = parse(&ibm);
    let Record::Unknown { kind, fields, .. } = &r else {
        panic!("{r:?}")
    };
    assert_eq!(kind, "JOB_MODIFY2");
    assert_eq!(fields[0], Field::str("103"));
    assert_eq!(r.to_line(), ibm);
    let odd = "\"JOB_MODIFY2\" \"9.13\" 1 \"7\" 1 2 \"three\"";
    assert!(matches!(parse(odd), Record::Unknown { .. }));
    assert_eq!(parse(odd).to_line(), odd);
}

#[test]
fn volclava_post_exec_follows_pre_exec() {
    let m = JobModify2 {
        header: Header {
            version: "22".into(),
            time: 5,
        },
        job_id_str: "9".into(),
        options: sub::PRE_EXEC | VOLCLAVA_SUB_POST_EXEC | sub::MAIL_USER,
        pre_exec_cmd: "pre".into(),
        post_exec_cmd: "post".into(),
        mail_user: "bob".into(),
        ..JobModify2::default()
    };
    let line = Record::from(m.clone()).to_line();
    assert!(line.contains(r#""pre" "post" "bob""#), "{line}");
    assert!(!line.contains("BASALT"), "{line}");
    assert_eq!(parse(&line), Record::from(m.clone()));
    // OpenLava has no postExecCmd: not written even with the bit set.
    let ol = JobModify2 {
        header: Header {
            version: "40".into(),
            time: 5,
        },
        ..m
    };
    let line = Record::from(ol).to_line();
    assert!(line.contains(r#""pre" "bob""#), "{line}");
}

#[test]
fn default_changes_nothing() {
    let m = JobModify2::default();
    assert_eq!(m.rlimits, [-1; rlimit::COUNT]);
    assert_eq!(
        (m.num_processors, m.max_num_processors),
        (modify::DEFAULT_NUMPRO, modify::DEFAULT_NUMPRO)
    );
    assert_eq!((m.begin_time, m.term_time, m.user_priority), (0, 0, -1));
    assert_eq!(
        (m.options, m.options2, m.del_options, m.basalt_options),
        (0, 0, 0, 0)
    );
    assert_eq!(
        [
            modify::POST_EXEC,
            modify::POST_EXEC_DEL,
            modify::REQUEUE,
            modify::REQUEUE_DEL,
            modify::APP,
            modify::APP_DEL,
            modify::CWD,
            modify::CWD_DEL,
            modify::USER_GROUP,
            modify::USER_GROUP_DEL
        ],
        [0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80, 0x100, 0x200]
    );
}
