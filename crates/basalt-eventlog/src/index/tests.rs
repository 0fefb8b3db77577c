//! Tests of the job-id index: format, row order, scanning, rebuild and lookup.

use super::scan::parse_time_header;
use super::*;
use crate::record::parse_line;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
}

fn write(path: &Path, text: &str) {
    fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn job_new(id: u64, t: i64) -> String {
    format!(
        "\"JOB_NEW\" \"40\" {t} {id} 0 2 1 {t} 0 0 -65535 0 0 \"u\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/\" \"\" \"\" \"\" \"\" \"/root\" \"{t}.{id}\" 0 \"\" \"\" \"\" \"sleep 1\" 0 \"\" \"default\" 1 \"linux\" \"\" 0 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1\n"
    )
}

/// An old event file with a `#<time>` header and jobs `ids`.
fn old_file(t: i64, ids: &[u64]) -> String {
    let mut s = format!("#{t:<37}\n");
    for id in ids {
        s.push_str(&job_new(*id, t - 10));
        s.push_str(&format!("\"JOB_CLEAN\" \"40\" {t} {id} 0\n"));
    }
    s.push_str(&format!("\"LOG_SWITCH\" \"40\" {t} 999\n"));
    s
}

#[test]
fn job_ids_of_every_job_record_kind() {
    let lines = [
        (job_new(101, 5), Some(101)),
        (
            "\"JOB_START\" \"40\" 1795339540 102 4 0 0 100.0 1 \"vm\" \"\" \"\" 2097160 0 \"\""
                .to_owned(),
            Some(102),
        ),
        (
            "\"JOB_SWITCH\" \"22\" 1795342025 0 5 \"lowq\" 0 \"root\"".to_owned(),
            Some(5),
        ),
        (
            "\"JOB_MOVE\" \"22\" 1795342025 0 6 1 1 0 \"root\"".to_owned(),
            Some(6),
        ),
        (
            "\"JOB_FORCE\" \"22\" 1795342025 7 0 0 1 1  \"vm\" \"root\"".to_owned(),
            Some(7),
        ),
        (
            "\"JOB_MODIFY2\" \"40\" 1795339586 \"103[1-3]\" 8388609 4096 0 0 \"root\"".to_owned(),
            Some(103),
        ),
        ("\"CHKPNT\" \"40\" 1795339586 104 1 2".to_owned(), Some(104)),
        (
            "\"JOB_CLEAN\" \"40\" 1795341358 521 0".to_owned(),
            Some(521),
        ),
        ("\"LOG_SWITCH\" \"40\" 1795341347 623".to_owned(), None),
        (
            "\"QUEUE_CTRL\" \"40\" 1795342025 2 \"lowq\" 0 \"root\" \"\"".to_owned(),
            None,
        ),
        ("#168                                  ".to_owned(), None),
        ("garbage".to_owned(), None),
        ("\"JOB_STATUS\" \"40\" 1795339540".to_owned(), None),
        ("\"JOB_CLEAN\" \"40\" 1795341358 0 0".to_owned(), None),
    ];
    for (line, want) in &lines {
        assert_eq!(line_job_id(line.as_bytes()), *want, "{line}");
        // Agrees with the full parser wherever the full parser knows the type.
        if let Ok(Some(r)) = parse_line(line)
            && !matches!(r, crate::Record::Unknown { .. })
            && want.is_some()
        {
            assert_eq!(r.job_id(), *want, "{line}");
        }
    }
}

#[test]
fn text_round_trip_and_layout() {
    let rows = vec![
        IndexRow::new(1_795_341_347, (101..=122).rev()),
        IndexRow::new(1_795_341_359, [522, 521, 420, 419, 521]),
        IndexRow::new(0, []),
    ];
    let index = JobIdIndex::new(1_795_341_360, rows);
    let text = index.to_text();
    let first = text.lines().next().unwrap_or_default();
    assert_eq!(first.len(), HEADER_LEN - 1);
    assert!(first.starts_with("#LSF_JOBID_INDEX_FILE 10.1 3 1795341360 "));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], "#1795341347 22 101 122");
    assert_eq!(lines[2], "122 121 120 119 118 117 116 115 114 113");
    assert_eq!(lines[4], "102 101");
    assert_eq!(lines[5], "#1795341359 4 419 522");
    assert_eq!(lines[6], "522 521 420 419");
    assert_eq!(lines[7], "#0 0 0 0");
    assert_eq!(lines.len(), 8);
    assert_eq!(JobIdIndex::parse(&text), Ok(index));
}

