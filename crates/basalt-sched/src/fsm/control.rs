//! The events of queues, hosts and terms: QUEUE_CTRL, HOST_CTRL, MBD_START, LOG_SWITCH
//! (see [`Sched::on_event`](super)).

use crate::{Event, Sched, Str};

impl Sched {
    /// QUEUE_CTRL: a queue opened, closed, activated or inactivated.
    pub(super) fn apply_queue_ctrl(&mut self, ev: &Event) {
        let Event::QueueCtrl {
            op, queue, message, ..
        } = ev
        else {
            return;
        };
        if let Some(q) = self.queue_mut(queue) {
            match op {
                1 => q.open = true,
                2 => q.open = false,
                3 => q.active = true,
                4 => q.active = false,
                _ => {}
            }
            q.message = message.clone();
        }
    }

    /// HOST_CTRL: a host opened or closed.
    pub(super) fn apply_host_ctrl(&mut self, ev: &Event) {
        let Event::HostCtrl {
            op, host, message, ..
        } = ev
        else {
            return;
        };
        if let Some(h) = self.host_mut(host) {
            match op {
                1 => h.closed_adm = false,
                2 => h.closed_adm = true,
                _ => {}
            }
            h.message = message.clone();
        }
    }

    /// MBD_START: a new term.
    pub(super) fn apply_mbd_start(&mut self, ev: &Event) {
        let Event::MbdStart {
            time,
            master,
            epoch,
            ..
        } = ev
        else {
            return;
        };
        // Each MBD_START is a new term (the log need not carry the number).
        self.epoch = (self.epoch + 1).max(*epoch);
        self.mbd_start = Some((*time, master.clone()));
    }

    /// LOG_SWITCH: what the new file carries replaces what was derived.
    pub(super) fn apply_log_switch(&mut self, ev: &Event) {
        let Event::LogSwitch {
            time,
            last_job_id,
            fairshare,
        } = ev
        else {
            return;
        };
        // The ids of jobs cleaned before the switch are never given out again.
        self.last_job_id = self.last_job_id.max(*last_job_id);
        // The fairshare history it carries replaces what the carried jobs' ends
        // gave (it counts them already).
        if !fairshare.is_empty() {
            self.fs_hist = fairshare
                .iter()
                .map(|(q, u, cpu, run)| {
                    let h = crate::fairshare::FsHist {
                        cpu_s: *cpu,
                        run_s: *run,
                        at: time.saturating_mul(1000),
                    };
                    ((Str::from(q.as_str()), Str::from(u.as_str())), h)
                })
                .collect();
        }
        self.num_remove_jobs = 0;
        // A switch carries only the cleaned jobs a dependency still names; the
        // rest are forgotten here, so the live core is what a replay of the new
        // file makes (and lsb.events does not grow with a week of cleaned jobs).
        let needed = self.gone_needed();
        self.gone.retain(|k, _| needed.contains(k));
        self.gone_order.retain(|(_, k)| needed.contains(k));
        // Tokens of jobs no longer known are not carried either.
        let tokens = std::mem::take(&mut self.tokens);
        self.tokens = tokens
            .into_iter()
            .filter(|(_, e)| self.id_known(e.id))
            .collect();
    }
}
