//! The event-log checks shared by the fuzz targets `eventlog_line` and `eventlog_file`
//! (run by cargo-fuzz on nightly) and by the stable test
//! `crates/basalt-eventlog/tests/reader_fuzz.rs`, which includes this file with `#[path]`
//! so that both run exactly the same entry points.
//!
//! **Inputs**: arbitrary bytes. **Outputs**: nothing; a check panics (an assertion) when
//! the event-log reader panics or breaks one of the properties below. Errors returned by
//! the reader are expected and fine.
//!
//! * [`check_line`]: `split_fields` and `parse_line` on the bytes (as the readers see a
//!   line: lossy UTF-8). A parsed record written back with `to_line` must parse again, and
//!   writing that record again must give the same line (writer and parser reach a fixed
//!   point after one round) — for lines without NUL, CR or LF inside, which the writer
//!   deletes; re-joining split fields must split into the same fields.
//! * [`check_files`]: the bytes become `lsb.events` and `lsb.acct` in a directory, read by
//!   [`EventReader`] (with and without `skip_carried_over`), [`read_acct`],
//!   [`EventLog::open`] and [`AcctLog::open`]. When `EventLog::open` accepts the file it
//!   must return exactly the records the read-only reader yields; after one append the
//!   file must reopen cleanly with one more record. The same holds for `lsb.acct`.

use std::path::Path;

use basalt_eventlog::{
    ACCT_FILE, AcctLog, EVENTS_FILE, EventLog, EventReader, Field, Header, JobClean, JobFinish,
    Record, parse_line, read_acct, split_fields,
};

/// The text a reader makes of a line's bytes.
fn text_of(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// What a string field becomes once written: the writer deletes newline, carriage
/// return and NUL characters.
fn written_text(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '\n' | '\r' | '\0'))
        .collect()
}

/// Tokenizer, line parser and writer on one line.
pub fn check_line(data: &[u8]) {
    let text = text_of(data);

    if let Ok(fields) = split_fields(&text) {
        let mut line = String::new();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                line.push(' ');
            }
            f.write_to(&mut line);
        }
        let again = split_fields(&line)
            .unwrap_or_else(|e| panic!("re-joined fields do not split: {e}\nline: {line:?}"));
        assert_eq!(
            again.len(),
            fields.len(),
            "re-joined fields split differently\nline: {line:?}"
        );
        for (a, b) in fields.iter().zip(&again) {
            assert_eq!(
                written_text(a.text()),
                b.text(),
                "a field changed when written and split again\nline: {line:?}"
            );
            if let Field::Str(_) = a {
                assert!(matches!(b, Field::Str(_)), "a string became a number");
            }
        }
    }

    // The writer deletes NUL, CR and LF from strings (a line never holds a newline, and
    // Basalt never writes the others), so a record whose strings hold them is written
    // back as a different one ("\02*hA" becomes the host list "2*hA"). The round trip is
    // checked for every other line; those are only checked not to panic.
    let body = text.strip_suffix('\n').unwrap_or(&text);
    let body = body.strip_suffix('\r').unwrap_or(body);
    let written_as_is = !body.bytes().any(|b| matches!(b, b'\0' | b'\r' | b'\n'));

    if let Ok(Some(rec)) = parse_line(&text) {
        let l1 = rec.to_line();
        if !written_as_is {
            let _ = parse_line(&l1);
            return;
        }
        assert!(!l1.contains('\n'), "a written record spans lines: {l1:?}");
        let r2 = match parse_line(&l1) {
            Ok(Some(r)) => r,
            Ok(None) => panic!("a written record reads back as no record\nline: {l1:?}"),
            Err(e) => panic!("a written record does not parse: {e}\nline: {l1:?}"),
        };
        let l2 = r2.to_line();
        assert_eq!(l1, l2, "writing a record read back changes its line");
    }
}

/// Put `data` in `dir` as `lsb.events` and `lsb.acct` and read them every way there is.
///
/// `dir` is reused between calls (its two files are replaced).
pub fn check_files(dir: &Path, data: &[u8]) {
    let events = dir.join(EVENTS_FILE);
    let acct = dir.join(ACCT_FILE);
    for p in [&events, &acct] {
        if let Err(e) = std::fs::write(p, data) {
            panic!("cannot write {}: {e}", p.display());
        }
    }

    // The read-only readers (bhist, bacct): they never change the file.
    let mut read = Vec::new();
    let mut damaged = 0usize;
    let mut torn = false;
    if let Ok(reader) = EventReader::open(&events) {
        let mut reader = reader.include_unknown(true);
        for item in reader.by_ref() {
            match item {
                Ok(r) => read.push(r),
                Err(_) => damaged += 1,
            }
        }
        torn = reader.torn_tail().is_some();
    }
    if let Ok(reader) = EventReader::open(&events)
        && let Ok(reader) = reader.skip_carried_over()
    {
        let n = reader.count();
        assert!(
            n <= read.len() + damaged,
            "skipping carried-over records yields more than the whole file"
        );
    }
    let mut acct_read = 0usize;
    if let Ok(reader) = read_acct(&acct) {
        acct_read = reader.filter(Result::is_ok).count();
    }
    assert_eq!(
        std::fs::read(&events).ok().as_deref(),
        Some(data),
        "a read-only reader changed the file"
    );

    // mbatchd's replay: accepts the file only when every complete line parses.
    match EventLog::open(dir) {
        Ok((mut log, replay)) => {
            assert_eq!(damaged, 0, "EventLog::open accepted damaged lines");
            assert_eq!(
                replay.records, read,
                "EventLog::open and EventReader disagree"
            );
            assert_eq!(
                replay.torn_tail.is_some(),
                torn,
                "torn tail seen by one only"
            );
            let extra = Record::JobClean(JobClean {
                header: Header::new(1_795_339_535),
                job_id: 4242,
                idx: 7,
            });
            if let Err(e) = log.append(std::slice::from_ref(&extra)) {
                panic!("append after open failed: {e}");
            }
            drop(log);
            match EventLog::open(dir) {
                Ok((_, again)) => {
                    assert!(again.torn_tail.is_none(), "torn tail after a clean append");
                    assert_eq!(again.records.len(), read.len() + 1, "record count");
                    assert_eq!(again.records.last(), Some(&extra), "the appended record");
                }
                Err(e) => panic!("reopening after an append failed: {e}"),
            }
        }
        Err(e) => {
            assert!(
                damaged > 0,
                "EventLog::open refused a file the reader found nothing wrong with: {e}"
            );
        }
    }

    // mbatchd's accounting appender: cuts a torn tail, then appends whole lines.
    if let Ok((mut log, _torn)) = AcctLog::open(dir) {
        let fin = JobFinish {
            header: Header::new(1_795_339_540),
            job_id: 4343,
            user_name: "fuzz".into(),
            ..JobFinish::default()
        };
        if let Err(e) = log.append(std::slice::from_ref(&fin)) {
            panic!("lsb.acct append failed: {e}");
        }
        drop(log);
        match read_acct(&acct) {
            Ok(reader) => {
                let all: Vec<_> = reader.collect();
                let ok = all.iter().filter(|r| r.is_ok()).count();
                assert_eq!(ok, acct_read + 1, "JOB_FINISH records after one append");
                match all.last() {
                    Some(Ok(last)) => assert_eq!(last, &fin, "the appended JOB_FINISH"),
                    other => panic!("lsb.acct does not end with the appended record: {other:?}"),
                }
            }
            Err(e) => panic!("cannot read lsb.acct back: {e}"),
        }
    }
}