#[test]
fn reads_openlava_files_and_rejects_broken_ones() {
    // OpenLava's min/max bug (both the same) and its integer version.
    let text = "#LSF_JOBID_INDEX_FILE 40 1 1795341359                                        \n#1795341347 3 101 101\n522 521 101\n";
    let index = JobIdIndex::parse(text).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(index.version, "40");
    assert!(index.rows[0].contains(521) && index.rows[0].contains(101));
    assert!(!index.rows[0].contains(102));
    assert_eq!(
        (index.rows[0].min_job_id(), index.rows[0].max_job_id()),
        (101, 522)
    );
    for (bad, line) in [
        ("", 1),
        ("#LSF_JOBID_INDEX 40 1 5\n", 1),
        ("#LSF_JOBID_INDEX_FILE 40 x 5\n", 1),
        ("#LSF_JOBID_INDEX_FILE 40 1 5\n1 2 3\n", 2),
        ("#LSF_JOBID_INDEX_FILE 40 1 5\n#7 2 1 2\n1 x\n", 3),
        ("#LSF_JOBID_INDEX_FILE 40 1 5\n#7 2 1 2\n1 2 3\n", 3),
        ("#LSF_JOBID_INDEX_FILE 40 2 5\n#7 0 0 0\n", 3),
    ] {
        match JobIdIndex::parse(bad) {
            Err((l, _)) => assert_eq!(l, line, "{bad:?}"),
            Ok(i) => panic!("{bad:?} parsed as {i:?}"),
        }
    }
}

#[test]
fn rebuild_writes_one_row_per_old_file_oldest_first() {
    let dir = tmp();
    let d = dir.path();
    write(
        &d.join("lsb.events"),
        &format!("#{:<37}\n{}", 39, job_new(9, 1)),
    );
    write(&d.join("lsb.events.2"), &old_file(1000, &[1, 2, 3]));
    write(&d.join("lsb.events.1"), &old_file(2000, &[3, 4]));
    write(&d.join("lsb.events.0"), &old_file(3000, &[5]));
    let report = rebuild_at(d, 4000).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        report,
        IndexReport {
            rows: 2,
            scanned: 2,
            incremental: false
        }
    );
    let text = fs::read_to_string(d.join(INDEX_FILE)).unwrap_or_default();
    assert!(text.starts_with("#LSF_JOBID_INDEX_FILE 10.1 2 4000 "));
    assert!(text.contains("\n#1000 3 1 3\n3 2 1\n#2000 2 3 4\n4 3\n"));
    assert!(!d.join("lsb.events.index.tmp").exists());

    assert_eq!(
        lookup(d, &[4]).unwrap_or_default(),
        Some(vec![d.join("lsb.events.1")])
    );
    assert_eq!(
        lookup(d, &[3]).unwrap_or_default(),
        Some(vec![d.join("lsb.events.2"), d.join("lsb.events.1")])
    );
    assert_eq!(lookup(d, &[9]).unwrap_or_default(), Some(vec![]));
}

#[test]
fn gaps_get_empty_rows() {
    let dir = tmp();
    let d = dir.path();
    write(&d.join("lsb.events.3"), &old_file(1000, &[1]));
    write(&d.join("lsb.events.1"), &old_file(3000, &[3]));
    rebuild_at(d, 4000).unwrap_or_else(|e| panic!("{e}"));
    let index = JobIdIndex::read(d)
        .ok()
        .flatten()
        .unwrap_or_else(|| panic!("no index"));
    assert_eq!(index.rows.len(), 3);
    assert_eq!(index.rows[1], IndexRow::default());
    assert_eq!(
        lookup(d, &[1, 3]).unwrap_or_default(),
        Some(vec![d.join("lsb.events.3"), d.join("lsb.events.1")])
    );
}

