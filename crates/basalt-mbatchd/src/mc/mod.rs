//! MultiCluster job forwarding (seed 004), mbatchd's side: the links to the other
//! clusters' mbatchds (`link`: finding their master, polling their receive-jobs queues
//! and the jobs forwarded there, carrying forwards and job controls), the service other
//! clusters call (`serve`: ClusterInfo, ForwardJob, RemoteJobs, ControlJob) and the key
//! both clusters trust (`trust`). The decisions (which queue, when a job comes back) are
//! the core's (`basalt_sched::mc`); this room carries them and feeds the answers back.

mod link;
mod serve;
pub(crate) mod trust;

use crate::msg::{Msg, Reply};
use crate::now_ms;
use crate::owner::{Deferred, OwnerState, defer};
use basalt_config::Config;
use basalt_proto::mbatchd as pb;
use basalt_sched::mc::{McAccounts, RemoteJob, RemoteQueue};
use basalt_sched::{Caller, Event, JobKey};
use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use tokio::sync::mpsc;
use tracing::{info, warn};

pub(crate) use trust::McTrust;

/// An order for the link to one remote cluster.
#[derive(Debug)]
pub(crate) enum LinkCmd {
    Forward {
        key: JobKey,
        attempt: u32,
        queue: String,
        job_new: String,
        job_file: Vec<u8>,
    },
    Control {
        key: JobKey,
        signal: String,
    },
}

/// What a link tells the owner.
#[derive(Debug)]
pub(crate) enum LinkNews {
    /// It answered: its receive-jobs queues for us and the jobs we forwarded to it.
    Polled {
        master: String,
        queues: Vec<RemoteQueue>,
        jobs: Vec<RemoteJob>,
    },
    /// It could not be reached ("disc") or refused us ("reject"), and why.
    Down {
        status: &'static str,
        detail: String,
    },
    /// The answer to a forward.
    Forwarded {
        key: JobKey,
        attempt: u32,
        answer: Result<u64, String>,
    },
}

/// What another cluster asks of this one.
#[derive(Debug)]
pub(crate) enum Incoming {
    Info {
        reply: Reply<Vec<RemoteQueue>>,
    },
    Jobs {
        reply: Reply<Vec<RemoteJob>>,
    },
    Forward {
        src: JobKey,
        attempt: u32,
        queue: String,
        job_new: String,
        job_file: Vec<u8>,
        reply: Reply<Result<u64, String>>,
    },
    Control {
        src: JobKey,
        signal: String,
        reply: Reply<String>,
    },
}

/// A link's state as bclusters shows it.
#[derive(Debug, Clone, Default)]
pub(crate) struct LinkState {
    pub(crate) status: String,
    pub(crate) detail: String,
    pub(crate) master: String,
    pub(crate) last_contact: i64,
}

/// The owner's side of the links.
#[derive(Debug, Default)]
pub(crate) struct Links {
    senders: BTreeMap<String, mpsc::UnboundedSender<LinkCmd>>,
    state: BTreeMap<String, LinkState>,
}

impl Links {
    /// Each remote cluster and whether its link is up (status `ok`).
    pub(crate) fn link_status(&self) -> Vec<(String, bool)> {
        self.state
            .iter()
            .map(|(c, s)| (c.clone(), s.status == "ok"))
            .collect()
    }
}

/// A remote cluster and its master candidates (name, mbatchd address), in order.
pub(crate) type RemoteServers = (String, Vec<(String, SocketAddr)>);

