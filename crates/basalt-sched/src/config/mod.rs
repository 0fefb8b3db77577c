//! The part of the LSF configuration the core needs, resolved once: queues with their
//! host and user lists expanded, batch hosts with MXJ and JL/U, lsb.params values.

mod build;
mod groups;

use crate::SchedError;
use crate::types::{Host, LimStatus, Queue, QueueShown};
use basalt_config::Config;
use basalt_config::batch::{Batch, Group, Mxj, RequeueValues};
use build::{app_profile, host_row, postproc, queue_row};
#[cfg(test)]
use groups::NO_HOST;
pub(crate) use groups::expand_hosts;
pub(crate) use groups::host_group_admins;
pub use groups::{UserList, check_app_and_group, expand_users, group_admins};
use groups::{expand, host_prefs};
use std::collections::BTreeMap;

/// Default of `BASALT_HOST_LOST_GRACE` (seconds).
pub const DEFAULT_HOST_LOST_GRACE: u32 = 60;

/// A queue's USERS or HOSTS as bqueues -l shows it: as written, groups with LSF's
/// trailing `/`; `all` when not set.
/// Default of `BASALT_SBD_HELLO_INTERVAL` (seconds).
pub const DEFAULT_HELLO_INTERVAL: u32 = 5;

/// The most sbatchd hellos a second mbatchd takes: past it, the hello interval grows
/// with the cluster ([`hello_interval`]).
pub const HELLOS_PER_SEC: usize = 1000;

/// Seconds between sbatchd hellos: `BASALT_SBD_HELLO_INTERVAL` (at least 1), or in a
/// cluster of more than that many times [`HELLOS_PER_SEC`] server hosts, the interval
/// that keeps their hellos within that rate (10 s for 10,000 hosts) — as LSF stretches
/// its load exchange with the cluster's size. A host is `unreach` after three missed
/// hellos either way.
pub fn hello_interval(configured: u32, server_hosts: usize) -> u32 {
    let scaled = u32::try_from(server_hosts.div_ceil(HELLOS_PER_SEC)).unwrap_or(u32::MAX);
    configured.max(1).max(scaled)
}

fn configured(tokens: &[String], is_group: impl Fn(&str) -> bool) -> Vec<String> {
    if tokens.is_empty() {
        return vec!["all".to_owned()];
    }
    crate::reslimits::shown_tokens(tokens, is_group)
}

