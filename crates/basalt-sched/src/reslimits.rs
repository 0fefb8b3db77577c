//! Resource allocation limits (issue 20, item 4): the Limit sections of lsb.resources and
//! the MAX_JOBS column of lsb.users, resolved once into [`ResLimit`]s and counted by the
//! scheduling pass ([`Usage`]).
//!
//! A limit applies to a job whose user, queue, project, application profile and
//! execution host are each among its consumers (a kind of consumer it does not name
//! covers everyone). Consumers named with `USERS`, `QUEUES`, `HOSTS`, `PROJECTS`, `APPS`
//! share one count; with `PER_USER`, `PER_QUEUE`, `PER_HOST`, `PER_PROJECT`, `PER_APP`
//! each of them has a count of its own. `SLOTS`
//! counts the job slots of started jobs (only while its time window, if any, is open),
//! `JOBS` the started jobs; a job that would go over either pends with "Not allowed due
//! to resource limit." (lsb.users' MAX_JOBS: "The user has reached his/her job slot
//! limit"). A limit of 0 forbids.

use crate::config::{UserList, expand_users};
use basalt_config::TimeWindow;
use basalt_config::batch::{Batch, BatchUser, Limit};
use basalt_core::job::pend;
use std::collections::{BTreeMap, HashMap};

/// Who a consumer list covers: everyone (but `except`), or the names.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Members {
    pub all: bool,
    pub names: Vec<String>,
    pub except: Vec<String>,
    /// The list as configured, for blimits (user and host groups named with LSF's
    /// trailing `/`: `eng/`, `hg_ab/`); "" when not known (then the members are shown).
    pub shown: String,
}

impl Members {
    fn has(&self, x: &str, host: bool) -> bool {
        let same = |a: &String| {
            if host {
                basalt_core::same_host(a, x)
            } else {
                a == x
            }
        };
        if self.all {
            !self.except.iter().any(same)
        } else {
            self.names.iter().any(same)
        }
    }

    /// The text blimits shows for it: the list as configured, else its members.
    pub fn text(&self) -> String {
        if !self.shown.is_empty() {
            return self.shown.clone();
        }
        if self.all {
            let mut t = "all".to_owned();
            for x in &self.except {
                t.push_str(" ~");
                t.push_str(x);
            }
            t
        } else {
            self.names.join(" ")
        }
    }
}

impl From<UserList> for Members {
    fn from(u: UserList) -> Members {
        Members {
            all: u.all,
            names: u.names,
            except: u.except,
            shown: String::new(),
        }
    }
}

/// A consumer list as LSF's commands show it: as written, each group (`is_group`) named
/// with a trailing `/` (`eng/`, `~hg_ab/`, with a host preference `hg_ab/+2`).
pub fn shown_list(tokens: &[String], is_group: impl Fn(&str) -> bool) -> String {
    shown_tokens(tokens, is_group).join(" ")
}

/// [`shown_list`]'s words.
pub fn shown_tokens(tokens: &[String], is_group: impl Fn(&str) -> bool) -> Vec<String> {
    tokens
        .iter()
        .map(|t| {
            let (not, rest) = match t.strip_prefix('~') {
                Some(n) => ("~", n),
                None => ("", t.as_str()),
            };
            // A host preference (`name+2`) stays after the group's `/`.
            let (name, pref) = match rest.rsplit_once('+') {
                Some((n, p)) if !n.is_empty() && p.parse::<i64>().is_ok() => (n, &rest[n.len()..]),
                _ => (rest, ""),
            };
            if is_group(name) {
                format!("{not}{name}/{pref}")
            } else {
                t.clone()
            }
        })
        .collect()
}

/// How a limit treats one kind of consumer.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Scope {
    /// Not named: every one, all together.
    #[default]
    Any,
    /// `USERS = ...`: the members share one count.
    Together(Members),
    /// `PER_USER = ...`: each member has a count of its own.
    Each(Members),
}

