//! Fairshare settings (seed 001 "Fairshare in Queues", daemon-behaviour.md §5): a queue's
//! `FAIRSHARE = USER_SHARES[[user, n] [group, n] [group@, n] [default, n]]` and a user
//! group's `USER_SHARES` column in lsb.users (`[member, n] ...`, the group's own share
//! tree), both as [`ShareEntry`] lists.

/// One `[name, shares]` of a share list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareEntry {
    /// A user, a user group, `group@` (each member of the group), `default` (each user
    /// not otherwise named), `others` (every user not otherwise named, together) or `all`
    /// (every user, together).
    pub name: String,
    pub shares: u32,
}

/// `[a, 1] [b, 2]`: the entries of a share list (blanks anywhere, at least one entry).
pub fn parse_share_list(v: &str) -> Result<Vec<ShareEntry>, String> {
    let mut out = Vec::new();
    let mut rest = v.trim();
    while !rest.is_empty() {
        let Some(after) = rest.strip_prefix('[') else {
            return Err(format!("expected `[name, shares]`, found `{rest}`"));
        };
        let close = after
            .find(']')
            .ok_or_else(|| format!("unclosed `[` in `{v}`"))?;
        let body = &after[..close];
        let (name, shares) = body
            .split_once(',')
            .ok_or_else(|| format!("`[{body}]` needs a name and a number of shares"))?;
        let name = name.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(format!("`[{body}]`: a share needs one user or group name"));
        }
        let shares: u32 = shares
            .trim()
            .parse()
            .map_err(|_| format!("`[{body}]`: the shares must be a non-negative integer"))?;
        if out.iter().any(|e: &ShareEntry| e.name == name) {
            return Err(format!("`{name}` has two shares"));
        }
        out.push(ShareEntry {
            name: name.to_owned(),
            shares,
        });
        rest = after[close + 1..].trim_start();
    }
    if out.is_empty() {
        return Err("no `[name, shares]` given".into());
    }
    Ok(out)
}

/// A queue's `FAIRSHARE = USER_SHARES[[...] ...]` (keyword in any case).
pub fn parse_fairshare(v: &str) -> Result<Vec<ShareEntry>, String> {
    let v = v.trim();
    let (key, rest) = v
        .split_once('[')
        .ok_or_else(|| "expected USER_SHARES[[name, shares] ...]".to_string())?;
    if !key.trim().eq_ignore_ascii_case("USER_SHARES") {
        return Err(format!(
            "unknown policy `{}` (expected USER_SHARES[...])",
            key.trim()
        ));
    }
    let inner = rest
        .trim_end()
        .strip_suffix(']')
        .ok_or_else(|| "USER_SHARES[...] is not closed".to_string())?;
    parse_share_list(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(name: &str, shares: u32) -> ShareEntry {
        ShareEntry {
            name: name.into(),
            shares,
        }
    }

    #[test]
    fn fairshare_and_user_shares_lists() {
        assert_eq!(
            parse_fairshare("USER_SHARES[[alice, 2] [grp@, 1] [default,1]]"),
            Ok(vec![e("alice", 2), e("grp@", 1), e("default", 1)])
        );
        assert_eq!(
            parse_fairshare(" user_shares[ [ team , 10 ] ] "),
            Ok(vec![e("team", 10)])
        );
        assert_eq!(
            parse_share_list("[a, 3] [b, 1]"),
            Ok(vec![e("a", 3), e("b", 1)])
        );
        for bad in [
            "USER_SHARES[]",
            "USER_SHARES[[a]]",
            "USER_SHARES[[a, x]]",
            "USER_SHARES[[a, 1] [a, 2]]",
            "USER_SHARES[[a, 1]",
            "SHARES[[a, 1]]",
            "USER_SHARES[[a b, 1]]",
        ] {
            assert!(parse_fairshare(bad).is_err(), "{bad}");
        }
    }
}