/// The core's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedConfig {
    pub cluster: String,
    /// Cluster administrators (lsf.cluster ClusterAdmins); root is always one.
    pub admins: Vec<String>,
    pub default_queue: String,
    pub default_project: String,
    pub clean_period_secs: u32,
    /// MAX_JOB_NUM: finished jobs purged from memory (JOB_CLEAN) before lsb.events is
    /// switched (event-log.md §6).
    pub max_job_num: u32,
    pub job_accept_interval: u32,
    pub mbd_sleep_time_secs: u32,
    pub sbd_sleep_time_secs: u32,
    pub job_terminate_interval_secs: u32,
    pub max_jobid: u32,
    /// MAX_JOB_ARRAY_SIZE: elements per array.
    pub max_job_array_size: u32,
    /// Seconds between sbatchd hellos ([`hello_interval`]); a host is unreach after 3
    /// missed ones.
    pub hello_interval_secs: u32,
    /// lsf.conf `LSB_MAX_JOB_DISPATCH_PER_SESSION`: the most start orders under way at
    /// once (sent, not answered); a pass places no job past it (PEND_JOB_DELAY_SCHED).
    pub max_dispatch_in_flight: usize,
    /// Basalt's `BASALT_HOST_LOST_GRACE` (lsb.params, seconds, default
    /// [`DEFAULT_HOST_LOST_GRACE`]): how long a host stays `unreach` before mbatchd gives
    /// up on the jobs it runs — rerunnable ones are requeued, the others end EXIT.
    pub host_lost_grace_secs: u32,
    /// Basalt's `BASALT_REQUEUE_DELAY` (lsb.params, seconds, at least 1; default
    /// MBD_SLEEP_TIME): how long a job requeued by its exit value (REQUEUE_EXIT_VALUES,
    /// `bsub -Q`) waits before its next dispatch — LSF's next dispatch turn — with
    /// pending reason PEND_JOB_REQUEUED meanwhile.
    pub requeue_delay_secs: u32,
    pub queues: Vec<Queue>,
    pub hosts: Vec<Host>,
    /// The kinds of lsf.shared's resource names, for resource requirements.
    pub res_kinds: BTreeMap<String, basalt_config::select::NameKind>,
    /// The numeric resources lsf.shared marks INCREASING (a larger value is a busier
    /// host), for `order[]`.
    pub res_increasing: Vec<String>,
    /// The cluster's resource table after the 11 built-in load indices: lsf.shared's
    /// resources in their order. A job short of one it reserves (`rusage[]`) pends with
    /// LSF's PEND_HOST_JOB_RUSAGE + its index in the table (11 + its place here), which
    /// bjobs shows with its name ([`crate::JobsView::resource_of`]).
    pub res_table: Vec<String>,
    /// `LSF_UNIT_FOR_LIMITS` in MB: the unit of a bare `rusage[mem=]` value.
    pub unit_mb: f64,
    /// `RESOURCE_RESERVE_PER_SLOT` (lsb.params) or `RESOURCE_RESERVE_PER_TASK`
    /// (lsf.conf): a job reserves its `rusage[]` amounts once per slot, not once per job.
    pub reserve_per_slot: bool,
    /// lsb.resources ReservationUsage: how each resource listed there is reserved (its
    /// METHOD), over `reserve_per_slot`.
    pub reserve_methods: BTreeMap<String, basalt_config::batch::ReserveMethod>,
    /// The numeric shared resources of the ResourceMap: each instance is one amount
    /// shared by its hosts (a licence count), which jobs reserve with `rusage[]`.
    pub shared: Vec<SharedRes>,
    /// The static Boolean and String shared resources of the ResourceMap, by host: each
    /// (name, None for a Boolean the host has, Some(value) for a String) that select
    /// expressions see on the hosts of the instance.
    pub shared_flags: BTreeMap<String, Vec<(String, Option<String>)>>,
    /// lsb.resources' Limit sections and lsb.users' MAX_JOBS.
    pub limits: Vec<crate::reslimits::ResLimit>,
    /// The users lsb.users has a row of their own for (and `default`), with their JL/P,
    /// for busers.
    pub user_rows: BTreeMap<String, Option<f64>>,
    /// lsb.params MAX_PEND_JOBS: pending jobs (PEND, PSUSP; an array's elements each) the
    /// cluster takes (None: unlimited); a submission past it is refused and bsub tries
    /// again every SUB_TRY_INTERVAL seconds.
    pub max_pend_jobs: Option<u32>,
    /// lsb.users MAX_PEND_JOBS: (the users it covers, their pending jobs), a user's own,
    /// a group's shared by its members, `group@` each member's, `default` each user
    /// without a row.
    pub user_pend_limits: Vec<(crate::reslimits::Scope, u32)>,
    /// lsb.params MAX_PEND_SLOTS: pending job slots (each pending job's `-n` minimum)
    /// the cluster takes (None: unlimited); past it, as MAX_PEND_JOBS.
    pub max_pend_slots: Option<u32>,
    /// lsb.users MAX_PEND_SLOTS, as `user_pend_limits`.
    pub user_pend_slot_limits: Vec<(crate::reslimits::Scope, u32)>,
    /// lsb.params SUB_TRY_INTERVAL (seconds, 60).
    pub sub_try_interval: u32,
    /// lsb.applications' profiles, by name.
    pub apps: BTreeMap<String, AppProfile>,
    /// lsb.params' preemption settings (seed 002).
    pub preempt: PreemptParams,
    /// MultiCluster job forwarding (seed 004): send-jobs and receive-jobs queues,
    /// MAX_RSCHED_TIME, LSB_MC_INITFAIL_RETRY, the remote-queue policy.
    pub mc: crate::mc::McConfig,
    /// lsf.conf LSB_ECHKPNT_METHOD: the checkpoint method of jobs that name none
    /// (`default`).
    pub chkpnt_method: String,
    /// lsb.users UserGroup USER_SHARES: each group's share tree (hierarchical
    /// fairshare).
    pub group_shares: BTreeMap<String, Vec<basalt_config::batch::ShareEntry>>,
    /// lsb.hosts HostPartition sections (host-partition fairshare).
    pub host_partitions: Vec<HostPart>,
    /// lsb.params' fairshare factors (host partitions use them; a queue's own win).
    pub fs_factors: crate::fairshare::FsFactors,
    /// lsb.users JL/P of user groups' own rows: the group's members together, on each
    /// host, per processor of the host.
    pub group_jl_p: Vec<(UserList, f64)>,
    /// lsb.users' user groups: each group's members (expanded, egroups resolved) and its
    /// own row's JL/P, for busers of a group.
    pub user_groups: BTreeMap<String, (UserList, Option<f64>)>,
    /// lsb.users GROUP_ADMIN: each user group administrator (a user; an administrator
    /// named as a user group is each of its users) and the members of the groups they
    /// administer, whose jobs they control. `[usershares]` administrators are not here.
    pub group_admins: BTreeMap<String, Vec<UserList>>,
    /// lsb.hosts HostGroup GROUP_ADMIN: each host group administrator (a user; a user
    /// group named is each of its users) and the hosts of the groups they administer,
    /// which they may open and close (`badmin hopen`/`hclose`).
    pub host_group_admins: BTreeMap<String, Vec<String>>,
    /// lsf.conf `LSB_MOD_ALL_JOBS=Y`: bmod may change a started job's output and error
    /// files, rerunnable flag and CPU, memory and run limits (else only its resource
    /// requirement).
    pub mod_all_jobs: bool,
    /// lsb.params JOB_INCLUDE_POSTPROC=Y: a job's end is reported once its
    /// post-execution commands have run (its slot stays taken meanwhile); N (LSF's
    /// default): the job is DONE or EXIT as it ends, its post-execution status comes
    /// later.
    pub include_postproc: bool,
    /// lsb.params JOB_POSTPROC_TIMEOUT, minutes: post-execution commands running
    /// longer are killed and the post-execution status is an error.
    pub postproc_timeout_mins: Option<u32>,
    /// lsb.hosts' host groups, expanded to host names ([`NO_HOST`] alone: none), for
    /// `bsub -m group`.
    pub host_groups: BTreeMap<String, Vec<String>>,
}