impl Scope {
    /// Does the scope cover `x`? Then the part of the count's key it gives (Some(x) for
    /// a per-member scope).
    fn key(&self, x: &str, host: bool) -> Option<Option<String>> {
        match self {
            Scope::Any => Some(None),
            Scope::Together(m) => m.has(x, host).then_some(None),
            Scope::Each(m) => m.has(x, host).then(|| Some(x.to_owned())),
        }
    }

    /// The text blimits shows for the scope of a count with key part `part`.
    fn text(&self, part: &Option<String>) -> String {
        match (self, part) {
            (_, Some(x)) => x.clone(),
            (Scope::Any, None) => "-".to_owned(),
            (Scope::Together(m) | Scope::Each(m), None) => m.text(),
        }
    }
}

/// One limit, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ResLimit {
    /// The Limit's NAME (lsb.users rows: the row's USER_NAME).
    pub name: String,
    pub users: Scope,
    pub queues: Scope,
    pub hosts: Scope,
    pub projects: Scope,
    /// `APPS` / `PER_APP`: application profiles (`bsub -app`; a job without one is in
    /// none).
    pub apps: Scope,
    pub slots: Option<u32>,
    /// SLOTS_PER_PROCESSOR of a PER_HOST limit: on each host, at most this many slots per
    /// processor of the host.
    pub slots_per_cpu: Option<f64>,
    /// SLOTS applies only while this window is open (None: always).
    pub slots_window: Option<TimeWindow>,
    pub jobs: Option<u32>,
    /// MEM, SWP, TMP (MB) and RESOURCE[name, n]: what the started jobs it covers may
    /// reserve in all (`rusage[]`), by canonical resource name.
    pub amounts: Vec<(String, f64)>,
    /// The pending reason of a job it holds back.
    pub reason: u32,
    /// MEM, SWP, TMP given as a percentage, of a PER_HOST limit: on each host, that share
    /// of the host's maxmem, maxswp, maxtmp (MB), by canonical resource name.
    pub amount_pcts: Vec<(String, f64)>,
}

/// The key of one count: the limit and, for each per-member scope, the member (users,
/// queues, hosts, projects, application profiles).
pub type CountKey = (usize, [Option<String>; 5]);

/// Who a job is to the limits, but for its host: its user, queue, project and
/// application profile ("" for none).
#[derive(Debug, Clone, Copy)]
pub struct Consumer<'a> {
    pub user: &'a str,
    pub queue: &'a str,
    pub project: &'a str,
    pub app: &'a str,
}

/// Slots and jobs counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Used {
    pub slots: u32,
    pub jobs: u32,
}

impl ResLimit {
    /// The count a job of consumer `c` on `host` goes in; None when the limit does not
    /// apply to it.
    pub fn count_key(&self, i: usize, c: &Consumer<'_>, host: &str) -> Option<CountKey> {
        Some((
            i,
            [
                self.users.key(c.user, false)?,
                self.queues.key(c.queue, false)?,
                self.hosts.key(host, true)?,
                self.projects.key(c.project, false)?,
                self.app_key(c.app)?,
            ],
        ))
    }

    /// The application profile's part of a count key: a job of no profile is outside a
    /// limit that names profiles.
    fn app_key(&self, app: &str) -> Option<Option<String>> {
        if app.is_empty() && !matches!(self.apps, Scope::Any) {
            return None;
        }
        self.apps.key(app, false)
    }

    /// Does it count per host or per host list (its counts differ between hosts)?
    pub fn host_scoped(&self) -> bool {
        !matches!(self.hosts, Scope::Any)
    }

    /// Is it a Limit section of lsb.resources (not an lsb.users MAX_JOBS row)?
    pub fn is_limit_section(&self) -> bool {
        self.reason != pend::USER_LIMIT
    }

