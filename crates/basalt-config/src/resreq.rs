//! Merging several `bsub -R` strings (cli-contract.md §3.3): `select[]` clauses are
//! ANDed, `rusage[]` is merged per resource (a later value wins), every other section
//! (`order[] span[] same[] affinity[] cu[]`, ...) is taken from the last string that has it.
//! Text outside any section is select text (LSF's old syntax).

/// One `-R` string split into its sections.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Parts {
    select: Vec<String>,
    rusage: Vec<String>,
    /// Other sections in order of appearance: (keyword, body).
    other: Vec<(String, String)>,
}

const KNOWN: [&str; 8] = [
    "select", "order", "rusage", "span", "same", "affinity", "cu", "filter",
];

/// Split `s` into sections. A section is a known keyword immediately followed by `[`,
/// closed by the matching `]`.
fn split(s: &str) -> Parts {
    let mut parts = Parts::default();
    let mut outside = String::new();
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let kw = KNOWN.iter().find(|k| {
            s[i..].starts_with(**k)
                && bytes.get(i + k.len()) == Some(&b'[')
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
        });
        if let Some(k) = kw {
            let open = i + k.len();
            let mut depth = 0usize;
            let mut close = None;
            for (j, b) in bytes.iter().enumerate().skip(open) {
                match b {
                    b'[' => depth += 1,
                    b']' => {
                        depth -= 1;
                        if depth == 0 {
                            close = Some(j);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let end = close.unwrap_or(bytes.len());
            let body = s[open + 1..end].trim().to_owned();
            match *k {
                "select" => parts.select.push(body),
                "rusage" => parts.rusage.push(body),
                other => parts.other.push((other.to_owned(), body)),
            }
            i = (end + 1).min(bytes.len());
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        outside.push(ch);
        i += ch.len_utf8();
    }
    let outside = outside.trim();
    if !outside.is_empty() {
        parts.select.insert(0, outside.to_owned());
    }
    parts
}

/// Is every `[` of a resource requirement closed by a `]`, and every `]` closing one?
/// (`select[bigmem` is LSF's "Bad resource requirement syntax", not a section that runs
/// to the end of the string.)
pub fn brackets_closed(s: &str) -> bool {
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '[' => depth += 1,
            ']' => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            _ => {}
        }
    }
    depth == 0
}

/// The select parts of a resource requirement (`select[]` bodies and text outside any
/// section, in order) and its other sections as (keyword, body).
pub fn sections(s: &str) -> (Vec<String>, Vec<(String, String)>) {
    let mut p = split(s);
    p.select.retain(|b| !b.is_empty());
    let mut other: Vec<(String, String)> = p
        .rusage
        .into_iter()
        .map(|b| ("rusage".to_owned(), b))
        .collect();
    other.extend(p.other);
    (p.select, other)
}

/// Merge rusage bodies per resource name (`mem=100:swp=10`, `,`-separated alternatives
/// are kept as they are). Later values win; order of first appearance is kept.
fn merge_rusage(bodies: &[String]) -> String {
    let mut items: Vec<(String, String)> = Vec::new();
    for body in bodies {
        for piece in body.split(':').map(str::trim).filter(|p| !p.is_empty()) {
            let key = piece
                .split_once('=')
                .map_or(piece, |(k, _)| k)
                .trim()
                .to_owned();
            match items.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = piece.to_owned(),
                None => items.push((key, piece.to_owned())),
            }
        }
    }
    items
        .into_iter()
        .map(|(_, v)| v)
        .collect::<Vec<_>>()
        .join(":")
}

/// Merge several `-R` strings into one. A single string is passed through unchanged.
pub fn merge(reqs: &[String]) -> String {
    let reqs: Vec<&String> = reqs.iter().filter(|r| !r.trim().is_empty()).collect();
    match reqs.len() {
        0 => return String::new(),
        1 => return reqs[0].trim().to_owned(),
        _ => {}
    }
    let mut select: Vec<String> = Vec::new();
    let mut rusage: Vec<String> = Vec::new();
    let mut other: Vec<(String, String)> = Vec::new();
    for r in reqs {
        let p = split(r);
        select.extend(p.select.into_iter().filter(|s| !s.is_empty()));
        rusage.extend(p.rusage);
        for (k, v) in p.other {
            match other.iter_mut().find(|(ok, _)| *ok == k) {
                Some(slot) => slot.1 = v,
                None => other.push((k, v)),
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    select.dedup();
    match select.len() {
        0 => {}
        1 => out.push(format!("select[{}]", select[0])),
        _ => out.push(format!(
            "select[{}]",
            select
                .iter()
                .map(|s| format!("({s})"))
                .collect::<Vec<_>>()
                .join(" && ")
        )),
    }
    if let Some(o) = other.iter().find(|(k, _)| k == "order") {
        out.push(format!("order[{}]", o.1));
    }
    if rusage.iter().any(|b| b.contains("||")) {
        // `||` alternatives are not merged item by item: the last section with `||` is
        // kept whole (a later -R's alternatives replace an earlier one's), the sections
        // without are merged into one, each where its kind first appeared;
        // [`rusage_alternatives`] reads the plain one into each alternative.
        let (alts, plain): (Vec<&String>, Vec<&String>) =
            rusage.iter().partition(|b| b.contains("||"));
        let first_alt = rusage.iter().position(|b| b.contains("||")).unwrap_or(0);
        let first_plain = rusage.iter().position(|b| !b.contains("||"));
        let alt = alts.last().map(|b| format!("rusage[{b}]"));
        let plain = (!plain.is_empty()).then(|| {
            let bodies: Vec<String> = plain.into_iter().cloned().collect();
            format!("rusage[{}]", merge_rusage(&bodies))
        });
        match first_plain {
            Some(p) if p < first_alt => out.extend(plain.into_iter().chain(alt)),
            _ => out.extend(alt.into_iter().chain(plain)),
        }
    } else if !rusage.is_empty() {
        out.push(format!("rusage[{}]", merge_rusage(&rusage)));
    }
    for (k, v) in other.iter().filter(|(k, _)| k != "order") {
        out.push(format!("{k}[{v}]"));
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_must_be_closed_and_closed_once() {
        for ok in [
            "",
            "mem>1",
            "select[bigmem]",
            "select[a] rusage[mem=1||swp=2] span[ptile='!',SGI:4]",
        ] {
            assert!(brackets_closed(ok), "{ok}");
        }
        for bad in [
            "select[bigmem",
            "select[a]]",
            "a]",
            "rusage[mem=1 span[hosts=1]",
        ] {
            assert!(!brackets_closed(bad), "{bad}");
        }
    }

    fn m(v: &[&str]) -> String {
        merge(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    /// `||` sections: the last one is kept whole, plain ones merged; merging a merged
    /// requirement with itself changes nothing (found by the resreq fuzz target).
    #[test]
    fn alternatives_merge_idempotently() {
        let once = m(&["select[a]", "rusage[tmp=1||0]"]);
        assert_eq!(once, "select[a] rusage[tmp=1||0]");
        assert_eq!(m(&[once.as_str(), once.as_str()]), once);
        assert_eq!(
            m(&[
                "rusage[mem=1 || mem=2]",
                "rusage[swp=3]",
                "rusage[mem=4 || mem=5]"
            ]),
            "rusage[mem=4 || mem=5] rusage[swp=3]"
        );
        let mixed = "rusage[swp=3] rusage[mem=4 || mem=5]";
        assert_eq!(m(&[mixed, mixed]), mixed);
    }

    #[test]
    fn single_passes_through() {
        assert_eq!(
            m(&["select[mem>=8192MB] rusage[mem=8192MB]"]),
            "select[mem>=8192MB] rusage[mem=8192MB]"
        );
        assert_eq!(m(&["rusage[mem=5]"]), "rusage[mem=5]");
        assert_eq!(m(&[]), "");
    }

    #[test]
    fn several_are_merged() {
        assert_eq!(
            m(&["span[hosts=1]", "rusage[mem=100:swp=10]", "rusage[mem=200]"]),
            "rusage[mem=200:swp=10] span[hosts=1]"
        );
        assert_eq!(
            m(&[
                "select[type==any]",
                "select[mem>100] order[r1m]",
                "span[ptile=2]",
                "span[hosts=1]"
            ]),
            "select[(type==any) && (mem>100)] order[r1m] span[hosts=1]"
        );
        assert_eq!(
            m(&["mem>100", "affinity[core(2)]"]),
            "select[mem>100] affinity[core(2)]"
        );
        assert_eq!(
            m(&["select[hname!='h']", "rusage[tmp=10]"]),
            "select[hname!='h'] rusage[tmp=10]"
        );
    }
}

/// The `order[]` of a requirement (the last one when there are several): each resource
/// named, with `true` when it is reversed (`-name`); `!` (LSF's re-sort for parallel
/// jobs) is accepted and has no further effect. None when there is no `order[]`; an
/// error when a name is not one.
pub fn order_keys(s: &str) -> Result<Option<Vec<(String, bool)>>, String> {
    let (_, other) = sections(s);
    let Some((_, body)) = other.iter().rev().find(|(k, _)| k == "order") else {
        return Ok(None);
    };
    let mut keys = Vec::new();
    for piece in body.split([':', ',']).map(str::trim) {
        let piece = piece.strip_prefix('!').unwrap_or(piece).trim();
        if piece.is_empty() {
            continue;
        }
        let (name, reversed) = match piece.strip_prefix('-') {
            Some(n) => (n.trim(), true),
            None => (piece, false),
        };
        if name.is_empty()
            || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            || name.as_bytes()[0].is_ascii_digit()
        {
            return Err(format!("bad order[] item {piece:?}"));
        }
        keys.push((name.to_owned(), reversed));
    }
    Ok(Some(keys))
}

/// A requirement's `rusage[]`: what a job reserves on its execution host.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rusage {
    /// (resource, amount); `mem`, `swp` and `tmp` in MB (a value without a unit is in
    /// `LSF_UNIT_FOR_LIMITS`, see [`rusage_of`]).
    pub amounts: Vec<(String, f64)>,
    /// `duration=`: minutes the reservation lasts (None: the whole job).
    pub duration_min: Option<f64>,
    /// `decay=1`: the amount decreases linearly over the duration.
    pub decay: bool,
}

/// The `rusage[]` of a requirement (its sections merged; of `||` alternatives the first,
/// see [`rusage_alternatives`]). `unit_mb` is the size of `LSF_UNIT_FOR_LIMITS` in MB,
/// the unit of a bare `mem`, `swp` or `tmp` value (`8192MB`, `4G` carry their own). None
/// without `rusage[]`; an error for an item that is not `name=number`.
pub fn rusage_of(s: &str, unit_mb: f64) -> Result<Option<Rusage>, String> {
    Ok(rusage_alternatives(s, unit_mb)?.and_then(|v| v.into_iter().next()))
}

/// The alternatives of a requirement's `rusage[]`, in order (LSF 10.1's
/// `rusage[mem=20000 || mem=10000:swp=10000]`; one without `||`). Each alternative has
/// its own `duration=` and `decay=`. Several `rusage[]` sections are merged per resource
/// (a later value wins); a section without `||` is merged into every alternative of the
/// others; two sections with `||` are an error, as is an empty or malformed alternative.
/// None without `rusage[]`.
pub fn rusage_alternatives(s: &str, unit_mb: f64) -> Result<Option<Vec<Rusage>>, String> {
    let (_, other) = sections(s);
    let mut alts: Option<Vec<Rusage>> = None;
    for (_, body) in other.iter().filter(|(k, _)| k == "rusage") {
        let pieces: Vec<&str> = body.split("||").collect();
        if pieces.len() > 1 && pieces.iter().any(|p| p.trim().is_empty()) {
            return Err(format!("empty rusage[] alternative in {body:?}"));
        }
        // Each piece's items are read onto what the earlier sections gave (later wins).
        alts = Some(match alts {
            None => pieces
                .iter()
                .map(|p| parse_alternative(Rusage::default(), p, unit_mb))
                .collect::<Result<_, _>>()?,
            Some(prev) if pieces.len() == 1 => prev
                .into_iter()
                .map(|a| parse_alternative(a, body, unit_mb))
                .collect::<Result<_, _>>()?,
            Some(prev) if prev.len() == 1 => pieces
                .iter()
                .map(|p| parse_alternative(prev[0].clone(), p, unit_mb))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("more than one rusage[] with || alternatives".to_owned()),
        });
    }
    Ok(alts)
}

/// One alternative of an `rusage[]` body (`name=value` items separated by `:` or `,`)
/// read onto `r`: a later item wins.
fn parse_alternative(mut r: Rusage, body: &str, unit_mb: f64) -> Result<Rusage, String> {
    for item in body.split([':', ',']).map(str::trim) {
        let item = item.trim_matches(|c| c == '(' || c == ')').trim();
        if item.is_empty() {
            continue;
        }
        let Some((name, value)) = item.split_once('=') else {
            return Err(format!("bad rusage[] item {item:?}"));
        };
        let (name, value) = (name.trim(), value.trim());
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!("bad rusage[] item {item:?}"));
        }
        match name {
            "duration" => {
                let (num, per) = match value.strip_suffix(['h', 'H']) {
                    Some(n) => (n, 60.0),
                    None => (value.strip_suffix(['m', 'M']).unwrap_or(value), 1.0),
                };
                let v: f64 = num
                    .trim()
                    .parse()
                    .map_err(|_| format!("bad rusage[] duration {value:?}"))?;
                if !(v.is_finite() && v >= 0.0) {
                    return Err(format!("bad rusage[] duration {value:?}"));
                }
                r.duration_min = Some(v * per);
            }
            "decay" => {
                r.decay = match value {
                    "1" => true,
                    "0" => false,
                    _ => return Err(format!("bad rusage[] decay {value:?}")),
                }
            }
            _ => {
                let sized = matches!(name, "mem" | "swp" | "swap" | "tmp");
                let bare = value.parse::<f64>().ok();
                let v = match (bare, sized) {
                    (Some(v), true) => v * unit_mb,
                    (Some(v), false) => v,
                    (None, true) => crate::select::number_in_mb(value)
                        .and_then(|t| t.parse::<f64>().ok())
                        .ok_or_else(|| format!("bad rusage[] value {item:?}"))?,
                    (None, false) => return Err(format!("bad rusage[] value {item:?}")),
                };
                if !(v.is_finite() && v >= 0.0) {
                    return Err(format!("bad rusage[] value {item:?}"));
                }
                let name = if name == "swap" { "swp" } else { name };
                match r.amounts.iter_mut().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = v,
                    None => r.amounts.push((name.to_owned(), v)),
                }
            }
        }
    }
    Ok(r)
}

#[cfg(test)]
mod rusage_tests {
    use super::*;

    #[test]
    fn rusage_items_durations_decay_and_units() {
        assert_eq!(rusage_of("select[mem>1]", 1.0).unwrap(), None);
        let r = rusage_of("rusage[mem=100:swp=10:duration=10:decay=1]", 1.0)
            .unwrap()
            .unwrap();
        assert_eq!(r.amounts, vec![("mem".into(), 100.0), ("swp".into(), 10.0)]);
        assert_eq!(r.duration_min, Some(10.0));
        assert!(r.decay);
        // Units: a bare value is in LSF_UNIT_FOR_LIMITS (KB here), a suffixed one says.
        let r = rusage_of("rusage[mem=2048]", 1.0 / 1024.0)
            .unwrap()
            .unwrap();
        assert_eq!(r.amounts, vec![("mem".into(), 2.0)]);
        let r = rusage_of("rusage[mem=8G, duration=2h]", 1.0)
            .unwrap()
            .unwrap();
        assert_eq!(r.amounts, vec![("mem".into(), 8192.0)]);
        assert_eq!(r.duration_min, Some(120.0));
        // Of alternatives, the first; a resource of the cluster as it is.
        let r = rusage_of("rusage[licA=1 || licB=2]", 1.0).unwrap().unwrap();
        assert_eq!(r.amounts, vec![("licA".into(), 1.0)]);
        for bad in [
            "rusage[mem]",
            "rusage[mem=x]",
            "rusage[decay=2]",
            "rusage[mem=-1]",
        ] {
            assert!(rusage_of(bad, 1.0).is_err(), "{bad}");
        }
    }
}

#[cfg(test)]
mod alternative_tests {
    use super::*;

    fn amounts(r: &Rusage) -> Vec<(&str, f64)> {
        r.amounts.iter().map(|(n, v)| (n.as_str(), *v)).collect()
    }

    #[test]
    fn every_alternative_is_read_in_order() {
        let alts = rusage_alternatives("rusage[mem=20000 || mem=10000:swp=10000]", 1.0)
            .unwrap()
            .unwrap();
        assert_eq!(alts.len(), 2);
        assert_eq!(amounts(&alts[0]), vec![("mem", 20000.0)]);
        assert_eq!(amounts(&alts[1]), vec![("mem", 10000.0), ("swp", 10000.0)]);
        // Whitespace around || or none; a plain rusage[] is one alternative.
        let tight = rusage_alternatives("rusage[mem=20000||mem=10000:swp=10000]", 1.0)
            .unwrap()
            .unwrap();
        assert_eq!(tight, alts);
        let one = rusage_alternatives("select[mem>1] rusage[mem=5]", 1.0)
            .unwrap()
            .unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(rusage_alternatives("select[mem>1]", 1.0).unwrap(), None);
        // rusage_of keeps giving the first.
        assert_eq!(
            rusage_of("rusage[mem=20000 || mem=10000]", 1.0).unwrap(),
            Some(alts[0].clone())
        );
    }

    #[test]
    fn each_alternative_has_its_own_duration_and_decay() {
        let alts = rusage_alternatives(
            "rusage[mem=4G:duration=10:decay=1 || mem=1000:duration=2h || licA=1]",
            1.0,
        )
        .unwrap()
        .unwrap();
        assert_eq!(alts.len(), 3);
        assert_eq!(amounts(&alts[0]), vec![("mem", 4096.0)]);
        assert_eq!((alts[0].duration_min, alts[0].decay), (Some(10.0), true));
        assert_eq!((alts[1].duration_min, alts[1].decay), (Some(120.0), false));
        assert_eq!((alts[2].duration_min, alts[2].decay), (None, false));
        assert_eq!(amounts(&alts[2]), vec![("licA", 1.0)]);
        // LSF_UNIT_FOR_LIMITS applies to every alternative.
        let kb = rusage_alternatives("rusage[mem=2048 || swp=1024]", 1.0 / 1024.0)
            .unwrap()
            .unwrap();
        assert_eq!(amounts(&kb[0]), vec![("mem", 2.0)]);
        assert_eq!(amounts(&kb[1]), vec![("swp", 1.0)]);
    }

    #[test]
    fn a_plain_section_goes_into_every_alternative() {
        // Two -R strings: the sections are kept apart by merge() and read together here.
        let merged = merge(&["rusage[mem=200 || mem=100]".into(), "rusage[tmp=5]".into()]);
        assert_eq!(merged, "rusage[mem=200 || mem=100] rusage[tmp=5]");
        let alts = rusage_alternatives(&merged, 1.0).unwrap().unwrap();
        assert_eq!(amounts(&alts[0]), vec![("mem", 200.0), ("tmp", 5.0)]);
        assert_eq!(amounts(&alts[1]), vec![("mem", 100.0), ("tmp", 5.0)]);
        let alts = rusage_alternatives("rusage[tmp=5:mem=1] rusage[mem=200 || swp=3]", 1.0)
            .unwrap()
            .unwrap();
        assert_eq!(amounts(&alts[0]), vec![("tmp", 5.0), ("mem", 200.0)]);
        assert_eq!(
            amounts(&alts[1]),
            vec![("tmp", 5.0), ("mem", 1.0), ("swp", 3.0)]
        );
    }

    #[test]
    fn a_malformed_alternative_is_an_error() {
        for bad in [
            "rusage[mem=100 || mem]",
            "rusage[mem=x || mem=1]",
            "rusage[mem=1 || ]",
            "rusage[|| mem=1]",
            "rusage[mem=1 |||| mem=2]",
            "rusage[mem=1 || duration=x]",
            "rusage[mem=1 || decay=3]",
            "rusage[mem=1 || mem=2] rusage[swp=1 || swp=2]",
        ] {
            assert!(rusage_alternatives(bad, 1.0).is_err(), "{bad}");
            assert!(rusage_of(bad, 1.0).is_err(), "{bad}");
        }
    }
}

#[cfg(test)]
mod order_tests {
    use super::order_keys;

    #[test]
    fn order_sections_give_their_names_and_directions() {
        assert_eq!(order_keys("select[mem>1]").unwrap(), None);
        assert_eq!(
            order_keys("order[r15s:pg]").unwrap(),
            Some(vec![("r15s".into(), false), ("pg".into(), false)])
        );
        assert_eq!(
            order_keys("select[x] order[-mem] span[hosts=1]").unwrap(),
            Some(vec![("mem".into(), true)])
        );
        assert_eq!(
            order_keys("order[!-slots]").unwrap(),
            Some(vec![("slots".into(), true)])
        );
        assert!(order_keys("order[r15s:>]").is_err());
        assert!(order_keys("order[-]").is_err());
    }
}