/// The remote clusters of `config` (RemoteClusters) and where their master candidates'
/// mbatchds listen (lsf.shared Servers, at their ADDRESSES or resolved names, on our
/// LSB_MBD_PORT).
pub(crate) fn remote_servers(config: &Config) -> Vec<RemoteServers> {
    let port = config.lsf_conf.mbd_port();
    config
        .cluster
        .remote_clusters
        .iter()
        .map(|rc| {
            let servers = config
                .shared
                .cluster(&rc.name)
                .map(|row| {
                    row.servers
                        .iter()
                        .zip(&row.addresses)
                        .filter_map(|(name, addr)| {
                            let ip = match addr {
                                Some(ip) => Some(*ip),
                                None => (name.as_str(), port)
                                    .to_socket_addrs()
                                    .ok()
                                    .and_then(|mut a| a.next())
                                    .map(|a| a.ip()),
                            };
                            ip.map(|ip| (name.clone(), SocketAddr::new(ip, port)))
                        })
                        .collect()
                })
                .unwrap_or_default();
            (rc.name.clone(), servers)
        })
        .collect()
}

/// Start a link task per remote cluster (none without RemoteClusters or a key).
pub(crate) fn start_links(
    config: &Config,
    servers: Vec<RemoteServers>,
    trust: Option<Arc<McTrust>>,
    local: Option<std::net::IpAddr>,
    tx: crate::inbox::Inbox,
) -> (Links, Vec<tokio::task::JoinHandle<()>>) {
    let mut links = Links::default();
    let mut tasks = Vec::new();
    let poll = std::time::Duration::from_millis(config.lsf_conf.mc_poll_ms());
    for (cluster, servers) in servers {
        links.state.insert(
            cluster.clone(),
            LinkState {
                status: "disc".into(),
                detail: "not contacted yet".into(),
                ..Default::default()
            },
        );
        let Some(trust) = trust.clone() else {
            if let Some(s) = links.state.get_mut(&cluster) {
                s.detail = "no MultiCluster key (lsf.conf BASALT_MC_KEY)".into();
            }
            continue;
        };
        if servers.is_empty() {
            warn!(cluster = %cluster, "remote cluster has no master candidate with an address (lsf.shared Servers)");
        }
        let (ctx, crx) = mpsc::unbounded_channel();
        links.senders.insert(cluster.clone(), ctx);
        tasks.push(tokio::spawn(link::run(
            cluster,
            servers,
            local,
            trust,
            poll,
            crx,
            tx.clone(),
        )));
    }
    (links, tasks)
}

impl OwnerState {
    /// Carry a MultiCluster effect of the core to its link.
    pub(crate) fn mc_carry(&mut self, e: basalt_sched::Effect) {
        match e {
            basalt_sched::Effect::McForward {
                key,
                cluster,
                queue,
                attempt,
            } => {
                // As sent: the user name the UserMap export gives for that cluster.
                let Some(sub) = self.sched.mc_forward_submission(key, &cluster) else {
                    return;
                };
                let job_file = self.journal.job_file(&sub.job_file).unwrap_or_else(|e| {
                    warn!(job = key.0, "forwarding without its job file: {e}");
                    Vec::new()
                });
                let rec = basalt_records::to_record(&Event::JobNew {
                    time: sub.submit_time,
                    job_id: key.0,
                    sub: Box::new(sub),
                });
                let cmd = LinkCmd::Forward {
                    key,
                    attempt,
                    queue,
                    job_new: rec.to_line(),
                    job_file,
                };
                self.mc_send(&cluster, cmd, Some((key, attempt)));
            }
            basalt_sched::Effect::McControl {
                key,
                cluster,
                signal,
            } => self.mc_send(&cluster, LinkCmd::Control { key, signal }, None),
            _ => {}
        }
    }

    fn mc_send(&mut self, cluster: &str, cmd: LinkCmd, forward: Option<(JobKey, u32)>) {
        let sent = self
            .mc_links
            .senders
            .get(cluster)
            .is_some_and(|s| s.send(cmd).is_ok());
        if !sent && let Some((key, attempt)) = forward {
            // No link to that cluster: the job comes back at once.
            let _ = self.tx.send(Msg::McLink {
                cluster: cluster.to_owned(),
                news: LinkNews::Forwarded {
                    key,
                    attempt,
                    answer: Err(format!("no link to cluster {cluster}")),
                },
            });
        }
    }