    /// The blimits columns of a count: users, queues, hosts, projects, applications.
    pub fn columns(&self, key: &[Option<String>; 5]) -> [String; 5] {
        [
            self.users.text(&key[0]),
            self.queues.text(&key[1]),
            self.hosts.text(&key[2]),
            self.projects.text(&key[3]),
            self.apps.text(&key[4]),
        ]
    }
}

/// The counts of a scheduling pass: what started (and just placed) jobs use.
#[derive(Debug, Default, Clone)]
pub struct Usage {
    pub counts: HashMap<CountKey, Used>,
    /// What the jobs of each count reserve (`rusage[]`), for MEM, SWP, TMP and RESOURCE.
    pub amounts: HashMap<CountKey, BTreeMap<String, f64>>,
}

/// Do `have` plus `adding` go over any of `limit`'s amounts?
fn over_amounts(
    limit: &[(String, f64)],
    have: Option<&BTreeMap<String, f64>>,
    adding: &[(String, f64)],
) -> bool {
    limit.iter().any(|(name, max)| {
        let add: f64 = adding
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v)
            .sum();
        add > 0.0 && have.and_then(|h| h.get(name)).copied().unwrap_or(0.0) + add > *max + 1e-9
    })
}

impl Usage {
    /// Count a job's slots on `hosts` (one entry per slot) against every limit.
    /// `amounts`: what the job reserves in all (`rusage[]`), counted once per count.
    pub fn add(
        &mut self,
        limits: &[ResLimit],
        c: &Consumer<'_>,
        hosts: &[&str],
        amounts: &[(String, f64)],
    ) {
        self.add_where(limits, c, hosts, amounts, |_| true);
    }

    /// [`Usage::add`] for the limits `counts` keeps (a suspended job's slots, which
    /// PREEMPT_FOR leaves out of some).
    pub fn add_where(
        &mut self,
        limits: &[ResLimit],
        c: &Consumer<'_>,
        hosts: &[&str],
        amounts: &[(String, f64)],
        counts: impl Fn(&ResLimit) -> bool,
    ) {
        for (i, l) in limits.iter().enumerate() {
            if !counts(l) {
                continue;
            }
            let mut seen: Vec<CountKey> = Vec::new();
            for h in hosts {
                let Some(k) = l.count_key(i, c, h) else {
                    continue;
                };
                let u = self.counts.entry(k.clone()).or_default();
                u.slots += 1;
                if !seen.contains(&k) {
                    u.jobs += 1;
                    if (!l.amounts.is_empty() || !l.amount_pcts.is_empty()) && !amounts.is_empty() {
                        let m = self.amounts.entry(k.clone()).or_default();
                        for (n, v) in amounts {
                            *m.entry(n.clone()).or_insert(0.0) += v;
                        }
                    }
                    seen.push(k);
                }
            }
        }
    }

    /// Of the limits that are not host-scoped, the pending reason of one that a job of
    /// `need` slots would go over (`slots_open[i]`: limit i's SLOTS window is open).
    pub fn job_reason(
        &self,
        limits: &[ResLimit],
        slots_open: &[bool],
        c: &Consumer<'_>,
        need: u32,
        amounts: &[(String, f64)],
    ) -> Option<u32> {
        for (i, l) in limits.iter().enumerate() {
            if l.host_scoped() {
                continue;
            }
            let Some(k) = l.count_key(i, c, "") else {
                continue;
            };
            let u = self.counts.get(&k).copied().unwrap_or_default();
            let over_slots = l
                .slots
                .is_some_and(|s| slots_open.get(i).copied().unwrap_or(true) && u.slots + need > s);
            let over_jobs = l.jobs.is_some_and(|j| u.jobs + 1 > j);
            if over_slots || over_jobs || over_amounts(&l.amounts, self.amounts.get(&k), amounts) {
                return Some(l.reason);
            }
        }
        None
    }

