//! MultiCluster (LSF 10.1 job-forwarding model) settings of the batch files: a queue's
//! `SNDJOBS_TO`, `RCVJOBS_FROM` and `IMPT_JOBBKLG` (lsb.queues), and `MAX_RSCHED_TIME`,
//! `MC_PLUGIN_SCHEDULE_ENHANCE` and `MC_PLUGIN_UPDATE_INTERVAL` (lsb.params); with the
//! checks of the clusters they name against lsf.shared and lsf.cluster's RemoteClusters.

use crate::cluster::ClusterFile;
use crate::error::Ctx;
use crate::shared::Shared;

/// The keyword of `RCVJOBS_FROM` that accepts jobs from every remote cluster.
pub const ALL_CLUSTERS: &str = "allclusters";

/// LSF's default `IMPT_JOBBKLG`: MultiCluster jobs a receive-jobs queue keeps pending.
pub const DEFAULT_IMPT_JOBBKLG: u32 = 50;

/// LSF's default `MAX_RSCHED_TIME`, in `MBD_SLEEP_TIME`s.
pub const DEFAULT_MAX_RSCHED_TIME: u32 = 20;

/// `SNDJOBS_TO = queue@cluster ...`: (queue, cluster) in order. LSF 10.1 requires the
/// queue of every entry.
pub fn parse_snd_jobs_to(v: &str) -> Result<Vec<(String, String)>, String> {
    v.split_whitespace()
        .map(|t| match t.split_once('@') {
            Some((q, c)) if !q.is_empty() && !c.is_empty() && !c.contains('@') => {
                Ok((q.to_owned(), c.to_owned()))
            }
            _ => Err(format!(
                "`{t}`: expected queue@cluster (the receive-jobs queue and its cluster)"
            )),
        })
        .collect()
}

/// `RCVJOBS_FROM = cluster ... | allclusters`: the cluster names in order; the keyword
/// (any case) is kept as the single entry [`ALL_CLUSTERS`].
pub fn parse_rcv_jobs_from(v: &str) -> Result<Vec<String>, String> {
    let names: Vec<&str> = v.split_whitespace().collect();
    if names.iter().any(|n| n.eq_ignore_ascii_case(ALL_CLUSTERS)) {
        if names.len() > 1 {
            return Err(format!(
                "{ALL_CLUSTERS} stands alone, found `{}`",
                names.join(" ")
            ));
        }
        return Ok(vec![ALL_CLUSTERS.to_owned()]);
    }
    Ok(names.into_iter().map(str::to_owned).collect())
}

/// `n | infinit` (IMPT_JOBBKLG, MAX_RSCHED_TIME): `Some(n)`, or `None` for `infinit`.
pub fn parse_count_or_infinit(v: &str) -> Result<Option<u32>, String> {
    let v = v.trim();
    if v.eq_ignore_ascii_case("infinit") {
        return Ok(None);
    }
    v.parse::<u32>()
        .map(Some)
        .map_err(|_| format!("expected a non-negative integer or infinit, found `{v}`"))
}

/// `MC_PLUGIN_SCHEDULE_ENHANCE` (lsb.params): what the forwarding scheduler considers of
/// the remote queues besides their capacity. `RESOURCE_ONLY` stands alone;
/// `COUNT_PREEMPTABLE` may be followed by the three modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct McScheduleEnhance {
    /// `RESOURCE_ONLY`: the remote clusters' resources only.
    pub resource_only: bool,
    /// `COUNT_PREEMPTABLE`: also the remote queues' preemptable jobs.
    pub count_preemptable: bool,
    /// `HIGH_QUEUE_PRIORITY`: prefer remote queues of higher priority.
    pub high_queue_priority: bool,
    /// `PREEMPTABLE_QUEUE_PRIORITY`: prefer remote queues whose preemptable jobs have
    /// lower priority.
    pub preemptable_queue_priority: bool,
    /// `PENDING_WORKLOAD`: prefer remote queues with less pending work.
    pub pending_workload: bool,
}