/// An application profile of lsb.applications, as it applies to its jobs: its settings
/// come between the job's own (which win) and its queue's.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AppProfile {
    pub name: String,
    pub description: String,
    /// RES_REQ: the requirement of a job of the profile without its own `-R`.
    pub res_req: String,
    /// PRE_EXEC / POST_EXEC: a job's own `-E` / `-Ep` replaces them.
    pub pre_exec: String,
    pub post_exec: String,
    /// JOB_STARTER: replaces the queue's.
    pub job_starter: String,
    /// JOB_INCLUDE_POSTPROC and JOB_POSTPROC_TIMEOUT (minutes): replace lsb.params'.
    pub include_postproc: Option<bool>,
    pub postproc_timeout_mins: Option<u32>,
    /// SUCCESS_EXIT_VALUES: replaces the queue's.
    pub success_exit_values: Option<Vec<u8>>,
    /// REQUEUE_EXIT_VALUES: a job's `-Q` replaces it; it replaces the queue's.
    pub requeue: Option<RequeueValues>,
    /// CPULIMIT, RUNLIMIT, MEMLIMIT...: between the job's own and the queue's.
    pub rlimits: crate::limits::QueueLimits,
    /// MAX_JOB_PREEMPT, NO_PREEMPT_RUN_TIME, NO_PREEMPT_FINISH_TIME: over the queue's.
    pub max_job_preempt: Option<u32>,
    pub no_preempt_run_time: Option<basalt_config::batch::NoPreemptTime>,
    pub no_preempt_finish_time: Option<basalt_config::batch::NoPreemptTime>,
    /// CHKPNT_DIR with CHKPNT_PERIOD (minutes in the file, seconds here): its jobs are
    /// checkpointable; CHKPNT_METHOD ("" = lsf.conf's).
    pub chkpnt: Option<crate::chkpnt::ChkCfg>,
    pub chkpnt_method: String,
    /// Every setting as written, for bapp -l.
    pub settings: BTreeMap<String, String>,
}

/// A host partition of lsb.hosts: its hosts and the shares of its users.
#[derive(Debug, Clone, PartialEq)]
pub struct HostPart {
    pub name: String,
    /// Host names (empty: every host).
    pub hosts: Vec<String>,
    pub user_shares: Vec<basalt_config::batch::ShareEntry>,
}

