//! The batch files read by mbatchd: `lsb.params`, `lsb.queues`, `lsb.hosts`,
//! `lsb.users`, `lsb.resources` and `lsb.applications`, one module each. This module owns
//! [`Batch`] (everything from those files), `load` (which reads them in order and checks
//! what spans two files) and the value helpers several files share.

use std::path::Path;

use crate::cluster::ClusterFile;
use crate::error::{Ctx, Diag};
use crate::shared::Shared;
use crate::timewindow::TimeWindow;

/// Everything from the `lsb.*` files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    pub params: BatchParams,
    /// Queues in file order.
    pub queues: Vec<Queue>,
    /// Host section of lsb.hosts.
    pub hosts: Vec<BatchHost>,
    /// HostGroup section of lsb.hosts.
    pub host_groups: Vec<Group>,
    /// HostPartition sections of lsb.hosts.
    pub host_partitions: Vec<HostPartition>,
    /// User section of lsb.users.
    pub users: Vec<BatchUser>,
    /// UserGroup section of lsb.users.
    pub user_groups: Vec<Group>,
    /// UserMap sections of lsb.users (MultiCluster user account mapping).
    pub user_map: UserMap,
    /// Limit sections of lsb.resources.
    pub limits: Vec<Limit>,
    /// The ReservationUsage section of lsb.resources.
    pub reservation_usage: Vec<ReservationUsage>,
    /// Application sections of lsb.applications.
    pub applications: Vec<Application>,
}

impl Batch {
    /// A queue by name.
    pub fn queue(&self, name: &str) -> Option<&Queue> {
        self.queues.iter().find(|q| q.name == name)
    }
}

mod applications;
mod fairshare;
mod hosts;
mod multicluster;
mod names;
mod params;
mod preempt;
pub mod queues;
mod resources;
pub mod rlimits;
mod users;

pub use applications::*;
pub use fairshare::*;
pub use hosts::*;
pub use multicluster::*;
pub use params::*;
pub use preempt::*;
pub use queues::*;
pub use resources::*;
pub use users::*;

// ---------------------------------------------------------------- shared by the files

pub(super) fn list(v: &str) -> Vec<String> {
    v.split_whitespace().map(str::to_owned).collect()
}

pub(super) fn window(ctx: &mut Ctx<'_>, line: usize, key: &str, v: &str) -> Option<TimeWindow> {
    match TimeWindow::parse(v) {
        Ok(w) => Some(w),
        Err(e) => {
            ctx.err(line, format!("{key}: {e}"));
            None
        }
    }
}

// ---------------------------------------------------------------- loading

/// JOB_INCLUDE_POSTPROC (lsb.params, lsb.applications): `Y` or `N`. JOB_POSTPROC_TIMEOUT:
/// minutes, more than 0. A value that is neither is an error naming the line; true when
/// the entry is one of the two and its value is good.
pub(super) fn postproc_setting(ctx: &mut Ctx<'_>, line: usize, key: &str, value: &str) -> bool {
    match key {
        "JOB_INCLUDE_POSTPROC" => {
            let ok = matches!(value.trim().to_ascii_uppercase().as_str(), "Y" | "N");
            if !ok {
                ctx.err(
                    line,
                    format!("JOB_INCLUDE_POSTPROC must be Y or N, found `{value}`"),
                );
            }
            ok
        }
        "JOB_POSTPROC_TIMEOUT" => match ctx.uint(line, key, value) {
            Some(0) => {
                ctx.err(line, "JOB_POSTPROC_TIMEOUT must be more than 0 minutes");
                false
            }
            Some(_) => true,
            None => false,
        },
        _ => false,
    }
}