/// The word of `MC_PLUGIN_SCHEDULE_ENHANCE` Basalt reads but does not support.
pub const DYN_CLUSTER_WEIGHTING: &str = "DYN_CLUSTER_WEIGHTING";

impl McScheduleEnhance {
    /// Parse the value (words in any case and order). `Ok(None)` for
    /// `DYN_CLUSTER_WEIGHTING`, which Basalt does not support (the loader's
    /// read-but-not-applied warning says so).
    pub fn parse(v: &str) -> Result<Option<McScheduleEnhance>, String> {
        let words: Vec<String> = v.split_whitespace().map(str::to_ascii_uppercase).collect();
        if words.is_empty() {
            return Err("expected RESOURCE_ONLY, COUNT_PREEMPTABLE [HIGH_QUEUE_PRIORITY] [PREEMPTABLE_QUEUE_PRIORITY] [PENDING_WORKLOAD] or DYN_CLUSTER_WEIGHTING".to_owned());
        }
        let mut e = McScheduleEnhance::default();
        let mut dyn_weighting = false;
        for w in &words {
            match w.as_str() {
                "RESOURCE_ONLY" => e.resource_only = true,
                "COUNT_PREEMPTABLE" => e.count_preemptable = true,
                "HIGH_QUEUE_PRIORITY" => e.high_queue_priority = true,
                "PREEMPTABLE_QUEUE_PRIORITY" => e.preemptable_queue_priority = true,
                "PENDING_WORKLOAD" => e.pending_workload = true,
                DYN_CLUSTER_WEIGHTING => dyn_weighting = true,
                _ => {
                    return Err(format!(
                        "unknown value `{w}` (expected RESOURCE_ONLY, COUNT_PREEMPTABLE, HIGH_QUEUE_PRIORITY, PREEMPTABLE_QUEUE_PRIORITY, PENDING_WORKLOAD or DYN_CLUSTER_WEIGHTING)"
                    ));
                }
            }
        }
        let modifiers = e.high_queue_priority || e.preemptable_queue_priority || e.pending_workload;
        if dyn_weighting {
            if words.iter().any(|w| w != DYN_CLUSTER_WEIGHTING) {
                return Err("DYN_CLUSTER_WEIGHTING stands alone".to_owned());
            }
            return Ok(None);
        }
        if e.resource_only && (e.count_preemptable || modifiers) {
            return Err("RESOURCE_ONLY stands alone".to_owned());
        }
        if modifiers && !e.count_preemptable {
            return Err(
                "HIGH_QUEUE_PRIORITY, PREEMPTABLE_QUEUE_PRIORITY and PENDING_WORKLOAD need COUNT_PREEMPTABLE"
                    .to_owned(),
            );
        }
        Ok(Some(e))
    }
}

/// Does the cluster configuration know `name` as a remote cluster? With a RemoteClusters
/// section in lsf.cluster, it must be listed there; without, any ClusterName of
/// lsf.shared but this cluster's. `Err` says why not.
pub(super) fn known_remote(
    shared: &Shared,
    cluster: &ClusterFile,
    name: &str,
) -> Result<(), String> {
    if !cluster.remote_clusters.is_empty() {
        if cluster.remote_cluster(name).is_some() {
            return Ok(());
        }
        return Err(format!(
            "cluster `{name}` is not in the RemoteClusters section of lsf.cluster.{}",
            cluster.name
        ));
    }
    if shared.clusters.iter().any(|c| c == name) {
        Ok(())
    } else {
        Err(format!(
            "cluster `{name}` is not a ClusterName of lsf.shared"
        ))
    }
}

