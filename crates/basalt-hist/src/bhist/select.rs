//! bhist's options ([`Args`]), which jobs they select ([`Filter`]), which files are read
//! and the report they give.

use super::*;

/// Parsed bhist arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    pub all: bool,
    pub done: bool,
    pub exited: bool,
    pub pend: bool,
    pub run: bool,
    pub susp: bool,
    pub long: bool,
    pub brief: bool,
    pub wide: bool,
    pub user: Option<String>,
    pub queue: Option<String>,
    pub host: Option<String>,
    pub job_name: Option<String>,
    pub project: Option<String>,
    pub num_files: Option<String>,
    pub file: Option<String>,
    pub ids: Vec<String>,
}

/// Fill [`Args`] from parsed items.
pub fn args_from(items: Vec<Item>) -> Args {
    let mut a = Args::default();
    for it in items {
        match it {
            Item::Arg(s) => a.ids.push(s),
            Item::Opt(n, v) => match (n.as_str(), v) {
                ("a", _) => a.all = true,
                ("d", _) => a.done = true,
                ("e", _) => a.exited = true,
                ("p", _) => a.pend = true,
                ("r", _) => a.run = true,
                ("s", _) => a.susp = true,
                ("l", _) => a.long = true,
                ("b", _) => a.brief = true,
                ("w", _) => a.wide = true,
                ("u", v) => a.user = v,
                ("q", v) => a.queue = v,
                ("m", v) => a.host = v,
                ("J", v) => a.job_name = v,
                ("P", v) => a.project = v,
                ("n", v) => a.num_files = v,
                ("f", v) => a.file = v,
                _ => {}
            },
        }
    }
    a
}

/// Which jobs to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// `None`: every user.
    pub user: Option<String>,
    pub queue: Option<String>,
    pub host: Option<String>,
    pub job_name: Option<String>,
    pub project: Option<String>,
    pub ids: Vec<IdSel>,
    pub all: bool,
    pub done: bool,
    pub exited: bool,
    pub pend: bool,
    pub run: bool,
    pub susp: bool,
}

impl Filter {
    /// The filter of `a` for the user `caller`. Job ids select every user and state, and
    /// override the queue and host filters (as LSF's bhist does).
    pub fn new(a: &Args, ids: Vec<IdSel>, caller: &str) -> Filter {
        let by_id = !ids.is_empty();
        let user = match a.user.as_deref() {
            _ if by_id => None,
            Some("all") => None,
            Some(u) => Some(u.to_owned()),
            None => Some(caller.to_owned()),
        };
        Filter {
            user,
            queue: if by_id { None } else { a.queue.clone() },
            host: if by_id { None } else { a.host.clone() },
            job_name: a.job_name.clone(),
            project: a.project.clone(),
            ids,
            all: a.all || by_id,
            done: a.done,
            exited: a.exited,
            pend: a.pend,
            run: a.run,
            susp: a.susp,
        }
    }

    pub(super) fn state_ok(&self, j: &JobHistory) -> bool {
        if self.all {
            return true;
        }
        let st = base_state(j.state().0);
        if !(self.done || self.exited || self.pend || self.run || self.susp) {
            return st & (status::DONE | status::EXIT) == 0;
        }
        (self.done && st & (status::DONE | status::EXIT) != 0)
            || (self.exited && st & status::EXIT != 0)
            || (self.pend && st & (status::PEND | status::PSUSP) != 0)
            || (self.run && st & status::RUN != 0 && st & status::WAIT == 0)
            || (self.susp && st & (status::SSUSP | status::USUSP) != 0)
    }

    /// Is `j` selected?
    pub fn matches(&self, j: &JobHistory) -> bool {
        if !self.ids.is_empty() && !self.ids.iter().any(|s| s.matches(j.job_id, j.idx)) {
            return false;
        }
        if self.user.as_ref().is_some_and(|u| *u != j.sub.user_name) {
            return false;
        }
        if self
            .project
            .as_ref()
            .is_some_and(|p| *p != j.sub.project_name)
        {
            return false;
        }
        if self.queue.as_ref().is_some_and(|q| *q != j.queue) {
            return false;
        }
        if self
            .host
            .as_ref()
            .is_some_and(|h| !j.exec_hosts.iter().any(|e| e == h))
        {
            return false;
        }
        if let Some(pat) = &self.job_name {
            let name = super::super::shown_name(&j.sub.job_name, &j.sub.command, j.idx);
            if !wildcard_match(pat, &name) && !wildcard_match(pat, &j.sub.job_name) {
                return false;
            }
        }
        self.state_ok(j)
    }
}

/// The records `filter` needs: those of its job ids, else those of its user's jobs, else
/// all.
pub fn want_of(filter: &Filter) -> Want {
    if !filter.ids.is_empty() {
        Want::Jobs(filter.ids.iter().map(|s| s.job_id).collect())
    } else if let Some(u) = &filter.user {
        Want::User(u.clone())
    } else {
        Want::All
    }
}

/// Which files to read for `a`.
pub fn source(a: &Args, by_id: bool) -> Result<EventSource, String> {
    if let Some(f) = &a.file {
        if a.num_files.is_some() {
            return Err("Cannot use option '-f' together with '-n'.".into());
        }
        return Ok(EventSource::File(f.into()));
    }
    match &a.num_files {
        Some(n) => n
            .trim()
            .parse::<usize>()
            .map(EventSource::Newest)
            .map_err(|_| "The number of event log files must be a positive integer.".into()),
        None if by_id => Ok(EventSource::Newest(0)),
        None => Ok(EventSource::Current),
    }
}

/// The whole report for the selected jobs (`None` when nothing matched).
pub fn report(histories: Vec<JobHistory>, a: &Args, filter: &Filter, fx: &Fx) -> Option<String> {
    let jobs: Vec<JobHistory> = histories
        .into_iter()
        .filter(|j| filter.matches(j))
        .collect();
    if jobs.is_empty() {
        return None;
    }
    Some(if a.long || a.brief {
        long(&jobs, a.long, fx)
    } else {
        table(&jobs, a.wide, fx)
    })
}
