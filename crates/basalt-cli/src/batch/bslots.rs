//! `bslots [-l] [-n slots] [-W [hour:]minutes]`: the slots a backfill job could use now
//! and for how long (LSF 10.1's bslots). Free slots can take a job of any run time
//! (`UNLIMITED`); slots reserved for a parallel job that cannot start yet (lsb.queues
//! `SLOT_RESERVE`) can take a job of a `BACKFILL = Y` queue whose run limit ends before
//! that job's estimated start. Each line says how many slots are there for jobs of at
//! most that run time — the longer windows' slots count for the shorter ones too.
//! `-n` keeps the windows of at least that many slots, `-W` those at least that long;
//! `-l` a block per window with its hosts (`SLOTS:`, `RUNTIME:`, `HOSTS: n*host ...`);
//! `-R "select[...]"` only the hosts it selects. No window: `No backfill window exists at
//! this time`, or with `-n`/`-W`/`-R` `No backfill window meets the specified
//! requirements`, exit 255.
//!
//! Inputs: argv, `LSF_ENVDIR`; mbatchd's `Slots` answer. Outputs: stdout (the windows),
//! stderr (no window, errors), LSF's exit codes.

use super::opts::{Item, Spec};
use basalt_proto::mbatchd::{SlotWindow, SlotsRequest};
use std::collections::BTreeMap;
use std::process::ExitCode;

const USAGE: &str =
    "Usage: bslots [-h] [-V] [-l] [-n slots] [-R \"res_req\"] [-W [hour:]minutes]\n";

/// One window: this many slots (on these hosts) for jobs of at most `runtime` seconds
/// (None: any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub slots: u32,
    pub runtime: Option<i64>,
    pub hosts: Vec<(String, u32)>,
}

/// The windows from mbatchd's per-host slots, longest first (UNLIMITED, then by run
/// time descending), each counting the slots of the longer ones.
pub fn windows(per_host: &[SlotWindow]) -> Vec<Window> {
    // Run time in seconds (UNLIMITED as the longest), longest first -> host -> slots.
    let mut by_time: BTreeMap<std::cmp::Reverse<i64>, BTreeMap<String, u32>> = BTreeMap::new();
    for w in per_host {
        let rt = if w.runtime < 0 { i64::MAX } else { w.runtime };
        if rt == 0 || w.slots == 0 {
            continue;
        }
        *by_time
            .entry(std::cmp::Reverse(rt))
            .or_default()
            .entry(w.host.clone())
            .or_default() += w.slots;
    }
    let mut out = Vec::new();
    let mut hosts: BTreeMap<String, u32> = BTreeMap::new();
    for (std::cmp::Reverse(rt), these) in by_time {
        for (h, n) in these {
            *hosts.entry(h).or_default() += n;
        }
        out.push(Window {
            slots: hosts.values().sum(),
            runtime: (rt != i64::MAX).then_some(rt),
            hosts: hosts.iter().map(|(h, n)| (h.clone(), *n)).collect(),
        });
    }
    out
}

/// A run time as LSF's bslots writes it: `UNLIMITED`, `1 hours 30 minutes 0 seconds`,
/// `45 minutes 10 seconds` (workflow tools such as balsam read these words).
pub fn runtime_text(runtime: Option<i64>) -> String {
    let Some(secs) = runtime else {
        return "UNLIMITED".into();
    };
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    if h > 0 {
        format!("{h} hours {m} minutes {s} seconds")
    } else {
        format!("{m} minutes {s} seconds")
    }
}

/// The short format.
pub fn table(ws: &[Window]) -> String {
    let mut out = format!("{:<15}{}\n", "SLOTS", "RUNTIME");
    for w in ws {
        out.push_str(&format!("{:<15}{}\n", w.slots, runtime_text(w.runtime)));
    }
    out
}

/// The long format (`-l`).
pub fn long(ws: &[Window]) -> String {
    let mut out = String::new();
    for w in ws {
        let hosts: Vec<String> = w.hosts.iter().map(|(h, n)| format!("{n}*{h}")).collect();
        out.push_str(&format!(
            "SLOTS: {}\nRUNTIME: {}\nHOSTS: {}\n\n",
            w.slots,
            runtime_text(w.runtime),
            hosts.join(" ")
        ));
    }
    out
}

