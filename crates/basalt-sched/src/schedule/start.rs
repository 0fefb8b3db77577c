//! Starting a job the pass placed: its JOB_START (logged first), its hosts' last
//! dispatch time, and the dispatch to its first host's sbatchd.

use crate::{Effect, Event, JobKey, Millis, Sched, secs};

impl Sched {
    /// Whether a scheduling pass could do something (cleared by [`Sched::schedule`]).
    pub fn needs_pass(&self) -> bool {
        self.dirty
    }

    /// Are as many start orders under way as lsf.conf allows
    /// (`LSB_MAX_JOB_DISPATCH_PER_SESSION`)? A pass then places no job.
    pub(crate) fn dispatch_full(&self) -> bool {
        self.in_flight.len() >= self.cfg.max_dispatch_in_flight
    }

    /// A start order's answer came (or it failed): one fewer under way; a pass that
    /// stopped at the bound is due again.
    pub(crate) fn dispatch_answered(&mut self, key: JobKey, attempt: u32) {
        self.in_flight.remove(&(key, attempt));
        if self.dispatch_capped && !self.dispatch_full() {
            self.dispatch_capped = false;
            self.dirty = true;
        }
    }

    pub(crate) fn start_job(&mut self, now: Millis, key: JobKey, alloc: Vec<String>) {
        let idx: Vec<usize> = alloc.iter().filter_map(|h| self.host_idx(h)).collect();
        self.start_job_at(now, key, alloc, &idx, String::new());
    }

    /// [`Sched::start_job`] with the hosts' indices known and the `rusage[]` alternative
    /// it reserves ([`alts::effective_text`]).
    pub(crate) fn start_job_at(
        &mut self,
        now: Millis,
        key: JobKey,
        alloc: Vec<String>,
        idx: &[usize],
        effective_res_req: String,
    ) {
        let first = alloc[0].clone();
        self.emit(Event::JobStart {
            time: secs(now),
            key,
            hosts: alloc,
            effective_res_req,
        });
        for &i in idx {
            if let Some(host) = self.hosts.get_mut(i) {
                host.last_dispatch = now;
            }
        }
        let attempt = self.jobs.get(&key).map_or(1, |j| j.attempt);
        self.in_flight.insert((key, attempt));
        self.preempt_wait.remove(&key);
        self.effects.push(Effect::Dispatch {
            key,
            attempt,
            host: first,
        });
    }
}
