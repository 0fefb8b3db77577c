//! `bclusters [-w] [-l]`: LSF MultiCluster job forwarding as this cluster's mbatchd sees
//! it (rpc `Clusters`). LSF 10.1's layout:
//!
//! ```text
//! [Job Forwarding Information ]
//!
//! LOCAL_QUEUE     JOB_FLOW   REMOTE     CLUSTER    STATUS
//! send            send       recv       east       ok
//! recv            recv       -          east       ok
//!
//! [Resource Lease Information ]
//! No resources have been exported or borrowed
//! ```
//!
//! A row per send-jobs queue and remote queue (`SNDJOBS_TO`) and per receive-jobs queue
//! and remote cluster (`RCVJOBS_FROM`), in lsb.queues order. Names are cut to their
//! columns with LSF's `*` (cli-output.md §1) unless `-w`. Basalt has no resource leasing,
//! so the lease section always says so.
//!
//! `-l` (a Basalt extension) adds `[Remote Cluster Links ]` — each remote cluster's
//! status, the master host talked to and when it last answered, with the reason on the
//! next line when it is not `ok` — and `[Remote Queue Capacity ]` for the send rows: the
//! remote queue's priority, `IMPT_JOBBKLG` (`-` = infinit), the MultiCluster jobs pending
//! in it, the room left (`IMPT_JOBBKLG - MC_PEND`, at least 0) and its free slots.

use super::opts::{Item, Spec};
use super::text::star_cut;
use super::timefmt::{self, ToTm};
use basalt_proto::mbatchd::{ClusterLink, ClustersReply, ClustersRequest, QueueLink};
use std::fmt::Write as _;
use std::process::ExitCode;

const USAGE: &str = "Usage: bclusters [-h] [-V] [-w] [-l]\n";

/// The header of the job forwarding table.
pub const HEADER: &str = "LOCAL_QUEUE     JOB_FLOW   REMOTE     CLUSTER    STATUS";

/// What to show and how.
#[derive(Debug, Clone, Copy)]
pub struct Opts {
    /// `-w`: names in full.
    pub wide: bool,
    /// `-l`: the links and the remote queues' capacity too.
    pub long: bool,
    /// Seconds -> broken-down time (local for the command, UTC in tests).
    pub tm: ToTm,
}

/// `%-W.Ws` with `*` truncation, or `%-Ws` (never cut) with `-w`.
fn cell(s: &str, width: usize, wide: bool) -> String {
    if wide {
        format!("{s:<width$}")
    } else {
        format!("{:<width$}", star_cut(s, width))
    }
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() { "-" } else { s }
}

/// The remote queue of a row: `-` for a receive-jobs row.
fn remote_of(q: &QueueLink) -> &str {
    if q.flow == "recv" {
        "-"
    } else {
        or_dash(&q.remote_queue)
    }
}

/// `[Job Forwarding Information ]` and its table (or the message that there is none).
pub fn forwarding(queues: &[QueueLink], wide: bool) -> String {
    let mut out = String::from("[Job Forwarding Information ]\n");
    if queues.is_empty() {
        out.push_str("No job forwarding queues are configured\n");
        return out;
    }
    out.push('\n');
    out.push_str(HEADER);
    out.push('\n');
    for q in queues {
        let _ = writeln!(
            out,
            "{} {} {} {} {}",
            cell(&q.local_queue, 15, wide),
            cell(or_dash(&q.flow), 10, wide),
            cell(remote_of(q), 10, wide),
            cell(or_dash(&q.cluster), 10, wide),
            or_dash(&q.status)
        );
    }
    out
}

/// `[Remote Cluster Links ]` (`-l`): a row per remote cluster; a reason it is not `ok` on
/// the next line, after one space.
pub fn links(links: &[ClusterLink], o: &Opts) -> String {
    let mut out = String::from("[Remote Cluster Links ]\n");
    if links.is_empty() {
        out.push_str("No remote clusters are configured\n");
        return out;
    }
    out.push_str("\nCLUSTER         STATUS     MASTER          LAST_CONTACT\n");
    for l in links {
        let contact = if l.last_contact > 0 {
            timefmt::table(&(o.tm)(l.last_contact))
        } else {
            "-".to_owned()
        };
        let _ = writeln!(
            out,
            "{} {} {} {contact}",
            cell(&l.cluster, 15, o.wide),
            cell(or_dash(&l.status), 10, o.wide),
            cell(or_dash(&l.master), 15, o.wide)
        );
        let detail = l.detail.trim();
        if !detail.is_empty() {
            let _ = writeln!(out, " {detail}");
        }
    }
    out
}

