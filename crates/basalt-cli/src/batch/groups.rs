//! `bmgroup` and `bugroup`: the host groups of lsb.hosts and the user groups of lsb.users,
//! read from the configuration files (the commands need no daemon).
//!
//! LSF's layout: a `GROUP_NAME    HOSTS` (or `USERS`) header, then a row per group, its
//! name left-justified in 12 columns (cut to 12 characters unless `-w`), a space and its
//! members separated by single spaces. A member that is itself a group is shown as
//! `name/`; `-r` expands subgroups recursively into host or user names, applying `~name`
//! exclusions and dropping duplicates. `all` shows as `all` in a host group (with `-r`,
//! the batch server hosts of the cluster) and as `all users` in a user group. A `(!)`
//! group shows the members `LSF_SERVERDIR/egroup -m|-u <group>` gave.
//!
//! `-l` prints LSF's long multi-line format, a block per group separated by a blank line:
//! `GROUP_NAME:`, `HOSTS:`/`USERS:`, `GROUP_ADMIN:` when GROUP_ADMIN is set (user groups
//! named there expanded to their users) and, for user groups, `SHARES:` when USER_SHARES
//! is set (`[name, shares]` each).
//!
//! A named group that does not exist: `<name>: No such user/host group` on stderr, exit
//! 255 (the groups that exist are still shown). No group configured at all:
//! `host group: No host group defined in the system` (or `user group: No user group
//! defined in the system`), exit 255.

use super::opts::{Item, Spec};
use basalt_config::batch::Group;
use basalt_core::same_host;
use basalt_runtime::egroup::{self, Kind};
use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;

/// How deep subgroups are followed (a loop in the configuration stops here).
const MAX_DEPTH: u32 = 8;

/// Width of the GROUP_NAME column.
const NAME_WIDTH: usize = 12;

/// What the options ask for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Opts {
    /// `-l`: the long multi-line format.
    pub long: bool,
    /// `-r`: subgroups expanded recursively.
    pub recursive: bool,
    /// `-w`: group names not cut to the column.
    pub wide: bool,
}

/// The groups shown and what their members are resolved against.
#[derive(Debug, Clone, Copy)]
pub struct Groups<'a> {
    pub kind: Kind,
    /// The groups of that kind (lsb.hosts HostGroup or lsb.users UserGroup), in order.
    pub groups: &'a [Group],
    /// The user groups of lsb.users, for expanding GROUP_ADMIN.
    pub user_groups: &'a [Group],
    /// The batch server hosts of the cluster (what `all` and host name patterns cover).
    pub hosts: &'a [String],
    /// The members egroup gave the `(!)` groups of `kind`, by group name.
    pub dynamic: &'a BTreeMap<String, Vec<String>>,
}

/// What a command prints, and whether it succeeded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub out: String,
    pub err: String,
    pub ok: bool,
}

fn label(kind: Kind) -> &'static str {
    match kind {
        Kind::Host => "HOSTS",
        Kind::User => "USERS",
    }
}

fn what(kind: Kind) -> &'static str {
    match kind {
        Kind::Host => "host group",
        Kind::User => "user group",
    }
}

/// The groups `names` select (all of them when empty), in the order asked, and the names
/// that are not groups.
pub fn select<'g>(groups: &'g [Group], names: &[String]) -> (Vec<&'g Group>, Vec<String>) {
    if names.is_empty() {
        return (groups.iter().collect(), Vec::new());
    }
    let mut found = Vec::new();
    let mut unknown = Vec::new();
    for n in names {
        match groups.iter().find(|g| &g.name == n) {
            Some(g) => {
                if !found.iter().any(|f: &&Group| f.name == g.name) {
                    found.push(g);
                }
            }
            None => unknown.push(n.clone()),
        }
    }
    (found, unknown)
}