pub fn main(args: Vec<String>) -> ExitCode {
    let spec = Spec {
        flags: &["h", "V", "l"],
        valued: &["n", "W", "R"],
    };
    let items = match super::parse_args("bslots", &args, &spec, USAGE) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let mut long_format = false;
    let mut min_slots = 0u32;
    let mut min_runtime = 0i64;
    let mut res_req = String::new();
    let filtered = items
        .iter()
        .any(|it| matches!(it, Item::Opt(n, _) if n == "n" || n == "W" || n == "R"));
    for it in items {
        match it {
            Item::Opt(n, _) if n == "l" => long_format = true,
            Item::Opt(n, Some(v)) if n == "n" => match v.trim().parse::<u32>() {
                Ok(k) if k > 0 => min_slots = k,
                _ => {
                    eprintln!("{v}: Bad number of slots");
                    eprint!("{USAGE}");
                    return crate::fail();
                }
            },
            Item::Opt(n, Some(v)) if n == "W" => match super::bsub::values::parse_minutes(&v) {
                Some(s) => min_runtime = s,
                None => {
                    eprintln!("{v}: Bad RUNLIMIT specification");
                    eprint!("{USAGE}");
                    return crate::fail();
                }
            },
            // A select string as some tools pass it, quotes and all (`-R"select[x]"`).
            Item::Opt(n, Some(v)) if n == "R" => {
                let v = v.trim();
                res_req = v
                    .strip_prefix('"')
                    .and_then(|r| r.strip_suffix('"'))
                    .or_else(|| v.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')))
                    .unwrap_or(v)
                    .to_owned();
            }
            Item::Arg(a) => {
                eprintln!("bslots: unexpected argument {a}");
                eprint!("{USAGE}");
                return crate::fail();
            }
            Item::Opt(..) => {}
        }
    }
    let config = match super::load_config("bslots") {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::run(async move {
        let mut client = match super::connect_mbatchd(&config).await {
            Ok(c) => c,
            Err(e) => return super::connect_failed(&e),
        };
        let reply = match client.slots(SlotsRequest { res_req }).await {
            Ok(r) => r.into_inner(),
            Err(s) => {
                eprintln!("{}", super::status_text(&s));
                return crate::fail();
            }
        };
        let ws: Vec<Window> = windows(&reply.windows)
            .into_iter()
            .filter(|w| w.slots >= min_slots && w.runtime.is_none_or(|r| r >= min_runtime))
            .collect();
        if ws.is_empty() {
            // LSF's words; tools look for "No backfill window meets" when they asked
            // for something (balsam runs `bslots -R`).
            if filtered {
                eprintln!("No backfill window meets the specified requirements");
            } else {
                eprintln!("No backfill window exists at this time");
            }
            return crate::fail();
        } else if long_format {
            print!("{}", long(&ws));
        } else {
            print!("{}", table(&ws));
        }
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(host: &str, runtime: i64, slots: u32) -> SlotWindow {
        SlotWindow {
            host: host.into(),
            runtime,
            slots,
        }
    }

    #[test]
    fn windows_count_the_longer_ones_slots_in_lsfs_words() {
        let per_host = [
            w("hostA", -1, 1),
            w("hostB", 5400, 2),
            w("hostC", 2730, 1),
            w("hostC", 0, 4),
        ];
        let ws = windows(&per_host);
        assert_eq!(
            ws.iter().map(|w| (w.slots, w.runtime)).collect::<Vec<_>>(),
            vec![(1, None), (3, Some(5400)), (4, Some(2730))]
        );
        assert_eq!(
            table(&ws),
            "SLOTS          RUNTIME\n1              UNLIMITED\n\
             3              1 hours 30 minutes 0 seconds\n\
             4              45 minutes 30 seconds\n"
        );
        assert_eq!(
            long(&ws[1..2]),
            "SLOTS: 3\nRUNTIME: 1 hours 30 minutes 0 seconds\nHOSTS: 1*hostA 2*hostB\n\n"
        );
        assert!(windows(&[]).is_empty());
        assert_eq!(runtime_text(Some(7261)), "2 hours 1 minutes 1 seconds");
    }
}
