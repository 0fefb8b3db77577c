//! The core's inputs: start, timer ticks, messages from other LIMs, replies and probe
//! results, and the local load samples. Each returns the [`Effect`]s to perform.

use basalt_core::{HostInfo, LoadVector};

use crate::{AnnounceReply, Effect, HeartbeatReply, LimCore, ProbeReply, Role};

impl LimCore {
    /// The LIM starts: it catches up first (probes every other server host to
    /// learn the master and its epoch), then follows or takes over.
    pub fn start(&mut self, now: u64) -> Vec<Effect> {
        self.started = true;
        self.last_contact = now;
        self.last_input = Some(now);
        self.role = Role::Syncing;
        let mut fx = Vec::new();
        self.start_probe(now, &mut fx);
        fx
    }

    /// Any input at `now` (the daemon calls this before serving a query): if
    /// this LIM has not run for `MASTER_INACTIVITY_LIMIT` intervals it forgets
    /// its master and catches up — unless it can never be master and follows one:
    /// that one keeps its master ([`Effect::Stalled`]).
    pub fn wake(&mut self, now: u64) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        fx
    }

    /// Timer: heartbeats, announcements, takeover and host-status checks.
    pub fn tick(&mut self, now: u64) -> Vec<Effect> {
        let mut fx = Vec::new();
        if !self.started {
            return fx;
        }
        self.observe(now, &mut fx);
        let ex = self.timing.exinterval_ms;
        if let Some(since) = self.probing_since {
            // The runtime reports every probe; this only guards against a lost report.
            if now.saturating_sub(since) > self.timing.probe_timeout_ms + 2 * ex {
                self.probing_since = None;
            }
        }
        match self.role {
            Role::Master => {
                if self
                    .last_announce
                    .is_none_or(|t| now.saturating_sub(t) >= ex)
                {
                    self.announce(now, false, &mut fx);
                }
                self.refresh_all(now, &mut fx);
            }
            Role::Slave => {
                if let Some(m) = self.master
                    && m != self.me
                    && self
                        .last_heartbeat
                        .is_none_or(|t| now.saturating_sub(t) >= self.my_report_ms())
                {
                    self.heartbeat(now, m, &mut fx);
                }
                if self.probing_since.is_none() && self.takeover_due(now) {
                    self.start_probe(now, &mut fx);
                }
            }
            Role::Syncing => {
                if self.probing_since.is_none() {
                    self.start_probe(now, &mut fx);
                }
            }
        }
        fx
    }

    /// A heartbeat (load report) from `from`; `locked`: its host is locked (`lsadmin
    /// limlock`).
    pub fn on_heartbeat(
        &mut self,
        now: u64,
        from: &str,
        load: LoadVector,
        info: HostInfo,
        locked: bool,
    ) -> (HeartbeatReply, Vec<Effect>) {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        let accepted = match (self.role, self.index(from)) {
            (Role::Master, Some(i)) if i != self.me => {
                let h = &mut self.seen[i];
                h.view.load = Some(load);
                h.view.info = Some(info);
                h.view.last_heard_ms = Some(now);
                h.locked = locked;
                self.version += 1;
                h.changed = self.version;
                self.refresh(i, now, &mut fx);
                true
            }
            _ => false,
        };
        (
            HeartbeatReply {
                accepted,
                master: self.master().map(str::to_owned),
                epoch: self.reported_epoch(),
            },
            fx,
        )
    }

    /// `from` announces that it is master for `epoch`.
    pub fn on_announce(
        &mut self,
        now: u64,
        from: &str,
        epoch: u64,
    ) -> (AnnounceReply, Vec<Effect>) {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        let accepted = self.consider_master(now, from, epoch, &mut fx);
        (
            AnnounceReply {
                accepted,
                master: self.master().map(str::to_owned),
                // Accepted: the latest term we know (the master moves past it);
                // refused: the term of the master we name.
                epoch: if accepted {
                    self.max_epoch
                } else {
                    self.reported_epoch()
                },
            },
            fx,
        )
    }

    /// `from` asks whether this LIM is alive and whom it follows. A LIM that
    /// is catching up answers "master unknown" with the highest epoch it knows.
    pub fn on_probe(&mut self, now: u64, from: &str) -> (ProbeReply, Vec<Effect>) {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        if let Some(i) = self.index(from) {
            self.probed_me_at.insert(i, now);
        }
        (
            ProbeReply {
                host: self.me().to_owned(),
                is_master: self.is_master(),
                master: self.master().map(str::to_owned),
                epoch: self.reported_epoch(),
                master_heard_ago_ms: match self.role {
                    Role::Master => Some(0),
                    Role::Slave if self.master.is_some() => {
                        Some(now.saturating_sub(self.master_announced))
                    }
                    _ => None,
                },
            },
            fx,
        )
    }

    /// The master answered our heartbeat.
    pub fn on_heartbeat_reply(&mut self, now: u64, reply: HeartbeatReply) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        if self.role != Role::Slave {
            self.max_epoch = self.max_epoch.max(reply.epoch);
            return fx;
        }
        if reply.accepted {
            if reply.epoch >= self.max_epoch {
                self.last_contact = now;
                self.master_heard = now;
                self.epoch = reply.epoch;
            }
            self.max_epoch = self.max_epoch.max(reply.epoch);
            return fx;
        }
        // The host we report to is no longer master: follow whom it names if
        // that is the newest term we know (we catch up; a handover may follow).
        if reply.epoch >= self.max_epoch
            && let Some(m) = reply.master.as_deref()
            && let Some(i) = self.index(m)
            && Some(i) != self.master
            && i != self.me
            && self.rank_of(i).is_some()
        {
            self.max_epoch = reply.epoch;
            self.set_master(now, Some(i), reply.epoch, &mut fx);
            self.last_contact = now;
        }
        self.max_epoch = self.max_epoch.max(reply.epoch);
        fx
    }

    /// Our heartbeat to the master could not be delivered.
    pub fn on_heartbeat_failed(&mut self, now: u64) -> Vec<Effect> {
        // The takeover timer decides; a single lost heartbeat changes nothing.
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        fx
    }

    /// `to` answered our announcement.
    pub fn on_announce_reply(&mut self, now: u64, to: &str, reply: AnnounceReply) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        self.max_epoch = self.max_epoch.max(reply.epoch);
        if self.role != Role::Master {
            return fx;
        }
        let named = reply.master.as_deref().and_then(|m| self.index(m));
        if reply.accepted || named == Some(self.me) {
            if reply.epoch > self.epoch {
                // A follower saw a later term than ours: move past it.
                self.epoch = self.max_epoch + 1;
                self.max_epoch = self.epoch;
                fx.push(self.master_changed());
            }
            if let Some(i) = self.index(to) {
                // An answer proves the host is alive even before its load arrives.
                if self.seen[i].view.last_heard_ms.is_none() {
                    self.refresh(i, now, &mut fx);
                }
            }
            return fx;
        }
        match named {
            // Our term is stale: follow the newer master and catch up.
            Some(i) if reply.epoch > self.epoch && self.rank_of(i).is_some() => {
                self.give_in(now, i, reply.epoch, &mut fx);
            }
            // The host follows a lower-ranked master it heard recently, at our
            // term or a later one. (An older term named there is the master we
            // took over from because it did not answer our probe: the host
            // follows us once that master has been silent for its limit.)
            Some(i) if self.outranks_me(i) && reply.epoch >= self.epoch => {
                self.give_in(now, i, reply.epoch, &mut fx);
            }
            // A later term exists but the host cannot say whose: find out.
            None if reply.epoch > self.epoch => self.catch_up(now, &mut fx),
            _ => {}
        }
        fx
    }

    /// Results of the probe requested by [`Effect::Probe`] `id` (`None` = no answer).
    pub fn on_probe_results(
        &mut self,
        now: u64,
        id: u64,
        results: Vec<(String, Option<ProbeReply>)>,
    ) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        if id != self.probe_id {
            return fx;
        }
        let started = self.probing_since.take().unwrap_or(now);
        if self.role == Role::Master {
            return fx;
        }
        let syncing = self.role == Role::Syncing;
        let mut alive_before = false;
        // The newest term any answer names: (master, epoch).
        let mut newest: Option<(usize, u64)> = None;
        for (host, reply) in &results {
            let Some(reply) = reply else { continue };
            let Some(i) = self.index(host) else { continue };
            if i == self.me {
                continue;
            }
            self.max_epoch = self.max_epoch.max(reply.epoch);
            if self.outranks_me(i) {
                alive_before = true;
            }
            let claim = if reply.is_master {
                Some(i)
            } else {
                reply.master.as_deref().and_then(|m| self.index(m))
            };
            // Word of our own silent master from a third host counts only when that
            // host took an announcement from it later than our latest news of it (by
            // over half an interval; its answer came after `started`, so `started -
            // ago` is the earliest it can have been): then the master lives and only
            // our link to it is down (a partial partition), and taking over would
            // make two masters flap. Otherwise it is the same stale news we have — a
            // dead master's last announcement reached everyone at the same time.
            // (Announcements, not heartbeat replies: each slave's heartbeat has its
            // own phase, so a witness's last reply may be most of an interval newer
            // than our last word from a master that died in between.)
            let claim = match claim {
                Some(m)
                    if !syncing && !reply.is_master && Some(m) == self.master && m != self.me =>
                {
                    let known = self.master_announced.max(self.master_news);
                    let heard = reply
                        .master_heard_ago_ms
                        .map(|ago| started.saturating_sub(ago))
                        .filter(|&t| t > known + self.timing.exinterval_ms / 2);
                    if let Some(t) = heard {
                        self.master_news = t;
                    }
                    heard.map(|_| m)
                }
                c => c,
            };
            if let Some(m) = claim
                && self.rank_of(m).is_some()
                && newest.is_none_or(|(b, e)| {
                    reply.epoch > e || (reply.epoch == e && self.rank_of(m) < self.rank_of(b))
                })
            {
                newest = Some((m, reply.epoch));
            }
        }
        if let Some((m, e)) = newest
            && e >= self.max_epoch
        {
            if m == self.me {
                if syncing && self.resume_epoch == Some(e) {
                    // Nobody moved on while we were away: resume the term.
                    self.resume(now, e, &mut fx);
                    return fx;
                }
            } else if syncing
                || self.outranks_me(m)
                || e > self.epoch
                || self.master.is_none()
                || self.master.is_some_and(|c| !self.outranks_me(c) && c != m)
            {
                self.role = Role::Slave;
                self.resume_epoch = None;
                self.set_master(now, Some(m), e, &mut fx);
                self.last_contact = now;
                return fx;
            }
        }
        self.resume_epoch = None;
        if alive_before || self.rank().is_none() {
            // A better-placed host lives (it leads or will take over itself),
            // or we may never lead: wait and look again later.
            if syncing {
                self.role = Role::Slave;
            }
            self.last_contact = now;
        } else {
            self.become_master(now, &mut fx);
        }
        fx
    }

    /// This host's own load and static information (the sampler's output).
    pub fn set_local(&mut self, now: u64, load: LoadVector, info: HostInfo) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.observe(now, &mut fx);
        self.local_load = load.clone();
        self.local_info = Some(info.clone());
        let me = self.me;
        if let Some(h) = self.seen.get_mut(me) {
            h.view.load = Some(load);
            h.view.info = Some(info);
            h.view.last_heard_ms = Some(now);
            self.version += 1;
            h.changed = self.version;
        }
        if self.role == Role::Master {
            self.refresh(me, now, &mut fx);
        }
        fx
    }
}