    /// How many slots the host-scoped limits leave a job on `host` (None: no such limit
    /// applies), or the pending reason when none.
    #[allow(clippy::too_many_arguments)]
    pub fn host_room(
        &self,
        limits: &[ResLimit],
        slots_open: &[bool],
        c: &Consumer<'_>,
        host: &str,
        ncpus: u32,
        host_max: &dyn Fn(&str) -> Option<f64>,
        amounts: &[(String, f64)],
    ) -> Result<Option<u32>, u32> {
        let mut room: Option<u32> = None;
        for (i, l) in limits.iter().enumerate() {
            if !l.host_scoped() {
                continue;
            }
            let Some(k) = l.count_key(i, c, host) else {
                continue;
            };
            let u = self.counts.get(&k).copied().unwrap_or_default();
            // A percentage of the host's size (unknown size: nothing allowed).
            let pcts: Vec<(String, f64)> = l
                .amount_pcts
                .iter()
                .map(|(n, p)| (n.clone(), host_max(n).unwrap_or(0.0) * p / 100.0))
                .collect();
            if l.jobs.is_some_and(|j| u.jobs + 1 > j)
                || over_amounts(&l.amounts, self.amounts.get(&k), amounts)
                || over_amounts(&pcts, self.amounts.get(&k), amounts)
            {
                return Err(l.reason);
            }
            // SLOTS, or SLOTS_PER_PROCESSOR times the host's processors (the smaller).
            let per_cpu = l.slots_per_cpu.map(|p| per_processor(p, ncpus));
            let cap = match (l.slots, per_cpu) {
                (Some(s), Some(p)) => Some(s.min(p)),
                (s, p) => s.or(p),
            };
            if let Some(s) = cap.filter(|_| slots_open.get(i).copied().unwrap_or(true)) {
                let left = s.saturating_sub(u.slots);
                if left == 0 {
                    return Err(l.reason);
                }
                room = Some(room.map_or(left, |r| r.min(left)));
            }
        }
        Ok(room)
    }
}

/// `per_cpu` slots for each of `ncpus` processors (at least one processor counted),
/// rounded down.
pub(crate) fn per_processor(per_cpu: f64, ncpus: u32) -> u32 {
    let slots = per_cpu * f64::from(ncpus.max(1));
    if slots.is_finite() && slots > 0.0 {
        slots.floor().min(f64::from(u32::MAX)) as u32
    } else {
        0
    }
}

/// The pending reason of lsb.resources limits ("Not allowed due to resource limit.").
pub const RES_LIMIT_REASON: u32 = 317;

