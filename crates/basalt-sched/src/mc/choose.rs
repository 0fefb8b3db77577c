//! Phase II's choice of a remote receive-jobs queue ([`choose`]), and the Boolean
//! resource terms MC_PLUGIN_REMOTE_RESOURCE checks against a remote queue's hosts
//! ([`remote_fits`]). Pure functions of what the remote clusters reported.

use super::{Policy, RemoteQueue};

/// A candidate of Phase II: a remote queue with room.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate<'a> {
    pub cluster: &'a str,
    pub queue: &'a RemoteQueue,
    /// Its room, less the jobs this pass already sent it.
    pub room: u32,
}

/// Phase II (seed 004): the candidate to forward a job with resource requirement
/// `res_req` to, or None. Candidates (queues with room) are taken in their SNDJOBS_TO
/// order; by default the one with the most room comes first. With
/// MC_PLUGIN_REMOTE_RESOURCE (or MC_PLUGIN_SCHEDULE_ENHANCE) a queue whose hosts do not
/// satisfy the job's `type==`, `same[type]` and `defined()` terms is not suitable, and
/// the next one is considered. MC_PLUGIN_SCHEDULE_ENHANCE orders by available slots
/// (RESOURCE_ONLY: free ones; COUNT_PREEMPTABLE: free and preemptable ones), after the
/// queue priority (HIGH_QUEUE_PRIORITY), the preemptable slots
/// (PREEMPTABLE_QUEUE_PRIORITY) and the pending workload (PENDING_WORKLOAD, least first)
/// when those are asked for.
pub fn choose(cands: &[Candidate<'_>], res_req: &str, policy: Policy) -> Option<usize> {
    let check_resources = policy.remote_resource || policy.enhance.is_some();
    let mut order: Vec<usize> = (0..cands.len()).filter(|&i| cands[i].room > 0).collect();
    // (A stable sort: ties keep the SNDJOBS_TO order.)
    match policy.enhance {
        None => order.sort_by_key(|&i| std::cmp::Reverse(cands[i].room)),
        Some(e) => order.sort_by(|&a, &b| {
            let (qa, qb) = (cands[a].queue, cands[b].queue);
            let avail = |q: &RemoteQueue| {
                if e.count_preemptable {
                    q.free_slots.saturating_add(q.preemptable_slots)
                } else {
                    q.free_slots
                }
            };
            let mut o = std::cmp::Ordering::Equal;
            if e.high_queue_priority {
                o = o.then(qb.priority.cmp(&qa.priority));
            }
            if e.preemptable_queue_priority {
                o = o.then(qb.preemptable_slots.cmp(&qa.preemptable_slots));
            }
            if e.pending_workload {
                o = o.then(qa.pending_slots.cmp(&qb.pending_slots));
            }
            o.then(avail(qb).cmp(&avail(qa)))
                .then(cands[b].room.cmp(&cands[a].room))
        }),
    }
    order
        .into_iter()
        .find(|&i| !check_resources || remote_fits(res_req, cands[i].queue))
}

/// Do the remote queue's hosts satisfy the Boolean terms MC_PLUGIN_REMOTE_RESOURCE
/// supports: `type==name` (`type=name`, `type!=name`), `defined(name)` (and `!`, `&&`,
/// `||`, parentheses around them) in the select part, and `same[type]`? Other terms are
/// not checked (taken as satisfied): the remote cluster decides them.
pub fn remote_fits(res_req: &str, q: &RemoteQueue) -> bool {
    let (select, other) = basalt_config::resreq::sections(res_req);
    if other.iter().any(|(k, b)| k == "same" && b.trim() == "type")
        && q.hosts.iter().all(|(t, _)| t.is_empty())
    {
        return false;
    }
    if select.is_empty() {
        return !q.hosts.is_empty();
    }
    let text = select.join(" && ");
    let Some(expr) = bool_expr::parse(&text) else {
        // Not something these terms make up: the remote cluster decides.
        return true;
    };
    q.hosts.iter().any(|(ty, res)| expr.eval(ty, res))
}

/// A tiny parser of select expressions for [`remote_fits`]: the supported terms, and
/// anything else as "true".
mod bool_expr {
    #[derive(Debug)]
    pub(super) enum E {
        Type(bool, String),
        Defined(String),
        Other,
        Not(Box<E>),
        And(Box<E>, Box<E>),
        Or(Box<E>, Box<E>),
    }

    impl E {
        pub(super) fn eval(&self, ty: &str, res: &[String]) -> bool {
            match self {
                E::Type(eq, n) => (ty == n || n == "any") == *eq,
                E::Defined(n) => res.iter().any(|r| r == n),
                E::Other => true,
                // "not (something unchecked)" stays unchecked.
                E::Not(e) => matches!(**e, E::Other) || !e.eval(ty, res),
                E::And(a, b) => a.eval(ty, res) && b.eval(ty, res),
                E::Or(a, b) => a.eval(ty, res) || b.eval(ty, res),
            }
        }
    }

    fn tokens(s: &str) -> Vec<String> {
        let mut out = Vec::new();
        let b: Vec<char> = s.chars().collect();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c.is_whitespace() {
                i += 1;
            } else if "()".contains(c) {
                out.push(c.to_string());
                i += 1;
            } else if i + 1 < b.len()
                && ["&&", "||", "==", "!=", ">=", "<="].contains(&&*format!("{c}{}", b[i + 1]))
            {
                out.push(format!("{c}{}", b[i + 1]));
                i += 2;
            } else if "!=<>".contains(c) {
                out.push(c.to_string());
                i += 1;
            } else {
                let start = i;
                while i < b.len() && !b[i].is_whitespace() && !"()&|=!<>".contains(b[i]) {
                    i += 1;
                }
                out.push(b[start..i].iter().collect());
            }
        }
        out
    }

    pub(super) fn parse(s: &str) -> Option<E> {
        let toks = tokens(s);
        let mut p = P { t: &toks, i: 0 };
        let e = p.or()?;
        (p.i == toks.len()).then_some(e)
    }

    struct P<'a> {
        t: &'a [String],
        i: usize,
    }

    impl P<'_> {
        fn peek(&self) -> Option<&str> {
            self.t.get(self.i).map(String::as_str)
        }
        fn next(&mut self) -> Option<&str> {
            let t = self.t.get(self.i).map(String::as_str);
            self.i += 1;
            t
        }
        fn or(&mut self) -> Option<E> {
            let mut e = self.and()?;
            while self.peek() == Some("||") {
                self.i += 1;
                e = E::Or(Box::new(e), Box::new(self.and()?));
            }
            Some(e)
        }
        fn and(&mut self) -> Option<E> {
            let mut e = self.unary()?;
            while self.peek() == Some("&&") {
                self.i += 1;
                e = E::And(Box::new(e), Box::new(self.unary()?));
            }
            Some(e)
        }
        fn unary(&mut self) -> Option<E> {
            match self.peek()? {
                "!" => {
                    self.i += 1;
                    Some(E::Not(Box::new(self.unary()?)))
                }
                "(" => {
                    self.i += 1;
                    let e = self.or()?;
                    (self.next()? == ")").then_some(e)
                }
                _ => self.atom(),
            }
        }
        fn atom(&mut self) -> Option<E> {
            let w = self.next()?.to_owned();
            if w == "defined" {
                if self.next()? != "(" {
                    return None;
                }
                let n = self.next()?.to_owned();
                return (self.next()? == ")").then_some(E::Defined(n));
            }
            match self.peek() {
                Some(op @ ("==" | "=" | "!=" | ">" | "<" | ">=" | "<=")) => {
                    let op = op.to_owned();
                    self.i += 1;
                    let v = self.next()?.to_owned();
                    if w == "type" && (op == "==" || op == "=" || op == "!=") {
                        Some(E::Type(op != "!=", v))
                    } else {
                        Some(E::Other)
                    }
                }
                _ => Some(E::Other),
            }
        }
    }
}
