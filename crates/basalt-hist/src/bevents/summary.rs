//! The replay's report: the jobs by state and queue, in text (`-l` per job) and JSON.

use super::*;

/// The replay summary as text.
pub fn summary_text(r: &Replayed, long: bool, tm: timefmt::ToTm) -> String {
    let s = &r.sched;
    let mut out = String::new();
    let names: Vec<String> = r.files.iter().map(|p| p.display().to_string()).collect();
    let _ = writeln!(out, "Replayed: {}", names.join(", "));
    let _ = writeln!(
        out,
        "Records: {} applied, {} not replayed",
        r.applied, r.skipped
    );
    if let Some(t) = r.until {
        let _ = writeln!(out, "Until: {} ({t})", timefmt::ctime(&tm(t)));
    }
    if let Some(t) = r.last_time {
        let _ = writeln!(out, "Last record: {} ({t})", timefmt::ctime(&tm(t)));
    }
    if r.orphans > 0 {
        let _ = writeln!(
            out,
            "Incomplete history: {} record(s) of jobs whose JOB_NEW is in a file no longer present",
            r.orphans
        );
    }
    let _ = writeln!(out, "Epoch: {}", s.epoch());
    let _ = writeln!(out, "Next job id: {}", next_job_id(s));
    let mut by_state = [0usize; STATES.len()];
    let mut by_queue: BTreeMap<&str, [usize; STATES.len()]> = BTreeMap::new();
    for j in s.jobs().values() {
        let k = state_index(j.state.name());
        by_state[k] += 1;
        by_queue
            .entry(j.queue.as_str())
            .or_insert([0; STATES.len()])[k] += 1;
    }
    let _ = write!(out, "Jobs: {}", s.jobs().len());
    for (i, n) in by_state.iter().enumerate() {
        if *n > 0 {
            let _ = write!(out, "  {} {n}", STATES[i]);
        }
    }
    out.push('\n');
    for q in s.queues() {
        by_queue.entry(q.name.as_str()).or_insert([0; STATES.len()]);
    }
    let _ = writeln!(
        out,
        "\nQUEUE_NAME      STATUS          PEND  PSUSP    RUN  SSUSP  USUSP   DONE   EXIT  TOTAL"
    );
    for (name, counts) in &by_queue {
        let status = match s.queues().iter().find(|q| q.name == *name) {
            Some(q) => format!(
                "{}:{}",
                if q.open { "Open" } else { "Closed" },
                if q.active { "Active" } else { "Inact" }
            ),
            None => "(not configured)".to_owned(),
        };
        let c = |st: &str| counts[state_index(st)];
        let _ = writeln!(
            out,
            "{:<15} {:<15} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}",
            name,
            status,
            c("PEND"),
            c("PSUSP"),
            c("RUN") + c("WAIT") + c("UNKWN") + c("ZOMBI"),
            c("SSUSP"),
            c("USUSP"),
            c("DONE"),
            c("EXIT"),
            counts.iter().sum::<usize>()
        );
    }
    let closed_q: Vec<String> = s
        .queues()
        .iter()
        .filter(|q| !q.open || !q.active)
        .map(|q| q.name.clone())
        .collect();
    let closed_h: Vec<String> = s
        .hosts()
        .iter()
        .filter(|h| h.closed_adm)
        .map(|h| {
            if h.message.is_empty() {
                h.name.clone()
            } else {
                format!("{} ({})", h.name, h.message)
            }
        })
        .collect();
    let none = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(", ")
        }
    };
    let _ = writeln!(out, "\nClosed or inactive queues: {}", none(&closed_q));
    let _ = writeln!(out, "Closed hosts: {}", none(&closed_h));
    if long {
        let _ = writeln!(
            out,
            "\nJOBID          USER        STAT   QUEUE        SUBMIT_TIME   EXEC_HOST    JOB_NAME"
        );
        for j in s.jobs().values() {
            let name = super::super::shown_name(&j.sub.job_name, &j.sub.command, j.idx);
            let _ = writeln!(
                out,
                "{:<14} {:<11} {:<6} {:<12} {:<13} {:<12} {}",
                job_id_text(j.id, j.idx),
                j.sub.user,
                j.state.name(),
                j.queue,
                timefmt::table(&tm(j.sub.submit_time)),
                j.hosts.first().map_or("-", String::as_str),
                name
            );
        }
    }
    for p in &r.problems {
        let _ = writeln!(out, "problem: {p}");
    }
    out
}

