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
