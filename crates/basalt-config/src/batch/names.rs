//! The names the lsb.* files give each other, checked once every file is read: a
//! queue's `HOSTS` (hosts of the cluster, host groups of lsb.hosts) and `USERS` (users
//! the system knows, user groups of lsb.users), and the queues and hosts a Limit of
//! lsb.resources names. As LSF does, a name that is none of these is a warning naming the
//! line and is dropped; a queue left with no valid host or user is ignored with a warning
//! (`No valid value for key HOSTS in the queue <q>; ignoring the queue`), and so is a
//! Limit whose consumer list is left with no valid name (it is not widened to every queue
//! or host).

use std::collections::BTreeSet;

use crate::cluster::ClusterFile;
use crate::error::Ctx;

use super::{Group, Queue};

/// Judges one token of a list: Some(true) a valid name to include, Some(false) a valid
/// exclusion (or `none`), None no such name.
type Judge<'a> = &'a dyn Fn(&str) -> Option<bool>;

/// A host list token: whether it excludes (`~`), and the name without its `+N` level.
struct Token<'a> {
    exclude: bool,
    name: &'a str,
}

/// Split `~name+N` (`host+` is level 1) into its parts.
fn host_token(t: &str) -> Token<'_> {
    let (exclude, rest) = match t.strip_prefix('~') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let name = match rest.rsplit_once('+') {
        Some((n, level)) if level.chars().all(|c| c.is_ascii_digit()) => n,
        _ => rest,
    };
    Token {
        exclude,
        name: name.trim_end_matches('/'),
    }
}

/// What the batch files define that other files may name.
pub(crate) struct Known<'a> {
    pub cluster: &'a ClusterFile,
    pub host_groups: &'a [Group],
    pub user_groups: &'a [Group],
    /// The queues lsb.queues defines (those ignored not among them).
    pub queues: BTreeSet<String>,
}

impl Known<'_> {
    fn host_or_group(&self, name: &str) -> bool {
        self.cluster.host(name).is_some() || self.host_groups.iter().any(|g| g.name == name)
    }
}

/// Drop the names of `list` that `valid` refuses, warning about each as `what` at
/// `line`. Returns whether the list named something to include (not only `~x`) and
/// nothing of that is left.
fn filter(
    ctx: &mut Ctx<'_>,
    line: usize,
    list: &mut Vec<String>,
    whose: &str,
    key: &str,
    what: &str,
    valid: Judge<'_>,
) -> bool {
    let mut named = false;
    let mut left = false;
    list.retain(|t| {
        let ok = valid(t);
        let positive = !t.starts_with('~') && t != "none";
        named |= positive;
        match ok {
            Some(include) => {
                left |= include;
                true
            }
            None => {
                ctx.warn(
                    line,
                    format!("{whose}: {key}: `{t}` is not {what}; ignored"),
                );
                false
            }
        }
    });
    named && !left
}

