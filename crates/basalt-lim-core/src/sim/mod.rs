//! A simulated network of LIM cores on a manual clock: every effect is
//! delivered (or lost, for a down host) deterministically, probes to a down
//! host answer after `PROBE_TIMEOUT`. This module is the harness; the scenarios
//! (election, failover, partitions, host status) are in `tests.rs`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::*;

fn info(name: &str) -> HostInfo {
    HostInfo {
        name: name.to_owned(),
        host_type: "linux".into(),
        model: "generic".into(),
        cpu_factor: 1.0,
        ncpus: 2,
        max_mem_mb: 1024,
        server: true,
        ..Default::default()
    }
}

fn timing() -> Timing {
    Timing {
        exinterval_ms: 100,
        master_inactivity_limit: 2,
        host_inactivity_limit: 5,
        retry_limit: 2,
        probe_timeout_ms: 200,
    }
}

fn config(me: &str, names: &[&str]) -> CoreConfig {
    config_with(me, names, &[], |_| {})
}

/// A config for `me` of a cluster of `names` (every host a candidate but as `edit`
/// makes them), `order` the LSF_MASTER_LIST.
fn config_with(
    me: &str,
    names: &[&str],
    order: &[&str],
    edit: impl Fn(&mut [HostEntry]),
) -> CoreConfig {
    let mut hosts: Vec<HostEntry> = names
        .iter()
        .map(|n| HostEntry {
            name: (*n).to_owned(),
            server: true,
            candidate: true,
            busy_thresholds: BTreeMap::new(),
        })
        .collect();
    edit(&mut hosts);
    let order: Vec<String> = order.iter().map(|o| (*o).to_owned()).collect();
    CoreConfig {
        me: me.to_owned(),
        hosts: Arc::new(CoreHosts::new(hosts, &order).expect("valid hosts")),
        me_candidate: true,
        timing: timing(),
        decreasing_externals: BTreeSet::new(),
        load_reports_per_sec: crate::DEFAULT_LOAD_REPORTS_PER_SEC,
    }
}

type ProbeResults = (u64, Vec<(String, Option<ProbeReply>)>);

struct Sim {
    now: u64,
    names: Vec<String>,
    configs: BTreeMap<String, CoreConfig>,
    nodes: BTreeMap<String, LimCore>,
    /// Hosts whose LIM is down.
    down: BTreeSet<String>,
    /// Hosts whose LIM is stopped (SIGSTOP): unreachable, no ticks, state kept.
    paused: BTreeSet<String>,
    /// Pairs that cannot reach each other (both directions).
    cut: BTreeSet<(String, String)>,
    /// Probe results to deliver later: (when, to, results).
    delayed: Vec<(u64, String, ProbeResults)>,
    /// Every MasterChanged seen: (time, host, master, epoch).
    changes: Vec<(u64, String, Option<String>, u64)>,
    /// Every heartbeat delivered: (time, from, to).
    heartbeats: Vec<(u64, String, String)>,
    /// Every announcement delivered: (time, from, to).
    announcements: Vec<(u64, String, String)>,
}

impl Sim {
    fn new(names: &[&str]) -> Sim {
        let configs = names
            .iter()
            .map(|n| ((*n).to_owned(), config(n, names)))
            .collect();
        Sim::with_configs(names, configs)
    }

    fn with_configs(names: &[&str], configs: BTreeMap<String, CoreConfig>) -> Sim {
        let mut sim = Sim {
            now: 0,
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            configs,
            nodes: BTreeMap::new(),
            down: BTreeSet::new(),
            paused: BTreeSet::new(),
            cut: BTreeSet::new(),
            delayed: Vec::new(),
            changes: Vec::new(),
            heartbeats: Vec::new(),
            announcements: Vec::new(),
        };
        for n in names {
            sim.boot(n);
        }
        sim
    }

    fn boot(&mut self, name: &str) {
        let mut core = LimCore::new(self.configs[name].clone()).expect("valid config");
        let now = self.now;
        let mut fx = core.set_local(now, LoadVector::default(), info(name));
        self.nodes.insert(name.to_owned(), core);
        self.down.remove(name);
        fx.extend(self.nodes.get_mut(name).expect("node").start(now));
        self.run(name, fx);
    }

    fn kill(&mut self, name: &str) {
        self.down.insert(name.to_owned());
        self.nodes.remove(name);
        self.delayed.retain(|(_, to, _)| to != name);
    }

    /// SIGSTOP: the LIM neither runs nor answers, but keeps its state.
    fn pause(&mut self, name: &str) {
        self.paused.insert(name.to_owned());
    }

    /// SIGCONT: the LIM runs again; its next input comes with a late clock.
    fn resume(&mut self, name: &str) {
        self.paused.remove(name);
    }

    fn reachable(&self, a: &str, b: &str) -> bool {
        !self.down.contains(b)
            && !self.paused.contains(b)
            && !self.paused.contains(a)
            && self.nodes.contains_key(b)
            && !self.cut.contains(&(a.to_owned(), b.to_owned()))
            && !self.cut.contains(&(b.to_owned(), a.to_owned()))
    }

