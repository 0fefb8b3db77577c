//! Dynamic groups (LSF's `egroup`): a user group whose GROUP_MEMBER in lsb.users is
//! `(!)` gets its members from `LSF_SERVERDIR/egroup -u <group>`, a host group of
//! lsb.hosts with `(!)` from `egroup -m <group>`; egroup writes them to its standard
//! output separated by blanks. mbatchd asks when it starts (so also after `badmin
//! reconfig`, which restarts it). A host group egroup cannot resolve has no hosts.
//!
//! A group whose egroup is missing, fails, says nothing usable or does not answer within
//! [`TIMEOUT`] has no members: a queue open only to it is open to nobody but the
//! administrators. A group that cannot be resolved denies; it never allows.

use basalt_config::Config;
use basalt_runtime::egroup::Kind;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use tracing::{error, info};

pub use basalt_runtime::egroup::{TIMEOUT, program};

/// The members of every `(!)` user group, by group name; a group egroup could not
/// resolve is absent.
pub async fn resolve(config: &Config) -> BTreeMap<String, Vec<String>> {
    resolve_groups(config, &config.batch.user_groups, Kind::User).await
}

/// The hosts of every `(!)` host group, by group name; a group egroup could not resolve
/// is absent (it has no hosts).
pub async fn resolve_hosts(config: &Config) -> BTreeMap<String, Vec<String>> {
    resolve_groups(config, &config.batch.host_groups, Kind::Host).await
}

/// `egroup -u|-m <group>` for each of `groups` whose GROUP_MEMBER is `(!)`.
async fn resolve_groups(
    config: &Config,
    groups: &[basalt_config::batch::Group],
    kind: Kind,
) -> BTreeMap<String, Vec<String>> {
    let dynamic: Vec<&str> = groups
        .iter()
        .filter(|g| g.members.iter().any(|m| m == "!"))
        .map(|g| g.name.as_str())
        .collect();
    let mut out = BTreeMap::new();
    if dynamic.is_empty() {
        return out;
    }
    let prog = program(config);
    for group in dynamic {
        match basalt_runtime::egroup::call(&prog, &config.envdir, kind, group, TIMEOUT).await {
            Ok(members) => {
                info!(
                    group,
                    members = members.len(),
                    ?kind,
                    "egroup resolved the group"
                );
                out.insert(group.to_owned(), members);
            }
            Err(e) => match kind {
                Kind::User => error!(
                    group,
                    "egroup could not resolve user group {group}: {e}; it has no members, so \
                     queues open only to it refuse every user but the administrators"
                ),
                Kind::Host => error!(
                    group,
                    "egroup could not resolve host group {group}: {e}; it has no hosts"
                ),
            },
        }
    }
    out
}

/// One `egroup -u <group>` call ([`basalt_runtime::egroup::call`]): its members, or why
/// there are none.
pub async fn call(
    prog: &Path,
    config: &Config,
    group: &str,
    timeout: Duration,
) -> Result<Vec<String>, String> {
    basalt_runtime::egroup::call(prog, &config.envdir, Kind::User, group, timeout).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// The embedded default configuration in `top`, with `users` added to lsb.users.
    fn config_with(top: &Path, users: &str) -> Config {
        use basalt_config::embedded::{DefaultCluster, DefaultHost};
        let dc = DefaultCluster::new(
            "basalt",
            "root",
            vec![DefaultHost {
                name: "hostA".into(),
                address: Some(std::net::IpAddr::from([127, 0, 0, 1])),
                server: true,
            }],
        );
        let envdir = dc.write(top).expect("write the default configuration");
        let lsb_users = envdir.join("lsbatch/basalt/configdir/lsb.users");
        let mut text = std::fs::read_to_string(&lsb_users).unwrap_or_default();
        text.push_str(users);
        std::fs::write(&lsb_users, text).expect("write lsb.users");
        basalt_config::load(&envdir).expect("configuration").config
    }

    fn script(dir: &Path, body: &str) {
        let p = dir.join("egroup");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write egroup");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    /// Issue 30 item 1: egroup is called, and a group it cannot resolve has no members.
    #[tokio::test]
    async fn egroup_is_called_and_an_unresolved_group_has_no_members() {
        let dir = tempfile::tempdir().expect("tempdir");
        let users =
            "Begin UserGroup\nGROUP_NAME GROUP_MEMBER\negrp (!)\nstatic (alice)\nEnd UserGroup\n";
        let c = config_with(dir.path(), users);
        let serverdir = program(&c)
            .parent()
            .map(Path::to_path_buf)
            .expect("serverdir");
        std::fs::create_dir_all(&serverdir).expect("serverdir");
        // Missing egroup: no entry.
        assert!(resolve(&c).await.is_empty());
        // egroup answers with the members of the group it is asked about.
        script(
            &serverdir,
            "[ \"$1\" = -u ] && [ \"$2\" = egrp ] && echo 'bob  carol\nbob' && exit 0; exit 1",
        );
        let r = resolve(&c).await;
        assert_eq!(
            r.get("egrp"),
            Some(&vec!["bob".to_owned(), "carol".to_owned()])
        );
        assert!(!r.contains_key("static"), "only (!) groups are asked about");
        // A failing egroup: no entry.
        script(&serverdir, "echo alice; exit 3");
        assert!(resolve(&c).await.is_empty());
        // A hung egroup is given up.
        script(&serverdir, "sleep 30");
        let t = std::time::Instant::now();
        let e = call(&program(&c), &c, "egrp", Duration::from_millis(300)).await;
        assert!(e.is_err(), "{e:?}");
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}