/// The `(!)` groups whose egroup must be asked to show the groups `names` select: those
/// groups, and with `recursive` every group reached through them (members and `~`
/// exclusions).
pub fn dynamic_needed(groups: &[Group], names: &[String], recursive: bool) -> Vec<String> {
    let (selected, _) = select(groups, names);
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut stack: Vec<&Group> = selected;
    let mut out = Vec::new();
    while let Some(g) = stack.pop() {
        if !seen.insert(g.name.as_str()) {
            continue;
        }
        if g.members.iter().any(|m| m == "!") {
            out.push(g.name.clone());
        }
        if recursive {
            for m in &g.members {
                let m = m.strip_prefix('~').unwrap_or(m);
                if let Some(sub) = groups.iter().find(|x| x.name == m) {
                    stack.push(sub);
                }
            }
        }
    }
    out.sort();
    out
}

/// Is `m` a host name pattern (`*` wildcards or a `[1-3,5]` number range)?
fn is_pattern(m: &str) -> bool {
    m.contains('*') || (m.contains('[') && m.ends_with(']'))
}

/// `*` matching, ignoring ASCII case (host names).
fn wildcard(pattern: &str, s: &str) -> bool {
    basalt_sched::wildcard(&pattern.to_ascii_lowercase(), &s.to_ascii_lowercase())
}

/// `name[1-3,5]` -> `name1 name2 name3 name5`; None when the brackets are not a range.
fn range_names(m: &str) -> Option<Vec<String>> {
    let open = m.find('[')?;
    let inner = m[open + 1..].strip_suffix(']')?;
    let prefix = &m[..open];
    let mut out = Vec::new();
    for piece in inner.split(',') {
        let (a, b) = match piece.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (piece.trim(), piece.trim()),
        };
        let (x, y): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
        if y < x || y - x > 100_000 {
            return None;
        }
        // A leading zero keeps the width (`host[01-10]`).
        let width = if a.starts_with('0') { a.len() } else { 0 };
        out.extend((x..=y).map(|i| format!("{prefix}{i:0width$}")));
    }
    Some(out)
}

/// The hosts of the cluster a pattern names.
fn pattern_hosts(m: &str, hosts: &[String]) -> Vec<String> {
    // Brackets that are not a number range are part of the name.
    let candidates = range_names(m).unwrap_or_else(|| vec![m.to_owned()]);
    let mut out = Vec::new();
    for c in candidates {
        if c.contains('*') {
            out.extend(hosts.iter().filter(|h| wildcard(&c, h)).cloned());
        } else {
            out.push(canonical_host(&c, hosts));
        }
    }
    out
}

/// The cluster's spelling of host `name` (matched case-insensitively, by short name).
fn canonical_host(name: &str, hosts: &[String]) -> String {
    hosts
        .iter()
        .find(|h| same_host(h, name))
        .cloned()
        .unwrap_or_else(|| name.to_owned())
}

/// A group expanded into names.
#[derive(Debug, Default)]
struct Expanded {
    /// `all` users (user groups only; a host group's `all` is its hosts).
    all: bool,
    names: Vec<String>,
    /// With `all`: the users excluded from everyone.
    except: Vec<String>,
}

fn same(kind: Kind, a: &str, b: &str) -> bool {
    match kind {
        Kind::Host => same_host(a, b),
        Kind::User => a == b,
    }
}

fn push_unique(kind: Kind, out: &mut Vec<String>, name: String) {
    if !out.iter().any(|x| same(kind, x, &name)) {
        out.push(name);
    }
}