    /// A link's news, applied to the core.
    pub(crate) fn mc_link_news(&mut self, cluster: &str, news: LinkNews) {
        let now = now_ms();
        match news {
            LinkNews::Polled {
                master,
                queues,
                jobs,
            } => {
                let st = self.mc_links.state.entry(cluster.to_owned()).or_default();
                if st.status != "ok" {
                    info!(cluster, master = %master, "MultiCluster link up");
                }
                *st = LinkState {
                    status: "ok".into(),
                    detail: String::new(),
                    master,
                    last_contact: now / 1000,
                };
                self.sched.mc_set_remote(now, cluster, Some(queues));
                self.sched.mc_remote_jobs(now, cluster, jobs);
            }
            LinkNews::Down { status, detail } => {
                let st = self.mc_links.state.entry(cluster.to_owned()).or_default();
                if st.status != status || st.detail != detail {
                    warn!(cluster, "MultiCluster link {status}: {detail}");
                }
                st.status = status.into();
                st.detail = detail;
                self.sched.mc_set_remote(now, cluster, None);
            }
            LinkNews::Forwarded {
                key,
                attempt,
                answer,
            } => {
                match &answer {
                    Ok(id) => info!(
                        job = key.0,
                        cluster,
                        remote_job = id,
                        "forwarded job accepted"
                    ),
                    Err(why) => info!(job = key.0, cluster, "forwarded job refused: {why}"),
                }
                self.sched.mc_forward_answer(now, key, attempt, answer);
            }
        }
    }