/// The replay summary as JSON.
pub fn summary_json(r: &Replayed, long: bool) -> Value {
    let s = &r.sched;
    let mut by_state: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_queue: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for j in s.jobs().values() {
        *by_state.entry(j.state.name()).or_default() += 1;
        *by_queue
            .entry(j.queue.as_str())
            .or_default()
            .entry(j.state.name())
            .or_default() += 1;
    }
    let queues: Vec<Value> = s
        .queues()
        .iter()
        .map(|q| {
            json!({
                "name": q.name,
                "open": q.open,
                "active": q.active,
                "jobs": by_queue.get(q.name.as_str()).cloned().unwrap_or_default(),
            })
        })
        .chain(
            by_queue
                .iter()
                .filter(|(n, _)| !s.queues().iter().any(|q| q.name == **n))
                .map(|(n, c)| json!({"name": n, "configured": false, "jobs": c})),
        )
        .collect();
    let mut v = json!({
        "files": r.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "records_applied": r.applied,
        "records_not_replayed": r.skipped,
        "until": r.until,
        "last_record_time": r.last_time,
        "orphan_records": r.orphans,
        "epoch": s.epoch(),
        "next_job_id": next_job_id(s),
        "last_job_id": s.last_job_id(),
        "jobs_total": s.jobs().len(),
        "jobs_by_state": by_state,
        "queues": queues,
        "closed_queues": s.queues().iter().filter(|q| !q.open).map(|q| q.name.clone()).collect::<Vec<_>>(),
        "inactive_queues": s.queues().iter().filter(|q| !q.active).map(|q| q.name.clone()).collect::<Vec<_>>(),
        "closed_hosts": s.hosts().iter().filter(|h| h.closed_adm).map(|h| h.name.clone()).collect::<Vec<_>>(),
        "problems": r.problems,
    });
    if long && let Value::Object(m) = &mut v {
        let jobs: Vec<Value> = s
            .jobs()
            .values()
            .map(|j| {
                json!({
                    "job_id": j.id,
                    "idx": j.idx,
                    "user": j.sub.user.as_str(),
                    "state": j.state.name(),
                    "queue": j.queue.as_str(),
                    "submit_time": j.sub.submit_time,
                    "start_time": j.start_time,
                    "end_time": j.end_time,
                    "exec_hosts": j.hosts,
                    "job_name": j.sub.job_name.as_str(),
                    "exit_status": j.exit_status,
                })
            })
            .collect();
        m.insert("jobs".into(), Value::Array(jobs));
    }
    v
}

/// Queue and host names the records of `plan` mention.
pub(super) fn names_in(plan: &ReplayPlan) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut queues = BTreeSet::new();
    let mut hosts = BTreeSet::new();
    for (p, _) in &plan.files {
        let _ = for_each_line(p, |l| {
            if let Ok(Some(r)) = basalt_eventlog::parse_line(&l.text) {
                match r {
                    Record::JobNew(n) | Record::JobModify(n) => {
                        queues.insert(n.queue.clone());
                    }
                    Record::JobModify2(m) if m.options & basalt_core::job::sub::QUEUE != 0 => {
                        queues.insert(m.queue.clone());
                    }
                    Record::JobSwitch(s) => {
                        queues.insert(s.queue.clone());
                    }
                    Record::QueueCtrl(q) => {
                        queues.insert(q.queue.clone());
                    }
                    Record::HostCtrl(h) => {
                        hosts.insert(h.host.clone());
                    }
                    Record::JobStart(s) | Record::PreExecStart(s) => {
                        hosts.extend(s.exec_hosts.iter().cloned());
                    }
                    _ => {}
                }
            }
            Ok(())
        });
    }
    queues.retain(|q| !q.is_empty() && q.bytes().all(|b| b.is_ascii_graphic()));
    hosts.retain(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()));
    (queues, hosts)
}
