//! MultiCluster (job forwarding) configuration across the files: lsf.shared's Cluster
//! section with Servers and ADDRESSES, lsf.cluster's RemoteClusters, the send- and
//! receive-jobs queues of lsb.queues, lsb.params and lsf.conf. A full setup loads
//! without an "unknown" warning; the checks that span files name file and line.

use std::fs;
use std::path::Path;

use basalt_config::{ConfigErrors, Loaded, McScheduleEnhance, RemoteCluster, load, mc_key_path};

mod common;
use common::{edit, line_of, scratch};

fn load_ok(dir: &Path) -> Loaded {
    load(dir).unwrap_or_else(|e| panic!("configuration errors:\n{e}"))
}

fn expect_errors(dir: &Path) -> ConfigErrors {
    match load(dir) {
        Ok(l) => panic!("loaded although it should not: warnings {:?}", l.warnings),
        Err(e) => e,
    }
}

/// The openlava example as cluster `openlava` of three: `east` and `west` are remote.
fn three_clusters() -> tempfile::TempDir {
    let d = scratch("openlava");
    edit(
        d.path(),
        "lsf.shared",
        "ClusterName\nopenlava\n",
        "ClusterName  Servers          ADDRESSES\n\
         openlava     (hostA hostB)    (127.0.1.1 -)\n\
         east         (eastA)          (127.0.2.1)\n\
         west         westA\n",
    );
    fs::write(
        d.path().join("lsf.cluster.openlava"),
        fs::read_to_string(d.path().join("lsf.cluster.openlava")).unwrap_or_default()
            + "\nBegin RemoteClusters\nCLUSTERNAME  EQUIV  CACHE_INTERVAL  RECV_FROM  AUTH\n\
               east         Y      30              Y          -\n\
               west         -      -               -          -\n\
               End RemoteClusters\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    d
}

#[test]
fn a_multicluster_setup_loads_without_unknown_keywords() {
    let d = three_clusters();
    edit(
        d.path(),
        "lsb.queues",
        "QUEUE_NAME   = normal",
        "QUEUE_NAME   = normal\nSNDJOBS_TO = recv@east recv@west\nRCVJOBS_FROM = allclusters\n\
         IMPT_JOBBKLG = infinit",
    );
    edit(
        d.path(),
        "lsb.params",
        "End Parameters",
        "MAX_RSCHED_TIME = 10\nMC_PLUGIN_SCHEDULE_ENHANCE = COUNT_PREEMPTABLE PENDING_WORKLOAD\n\
         MC_PLUGIN_UPDATE_INTERVAL = 30\nEnd Parameters",
    );
    edit(
        d.path(),
        "lsf.conf",
        "LSF_AUTH=eauth",
        "LSF_AUTH=eauth\nLSB_MC_INITFAIL_RETRY=2\nMC_PLUGIN_REMOTE_RESOURCE=Y\n\
         BASALT_MC_KEY=mc.key\nBASALT_MC_POLL_MS=250",
    );
    let loaded = load_ok(d.path());
    let other: Vec<_> = loaded.warnings.iter().filter(|w| !w.not_applied).collect();
    assert!(other.is_empty(), "{other:#?}");
    common::assert_lists_every_not_applied(&loaded);

    let c = &loaded.config;
    assert_eq!(c.cluster_name, "openlava");
    assert_eq!(c.shared.clusters, vec!["openlava", "east", "west"]);
    let east = c.shared.cluster("east").unwrap_or_else(|| panic!("east"));
    assert_eq!(east.servers, vec!["eastA"]);
    assert_eq!(east.addresses, vec![Some("127.0.2.1".parse().unwrap())]);
    let home = &c.shared.cluster_rows[0];
    assert_eq!(home.servers, vec!["hostA", "hostB"]);
    assert_eq!(
        home.addresses,
        vec![Some("127.0.1.1".parse().unwrap()), None]
    );
    assert_eq!(c.shared.cluster_rows[2].addresses, vec![None]);

    assert_eq!(
        c.cluster.remote_clusters,
        vec![
            RemoteCluster {
                equiv: true,
                cache_interval: 30,
                ..RemoteCluster::new("east")
            },
            RemoteCluster::new("west"),
        ]
    );

    let normal = c.batch.queue("normal").unwrap_or_else(|| panic!("normal"));
    assert_eq!(
        normal.snd_jobs_to,
        vec![
            ("recv".to_owned(), "east".to_owned()),
            ("recv".to_owned(), "west".to_owned())
        ]
    );
    assert!(normal.receives_from("east"));
    assert_eq!(normal.impt_jobbklg, None);
    let idle = c.batch.queue("idle").unwrap_or_else(|| panic!("idle"));
    assert!(idle.snd_jobs_to.is_empty() && !idle.receives_from("east"));
    assert_eq!(idle.impt_jobbklg, Some(50));

    let p = &c.batch.params;
    assert_eq!(p.max_rsched_time, Some(10));
    assert_eq!(
        p.mc_schedule_enhance,
        Some(McScheduleEnhance {
            count_preemptable: true,
            pending_workload: true,
            ..Default::default()
        })
    );
    assert_eq!(p.mc_plugin_update_interval, Some(30));

    assert_eq!(c.lsf_conf.mc_initfail_retry(), 2);
    assert!(c.lsf_conf.mc_plugin_remote_resource());
    assert_eq!(c.lsf_conf.mc_poll_ms(), 250);
    assert_eq!(c.lsf_conf.mc_key().as_deref(), Some("mc.key"));
    assert_eq!(mc_key_path(c), Some(d.path().join("mc.key")));
}

#[test]
fn without_multicluster_settings_the_defaults_hold() {
    let d = scratch("openlava");
    let loaded = load_ok(d.path());
    let c = &loaded.config;
    assert_eq!(c.shared.cluster_rows.len(), 1);
    assert!(c.shared.cluster_rows[0].servers.is_empty());
    assert!(c.cluster.remote_clusters.is_empty());
    assert!(c.batch.queues.iter().all(|q| q.snd_jobs_to.is_empty()
        && q.rcv_jobs_from.is_empty()
        && q.impt_jobbklg == Some(50)));
    assert_eq!(c.batch.params.max_rsched_time, Some(20));
    assert_eq!(c.batch.params.mc_schedule_enhance, None);
    assert_eq!(c.batch.params.mc_plugin_update_interval, None);
    assert_eq!(c.lsf_conf.mc_initfail_retry(), 6);
    assert!(!c.lsf_conf.mc_plugin_remote_resource());
    assert_eq!(c.lsf_conf.mc_poll_ms(), 1000);
    assert_eq!(mc_key_path(c), None);

    // An absolute key path stays as it is.
    edit(
        d.path(),
        "lsf.conf",
        "LSF_AUTH=eauth",
        "LSF_AUTH=eauth\nBASALT_MC_KEY=/etc/basalt/mc.key",
    );
    let loaded = load_ok(d.path());
    assert_eq!(
        mc_key_path(&loaded.config),
        Some(Path::new("/etc/basalt/mc.key").to_path_buf())
    );
}

#[test]
fn cross_file_errors_name_file_and_line() {
    let d = three_clusters();
    let c = "lsf.cluster.openlava";
    edit(
        d.path(),
        c,
        "west         -      -               -          -\n",
        "west         -      -               -          -\n\
         mars         N      -               -          -\n\
         openlava     N      -               -          -\n",
    );
    edit(
        d.path(),
        "lsb.queues",
        "QUEUE_NAME   = normal",
        "QUEUE_NAME   = normal\nSNDJOBS_TO = recv@openlava",
    );
    let e = expect_errors(d.path());
    let text = e.to_string();
    let at = |file: &str, needle: &str| {
        format!(
            "{}:{}:",
            d.path().join(file).display(),
            line_of(d.path(), file, needle)
        )
    };
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(
        text.contains(&format!(
            "{} RemoteClusters: cluster `mars` is not a ClusterName of lsf.shared",
            at(c, "mars")
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{} RemoteClusters: `openlava` is this cluster",
            at(c, "openlava     N")
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{} queue normal: SNDJOBS_TO: recv@openlava names this cluster",
            at("lsb.queues", "SNDJOBS_TO")
        )),
        "{text}"
    );
}

#[test]
fn a_queue_naming_a_cluster_that_is_not_remote_warns_with_file_and_line() {
    let d = three_clusters();
    edit(
        d.path(),
        "lsf.shared",
        "west         westA\n",
        "west         westA\nnorth        -\n",
    );
    edit(
        d.path(),
        "lsb.queues",
        "QUEUE_NAME   = normal",
        "QUEUE_NAME   = normal\nSNDJOBS_TO = recv@north\nRCVJOBS_FROM = east pluto",
    );
    let loaded = load_ok(d.path());
    let q = d.path().join("lsb.queues").display().to_string();
    let w: Vec<String> = loaded
        .warnings
        .iter()
        .filter(|w| !w.not_applied)
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        w,
        vec![
            format!(
                "{q}:{}: queue normal: SNDJOBS_TO: recv@north: cluster `north` is not in the RemoteClusters section of lsf.cluster.openlava; no job will be forwarded there",
                line_of(d.path(), "lsb.queues", "SNDJOBS_TO")
            ),
            format!(
                "{q}:{}: queue normal: RCVJOBS_FROM: cluster `pluto` is not in the RemoteClusters section of lsf.cluster.openlava; no job will come from it",
                line_of(d.path(), "lsb.queues", "RCVJOBS_FROM")
            ),
        ]
    );
    let normal = loaded
        .config
        .batch
        .queue("normal")
        .unwrap_or_else(|| panic!("normal"));
    assert_eq!(
        normal.snd_jobs_to,
        vec![("recv".to_owned(), "north".to_owned())]
    );
    assert_eq!(normal.rcv_jobs_from, vec!["east", "pluto"]);
}

#[test]
fn bad_cluster_addresses_are_errors_naming_lsf_shared_and_the_line() {
    let d = three_clusters();
    edit(d.path(), "lsf.shared", "(127.0.2.1)", "(127.0.2.1 -)");
    edit(d.path(), "lsf.shared", "(127.0.1.1 -)", "(127.0.1.1 x.y)");
    let e = expect_errors(d.path());
    let text = e.to_string();
    let at = |needle: &str| {
        format!(
            "{}:{}:",
            d.path().join("lsf.shared").display(),
            line_of(d.path(), "lsf.shared", needle)
        )
    };
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.contains(&format!(
            "{} cluster openlava: ADDRESSES: `x.y` is not an IP address",
            at("openlava ")
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{} cluster east: ADDRESSES has 2 entries but Servers has 1 hosts",
            at("east ")
        )),
        "{text}"
    );
}