impl HostPart {
    /// Is `host` one of its hosts?
    pub fn has(&self, host: &str) -> bool {
        self.hosts.is_empty() || self.hosts.iter().any(|h| basalt_core::same_host(h, host))
    }
}

/// A queue's fairshare factors: its own (lsb.queues), else lsb.params'.
fn fs_factors(
    q: &BTreeMap<String, String>,
    p: &basalt_config::batch::BatchParams,
) -> crate::fairshare::FsFactors {
    let get = |k: &str, d: f64| {
        q.get(k)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| *v >= 0.0)
            .unwrap_or(d)
    };
    crate::fairshare::FsFactors {
        cpu_time: get("CPU_TIME_FACTOR", p.cpu_time_factor),
        run_time: get("RUN_TIME_FACTOR", p.run_time_factor),
        run_job: get("RUN_JOB_FACTOR", p.run_job_factor),
        committed_run_time: get("COMMITTED_RUN_TIME_FACTOR", p.committed_run_time_factor),
        hist_hours: get("HIST_HOURS", p.hist_hours),
    }
}

/// lsb.params' preemption settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PreemptParams {
    /// PREEMPT_FOR.
    pub preempt_for: basalt_config::batch::PreemptFor,
    /// MAX_JOB_PREEMPT (None: unlimited).
    pub max_job_preempt: Option<u32>,
    /// MAX_PREEMPT_JOBS: jobs preempted per scheduling pass at most (OpenLava: 12).
    pub max_preempt_jobs: u32,
    /// PREEMPTION_WAIT_TIME, seconds (300 when not set).
    pub wait_time_secs: u32,
    pub no_preempt_run_time: Option<basalt_config::batch::NoPreemptTime>,
    pub no_preempt_finish_time: Option<basalt_config::batch::NoPreemptTime>,
}

/// One instance of a numeric shared resource (ResourceMap of `lsf.cluster.<cluster>`).
#[derive(Debug, Clone, PartialEq)]
pub struct SharedRes {
    pub name: String,
    /// Its configured value (`2@[all]`); None for a dynamic one: its value is what the
    /// ELIM of one of its hosts reports through LIM (see `Sched::shared_values`).
    pub value: Option<f64>,
    pub hosts: Vec<String>,
}

/// What select expressions see of a cluster-file host until its LIM reports: its type
/// and model as its LIM will report them (a host of the cluster runs mbatchd's
/// architecture unless its MODEL says otherwise), and its RESOURCES.
fn static_values(
    c: &Config,
    h: &basalt_config::cluster::ClusterHost,
    kinds: &BTreeMap<String, basalt_config::select::NameKind>,
) -> basalt_config::select::HostValues {
    crate::LimStatic {
        host_type: c.type_of(Some(h)),
        model: c.model_of(Some(h), std::env::consts::ARCH),
        resources: h.resources.clone(),
        ..Default::default()
    }
    .values(&h.name, kinds)
}

/// A count set in the queue, else in lsb.params (None = neither: unlimited).
pub(crate) fn setting(
    queue: &BTreeMap<String, String>,
    params: &BTreeMap<String, String>,
    key: &str,
) -> Option<u32> {
    queue
        .get(key)
        .or_else(|| params.get(key))
        .and_then(|v| v.trim().parse::<u32>().ok())
}

impl SchedConfig {
    /// Resolve a loaded configuration (user groups with `!` members resolve to nobody;
    /// [`SchedConfig::from_config_with_egroups`] gives their members).
    pub fn from_config(c: &Config) -> SchedConfig {
        Self::from_config_with_egroups(c, &BTreeMap::new())
    }

    /// Resolve a loaded configuration; `egroups` are the members the `egroup` program gave
    /// for the user groups whose GROUP_MEMBER is `(!)`.
    pub fn from_config_with_egroups(
        c: &Config,
        egroups: &BTreeMap<String, Vec<String>>,
    ) -> SchedConfig {
        Self::from_config_dynamic(c, egroups, &BTreeMap::new())
    }

