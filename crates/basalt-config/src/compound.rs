//! Compound and alternative resource requirements (LSF 9.1's and 10.1's forms of `-R`).
//!
//! * **Compound**: `n1*{simple1} + n2*{simple2} + ...` — the job's slots in parts, part
//!   k of `nk` slots on hosts that satisfy `simplek` (its own `select order rusage span
//!   same`). The last term may leave its multiplier out: it takes the slots `-n` leaves
//!   (one without `-n`); any other term without one is one slot.
//! * **Alternative**: `{r1}[@w1] || {r2}[@w2] || ...` — the job runs with one of them,
//!   each simple or compound (`{2*{select[a]} + {select[b]}} || {select[c]}`); `@w` is
//!   its weight (a positive number, 1 when left out): the heaviest that can start the
//!   job now is used, the first written among equals.
//!
//! A requirement without braces is [`Form::Simple`] (every section of [`crate::resreq`]
//! applies to it as before). [`form`] reads the structure only: each term's text is a
//! simple requirement left to the usual parsers; [`form`]'s error names what is wrong.

/// At most this many terms in a compound requirement, and this many alternatives.
pub const MAX_TERMS: usize = 64;

/// The structure of a resource requirement.
#[derive(Debug, Clone, PartialEq)]
pub enum Form {
    /// No braces: an ordinary requirement.
    Simple,
    /// `n1*{s1} + n2*{s2} + ...` (one term: `{s}` or `n*{s}`).
    Compound(Vec<Term>),
    /// `{r1}@w1 || {r2}@w2 || ...` (one alternative alone when it has a weight).
    Alternatives(Vec<Alternative>),
}

/// One term of a compound requirement: its slot count and its simple requirement.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// `n*`: None when left out.
    pub count: Option<u32>,
    /// The simple requirement between the braces, trimmed.
    pub simple: String,
}

/// One alternative: simple (one term without a count) or compound.
#[derive(Debug, Clone, PartialEq)]
pub struct Alternative {
    pub terms: Vec<Term>,
    /// Written as a compound requirement (`{2*{...} + ...}`).
    pub compound: bool,
    /// `@w`: None when left out (weight 1).
    pub weight: Option<f64>,
}

impl Alternative {
    /// Its weight (1 when none was given).
    pub fn weight(&self) -> f64 {
        self.weight.unwrap_or(1.0)
    }

    /// Its requirement as a job that has only it would give it: the compound terms
    /// (`2*{select[a]} + {select[b]}`), or a simple one in braces (`{select[c]}`), which
    /// [`form`] reads back as a compound of one term taking every slot.
    pub fn text(&self) -> String {
        if self.compound {
            render(&self.terms)
        } else {
            self.terms
                .first()
                .map(|t| format!("{{{}}}", t.simple))
                .unwrap_or_default()
        }
    }
}

