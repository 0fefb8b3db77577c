//! `lsb_hostgrpinfo`, `lsb_usergrpinfo`: the host groups of lsb.hosts and the user
//! groups of lsb.users as `bmgroup`/`bugroup` read them (the configuration files, the
//! `(!)` groups' members from `LSF_SERVERDIR/egroup`), as LSF's `struct groupInfoEnt`.

use super::*;
use crate::session::{block_on, finish};
use basalt_cli::batch::groups::{
    Groups, admins, batch_hosts, dynamic_members, dynamic_needed, members, select, share_pairs,
};
use basalt_config::batch::Group;
use basalt_runtime::egroup::Kind;
use std::collections::BTreeMap;

static HOST_GROUPS: Slot<groupInfoEnt> = Slot::new();
static USER_GROUPS: Slot<groupInfoEnt> = Slot::new();

/// The options known: `GRP_ALL` (every group), `GRP_RECURSIVE` (members expanded);
/// `GRP_SHARES` and the kind's own `HOST_GRP`/`USER_GRP` change nothing (the shares are
/// always given).
const KNOWN_OPTIONS: c_int = GRP_ALL | GRP_RECURSIVE | GRP_SHARES | HOST_GRP | USER_GRP;

/// `struct groupInfoEnt *lsb_hostgrpinfo(char **groups, int *numGroups, int options)`:
/// the host groups named (`GRP_ALL`, `*numGroups` 0 or `groups` NULL: all).
///
/// # Safety
/// `numGroups` is NULL (with `GRP_ALL`) or points to an int; `groups` is NULL or has
/// `*numGroups` strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_hostgrpinfo(
    groups: *mut *mut c_char,
    num: *mut c_int,
    options: c_int,
) -> *mut groupInfoEnt {
    // SAFETY: passed on.
    unsafe { answer(Kind::Host, &HOST_GROUPS, groups, num, options) }
}

/// `struct groupInfoEnt *lsb_usergrpinfo(char **groups, int *numGroups, int options)`:
/// the user groups named, as [`lsb_hostgrpinfo`].
///
/// # Safety
/// As [`lsb_hostgrpinfo`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_usergrpinfo(
    groups: *mut *mut c_char,
    num: *mut c_int,
    options: c_int,
) -> *mut groupInfoEnt {
    // SAFETY: passed on.
    unsafe { answer(Kind::User, &USER_GROUPS, groups, num, options) }
}

/// # Safety
/// As [`lsb_hostgrpinfo`].
unsafe fn answer(
    kind: Kind,
    slot: &Slot<groupInfoEnt>,
    groups: *mut *mut c_char,
    num: *mut c_int,
    options: c_int,
) -> *mut groupInfoEnt {
    // SAFETY: passed on.
    match unsafe { query(kind, groups, num, options) } {
        Ok((items, arena, later)) => {
            // SAFETY: the caller's promise.
            unsafe { set_count(num, items.len()) };
            let p = slot.put(items, arena);
            match later {
                // The groups before the unknown one, with LSBE_BAD_GROUP (LSF's way).
                Some(f) => {
                    f.record();
                    p
                }
                None => finish(Ok(p), std::ptr::null_mut()),
            }
        }
        Err(f) => finish(Err(f), std::ptr::null_mut()),
    }
}

/// The entries, and the error to report with them when a name after the first is no
/// group.
type Answer = (Vec<groupInfoEnt>, Arena, Option<Fail>);

/// # Safety
/// As [`lsb_hostgrpinfo`].
unsafe fn query(
    kind: Kind,
    groups: *mut *mut c_char,
    num: *mut c_int,
    options: c_int,
) -> Result<Answer, Fail> {
    if options & !KNOWN_OPTIONS != 0 {
        return Err(bad_arg(format!(
            "group options {:#x} are not supported",
            options & !KNOWN_OPTIONS
        )));
    }
    let recursive = options & GRP_RECURSIVE != 0;
    let names: Vec<String> = if options & GRP_ALL != 0 || groups.is_null() {
        Vec::new()
    } else {
        // SAFETY: the caller's promise.
        match unsafe { asked(groups, num) }? {
            Asked::Names(n) => n,
            Asked::All | Asked::Own => Vec::new(),
        }
    };
    let config = batch_config()?;
    let all = match kind {
        Kind::Host => &config.batch.host_groups,
        Kind::User => &config.batch.user_groups,
    };
    if all.is_empty() {
        let code = match kind {
            Kind::Host => LSBE_NO_HOST_GROUP,
            Kind::User => LSBE_NO_USER_GROUP,
        };
        return Err(Fail::batch(code, ""));
    }
    let (_, unknown) = select(all, &names);
    let bad = first_unknown(&names, &unknown);
    let (names, later) = match bad {
        Some((0, name)) => {
            // SAFETY: the caller's promise.
            unsafe { set_count(num, 0) };
            return Err(Fail::batch(LSBE_BAD_GROUP, name));
        }
        Some((i, name)) => (names[..i].to_vec(), Some(Fail::batch(LSBE_BAD_GROUP, name))),
        None => (names, None),
    };
    let (shown, _) = select(all, &names);
    let needed = dynamic_needed(all, &names, recursive);
    let dynamic = if needed.is_empty() {
        BTreeMap::new()
    } else {
        let (d, errors) = block_on(dynamic_members(&config, kind, needed))?;
        if let Some((g, e)) = errors.first() {
            return Err(Fail::batch(
                LSBE_SYS_CALL,
                format!("egroup {} {g}: {e}", kind.flag()),
            ));
        }
        d
    };
    let hosts = batch_hosts(&config);
    let src = Groups {
        kind,
        groups: all,
        user_groups: &config.batch.user_groups,
        hosts: &hosts,
        dynamic: &dynamic,
    };
    let mut a = Arena::default();
    let items = shown
        .iter()
        .map(|g| entry(&src, g, recursive, &mut a))
        .collect();
    Ok((items, a, later))
}

