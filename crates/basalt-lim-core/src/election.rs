//! The election internals (see the crate docs): ranks and epochs, catching up after a
//! stall, takeover timing and probes, giving in, and becoming master.

use crate::{Effect, HostStatus, LimCore, Role};

/// At most this many hosts that can never be master witness a probe (every master
/// candidate is probed too): a probe costs each target one request, so a cold boot
/// costs hosts × (candidates + this) requests, not hosts². A large cluster names its
/// candidates in `LSF_MASTER_LIST` (without it every server host is one).
pub const MAX_WITNESSES: usize = 16;

impl LimCore {
    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        self.hosts.index(name)
    }

    /// Host `i`'s rank among the candidates (None: never master; this host with
    /// `LIM_COMPUTE_ONLY`).
    pub(crate) fn rank_of(&self, i: usize) -> Option<usize> {
        if i == self.me && !self.me_candidate {
            None
        } else {
            self.hosts.rank[i]
        }
    }

    /// Host `i`'s name.
    pub(crate) fn name_of(&self, i: usize) -> &str {
        &self.hosts.entries[i].name
    }

    /// The epoch this LIM reports: its master's, or (catching up) the highest it knows.
    pub(crate) fn reported_epoch(&self) -> u64 {
        if self.role == Role::Syncing {
            self.max_epoch
        } else {
            self.epoch
        }
    }

    /// How long without input means this LIM was stopped: the time after
    /// which the others may have elected someone else.
    pub(crate) fn stall_after(&self) -> u64 {
        u64::from(self.timing.master_inactivity_limit) * self.my_report_ms()
    }

    /// Note an input at `now`; after a stall, forget the master and catch up.
    pub(crate) fn observe(&mut self, now: u64, fx: &mut Vec<Effect>) {
        if !self.started {
            return;
        }
        let last = self.last_input.unwrap_or(now);
        self.last_input = Some(last.max(now));
        let silent = now.saturating_sub(last);
        if silent >= self.stall_after() {
            let keeps = match self.role {
                Role::Slave => self.master.is_some(),
                // Its probe's answers are still to come: they are as good as new ones.
                Role::Syncing => self.probing_since.is_some(),
                Role::Master => false,
            };
            if self.rank().is_none() && keeps {
                // A host that can never lead decides nothing on what it missed: it
                // keeps its master (or waits for the answers to its probe) and gives
                // it a fresh takeover window (its next report, or the master's refusal
                // naming the new one, tells it the rest; a probe follows only if the
                // master stays silent). Forgetting the master would cost a probe of
                // every candidate and 16 witnesses — from every LIM of a starved
                // process of hollow hosts at once.
                fx.push(Effect::Stalled { silent_ms: silent });
                self.last_contact = now;
            } else {
                fx.push(Effect::CatchingUp { silent_ms: silent });
                self.catch_up(now, fx);
            }
        }
    }

    /// Forget the master (stepping down if we are it) and probe every other
    /// server host to learn the current term.
    pub(crate) fn catch_up(&mut self, now: u64, fx: &mut Vec<Effect>) {
        self.resume_epoch = match self.role {
            Role::Master => Some(self.epoch),
            Role::Syncing => self.resume_epoch,
            Role::Slave => None,
        };
        self.role = Role::Syncing;
        self.last_announce = None;
        self.last_contact = now;
        if self.master.is_some() {
            self.master = None;
            fx.push(self.master_changed());
        }
        self.start_probe(now, fx);
    }

    /// Whether host `i` may be this host's master: it is a candidate ranked
    /// before us (anyone who is a candidate, when we are not).
    pub(crate) fn outranks_me(&self, i: usize) -> bool {
        match (self.rank_of(i), self.rank()) {
            (Some(r), Some(mine)) => r < mine,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// How long a slave of our rank waits for a silent master.
    pub(crate) fn takeover_after(&self) -> u64 {
        let t = self.timing;
        let intervals = match self.rank() {
            Some(r) => {
                u64::from(t.master_inactivity_limit)
                    + u64::from(t.retry_limit) * (r.saturating_sub(1) as u64)
            }
            // A host that can never be master hears its master in the replies to
            // its reports: it waits as many of its (maybe longer) report intervals.
            None => return u64::from(t.master_inactivity_limit) * self.report_ms,
        };
        intervals * t.exinterval_ms
    }

    /// How often this host reports its load: every `EXINTERVAL` for a candidate,
    /// every [`LimCore::report_interval_ms`] for the others.
    pub(crate) fn my_report_ms(&self) -> u64 {
        if self.rank().is_some() {
            self.timing.exinterval_ms
        } else {
            self.report_ms
        }
    }

    /// How long a master heard from stays "fresh" against another host's
    /// announcement: our takeover limit — for a host that can never be master,
    /// `MASTER_INACTIVITY_LIMIT` intervals even when it reports less often (a
    /// candidate takes over after that silence and announces to every host at once;
    /// its probe's witnesses, announced to every interval, vouched that the master
    /// was silent, so such a host follows the new master at once rather than after
    /// its own longer limit).
    pub(crate) fn fresh_for(&self) -> u64 {
        if self.rank().is_some() {
            self.takeover_after()
        } else {
            u64::from(self.timing.master_inactivity_limit) * self.timing.exinterval_ms
        }
    }

    pub(crate) fn takeover_due(&self, now: u64) -> bool {
        let silent = now.saturating_sub(self.last_contact) >= self.takeover_after();
        // A candidate following a master ranked after itself takes over once in sync.
        if let Some(m) = self.master
            && m != self.me
            && self.rank().is_some()
            && !self.outranks_me(m)
        {
            let ex = self.timing.exinterval_ms;
            let in_sync = self.epoch >= self.max_epoch
                && self.master_heard > self.following_since
                && now.saturating_sub(self.following_since) >= self.stall_after()
                && now.saturating_sub(self.master_heard) <= 2 * ex;
            return silent || in_sync;
        }
        silent
    }

    /// Probe every other master candidate and — a candidate itself — up to
    /// [`MAX_WITNESSES`] other server hosts (all of them in a cluster that small): the
    /// candidates that would lead before us decide whether we may, the others witness
    /// whether our silent master still lives (catching up, all answers count); with
    /// nobody to probe, decide at once. The witnesses are those of `crate::witnesses`.
    pub(crate) fn start_probe(&mut self, now: u64, fx: &mut Vec<Effect>) {
        let mut chosen: Vec<usize> = (0..self.hosts.len())
            .filter(|&i| i != self.me && self.rank_of(i).is_some())
            .collect();
        // A host that can never lead probes only to learn the master, which is a
        // candidate: it has no takeover to witness (in a cluster of thousands, 16
        // witnesses each would be most of a cold boot's requests).
        if self.rank().is_some() {
            chosen.extend(self.hosts.witnesses_of(self.me));
        }
        chosen.sort_unstable();
        let targets: Vec<String> = chosen
            .into_iter()
            .map(|i| self.name_of(i).to_owned())
            .collect();
        self.probe_id += 1;
        let id = self.probe_id;
        if targets.is_empty() {
            fx.extend(self.on_probe_results(now, id, Vec::new()));
        } else {
            self.probing_since = Some(now);
            fx.push(Effect::Probe { id, hosts: targets });
        }
    }

    /// Decide on an announcement from `from`; returns whether we follow it now.
    pub(crate) fn consider_master(
        &mut self,
        now: u64,
        from: &str,
        epoch: u64,
        fx: &mut Vec<Effect>,
    ) -> bool {
        let Some(i) = self.index(from) else {
            return false;
        };
        if i == self.me || self.rank_of(i).is_none() {
            return false;
        }
        if self.role == Role::Slave && Some(i) == self.master {
            // Our master (the reply tells it of any later epoch we know).
            self.last_contact = now;
            self.master_heard = now;
            self.master_announced = now;
            if epoch != self.epoch {
                self.epoch = epoch;
                fx.push(self.master_changed());
            }
            self.max_epoch = self.max_epoch.max(epoch);
            return true;
        }
        if epoch < self.max_epoch {
            // A stale term, whoever announces it.
            return false;
        }
        self.max_epoch = epoch;
        match self.role {
            Role::Master => {
                if epoch > self.epoch || (epoch == self.epoch && self.outranks_me(i)) {
                    self.give_in(now, i, epoch, fx);
                    true
                } else {
                    false
                }
            }
            Role::Syncing => {
                // The newest term we know of: that is catching up.
                self.give_in(now, i, epoch, fx);
                true
            }
            Role::Slave => {
                // Keep a current master that ranks before the announcer and
                // was heard recently — unless it has been silent ever since the
                // announcer's probe asked us about it (see `silent_since_probe`);
                // otherwise follow a later term, or the same term from a
                // better-ranked host.
                if let Some(m) = self.master
                    && m != self.me
                    && self.rank_of(m) < self.rank_of(i)
                    && now.saturating_sub(self.master_heard) < self.fresh_for()
                    && !self.silent_since_probe(i)
                {
                    return false;
                }
                let better = match self.master {
                    None => true,
                    Some(m) => {
                        epoch > self.epoch
                            || self.rank_of(i) < self.rank_of(m)
                            || now.saturating_sub(self.master_heard) >= self.fresh_for()
                    }
                };
                if better {
                    self.set_master(now, Some(i), epoch, fx);
                    self.last_contact = now;
                }
                better
            }
        }
    }

    /// Whether our master has been silent since host `i` last probed us. A host takes
    /// over only after its probe found the master silent — not answering it, and
    /// nobody it asked (us included) having heard the master later than it had — so
    /// when the master has not been heard since (not by us, nor by anyone whose probe
    /// answer we saw), `i`'s later term is the one to follow now rather than after
    /// our own, longer, limit. A master heard after that probe lives as far as we
    /// know: we keep it (the announcer may be cut off from it only).
    pub(crate) fn silent_since_probe(&self, i: usize) -> bool {
        let heard = self.master_heard.max(self.master_news);
        self.probed_me_at.get(&i).is_some_and(|&p| p > heard)
    }

    pub(crate) fn give_in(&mut self, now: u64, to: usize, epoch: u64, fx: &mut Vec<Effect>) {
        self.role = Role::Slave;
        self.resume_epoch = None;
        self.last_announce = None;
        self.max_epoch = self.max_epoch.max(epoch);
        self.set_master(now, Some(to), epoch, fx);
        self.last_contact = now;
    }

    /// Take the master role back for `epoch` after a stall nobody acted on.
    pub(crate) fn resume(&mut self, now: u64, epoch: u64, fx: &mut Vec<Effect>) {
        self.table(now);
        self.forget_probe();
        self.role = Role::Master;
        self.resume_epoch = None;
        self.epoch = epoch;
        self.master = Some(self.me);
        fx.push(self.master_changed());
        self.announce(now, true, fx);
        self.refresh_all(now, fx);
    }

    /// Ignore the results of the probe in flight.
    pub(crate) fn forget_probe(&mut self) {
        self.probe_id += 1;
        self.probing_since = None;
    }

    pub(crate) fn become_master(&mut self, now: u64, fx: &mut Vec<Effect>) {
        self.forget_probe();
        self.role = Role::Master;
        self.resume_epoch = None;
        self.epoch = self.max_epoch + 1;
        self.max_epoch = self.epoch;
        self.master = Some(self.me);
        self.became_master = now;
        // Whatever we knew of other hosts (as master before) is stale: start afresh.
        self.table(now);
        self.version += 1;
        for (i, h) in self.seen.iter_mut().enumerate() {
            h.changed = self.version;
            if i != self.me {
                h.view.load = None;
                h.view.last_heard_ms = None;
                h.view.busy.clear();
                h.view.status = HostStatus::Unknown;
            }
        }
        fx.push(self.master_changed());
        self.announce(now, true, fx);
        self.refresh_all(now, fx);
    }

    pub(crate) fn set_master(
        &mut self,
        now: u64,
        master: Option<usize>,
        epoch: u64,
        fx: &mut Vec<Effect>,
    ) {
        let changed = master != self.master || epoch != self.epoch;
        let new_host = master != self.master;
        self.master = master;
        self.epoch = epoch;
        if changed {
            self.following_since = now;
        }
        if new_host {
            // A probe sent under the previous master decides nothing now.
            self.forget_probe();
        }
        if new_host {
            self.master_heard = now;
            self.master_announced = now;
            self.master_news = now;
        }
        if changed {
            fx.push(self.master_changed());
        }
        if new_host
            && let Some(m) = master
            && m != self.me
        {
            // Report to the new master at once so its table fills quickly — a host
            // that reports less often than every interval at its own phase of its
            // report interval (by its place in the file), so that a takeover
            // announced to every host at once does not bring all their reports in
            // the same tick.
            let every = self.my_report_ms();
            let ex = self.timing.exinterval_ms;
            let phase = (self.me as u64 % (every / ex).max(1)) * ex;
            if phase == 0 {
                self.heartbeat(now, m, fx);
            } else {
                self.last_heartbeat = Some((now + phase).saturating_sub(every));
            }
        }
    }

    pub(crate) fn master_changed(&self) -> Effect {
        Effect::MasterChanged {
            master: self.master().map(str::to_owned),
            epoch: self.epoch,
            me_is_master: self.is_master(),
        }
    }

    pub(crate) fn heartbeat(&mut self, now: u64, to: usize, fx: &mut Vec<Effect>) {
        let Some(info) = self.local_info.clone() else {
            // Nothing sampled yet: the first sample triggers nothing, the next tick sends.
            return;
        };
        self.last_heartbeat = Some(now);
        fx.push(Effect::SendHeartbeat {
            to: self.name_of(to).to_owned(),
            load: Box::new(self.local_load.clone()),
            info: Box::new(info),
            locked: self.is_locked(now),
        });
    }

    /// Announce mastership: to every server host when `all` (a new term), else to
    /// the candidates and their witnesses and to this tick's share of the other
    /// hosts (each hears it every [`crate::FAR_ANNOUNCE_REPORTS`] report intervals;
    /// every tick when they report every interval).
    pub(crate) fn announce(&mut self, now: u64, all: bool, fx: &mut Vec<Effect>) {
        self.last_announce = Some(now);
        let ex = self.timing.exinterval_ms;
        let spread = if self.report_ms > ex {
            crate::FAR_ANNOUNCE_REPORTS * self.report_ms / ex
        } else {
            1
        };
        let round = self.announce_round % spread;
        self.announce_round += 1;
        let hosts = &self.hosts;
        let to: Vec<String> = (0..hosts.len())
            .filter(|&i| {
                i != self.me
                    && hosts.entries[i].server
                    && (all || hosts.near[i] || spread == 1 || i as u64 % spread == round)
            })
            .map(|i| hosts.entries[i].name.clone())
            .collect();
        if !to.is_empty() {
            fx.push(Effect::Announce {
                to,
                epoch: self.epoch,
            });
        }
    }
}