/// Terms as written: `2*{select[a]} + {select[b]}`.
pub fn render(terms: &[Term]) -> String {
    terms
        .iter()
        .map(|t| match t.count {
            Some(n) => format!("{n}*{{{}}}", t.simple),
            None => format!("{{{}}}", t.simple),
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Alternatives as written: `{select[a]}@2 || {2*{select[b]} + {select[c]}}`.
pub fn render_alternatives(alts: &[Alternative]) -> String {
    alts.iter()
        .map(|a| {
            let inner = if a.compound {
                render(&a.terms)
            } else {
                a.terms
                    .first()
                    .map(|t| t.simple.clone())
                    .unwrap_or_default()
            };
            match a.weight {
                Some(w) => format!("{{{inner}}}@{w}"),
                None => format!("{{{inner}}}"),
            }
        })
        .collect::<Vec<_>>()
        .join(" || ")
}

/// Is `s` compound or alternative (a `{` outside any section and quote)? Cheap: what the
/// scheduler asks of every job's requirement before anything else.
pub fn is_multi(s: &str) -> bool {
    if !s.as_bytes().contains(&b'{') {
        return false;
    }
    let mut sc = Scan::default();
    s.chars().any(|c| sc.step(c) && c == '{')
}

/// Where a scan is: inside `[...]` (depth), inside a quote, inside `{...}` (depth).
#[derive(Default)]
struct Scan {
    bracket: usize,
    quote: Option<char>,
}

impl Scan {
    /// Take `c`; true when it is outside any section and quote (it is structure).
    fn step(&mut self, c: char) -> bool {
        if let Some(q) = self.quote {
            if c == q {
                self.quote = None;
            }
            return false;
        }
        match c {
            '\'' | '"' => {
                self.quote = Some(c);
                false
            }
            '[' => {
                self.bracket += 1;
                false
            }
            ']' => {
                self.bracket = self.bracket.saturating_sub(1);
                false
            }
            _ => self.bracket == 0,
        }
    }
}

/// The separator before an item at the top level of a requirement.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sep {
    Plus,
    Or,
}

/// Split `s` at its top level (outside braces, sections and quotes) on `+` and `||`:
/// the items with the separator before each (None for the first).
fn split_top(s: &str) -> Result<Vec<(Option<Sep>, String)>, String> {
    let mut out: Vec<(Option<Sep>, String)> = Vec::new();
    let mut cur = String::new();
    let mut sep = None;
    let mut depth = 0usize;
    let mut sc = Scan::default();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if !sc.step(c) {
            cur.push(c);
            continue;
        }
        match c {
            '{' => {
                depth += 1;
                cur.push(c);
            }
            '}' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| "a '}' closes no '{'".to_owned())?;
                cur.push(c);
            }
            '+' if depth == 0 => {
                out.push((sep, std::mem::take(&mut cur)));
                sep = Some(Sep::Plus);
            }
            '|' if depth == 0 => {
                if chars.peek() != Some(&'|') {
                    return Err(
                        "a single '|' between terms (alternatives are separated by '||')".into(),
                    );
                }
                chars.next();
                out.push((sep, std::mem::take(&mut cur)));
                sep = Some(Sep::Or);
            }
            _ => cur.push(c),
        }
    }
    if sc.bracket > 0 {
        return Err("a '[' is not closed".into());
    }
    if sc.quote.is_some() {
        return Err("a quote is not closed".into());
    }
    if depth > 0 {
        return Err("a '{' is not closed".into());
    }
    out.push((sep, cur));
    // The first item is next to the separator after it (what an empty one lacks).
    if out.len() > 1 && out[0].1.trim().is_empty() {
        out[0].0 = out[1].0;
    }
    Ok(out)
}

/// One item: `[n*]{body}[@w]` — (count, body, weight).
fn item(text: &str, sep: Option<Sep>) -> Result<(Option<u32>, String, Option<f64>), String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(match sep {
            Some(Sep::Plus) => "a '+' with no term after it (or before it)".into(),
            Some(Sep::Or) => "a '||' with no alternative after it (or before it)".into(),
            None => "an empty term".into(),
        });
    }
    let Some(open) = t.find('{') else {
        return Err(format!(
            "{t:?} is not in braces (each term of a compound or alternative requirement is written {{...}})"
        ));
    };
    let count = match t[..open].trim() {
        "" => None,
        head => {
            let Some(n) = head.strip_suffix('*') else {
                return Err(format!(
                    "{head:?} before '{{': a term is written n*{{...}} or {{...}}"
                ));
            };
            let n = n.trim();
            match n.parse::<u32>() {
                Ok(v) if v > 0 => Some(v),
                _ => {
                    return Err(format!(
                        "bad multiplier {n:?} (a positive whole number of slots)"
                    ));
                }
            }
        }
    };
    // The brace matching the first one.
    let mut depth = 0usize;
    let mut close = None;
    let mut sc = Scan::default();
    for (i, c) in t.char_indices().skip_while(|(i, _)| *i < open) {
        if !sc.step(c) {
            continue;
        }
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close.ok_or_else(|| "a '{' is not closed".to_owned())?;
    let body = t[open + 1..close].trim().to_owned();
    let tail = t[close + 1..].trim();
    let weight = if tail.is_empty() {
        None
    } else if let Some(w) = tail.strip_prefix('@') {
        let w = w.trim();
        match w.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Some(v),
            _ => return Err(format!("bad weight {w:?} (a positive number after '@')")),
        }
    } else {
        return Err(format!(
            "{tail:?} after '}}': only '@weight' may follow an alternative"
        ));
    };
    Ok((count, body, weight))
}

