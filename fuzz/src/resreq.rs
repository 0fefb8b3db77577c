//! The resource-requirement checks of the fuzz target `resreq`, also run on stable by
//! `crates/basalt-cli/tests/resreq_fuzz.rs` (which includes this file with `#[path]`).
//!
//! Basalt reads a resource requirement in three places: `bsub` merges its `-R` strings
//! into one (`basalt_cli::batch::resreq::merge`: `select[]` ANDed, `rusage[]` merged per
//! resource, other sections last-wins), the scheduler reads `span[]`
//! (`basalt_sched::span_of`), and select expressions (queue `STOP_COND`/`RESUME_COND`,
//! `select[]` bodies) are parsed and evaluated by `basalt_config::cond::Cond`.
//!
//! `merge` is reached as `super::cli_resreq::merge`: the fuzz crate compiles
//! `crates/basalt-cli/src/batch/resreq.rs` as that module, the stable test names
//! `basalt_cli::batch::resreq` so.
//!
//! **Input**: text; each line is one `-R` string (at most 8 are used).
//!
//! **Checks** ([`check_resreq`]), besides "never panics":
//! * `merge` of one string is that string trimmed; `merge` of several is its own fixed
//!   point when the brackets of every string pair up: merging the merged string with
//!   itself gives it back (merge is the canonical printer, so print → parse → print is
//!   stable);
//! * `span_of` never gives `ptile=0`;
//! * for every string (and every `select[]` body) that `Cond::parse` accepts: evaluation
//!   under several loads never panics, `!(e)` holds exactly when `e` does not, and
//!   `(e) && (e)` and `(e) || (e)` hold exactly when `e` does (unless wrapping takes
//!   the expression past the parser's nesting or length limit);
//! * when every string is a plain select expression that parses, the merged
//!   requirement's `select[]` parses and holds exactly when all of them hold.

use super::cli_resreq::merge;
use basalt_config::cond::Cond;
use basalt_sched::{Span, span_of};

/// A load: index name -> value (`None`: unset).
type Load = Box<dyn Fn(&str) -> Option<f64>>;

/// Loads to evaluate expressions under.
fn loads() -> Vec<Load> {
    let hash = |n: &str| -> u64 {
        n.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
    };
    vec![
        Box::new(|_| None),
        Box::new(|_| Some(0.0)),
        Box::new(|_| Some(1.0)),
        Box::new(move |n| {
            const V: [Option<f64>; 10] = [
                None,
                Some(0.0),
                Some(-1.0),
                Some(0.5),
                Some(2.0),
                Some(100.0),
                Some(1e300),
                Some(f64::INFINITY),
                Some(f64::NEG_INFINITY),
                Some(f64::NAN),
            ];
            V[(hash(n) % V.len() as u64) as usize]
        }),
        Box::new(move |n| Some((hash(n) % 7) as f64 - 3.0)),
    ]
}

/// The `-R` strings of an input.
pub fn strings_of(data: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(data)
        .split('\n')
        .take(8)
        .map(str::to_owned)
        .collect()
}

/// The body of the first `select[...]` section of `s` (brackets matched).
fn select_body(s: &str) -> Option<&str> {
    let start = s.find("select[")? + "select[".len();
    let mut depth = 1usize;
    for (i, c) in s[start..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&s[start..start + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Do the brackets of `s` pair up (never more `]` than `[` so far, as many of each)?
fn balanced(s: &str) -> bool {
    let mut depth = 0i64;
    for c in s.chars() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// Is `s` a plain expression: no brackets or quotes (which `Cond::parse` would strip)?
fn plain(s: &str) -> bool {
    !s.contains(['[', ']', '"'])
}

/// Parse `s` as a select expression and check evaluation.
pub fn check_cond(s: &str) {
    let Ok(c) = Cond::parse(s) else {
        return;
    };
    let mut ix = Vec::new();
    c.indices(&mut ix);
    let loads = loads();
    let holds: Vec<bool> = loads.iter().map(|l| c.holds(l.as_ref())).collect();
    if !plain(s) {
        return;
    }
    for (form, want) in [
        (
            format!("!({s})"),
            holds.iter().map(|h| !h).collect::<Vec<_>>(),
        ),
        (format!("({s}) && ({s})"), holds.clone()),
        (format!("({s}) || ({s})"), holds.clone()),
    ] {
        let c2 = match Cond::parse(&form) {
            Ok(c2) => c2,
            // Wrapping adds a level of nesting and doubles the tokens: an expression at
            // the parser's limits (64 levels, 1024 tokens) may go past them.
            Err(e) if e.why.contains("nested more than") || e.why.contains("longer than") => {
                continue;
            }
            Err(e) => panic!("{s:?} parses but {form:?} does not: {e}"),
        };
        let got: Vec<bool> = loads.iter().map(|l| c2.holds(l.as_ref())).collect();
        assert_eq!(got, want, "{form:?} does not hold as {s:?} does");
    }
}

/// The checks listed in the module documentation on one input.
pub fn check_resreq(data: &[u8]) {
    let reqs = strings_of(data);
    for r in &reqs {
        match span_of(r) {
            Some(Span::Ptile(n)) => assert!(n > 0, "span_of({r:?}) gives ptile=0"),
            Some(Span::ByType { types, .. }) => {
                assert!(
                    types.iter().all(|(_, n)| *n > 0),
                    "span_of({r:?}) gives a 0 tile"
                );
            }
            _ => {}
        }
        check_cond(r);
        if let Some(body) = select_body(r) {
            check_cond(body);
        }
    }

    let m = merge(&reqs);
    let _ = span_of(&m);
    let given: Vec<&String> = reqs.iter().filter(|r| !r.trim().is_empty()).collect();
    if given.len() == 1 {
        assert_eq!(m, given[0].trim(), "merge of one string changes it");
    }
    // Only for balanced brackets: merge copies text outside any section into select[]
    // as it is, so a stray `]` there ends the select early when the result is read again
    // (`a] select[b]` merges with itself into a longer string each time).
    if given.len() >= 2 && given.iter().all(|r| balanced(r)) {
        let again = merge(&[m.clone(), m.clone()]);
        assert_eq!(
            again, m,
            "merging a merged requirement with itself changes it"
        );
    }
    if let Some(body) = select_body(&m) {
        check_cond(body);
    }

    // Plain select expressions: the merged select holds when all of them hold.
    if given.len() >= 2 && given.iter().all(|r| plain(r)) {
        let conds: Vec<Cond> = match given.iter().map(|r| Cond::parse(r)).collect() {
            Ok(c) => c,
            Err(_) => return,
        };
        let merged = match Cond::parse(&m) {
            Ok(c) => c,
            Err(e) => {
                panic!("the merge of select expressions {given:?} does not parse: {m:?}: {e}")
            }
        };
        for l in loads() {
            let want = conds.iter().all(|c| c.holds(l.as_ref()));
            assert_eq!(
                merged.holds(l.as_ref()),
                want,
                "the merged select {m:?} does not hold as all of {given:?} do"
            );
        }
    }
}