/// The room a remote queue has for more forwarded jobs: `IMPT_JOBBKLG - MC_PEND`, at
/// least 0; None when its backlog is infinit.
pub fn room(q: &QueueLink) -> Option<u64> {
    u64::try_from(q.impt_jobbklg)
        .ok()
        .map(|limit| limit.saturating_sub(u64::from(q.mc_pending)))
}

/// `[Remote Queue Capacity ]` (`-l`): the send rows' remote queues as last reported.
/// Empty when there is no send row.
pub fn capacity(queues: &[QueueLink], wide: bool) -> String {
    let send: Vec<&QueueLink> = queues.iter().filter(|q| q.flow == "send").collect();
    if send.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "[Remote Queue Capacity ]\n\n\
         LOCAL_QUEUE     REMOTE     CLUSTER    PRIORITY IMPT_JOBBKLG MC_PEND   ROOM FREE_SLOTS\n",
    );
    for q in send {
        let backlog = if q.impt_jobbklg < 0 {
            "-".to_owned()
        } else {
            q.impt_jobbklg.to_string()
        };
        let room = room(q).map_or_else(|| "-".to_owned(), |r| r.to_string());
        let _ = writeln!(
            out,
            "{} {} {} {:>8} {backlog:>12} {:>7} {room:>6} {:>10}",
            cell(&q.local_queue, 15, wide),
            cell(remote_of(q), 10, wide),
            cell(or_dash(&q.cluster), 10, wide),
            q.priority,
            q.mc_pending,
            q.free_slots
        );
    }
    out
}

/// The whole report.
pub fn report(reply: &ClustersReply, o: &Opts) -> String {
    let mut out = forwarding(&reply.queues, o.wide);
    if o.long {
        out.push('\n');
        out.push_str(&links(&reply.links, o));
        let cap = capacity(&reply.queues, o.wide);
        if !cap.is_empty() {
            out.push('\n');
            out.push_str(&cap);
        }
    }
    out.push_str("\n[Resource Lease Information ]\nNo resources have been exported or borrowed\n");
    out
}