/// The terms of a compound requirement whose items are `items` (each `n*{simple}`).
fn terms(items: Vec<(Option<Sep>, String)>) -> Result<Vec<Term>, String> {
    if items.len() > MAX_TERMS {
        return Err(format!("more than {MAX_TERMS} terms"));
    }
    let mut out = Vec::with_capacity(items.len());
    for (sep, text) in items {
        let (count, simple, weight) = item(&text, sep)?;
        if weight.is_some() {
            return Err(
                "'@weight' is for alternatives ({...}@w || {...}), not for compound terms".into(),
            );
        }
        if is_multi(&simple) {
            return Err(format!(
                "{{{simple}}}: a term of a compound requirement is a simple requirement (alternatives cannot be nested in it)"
            ));
        }
        if simple.is_empty() {
            return Err("an empty term {}".into());
        }
        out.push(Term { count, simple });
    }
    Ok(out)
}

/// The structure of requirement `s`, or what is wrong with it.
pub fn form(s: &str) -> Result<Form, String> {
    if !is_multi(s) {
        // A stray '}' is still an error.
        let mut sc = Scan::default();
        if s.chars().any(|c| sc.step(c) && c == '}') {
            return Err("a '}' closes no '{'".into());
        }
        return Ok(Form::Simple);
    }
    let items = split_top(s)?;
    let ors = items.iter().any(|(sep, _)| *sep == Some(Sep::Or));
    let plus = items.iter().any(|(sep, _)| *sep == Some(Sep::Plus));
    if ors && plus {
        return Err(
            "'+' and '||' at the same level: write a compound alternative in braces, {2*{...} + {...}} || {...}"
                .into(),
        );
    }
    let single_weighted = !ors
        && items.len() == 1
        && item(&items[0].1, None).is_ok_and(|(c, _, w)| c.is_none() && w.is_some());
    if !ors && !single_weighted {
        return Ok(Form::Compound(terms(items)?));
    }
    if items.len() > MAX_TERMS {
        return Err(format!("more than {MAX_TERMS} alternatives"));
    }
    let mut alts = Vec::with_capacity(items.len());
    for (sep, text) in items {
        let (count, body, weight) = item(&text, sep)?;
        if count.is_some() {
            return Err(format!(
                "{}: an alternative has no multiplier; write a compound alternative in braces, {{2*{{...}} + {{...}}}}",
                text.trim()
            ));
        }
        if body.is_empty() {
            return Err("an empty alternative {}".into());
        }
        if is_multi(&body) {
            let inner = split_top(&body)?;
            if inner.iter().any(|(sep, _)| *sep == Some(Sep::Or)) {
                return Err(format!(
                    "{{{body}}}: alternatives cannot be nested in an alternative"
                ));
            }
            alts.push(Alternative {
                terms: terms(inner)?,
                compound: true,
                weight,
            });
        } else {
            alts.push(Alternative {
                terms: vec![Term {
                    count: None,
                    simple: body,
                }],
                compound: false,
                weight,
            });
        }
    }
    Ok(Form::Alternatives(alts))
}

