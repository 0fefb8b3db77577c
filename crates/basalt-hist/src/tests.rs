//! Unit tests of the shared reading and text pieces of the crate root.

use super::*;
use basalt_eventlog::parse_line;

fn rec(line: &str) -> Record {
    match parse_line(line) {
        Ok(Some(r)) => r,
        other => panic!("cannot parse {line}: {other:?}"),
    }
}

#[test]
fn names_and_ids() {
    assert_eq!(job_id_text(101, 0), "101");
    assert_eq!(job_id_text(101, 3), "101[3]");
    assert_eq!(element_name("arr[1-3]", 2), "arr[2]");
    assert_eq!(element_name("arr[1-3]", 0), "arr[1-3]");
    assert_eq!(shown_name("", "sleep 30", 0), "sleep 30");
    assert_eq!(shown_name("myjob", "sleep 30", 0), "myjob");
    assert_eq!(cwd_text("/tmp"), "/tmp");
    assert_eq!(cwd_text(""), "$HOME");
    assert_eq!(cwd_text("run"), "$HOME/run");
    let ids = parse_ids(&["12".into(), "13[2]".into()]).unwrap_or_default();
    assert!(ids[0].matches(12, 0) && ids[0].matches(12, 5));
    assert!(ids[1].matches(13, 2) && !ids[1].matches(13, 0));
    assert_eq!(parse_ids(&["x1".into()]), Err("x1".to_string()));
}

#[test]
fn dispatch_texts() {
    let one = vec!["vm".to_string()];
    assert_eq!(dispatch_text(&one, 0, true), "Dispatched to <vm>");
    assert_eq!(dispatch_text(&one, 25592, true), "Started on <vm>");
    let four: Vec<String> = ["a", "a", "a", "b"].iter().map(|s| s.to_string()).collect();
    assert_eq!(
        dispatch_text(&four, 0, true),
        "Dispatched to 4 Hosts/Processors <3*a> <b>"
    );
    assert_eq!(
        dispatch_text(&four, 0, false),
        "Dispatched to 4 Hosts/Processors <a> <a> <a> <b>"
    );
}

fn line_new(id: u64, t: i64) -> String {
    format!(
        "\"JOB_NEW\" \"40\" {t} {id} 0 2 1 {t} 0 0 -65535 0 0 \"u\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/\" \"\" \"\" \"\" \"\" \"/root\" \"{t}.{id}\" 0 \"\" \"\" \"\" \"sleep 1\" 0 \"\" \"default\" 1 \"linux\" \"\" 0 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1\n"
    )
}

fn kinds(l: &Loaded<Record>) -> Vec<(String, u64)> {
    l.records
        .iter()
        .map(|r| (r.kind().to_owned(), r.job_id().unwrap_or(0)))
        .collect()
}

#[test]
fn reading_the_current_and_older_event_files() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let logdir = dir.path();
    // Nothing there yet: no records, no error.
    let empty = read_event_records(logdir, &EventSource::Current);
    assert!(empty.is_ok_and(|l| l.records.is_empty() && l.warnings.is_empty()));

    let older = format!("#100\n{}{}", line_new(1, 100), line_new(2, 110));
    std::fs::write(logdir.join("lsb.events.2"), line_new(9, 50)).unwrap_or_default();
    std::fs::write(logdir.join("lsb.events.1"), older).unwrap_or_default();
    // Carried: job 2 (also in .1), a damaged line, job 3 (whose JOB_NEW is only here).
    let carried = format!("{}garbage\n{}", line_new(2, 110), line_new(3, 120));
    let header = format!("#{:<37}\n", 39 + carried.len());
    let fresh = format!(
        "\"JOB_STATUS\" \"40\" 130 2 64 0 0 0.0 130 0 0 0\n{}\"JOB_STA",
        line_new(4, 140)
    );
    std::fs::write(
        logdir.join("lsb.events"),
        format!("{header}{carried}{fresh}"),
    )
    .unwrap_or_default();

    let cur = read_event_records(logdir, &EventSource::Current).unwrap_or_default();
    let n = |k: &str, id: u64| (k.to_string(), id);
    assert_eq!(
        kinds(&cur),
        vec![
            n("JOB_NEW", 2),
            n("JOB_NEW", 3),
            n("JOB_STATUS", 2),
            n("JOB_NEW", 4)
        ]
    );
    assert_eq!(cur.warnings.len(), 2, "{:?}", cur.warnings);
    assert!(cur.warnings[0].contains("at line 3"), "{:?}", cur.warnings);
    assert!(
        cur.warnings[1].contains("incomplete last line"),
        "{:?}",
        cur.warnings
    );

    let two = read_event_records(logdir, &EventSource::Newest(2)).unwrap_or_default();
    assert_eq!(
        kinds(&two),
        vec![
            n("JOB_NEW", 3),
            n("JOB_NEW", 1),
            n("JOB_NEW", 2),
            n("JOB_STATUS", 2),
            n("JOB_NEW", 4)
        ]
    );
    assert!(two.warnings.iter().any(|w| w.contains("at line 3")));

    let all = read_event_records(logdir, &EventSource::Newest(0)).unwrap_or_default();
    assert_eq!(kinds(&all)[1], n("JOB_NEW", 9));
    assert_eq!(all.records.len(), 6);

    let one = read_event_records(logdir, &EventSource::File(logdir.join("lsb.events.2")))
        .unwrap_or_default();
    assert_eq!(kinds(&one), vec![n("JOB_NEW", 9)]);
}