/// A group as LSF's entry: its members as `bmgroup`/`bugroup` list them (`-r` with
/// `recursive`), its administrators, its shares.
fn entry(src: &Groups<'_>, g: &Group, recursive: bool, a: &mut Arena) -> groupInfoEnt {
    let mut e = zero::<groupInfoEnt>();
    let list = members(src, g, recursive).join(" ");
    e.group = a.s(&g.name);
    e.memberList = a.s(&list);
    e.adminMemberList = a.s(&admins(src, g).join(" "));
    let mut shares: Vec<userShares> = g
        .shares
        .as_deref()
        .and_then(share_pairs)
        .unwrap_or_default()
        .iter()
        .map(|(user, n)| userShares {
            user: a.s(user),
            shares: n.parse().unwrap_or(0),
        })
        .collect();
    e.numUserShares = int(shares.len());
    if !shares.is_empty() {
        e.userShares = shares.as_mut_ptr();
        a.keep(shares);
    }
    e.hostStr = a.s(if src.kind == Kind::Host { &list } else { "" });
    e.pattern = a.s("");
    e.neg_pattern = a.s("");
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn g(name: &str, members: &[&str]) -> Group {
        Group {
            name: name.into(),
            members: members.iter().map(|m| m.to_string()).collect(),
            shares: None,
            admins: Vec::new(),
            line: 0,
        }
    }

    fn text(p: *mut c_char) -> String {
        // SAFETY: the arena's string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    #[test]
    fn groups_list_their_members_as_bmgroup_and_bugroup_do() {
        let mut eng = g("eng", &["ann", "bob"]);
        eng.shares = Some("[ann, 2] [bob, 3]".into());
        eng.admins = vec!["carl".into()];
        let users = vec![eng, g("all_eng", &["eng", "dave"])];
        let dynamic = BTreeMap::new();
        let src = Groups {
            kind: Kind::User,
            groups: &users,
            user_groups: &users,
            hosts: &[],
            dynamic: &dynamic,
        };
        let mut a = Arena::default();
        let e = entry(&src, &users[0], false, &mut a);
        assert_eq!(text(e.group), "eng");
        assert_eq!(text(e.memberList), "ann bob");
        assert_eq!(text(e.adminMemberList), "carl");
        assert_eq!(e.numUserShares, 2);
        // SAFETY: numUserShares entries.
        let s = unsafe { std::slice::from_raw_parts(e.userShares, 2) };
        assert_eq!((text(s[1].user), s[1].shares), ("bob".into(), 3));
        assert_eq!(text(e.hostStr), "");
        let e = entry(&src, &users[1], false, &mut a);
        assert_eq!(text(e.memberList), "eng/ dave");
        let e = entry(&src, &users[1], true, &mut a);
        assert_eq!(text(e.memberList), "ann bob dave");
        assert_eq!((e.numUserShares, e.userShares), (0, std::ptr::null_mut()));

        let hosts_cfg = vec![g("hg", &["all", "~hostB"])];
        let hosts = vec!["hostA".to_owned(), "hostB".to_owned(), "hostC".to_owned()];
        let src = Groups {
            kind: Kind::Host,
            groups: &hosts_cfg,
            user_groups: &users,
            hosts: &hosts,
            dynamic: &dynamic,
        };
        let e = entry(&src, &hosts_cfg[0], true, &mut a);
        assert_eq!(text(e.memberList), "hostA hostC");
        assert_eq!(text(e.hostStr), "hostA hostC");
    }
}
