//! `bjobs -json` (cli-contract.md §4.4) and the job-slot summary of `bjobs -sum`.

use super::*;

/// `bjobs -json`: `{"COMMAND":"bjobs","JOBS":n,"RECORDS":[...]}`, all values strings,
/// unknown ids as `{"JOBID":"N","ERROR":"Job <N> is not found"}`.
pub fn json(jobs: &[JobInfo], not_found: &[JobRef], fields: &[&FieldDef], fx: &Fx) -> String {
    use super::super::outfmt::{json_document, json_record, json_str};
    let mut records: Vec<String> = jobs
        .iter()
        .map(|j| json_record(fields, |name| field_value(j, name, fx)))
        .collect();
    for r in not_found {
        let id = job_ref_str(r);
        records.push(format!(
            "{{\"JOBID\":{},\"ERROR\":{}}}",
            json_str(&id),
            json_str(&format!("Job <{id}> is not found"))
        ));
    }
    json_document("bjobs", "JOBS", &records)
}

// ------------------------------------------------------------------ -sum

/// The job slots a job holds (once started: one per execution-host entry, so an
/// `-n min,max` job counts what it got) or asks for (pending: its minimum).
pub fn job_slots(j: &JobInfo) -> u32 {
    if !is_pending(j) && !j.exec_hosts.is_empty() {
        j.exec_hosts.len() as u32
    } else {
        j.num_processors.max(1)
    }
}

/// `bjobs -sum` (LSF 10.1): the job slots of the unfinished jobs listed, by state.
/// PSUSP and WAIT jobs count as pending; pending jobs forwarded to another cluster
/// (MultiCluster) as FWD_PEND instead. ZOMBI and states Basalt does not know count as
/// UNKNOWN.
pub fn sum(jobs: &[JobInfo]) -> String {
    // RUN SSUSP USUSP UNKNOWN PEND FWD_PEND
    let mut c = [0u64; 6];
    for j in jobs {
        let i = match state_of(j) {
            Some(JobState::Run) => 0,
            Some(JobState::Ssusp) => 1,
            Some(JobState::Ususp) => 2,
            Some(JobState::Unkwn | JobState::Zombi) | None => 3,
            Some(JobState::Pend | JobState::Psusp | JobState::Wait) => {
                if j.forward_cluster.is_empty() { 4 } else { 5 }
            }
            Some(JobState::Done | JobState::Exit) => continue,
        };
        c[i] += u64::from(job_slots(j));
    }
    let mut out = String::new();
    for h in ["RUN", "SSUSP", "USUSP", "UNKNOWN", "PEND", "FWD_PEND"] {
        let _ = write!(out, "{h:<10} ");
    }
    out.push('\n');
    for n in c {
        let _ = write!(out, "{n:<10} ");
    }
    out.push('\n');
    out
}