/// A queue's HOSTS and USERS (`user_known`: is this a user of the system? None: users
/// are not judged). Queues left with no valid host or user are removed; their names are
/// returned.
pub(crate) fn check_queues(
    ctx: &mut Ctx<'_>,
    queues: &mut Vec<Queue>,
    known: &Known<'_>,
    user_known: Option<&dyn Fn(&str) -> bool>,
) -> BTreeSet<String> {
    let mut dropped = BTreeSet::new();
    for q in queues.iter_mut() {
        let at = |key: &str| q.lines.get(key).copied().unwrap_or(q.line);
        let (hosts_at, users_at) = (at("HOSTS"), at("USERS"));
        let whose = format!("queue {}", q.name);
        let host_ok = |t: &str| -> Option<bool> {
            let tok = host_token(t);
            match tok.name {
                "none" if !tok.exclude => Some(false),
                "all" | "others" if !tok.exclude => Some(true),
                n if known.host_or_group(n) => Some(!tok.exclude),
                _ => None,
            }
        };
        let no_hosts = filter(
            ctx,
            hosts_at,
            &mut q.hosts,
            &whose,
            "HOSTS",
            "a host of the cluster, a host group, all, others or none",
            &host_ok,
        );
        if no_hosts {
            ctx.warn(
                hosts_at,
                format!(
                    "No valid value for key HOSTS in the queue <{}>; ignoring the queue",
                    q.name
                ),
            );
            dropped.insert(q.name.clone());
            continue;
        }
        let Some(user_known) = user_known else {
            continue;
        };
        let user_ok = |t: &str| -> Option<bool> {
            let (exclude, name) = match t.strip_prefix('~') {
                Some(n) => (true, n),
                None => (false, t),
            };
            let ok = (name == "all" && !exclude)
                || known.user_groups.iter().any(|g| g.name == name)
                || user_known(name);
            ok.then_some(!exclude)
        };
        let no_users = filter(
            ctx,
            users_at,
            &mut q.users,
            &whose,
            "USERS",
            "a user, a user group of lsb.users or all",
            &user_ok,
        );
        if no_users {
            ctx.warn(
                users_at,
                format!(
                    "No valid value for key USERS in the queue <{}>; ignoring the queue",
                    q.name
                ),
            );
            dropped.insert(q.name.clone());
        }
    }
    queues.retain(|q| !dropped.contains(&q.name));
    dropped
}

/// A Limit's QUEUES/PER_QUEUE and HOSTS/PER_HOST (`line_of`: the line of a keyword of
/// it). False when the Limit is to be ignored: a list that named something is left with
/// nothing valid.
pub(crate) fn check_limit(
    ctx: &mut Ctx<'_>,
    l: &mut super::Limit,
    known: &Known<'_>,
    line_of: &dyn Fn(&str) -> usize,
) -> bool {
    let whose = format!("Limit {}", l.name);
    let queue_ok = |t: &str| -> Option<bool> {
        let (exclude, name) = match t.strip_prefix('~') {
            Some(n) => (true, n),
            None => (false, t),
        };
        ((name == "all" && !exclude) || known.queues.contains(name)).then_some(!exclude)
    };
    let host_ok = |t: &str| -> Option<bool> {
        let tok = host_token(t);
        match tok.name {
            "all" | "others" if !tok.exclude => Some(true),
            n if known.host_or_group(n) => Some(!tok.exclude),
            _ => None,
        }
    };
    let mut keep = true;
    let lists: [(&str, &mut Vec<String>, &str, Judge<'_>); 4] = [
        (
            "QUEUES",
            &mut l.queues,
            "a queue of lsb.queues or all",
            &queue_ok,
        ),
        (
            "PER_QUEUE",
            &mut l.per_queue,
            "a queue of lsb.queues or all",
            &queue_ok,
        ),
        (
            "HOSTS",
            &mut l.hosts,
            "a host of the cluster, a host group or all",
            &host_ok,
        ),
        (
            "PER_HOST",
            &mut l.per_host,
            "a host of the cluster, a host group or all",
            &host_ok,
        ),
    ];
    for (key, list, what, ok) in lists {
        let at = line_of(key);
        if filter(ctx, at, list, &whose, key, what, ok) {
            ctx.warn(
                at,
                format!("{whose}: no valid value for key {key}; the Limit is ignored"),
            );
            keep = false;
        }
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_tokens_lose_their_level_and_exclusion() {
        for (t, exclude, name) in [
            ("hostA", false, "hostA"),
            ("hostA+2", false, "hostA"),
            ("hostA+", false, "hostA"),
            ("~hostB", true, "hostB"),
            ("others+1", false, "others"),
            ("group0/", false, "group0"),
            ("a+b", false, "a+b"),
        ] {
            let tok = host_token(t);
            assert_eq!((tok.exclude, tok.name), (exclude, name), "{t}");
        }
    }
}