    fn partition(&mut self, side: &[&str]) {
        for a in side {
            for b in &self.names {
                if !side.contains(&b.as_str()) {
                    self.cut.insert(((*a).to_owned(), b.clone()));
                }
            }
        }
    }

    fn heal(&mut self) {
        self.cut.clear();
    }

    /// Perform `fx` produced by host `from`, and everything they cause.
    fn run(&mut self, from: &str, fx: Vec<Effect>) {
        let mut queue: VecDeque<(String, Effect)> =
            fx.into_iter().map(|e| (from.to_owned(), e)).collect();
        let mut steps = 0;
        while let Some((src, effect)) = queue.pop_front() {
            steps += 1;
            assert!(
                steps < 10_000,
                "effects do not settle at {} ms: {effect:?}",
                self.now
            );
            let now = self.now;
            if !self.nodes.contains_key(&src) || self.paused.contains(&src) {
                continue;
            }
            match effect {
                Effect::SendHeartbeat {
                    to,
                    load,
                    info,
                    locked,
                } => {
                    let out = if self.reachable(&src, &to) {
                        self.heartbeats.push((now, src.clone(), to.clone()));
                        let node = self.nodes.get_mut(&to).expect("reachable");
                        let (reply, fx) = node.on_heartbeat(now, &src, *load, *info, locked);
                        queue.extend(fx.into_iter().map(|e| (to.clone(), e)));
                        self.nodes
                            .get_mut(&src)
                            .expect("src")
                            .on_heartbeat_reply(now, reply)
                    } else {
                        self.nodes
                            .get_mut(&src)
                            .expect("src")
                            .on_heartbeat_failed(now)
                    };
                    queue.extend(out.into_iter().map(|e| (src.clone(), e)));
                }
                Effect::Announce { to, epoch } => {
                    for host in to {
                        if !self.reachable(&src, &host) {
                            continue;
                        }
                        self.announcements.push((now, src.clone(), host.clone()));
                        let node = self.nodes.get_mut(&host).expect("reachable");
                        let (reply, fx) = node.on_announce(now, &src, epoch);
                        queue.extend(fx.into_iter().map(|e| (host.clone(), e)));
                        if let Some(n) = self.nodes.get_mut(&src) {
                            let out = n.on_announce_reply(now, &host, reply);
                            queue.extend(out.into_iter().map(|e| (src.clone(), e)));
                        }
                    }
                }
                Effect::Probe { id, hosts } => {
                    let mut results = Vec::new();
                    let mut slow = false;
                    for h in hosts {
                        if self.reachable(&src, &h) {
                            let (r, fx) = self
                                .nodes
                                .get_mut(&h)
                                .expect("reachable")
                                .on_probe(now, &src);
                            queue.extend(fx.into_iter().map(|e| (h.clone(), e)));
                            results.push((h, Some(r)));
                        } else {
                            slow = true;
                            results.push((h, None));
                        }
                    }
                    let when = if slow {
                        now + timing().probe_timeout_ms
                    } else {
                        now
                    };
                    self.delayed.push((when, src.clone(), (id, results)));
                }
                Effect::MasterChanged { master, epoch, .. } => {
                    self.changes.push((now, src.clone(), master, epoch));
                }
                Effect::HostStatusChanged { .. }
                | Effect::CatchingUp { .. }
                | Effect::Stalled { .. } => {}
            }
        }
    }

    /// Advance the clock by `ms` in 10 ms steps.
    fn advance(&mut self, ms: u64) {
        let end = self.now + ms;
        while self.now < end {
            self.now += 10;
            let now = self.now;
            let due: Vec<_> = {
                let paused = &self.paused;
                let (due, keep): (Vec<_>, Vec<_>) = self
                    .delayed
                    .drain(..)
                    .partition(|(t, to, _)| *t <= now && !paused.contains(to));
                self.delayed = keep;
                due
            };
            for (_, to, (id, results)) in due {
                if let Some(n) = self.nodes.get_mut(&to) {
                    let fx = n.on_probe_results(now, id, results);
                    self.run(&to, fx);
                }
            }
            let names: Vec<String> = self
                .nodes
                .keys()
                .filter(|n| !self.paused.contains(*n))
                .cloned()
                .collect();
            for name in names {
                let fx = self.nodes.get_mut(&name).expect("node").tick(now);
                self.run(&name, fx);
            }
        }
    }

    fn master_of(&self, host: &str) -> Option<String> {
        self.nodes[host].master().map(str::to_owned)
    }

    /// Hosts that believe they are master.
    fn masters(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|(_, n)| n.is_master())
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn assert_all_follow(&self, master: &str) {
        for (name, node) in &self.nodes {
            assert_eq!(
                node.master(),
                Some(master),
                "at {} ms host {name} follows {:?}, expected {master}",
                self.now,
                node.master()
            );
        }
        assert_eq!(
            self.masters(),
            vec![master.to_owned()],
            "exactly one master"
        );
    }

    fn epoch_of(&self, host: &str) -> u64 {
        self.nodes[host].epoch()
    }
}

mod tests;
