//! Pure path and name rules: `%J`/`%I` substitution, the job's working directory,
//! array element names, `LSB_MCPU_HOSTS`, and the names of per-job state directories.

use std::path::{Path, PathBuf};

/// Substitute `%J` (job id) and `%I` (array index, 0 for an ordinary job) in a
/// `-o`/`-e`/`-i`/`-cwd` value, as LSF does.
pub fn substitute(s: &str, job_id: u64, idx: u32) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '%' {
            match chars.peek() {
                Some('J') => {
                    chars.next();
                    out.push_str(&job_id.to_string());
                    continue;
                }
                Some('I') => {
                    chars.next();
                    out.push_str(&idx.to_string());
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

/// The directory a job should run in: `-cwd` (substituted; relative to the
/// submission directory) when given, else the submission directory, else the
/// home directory.
pub fn job_cwd(spec_cwd: &str, sub_cwd: &str, home: &str, job_id: u64, idx: u32) -> PathBuf {
    let base = if sub_cwd.is_empty() { home } else { sub_cwd };
    if spec_cwd.is_empty() {
        return PathBuf::from(base);
    }
    let cwd = substitute(spec_cwd, job_id, idx);
    let p = Path::new(&cwd);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        Path::new(base).join(p)
    }
}

/// The name a job (or an array element) goes by: for an array element the
/// array's name without its index spec, followed by `[idx]` (`arr[1-10]%2` → `arr[3]`).
/// An empty name falls back to the command (LSF's default job name), cut to
/// [`MAX_JOB_NAME`](basalt_core::bounds::MAX_JOB_NAME) bytes like any name, so that
/// `LSB_JOBNAME` never makes the job's environment too big to start it (E2BIG).
pub fn element_name(job_name: &str, is_array: bool, idx: u32, command: &str) -> String {
    use basalt_core::bounds;
    let name = if job_name.is_empty() {
        bounds::default_job_name(command).to_owned()
    } else {
        bounds::truncate(job_name, bounds::MAX_JOB_NAME).to_owned()
    };
    if !is_array {
        return name;
    }
    let base = name.split('[').next().unwrap_or(&name);
    format!("{base}[{idx}]")
}

/// The job id as LSF prints it in messages: `102`, or `102[3]` for an element.
pub fn job_id_text(job_id: u64, idx: u32, is_array: bool) -> String {
    if is_array || idx != 0 {
        format!("{job_id}[{idx}]")
    } else {
        job_id.to_string()
    }
}

/// `host nslots` pairs in order of first appearance: `hostA 2 hostB 1`.
pub fn mcpu_hosts(exec_hosts: &[String]) -> String {
    host_counts(exec_hosts)
        .iter()
        .map(|(h, n)| format!("{h} {n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Slot counts per host, in order of first appearance.
pub fn host_counts(exec_hosts: &[String]) -> Vec<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for h in exec_hosts {
        match counts.iter_mut().find(|(n, _)| n == h) {
            Some((_, c)) => *c += 1,
            None => counts.push((h.clone(), 1)),
        }
    }
    counts
}

/// The per-job state directory name: `<jobId>.<idx>.<attempt>`.
pub fn state_dir_name(job_id: u64, idx: u32, attempt: u32) -> String {
    format!("{job_id}.{idx}.{attempt}")
}

/// Parse a state directory name back into (job id, idx, attempt).
pub fn parse_state_dir_name(name: &str) -> Option<(u64, u32, u32)> {
    let mut parts = name.split('.');
    let job = parts.next()?.parse().ok()?;
    let idx = parts.next()?.parse().ok()?;
    let attempt = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((job, idx, attempt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitution() {
        assert_eq!(substitute("out.%J.%I", 102, 3), "out.102.3");
        assert_eq!(substitute("out.%J", 7, 0), "out.7");
        assert_eq!(substitute("100%%J", 7, 0), "100%7");
        assert_eq!(substitute("a%Xb%", 7, 0), "a%Xb%");
    }

    #[test]
    fn cwd_rules() {
        assert_eq!(
            job_cwd("", "/home/a/run", "/home/a", 5, 0),
            PathBuf::from("/home/a/run")
        );
        assert_eq!(
            job_cwd("w/%J_%I", "/home/a/run", "/home/a", 5, 2),
            PathBuf::from("/home/a/run/w/5_2")
        );
        assert_eq!(
            job_cwd("/scratch/%J", "/home/a/run", "/home/a", 5, 0),
            PathBuf::from("/scratch/5")
        );
        assert_eq!(job_cwd("", "", "/home/a", 5, 0), PathBuf::from("/home/a"));
    }

    #[test]
    fn names() {
        assert_eq!(element_name("arr[1-10]%2", true, 3, "x"), "arr[3]");
        assert_eq!(element_name("myjob", false, 0, "x"), "myjob");
        assert_eq!(element_name("", false, 0, "sleep 10\n"), "sleep 10");
        assert_eq!(job_id_text(102, 3, true), "102[3]");
        assert_eq!(job_id_text(102, 0, false), "102");
    }

    #[test]
    fn mcpu() {
        let hosts: Vec<String> = ["hostA", "hostA", "hostB", "hostA"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(mcpu_hosts(&hosts), "hostA 3 hostB 1");
        assert_eq!(mcpu_hosts(&[]), "");
    }

    #[test]
    fn state_dir_names() {
        assert_eq!(state_dir_name(12, 3, 1), "12.3.1");
        assert_eq!(parse_state_dir_name("12.3.1"), Some((12, 3, 1)));
        assert_eq!(parse_state_dir_name("12.3"), None);
        assert_eq!(parse_state_dir_name("12.3.1.4"), None);
        assert_eq!(parse_state_dir_name("sbatchd.lock"), None);
    }
}