    /// A request of another cluster.
    pub(crate) fn mc_incoming(
        &mut self,
        cluster: &str,
        req: Incoming,
        deferred: &mut Vec<Deferred>,
    ) {
        let now = now_ms();
        match req {
            Incoming::Info { reply } => {
                deferred.push(defer(reply, self.sched.mc_info_for(cluster)));
            }
            Incoming::Jobs { reply } => {
                deferred.push(defer(reply, self.sched.mc_jobs_for(cluster)));
            }
            Incoming::Forward {
                src,
                attempt,
                queue,
                job_new,
                job_file,
                reply,
            } => {
                let out = self.mc_accept(now, cluster, src, attempt, &queue, &job_new, &job_file);
                deferred.push(defer(reply, out));
            }
            Incoming::Control { src, signal, reply } => {
                let out = self.mc_control(now, cluster, src, &signal);
                deferred.push(defer(reply, out));
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn mc_accept(
        &mut self,
        now: i64,
        cluster: &str,
        src: JobKey,
        attempt: u32,
        queue: &str,
        job_new: &str,
        job_file: &[u8],
    ) -> Result<u64, String> {
        let rec = basalt_eventlog::parse_line(job_new)
            .map_err(|e| format!("bad JOB_NEW record: {e}"))?
            .ok_or_else(|| "empty JOB_NEW record".to_owned())?;
        let Some(Event::JobNew { sub, .. }) = basalt_records::from_record(&rec) else {
            return Err("not a JOB_NEW record".into());
        };
        let mut sub = *sub;
        sub.queue = queue.into();
        // Who the job runs as here is this cluster's decision (the core's, with the
        // users looked up here): the UserMap import's local user, else the user of the
        // same name, as this host's password database has it; root only with
        // LSF_ROOT_REX; a personal cluster only its owner.
        let accounts = self.mc_accounts(cluster, &sub.user);
        let (id, new) = self
            .sched
            .mc_accept(now, cluster, src, attempt, &accounts, sub)
            .map_err(|e| e.to_string())?;
        if new {
            let submit_time = self.sched.job((id, 0)).map_or(0, |j| j.sub.submit_time);
            self.spool_job_file(submit_time, id, job_file);
            info!(
                job = id,
                cluster,
                src_job = src.0,
                "accepted a job forwarded from {cluster}"
            );
        }
        Ok(id)
    }

    /// The users a job of `remote_user` from `cluster` may run as here
    /// ([`basalt_sched::mc::McConfig::import_candidates`]), looked up in this host's
    /// password database, and this cluster's rules for them.
    fn mc_accounts(&self, cluster: &str, remote_user: &str) -> McAccounts {
        let found = self
            .sched
            .config()
            .mc
            .import_candidates(cluster, remote_user)
            .into_iter()
            .map(|name| {
                let uid = match nix::unistd::User::from_name(&name) {
                    Ok(u) => u.map(|u| u.uid.as_raw()),
                    Err(e) => {
                        warn!(user = %name, "cannot look up a forwarded job's user: {e}");
                        None
                    }
                };
                (name, uid)
            })
            .collect();
        let euid = nix::unistd::geteuid();
        McAccounts {
            found,
            root_rex: basalt_auth::root_rex(&self.config),
            only: (!euid.is_root())
                .then(|| basalt_auth::user_name(euid.as_raw()).unwrap_or_else(|| euid.to_string())),
        }
    }

    fn mc_control(&mut self, now: i64, cluster: &str, src: JobKey, signal: &str) -> String {
        let Some(key) = self.sched.mc_job_from(cluster, src) else {
            return "No matching job found".into();
        };
        let Some(j) = self.sched.job(key) else {
            return "No matching job found".into();
        };
        let caller = owner_of(&j.sub);
        let r = match signal {
            "KILL" => self.sched.kill(now, &caller, key, false, false),
            "STOP" => self.sched.stop(now, &caller, key),
            "RESUME" => self.sched.resume(now, &caller, key),
            other => self.sched.send_signal(now, &caller, key, other),
        };
        match r {
            Ok(()) | Err(basalt_sched::SchedError::Finished) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    /// bclusters: the links and the send/receive queue pairs.
    pub(crate) fn clusters_reply(&self) -> pb::ClustersReply {
        let remotes = self.sched.mc_remotes();
        let status_of = |c: &str| {
            self.mc_links
                .state
                .get(c)
                .map_or_else(|| "disc".to_owned(), |s| s.status.clone())
        };
        let links = self
            .mc_links
            .state
            .iter()
            .map(|(c, s)| pb::ClusterLink {
                cluster: c.clone(),
                status: s.status.clone(),
                detail: s.detail.clone(),
                master: s.master.clone(),
                last_contact: s.last_contact,
            })
            .collect();
        let mut queues = Vec::new();
        for q in &self.config.batch.queues {
            for (rq, rc) in &q.snd_jobs_to {
                let info = remotes
                    .get(rc)
                    .and_then(|r| r.queues.as_ref())
                    .and_then(|qs| qs.iter().find(|x| x.name == *rq));
                queues.push(pb::QueueLink {
                    local_queue: q.name.clone(),
                    flow: "send".into(),
                    remote_queue: rq.clone(),
                    cluster: rc.clone(),
                    status: status_of(rc),
                    impt_jobbklg: info.map_or(0, |i| i.impt_jobbklg.map_or(-1, i64::from)),
                    mc_pending: info.map_or(0, |i| i.mc_pending),
                    free_slots: info.map_or(0, |i| i.free_slots),
                    priority: info.map_or(0, |i| i.priority),
                    pend: 0,
                    run: 0,
                });
            }
            let from: Vec<String> = if q
                .rcv_jobs_from
                .iter()
                .any(|c| c.eq_ignore_ascii_case("allclusters"))
            {
                self.config
                    .cluster
                    .remote_clusters
                    .iter()
                    .map(|r| r.name.clone())
                    .collect()
            } else {
                q.rcv_jobs_from.clone()
            };
            for rc in from {
                let (pend, run) = self.sched.jobs().values().fold((0, 0), |(p, r), j| {
                    let mine =
                        *j.queue == *q.name && j.mc.as_ref().is_some_and(|m| *m.src_cluster == *rc);
                    match (mine, j.state) {
                        (true, s) if s.is_pending() => (p + 1, r),
                        (true, s) if s.is_started() => (p, r + 1),
                        _ => (p, r),
                    }
                });
                queues.push(pb::QueueLink {
                    local_queue: q.name.clone(),
                    flow: "recv".into(),
                    remote_queue: "-".into(),
                    cluster: rc.clone(),
                    status: status_of(&rc),
                    pend,
                    run,
                    ..Default::default()
                });
            }
        }
        pb::ClustersReply {
            cluster: self.config.cluster_name.clone(),
            links,
            queues,
        }
    }
}

/// The owner of a job here, as whom the execution cluster controls a forwarded job (the
/// local user it was accepted as: [`basalt_sched::Sched::mc_owner`]; the submission
/// cluster has checked who asks).
fn owner_of(sub: &basalt_sched::Submission) -> Caller {
    Caller {
        uid: sub.uid,
        user: sub.user.to_string(),
        host: sub.from_host.to_string(),
    }
}

/// The wire form of a remote queue, and back.
pub(crate) fn queue_to_pb(q: &RemoteQueue) -> pb::McQueue {
    pb::McQueue {
        name: q.name.clone(),
        priority: q.priority,
        impt_jobbklg: q.impt_jobbklg.map_or(-1, i64::from),
        mc_pending: q.mc_pending,
        free_slots: q.free_slots,
        preemptable_slots: q.preemptable_slots,
        pending_slots: q.pending_slots,
        hosts: q
            .hosts
            .iter()
            .map(|(t, r)| pb::McHost {
                r#type: t.clone(),
                resources: r.clone(),
            })
            .collect(),
    }
}

pub(crate) fn queue_from_pb(q: pb::McQueue) -> RemoteQueue {
    RemoteQueue {
        name: q.name,
        priority: q.priority,
        impt_jobbklg: u32::try_from(q.impt_jobbklg).ok(),
        mc_pending: q.mc_pending,
        free_slots: q.free_slots,
        preemptable_slots: q.preemptable_slots,
        pending_slots: q.pending_slots,
        hosts: q
            .hosts
            .into_iter()
            .map(|h| (h.r#type, h.resources))
            .collect(),
    }
}

pub(crate) fn job_to_pb(j: &RemoteJob) -> pb::McJob {
    let u = j.usage.clone().unwrap_or_default();
    pb::McJob {
        job_id: j.src.0,
        idx: j.src.1,
        attempt: j.attempt,
        remote_job_id: j.remote_id,
        state: j.state,
        reasons: j.reasons,
        subreasons: j.subreasons,
        hosts: j.hosts.clone(),
        start_time: j.start_time,
        end_time: j.end_time,
        exit_status: j.exit_status,
        cpu_time: j.cpu_time,
        term_reason: j.term_reason.clone(),
        returned: j.returned,
        utime: u.utime,
        stime: u.stime,
        mem_kb: u.mem_kb,
        swap_kb: u.swap_kb,
        max_mem_kb: u.max_mem_kb,
        avg_mem_kb: u.avg_mem_kb,
        pids: u.pids.clone(),
        pgid: u.pgid,
    }
}

pub(crate) fn job_from_pb(j: pb::McJob) -> RemoteJob {
    let any = j.utime > 0.0 || j.stime > 0.0 || j.mem_kb > 0 || !j.pids.is_empty();
    let usage = any.then_some(basalt_sched::Usage {
        utime: j.utime,
        stime: j.stime,
        mem_kb: j.mem_kb,
        swap_kb: j.swap_kb,
        max_mem_kb: j.max_mem_kb,
        avg_mem_kb: j.avg_mem_kb,
        pids: j.pids,
        pgid: j.pgid,
        time: 0,
    });
    RemoteJob {
        src: (j.job_id, j.idx),
        attempt: j.attempt,
        remote_id: j.remote_job_id,
        state: j.state,
        reasons: j.reasons,
        subreasons: j.subreasons,
        hosts: j.hosts,
        start_time: j.start_time,
        end_time: j.end_time,
        exit_status: j.exit_status,
        cpu_time: j.cpu_time,
        term_reason: j.term_reason,
        returned: j.returned,
        usage,
    }
}