#[test]
fn incremental_update_after_a_switch() {
    let dir = tmp();
    let d = dir.path();
    write(&d.join("lsb.events.1"), &old_file(1000, &[1, 2]));
    rebuild_at(d, 1001).unwrap_or_else(|e| panic!("{e}"));
    // A switch: .1 -> .2, a new .1.
    fs::rename(d.join("lsb.events.1"), d.join("lsb.events.2")).unwrap_or_default();
    write(&d.join("lsb.events.1"), &old_file(2000, &[2, 3]));
    let r = update_after_switch_at(d, 2001).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.incremental && r.scanned == 1 && r.rows == 2, "{r:?}");
    let incremental = fs::read_to_string(d.join(INDEX_FILE)).unwrap_or_default();
    rebuild_at(d, 2001).unwrap_or_else(|e| panic!("{e}"));
    let full = fs::read_to_string(d.join(INDEX_FILE)).unwrap_or_default();
    assert_eq!(incremental, full);

    // A switch the index missed: two new files at once -> full rebuild.
    fs::rename(d.join("lsb.events.2"), d.join("lsb.events.4")).unwrap_or_default();
    fs::rename(d.join("lsb.events.1"), d.join("lsb.events.3")).unwrap_or_default();
    write(&d.join("lsb.events.2"), &old_file(3000, &[4]));
    write(&d.join("lsb.events.1"), &old_file(4000, &[5]));
    let r = update_after_switch_at(d, 4001).unwrap_or_else(|e| panic!("{e}"));
    assert!(!r.incremental && r.scanned == 4, "{r:?}");

    // A row whose time stamp no longer matches its file -> full rebuild.
    fs::rename(d.join("lsb.events.4"), d.join("lsb.events.5")).unwrap_or_default();
    fs::rename(d.join("lsb.events.3"), d.join("lsb.events.4")).unwrap_or_default();
    fs::rename(d.join("lsb.events.2"), d.join("lsb.events.3")).unwrap_or_default();
    write(&d.join("lsb.events.2"), &old_file(4500, &[5]));
    write(&d.join("lsb.events.1"), &old_file(5000, &[6]));
    let r = update_after_switch_at(d, 5001).unwrap_or_else(|e| panic!("{e}"));
    assert!(!r.incremental, "{r:?}");
    assert_eq!(
        lookup(d, &[5]).unwrap_or_default(),
        Some(vec![d.join("lsb.events.2")])
    );

    // A damaged index is rebuilt.
    write(&d.join(INDEX_FILE), "junk\n");
    assert!(JobIdIndex::read(d).is_err());
    assert_eq!(lookup(d, &[5]).unwrap_or_default(), None);
    let r = update_after_switch_at(d, 6000).unwrap_or_else(|e| panic!("{e}"));
    assert!(!r.incremental && r.rows == 5, "{r:?}");
}

#[test]
fn lookup_needs_an_index_that_matches_the_files() {
    let dir = tmp();
    let d = dir.path();
    assert_eq!(lookup(d, &[1]).unwrap_or_default(), None);
    write(&d.join("lsb.events.2"), &old_file(1000, &[1]));
    write(&d.join("lsb.events.1"), &old_file(2000, &[2]));
    rebuild_at(d, 2001).unwrap_or_else(|e| panic!("{e}"));
    assert!(lookup(d, &[1]).unwrap_or_default().is_some());
    // A switch without an index update: the rows no longer match.
    fs::rename(d.join("lsb.events.2"), d.join("lsb.events.3")).unwrap_or_default();
    fs::rename(d.join("lsb.events.1"), d.join("lsb.events.2")).unwrap_or_default();
    write(&d.join("lsb.events.1"), &old_file(3000, &[3]));
    assert_eq!(lookup(d, &[1]).unwrap_or_default(), None);

    // Rows newest first (event-log.md's wording) are understood too.
    let rows = vec![
        IndexRow::new(3000, [3]),
        IndexRow::new(2000, [2]),
        IndexRow::new(1000, [1]),
    ];
    JobIdIndex::new(3001, rows)
        .write(d)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        lookup(d, &[1]).unwrap_or_default(),
        Some(vec![d.join("lsb.events.3")])
    );
}

#[test]
fn lookup_reads_only_the_rows_that_can_hold_the_ids() {
    let wanted = |v: &[u64]| v.iter().copied().collect::<BTreeSet<u64>>();
    // OpenLava's min == max: the ids are read.
    let ol = "#LSF_JOBID_INDEX_FILE 40 2 9\n#5 3 101 101\n522 521 101\n#6 0 0 0\n";
    let rows = scan_for(ol, &wanted(&[521])).unwrap_or_default();
    assert_eq!(
        rows,
        vec![
            RowHit {
                time_stamp: 5,
                nonempty: true,
                hit: true
            },
            RowHit {
                time_stamp: 6,
                nonempty: false,
                hit: false
            }
        ]
    );
    // Basalt's rows: a row whose range excludes the ids is skipped unread (a bad id
    // there is not even seen), a row whose range includes them is read.
    let b = "#LSF_JOBID_INDEX_FILE 10.1 2 9\n#5 2 1 2\n2 x\n#6 2 10 12\n12 10\n";
    let rows = scan_for(b, &wanted(&[10])).unwrap_or_default();
    assert_eq!(
        rows.iter().map(|r| r.hit).collect::<Vec<_>>(),
        vec![false, true]
    );
    assert_eq!(scan_for(b, &wanted(&[1])), None);
    let rows = scan_for(b, &wanted(&[11])).unwrap_or_default();
    assert_eq!(
        rows.iter().map(|r| r.hit).collect::<Vec<_>>(),
        vec![false, false]
    );
    assert_eq!(
        scan_for("#LSF_JOBID_INDEX_FILE 10.1 3 9\n#5 0 0 0\n", &wanted(&[1])),
        None
    );
}

#[test]
fn header_times() {
    assert_eq!(
        parse_time_header(b"#1795341359                       \n"),
        1_795_341_359
    );
    assert_eq!(parse_time_header(b"#80\n"), 80);
    assert_eq!(parse_time_header(b"\"JOB_NEW\""), 0);
    assert_eq!(parse_time_header(b""), 0);
}