/// Expand group `g` recursively into host or user names.
fn expand(
    kind: Kind,
    g: &Group,
    groups: &[Group],
    hosts: &[String],
    dynamic: &BTreeMap<String, Vec<String>>,
    depth: u32,
) -> Expanded {
    let mut out = Expanded::default();
    if depth > MAX_DEPTH {
        return out;
    }
    let mut include: Vec<String> = Vec::new();
    let mut exclude: Vec<String> = Vec::new();
    let mut inherited_except: Vec<String> = Vec::new();
    let sub = |name: &str| groups.iter().find(|x| x.name == name);
    let host_name = |m: &str| match kind {
        Kind::Host => canonical_host(m, hosts),
        Kind::User => m.to_owned(),
    };
    for m in &g.members {
        if m == "all" {
            match kind {
                Kind::Host => include.extend(hosts.iter().cloned()),
                Kind::User => out.all = true,
            }
        } else if m == "!" {
            include.extend(
                dynamic
                    .get(&g.name)
                    .into_iter()
                    .flatten()
                    .map(|d| host_name(d)),
            );
        } else if let Some(x) = m.strip_prefix('~') {
            if let Some(s) = sub(x) {
                exclude.extend(expand(kind, s, groups, hosts, dynamic, depth + 1).names);
            } else if kind == Kind::Host && is_pattern(x) {
                exclude.extend(pattern_hosts(x, hosts));
            } else {
                exclude.push(host_name(x));
            }
        } else if let Some(s) = sub(m) {
            let e = expand(kind, s, groups, hosts, dynamic, depth + 1);
            if e.all {
                out.all = true;
                inherited_except.extend(e.except);
            }
            include.extend(e.names);
        } else if kind == Kind::Host && is_pattern(m) {
            include.extend(pattern_hosts(m, hosts));
        } else {
            include.push(host_name(m));
        }
    }
    for n in include {
        if !exclude.iter().any(|x| same(kind, x, &n)) {
            push_unique(kind, &mut out.names, n);
        }
    }
    if out.all {
        for x in exclude.into_iter().chain(inherited_except) {
            if !out.names.iter().any(|n| same(kind, n, &x)) {
                push_unique(kind, &mut out.except, x);
            }
        }
        out.names.clear();
    }
    out
}

/// The members of `g` as the plain listing shows them: subgroups as `name/`, `all`,
/// `~name` as configured, the egroup's members for `!`.
fn direct_members(src: &Groups<'_>, g: &Group) -> Vec<String> {
    let mut out = Vec::new();
    for m in &g.members {
        if m == "!" {
            for d in src.dynamic.get(&g.name).into_iter().flatten() {
                let d = match src.kind {
                    Kind::Host => canonical_host(d, src.hosts),
                    Kind::User => d.clone(),
                };
                push_unique(src.kind, &mut out, d);
            }
        } else if m == "all" {
            let all = match src.kind {
                Kind::Host => "all",
                Kind::User => "all users",
            };
            push_unique(src.kind, &mut out, all.to_owned());
        } else if m.starts_with('~') {
            push_unique(src.kind, &mut out, m.clone());
        } else if src.groups.iter().any(|x| &x.name == m) {
            let name = if m.ends_with('/') {
                m.clone()
            } else {
                format!("{m}/")
            };
            push_unique(src.kind, &mut out, name);
        } else if src.kind == Kind::Host && !is_pattern(m) {
            push_unique(src.kind, &mut out, canonical_host(m, src.hosts));
        } else {
            push_unique(src.kind, &mut out, m.clone());
        }
    }
    out
}

/// The members of `g` as shown with or without `-r`.
pub fn members(src: &Groups<'_>, g: &Group, recursive: bool) -> Vec<String> {
    if !recursive {
        return direct_members(src, g);
    }
    let e = expand(src.kind, g, src.groups, src.hosts, src.dynamic, 0);
    if e.all {
        let mut out = vec!["all users".to_owned()];
        out.extend(e.except.into_iter().map(|x| format!("~{x}")));
        return out;
    }
    e.names
}

/// GROUP_ADMIN with the user groups named there expanded to their users (`name[full]`
/// keeps its `[...]` on each user).
pub fn admins(src: &Groups<'_>, g: &Group) -> Vec<String> {
    let none = BTreeMap::new();
    let dynamic = if src.kind == Kind::User {
        src.dynamic
    } else {
        &none
    };
    let mut out = Vec::new();
    for a in &g.admins {
        let (name, rights) = match a.find('[') {
            Some(i) => (&a[..i], &a[i..]),
            None => (a.as_str(), ""),
        };
        match src.user_groups.iter().find(|x| x.name == name) {
            Some(ug) => {
                let e = expand(Kind::User, ug, src.user_groups, &[], dynamic, 0);
                if e.all {
                    push_unique(Kind::User, &mut out, format!("all users{rights}"));
                }
                for u in e.names {
                    push_unique(Kind::User, &mut out, format!("{u}{rights}"));
                }
            }
            None => push_unique(Kind::User, &mut out, a.clone()),
        }
    }
    out
}

