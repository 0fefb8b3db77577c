//! `lsb_userinfo`: users' and user groups' job slots and limits as `busers` shows them
//! (mbatchd's `Users`), as LSF's `struct userInfoEnt`.

use super::*;
use crate::session::{finish, with_mbatchd};
use basalt_proto::mbatchd::{UserInfo, UsersRequest};

static USERS: Slot<userInfoEnt> = Slot::new();

/// `struct userInfoEnt *lsb_userinfo(char **users, int *numUsers)`: the users (or user
/// groups) named; `*numUsers` 0: every user with an unfinished job or a row of their
/// own in lsb.users (`busers all`); `users` NULL and `*numUsers` 1: the caller. A name
/// that is neither a user of the system nor a user group is `LSBE_BAD_USER`.
///
/// # Safety
/// `numUsers` points to an int; `users` is NULL or has `*numUsers` strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lsb_userinfo(
    users: *mut *mut c_char,
    num: *mut c_int,
) -> *mut userInfoEnt {
    // SAFETY: passed on.
    let r = unsafe { query(users, num) }.map(|(items, arena)| {
        // SAFETY: the caller's promise.
        unsafe { set_count(num, items.len()) };
        USERS.put(items, arena)
    });
    finish(r, std::ptr::null_mut())
}

/// # Safety
/// As [`lsb_userinfo`].
unsafe fn query(
    users: *mut *mut c_char,
    num: *mut c_int,
) -> Result<(Vec<userInfoEnt>, Arena), Fail> {
    // SAFETY: the caller's promise.
    let want = unsafe { asked(users, num) }?;
    let names = match &want {
        Asked::All => vec!["all".to_owned()],
        Asked::Own => Vec::new(),
        Asked::Names(n) => {
            if let Some((i, name)) = n.iter().enumerate().find(|(_, u)| !user_known(u)) {
                // SAFETY: the caller's promise.
                unsafe { set_count(num, i) };
                return Err(Fail::batch(LSBE_BAD_USER, name.clone()));
            }
            n.clone()
        }
    };
    let reply = with_mbatchd(|mut c, _| async move {
        c.users(UsersRequest { users: names })
            .await
            .map(tonic::Response::into_inner)
            .map_err(|s| Fail::from_status(&s))
    })?;
    let rows: Vec<&UserInfo> = match &want {
        // In the order asked.
        Asked::Names(n) => n
            .iter()
            .filter_map(|name| reply.users.iter().find(|u| &u.name == name))
            .collect(),
        _ => reply.users.iter().collect(),
    };
    if rows.is_empty() {
        return Err(Fail::batch(LSBE_BAD_USER, "no user or user group found"));
    }
    let mut a = Arena::default();
    let items = rows.iter().map(|u| entry(u, &mut a)).collect();
    Ok((items, a))
}

/// A `busers` row as LSF's entry (MAX_PEND_JOBS is not reported: `INFINIT_INT`).
fn entry(u: &UserInfo, a: &mut Arena) -> userInfoEnt {
    let mut e = zero::<userInfoEnt>();
    e.user = a.s(&u.name);
    e.procJobLimit = if u.jl_p < 0.0 {
        INFINIT_FLOAT
    } else {
        u.jl_p as f32
    };
    e.maxJobs = limit_int(i64::from(u.max));
    e.numStartJobs = int(u.run + u.ssusp + u.ususp);
    e.numJobs = int(u.njobs);
    e.numPEND = int(u.pend);
    e.numRUN = int(u.run);
    e.numSSUSP = int(u.ssusp);
    e.numUSUSP = int(u.ususp);
    e.numRESERVE = int(u.rsv);
    e.maxPendJobs = INFINIT_INT;
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busers_row_becomes_lsfs_entry() {
        let mut a = Arena::default();
        let e = entry(
            &UserInfo {
                name: "ann".into(),
                jl_p: 1.5,
                max: -1,
                njobs: 6,
                pend: 1,
                run: 3,
                ssusp: 1,
                ususp: 1,
                rsv: 2,
            },
            &mut a,
        );
        // SAFETY: the arena's string.
        assert_eq!(
            unsafe { std::ffi::CStr::from_ptr(e.user) }.to_str(),
            Ok("ann")
        );
        assert_eq!(e.procJobLimit, 1.5);
        assert_eq!(e.maxJobs, INFINIT_INT);
        assert_eq!((e.numJobs, e.numStartJobs, e.numPEND), (6, 5, 1));
        assert_eq!(
            (e.numRUN, e.numSSUSP, e.numUSUSP, e.numRESERVE),
            (3, 1, 1, 2)
        );
        let e = entry(
            &UserInfo {
                name: "bob".into(),
                jl_p: -1.0,
                max: 10,
                ..Default::default()
            },
            &mut a,
        );
        assert_eq!((e.procJobLimit, e.maxJobs), (INFINIT_FLOAT, 10));
    }
}
