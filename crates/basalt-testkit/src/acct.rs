//! lsb.acct as the tests and `cargo xtask scale` check it: every `JOB_FINISH` record of
//! a log directory by job element, and whether a set of job elements finished exactly
//! once, each `DONE`.

use anyhow::{Context, Result};
use basalt_core::job::status;
use std::collections::BTreeMap;
use std::path::Path;

/// A job element: (job id, array index; 0 for a job that is not an array).
pub type Element = (u64, u32);

/// The `JOB_FINISH` records of every accounting file of `logdir` (`lsb.acct`,
/// `lsb.acct.1`, ...): each job element's jStatus values, one per record. A missing
/// `lsb.acct` gives none; an unreadable or unparsable record is an error.
pub fn finishes(logdir: &Path) -> Result<BTreeMap<Element, Vec<u32>>> {
    let mut out: BTreeMap<Element, Vec<u32>> = BTreeMap::new();
    let files = basalt_eventlog::acct_files(logdir)
        .with_context(|| format!("listing the accounting files of {}", logdir.display()))?;
    for path in files {
        let reader = basalt_eventlog::read_acct(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        for f in reader {
            let f = f.with_context(|| format!("reading {}", path.display()))?;
            out.entry((f.job_id, f.idx)).or_default().push(f.j_status);
        }
    }
    Ok(out)
}

/// The elements `1..=size` of each (array id, size).
pub fn array_elements(arrays: &[(u64, u32)]) -> impl Iterator<Item = Element> + '_ {
    arrays
        .iter()
        .flat_map(|&(id, size)| (1..=size).map(move |i| (id, i)))
}

/// What [`exactly_once`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OnceCheck {
    /// Elements expected.
    pub expected: usize,
    /// Expected elements with exactly one record, `DONE`.
    pub once_done: usize,
    /// Expected elements with no record.
    pub missing: Vec<Element>,
    /// Expected elements with more than one record, and how many.
    pub repeated: Vec<(Element, usize)>,
    /// Expected elements whose only record is not `DONE`, and its jStatus.
    pub not_done: Vec<(Element, u32)>,
}

impl OnceCheck {
    /// Every expected element finished exactly once, `DONE`.
    pub fn ok(&self) -> bool {
        self.once_done == self.expected
    }

    /// One line: `20000 of 20000 finished exactly once, DONE`, or what is wrong, with
    /// the first few elements of each kind (`1234[7]`).
    pub fn summary(&self) -> String {
        fn some<T>(v: &[T], show: impl Fn(&T) -> String) -> String {
            let mut s: Vec<String> = v.iter().take(5).map(show).collect();
            if v.len() > 5 {
                s.push("...".into());
            }
            s.join(" ")
        }
        let el = |&(id, i): &Element| {
            if i == 0 {
                id.to_string()
            } else {
                format!("{id}[{i}]")
            }
        };
        let mut s = format!(
            "{} of {} finished exactly once, DONE",
            self.once_done, self.expected
        );
        if !self.missing.is_empty() {
            s += &format!(
                "; {} never finished ({})",
                self.missing.len(),
                some(&self.missing, el)
            );
        }
        if !self.repeated.is_empty() {
            s += &format!(
                "; {} finished more than once ({})",
                self.repeated.len(),
                some(&self.repeated, |(e, n)| format!("{} x{n}", el(e)))
            );
        }
        if !self.not_done.is_empty() {
            s += &format!(
                "; {} finished not DONE ({})",
                self.not_done.len(),
                some(&self.not_done, |(e, st)| format!("{} jStatus {st}", el(e)))
            );
        }
        s
    }
}

/// Whether each element of `expected` has exactly one record in `finishes`, `DONE`
/// (records of other jobs are not looked at).
pub fn exactly_once(
    finishes: &BTreeMap<Element, Vec<u32>>,
    expected: impl IntoIterator<Item = Element>,
) -> OnceCheck {
    let mut c = OnceCheck::default();
    for e in expected {
        c.expected += 1;
        match finishes.get(&e).map(Vec::as_slice) {
            None | Some([]) => c.missing.push(e),
            Some([st]) if st & status::DONE != 0 => c.once_done += 1,
            Some([st]) => c.not_done.push((e, *st)),
            Some(more) => c.repeated.push((e, more.len())),
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_element_once_and_done_passes_and_every_fault_is_named() {
        let mut f: BTreeMap<Element, Vec<u32>> = BTreeMap::new();
        for i in 1..=3 {
            f.insert((7, i), vec![status::DONE]);
        }
        // Another job's records do not count.
        f.insert((8, 0), vec![status::EXIT, status::EXIT]);
        let c = exactly_once(&f, array_elements(&[(7, 3)]));
        assert!(c.ok(), "{c:?}");
        assert_eq!(c.summary(), "3 of 3 finished exactly once, DONE");

        f.insert((7, 2), vec![status::DONE, status::DONE]);
        f.insert((7, 3), vec![status::EXIT]);
        let c = exactly_once(&f, array_elements(&[(7, 4)]));
        assert!(!c.ok());
        assert_eq!(c.once_done, 1);
        assert_eq!(c.missing, vec![(7, 4)]);
        assert_eq!(c.repeated, vec![((7, 2), 2)]);
        assert_eq!(c.not_done, vec![((7, 3), status::EXIT)]);
        assert_eq!(
            c.summary(),
            "1 of 4 finished exactly once, DONE; 1 never finished (7[4]); \
             1 finished more than once (7[2] x2); 1 finished not DONE (7[3] jStatus 32)"
        );
    }

    #[test]
    fn a_missing_log_directory_has_no_finishes() {
        let f = finishes(Path::new("/nonexistent/basalt/logdir"));
        assert!(f.is_ok_and(|f| f.is_empty()));
    }
}
