//! `bevents dump`: the records as JSON lines (fields typed, carried-over lines marked).

use super::*;

pub(super) fn field_json(f: &Field) -> Value {
    match f {
        Field::Str(s) => Value::String(s.clone()),
        Field::Num(s) => {
            if let Ok(i) = s.parse::<i64>() {
                Value::from(i)
            } else if let Some(n) = s.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
                Value::Number(n)
            } else {
                Value::String(s.clone())
            }
        }
    }
}

/// One record as a JSON object.
pub fn record_json(path: &Path, line: &Line, rec: &Record, carried: bool) -> Value {
    let mut m = Map::new();
    m.insert("file".into(), json!(path.display().to_string()));
    m.insert("line".into(), json!(line.number));
    m.insert("offset".into(), json!(line.offset));
    m.insert("type".into(), json!(rec.kind()));
    m.insert("version".into(), json!(rec.header().version));
    m.insert("time".into(), json!(rec.time()));
    if let Some(id) = rec.job_id() {
        m.insert("job_id".into(), json!(id));
        m.insert("idx".into(), json!(rec.idx().unwrap_or(0)));
    }
    if carried {
        m.insert("carried".into(), json!(true));
    }
    let fields: Vec<Value> = basalt_eventlog::split_fields(&line.text)
        .map(|f| f.iter().skip(3).map(field_json).collect())
        .unwrap_or_default();
    m.insert("fields".into(), Value::Array(fields));
    Value::Object(m)
}

pub(super) fn dump(a: &Args, files: &[PathBuf]) -> ExitCode {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut problems = 0usize;
    for path in files {
        let kind = kind_of(path);
        let mut header: Option<u64> = None;
        let res = for_each_line(path, |l| {
            if !l.complete {
                problems += 1;
                eprintln!(
                    "{}:{}: offset {}: incomplete last line ignored: {}",
                    path.display(),
                    l.number,
                    l.offset,
                    excerpt(&l.text)
                );
                return Ok(());
            }
            if l.number == 1
                && let Some(h) = basalt_eventlog::parse_header(&l.text)
            {
                header = Some(h);
                return Ok(());
            }
            match basalt_eventlog::parse_line(&l.text) {
                Ok(None) => Ok(()),
                Ok(Some(rec)) => {
                    if !a.types.is_empty() && !a.types.contains(rec.kind()) {
                        return Ok(());
                    }
                    if !a.jobs.is_empty() && !rec.job_id().is_some_and(|id| a.jobs.contains(&id)) {
                        return Ok(());
                    }
                    let carried = kind == FileKind::Current && header.is_some_and(|h| l.offset < h);
                    writeln!(out, "{}", record_json(path, &l, &rec, carried))
                }
                Err(e) => {
                    problems += 1;
                    eprintln!(
                        "{}:{}: offset {}: damaged record: {e}",
                        path.display(),
                        l.number,
                        l.offset
                    );
                    Ok(())
                }
            }
        });
        if let Err(e) = res {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("bevents: {}: {e}", path.display());
            return basalt_cli::fail();
        }
    }
    if let Err(e) = out.flush()
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("bevents: {e}");
        return basalt_cli::fail();
    }
    if problems > 0 {
        ExitCode::from(PROBLEMS)
    } else {
        ExitCode::SUCCESS
    }
}