/// USER_SHARES (`[name, shares] ...`) as (name, shares) pairs; None when it does not read
/// as such.
pub fn share_pairs(raw: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut rest = raw.trim();
    while !rest.is_empty() {
        let inner = rest.strip_prefix('[')?;
        let end = inner.find(']')?;
        let (name, n) = inner[..end].split_once(',')?;
        out.push((name.trim().to_owned(), n.trim().to_owned()));
        rest = inner[end + 1..].trim_start();
    }
    Some(out)
}

/// USER_SHARES as LSF's long format shows it: `[name, shares]` each (the raw value when
/// it does not read as such).
fn shares(raw: &str) -> String {
    match share_pairs(raw) {
        Some(pairs) => pairs
            .iter()
            .map(|(name, n)| format!("[{name}, {n}]"))
            .collect::<Vec<_>>()
            .join(" "),
        None => raw.trim().to_owned(),
    }
}

/// The GROUP_NAME column: 12 wide, cut to 12 characters unless `wide`.
fn name_column(name: &str, wide: bool) -> String {
    let shown: String = if wide {
        name.to_owned()
    } else {
        name.chars().take(NAME_WIDTH).collect()
    };
    format!("{shown:<NAME_WIDTH$}")
}

/// A `LABEL:` line of the long format.
fn long_line(out: &mut String, label: &str, value: &str) {
    let line = format!("{:<NAME_WIDTH$} {value}", format!("{label}:"));
    out.push_str(line.trim_end());
    out.push('\n');
}