/// The alternatives of a requirement in the order a scheduler tries them: by weight,
/// heaviest first, then as written. A compound requirement is one alternative, a simple
/// one none.
pub fn by_preference(f: &Form) -> Vec<(usize, Alternative)> {
    let mut alts: Vec<(usize, Alternative)> = match f {
        Form::Simple => Vec::new(),
        Form::Compound(t) => vec![(
            0,
            Alternative {
                terms: t.clone(),
                compound: true,
                weight: None,
            },
        )],
        Form::Alternatives(a) => a.iter().cloned().enumerate().collect(),
    };
    alts.sort_by(|(ia, a), (ib, b)| {
        b.weight()
            .partial_cmp(&a.weight())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(ia.cmp(ib))
    });
    alts
}

/// The slots of each term of a compound requirement (or of an alternative) for a job of
/// `total` slots: the multipliers given; a last term without one takes what the others
/// leave. None when they do not add up to `total` (or leave the last term nothing).
pub fn counts(terms: &[Term], total: u32) -> Option<Vec<u32>> {
    let (last, others) = terms.split_last()?;
    let mut out: Vec<u32> = others.iter().map(|t| t.count.unwrap_or(1)).collect();
    let used: u64 = out.iter().map(|&c| u64::from(c)).sum();
    let last = match last.count {
        Some(c) => c,
        None => u32::try_from(u64::from(total).checked_sub(used)?).ok()?,
    };
    if last == 0 || used + u64::from(last) != u64::from(total) {
        return None;
    }
    out.push(last);
    Some(out)
}

