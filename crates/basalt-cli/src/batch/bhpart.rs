//! `bhpart [-r] [host_partition_name ...]`: the host partitions of lsb.hosts
//! (host-partition fairshare): a block per partition — `HOST_PARTITION_NAME`, `HOSTS`,
//! and LSF's `SHARE_INFO_FOR` table of its users and groups; `-r` also the tables of the
//! groups with share trees of their own.

use super::opts::{Item, Spec};
use basalt_proto::mbatchd::{HostPartitionInfo, HostPartitionsRequest};
use std::process::ExitCode;

const USAGE: &str = "Usage: bhpart [-h] [-V] [-r] [host_partition_name ...]\n";

/// The blocks, one per partition (`recursive`: every level of its share tree).
pub fn blocks(parts: &[HostPartitionInfo], recursive: bool) -> String {
    let mut out = String::new();
    for p in parts {
        let hosts = if p.hosts.is_empty() {
            "all".to_owned()
        } else {
            p.hosts.join(" ")
        };
        out.push_str(&format!(
            "\nHOST_PARTITION_NAME: {}\nHOSTS: {hosts}\n",
            p.name
        ));
        let levels = if recursive { p.share_info.len() } else { 1 };
        for info in p.share_info.iter().take(levels) {
            out.push_str(&super::policies::share_table(info));
        }
    }
    out
}

pub fn main(args: Vec<String>) -> ExitCode {
    let spec = Spec {
        flags: &["h", "V", "r"],
        valued: &[],
    };
    let items = match super::parse_args("bhpart", &args, &spec, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let mut recursive = false;
    let mut names = Vec::new();
    for it in items {
        match it {
            Item::Arg(a) => names.push(a),
            Item::Opt(n, _) if n == "r" => recursive = true,
            Item::Opt(..) => {}
        }
    }
    let config = match super::load_config("bhpart") {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        let reply = match client
            .host_partitions(HostPartitionsRequest { names })
            .await
        {
            Ok(r) => r.into_inner(),
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                return crate::fail();
            }
        };
        super::named_listing(
            !reply.partitions.is_empty(),
            &reply.not_found,
            (
                "Host partition does not exist",
                "No host partition is defined",
            ),
            || blocks(&reply.partitions, recursive),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_proto::mbatchd::{ShareInfo, ShareRow};

    fn part() -> HostPartitionInfo {
        let row = |name: &str, shares| ShareRow {
            name: name.into(),
            shares,
            priority: 0.333,
            ..Default::default()
        };
        HostPartitionInfo {
            name: "part1".into(),
            hosts: vec!["hostA".into(), "hostB".into()],
            share_info: vec![
                ShareInfo {
                    path: "part1/".into(),
                    rows: vec![row("alice", 2), row("team", 1)],
                },
                ShareInfo {
                    path: "part1/team/".into(),
                    rows: vec![row("bo", 1)],
                },
            ],
        }
    }

    #[test]
    fn a_block_per_partition_with_its_share_info() {
        let got = blocks(&[part()], false);
        assert!(
            got.starts_with(
                "\nHOST_PARTITION_NAME: part1\nHOSTS: hostA hostB\n\nSHARE_INFO_FOR: part1/\n USER/GROUP   SHARES  PRIORITY"
            ),
            "{got}"
        );
        assert!(got.contains("\n alice             2     0.333"), "{got}");
        assert!(!got.contains("part1/team/"), "{got}");
        // -r: the groups' own trees too.
        assert!(blocks(&[part()], true).contains("\nSHARE_INFO_FOR: part1/team/\n"));
        let mut all = part();
        all.hosts.clear();
        assert!(blocks(&[all], false).contains("\nHOSTS: all\n"));
    }
}