pub fn main(args: Vec<String>) -> ExitCode {
    let spec = Spec {
        flags: &["h", "V", "w", "l"],
        valued: &[],
    };
    let items = match super::parse_args("bclusters", &args, &spec, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let mut o = Opts {
        wide: false,
        long: false,
        tm: timefmt::local,
    };
    for it in items {
        match it {
            Item::Arg(a) => {
                eprintln!("bclusters: illegal argument -- {a}");
                eprint!("{USAGE}");
                return crate::fail();
            }
            Item::Opt(n, _) if n == "w" => o.wide = true,
            Item::Opt(n, _) if n == "l" => o.long = true,
            Item::Opt(..) => {}
        }
    }
    let config = match super::load_config("bclusters") {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        match client.clusters(ClustersRequest {}).await {
            Ok(r) => {
                print!("{}", report(&r.into_inner(), &o));
                ExitCode::SUCCESS
            }
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                crate::fail()
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_795_339_535; // Sun Nov 22 09:25:35 2026 UTC

    fn opts(wide: bool, long: bool) -> Opts {
        Opts {
            wide,
            long,
            tm: timefmt::utc,
        }
    }

    fn send(local: &str, remote: &str, cluster: &str) -> QueueLink {
        QueueLink {
            local_queue: local.into(),
            flow: "send".into(),
            remote_queue: remote.into(),
            cluster: cluster.into(),
            status: "ok".into(),
            impt_jobbklg: 10,
            mc_pending: 3,
            free_slots: 4,
            priority: 40,
            ..Default::default()
        }
    }

    fn recv(local: &str, cluster: &str) -> QueueLink {
        QueueLink {
            local_queue: local.into(),
            flow: "recv".into(),
            remote_queue: "-".into(),
            cluster: cluster.into(),
            status: "ok".into(),
            ..Default::default()
        }
    }

    fn reply() -> ClustersReply {
        ClustersReply {
            cluster: "west".into(),
            links: vec![
                ClusterLink {
                    cluster: "east".into(),
                    status: "ok".into(),
                    master: "hostE".into(),
                    last_contact: T0,
                    detail: String::new(),
                },
                ClusterLink {
                    cluster: "north".into(),
                    status: "disc".into(),
                    detail: "no master host answers".into(),
                    ..Default::default()
                },
            ],
            queues: vec![send("send", "recv", "east"), recv("recv", "east")],
        }
    }

    #[test]
    fn the_default_report_is_lsfs() {
        assert_eq!(
            report(&reply(), &opts(false, false)),
            "[Job Forwarding Information ]\n\
             \n\
             LOCAL_QUEUE     JOB_FLOW   REMOTE     CLUSTER    STATUS\n\
             send            send       recv       east       ok\n\
             recv            recv       -          east       ok\n\
             \n\
             [Resource Lease Information ]\n\
             No resources have been exported or borrowed\n"
        );
    }

    #[test]
    fn no_forwarding_queues() {
        let none = ClustersReply {
            cluster: "west".into(),
            ..Default::default()
        };
        assert_eq!(
            report(&none, &opts(false, false)),
            "[Job Forwarding Information ]\n\
             No job forwarding queues are configured\n\
             \n\
             [Resource Lease Information ]\n\
             No resources have been exported or borrowed\n"
        );
        assert_eq!(
            report(&none, &opts(false, true)),
            "[Job Forwarding Information ]\n\
             No job forwarding queues are configured\n\
             \n\
             [Remote Cluster Links ]\n\
             No remote clusters are configured\n\
             \n\
             [Resource Lease Information ]\n\
             No resources have been exported or borrowed\n"
        );
    }

    #[test]
    fn long_names_are_cut_unless_wide() {
        let r = ClustersReply {
            queues: vec![send(
                "a_very_long_send_queue",
                "remote_queue_x",
                "cluster_far_away",
            )],
            ..Default::default()
        };
        let got = forwarding(&r.queues, false);
        assert!(
            got.ends_with("\n*ong_send_queue send       *e_queue_x *_far_away ok\n"),
            "{got}"
        );
        let got = forwarding(&r.queues, true);
        assert!(
            got.ends_with(
                "\na_very_long_send_queue send       remote_queue_x cluster_far_away ok\n"
            ),
            "{got}"
        );
        // A row with nothing known still keeps its columns.
        let bare = QueueLink {
            local_queue: "q".into(),
            ..Default::default()
        };
        assert!(
            forwarding(&[bare], false)
                .ends_with("\nq               -          -          -          -\n")
        );
    }

    #[test]
    fn long_adds_links_and_remote_capacity() {
        let mut r = reply();
        let mut unlimited = send("send2", "big", "east");
        unlimited.impt_jobbklg = -1;
        unlimited.mc_pending = 12;
        unlimited.free_slots = 0;
        unlimited.priority = 5;
        let mut full = send("send3", "small", "north");
        full.status = "disc".into();
        full.impt_jobbklg = 2;
        full.mc_pending = 5;
        r.queues.push(unlimited);
        r.queues.push(full);
        assert_eq!(
            report(&r, &opts(false, true)),
            "[Job Forwarding Information ]\n\
             \n\
             LOCAL_QUEUE     JOB_FLOW   REMOTE     CLUSTER    STATUS\n\
             send            send       recv       east       ok\n\
             recv            recv       -          east       ok\n\
             send2           send       big        east       ok\n\
             send3           send       small      north      disc\n\
             \n\
             [Remote Cluster Links ]\n\
             \n\
             CLUSTER         STATUS     MASTER          LAST_CONTACT\n\
             east            ok         hostE           Nov 22 09:25\n\
             north           disc       -               -\n\
             \x20no master host answers\n\
             \n\
             [Remote Queue Capacity ]\n\
             \n\
             LOCAL_QUEUE     REMOTE     CLUSTER    PRIORITY IMPT_JOBBKLG MC_PEND   ROOM FREE_SLOTS\n\
             send            recv       east             40           10       3      7          4\n\
             send2           big        east              5            -      12      -          0\n\
             send3           small      north            40            2       5      0          4\n\
             \n\
             [Resource Lease Information ]\n\
             No resources have been exported or borrowed\n"
        );
    }

    #[test]
    fn receive_only_clusters_have_no_capacity_block() {
        let r = ClustersReply {
            queues: vec![recv("recv", "west")],
            ..Default::default()
        };
        assert_eq!(capacity(&r.queues, false), "");
        assert!(!report(&r, &opts(false, true)).contains("[Remote Queue Capacity ]"));
    }
}