    /// Resolve a loaded configuration; `egroups` are the members the `egroup` program gave
    /// for the user groups whose GROUP_MEMBER is `(!)` (`egroup -u`), `host_egroups` those
    /// of such host groups (`egroup -m`).
    pub fn from_config_dynamic(
        c: &Config,
        egroups: &BTreeMap<String, Vec<String>>,
        host_egroups: &BTreeMap<String, Vec<String>>,
    ) -> SchedConfig {
        let b: &Batch = &c.batch;
        let p = &b.params;
        let server: Vec<&basalt_config::cluster::ClusterHost> =
            c.cluster.hosts.iter().filter(|h| h.server).collect();
        let all_hosts: Vec<String> = server.iter().map(|h| h.name.clone()).collect();
        let res_kinds = basalt_config::select::resource_kinds(c);
        let hosts = server
            .iter()
            .enumerate()
            .map(|(rank, h)| host_row(c, b, &res_kinds, rank, h))
            .collect();
        let unit = c.lsf_conf.get("LSF_UNIT_FOR_LIMITS").unwrap_or("KB");
        let queues = b
            .queues
            .iter()
            .map(|q| queue_row(b, q, &all_hosts, (egroups, host_egroups), unit))
            .collect::<Vec<_>>();
        let default_queue = default_queue(p, &queues);
        let (hello, grace, requeue_delay) = timing(p, server.len());
        SchedConfig {
            cluster: c.cluster_name.clone(),
            admins: c.cluster.admins.clone(),
            default_queue,
            default_project: p.default_project.clone(),
            clean_period_secs: p.clean_period_secs,
            max_job_num: p.max_job_num,
            job_accept_interval: p.job_accept_interval,
            mbd_sleep_time_secs: p.mbd_sleep_time_secs,
            sbd_sleep_time_secs: p.sbd_sleep_time_secs,
            job_terminate_interval_secs: p.job_terminate_interval_secs,
            max_jobid: p.max_jobid,
            max_job_array_size: p.max_job_array_size.max(1),
            hello_interval_secs: hello,
            max_dispatch_in_flight: usize::try_from(c.lsf_conf.max_job_dispatch())
                .unwrap_or(usize::MAX),
            host_lost_grace_secs: grace,
            requeue_delay_secs: requeue_delay,
            queues,
            hosts,
            res_kinds,
            res_table: c.shared.resources.iter().map(|r| r.name.clone()).collect(),
            res_increasing: c
                .shared
                .resources
                .iter()
                .filter(|r| r.increasing == Some(true))
                .map(|r| r.name.clone())
                .collect(),
            unit_mb: unit_mb(unit),
            limits: crate::reslimits::resolve(b, &all_hosts, egroups, host_egroups),
            host_partitions: b
                .host_partitions
                .iter()
                .map(|hp| HostPart {
                    name: hp.name.clone(),
                    hosts: expand(&hp.hosts, &b.host_groups, &all_hosts, host_egroups),
                    user_shares: hp.user_shares.clone(),
                })
                .collect(),
            fs_factors: fs_factors(&BTreeMap::new(), p),
            group_shares: b
                .user_groups
                .iter()
                .filter_map(|g| {
                    let list = basalt_config::batch::parse_share_list(g.shares.as_deref()?).ok()?;
                    Some((g.name.clone(), list))
                })
                .collect(),
            mc: crate::mc::McConfig::from_config(c),
            chkpnt_method: c
                .lsf_conf
                .get("LSB_ECHKPNT_METHOD")
                .map(|m| m.trim().to_owned())
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "default".to_owned()),
            preempt: PreemptParams {
                preempt_for: p.preempt_for_keys,
                max_job_preempt: p.max_job_preempt,
                max_preempt_jobs: p.max_preempt_jobs,
                wait_time_secs: p.preemption_wait_time_secs.unwrap_or(300),
                no_preempt_run_time: p.no_preempt_run_time,
                no_preempt_finish_time: p.no_preempt_finish_time,
            },
            apps: b
                .applications
                .iter()
                .map(|a| app_profile(a, unit))
                .collect(),
            host_groups: host_groups(b, &all_hosts, host_egroups),
            host_group_admins: host_group_admins(
                &b.host_groups,
                &b.user_groups,
                &all_hosts,
                host_egroups,
                egroups,
            ),
            max_pend_jobs: p
                .other
                .get("MAX_PEND_JOBS")
                .and_then(|v| v.trim().parse::<u32>().ok()),
            user_pend_limits: crate::reslimits::pend_limits(b, egroups),
            max_pend_slots: p
                .other
                .get("MAX_PEND_SLOTS")
                .and_then(|v| v.trim().parse::<u32>().ok()),
            user_pend_slot_limits: crate::reslimits::pend_slot_limits(b, egroups),
            sub_try_interval: p
                .other
                .get("SUB_TRY_INTERVAL")
                .and_then(|v| v.trim().parse::<u32>().ok())
                .unwrap_or(60),
            user_rows: user_rows(b, egroups),
            shared: shared_instances(c),
            group_admins: group_admins(&b.user_groups, egroups),
            group_jl_p: group_jl_p(b, egroups),
            user_groups: user_groups(b, egroups),
            include_postproc: postproc(&p.other).0.unwrap_or(false),
            postproc_timeout_mins: postproc(&p.other).1,
            mod_all_jobs: c
                .lsf_conf
                .get("LSB_MOD_ALL_JOBS")
                .is_some_and(|v| matches!(v.trim().to_ascii_uppercase().as_str(), "Y" | "YES")),
            reserve_methods: b
                .reservation_usage
                .iter()
                .map(|u| (u.resource.clone(), u.method))
                .collect(),
            shared_flags: shared_flags(c),
            reserve_per_slot: p.resource_reserve_per_slot
                || c.lsf_conf
                    .get("RESOURCE_RESERVE_PER_TASK")
                    .is_some_and(|v| matches!(v.trim().to_ascii_uppercase().as_str(), "Y" | "YES")),
        }
    }
}

