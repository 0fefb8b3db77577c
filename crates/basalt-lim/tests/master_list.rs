//! `LSF_MASTER_LIST` (lsf.conf) as the daemon reads it: hosts it leaves out are
//! no master candidates, its order is the election order.

use basalt_config::embedded::{DefaultCluster, DefaultHost};
use basalt_lim_core::LimCore;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

fn write_cluster(top: &Path, master_list: Option<&str>) -> PathBuf {
    let hosts = ["hostA", "hostB", "hostC"]
        .iter()
        .enumerate()
        .map(|(i, n)| DefaultHost {
            name: (*n).to_owned(),
            address: Some(IpAddr::V4(Ipv4Addr::new(127, 77, 4, i as u8 + 1))),
            server: true,
        })
        .collect();
    let envdir = DefaultCluster::new("basalt", "nobody", hosts)
        .write(top)
        .expect("write default configuration");
    if let Some(list) = master_list {
        let conf = envdir.join("lsf.conf");
        let mut text = std::fs::read_to_string(&conf).expect("read lsf.conf");
        text.push_str(&format!("LSF_MASTER_LIST={list}\n"));
        std::fs::write(&conf, text).expect("write lsf.conf");
    }
    envdir
}

fn config(master_list: Option<&str>) -> basalt_config::Config {
    let dir = tempfile::tempdir().expect("tempdir");
    let envdir = write_cluster(dir.path(), master_list);
    basalt_config::load(&envdir).expect("load").config
}

fn ranks(config: &basalt_config::Config) -> Vec<(String, Option<usize>)> {
    ["hostA", "hostB", "hostC"]
        .iter()
        .map(|h| {
            let core =
                LimCore::new(basalt_lim::core_config(config, h).expect("config")).expect("core");
            ((*h).to_owned(), core.rank())
        })
        .collect()
}

#[test]
fn unset_means_every_server_host_in_file_order() {
    let c = config(None);
    assert!(basalt_lim::master_list(&c).is_empty());
    assert_eq!(
        ranks(&c),
        vec![
            ("hostA".to_owned(), Some(0)),
            ("hostB".to_owned(), Some(1)),
            ("hostC".to_owned(), Some(2))
        ]
    );
}

#[test]
fn order_and_exclusion_follow_the_list() {
    // Unknown names are dropped, case-insensitive duplicates count once.
    let c = config(Some("\"hostC nosuchhost hostA HOSTC\""));
    assert_eq!(basalt_lim::master_list(&c), vec!["hostC", "hostA"]);
    assert_eq!(
        ranks(&c),
        vec![
            ("hostA".to_owned(), Some(1)),
            ("hostB".to_owned(), None),
            ("hostC".to_owned(), Some(0))
        ]
    );
    let cc = basalt_lim::core_config(&c, "hostB").expect("config");
    assert_eq!(
        cc.hosts
            .entries()
            .iter()
            .map(|h| h.candidate)
            .collect::<Vec<_>>(),
        vec![true, false, true]
    );
}
