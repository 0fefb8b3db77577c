//! `bjobs`'s `main`: parse the options, ask mbatchd, pick the formatter, exit as LSF does.

use super::*;

/// `bjobs`.
pub fn main(args: Vec<String>) -> ExitCode {
    let items = match super::super::parse_args("bjobs", &args, &SPEC, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let a = args_from(items);
    let refs = match super::super::parse_job_ids(&a.ids) {
        Ok(r) => r,
        Err(bad) => {
            eprintln!("{bad}: Illegal job ID.");
            return crate::fail();
        }
    };
    let config = match super::super::load_config("bjobs") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let format_text = a.format.clone().or_else(|| {
        std::env::var("LSB_BJOBS_FORMAT")
            .ok()
            .filter(|s| !s.trim().is_empty())
    });
    let format = match format_text.as_deref().map(parse_format) {
        None => None,
        Some(Ok(f)) => Some(f),
        Some(Err(e)) => {
            eprintln!("bjobs: Invalid format specified: {e}");
            return crate::fail();
        }
    };
    let short_hosts = !matches!(
        config
            .lsf_conf
            .get("LSB_SHORT_HOSTLIST")
            .map(|v| v.trim().to_ascii_uppercase())
            .as_deref(),
        Some("0" | "N" | "NO")
    );
    let consistent_exit = config
        .lsf_conf
        .get("LSB_BJOBS_CONSISTENT_EXIT_CODE")
        .or(std::env::var("LSB_BJOBS_CONSISTENT_EXIT_CODE")
            .ok()
            .as_deref())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("y"));
    let fx = Fx {
        tm: timefmt::local,
        short_hosts,
        now: timefmt::now(),
    };
    let user = match &a.user {
        Some(u) => u.clone(),
        None if !refs.is_empty() => "all".to_owned(),
        None => String::new(),
    };
    let req = JobsRequest {
        ids: refs.clone(),
        user,
        queue: a.queue.clone().unwrap_or_default(),
        host: a.host.clone().unwrap_or_default(),
        job_name: a.job_name.clone().unwrap_or_default(),
        // -A counts every element of an array, finished ones too.
        states: if a.arrays { u32::MAX } else { state_bits(&a) },
        // Only -l names the hosts of a host-level pending reason; the others count them.
        reason_hosts: a.long,
    };
    super::super::run(async move {
        let mut client = match super::super::connect_mbatchd(&config).await {
            Ok(c) => c.max_decoding_message_size(basalt_runtime::MAX_LISTING_BYTES),
            Err(e) => return super::super::connect_failed(&e),
        };
        // The tables come page by page (the first lines of a million jobs at once);
        // the other formats need the whole listing (-l asks for the queues and hosts of
        // all, -json and -sum count, -o pads columns... per job only, but is not paged
        // yet), as does an mbatchd without JobsPages.
        if format.is_none() && !a.long && !a.json && !a.sum && !a.arrays {
            let o = TableOpts {
                wide: a.wide,
                noheader: a.noheader,
                pend_reasons: a.pend,
                susp_reasons: a.susp,
            };
            match table_pages(&mut client, req.clone(), &o, &fx).await {
                Ok(Some(Paged::Done(shown, not_found))) => {
                    return listing_end(shown, &not_found, &a, refs.is_empty(), consistent_exit);
                }
                Ok(Some(Paged::Cut)) => return crate::fail(),
                Ok(None) => {}
                Err(s) => {
                    eprintln!("{}", super::super::status_text(&s));
                    return crate::fail();
                }
            }
        }
        let reply = match client.jobs(req).await {
            Ok(r) => r.into_inner(),
            Err(s) => {
                eprintln!("{}", super::super::status_text(&s));
                return crate::fail();
            }
        };
        if a.sum {
            print!("{}", sum(&reply.jobs));
            for r in &reply.not_found {
                eprintln!("Job <{}> is not found", job_ref_str(r));
            }
            return if reply.not_found.is_empty() {
                ExitCode::SUCCESS
            } else {
                crate::fail()
            };
        }
        if a.json {
            let fields: Vec<&FieldDef> = match &format {
                Some(f) => f.columns.iter().map(|c| c.def).collect(),
                None => DEFAULT_JSON_FIELDS
                    .iter()
                    .filter_map(|n| field(n))
                    .collect(),
            };
            print!("{}", json(&reply.jobs, &reply.not_found, &fields, &fx));
            return ExitCode::SUCCESS;
        }
        if a.arrays {
            let text = array_summary(&reply.jobs, a.all || !refs.is_empty(), a.noheader);
            if text.is_empty() && reply.not_found.is_empty() {
                eprintln!("{}", nothing_message(&a));
                return if consistent_exit {
                    crate::fail()
                } else {
                    ExitCode::SUCCESS
                };
            }
            print!("{text}");
            for r in &reply.not_found {
                eprintln!("Job <{}> is not found", job_ref_str(r));
            }
            return if reply.not_found.is_empty() {
                ExitCode::SUCCESS
            } else {
                crate::fail()
            };
        }
        if reply.jobs.is_empty() && reply.not_found.is_empty() {
            return listing_end(0, &[], &a, refs.is_empty(), consistent_exit);
        }
        let text = if let Some(f) = &format {
            if reply.jobs.is_empty() {
                String::new()
            } else {
                custom(&reply.jobs, f, a.noheader, &fx)
            }
        } else if a.long {
            let mut names: Vec<String> = reply.jobs.iter().map(|j| j.queue.clone()).collect();
            names.sort();
            names.dedup();
            let queues = client
                .queues(QueuesRequest { queues: names })
                .await
                .map(|r| r.into_inner().queues)
                .unwrap_or_default();
            let mut exec: Vec<String> = reply
                .jobs
                .iter()
                .filter_map(|j| j.exec_hosts.first().cloned())
                .filter(|h| !is_remote_host(h))
                .collect();
            exec.sort();
            exec.dedup();
            let hosts = if exec.is_empty() {
                Vec::new()
            } else {
                client
                    .hosts(HostsRequest { hosts: exec })
                    .await
                    .map(|r| r.into_inner().hosts)
                    .unwrap_or_default()
            };
            if reply.jobs.is_empty() {
                String::new()
            } else {
                long_with_hosts(&reply.jobs, &queues, &hosts, &fx)
            }
        } else if reply.jobs.is_empty() {
            String::new()
        } else {
            let o = TableOpts {
                wide: a.wide,
                noheader: a.noheader,
                pend_reasons: a.pend,
                susp_reasons: a.susp,
            };
            table(&reply.jobs, &o, &fx)
        };
        print!("{text}");
        listing_end(
            reply.jobs.len(),
            &reply.not_found,
            &a,
            refs.is_empty(),
            consistent_exit,
        )
    })
}