/// The Boolean and String shared resources of each host's instances (not the dynamic
/// ones), for select expressions.
fn shared_flags(c: &Config) -> BTreeMap<String, Vec<(String, Option<String>)>> {
    let mut by_host: BTreeMap<String, Vec<(String, Option<String>)>> = BTreeMap::new();
    for i in basalt_config::resource_map::shared_instances(c) {
        let value = match i.kind {
            basalt_config::ResourceKind::Boolean => None,
            basalt_config::ResourceKind::String => match &i.value {
                Some(v) => Some(v.clone()),
                None => continue,
            },
            _ => continue,
        };
        if i.dynamic {
            continue;
        }
        for h in &i.hosts {
            by_host
                .entry(h.clone())
                .or_default()
                .push((i.resource.clone(), value.clone()));
        }
    }
    by_host
}

/// lsb.users JL/P of user groups' own rows: the members and the per-processor limit.
fn group_jl_p(b: &Batch, egroups: &BTreeMap<String, Vec<String>>) -> Vec<(UserList, f64)> {
    b.user_groups
        .iter()
        .filter_map(|g| {
            let per_cpu = b.users.iter().find(|u| u.name == g.name)?.jl_p?;
            let members = expand_users(std::slice::from_ref(&g.name), &b.user_groups, egroups);
            Some((members, per_cpu))
        })
        .collect()
}