/// SNDJOBS_TO of queue `queue` at `line`: naming this cluster is an error; naming a
/// cluster that is not a remote cluster is a warning (the entry stays and never
/// connects).
pub(super) fn check_snd_jobs_to(
    ctx: &mut Ctx<'_>,
    line: usize,
    queue: &str,
    entries: &[(String, String)],
    shared: &Shared,
    cluster: &ClusterFile,
) {
    for (q, c) in entries {
        if *c == cluster.name {
            ctx.err(
                line,
                format!(
                    "queue {queue}: SNDJOBS_TO: {q}@{c} names this cluster; jobs are forwarded to other clusters only"
                ),
            );
        } else if let Err(why) = known_remote(shared, cluster, c) {
            ctx.warn(
                line,
                format!(
                    "queue {queue}: SNDJOBS_TO: {q}@{c}: {why}; no job will be forwarded there"
                ),
            );
        }
    }
}

/// RCVJOBS_FROM of queue `queue` at `line`: a cluster that is not a remote cluster, or
/// whose RECV_FROM is N, is a warning (the entry stays and never connects).
pub(super) fn check_rcv_jobs_from(
    ctx: &mut Ctx<'_>,
    line: usize,
    queue: &str,
    names: &[String],
    shared: &Shared,
    cluster: &ClusterFile,
) {
    for c in names.iter().filter(|c| *c != ALL_CLUSTERS) {
        let why = if *c == cluster.name {
            Err(format!("`{c}` is this cluster"))
        } else {
            known_remote(shared, cluster, c)
        };
        match why {
            Err(why) => ctx.warn(
                line,
                format!("queue {queue}: RCVJOBS_FROM: {why}; no job will come from it"),
            ),
            Ok(()) if cluster.remote_cluster(c).is_some_and(|r| !r.recv_from) => ctx.warn(
                line,
                format!(
                    "queue {queue}: RCVJOBS_FROM: cluster `{c}` has RECV_FROM = N in the RemoteClusters section of lsf.cluster.{}; no job will come from it",
                    cluster.name
                ),
            ),
            Ok(()) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snd_jobs_to_takes_queue_at_cluster_entries_in_order() {
        assert_eq!(
            parse_snd_jobs_to("recv@east  q2@west"),
            Ok(vec![
                ("recv".to_owned(), "east".to_owned()),
                ("q2".to_owned(), "west".to_owned())
            ])
        );
        for bad in ["east", "recv@east west", "@east", "recv@", "a@b@c"] {
            assert!(parse_snd_jobs_to(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rcv_jobs_from_takes_names_or_allclusters() {
        assert_eq!(
            parse_rcv_jobs_from("east west"),
            Ok(vec!["east".to_owned(), "west".to_owned()])
        );
        assert_eq!(
            parse_rcv_jobs_from("AllClusters"),
            Ok(vec![ALL_CLUSTERS.to_owned()])
        );
        assert!(parse_rcv_jobs_from("allclusters east").is_err());
    }

    #[test]
    fn counts_or_infinit() {
        assert_eq!(parse_count_or_infinit(" 10 "), Ok(Some(10)));
        assert_eq!(parse_count_or_infinit("0"), Ok(Some(0)));
        assert_eq!(parse_count_or_infinit("INFINIT"), Ok(None));
        assert!(parse_count_or_infinit("many").is_err());
        assert!(parse_count_or_infinit("-1").is_err());
    }

    #[test]
    fn schedule_enhance_values() {
        let p = |v| McScheduleEnhance::parse(v);
        assert_eq!(
            p("RESOURCE_ONLY"),
            Ok(Some(McScheduleEnhance {
                resource_only: true,
                ..Default::default()
            }))
        );
        assert_eq!(
            p("COUNT_PREEMPTABLE"),
            Ok(Some(McScheduleEnhance {
                count_preemptable: true,
                ..Default::default()
            }))
        );
        assert_eq!(
            p("count_preemptable HIGH_QUEUE_PRIORITY PREEMPTABLE_QUEUE_PRIORITY PENDING_WORKLOAD"),
            Ok(Some(McScheduleEnhance {
                resource_only: false,
                count_preemptable: true,
                high_queue_priority: true,
                preemptable_queue_priority: true,
                pending_workload: true,
            }))
        );
        assert_eq!(
            p("COUNT_PREEMPTABLE PENDING_WORKLOAD"),
            Ok(Some(McScheduleEnhance {
                count_preemptable: true,
                pending_workload: true,
                ..Default::default()
            }))
        );
        assert_eq!(p("DYN_CLUSTER_WEIGHTING"), Ok(None));
        for bad in [
            "",
            "HIGH_QUEUE_PRIORITY",
            "PENDING_WORKLOAD PREEMPTABLE_QUEUE_PRIORITY",
            "RESOURCE_ONLY COUNT_PREEMPTABLE",
            "RESOURCE_ONLY PENDING_WORKLOAD",
            "COUNT_PREEMPTABLE FAST",
            "DYN_CLUSTER_WEIGHTING RESOURCE_ONLY",
        ] {
            assert!(p(bad).is_err(), "{bad:?}");
        }
    }

    use crate::batch::{BatchParams, Queue, parse_params, parse_queues};
    use crate::cluster::RemoteCluster;
    use crate::error::Diag;
    use std::path::Path;

    /// lsf.shared naming `local` (first) and `others`.
    fn shared(local: &str, others: &[&str]) -> Shared {
        let mut clusters = vec![local.to_owned()];
        clusters.extend(others.iter().map(|c| (*c).to_owned()));
        Shared {
            clusters,
            ..Shared::default()
        }
    }

    fn cluster(name: &str, remotes: Vec<RemoteCluster>) -> ClusterFile {
        ClusterFile {
            name: name.to_owned(),
            remote_clusters: remotes,
            ..ClusterFile::default()
        }
    }

    fn queues(text: &str, shared: &Shared, cluster: &ClusterFile) -> (Vec<Queue>, Diag) {
        let mut d = Diag::default();
        let q = parse_queues(&mut d.file(Path::new("lsb.queues")), text, shared, cluster);
        (q, d)
    }

    fn texts<T: ToString>(v: &[T]) -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn send_and_receive_queues() {
        let text = "Begin Queue\nQUEUE_NAME = send\nSNDJOBS_TO = recv@east q2@west\nEnd Queue\n\
                    Begin Queue\nRCVJOBS_FROM = east west\nQUEUE_NAME = recv\nIMPT_JOBBKLG = 10\n\
                    End Queue\n\
                    Begin Queue\nQUEUE_NAME = both\nSNDJOBS_TO = r@west\nRCVJOBS_FROM = allclusters\n\
                    IMPT_JOBBKLG = infinit\nEnd Queue\n\
                    Begin Queue\nQUEUE_NAME = local\nEnd Queue\n";
        let (qs, d) = queues(
            text,
            &shared("home", &["east", "west"]),
            &cluster("home", vec![]),
        );
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        let send = &qs[0];
        assert_eq!(
            send.snd_jobs_to,
            vec![
                ("recv".to_owned(), "east".to_owned()),
                ("q2".to_owned(), "west".to_owned())
            ]
        );
        assert!(send.rcv_jobs_from.is_empty() && !send.receives_from("east"));
        assert_eq!(send.impt_jobbklg, Some(50));
        let recv = &qs[1];
        assert_eq!(recv.rcv_jobs_from, vec!["east", "west"]);
        assert!(recv.receives_from("east") && recv.receives_from("west"));
        assert!(!recv.receives_from("north"));
        assert_eq!(recv.impt_jobbklg, Some(10));
        let both = &qs[2];
        assert_eq!(both.snd_jobs_to, vec![("r".to_owned(), "west".to_owned())]);
        assert_eq!(both.rcv_jobs_from, vec![ALL_CLUSTERS]);
        assert!(both.receives_from("anything"));
        assert_eq!(both.impt_jobbklg, None);
        let local = &qs[3];
        assert!(local.snd_jobs_to.is_empty() && local.rcv_jobs_from.is_empty());
        assert_eq!(local.impt_jobbklg, Some(DEFAULT_IMPT_JOBBKLG));
    }

    #[test]
    fn malformed_values_and_the_local_cluster_are_errors() {
        let text = "Begin Queue\nQUEUE_NAME = a\nSNDJOBS_TO = east\nEnd Queue\n\
                    Begin Queue\nQUEUE_NAME = b\nIMPT_JOBBKLG = lots\nEnd Queue\n\
                    Begin Queue\nSNDJOBS_TO = r@east r@home\nQUEUE_NAME = c\nEnd Queue\n\
                    Begin Queue\nQUEUE_NAME = d\nRCVJOBS_FROM = allclusters east\nEnd Queue\n";
        let (_, d) = queues(text, &shared("home", &["east"]), &cluster("home", vec![]));
        assert_eq!(
            texts(&d.errors),
            vec![
                "lsb.queues:3: SNDJOBS_TO: `east`: expected queue@cluster (the receive-jobs queue and its cluster)",
                "lsb.queues:7: IMPT_JOBBKLG: expected a non-negative integer or infinit, found `lots`",
                "lsb.queues:10: queue c: SNDJOBS_TO: r@home names this cluster; jobs are forwarded to other clusters only",
                "lsb.queues:15: RCVJOBS_FROM: allclusters stands alone, found `allclusters east`",
            ]
        );
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }

    #[test]
    fn clusters_that_are_not_remote_clusters_warn() {
        let text = "Begin Queue\nQUEUE_NAME = s\nSNDJOBS_TO = r@east r@mars\nRCVJOBS_FROM = mars home\n\
                    End Queue\n";
        // No RemoteClusters section: every other ClusterName of lsf.shared is remote.
        let (qs, d) = queues(text, &shared("home", &["east"]), &cluster("home", vec![]));
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(
            texts(&d.warnings),
            vec![
                "lsb.queues:3: queue s: SNDJOBS_TO: r@mars: cluster `mars` is not a ClusterName of lsf.shared; no job will be forwarded there",
                "lsb.queues:4: queue s: RCVJOBS_FROM: cluster `mars` is not a ClusterName of lsf.shared; no job will come from it",
                "lsb.queues:4: queue s: RCVJOBS_FROM: `home` is this cluster; no job will come from it",
            ]
        );
        // The entries stay.
        assert_eq!(qs[0].snd_jobs_to.len(), 2);
        assert_eq!(qs[0].rcv_jobs_from, vec!["mars", "home"]);

        // With a RemoteClusters section only the clusters it lists are remote; one whose
        // RECV_FROM is N sends no jobs.
        let text = "Begin Queue\nQUEUE_NAME = s\nSNDJOBS_TO = r@east r@west\n\
                    RCVJOBS_FROM = east west\nEnd Queue\n";
        let remotes = vec![RemoteCluster {
            recv_from: false,
            ..RemoteCluster::new("east")
        }];
        let (_, d) = queues(
            text,
            &shared("home", &["east", "west"]),
            &cluster("home", remotes),
        );
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(
            texts(&d.warnings),
            vec![
                "lsb.queues:3: queue s: SNDJOBS_TO: r@west: cluster `west` is not in the RemoteClusters section of lsf.cluster.home; no job will be forwarded there",
                "lsb.queues:4: queue s: RCVJOBS_FROM: cluster `east` has RECV_FROM = N in the RemoteClusters section of lsf.cluster.home; no job will come from it",
                "lsb.queues:4: queue s: RCVJOBS_FROM: cluster `west` is not in the RemoteClusters section of lsf.cluster.home; no job will come from it",
            ]
        );
    }

    fn params(body: &str) -> (BatchParams, Diag) {
        let mut d = Diag::default();
        let text = format!("Begin Parameters\n{body}End Parameters\n");
        let (p, _) = parse_params(&mut d.file(Path::new("lsb.params")), &text);
        (p, d)
    }

    #[test]
    fn params_defaults_and_values() {
        let (p, d) = params("");
        assert!(d.errors.is_empty() && d.warnings.is_empty());
        assert_eq!(p.max_rsched_time, Some(20));
        assert_eq!(p.mc_schedule_enhance, None);
        assert_eq!(p.mc_plugin_update_interval, None);

        let (p, d) = params(
            "MAX_RSCHED_TIME = 5\nMC_PLUGIN_SCHEDULE_ENHANCE = COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY\n\
             MC_PLUGIN_UPDATE_INTERVAL = 30\n",
        );
        // (MC_PLUGIN_UPDATE_INTERVAL is read, not applied: BASALT_MC_POLL_MS is.)
        assert!(d.errors.is_empty(), "{d:?}");
        assert!(d.warnings.len() == 1 && d.warnings[0].not_applied, "{d:?}");
        assert_eq!(p.max_rsched_time, Some(5));
        assert_eq!(
            p.mc_schedule_enhance,
            Some(McScheduleEnhance {
                count_preemptable: true,
                high_queue_priority: true,
                ..Default::default()
            })
        );
        assert_eq!(p.mc_plugin_update_interval, Some(30));
        assert!(p.other.is_empty());

        let (p, d) =
            params("MAX_RSCHED_TIME = infinit\nMC_PLUGIN_SCHEDULE_ENHANCE = RESOURCE_ONLY\n");
        assert!(d.errors.is_empty() && d.warnings.is_empty(), "{d:?}");
        assert_eq!(p.max_rsched_time, None);
        assert_eq!(
            p.mc_schedule_enhance,
            Some(McScheduleEnhance {
                resource_only: true,
                ..Default::default()
            })
        );
    }

    #[test]
    fn dyn_cluster_weighting_is_read_but_not_applied() {
        let (p, d) = params("MC_PLUGIN_SCHEDULE_ENHANCE = DYN_CLUSTER_WEIGHTING\n");
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(p.mc_schedule_enhance, None);
        assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
        assert!(d.warnings[0].not_applied);
        assert_eq!(
            d.warnings[0].to_string(),
            "lsb.params:2: MC_PLUGIN_SCHEDULE_ENHANCE = DYN_CLUSTER_WEIGHTING is read but not applied (dynamic cluster weighting is not supported by Basalt); the value is ignored"
        );
    }

    #[test]
    fn params_errors_name_file_and_line() {
        let (_, d) = params(
            "MAX_RSCHED_TIME = soon\nMC_PLUGIN_UPDATE_INTERVAL = 0\nMC_PLUGIN_UPDATE_INTERVAL = x\n\
             MC_PLUGIN_SCHEDULE_ENHANCE = PENDING_WORKLOAD\n\
             MC_PLUGIN_SCHEDULE_ENHANCE = RESOURCE_ONLY COUNT_PREEMPTABLE\n\
             MC_PLUGIN_SCHEDULE_ENHANCE = FASTEST\n",
        );
        assert_eq!(
            texts(&d.errors),
            vec![
                "lsb.params:2: MAX_RSCHED_TIME: expected a non-negative integer or infinit, found `soon`",
                "lsb.params:3: MC_PLUGIN_UPDATE_INTERVAL must be at least 1, found `0`",
                "lsb.params:4: MC_PLUGIN_UPDATE_INTERVAL: expected a non-negative integer, found `x`",
                "lsb.params:5: MC_PLUGIN_SCHEDULE_ENHANCE: HIGH_QUEUE_PRIORITY, PREEMPTABLE_QUEUE_PRIORITY and PENDING_WORKLOAD need COUNT_PREEMPTABLE",
                "lsb.params:6: MC_PLUGIN_SCHEDULE_ENHANCE: RESOURCE_ONLY stands alone",
                "lsb.params:7: MC_PLUGIN_SCHEDULE_ENHANCE: unknown value `FASTEST` (expected RESOURCE_ONLY, COUNT_PREEMPTABLE, HIGH_QUEUE_PRIORITY, PREEMPTABLE_QUEUE_PRIORITY, PENDING_WORKLOAD or DYN_CLUSTER_WEIGHTING)",
            ]
        );
        assert!(d.warnings.iter().all(|w| w.not_applied), "{:?}", d.warnings);
    }
}