/// The slots a compound's terms ask for by themselves: `Ok(n)` when every term has its
/// multiplier (their sum), `Err(m)` when the last has none (`m`: what the others take).
pub fn fixed_total(terms: &[Term]) -> Result<u64, u64> {
    let others: u64 = terms
        .iter()
        .take(terms.len().saturating_sub(1))
        .map(|t| u64::from(t.count.unwrap_or(1)))
        .sum();
    match terms.last().and_then(|t| t.count) {
        Some(c) => Ok(others + u64::from(c)),
        None => Err(others),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(count: Option<u32>, s: &str) -> Term {
        Term {
            count,
            simple: s.to_owned(),
        }
    }

    #[test]
    fn simple_requirements_have_no_braces() {
        for s in [
            "",
            "select[bigmem]",
            "mem>1 && type==any order[r15s]",
            "select[hname=='a{b']",
            "rusage[mem=1||mem=2]",
        ] {
            assert_eq!(form(s), Ok(Form::Simple), "{s}");
            assert!(!is_multi(s), "{s}");
        }
        assert!(form("select[a] }").is_err());
    }

    #[test]
    fn compound_forms() {
        assert_eq!(
            form("2*{select[bigmem]} + 2*{select[fs]}"),
            Ok(Form::Compound(vec![
                t(Some(2), "select[bigmem]"),
                t(Some(2), "select[fs]")
            ]))
        );
        // The last multiplier left out; no spaces; one term.
        assert_eq!(
            form("2*{select[bigmem] rusage[mem=10]}+{select[fs] span[hosts=1]}"),
            Ok(Form::Compound(vec![
                t(Some(2), "select[bigmem] rusage[mem=10]"),
                t(None, "select[fs] span[hosts=1]")
            ]))
        );
        assert_eq!(
            form(" { select[a] } "),
            Ok(Form::Compound(vec![t(None, "select[a]")]))
        );
        assert_eq!(form("3 * {a}"), Ok(Form::Compound(vec![t(Some(3), "a")])));
        assert!(is_multi("2*{a} + {b}"));
    }

    #[test]
    fn alternative_forms() {
        let f = form("{select[bigmem]} || {select[fs]}").unwrap();
        let Form::Alternatives(a) = &f else {
            panic!("{f:?}")
        };
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].terms, vec![t(None, "select[bigmem]")]);
        assert!(!a[0].compound);
        assert_eq!(a[1].text(), "{select[fs]}");
        // Weights, and a compound alternative.
        let f = form("{select[a] span[hosts=1]}@1 || {2*{select[b]} + {select[c]}}@2.5").unwrap();
        let Form::Alternatives(a) = &f else {
            panic!("{f:?}")
        };
        assert_eq!(a[0].weight, Some(1.0));
        assert_eq!(a[1].weight, Some(2.5));
        assert!(a[1].compound);
        assert_eq!(
            a[1].terms,
            vec![t(Some(2), "select[b]"), t(None, "select[c]")]
        );
        assert_eq!(a[1].text(), "2*{select[b]} + {select[c]}");
        // Tried heaviest first, then as written.
        let order: Vec<usize> = by_preference(&f).into_iter().map(|(i, _)| i).collect();
        assert_eq!(order, vec![1, 0]);
        let f = form("{a} || {b}@3 || {c}@3").unwrap();
        let order: Vec<usize> = by_preference(&f).into_iter().map(|(i, _)| i).collect();
        assert_eq!(order, vec![1, 2, 0]);
        // One alternative with a weight.
        assert!(matches!(form("{a}@2"), Ok(Form::Alternatives(v)) if v.len() == 1));
        // Written back.
        let Ok(Form::Alternatives(a)) = form("{a}@2 || {2*{b} + {c}}") else {
            panic!()
        };
        assert_eq!(render_alternatives(&a), "{a}@2 || {2*{b} + {c}}");
    }

    /// Each malformed requirement is refused with what is wrong.
    #[test]
    fn malformed_requirements_say_what_is_wrong() {
        for (bad, why) in [
            ("2*{select[a]} + ", "'+' with no term"),
            ("+ {a}", "'+' with no term"),
            ("{a} || ", "'||' with no alternative"),
            ("2*{select[a]", "'{' is not closed"),
            ("2*{select[a]}}", "closes no '{'"),
            ("2*{select[a} + {b}", "'[' is not closed"),
            ("x*{a}", "bad multiplier"),
            ("0*{a}", "bad multiplier"),
            ("-1*{a}", "bad multiplier"),
            ("2{a}", "before '{'"),
            ("select[a] + 2*{b}", "not in braces"),
            ("2*{a} + 2*{b} || {c}", "same level"),
            ("2*{a} || {c}", "no multiplier"),
            ("{a}@0 || {b}", "bad weight"),
            ("{a}@x || {b}", "bad weight"),
            ("{a} x || {b}", "only '@weight'"),
            ("2*{a}@2 + {b}", "not for compound terms"),
            ("2*{{a} || {b}} + {c}", "simple requirement"),
            ("{{a} || {b}} || {c}", "cannot be nested"),
            ("{} || {b}", "empty alternative"),
            ("2*{} + {b}", "empty term"),
            ("{a} | {b}", "single '|'"),
        ] {
            match form(bad) {
                Err(e) => assert!(e.contains(why), "{bad}: {e}"),
                Ok(f) => panic!("{bad} accepted: {f:?}"),
            }
        }
    }

    #[test]
    fn counts_split_the_slots_over_the_terms() {
        let two_two = [t(Some(2), "a"), t(Some(2), "b")];
        assert_eq!(counts(&two_two, 4), Some(vec![2, 2]));
        assert_eq!(counts(&two_two, 6), None);
        assert_eq!(fixed_total(&two_two), Ok(4));
        // The last without a multiplier takes the rest.
        let open = [t(Some(2), "a"), t(None, "b")];
        assert_eq!(counts(&open, 6), Some(vec![2, 4]));
        assert_eq!(counts(&open, 2), None);
        assert_eq!(fixed_total(&open), Err(2));
        // A term other than the last without a multiplier is one slot.
        let first_open = [t(None, "a"), t(Some(3), "b")];
        assert_eq!(counts(&first_open, 4), Some(vec![1, 3]));
        assert_eq!(fixed_total(&first_open), Ok(4));
        assert_eq!(counts(&[t(None, "a")], 5), Some(vec![5]));
        assert_eq!(counts(&[], 5), None);
    }
}