/// A consumer list as written (`a b (c d)`): its names.
fn list(v: &str) -> Vec<String> {
    v.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter(|x| !x.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Resolve lsb.resources' Limit sections and lsb.users' MAX_JOBS.
pub fn resolve(
    b: &Batch,
    all_hosts: &[String],
    egroups: &BTreeMap<String, Vec<String>>,
    host_egroups: &BTreeMap<String, Vec<String>>,
) -> Vec<ResLimit> {
    let mut out: Vec<ResLimit> = b
        .limits
        .iter()
        .enumerate()
        .map(|(i, l)| from_limit(b, l, i, all_hosts, egroups, host_egroups))
        .collect();
    out.extend(from_users(b, egroups));
    out
}

fn from_limit(
    b: &Batch,
    l: &Limit,
    i: usize,
    all_hosts: &[String],
    egroups: &BTreeMap<String, Vec<String>>,
    host_egroups: &BTreeMap<String, Vec<String>>,
) -> ResLimit {
    let user_group = |n: &str| b.user_groups.iter().any(|g| g.name == n);
    let host_group = |n: &str| b.host_groups.iter().any(|g| g.name == n);
    let users = |t: &[String]| Members {
        shown: shown_list(t, user_group),
        ..Members::from(expand_users(t, &b.user_groups, egroups))
    };
    let plain = |t: &[String]| {
        let mut m = Members::default();
        for x in t {
            if x == "all" {
                m.all = true;
            } else if let Some(e) = x.strip_prefix('~') {
                m.except.push(e.to_owned());
            } else {
                m.names.push(x.clone());
            }
        }
        if !m.all && m.names.is_empty() {
            m.all = true;
        }
        m
    };
    let hosts = |t: &[String]| {
        let everything = t.iter().any(|x| x == "all" || x == "others");
        let excluded = t.iter().any(|x| x.starts_with('~'));
        let shown = shown_list(t, host_group);
        if everything && !excluded {
            Members {
                all: true,
                shown,
                ..Default::default()
            }
        } else {
            Members {
                names: crate::config::expand_hosts(t, &b.host_groups, all_hosts, host_egroups),
                shown,
                ..Default::default()
            }
        }
    };
    let scope = |together: &[String], each: &[String], f: &dyn Fn(&[String]) -> Members| {
        if !each.is_empty() {
            Scope::Each(f(each))
        } else if !together.is_empty() {
            Scope::Together(f(together))
        } else {
            Scope::Any
        }
    };
    ResLimit {
        name: if l.name.is_empty() {
            format!("limit{}", i + 1)
        } else {
            l.name.clone()
        },
        users: scope(&l.users, &l.per_user, &users),
        queues: scope(&l.queues, &l.per_queue, &plain),
        hosts: scope(&l.hosts, &l.per_host, &hosts),
        projects: scope(&l.projects, &l.per_project, &plain),
        apps: scope(
            &l.other.get("APPS").map(|v| list(v)).unwrap_or_default(),
            &l.other.get("PER_APP").map(|v| list(v)).unwrap_or_default(),
            &plain,
        ),
        slots: l.slots,
        slots_per_cpu: if l.per_host.is_empty() {
            None
        } else {
            l.other
                .get("SLOTS_PER_PROCESSOR")
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|n| n.is_finite() && *n > 0.0)
        },
        slots_window: l.slots_window.clone(),
        jobs: l.jobs,
        amounts: limit_amounts(l),
        reason: RES_LIMIT_REASON,
        amount_pcts: if l.per_host.is_empty() {
            Vec::new()
        } else {
            limit_percents(l)
        },
    }
}

/// A Limit's MEM, SWP, TMP given as a percentage (`MEM = 10%`).
pub fn limit_percents(l: &Limit) -> Vec<(String, f64)> {
    limit_sizes(l)
        .filter_map(|(name, v)| {
            let pct = v
                .strip_suffix('%')?
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| p.is_finite() && *p >= 0.0)?;
            Some((name.to_owned(), pct))
        })
        .collect()
}

/// A Limit's MEM, SWP and TMP as written (outer parentheses and blanks removed), each
/// with its canonical resource name.
fn limit_sizes(l: &Limit) -> impl Iterator<Item = (&'static str, &str)> {
    [("MEM", "mem"), ("SWP", "swp"), ("TMP", "tmp")]
        .into_iter()
        .filter_map(|(key, name)| {
            let v = l.other.get(key)?.trim();
            Some((name, v.trim_matches(|c| c == '(' || c == ')').trim()))
        })
}

/// A Limit's MEM, SWP, TMP (MB; a percentage: [`limit_percents`]) and RESOURCE
/// (`[name, n]` pairs).
pub fn limit_amounts(l: &Limit) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = limit_sizes(l)
        .filter(|(_, v)| !v.contains('%'))
        .filter_map(|(name, v)| Some((name.to_owned(), v.parse::<f64>().ok()?)))
        .collect();
    if let Some(v) = l.other.get("RESOURCE") {
        let mut rest = v.as_str();
        while let Some(open) = rest.find('[') {
            let Some(close) = rest[open..].find(']') else {
                break;
            };
            let inner = &rest[open + 1..open + close];
            rest = &rest[open + close + 1..];
            if let Some((n, amount)) = inner.split_once(',')
                && let Ok(a) = amount.trim().parse::<f64>()
            {
                out.push((n.trim().to_owned(), a));
            }
        }
    }
    out
}

