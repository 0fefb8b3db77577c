//! A shape's candidate hosts in the order a placement reads them, kept cheaply: only
//! the best few are sorted when a shape is evaluated.

use super::fit::CandKey;

/// A shape's candidate hosts, best first ([`super::fit::cand_order`]). A pass mostly
/// places a job on its few best hosts, so only the best [`Cands::PREFIX`] are sorted
/// when a shape is evaluated (a selection, O(hosts)); the others, all worse, are sorted
/// (once, until the next change) when an iteration goes past them. A placement's
/// re-evaluated hosts are taken out and put back in place; when placements have used
/// the sorted prefix up, the next one is twice as long, so that a pass placing many jobs
/// of one shape costs no more than one full sort.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cands {
    /// `v[..sorted]` in order; every later entry is worse than all of them.
    v: Vec<CandKey>,
    sorted: usize,
    /// How long the next sorted prefix is.
    want: usize,
    /// `v[sorted..]` in order, once an iteration needed it (reset by every change).
    tail: std::cell::OnceCell<Vec<CandKey>>,
}

impl Cands {
    /// How many of the best candidates are kept sorted at first.
    pub(crate) const PREFIX: usize = 32;

    /// The candidates of `v`, in any order.
    pub(crate) fn from_unsorted(v: Vec<CandKey>) -> Cands {
        Cands::with_prefix(v, Self::PREFIX)
    }

    fn with_prefix(mut v: Vec<CandKey>, want: usize) -> Cands {
        let sorted = if v.len() > want {
            v.select_nth_unstable(want - 1);
            v[..want].sort_unstable();
            want
        } else {
            v.sort_unstable();
            v.len()
        };
        Cands {
            v,
            sorted,
            want,
            tail: std::cell::OnceCell::new(),
        }
    }

    pub(crate) fn insert(&mut self, c: CandKey) {
        self.tail.take();
        let in_prefix =
            self.sorted == self.v.len() || self.sorted > 0 && c < self.v[self.sorted - 1];
        if in_prefix {
            let p = self.v[..self.sorted].partition_point(|x| *x < c);
            self.v.insert(p, c);
            self.sorted += 1;
        } else {
            self.v.push(c);
        }
    }

    pub(crate) fn remove(&mut self, c: &CandKey) {
        self.tail.take();
        if let Ok(p) = self.v[..self.sorted].binary_search(c) {
            self.v.remove(p);
            self.sorted -= 1;
            if self.sorted == 0 && !self.v.is_empty() {
                let want = self.want.max(Self::PREFIX).saturating_mul(2);
                *self = Cands::with_prefix(std::mem::take(&mut self.v), want);
            }
        } else if let Some(p) = self.v[self.sorted..].iter().position(|x| x == c) {
            self.v.swap_remove(self.sorted + p);
        }
    }

    /// Best first.
    pub(crate) fn iter(&self) -> CandIter<'_> {
        CandIter {
            head: self.v[..self.sorted].iter(),
            cands: self,
            rest: None,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    /// The entries after the sorted prefix, in order (sorted on first need).
    fn sorted_tail(&self) -> &[CandKey] {
        self.tail.get_or_init(|| {
            let mut t = self.v[self.sorted..].to_vec();
            t.sort_unstable();
            t
        })
    }
}

/// [`Cands::iter`]: the sorted prefix, then the rest, sorted when first reached.
#[derive(Clone)]
pub(crate) struct CandIter<'a> {
    head: std::slice::Iter<'a, CandKey>,
    cands: &'a Cands,
    rest: Option<std::slice::Iter<'a, CandKey>>,
}

impl<'a> Iterator for CandIter<'a> {
    type Item = &'a CandKey;

    fn next(&mut self) -> Option<&'a CandKey> {
        if let Some(c) = self.head.next() {
            return Some(c);
        }
        let cands = self.cands;
        self.rest
            .get_or_insert_with(|| cands.sorted_tail().iter())
            .next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(free: u32, i: usize) -> CandKey {
        CandKey((free, 0, 0, i, [0; super::super::select::ORDER_KEYS], 0, 1))
    }

    /// Whatever is inserted and removed, iteration gives the candidates in
    /// `cand_order`, as a sorted set of them would.
    #[test]
    fn candidates_iterate_in_order_through_inserts_and_removes() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [0usize, 1, 5, Cands::PREFIX, Cands::PREFIX + 1, 300] {
            let mut cur: Vec<CandKey> = (0..n).map(|i| cand((next() % 9) as u32, i)).collect();
            let mut c = Cands::from_unsorted(cur.clone());
            let mut model: std::collections::BTreeSet<CandKey> = cur.iter().copied().collect();
            for _ in 0..400 {
                if cur.is_empty() {
                    break;
                }
                let i = (next() % cur.len() as u64) as usize;
                c.remove(&cur[i]);
                model.remove(&cur[i]);
                cur[i] = cand((next() % 9) as u32, cur[i].0.3);
                c.insert(cur[i]);
                model.insert(cur[i]);
                assert!(c.iter().eq(model.iter()), "n = {n}");
                let k = (next() % 4) as usize;
                let mut it = c.iter();
                let _ = it.nth(k);
                assert!(it.clone().eq(model.iter().skip(k + 1)));
            }
            for x in &cur {
                c.remove(x);
            }
            assert!(c.is_empty());
        }
    }

    /// Placements taking the best host again and again (each put back with one slot
    /// less) use the sorted prefix up many times over; the order stays right.
    #[test]
    fn placements_that_use_the_prefix_up_keep_the_order() {
        let mut cur: Vec<CandKey> = (0..200).map(|i| cand(8, i)).collect();
        let mut c = Cands::from_unsorted(cur.clone());
        let mut model: std::collections::BTreeSet<CandKey> = cur.iter().copied().collect();
        for _ in 0..1000 {
            let Some(&best) = c.iter().next() else { break };
            assert_eq!(Some(&best), model.iter().next());
            let i = best.0.3;
            c.remove(&cur[i]);
            model.remove(&cur[i]);
            if cur[i].0.0 > 1 {
                cur[i] = cand(cur[i].0.0 - 1, i);
                c.insert(cur[i]);
                model.insert(cur[i]);
            }
        }
        assert!(c.iter().eq(model.iter()));
        assert!(c.want > Cands::PREFIX, "the prefix grew: {}", c.want);
    }
}
