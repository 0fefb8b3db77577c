//! Host and user lists of the configuration resolved: host groups and `all`/`others`/`~`
//! in host lists, user groups (with their `!` egroup members) in user lists, group
//! administrators, and the checks of `-app` and `-G` a submission gets.

use super::*;

/// Host names, host groups (recursively), `all`/`others` and `~` exclusions, expanded to
/// host names (empty: every host, nothing excluded; [`NO_HOST`] alone: no host).
pub(crate) fn expand_hosts(
    tokens: &[String],
    groups: &[Group],
    all: &[String],
    dynamic: &BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    expand(tokens, groups, all, dynamic)
}

/// A host group's `!` member stands for the hosts its egroup gave (`dynamic`), and for no
/// host when it gave none.
pub(super) fn expand(
    tokens: &[String],
    groups: &[Group],
    all: &[String],
    dynamic: &BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    let mut include: Vec<String> = Vec::new();
    let mut exclude: Vec<String> = Vec::new();
    let mut everything = false;
    fn members(
        name: &str,
        groups: &[Group],
        depth: u32,
        out: &mut Vec<String>,
        all: &[String],
        dynamic: &BTreeMap<String, Vec<String>>,
    ) {
        if depth > 8 {
            return;
        }
        if let Some(g) = groups.iter().find(|g| g.name == name) {
            for m in &g.members {
                if m == "all" {
                    out.extend(all.iter().cloned());
                } else if m == "!" {
                    out.extend(dynamic.get(&g.name).into_iter().flatten().cloned());
                } else if !m.starts_with('~') {
                    members(m, groups, depth + 1, out, all, dynamic);
                }
            }
        } else {
            out.push(name.to_string());
        }
    }
    let mut named = false;
    for t in tokens {
        let t = t.split('+').next().unwrap_or(t).trim();
        if t.is_empty() || t == "none" {
            continue;
        }
        if t == "all" || t == "others" {
            everything = true;
        } else if let Some(x) = t.strip_prefix('~') {
            members(x, groups, 0, &mut exclude, all, dynamic);
        } else {
            named = true;
            members(t, groups, 0, &mut include, all, dynamic);
        }
    }
    if everything {
        include = all.to_vec();
    }
    if (everything && exclude.is_empty()) || (!everything && !named) {
        return Vec::new();
    }
    include.retain(|h| !exclude.iter().any(|x| basalt_core::same_host(x, h)));
    if include.is_empty() {
        // Names that come to no host (an unresolved egroup, everything excluded): no
        // host at all, not every host.
        return vec![NO_HOST.to_owned()];
    }
    include
}

/// The preference level of each host a queue's HOSTS names with `+N` (a group's level
/// goes to each of its hosts); unnamed hosts are absent.
pub(super) fn host_prefs(
    tokens: &[String],
    groups: &[Group],
    all: &[String],
    dynamic: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for t in tokens {
        let Some((name, pref)) = t.trim().rsplit_once('+') else {
            continue;
        };
        let Ok(pref) = pref.parse::<i64>() else {
            continue;
        };
        if name == "others" || name == "all" {
            continue;
        }
        for h in expand(&[name.to_owned()], groups, all, dynamic) {
            if h != NO_HOST {
                out.entry(h).or_insert(pref);
            }
        }
    }
    out
}

/// What a host list that names no host expands to (an empty list means every host);
/// never a host's name.
pub const NO_HOST: &str = "(none)";

/// Who may use a queue: everyone, or the users listed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UserList {
    pub all: bool,
    pub names: Vec<String>,
    /// `~name` exclusions (meaningful with `all`: everyone but them).
    pub except: Vec<String>,
}

/// Resolve a queue's USERS: user names, user groups (recursively, at most 8 deep), `all`,
/// `~name` exclusions. A group's `all` member means every user; its `!` member stands for
/// the members its egroup gave (`egroups`), and for nobody when it gave none (the egroup
/// failed or is missing): a group that cannot be resolved denies, it never allows.
pub fn expand_users(
    tokens: &[String],
    groups: &[Group],
    egroups: &BTreeMap<String, Vec<String>>,
) -> UserList {
    fn members(
        name: &str,
        groups: &[Group],
        egroups: &BTreeMap<String, Vec<String>>,
        depth: u32,
        out: &mut UserList,
    ) {
        if depth > 8 {
            return;
        }
        let Some(g) = groups.iter().find(|g| g.name == name) else {
            out.names.push(name.to_string());
            return;
        };
        for m in &g.members {
            if m == "all" {
                out.all = true;
            } else if m == "!" {
                out.names
                    .extend(egroups.get(&g.name).into_iter().flatten().cloned());
            } else if !m.starts_with('~') {
                members(m, groups, egroups, depth + 1, out);
            }
        }
    }
    let mut include = UserList::default();
    let mut exclude = UserList::default();
    let mut given = false;
    for t in tokens {
        let t = t.trim();
        if t.is_empty() || t == "none" {
            continue;
        }
        given = true;
        if t == "all" {
            include.all = true;
        } else if let Some(x) = t.strip_prefix('~') {
            members(x, groups, egroups, 0, &mut exclude);
        } else {
            members(t, groups, egroups, 0, &mut include);
        }
    }
    if !given {
        include.all = true;
    }
    include.names.retain(|u| !exclude.names.contains(u));
    include.names.sort();
    include.names.dedup();
    if include.all {
        include.names.clear();
        include.except = exclude.names;
        include.except.sort();
        include.except.dedup();
    }
    include
}