/// Each user group of lsb.users: its members and its own row's JL/P.
fn user_groups(
    b: &Batch,
    egroups: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, (UserList, Option<f64>)> {
    b.user_groups
        .iter()
        .map(|g| {
            let members = expand_users(std::slice::from_ref(&g.name), &b.user_groups, egroups);
            let jl_p = b
                .users
                .iter()
                .find(|u| u.name == g.name)
                .and_then(|u| u.jl_p);
            (g.name.clone(), (members, jl_p))
        })
        .collect()
}

/// lsb.params DEFAULT_QUEUE: the first of its queues that exists, else its first, else
/// `default`.
fn default_queue(p: &basalt_config::batch::BatchParams, queues: &[Queue]) -> String {
    p.default_queue
        .iter()
        .find(|d| queues.iter().any(|q| &q.name == *d))
        .cloned()
        .or_else(|| p.default_queue.first().cloned())
        .unwrap_or_else(|| "default".to_string())
}

/// The sbatchd hello interval for `servers` hosts, the host-lost grace and the requeue
/// delay (seconds) from lsb.params (basalt-config refuses 0 and what is not a number).
fn timing(p: &basalt_config::batch::BatchParams, servers: usize) -> (u32, u32, u32) {
    let num = |k: &str| p.other.get(k).and_then(|v| v.trim().parse::<u32>().ok());
    let hello = hello_interval(
        num("BASALT_SBD_HELLO_INTERVAL").unwrap_or(DEFAULT_HELLO_INTERVAL),
        servers,
    );
    let grace = num("BASALT_HOST_LOST_GRACE").unwrap_or(DEFAULT_HOST_LOST_GRACE);
    let requeue_delay = num("BASALT_REQUEUE_DELAY")
        .unwrap_or(p.mbd_sleep_time_secs)
        .max(1);
    (hello, grace, requeue_delay)
}

/// MB per unit of LSF_UNIT_FOR_LIMITS (KB by default).
fn unit_mb(unit: &str) -> f64 {
    match unit.trim().to_ascii_uppercase().as_str() {
        "MB" => 1.0,
        "GB" => 1024.0,
        "TB" => 1024.0 * 1024.0,
        "PB" => 1024.0 * 1024.0 * 1024.0,
        "EB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => 1.0 / 1024.0,
    }
}

/// lsb.users JL/P rows: users' own rows (and `default`); then each member of a `group@`
/// row that has no row of its own.
fn user_rows(b: &Batch, egroups: &BTreeMap<String, Vec<String>>) -> BTreeMap<String, Option<f64>> {
    // Users' own rows (and `default`); then each member of a `group@` row
    // that has no row of its own.
    let mut rows: BTreeMap<String, Option<f64>> = b
        .users
        .iter()
        .filter(|u| !u.name.ends_with('@') && !b.user_groups.iter().any(|g| g.name == u.name))
        .map(|u| (u.name.clone(), u.jl_p))
        .collect();
    for u in b.users.iter().filter(|u| u.jl_p.is_some()) {
        if let Some(g) = u.name.strip_suffix('@') {
            for m in expand_users(&[g.to_owned()], &b.user_groups, egroups).names {
                rows.entry(m).or_insert(u.jl_p);
            }
        }
    }
    rows
}

/// lsb.hosts' host groups expanded to host names (an empty expansion is every host).
fn host_groups(
    b: &Batch,
    all_hosts: &[String],
    host_egroups: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, Vec<String>> {
    b.host_groups
        .iter()
        .map(|g| {
            let members = expand(
                std::slice::from_ref(&g.name),
                &b.host_groups,
                all_hosts,
                host_egroups,
            );
            // An empty expansion is every host (`all`).
            let members = if members.is_empty() {
                all_hosts.to_vec()
            } else {
                members
            };
            (g.name.clone(), members)
        })
        .collect()
}

/// The instances of the numeric shared resources (ResourceMap).
fn shared_instances(c: &Config) -> Vec<SharedRes> {
    basalt_config::resource_map::shared_instances(c)
        .into_iter()
        .filter(|i| i.kind == basalt_config::ResourceKind::Numeric)
        .map(|i| SharedRes {
            name: i.resource,
            value: if i.dynamic {
                None
            } else {
                i.value.and_then(|v| v.trim().parse::<f64>().ok())
            },
            hosts: i.hosts,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_config::batch::Application;

    /// Issue 51: the hello interval stretches past HELLOS_PER_SEC hellos a second (10 s
    /// at 10,000 hosts), never below what lsb.params asks, never 0.
    #[test]
    fn the_hello_interval_grows_with_the_cluster_past_the_hello_budget() {
        assert_eq!(hello_interval(5, 3), 5);
        assert_eq!(hello_interval(5, 5_000), 5);
        assert_eq!(hello_interval(5, 10_000), 10);
        assert_eq!(hello_interval(2, 10_001), 11);
        assert_eq!(hello_interval(30, 10_000), 30);
        assert_eq!(hello_interval(0, 10), 1);
    }

    /// JOB_INCLUDE_POSTPROC: Y includes, N or unset does not (lsb.params' default N);
    /// JOB_POSTPROC_TIMEOUT in minutes.
    #[test]
    fn job_include_postproc_and_its_timeout_are_read_from_settings() {
        let settings = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        assert_eq!(
            postproc(&settings(&[
                ("JOB_INCLUDE_POSTPROC", "Y"),
                ("JOB_POSTPROC_TIMEOUT", "5")
            ])),
            (Some(true), Some(5))
        );
        assert_eq!(
            postproc(&settings(&[("JOB_INCLUDE_POSTPROC", "N")])),
            (Some(false), None)
        );
        assert_eq!(postproc(&settings(&[])), (None, None));
    }

    fn group(name: &str, members: &[&str]) -> Group {
        Group {
            name: name.into(),
            members: members.iter().map(|m| m.to_string()).collect(),
            shares: None,
            admins: vec![],
            line: 0,
        }
    }

    fn batch() -> Batch {
        Batch {
            user_groups: vec![
                group("physics", &["alice", "theory"]),
                group("theory", &["bob"]),
                group("everyone", &["all", "~carol", "~theory"]),
                group("ext", &["!"]),
            ],
            applications: vec![Application {
                name: "fluent".into(),
                description: String::new(),
                other: BTreeMap::new(),
                line: 0,
            }],
            ..Batch::default()
        }
    }

    #[test]
    fn an_application_lsb_applications_does_not_define_is_refused() {
        let b = batch();
        let none = BTreeMap::new();
        assert_eq!(
            check_app_and_group(&b, &none, "alice", "fluent", ""),
            Ok(())
        );
        assert_eq!(
            check_app_and_group(&b, &none, "alice", "cfx", ""),
            Err(SchedError::NoApplication)
        );
        assert_eq!(
            SchedError::NoApplication.to_string(),
            "Application profile does not exist"
        );
        assert_eq!(check_app_and_group(&b, &none, "alice", "", ""), Ok(()));
    }

    #[test]
    fn an_unknown_user_group_is_a_bad_user_group_name() {
        let b = batch();
        let none = BTreeMap::new();
        assert_eq!(
            check_app_and_group(&b, &none, "alice", "", "chemistry"),
            Err(SchedError::BadUserGroup)
        );
        assert_eq!(SchedError::BadUserGroup.to_string(), "Bad user group name");
    }

    #[test]
    fn only_members_may_submit_to_a_user_group() {
        let b = batch();
        let none = BTreeMap::new();
        let check = |user: &str, g: &str| check_app_and_group(&b, &none, user, "", g);
        assert_eq!(check("alice", "physics"), Ok(()));
        // Through a subgroup.
        assert_eq!(check("bob", "physics"), Ok(()));
        assert_eq!(check("carol", "physics"), Err(SchedError::UserNotInGroup));
        assert_eq!(
            SchedError::UserNotInGroup.to_string(),
            "User not in the specified user group"
        );
        // `all` but the excluded user and the excluded group's members.
        assert_eq!(check("dave", "everyone"), Ok(()));
        assert_eq!(check("carol", "everyone"), Err(SchedError::UserNotInGroup));
        assert_eq!(check("bob", "everyone"), Err(SchedError::UserNotInGroup));
        // An egroup: only what the egroup program answered.
        assert_eq!(check("alice", "ext"), Err(SchedError::UserNotInGroup));
        let eg = BTreeMap::from([("ext".to_string(), vec!["alice".to_string()])]);
        assert_eq!(check_app_and_group(&b, &eg, "alice", "", "ext"), Ok(()));
    }

    /// A host group whose GROUP_MEMBER is `(!)` has the hosts its egroup gave (`egroup
    /// -m`), and no host when it gave none; queue HOSTS and limits expand it so.
    #[test]
    fn a_dynamic_host_group_has_the_hosts_egroup_gave_and_none_without() {
        let groups = vec![group("dyn", &["!"]), group("mixed", &["dyn", "hostC"])];
        let all: Vec<String> = ["hostA", "hostB", "hostC"].map(String::from).to_vec();
        let gave = BTreeMap::from([("dyn".to_owned(), vec!["hostB".to_owned()])]);
        let none = BTreeMap::new();
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            expand_hosts(&t(&["dyn"]), &groups, &all, &gave),
            t(&["hostB"])
        );
        assert_eq!(
            expand_hosts(&t(&["mixed"]), &groups, &all, &gave),
            t(&["hostB", "hostC"])
        );
        assert_eq!(
            expand_hosts(&t(&["dyn"]), &groups, &all, &none),
            t(&[NO_HOST])
        );
        // Nothing named: every host; everything excluded: none.
        assert_eq!(
            expand_hosts(&t(&[]), &groups, &all, &none),
            Vec::<String>::new()
        );
        assert_eq!(
            expand_hosts(&t(&["all"]), &groups, &all, &none),
            Vec::<String>::new()
        );
        assert_eq!(
            expand_hosts(
                &t(&["all", "~hostA", "~hostB", "~hostC"]),
                &groups,
                &all,
                &none
            ),
            t(&[NO_HOST])
        );
        assert_eq!(
            expand_hosts(&t(&["mixed"]), &groups, &all, &none),
            t(&["hostC"])
        );
    }
}