/// Issue 30 item 8: a cleaned job a switch carried only for the dependencies that
/// name it (its carried records end with JOB_CLEAN) is not listed by `bhist -a`.
#[test]
fn cleaned_jobs_carried_for_dependencies_are_not_history() {
    let new_7 = "\"JOB_NEW\" \"40\" 100 7 0 2 1 100 0 0 -65535 0 0 \"u\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/\" \"\" \"\" \"\" \"\" \"/root\" \"100.7\" 0 \"\" \"\" \"\" \"sleep 1\" 0 \"\" \"default\" 1 \"linux\" \"\" 0 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1";
    let new_8 = new_7.replace(" 7 0 2 ", " 8 0 2 ");
    let status_7 = "\"JOB_STATUS\" \"40\" 130 7 64 0 0 0.0 130 0 0 0";
    let clean_7 = "\"JOB_CLEAN\" \"40\" 140 7 0";
    // Job 7 was cleaned (a stub for a dependency); job 8 waits (only its JOB_NEW).
    let carried = vec![rec(new_7), rec(&new_8), rec(status_7), rec(clean_7)];
    let merged = merge_carried(carried, Vec::new());
    let got: Vec<(String, u64)> = merged
        .iter()
        .map(|r| (r.kind().to_owned(), r.job_id().unwrap_or(0)))
        .collect();
    assert_eq!(got, vec![("JOB_NEW".to_string(), 8)]);
}

#[test]
fn carried_records_fill_in_jobs_missing_from_the_older_files() {
    let new_7 = "\"JOB_NEW\" \"40\" 100 7 0 2 1 100 0 0 -65535 0 0 \"u\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/\" \"\" \"\" \"\" \"\" \"/root\" \"100.7\" 0 \"\" \"\" \"\" \"sleep 1\" 0 \"\" \"default\" 1 \"linux\" \"\" 0 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1";
    let new_8 = new_7.replace(" 7 0 2 ", " 8 0 2 ");
    let start_7 = "\"JOB_START\" \"40\" 110 7 4 0 0 100.0 1 \"vm\" \"\" \"\" 0 0 \"\"";
    let start_8 = "\"JOB_START\" \"40\" 120 8 4 0 0 100.0 1 \"vm\" \"\" \"\" 0 0 \"\"";
    let status_8 = "\"JOB_STATUS\" \"40\" 130 8 64 0 0 0.0 130 0 0 0";
    // Job 7 was read from an older file: its carried copies are dropped. Job 8's JOB_NEW
    // is only in the carried part: it is kept, its carried JOB_START too because it is
    // older than the first record read for job 8.
    let carried = vec![rec(new_7), rec(&new_8), rec(start_8)];
    let main = vec![rec(new_7), rec(start_7), rec(status_8)];
    let merged = merge_carried(carried, main);
    let got: Vec<(String, u64)> = merged
        .iter()
        .map(|r| (r.kind().to_owned(), r.job_id().unwrap_or(0)))
        .collect();
    assert_eq!(
        got,
        vec![
            ("JOB_NEW".to_string(), 8),
            ("JOB_START".to_string(), 8),
            ("JOB_NEW".to_string(), 7),
            ("JOB_START".to_string(), 7),
            ("JOB_STATUS".to_string(), 8),
        ]
    );
}