/// lsb.users GROUP_ADMIN resolved: administrator -> the members of each group they
/// administer (see [`SchedConfig::group_admins`]).
pub fn group_admins(
    groups: &[Group],
    egroups: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, Vec<UserList>> {
    let mut out: BTreeMap<String, Vec<UserList>> = BTreeMap::new();
    for g in groups {
        let members = expand_users(std::slice::from_ref(&g.name), groups, egroups);
        for token in &g.admins {
            let (name, rights) = match token.split_once('[') {
                Some((n, r)) => (n.trim(), r.trim_end_matches(']').trim()),
                None => (token.trim(), ""),
            };
            if rights.eq_ignore_ascii_case("usershares") || name.is_empty() {
                continue;
            }
            let admins = expand_users(&[name.to_owned()], groups, egroups);
            // `all` as an administrator would make everyone one: not taken.
            for a in admins.names {
                out.entry(a).or_default().push(members.clone());
            }
        }
    }
    out
}

/// lsb.hosts HostGroup GROUP_ADMIN resolved: administrator (a user group named: each of
/// its users) -> the hosts of the groups they administer (see
/// [`SchedConfig::host_group_admins`]).
pub fn host_group_admins(
    host_groups: &[Group],
    user_groups: &[Group],
    all_hosts: &[String],
    host_egroups: &BTreeMap<String, Vec<String>>,
    egroups: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for g in host_groups.iter().filter(|g| !g.admins.is_empty()) {
        let mut hosts = expand(
            std::slice::from_ref(&g.name),
            host_groups,
            all_hosts,
            host_egroups,
        );
        // An empty expansion is every host (`all`).
        if hosts.is_empty() {
            hosts = all_hosts.to_vec();
        }
        for token in &g.admins {
            let name = token.split('[').next().unwrap_or("").trim();
            if name.is_empty() {
                continue;
            }
            // `all` as an administrator would make everyone one: not taken.
            for u in expand_users(&[name.to_owned()], user_groups, egroups).names {
                out.entry(u).or_default().extend(hosts.iter().cloned());
            }
        }
    }
    for hosts in out.values_mut() {
        hosts.sort();
        hosts.dedup();
    }
    out
}

impl UserList {
    /// Does the list take `user`?
    pub fn covers(&self, user: &str) -> bool {
        if self.all {
            !self.except.iter().any(|u| u == user)
        } else {
            self.names.iter().any(|u| u == user)
        }
    }
}

/// Is `user` a member of user group `group` of lsb.users: named in GROUP_MEMBER, a
/// member of a subgroup (at most 8 deep), covered by `all` without being excluded by a
/// `~name` (a user or a group), or among the members the group's egroup gave for `!`?
/// None when lsb.users defines no such group.
pub fn in_user_group(
    groups: &[Group],
    egroups: &BTreeMap<String, Vec<String>>,
    group: &str,
    user: &str,
) -> Option<bool> {
    fn member(
        g: &Group,
        groups: &[Group],
        egroups: &BTreeMap<String, Vec<String>>,
        user: &str,
        depth: u32,
    ) -> bool {
        if depth > 8 {
            return false;
        }
        let named = |name: &str| match groups.iter().find(|x| x.name == name) {
            Some(sub) => member(sub, groups, egroups, user, depth + 1),
            None => name == user,
        };
        let mut all = false;
        let mut yes = false;
        let mut excluded = false;
        for m in &g.members {
            if m == "all" {
                all = true;
            } else if m == "!" {
                yes |= egroups
                    .get(&g.name)
                    .is_some_and(|ms| ms.iter().any(|u| u == user));
            } else if let Some(x) = m.strip_prefix('~') {
                excluded |= named(x);
            } else {
                yes |= named(m);
            }
        }
        (yes || all) && !excluded
    }
    let g = groups.iter().find(|g| g.name == group)?;
    Some(member(g, groups, egroups, user, 0))
}

/// What mbatchd checks of a submission against configuration the core does not keep:
/// `-app` must name an application profile of lsb.applications (LSF: "Application
/// profile does not exist"), and `-G` a user group of lsb.users (LSF: "Bad user group
/// name") that the submitting user belongs to (LSF: "User not in the specified user
/// group"). Empty names are not checked.
pub fn check_app_and_group(
    batch: &Batch,
    egroups: &BTreeMap<String, Vec<String>>,
    user: &str,
    app: &str,
    group: &str,
) -> Result<(), SchedError> {
    if !app.is_empty() && !batch.applications.iter().any(|a| a.name == app) {
        return Err(SchedError::NoApplication);
    }
    if !group.is_empty() {
        match in_user_group(&batch.user_groups, egroups, group, user) {
            None => return Err(SchedError::BadUserGroup),
            Some(false) => return Err(SchedError::UserNotInGroup),
            Some(true) => {}
        }
    }
    Ok(())
}