/// The whole output of `bmgroup` / `bugroup` for `names` (every group when empty).
pub fn report(src: &Groups<'_>, names: &[String], opts: Opts) -> Report {
    let kind = src.kind;
    if src.groups.is_empty() {
        return Report {
            out: String::new(),
            err: format!(
                "{what}: No {what} defined in the system\n",
                what = what(kind)
            ),
            ok: false,
        };
    }
    let (selected, unknown) = select(src.groups, names);
    let mut err = String::new();
    for n in &unknown {
        err.push_str(&format!("{n}: No such user/host group\n"));
    }
    let mut out = String::new();
    for (i, g) in selected.iter().enumerate() {
        let ms = members(src, g, opts.recursive).join(" ");
        if opts.long {
            if i > 0 {
                out.push('\n');
            }
            long_line(
                &mut out,
                "GROUP_NAME",
                name_column(&g.name, opts.wide).trim_end(),
            );
            long_line(&mut out, label(kind), &ms);
            let admins = admins(src, g);
            if !admins.is_empty() {
                long_line(&mut out, "GROUP_ADMIN", &admins.join(" "));
            }
            if kind == Kind::User
                && let Some(s) = g.shares.as_deref().filter(|s| !s.trim().is_empty())
            {
                long_line(&mut out, "SHARES", &shares(s));
            }
        } else {
            if i == 0 {
                out.push_str(&format!("{:<NAME_WIDTH$}  {}\n", "GROUP_NAME", label(kind)));
            }
            let line = format!("{} {ms}", name_column(&g.name, opts.wide));
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    Report {
        out,
        err,
        ok: unknown.is_empty(),
    }
}

/// The members `LSF_SERVERDIR/egroup` gives each of the `(!)` groups `needed`, and the
/// groups whose egroup failed, with why (they have no members from egroup).
pub async fn dynamic_members(
    config: &basalt_config::Config,
    kind: Kind,
    needed: Vec<String>,
) -> (BTreeMap<String, Vec<String>>, Vec<(String, String)>) {
    let prog = egroup::program(config);
    let mut out = BTreeMap::new();
    let mut errors = Vec::new();
    for g in needed {
        match egroup::call(&prog, &config.envdir, kind, &g, egroup::TIMEOUT).await {
            Ok(ms) => {
                out.insert(g, ms);
            }
            Err(e) => errors.push((g, e.to_string())),
        }
    }
    (out, errors)
}

/// The batch server hosts of the cluster (what a host group's `all` and its host name
/// patterns cover).
pub fn batch_hosts(config: &basalt_config::Config) -> Vec<String> {
    config
        .cluster
        .hosts
        .iter()
        .filter(|h| h.server)
        .map(|h| h.name.clone())
        .collect()
}

/// `bmgroup` (`Kind::Host`) or `bugroup` (`Kind::User`).
pub fn main(kind: Kind, args: Vec<String>) -> ExitCode {
    let (cmd, usage) = match kind {
        Kind::Host => (
            "bmgroup",
            "Usage: bmgroup [-h] [-V] [-l] [-r] [-w] [host_group ...]\n",
        ),
        Kind::User => (
            "bugroup",
            "Usage: bugroup [-h] [-V] [-l] [-r] [-w] [user_group ...]\n",
        ),
    };
    let spec = Spec {
        flags: &["h", "V", "l", "r", "w"],
        valued: &[],
    };
    let items = match super::parse_args(cmd, &args, &spec, usage) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let mut opts = Opts::default();
    let mut names = Vec::new();
    for it in items {
        match it {
            Item::Opt(n, _) if n == "l" => opts.long = true,
            Item::Opt(n, _) if n == "r" => opts.recursive = true,
            Item::Opt(n, _) if n == "w" => opts.wide = true,
            Item::Opt(..) => {}
            Item::Arg(a) => names.push(a),
        }
    }
    let envdir = basalt_runtime::envdir();
    let config = match basalt_config::load(&envdir) {
        Ok(l) => l.config,
        Err(e) => {
            eprintln!(
                "{cmd}: cannot read the configuration in {}:\n{e}",
                envdir.display()
            );
            return crate::fail();
        }
    };
    let groups = match kind {
        Kind::Host => &config.batch.host_groups,
        Kind::User => &config.batch.user_groups,
    };
    let needed = dynamic_needed(groups, &names, opts.recursive);
    let dynamic = if needed.is_empty() {
        BTreeMap::new()
    } else {
        match crate::block_on(dynamic_members(&config, kind, needed)) {
            Ok((d, errors)) => {
                for (g, e) in errors {
                    eprintln!(
                        "{cmd}: egroup {} {g}: {e}; {what} {g} shows no members from egroup",
                        kind.flag(),
                        what = what(kind)
                    );
                }
                d
            }
            Err(code) => return code,
        }
    };
    let hosts = batch_hosts(&config);
    let src = Groups {
        kind,
        groups,
        user_groups: &config.batch.user_groups,
        hosts: &hosts,
        dynamic: &dynamic,
    };
    let r = report(&src, &names, opts);
    print!("{}", r.out);
    eprint!("{}", r.err);
    if r.ok {
        ExitCode::SUCCESS
    } else {
        crate::fail()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(name: &str, members: &[&str]) -> Group {
        Group {
            name: name.into(),
            members: members.iter().map(|m| m.to_string()).collect(),
            shares: None,
            admins: vec![],
            line: 1,
        }
    }

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    fn hosts() -> Vec<String> {
        words(&["hostA", "hostB", "hostC", "node01", "node02"])
    }

    fn host_report(groups: &[Group], names: &[&str], opts: Opts) -> Report {
        host_report_with(groups, &BTreeMap::new(), names, opts)
    }

    fn host_report_with(
        groups: &[Group],
        dynamic: &BTreeMap<String, Vec<String>>,
        names: &[&str],
        opts: Opts,
    ) -> Report {
        let hosts = hosts();
        let src = Groups {
            kind: Kind::Host,
            groups,
            user_groups: &[],
            hosts: &hosts,
            dynamic,
        };
        report(&src, &words(names), opts)
    }

    fn user_report(groups: &[Group], names: &[&str], opts: Opts) -> Report {
        user_report_with(groups, &BTreeMap::new(), names, opts)
    }

    fn user_report_with(
        groups: &[Group],
        dynamic: &BTreeMap<String, Vec<String>>,
        names: &[&str],
        opts: Opts,
    ) -> Report {
        let src = Groups {
            kind: Kind::User,
            groups,
            user_groups: groups,
            hosts: &[],
            dynamic,
        };
        report(&src, &words(names), opts)
    }

    const R: Opts = Opts {
        long: false,
        recursive: true,
        wide: false,
    };
    const L: Opts = Opts {
        long: true,
        recursive: false,
        wide: false,
    };

    #[test]
    fn the_header_then_a_row_per_group_with_the_name_in_twelve_columns() {
        let groups = vec![g("hg1", &["hostA", "hostB"]), g("hg2", &["hostC"])];
        let r = host_report(&groups, &[], Opts::default());
        assert!(r.ok);
        assert_eq!(r.err, "");
        assert_eq!(
            r.out,
            "GROUP_NAME    HOSTS\nhg1          hostA hostB\nhg2          hostC\n"
        );
        let r = user_report(&[g("ug", &["alice", "bob"])], &[], Opts::default());
        assert_eq!(r.out, "GROUP_NAME    USERS\nug           alice bob\n");
    }

    #[test]
    fn a_subgroup_is_shown_with_a_slash_and_expanded_with_r() {
        let groups = vec![
            g("small", &["hostA"]),
            g("big", &["small", "hostB", "hostA"]),
        ];
        let r = host_report(&groups, &["big"], Opts::default());
        assert_eq!(
            r.out,
            "GROUP_NAME    HOSTS\nbig          small/ hostB hostA\n"
        );
        // -r: host names only, each once.
        let r = host_report(&groups, &["big"], R);
        assert_eq!(r.out, "GROUP_NAME    HOSTS\nbig          hostA hostB\n");
        // Nested two deep.
        let groups = vec![
            g("a", &["hostA"]),
            g("b", &["a", "hostB"]),
            g("c", &["b", "hostC"]),
        ];
        let r = host_report(&groups, &["c"], R);
        assert_eq!(
            r.out,
            "GROUP_NAME    HOSTS\nc            hostA hostB hostC\n"
        );
    }

    #[test]
    fn a_loop_of_subgroups_ends() {
        let groups = vec![g("a", &["b", "hostA"]), g("b", &["a", "hostB"])];
        let r = host_report(&groups, &["a"], R);
        assert!(r.ok);
        assert_eq!(r.out, "GROUP_NAME    HOSTS\na            hostA hostB\n");
    }

    #[test]
    fn all_in_a_host_group_shows_all_and_expands_to_the_batch_hosts_with_r() {
        let groups = vec![g("every", &["all"])];
        let r = host_report(&groups, &[], Opts::default());
        assert_eq!(r.out, "GROUP_NAME    HOSTS\nevery        all\n");
        let r = host_report(&groups, &[], R);
        assert_eq!(
            r.out,
            "GROUP_NAME    HOSTS\nevery        hostA hostB hostC node01 node02\n"
        );
    }

    #[test]
    fn exclusions_are_shown_as_configured_and_applied_with_r() {
        let groups = vec![
            g("two", &["hostB", "hostC"]),
            g("most", &["all", "~hostA", "~two"]),
        ];
        let r = host_report(&groups, &["most"], Opts::default());
        assert_eq!(r.out, "GROUP_NAME    HOSTS\nmost         all ~hostA ~two\n");
        let r = host_report(&groups, &["most"], R);
        assert_eq!(r.out, "GROUP_NAME    HOSTS\nmost         node01 node02\n");
    }

    #[test]
    fn host_names_match_case_insensitively_by_short_name() {
        let groups = vec![g("hg", &["HOSTA.example.com", "hostb", "~HostB"])];
        let r = host_report(&groups, &[], Opts::default());
        // The cluster's spelling; `~HostB` stays as configured.
        assert_eq!(
            r.out,
            "GROUP_NAME    HOSTS\nhg           hostA hostB ~HostB\n"
        );
        let r = host_report(&groups, &[], R);
        assert_eq!(r.out, "GROUP_NAME    HOSTS\nhg           hostA\n");
    }

    #[test]
    fn host_name_patterns_are_expanded_with_r() {
        let groups = vec![
            g("wild", &["node*"]),
            g("range", &["host[A-B]", "node[01-02]", "~node02"]),
        ];
        let r = host_report(&groups, &["wild"], Opts::default());
        assert_eq!(r.out, "GROUP_NAME    HOSTS\nwild         node*\n");
        let r = host_report(&groups, &["wild", "range"], R);
        // `host[A-B]` is not a number range: kept as written.
        assert_eq!(
            r.out,
            "GROUP_NAME    HOSTS\nwild         node01 node02\nrange        host[A-B] node01\n"
        );
    }

    #[test]
    fn all_in_a_user_group_is_all_users() {
        let groups = vec![
            g("everyone", &["all"]),
            g("butbob", &["all", "~bob"]),
            g("team", &["carol", "butbob"]),
        ];
        let r = user_report(&groups, &[], Opts::default());
        assert_eq!(
            r.out,
            "GROUP_NAME    USERS\neveryone     all users\nbutbob       all users ~bob\nteam         carol butbob/\n"
        );
        // -r: everyone, less the exclusions nobody brought back.
        let r = user_report(&groups, &[], R);
        assert_eq!(
            r.out,
            "GROUP_NAME    USERS\neveryone     all users\nbutbob       all users ~bob\nteam         all users ~bob\n"
        );
    }

    #[test]
    fn user_subgroups_and_exclusions_expand_with_r() {
        let groups = vec![
            g("devs", &["alice", "bob"]),
            g("ops", &["carol", "bob"]),
            g("eng", &["devs", "ops", "~bob", "dave"]),
        ];
        let r = user_report(&groups, &["eng"], Opts::default());
        assert_eq!(
            r.out,
            "GROUP_NAME    USERS\neng          devs/ ops/ ~bob dave\n"
        );
        let r = user_report(&groups, &["eng"], R);
        assert_eq!(
            r.out,
            "GROUP_NAME    USERS\neng          alice carol dave\n"
        );
    }

    #[test]
    fn an_egroup_group_shows_the_members_egroup_gave() {
        let groups = vec![g("dyn", &["!"]), g("outer", &["dyn", "hostC"])];
        let dynamic = BTreeMap::from([("dyn".to_owned(), words(&["hostA", "hostb"]))]);
        let r = host_report_with(&groups, &dynamic, &[], Opts::default());
        assert_eq!(
            r.out,
            "GROUP_NAME    HOSTS\ndyn          hostA hostB\nouter        dyn/ hostC\n"
        );
        let r = host_report_with(&groups, &dynamic, &["outer"], R);
        assert_eq!(
            r.out,
            "GROUP_NAME    HOSTS\nouter        hostA hostB hostC\n"
        );
        // egroup failed: no members from it.
        let r = host_report(&groups, &["dyn"], Opts::default());
        assert!(r.ok);
        assert_eq!(r.out, "GROUP_NAME    HOSTS\ndyn\n");
        let dynamic = BTreeMap::from([("dyn".to_owned(), words(&["alice"]))]);
        let r = user_report_with(&groups, &dynamic, &["dyn"], Opts::default());
        assert_eq!(r.out, "GROUP_NAME    USERS\ndyn          alice\n");
    }

    #[test]
    fn egroup_is_asked_only_about_the_dynamic_groups_shown() {
        let groups = vec![
            g("d1", &["!"]),
            g("d2", &["!", "hostA"]),
            g("outer", &["d1", "~d2"]),
            g("plain", &["hostA"]),
        ];
        assert_eq!(dynamic_needed(&groups, &[], false), words(&["d1", "d2"]));
        assert!(dynamic_needed(&groups, &words(&["outer"]), false).is_empty());
        assert_eq!(
            dynamic_needed(&groups, &words(&["outer"]), true),
            words(&["d1", "d2"])
        );
        assert!(dynamic_needed(&groups, &words(&["plain", "nosuch"]), true).is_empty());
    }

    #[test]
    fn long_group_names_are_cut_to_twelve_characters_unless_w() {
        let groups = vec![g("a_very_long_group_name", &["hostA"])];
        let r = host_report(&groups, &[], Opts::default());
        assert_eq!(r.out, "GROUP_NAME    HOSTS\na_very_long_ hostA\n");
        let wide = Opts {
            wide: true,
            ..Opts::default()
        };
        let r = host_report(&groups, &[], wide);
        assert_eq!(r.out, "GROUP_NAME    HOSTS\na_very_long_group_name hostA\n");
    }

    #[test]
    fn groups_are_shown_in_the_order_named() {
        let groups = vec![g("a", &["hostA"]), g("b", &["hostB"])];
        let r = host_report(&groups, &["b", "a", "b"], Opts::default());
        assert_eq!(
            r.out,
            "GROUP_NAME    HOSTS\nb            hostB\na            hostA\n"
        );
    }

    #[test]
    fn an_unknown_group_is_no_such_user_host_group_and_fails() {
        let groups = vec![g("a", &["hostA"])];
        let r = host_report(&groups, &["nosuch", "a"], Opts::default());
        assert!(!r.ok);
        assert_eq!(r.err, "nosuch: No such user/host group\n");
        assert_eq!(r.out, "GROUP_NAME    HOSTS\na            hostA\n");
        let r = user_report(&groups, &["x", "y"], Opts::default());
        assert!(!r.ok);
        assert_eq!(r.out, "");
        assert_eq!(
            r.err,
            "x: No such user/host group\ny: No such user/host group\n"
        );
    }

    #[test]
    fn no_group_configured_is_no_group_defined_in_the_system_and_fails() {
        let r = host_report(&[], &[], Opts::default());
        assert!(!r.ok);
        assert_eq!(r.out, "");
        assert_eq!(r.err, "host group: No host group defined in the system\n");
        let r = user_report(&[], &["x"], Opts::default());
        assert!(!r.ok);
        assert_eq!(r.err, "user group: No user group defined in the system\n");
    }

    #[test]
    fn long_format_shows_group_admin_and_shares() {
        let mut team = g("team", &["alice", "sub", "all"]);
        team.admins = words(&["carol", "leads[full]"]);
        team.shares = Some("[alice,10] [ default , 1 ]".into());
        let mut odd = g("odd", &["x"]);
        odd.shares = Some("weird".into());
        let groups = vec![team, g("sub", &["bob"]), g("leads", &["dave", "erin"]), odd];
        let r = user_report(&groups, &["team", "sub", "odd"], L);
        assert!(r.ok);
        assert_eq!(
            r.out,
            "GROUP_NAME:  team\n\
             USERS:       alice sub/ all users\n\
             GROUP_ADMIN: carol dave[full] erin[full]\n\
             SHARES:      [alice, 10] [default, 1]\n\
             \n\
             GROUP_NAME:  sub\n\
             USERS:       bob\n\
             \n\
             GROUP_NAME:  odd\n\
             USERS:       x\n\
             SHARES:      weird\n"
        );
        // -l -r: the members expanded.
        let lr = Opts {
            recursive: true,
            ..L
        };
        let r = user_report(&groups, &["team"], lr);
        assert!(r.out.contains("\nUSERS:       all users\n"), "{}", r.out);
    }

    #[test]
    fn bmgroup_long_format_shows_group_admin_without_shares() {
        let mut hg = g("hg", &["hostA", "sub"]);
        hg.admins = words(&["admins"]);
        hg.shares = Some("[x, 1]".into());
        let groups = vec![hg, g("sub", &["hostB"])];
        let user_groups = vec![g("admins", &["alice", "bob"])];
        let hosts = hosts();
        let none = BTreeMap::new();
        let src = Groups {
            kind: Kind::Host,
            groups: &groups,
            user_groups: &user_groups,
            hosts: &hosts,
            dynamic: &none,
        };
        let r = report(&src, &words(&["hg"]), L);
        assert_eq!(
            r.out,
            "GROUP_NAME:  hg\nHOSTS:       hostA sub/\nGROUP_ADMIN: alice bob\n"
        );
    }

    #[test]
    fn number_ranges_keep_leading_zeros() {
        assert_eq!(
            range_names("n[08-10,3]"),
            Some(words(&["n08", "n09", "n10", "n3"]))
        );
        assert_eq!(range_names("n[3-1]"), None);
        assert_eq!(range_names("n[a]"), None);
    }
}
