//! Job-array name specs: `-J "name[1-10]"`, `name[1-100:2]`, `name[1,3,5-7:2]`, with an
//! optional `%k` limit on elements running at once (`name[1-10]%2`).

/// The largest index LSF accepts in an array spec.
pub const MAX_ARRAY_INDEX: u32 = 2_147_483_646;

/// Never build more elements than this from one spec, whatever the log says.
pub const HARD_MAX_ELEMENTS: u64 = 1_000_000;

/// A parsed array spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArraySpec {
    /// The array's name without the index spec (`arr` of `arr[1-10]%2`).
    pub base: String,
    /// `(start, end, step)` ranges as written.
    pub ranges: Vec<(u32, u32, u32)>,
    /// `%k`: at most k elements started at once.
    pub limit: Option<u32>,
}

/// Why a spec is refused (LSF's texts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayError {
    /// "Job array index error".
    BadIndex,
    /// "Job array index too large".
    TooLarge,
}

impl ArraySpec {
    /// The number of element slots the ranges describe (duplicates counted).
    pub fn count(&self) -> u64 {
        self.ranges
            .iter()
            .map(|(a, b, s)| u64::from((b - a) / s) + 1)
            .sum()
    }

    /// The distinct indices, ascending (at most [`HARD_MAX_ELEMENTS`]).
    pub fn indices(&self) -> Vec<u32> {
        let mut set = std::collections::BTreeSet::new();
        'outer: for &(a, b, s) in &self.ranges {
            let mut i = a;
            loop {
                if set.len() as u64 >= HARD_MAX_ELEMENTS {
                    break 'outer;
                }
                set.insert(i);
                match i.checked_add(s) {
                    Some(n) if n <= b => i = n,
                    _ => break,
                }
            }
        }
        set.into_iter().collect()
    }
}

/// The characters an index list may consist of; a bracket holding anything else is part of
/// an ordinary job name (`-J "rule[x]"`).
fn index_like(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b':' | b',' | b' '))
        && s.bytes().any(|b| b.is_ascii_digit())
}

/// Split a job name into (base, index list, limit text) when it ends like an array spec.
fn split(name: &str) -> Option<(&str, &str, Option<&str>)> {
    let (body, limit) = match name.rfind("]%") {
        Some(p) if name[p + 2..].bytes().all(|b| b.is_ascii_digit()) => {
            (&name[..=p], Some(&name[p + 2..]))
        }
        _ => (name, None),
    };
    let body = body.strip_suffix(']')?;
    let open = body.rfind('[')?;
    let inner = &body[open + 1..];
    if !index_like(inner) {
        return None;
    }
    Some((&body[..open], inner, limit))
}

fn num(s: &str) -> Result<u32, ArrayError> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ArrayError::BadIndex);
    }
    match s.parse::<u64>() {
        Ok(v) if v > u64::from(MAX_ARRAY_INDEX) => Err(ArrayError::TooLarge),
        Ok(v) => Ok(v as u32),
        Err(_) => Err(ArrayError::TooLarge),
    }
}

/// Parse a job name. `None`: an ordinary name; `Some(Err)`: an array spec LSF refuses.
pub fn parse(name: &str) -> Option<Result<ArraySpec, ArrayError>> {
    let (base, inner, limit) = split(name)?;
    Some(parse_parts(base, inner, limit))
}

fn parse_parts(base: &str, inner: &str, limit: Option<&str>) -> Result<ArraySpec, ArrayError> {
    let mut ranges = Vec::new();
    for item in inner.split(',') {
        let (range, step) = match item.split_once(':') {
            Some((r, s)) => (r, num(s)?),
            None => (item, 1),
        };
        let (a, b) = match range.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let a = num(range)?;
                (a, a)
            }
        };
        if a == 0 || step == 0 || a > b {
            return Err(ArrayError::BadIndex);
        }
        ranges.push((a, b, step));
    }
    let limit = match limit {
        None => None,
        Some(k) => match k.parse::<u32>() {
            Ok(k) if k > 0 => Some(k),
            _ => return Err(ArrayError::BadIndex),
        },
    };
    Ok(ArraySpec {
        base: base.to_string(),
        ranges,
        limit,
    })
}