/// Read every lsb.* file in `dir` (lsb.params and lsb.queues are required), then check
/// the names they give each other ([`names`]); `user_known` tells whether a name is a user
/// of the system (None: a queue's USERS are not judged).
pub(crate) fn load(
    diag: &mut Diag,
    dir: &Path,
    shared: &Shared,
    cluster: &ClusterFile,
    user_known: Option<&dyn Fn(&str) -> bool>,
) -> Batch {
    let mut batch = Batch::default();

    let params_path = dir.join("lsb.params");
    let mut dq_line = 0;
    if let Some(text) = crate::read_file(diag, &params_path, true) {
        let (p, l) = parse_params(&mut diag.file(&params_path), &text);
        batch.params = p;
        dq_line = l;
    }

    let queues_path = dir.join("lsb.queues");
    let queues_text = crate::read_file(diag, &queues_path, true);
    if let Some(text) = &queues_text {
        batch.queues = parse_queues(&mut diag.file(&queues_path), text, shared, cluster);
    }

    let hosts_path = dir.join("lsb.hosts");
    if let Some(text) = crate::read_file(diag, &hosts_path, false) {
        let mut ctx = diag.file(&hosts_path);
        parse_hosts(&mut ctx, &text, shared, &mut batch);
        check_host_groups(&mut ctx, &batch, cluster);
        check_host_rows(&mut ctx, &batch, cluster, shared);
    }

    let users_path = dir.join("lsb.users");
    if let Some(text) = crate::read_file(diag, &users_path, false) {
        let mut ctx = diag.file(&users_path);
        parse_users(&mut ctx, &text, &mut batch);
        check_user_map(&mut ctx, &batch, shared, cluster);
        // A group's USER_SHARES (its share tree under a queue's FAIRSHARE).
        for g in &batch.user_groups {
            if let Some(v) = g.shares.as_deref().filter(|v| !v.trim().is_empty())
                && let Err(e) = parse_share_list(v)
            {
                ctx.err(g.line, format!("USER_SHARES of group {}: {e}", g.name));
            }
        }
    }

    // What lsb.queues names of the other files (every file read: one load reports every
    // problem), then what depends on which queues are left.
    if queues_text.is_some() {
        let mut ctx = diag.file(&queues_path);
        let known = names::Known {
            cluster,
            host_groups: &batch.host_groups,
            user_groups: &batch.user_groups,
            queues: Default::default(),
        };
        let mut queues = std::mem::take(&mut batch.queues);
        let ignored = names::check_queues(&mut ctx, &mut queues, &known, user_known);
        batch.queues = queues;
        let mut ctx = diag.file(&params_path);
        for q in &batch.params.default_queue {
            if batch.queue(q).is_some() {
                continue;
            }
            let why = if ignored.contains(q) {
                "is ignored (lsb.queues)"
            } else {
                "is not defined in lsb.queues"
            };
            ctx.err(dq_line, format!("DEFAULT_QUEUE: queue `{q}` {why}"));
        }
        check_preemption(&mut diag.file(&queues_path), &batch.queues);
        check_slot_pools(&mut diag.file(&queues_path), &batch.queues);
    }

    let resources_path = dir.join("lsb.resources");
    if let Some(text) = crate::read_file(diag, &resources_path, false) {
        let known = names::Known {
            cluster,
            host_groups: &batch.host_groups,
            user_groups: &batch.user_groups,
            queues: batch.queues.iter().map(|q| q.name.clone()).collect(),
        };
        let (mut limits, mut usage) = (Vec::new(), Vec::new());
        parse_resources(
            &mut diag.file(&resources_path),
            &text,
            shared,
            &known,
            &mut limits,
            &mut usage,
        );
        batch.limits = limits;
        batch.reservation_usage = usage;
    }

    let apps_path = dir.join("lsb.applications");
    if let Some(text) = crate::read_file(diag, &apps_path, false) {
        parse_applications(&mut diag.file(&apps_path), &text, &mut batch.applications);
    }
    batch
}

/// SLOT_POOL and SLOT_SHARE come together; a pool's shares add up to 100 at most, and
/// its queues should use the same hosts (seed 003) — a warning when they do not.
fn check_slot_pools(ctx: &mut Ctx<'_>, queues: &[Queue]) {
    let mut pools: std::collections::BTreeMap<&str, Vec<&Queue>> = Default::default();
    for q in queues {
        match (&q.slot_pool, q.slot_share) {
            (Some(p), Some(_)) => pools.entry(p.as_str()).or_default().push(q),
            (Some(_), None) => ctx.err(
                q.line,
                format!("queue {}: SLOT_POOL without SLOT_SHARE", q.name),
            ),
            (None, Some(_)) => ctx.err(
                q.line,
                format!("queue {}: SLOT_SHARE without SLOT_POOL", q.name),
            ),
            (None, None) => {}
        }
    }
    for (pool, qs) in pools {
        let total: u32 = qs.iter().filter_map(|q| q.slot_share).sum();
        if total > 100 {
            ctx.err(
                qs[0].line,
                format!(
                    "slot pool {pool}: its queues' SLOT_SHARE add up to {total} %, more than 100"
                ),
            );
        }
        if let Some(other) = qs.iter().find(|q| q.hosts != qs[0].hosts) {
            ctx.warn(
                other.line,
                format!(
                    "slot pool {pool}: queue {} uses other HOSTS than queue {}; a pool's queues should use the same hosts",
                    other.name, qs[0].name
                ),
            );
        }
    }
}

/// PREEMPTION names queues that exist, of lower priority (PREEMPTIVE[...]) or higher
/// (PREEMPTABLE[...]): another is a warning, and the name has no effect.
fn check_preemption(ctx: &mut Ctx<'_>, queues: &[Queue]) {
    for q in queues {
        let p = &q.preempt;
        for (name, _) in p.preemptive.iter().flatten() {
            match queues.iter().find(|o| o.name == *name) {
                None => ctx.warn(
                    q.line,
                    format!(
                        "queue {}: PREEMPTIVE[{name}]: no such queue; ignored",
                        q.name
                    ),
                ),
                Some(o) if o.priority >= q.priority => ctx.warn(
                    q.line,
                    format!(
                        "queue {}: PREEMPTIVE[{name}]: queue {name} is not of lower priority ({} >= {}); ignored",
                        q.name, o.priority, q.priority
                    ),
                ),
                Some(_) => {}
            }
        }
        for name in p.preemptable.iter().flatten() {
            match queues.iter().find(|o| o.name == *name) {
                None => ctx.warn(
                    q.line,
                    format!(
                        "queue {}: PREEMPTABLE[{name}]: no such queue; ignored",
                        q.name
                    ),
                ),
                Some(o) if o.priority <= q.priority => ctx.warn(
                    q.line,
                    format!(
                        "queue {}: PREEMPTABLE[{name}]: queue {name} is not of higher priority ({} <= {}); ignored",
                        q.name, o.priority, q.priority
                    ),
                ),
                Some(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests;
