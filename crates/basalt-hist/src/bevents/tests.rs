//! Unit tests of `bevents` (arguments, verify, dump, replay).

use super::*;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn arguments() {
    let Ok(Parsed::Run(a)) = parse_args(&s(&[
        "json",
        "--type",
        "job_new,JOB_STATUS",
        "--job=12",
        "-j",
        "13[2]",
        "-d",
        "/x",
    ])) else {
        panic!("not parsed");
    };
    assert_eq!(a.cmd, Cmd::Json);
    assert_eq!(a.logdir.as_deref(), Some(Path::new("/x")));
    assert_eq!(
        a.types.iter().cloned().collect::<Vec<_>>(),
        vec!["JOB_NEW", "JOB_STATUS"]
    );
    assert_eq!(a.jobs.iter().copied().collect::<Vec<_>>(), vec![12, 13]);
    assert_eq!(parse_args(&s(&["-h"])), Ok(Parsed::Help));
    assert_eq!(parse_args(&s(&["replay", "-V"])), Ok(Parsed::Version));
    let Ok(Parsed::Run(a)) = parse_args(&s(&["replay", "-l", "--json", "--until", "12:30"])) else {
        panic!("not parsed");
    };
    assert!(a.long && a.json && a.until.as_deref() == Some("12:30"));
    let Ok(Parsed::Run(a)) = parse_args(&s(&["verify", "a", "b"])) else {
        panic!("not parsed");
    };
    assert_eq!(a.files, vec![PathBuf::from("a"), PathBuf::from("b")]);
    for bad in [
        vec![],
        vec!["frobnicate"],
        vec!["verify", "-Z"],
        vec!["verify", "-d"],
        vec!["verify", "a", "-d", "/x"],
        vec!["replay", "file"],
        vec!["verify", "--until", "5"],
        vec!["replay", "--type", "JOB_NEW"],
        vec!["json", "--job", "x1"],
    ] {
        assert!(parse_args(&s(&bad)).is_err(), "{bad:?}");
    }
}

/// A wall clock in UTC for the tests.
fn utc_epoch(y: i32, mon0: i32, d: i32, h: i32, m: i32) -> Option<i64> {
    // days_from_civil (proleptic Gregorian), months normalised like mktime.
    let (y, mon0) = (y + mon0.div_euclid(12), mon0.rem_euclid(12));
    let (yy, mm) = if mon0 < 2 {
        (y - 1, mon0 + 13)
    } else {
        (y, mon0 + 1)
    };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * (mm - 3) + 2) / 5;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = i64::from(era) * 146_097 + i64::from(doe) - 719_468 + i64::from(d) - 1;
    Some(days * 86_400 + i64::from(h) * 3600 + i64::from(m) * 60)
}

#[test]
fn times() {
    // Now: Sun Nov 22 09:25:35 2026 UTC.
    let now = 1_795_339_535;
    let tm = timefmt::utc(now);
    let today = (tm.year, tm.mon, tm.mday);
    let p = |v: &str| parse_time(v, now, today, utc_epoch);
    assert_eq!(p("1795339000"), Ok(1_795_339_000));
    assert_eq!(p("09:25"), Ok(1_795_339_500));
    // Later today -> yesterday.
    assert_eq!(p("10:00"), Ok(1_795_341_600 - 86_400));
    assert_eq!(p("11/22/09:00"), Ok(1_795_338_000));
    // A date later this year -> last year.
    assert_eq!(
        p("12/01/00:00"),
        utc_epoch(2025, 11, 1, 0, 0).ok_or(String::new())
    );
    assert_eq!(p("2026/11/22/09:00"), Ok(1_795_338_000));
    for bad in [
        "",
        "9:",
        "25:00",
        "09:60",
        "13/01/00:00",
        "x:y",
        "2026/1/2/3/04:00",
    ] {
        assert!(p(bad).is_err(), "{bad}");
    }
}

#[test]
fn kinds() {
    assert_eq!(kind_of(Path::new("/l/lsb.events")), FileKind::Current);
    assert_eq!(kind_of(Path::new("/l/lsb.events.12")), FileKind::Old);
    assert_eq!(kind_of(Path::new("/l/lsb.events.index")), FileKind::Other);
    assert_eq!(kind_of(Path::new("/l/lsb.acct")), FileKind::Other);
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

const NEW_101: &str = "\"JOB_NEW\" \"40\" 1795339535 101 0 33554434 1 1795339535 0 0 -65535 0 0 \"root\" -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 \"\" 100.00 18 \"normal\" \"\" \"vm\" \"/home/alice/run\" \"\" \"\" \"\" \"\" \"/root\" \"1795339535.101\" 0 \"\" \"\" \"\" \"sleep 30\" 0 \"\" \"default\" 1 \"linux\" \"\" 1040 0 \"\" \"\" \"\" -1 \"\" -1 \"\" -1";

#[test]
fn verify_reports_line_offset_and_torn_tail() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let p = dir.path().join("lsb.events");
    let header = format!("#{:<78}\n", 80);
    let bad = "\"JOB_STATUS\" \"40\" 1795339540 abc 64 0 0 0.0 0 0 0 0";
    write(
        &p,
        &format!("{header}{NEW_101}\n{bad}\n\"JOB_CLEAN\" \"40\" 1795339600 101 0\n\"JOB_STA"),
    );
    let r = verify_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.records, 2);
    assert_eq!(r.header, Some(80));
    assert_eq!(r.damaged.len(), 1);
    assert_eq!(r.damaged[0].line, 3);
    assert_eq!(r.damaged[0].offset, 80 + NEW_101.len() as u64 + 1);
    assert!(r.damaged[0].what.contains("jobId"), "{:?}", r.damaged);
    let torn = r.torn.clone().unwrap_or_else(|| panic!("no torn tail"));
    assert_eq!(torn.line, 5);
    assert_eq!(torn.text, "\"JOB_STA");
    assert_eq!(r.problems(), 2);
    let text = report_text(&r);
    assert!(text.contains(":3: offset "), "{text}");
    assert!(text.contains("DAMAGED"), "{text}");

    // A clean file, and a current file without a header.
    write(&p, &format!("{header}{NEW_101}\n"));
    let r = verify_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.problems(), 0, "{r:?}");
    write(&p, &format!("{NEW_101}\n"));
    let r = verify_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.header_problem.is_some());
    // OpenLava 4's bare "#80": a note, not damage.
    write(&p, &format!("#80\n{NEW_101}\n"));
    let r = verify_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.problems(), 0);
    assert!(r.notes.iter().any(|n| n.contains("line boundary")), "{r:?}");
}

#[test]
fn json_records() {
    let line = Line {
        number: 2,
        offset: 80,
        text: NEW_101.to_owned(),
        complete: true,
    };
    let rec = match basalt_eventlog::parse_line(NEW_101) {
        Ok(Some(r)) => r,
        other => panic!("{other:?}"),
    };
    let v = record_json(Path::new("/l/lsb.events"), &line, &rec, true);
    assert_eq!(v["type"], "JOB_NEW");
    assert_eq!(v["job_id"], 101);
    assert_eq!(v["idx"], 0);
    assert_eq!(v["time"], 1_795_339_535_i64);
    assert_eq!(v["line"], 2);
    assert_eq!(v["offset"], 80);
    assert_eq!(v["carried"], true);
    assert_eq!(v["fields"][0], 101);
    assert_eq!(v["fields"][10], "root");
    assert_eq!(v["fields"][23], 100.0);
}