/// The name an array goes by without its index spec (`arr` of `arr[1-10]%2`); an ordinary
/// name unchanged.
pub fn base_name(name: &str) -> &str {
    match split(name) {
        Some((base, _, _)) => base,
        None => name,
    }
}

/// bmod's `-J "%k"` (LSF's `-J "%job_limit"`): the new limit when `name` is `%`
/// followed by digits only. `Some(Err)`: a limit LSF refuses (`%0`, too large).
pub fn limit_change(name: &str) -> Option<Result<u32, ArrayError>> {
    let k = name.strip_prefix('%')?;
    if k.is_empty() || !k.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match k.parse::<u32>() {
        Ok(k) if k > 0 => Ok(k),
        _ => Err(ArrayError::BadIndex),
    })
}

/// An array's name with its `%k` limit set to `limit` (`arr[1-10]%5` of `arr[1-10]`
/// or `arr[1-10]%2`); None for an ordinary name.
pub fn with_limit(name: &str, limit: u32) -> Option<String> {
    let (base, inner, _) = split(name)?;
    Some(format!("{base}[{inner}]%{limit}"))
}

/// The `%k` limit of an array's name (None: none, or an ordinary name).
pub fn limit_of(name: &str) -> Option<u32> {
    split(name)?.2?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(name: &str) -> Vec<u32> {
        match parse(name) {
            Some(Ok(s)) => s.indices(),
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn forms() {
        assert_eq!(idx("arr[1-10]"), (1..=10).collect::<Vec<_>>());
        assert_eq!(idx("a[1-9:2]"), vec![1, 3, 5, 7, 9]);
        assert_eq!(idx("a[1,3,5-7:2]"), vec![1, 3, 5, 7]);
        assert_eq!(idx("a[4]"), vec![4]);
        assert_eq!(idx("a[3,1,3]"), vec![1, 3]);
        assert_eq!(idx("[1-2]"), vec![1, 2]);
        let s = parse("arr[1-10]%2").and_then(Result::ok).expect("spec");
        assert_eq!((s.base.as_str(), s.limit, s.count()), ("arr", Some(2), 10));
        assert_eq!(idx("x[y][2-3]"), vec![2, 3]);
        assert_eq!(base_name("x[y][2-3]%1"), "x[y]");
    }

    #[test]
    fn ordinary_names() {
        for n in [
            "plain",
            "rule[x]",
            "a[]",
            "Snakemake_rule_r:k=v,k2=v2___(uuid)",
            "a[1-2]x",
        ] {
            assert_eq!(parse(n), None, "{n}");
            assert_eq!(base_name(n), n);
        }
    }

    #[test]
    fn refused() {
        for n in [
            "a[0-3]", "a[5-1]", "a[1-5:0]", "a[1-]", "a[1--2]", "a[1-3]%0", "a[1-3]%",
        ] {
            assert_eq!(parse(n), Some(Err(ArrayError::BadIndex)), "{n}");
        }
        assert_eq!(parse("a[1-99999999999]"), Some(Err(ArrayError::TooLarge)));
    }

    #[test]
    fn limit_changes() {
        assert_eq!(limit_change("%5"), Some(Ok(5)));
        assert_eq!(limit_change("%0"), Some(Err(ArrayError::BadIndex)));
        assert_eq!(
            limit_change("%99999999999"),
            Some(Err(ArrayError::BadIndex))
        );
        for other in ["5", "%", "%5x", "a%5", "%-1", "% 5"] {
            assert_eq!(limit_change(other), None, "{other}");
        }
        assert_eq!(with_limit("arr[1-10]", 5).as_deref(), Some("arr[1-10]%5"));
        assert_eq!(with_limit("x[y][1,3]%2", 7).as_deref(), Some("x[y][1,3]%7"));
        assert_eq!(with_limit("plain", 7), None);
        assert_eq!(limit_of("arr[1-10]%3"), Some(3));
        assert_eq!(limit_of("arr[1-10]"), None);
    }
}