/// How a paged table ended.
enum Paged {
    /// Every page printed: how many jobs, and the ids not found.
    Done(usize, Vec<JobRef>),
    /// Standard output went away (`bjobs | head`).
    Cut,
}

/// The default or `-w` table, printed as mbatchd sends its pages (`JobsPages`); `None`
/// when that mbatchd has no `JobsPages` (nothing printed: the caller asks `Jobs`).
async fn table_pages(
    client: &mut basalt_proto::mbatchd::mbatchd_client::MbatchdClient<basalt_runtime::AuthChannel>,
    req: JobsRequest,
    o: &TableOpts,
    fx: &Fx,
) -> Result<Option<Paged>, tonic::Status> {
    use std::io::Write;
    let mut stream = match client.jobs_pages(req).await {
        Ok(r) => r.into_inner(),
        Err(s) if s.code() == tonic::Code::Unimplemented => return Ok(None),
        Err(s) => return Err(s),
    };
    let (mut shown, mut not_found) = (0usize, Vec::new());
    let stdout = std::io::stdout();
    while let Some(page) = stream.message().await? {
        not_found.extend(page.not_found);
        if page.jobs.is_empty() {
            continue;
        }
        // The header once, before the first job.
        let text = table(
            &page.jobs,
            &TableOpts {
                noheader: o.noheader || shown > 0,
                ..*o
            },
            fx,
        );
        shown += page.jobs.len();
        let mut out = stdout.lock();
        if out
            .write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return Ok(Some(Paged::Cut));
        }
    }
    Ok(Some(Paged::Done(shown, not_found)))
}

/// After a listing (paged or whole): LSF's message when nothing was listed, the ids not
/// found, and the exit code.
fn listing_end(
    shown: usize,
    not_found: &[JobRef],
    a: &Args,
    no_ids: bool,
    consistent_exit: bool,
) -> ExitCode {
    if shown == 0 && not_found.is_empty() {
        if let (Some(pat), true) = (&a.job_name, no_ids) {
            eprintln!("Job <{pat}> is not found");
            return crate::fail();
        }
        eprintln!("{}", nothing_message(a));
        return if consistent_exit {
            crate::fail()
        } else {
            ExitCode::SUCCESS
        };
    }
    for r in not_found {
        eprintln!("Job <{}> is not found", job_ref_str(r));
    }
    if not_found.is_empty() {
        ExitCode::SUCCESS
    } else {
        crate::fail()
    }
}
