//! The job-array summary of `bjobs -A` (cli-output.md §3.1).

use super::*;

/// The header of `bjobs -A`.
pub const ARRAY_HEADER: &str =
    "JOBID    ARRAY_SPEC  OWNER   NJOBS PEND DONE  RUN EXIT SSUSP USUSP PSUSP";

/// `1,2,3,5,7-9` → `1-3,5,7-9`.
pub(super) fn index_ranges(idx: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let start = idx[i];
        let mut end = start;
        while i + 1 < idx.len() && idx[i + 1] == end + 1 {
            i += 1;
            end = idx[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// The `-A` summary: one row per job array (elements grouped by job id, in id order).
/// `all` keeps arrays whose elements have all finished.
pub fn array_summary(jobs: &[JobInfo], all: bool, noheader: bool) -> String {
    let mut arrays: Vec<(u64, Vec<&JobInfo>)> = Vec::new();
    for j in jobs.iter().filter(|j| j.idx > 0) {
        match arrays.iter_mut().find(|(id, _)| *id == j.job_id) {
            Some((_, v)) => v.push(j),
            None => arrays.push((j.job_id, vec![j])),
        }
    }
    arrays.sort_by_key(|(id, _)| *id);
    let mut out = String::new();
    for (id, mut elems) in arrays {
        if !all && elems.iter().all(|j| is_finished(j)) {
            continue;
        }
        elems.sort_by_key(|j| j.idx);
        let idx: Vec<u32> = elems.iter().map(|j| j.idx).collect();
        let first = elems[0];
        let suffix = format!("[{}]", first.idx);
        let base = first
            .job_name
            .strip_suffix(&suffix)
            .unwrap_or(&first.job_name);
        let spec = format!("{base}[{}]", index_ranges(&idx));
        let n = |st: JobState| elems.iter().filter(|j| state_of(j) == Some(st)).count();
        let run = n(JobState::Run) + n(JobState::Unkwn);
        let _ = writeln!(
            out,
            "{:<7}  {:<8.8} {:>8.8}   {:>5} {:>4} {:>4} {:>4} {:>4} {:>5} {:>5} {:>5}",
            id,
            spec,
            first.user,
            elems.len(),
            n(JobState::Pend),
            n(JobState::Done),
            run,
            n(JobState::Exit),
            n(JobState::Ssusp),
            n(JobState::Ususp),
            n(JobState::Psusp),
        );
    }
    if out.is_empty() || noheader {
        return out;
    }
    format!("{ARRAY_HEADER}\n{out}")
}
