//! `bsub -m "host[+pref] ... [others[+pref]]"`: the hosts a job may run on and how much
//! it prefers each.
//!
//! A submission keeps its `-m` list as checked at submission (host groups expanded, names
//! resolved), each entry `name` or `name+N`; `others` stands for every host not named.
//! A larger N is preferred; `name+` is `name+1`; a name without `+` has level 0. A job
//! whose list has a preference level uses its own levels in place of its queue's HOSTS
//! preferences.

/// One entry of a `-m` list: its name and preference level (`None` without a `+`).
pub fn split(entry: &str) -> (&str, Option<i64>) {
    match entry.rsplit_once('+') {
        Some((n, "")) if !n.is_empty() => (n, Some(1)),
        Some((n, level)) if !n.is_empty() && level.bytes().all(|b| b.is_ascii_digit()) => {
            (n, Some(level.parse().unwrap_or(i64::MAX)))
        }
        _ => (entry, None),
    }
}

/// A job's `-m` list, read for a pass.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Asked {
    /// (host, level).
    named: Vec<(String, i64)>,
    /// `others`: every host not named may be used, at this level.
    others: Option<i64>,
    /// Some entry has a `+` level: the job's levels replace its queue's.
    has_levels: bool,
}

impl Asked {
    /// None for a job without `-m`.
    pub(crate) fn of(list: &[String]) -> Option<Asked> {
        if list.is_empty() {
            return None;
        }
        let mut a = Asked::default();
        for e in list {
            let (name, level) = split(e);
            a.has_levels |= level.is_some();
            let level = level.unwrap_or(0);
            if name == "others" || name == "all" {
                a.others = Some(level);
            } else {
                a.named.push((name.to_owned(), level));
            }
        }
        Some(a)
    }

    /// May the job run on `host`?
    pub(crate) fn allows(&self, host: &str) -> bool {
        self.others.is_some() || self.named.iter().any(|(n, _)| n == host)
    }

    /// The job's own preference level for `host` (None: the queue's decides).
    pub(crate) fn level(&self, host: &str) -> Option<i64> {
        if !self.has_levels {
            return None;
        }
        self.named
            .iter()
            .find(|(n, _)| n == host)
            .map(|(_, l)| *l)
            .or(self.others)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_others_and_names() {
        assert_eq!(split("hostA+2"), ("hostA", Some(2)));
        assert_eq!(split("hostA+"), ("hostA", Some(1)));
        assert_eq!(split("hostA"), ("hostA", None));
        assert_eq!(split("node01"), ("node01", None));
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let a = Asked::of(&l(&["hostA+2", "hostB", "others+1"])).expect("asked");
        assert!(a.allows("hostC"));
        assert_eq!(a.level("hostA"), Some(2));
        assert_eq!(a.level("hostB"), Some(0));
        assert_eq!(a.level("hostC"), Some(1));
        let plain = Asked::of(&l(&["hostA", "hostB"])).expect("asked");
        assert!(!plain.allows("hostC"));
        assert_eq!(plain.level("hostA"), None);
        assert_eq!(Asked::of(&[]), None);
    }
}