/// lsb.users' MAX_JOBS: a user's own total; a group's (`grp`) shared by its members;
/// `grp@` each member's; `default` each user not named in a row of their own.
fn from_users(b: &Batch, egroups: &BTreeMap<String, Vec<String>>) -> Vec<ResLimit> {
    user_rows(b, egroups, |u| u.max_jobs)
        .into_iter()
        .map(|(u, users, max)| ResLimit {
            name: u.name.clone(),
            users,
            queues: Scope::Any,
            hosts: Scope::Any,
            projects: Scope::Any,
            apps: Scope::Any,
            slots: Some(max),
            slots_per_cpu: None,
            slots_window: None,
            jobs: None,
            amounts: Vec::new(),
            reason: pend::USER_LIMIT,
            amount_pcts: Vec::new(),
        })
        .collect()
}

/// lsb.users' MAX_PEND_JOBS column: (the users a row covers, their pending jobs), as
/// MAX_JOBS rows cover them.
pub fn pend_limits(b: &Batch, egroups: &BTreeMap<String, Vec<String>>) -> Vec<(Scope, u32)> {
    user_rows(b, egroups, |u| {
        u.other.get("MAX_PEND_JOBS")?.trim().parse::<u32>().ok()
    })
    .into_iter()
    .map(|(_, scope, max)| (scope, max))
    .collect()
}

/// lsb.users MAX_PEND_SLOTS rows, each with the users it covers (as [`pend_limits`]).
pub fn pend_slot_limits(b: &Batch, egroups: &BTreeMap<String, Vec<String>>) -> Vec<(Scope, u32)> {
    user_rows(b, egroups, |u| {
        u.other.get("MAX_PEND_SLOTS")?.trim().parse::<u32>().ok()
    })
    .into_iter()
    .map(|(_, scope, max)| (scope, max))
    .collect()
}

/// The lsb.users rows that set a value (`value`), each with the users it covers: a
/// user's own row, a group's (its members together), `group@` (each member) and
/// `default` (each user without a row of their own).
fn user_rows<'b>(
    b: &'b Batch,
    egroups: &BTreeMap<String, Vec<String>>,
    value: impl Fn(&BatchUser) -> Option<u32>,
) -> Vec<(&'b BatchUser, Scope, u32)> {
    let named: Vec<String> = b
        .users
        .iter()
        .filter(|u| u.name != "default" && !is_group(b, &u.name))
        .map(|u| u.name.trim_end_matches('@').to_owned())
        .collect();
    let members =
        |name: &str| Members::from(expand_users(&[name.to_owned()], &b.user_groups, egroups));
    b.users
        .iter()
        .filter_map(|u| {
            let v = value(u)?;
            let scope = if u.name == "default" {
                Scope::Each(Members {
                    all: true,
                    except: named.clone(),
                    ..Default::default()
                })
            } else if let Some(g) = u.name.strip_suffix('@') {
                Scope::Each(members(g))
            } else if is_group(b, &u.name) {
                Scope::Together(members(&u.name))
            } else {
                Scope::Each(members(&u.name))
            };
            Some((u, scope, v))
        })
        .collect()
}

impl Scope {
    /// Does the scope cover `user`, and does it count them alone (Each) or with the
    /// other members (Together)? None: it does not cover them.
    pub fn covers(&self, user: &str) -> Option<bool> {
        match self {
            Scope::Any => Some(false),
            Scope::Together(m) => m.has(user, false).then_some(false),
            Scope::Each(m) => m.has(user, false).then_some(true),
        }
    }

    /// Does the scope cover `user` (counting them with everyone it covers)?
    pub fn has_member(&self, user: &str) -> bool {
        match self {
            Scope::Any => true,
            Scope::Together(m) | Scope::Each(m) => m.has(user, false),
        }
    }
}

fn is_group(b: &Batch, name: &str) -> bool {
    let n = name.trim_end_matches('@');
    b.user_groups.iter().any(|g| g.name == n)
}
