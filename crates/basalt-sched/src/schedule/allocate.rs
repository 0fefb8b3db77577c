//! Choosing hosts among the candidates of a pass: slots, `-n min,max`, span[].

use super::fit::Cand;

/// span[] of a resource requirement: Some(None) = span[hosts=1] (all slots on one
/// host), Some(Some(n)) = span[ptile=n]. Public for the fuzz checks (`fuzz/src/resreq.rs`).
pub fn span_of(res_req: &str) -> Option<Option<u32>> {
    let p = res_req.find("span[")?;
    let rest = &res_req[p + 5..];
    let body = &rest[..rest.find(']')?];
    for part in body.split([':', ',', ' ']) {
        if let Some(v) = part.trim().strip_prefix("hosts=")
            && v.trim() == "1"
        {
            return Some(None);
        }
        if let Some(v) = part.trim().strip_prefix("ptile=")
            && let Ok(n) = v.trim().parse::<u32>()
            && n > 0
        {
            return Some(Some(n));
        }
    }
    None
}

/// Choose hosts for a job of `min` slots that takes up to `max` (`bsub -n min,max`) from
/// candidates (free, load, rank, name), best first: as many slots as are free up to
/// `max`, at least `min` (None when `min` do not fit), within span[].
pub(crate) fn allocate<'a, I>(
    cands: I,
    min: u32,
    max: u32,
    span: Option<Option<u32>>,
) -> Option<Vec<usize>>
where
    I: Iterator<Item = &'a Cand> + Clone,
{
    let max = max.max(min);
    match span {
        // The candidate with the most free slots comes first.
        Some(None) => { cands }
            .find(|c| c.0 >= min)
            .map(|c| vec![c.3; c.0.min(max) as usize]),
        Some(Some(ptile)) => {
            // ptile slots on each host, the remainder on the last one.
            let fill = |target: u32| {
                let mut out = Vec::new();
                for c in cands.clone() {
                    if out.len() as u32 >= target {
                        break;
                    }
                    let take = ptile.min(target - out.len() as u32);
                    if c.0 >= take {
                        out.extend(std::iter::repeat_n(c.3, take as usize));
                    }
                }
                out
            };
            let most = fill(max);
            if most.len() as u32 >= min {
                return Some(most);
            }
            // Aiming at max can skip a host whose few free slots complete min.
            let least = fill(min);
            (least.len() as u32 == min).then_some(least)
        }
        None => {
            let mut out = Vec::new();
            for c in cands {
                let take = c.0.min(max - out.len() as u32);
                out.extend(std::iter::repeat_n(c.3, take as usize));
                if out.len() as u32 == max {
                    break;
                }
            }
            (out.len() as u32 >= min).then_some(out)
        }
    }
}

/// same[] of a resource requirement: the resources whose value every host of the job
/// shares (`same[type:model]`).
pub fn same_of(res_req: &str) -> Vec<String> {
    let (_, other) = basalt_config::resreq::sections(res_req);
    other
        .iter()
        .filter(|(k, _)| k == "same")
        .flat_map(|(_, body)| {
            body.split([':', ',', ' '])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A host's values of the same[] resources `names`: a string, a number, or whether the
/// host has a boolean resource.
pub(crate) fn values_for_same(h: &crate::Host, names: &[String]) -> Vec<String> {
    let v = super::select::values_of(h);
    names
        .iter()
        .map(|name| {
            v.strings
                .get(name)
                .cloned()
                .or_else(|| {
                    v.numbers
                        .get(&basalt_config::select::canonical(name))
                        .map(f64::to_string)
                })
                .unwrap_or_else(|| v.booleans.contains(name).to_string())
        })
        .collect()
}

/// [`allocate`] within one group of hosts that share the values `key` gives each host
/// (same[]): the groups are tried in the order of their best candidate.
pub(crate) fn allocate_same<'a, I>(
    cands: I,
    min: u32,
    max: u32,
    span: Option<Option<u32>>,
    key: &dyn Fn(usize) -> Vec<String>,
) -> Option<Vec<usize>>
where
    I: Iterator<Item = &'a Cand>,
{
    let mut groups: Vec<(Vec<String>, Vec<&Cand>)> = Vec::new();
    for c in cands {
        let k = key(c.3);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(c),
            None => groups.push((k, vec![c])),
        }
    }
    groups
        .iter()
        .find_map(|(_, g)| allocate(g.iter().copied(), min, max, span))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(free: u32, i: usize) -> Cand {
        (free, 0, i, i, [0; super::super::select::ORDER_KEYS], 0, 0)
    }

    #[test]
    fn same_keeps_the_hosts_of_one_group() {
        assert_eq!(
            same_of("select[a] same[type:model] span[ptile=1]"),
            vec!["type", "model"]
        );
        assert!(same_of("select[a]").is_empty());
        // Hosts 0 and 2 are of type A, 1 of type B; the job wants 3 slots, 1 per host.
        let cands = [cand(1, 0), cand(1, 1), cand(1, 2)];
        let key = |i: usize| vec![if i == 1 { "B" } else { "A" }.to_owned()];
        assert_eq!(allocate_same(cands.iter(), 3, 3, Some(Some(1)), &key), None);
        assert_eq!(
            allocate_same(cands.iter(), 2, 3, Some(Some(1)), &key),
            Some(vec![0, 2])
        );
        assert_eq!(
            allocate(cands.iter(), 3, 3, Some(Some(1))),
            Some(vec![0, 1, 2])
        );
    }
}
