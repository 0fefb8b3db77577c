//! Choosing hosts among the candidates of a pass: slots, `-n min,max`, span[].

use super::fit::Cand;

/// span[] of a resource requirement (LSF 10.1's forms).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Span {
    /// `span[hosts=1]`: every slot on one host.
    OneHost,
    /// `span[ptile=n]`: n slots a host (the remainder on the last).
    Ptile(u32),
    /// `span[ptile='!']`, `span[ptile='!',HPPA:2,SGI:4]`, `span[ptile=SGI:4,LINUX:2]`:
    /// the tile of a host of a named type is its number; of another type the default
    /// (`'!'`: the host's slot count), and without a default such a host is not used.
    ByType {
        /// `'!'` was given: other types take their slot count.
        default_max: bool,
        types: Vec<(String, u32)>,
    },
    /// `span[hosts=-1]`: no span (the queue's is not used).
    Free,
}

impl Span {
    /// The tile of a host of type `host_type` with `max_slots` slots (None: the host is
    /// not used).
    pub fn tile(&self, host_type: Option<&str>, max_slots: Option<u32>) -> Option<u32> {
        match self {
            Span::Ptile(n) => Some(*n),
            Span::ByType { default_max, types } => match types
                .iter()
                .find(|(t, _)| host_type.is_some_and(|h| h.eq_ignore_ascii_case(t)))
            {
                Some((_, n)) => Some(*n),
                None if *default_max => Some(max_slots.unwrap_or(u32::MAX).max(1)),
                None => None,
            },
            Span::OneHost | Span::Free => None,
        }
    }
}

/// span[] of a resource requirement, if it has one. Public for the fuzz checks
/// (`fuzz/src/resreq.rs`).
pub fn span_of(res_req: &str) -> Option<Span> {
    let p = res_req.find("span[")?;
    let rest = &res_req[p + 5..];
    let body = &rest[..rest.find(']')?];
    // `hosts=N` and `ptile=...` are separated by ':' or blanks; ptile's own list by ','.
    let hosts = body
        .split([':', ' '])
        .find_map(|part| part.trim().strip_prefix("hosts="));
    match hosts.map(str::trim) {
        Some("1") => return Some(Span::OneHost),
        Some("-1") => return Some(Span::Free),
        _ => {}
    }
    let p = body.find("ptile=")?;
    let value = body[p + 6..].trim();
    if let Ok(n) = value.parse::<u32>() {
        return (n > 0).then_some(Span::Ptile(n));
    }
    let mut default_max = false;
    let mut types = Vec::new();
    for item in value.split(',') {
        let item = item.trim().trim_matches(|c| c == '\'' || c == '"');
        if item == "!" {
            default_max = true;
            continue;
        }
        let (t, n) = item.split_once(':')?;
        let n = n.trim().parse::<u32>().ok().filter(|n| *n > 0)?;
        types.push((t.trim().trim_matches('\'').to_owned(), n));
    }
    (default_max || !types.is_empty()).then_some(Span::ByType { default_max, types })
}

/// How a job's slots are laid over hosts: its span[] with each host's tile.
#[derive(Clone, Copy)]
pub(crate) enum Tile<'a> {
    /// Every slot on one host.
    OneHost,
    /// Each host's tile (None: the host is not used).
    Each(&'a dyn Fn(usize) -> Option<u32>),
}

impl<'a> Tile<'a> {
    /// How a job of `span` lays its slots out: None without a span, every slot on one
    /// host for `hosts=1`, else each host's tile from `each`.
    pub(crate) fn of(
        span: Option<&Span>,
        each: &'a dyn Fn(usize) -> Option<u32>,
    ) -> Option<Tile<'a>> {
        match span? {
            Span::OneHost => Some(Tile::OneHost),
            _ => Some(Tile::Each(each)),
        }
    }
}

/// Choose hosts for a job of `min` slots that takes up to `max` (`bsub -n min,max`) from
/// candidates (free, load, rank, name), best first: as many slots as are free up to
/// `max`, at least `min` (None when `min` do not fit), within span[].
pub(crate) fn allocate<'a, I>(
    cands: I,
    min: u32,
    max: u32,
    span: Option<Tile<'_>>,
) -> Option<Vec<usize>>
where
    I: Iterator<Item = &'a Cand> + Clone,
{
    let max = max.max(min);
    match span {
        // The candidate with the most free slots comes first.
        Some(Tile::OneHost) => { cands }
            .find(|c| c.0 >= min)
            .map(|c| vec![c.3; c.0.min(max) as usize]),
        Some(Tile::Each(tile)) => {
            // A tile of slots on each host, the remainder on the last one.
            let fill = |target: u32| {
                let mut out = Vec::new();
                for c in cands.clone() {
                    if out.len() as u32 >= target {
                        break;
                    }
                    let Some(t) = tile(c.3) else {
                        continue;
                    };
                    let take = t.min(target - out.len() as u32);
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
    span: Option<Tile<'_>>,
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
        let one = |_: usize| Some(1);
        let ptile1 = Some(Tile::Each(&one));
        assert_eq!(allocate_same(cands.iter(), 3, 3, ptile1, &key), None);
        assert_eq!(
            allocate_same(cands.iter(), 2, 3, ptile1, &key),
            Some(vec![0, 2])
        );
        assert_eq!(allocate(cands.iter(), 3, 3, ptile1), Some(vec![0, 1, 2]));
    }

    #[test]
    fn span_forms_of_lsf_10_1() {
        assert_eq!(span_of("span[hosts=1]"), Some(Span::OneHost));
        assert_eq!(span_of("select[a] span[hosts=-1]"), Some(Span::Free));
        assert_eq!(span_of("span[ptile=4]"), Some(Span::Ptile(4)));
        assert_eq!(span_of("span[ptile=0]"), None);
        assert_eq!(span_of("select[a]"), None);
        assert_eq!(
            span_of("span[ptile='!']"),
            Some(Span::ByType {
                default_max: true,
                types: vec![]
            })
        );
        let t = span_of("span[ptile='!',HPPA:2,SGI:4]").expect("span");
        assert_eq!(
            t,
            Span::ByType {
                default_max: true,
                types: vec![("HPPA".into(), 2), ("SGI".into(), 4)]
            }
        );
        assert_eq!(t.tile(Some("SGI"), Some(8)), Some(4));
        assert_eq!(t.tile(Some("LINUX"), Some(8)), Some(8));
        let only = span_of("span[ptile=SGI:4,LINUX:2]").expect("span");
        assert_eq!(only.tile(Some("LINUX"), Some(8)), Some(2));
        assert_eq!(only.tile(Some("HPPA"), Some(8)), None);
        assert_eq!(span_of("span[ptile=SGI:x]"), None);
    }

    /// Per host tiles: a host takes its own tile, a host without one is skipped.
    #[test]
    fn a_tile_per_host_lays_slots_out_by_host() {
        let cands = [cand(4, 0), cand(4, 1), cand(4, 2)];
        let tiles = |i: usize| match i {
            0 => Some(1),
            1 => None,
            _ => Some(3),
        };
        assert_eq!(
            allocate(cands.iter(), 4, 4, Some(Tile::Each(&tiles))),
            Some(vec![0, 2, 2, 2])
        );
        assert_eq!(allocate(cands.iter(), 5, 5, Some(Tile::Each(&tiles))), None);
    }
}
