//! Queue `STOP_COND` / `RESUME_COND` expressions (checked when lsb.queues is read,
//! evaluated by sbatchd's load policy and mbatchd): LSF's resource-requirement
//! select syntax over load indices, e.g. `r1m > 1.5 && (pg > 20 || it < 1)`.
//!
//! Grammar (lowest precedence first): `||` (`or`), `&&` (`and`), `!` (`not`),
//! comparisons `< <= > >= == != =` (also `lt le gt ge eq ne`), `+ -`, `* /`,
//! unary `-`, numbers, index names and parentheses. A bare name is true when its
//! value is non-zero. A comparison involving an index with no value is false.
//! Built-in aliases: `cpu` = r1m, `login` = ls, `idle` = it, `swap` = swp.

use thiserror::Error;

/// A malformed condition.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{expr}: {why}")]
pub struct CondError {
    pub expr: String,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Op(&'static str),
    LParen,
    RParen,
}

/// A parsed condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Cond {
    Num(f64),
    /// A load index, by canonical name (built-ins lower case).
    Index(String),
    Not(Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
    Cmp(&'static str, Box<Cond>, Box<Cond>),
    Arith(char, Box<Cond>, Box<Cond>),
    Neg(Box<Cond>),
}

fn canonical(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "cpu" => "r1m".to_owned(),
        "login" => "ls".to_owned(),
        "idle" => "it".to_owned(),
        "swap" => "swp".to_owned(),
        _ => match basalt_core::LoadIndex::from_name(&lower) {
            Some(i) => i.name().to_owned(),
            None => name.to_owned(),
        },
    }
}

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let two = s.get(i..i + 2).unwrap_or("");
        let op2: Option<&'static str> = match two {
            "&&" => Some("&&"),
            "||" => Some("||"),
            "<=" => Some("<="),
            ">=" => Some(">="),
            "==" => Some("=="),
            "!=" => Some("!="),
            _ => None,
        };
        if let Some(op) = op2 {
            out.push(Tok::Op(op));
            i += 2;
            continue;
        }
        let op1: Option<&'static str> = match c {
            b'<' => Some("<"),
            b'>' => Some(">"),
            b'=' => Some("=="),
            b'!' => Some("!"),
            b'+' => Some("+"),
            b'-' => Some("-"),
            b'*' => Some("*"),
            b'/' => Some("/"),
            _ => None,
        };
        if let Some(op) = op1 {
            out.push(Tok::Op(op));
            i += 1;
            continue;
        }
        match c {
            b'(' => {
                out.push(Tok::LParen);
                i += 1;
            }
            b')' => {
                out.push(Tok::RParen);
                i += 1;
            }
            b'0'..=b'9' | b'.' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                    i += 1;
                }
                // Exponent (1e3, 2.5E-2).
                if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                    let mut j = i + 1;
                    if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                        j += 1;
                    }
                    if j < b.len() && b[j].is_ascii_digit() {
                        i = j;
                        while i < b.len() && b[i].is_ascii_digit() {
                            i += 1;
                        }
                    }
                }
                let t = &s[start..i];
                let v: f64 = t.parse().map_err(|_| format!("bad number `{t}`"))?;
                out.push(Tok::Num(v));
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let w = &s[start..i];
                let tok = match w.to_ascii_lowercase().as_str() {
                    "and" => Tok::Op("&&"),
                    "or" => Tok::Op("||"),
                    "not" => Tok::Op("!"),
                    "lt" => Tok::Op("<"),
                    "le" => Tok::Op("<="),
                    "gt" => Tok::Op(">"),
                    "ge" => Tok::Op(">="),
                    "eq" => Tok::Op("=="),
                    "ne" => Tok::Op("!="),
                    _ => Tok::Name(canonical(w)),
                };
                out.push(tok);
            }
            _ => return Err(format!("unexpected character `{}`", c as char)),
        }
    }
    Ok(out)
}

/// The longest expression accepted, in tokens. It bounds the depth of the parsed tree,
/// which evaluation, `indices` and drop walk recursively (`1+1+1+…` is parsed by a
/// loop but nests one level per operator).
const MAX_TOKENS: usize = 1024;

/// The deepest nesting of parentheses and prefix operators (`! not -`) accepted: the
/// parser recurses on each, and 20,000 `(` used to overflow the stack (found by the
/// `resreq` fuzz target).
const MAX_NESTING: usize = 64;

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    /// Parentheses and prefix operators open at this point.
    depth: usize,
}

impl Parser {
    /// Parse one more level of nesting with `f`.
    fn nested(&mut self, f: fn(&mut Parser) -> Result<Cond, String>) -> Result<Cond, String> {
        if self.depth >= MAX_NESTING {
            return Err(format!("nested more than {MAX_NESTING} levels deep"));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(o)) => Some(o),
            _ => None,
        }
    }

    fn or(&mut self) -> Result<Cond, String> {
        let mut l = self.and()?;
        while self.peek_op() == Some("||") {
            self.pos += 1;
            let r = self.and()?;
            l = Cond::Or(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn and(&mut self) -> Result<Cond, String> {
        let mut l = self.not()?;
        while self.peek_op() == Some("&&") {
            self.pos += 1;
            let r = self.not()?;
            l = Cond::And(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn not(&mut self) -> Result<Cond, String> {
        if self.peek_op() == Some("!") {
            self.pos += 1;
            return Ok(Cond::Not(Box::new(self.nested(Parser::not)?)));
        }
        self.cmp()
    }

    fn cmp(&mut self) -> Result<Cond, String> {
        let l = self.sum()?;
        match self.peek_op() {
            Some(op @ ("<" | "<=" | ">" | ">=" | "==" | "!=")) => {
                self.pos += 1;
                let r = self.sum()?;
                Ok(Cond::Cmp(op, Box::new(l), Box::new(r)))
            }
            _ => Ok(l),
        }
    }

    fn sum(&mut self) -> Result<Cond, String> {
        let mut l = self.prod()?;
        while let Some(op @ ("+" | "-")) = self.peek_op() {
            self.pos += 1;
            let r = self.prod()?;
            let c = if op == "+" { '+' } else { '-' };
            l = Cond::Arith(c, Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn prod(&mut self) -> Result<Cond, String> {
        let mut l = self.unary()?;
        while let Some(op @ ("*" | "/")) = self.peek_op() {
            self.pos += 1;
            let r = self.unary()?;
            let c = if op == "*" { '*' } else { '/' };
            l = Cond::Arith(c, Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn unary(&mut self) -> Result<Cond, String> {
        if self.peek_op() == Some("-") {
            self.pos += 1;
            return Ok(Cond::Neg(Box::new(self.nested(Parser::unary)?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Cond, String> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        match t {
            Some(Tok::Num(v)) => Ok(Cond::Num(v)),
            Some(Tok::Name(n)) => Ok(Cond::Index(n)),
            Some(Tok::LParen) => {
                let e = self.nested(Parser::or)?;
                match self.toks.get(self.pos) {
                    Some(Tok::RParen) => {
                        self.pos += 1;
                        Ok(e)
                    }
                    _ => Err("missing `)`".to_owned()),
                }
            }
            Some(Tok::RParen) => Err("unexpected `)`".to_owned()),
            Some(Tok::Op(o)) => Err(format!("unexpected `{o}`")),
            None => Err("unexpected end of expression".to_owned()),
        }
    }
}

impl Cond {
    /// Parse a condition. `select[...]` around it is accepted.
    pub fn parse(s: &str) -> Result<Cond, CondError> {
        let err = |why: String| CondError {
            expr: s.to_owned(),
            why,
        };
        // Trim only what the lexer itself skips: `str::trim` also removes vertical tabs
        // and Unicode blanks, which the lexer rejects inside an expression, so `cpu\u{b}`
        // would parse while `!(cpu\u{b})` did not.
        let blank = |c: char| c.is_ascii_whitespace();
        let mut body = s.trim_matches(blank);
        if let Some(inner) = body
            .strip_prefix("select[")
            .and_then(|r| r.strip_suffix(']'))
        {
            body = inner.trim_matches(blank);
        }
        if let Some(inner) = body.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            body = inner.trim_matches(blank);
        }
        let toks = lex(body).map_err(err)?;
        if toks.is_empty() {
            return Err(err("empty expression".to_owned()));
        }
        if toks.len() > MAX_TOKENS {
            return Err(err(format!("longer than {MAX_TOKENS} tokens")));
        }
        let mut p = Parser {
            toks,
            pos: 0,
            depth: 0,
        };
        let c = p.or().map_err(err)?;
        if p.pos != p.toks.len() {
            return Err(err(format!(
                "unexpected text after the expression (token {})",
                p.pos + 1
            )));
        }
        Ok(c)
    }

    /// The value; `None` when an index it needs has no value.
    fn value(&self, load: &dyn Fn(&str) -> Option<f64>) -> Option<f64> {
        let b = |x: bool| if x { 1.0 } else { 0.0 };
        match self {
            Cond::Num(v) => Some(*v),
            Cond::Index(n) => load(n),
            Cond::Neg(e) => e.value(load).map(|v| -v),
            Cond::Arith(op, l, r) => {
                let (l, r) = (l.value(load)?, r.value(load)?);
                Some(match op {
                    '+' => l + r,
                    '-' => l - r,
                    '*' => l * r,
                    _ => {
                        if r == 0.0 {
                            return None;
                        }
                        l / r
                    }
                })
            }
            Cond::Not(e) => Some(b(!e.holds(load))),
            Cond::And(l, r) => Some(b(l.holds(load) && r.holds(load))),
            Cond::Or(l, r) => Some(b(l.holds(load) || r.holds(load))),
            Cond::Cmp(op, l, r) => {
                let (Some(l), Some(r)) = (l.value(load), r.value(load)) else {
                    return Some(0.0);
                };
                Some(b(match *op {
                    "<" => l < r,
                    "<=" => l <= r,
                    ">" => l > r,
                    ">=" => l >= r,
                    "==" => (l - r).abs() < 1e-9,
                    _ => (l - r).abs() >= 1e-9,
                }))
            }
        }
    }

    /// Does the condition hold for `load` (index name -> value)?
    pub fn holds(&self, load: &dyn Fn(&str) -> Option<f64>) -> bool {
        self.value(load).is_some_and(|v| v != 0.0)
    }

    /// The index names the condition reads.
    pub fn indices(&self, out: &mut Vec<String>) {
        match self {
            Cond::Num(_) => {}
            Cond::Index(n) => {
                if !out.contains(n) {
                    out.push(n.clone());
                }
            }
            Cond::Not(e) | Cond::Neg(e) => e.indices(out),
            Cond::And(l, r) | Cond::Or(l, r) | Cond::Cmp(_, l, r) | Cond::Arith(_, l, r) => {
                l.indices(out);
                r.indices(out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn eval(expr: &str, vals: &[(&str, f64)]) -> bool {
        let m: BTreeMap<String, f64> = vals.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Cond::parse(expr)
            .unwrap_or_else(|e| panic!("{e}"))
            .holds(&|n| m.get(n).copied())
    }

    #[test]
    fn comparisons_and_logic() {
        assert!(eval("r1m > 1.5", &[("r1m", 2.0)]));
        assert!(!eval("r1m > 1.5", &[("r1m", 1.5)]));
        assert!(eval("r1m >= 1.5", &[("r1m", 1.5)]));
        assert!(eval(
            "r1m > 1.5 && (pg > 20 || it < 1)",
            &[("r1m", 2.0), ("pg", 0.0), ("it", 0.5)]
        ));
        assert!(!eval(
            "r1m > 1.5 && (pg > 20 || it < 1)",
            &[("r1m", 2.0), ("pg", 0.0), ("it", 5.0)]
        ));
        assert!(eval("!(ut > 0.5)", &[("ut", 0.2)]));
        assert!(eval(
            "cpu gt 1 and not idle lt 1",
            &[("r1m", 2.0), ("it", 3.0)]
        ));
        assert!(eval(
            "select[mem < 100 || swp < 10]",
            &[("mem", 50.0), ("swp", 99.0)]
        ));
        assert!(eval("r15s + r1m * 2 == 5", &[("r15s", 1.0), ("r1m", 2.0)]));
        assert!(eval("-ls < 0", &[("ls", 1.0)]));
        assert!(eval("gpu > 2", &[("gpu", 3.0)]));
        assert!(eval("R1M > 1", &[("r1m", 3.0)]));
        assert!(eval("r1m = 2", &[("r1m", 2.0)]));
        assert!(eval("r1m != 2", &[("r1m", 2.5)]));
        assert!(eval("1e1 > 9.5", &[]));
    }

    #[test]
    fn missing_values_make_comparisons_false() {
        assert!(!eval("gpu > 2", &[]));
        assert!(eval("!(gpu > 2)", &[]));
        assert!(!eval("r1m / 0 > 1", &[("r1m", 1.0)]));
    }

    #[test]
    fn errors() {
        for bad in ["", "r1m >", "(r1m > 1", "r1m > 1)", "r1m # 2", "r1m > 1 2"] {
            assert!(Cond::parse(bad).is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn blanks_at_the_ends_are_the_blanks_of_the_middle() {
        // Found by fuzzing: a vertical tab or Unicode blank at the end was trimmed while
        // the same character inside `!(...)` was an error.
        for s in ["r1m\u{b}", "r1m\u{a0}", "\u{2003}r1m"] {
            assert_eq!(
                Cond::parse(s).is_ok(),
                Cond::parse(&format!("!({s})")).is_ok(),
                "{s:?}"
            );
        }
        assert!(eval(" \t r1m > 1 \n", &[("r1m", 2.0)]));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep =
            |open: &str, close: &str, n: usize| format!("{}1{}", open.repeat(n), close.repeat(n));
        for s in [
            deep("(", ")", 20_000),
            deep("!", "", 100_000),
            deep("-", "", 100_000),
            deep("not ", "", 100_000),
            format!("1{}", "+1".repeat(100_000)),
        ] {
            assert!(Cond::parse(&s).is_err(), "{}… parsed", &s[..20]);
        }
        // Deep enough for any real condition.
        assert!(eval(&deep("(", ")", MAX_NESTING), &[]));
        assert!(eval(&deep("!!", "", MAX_NESTING / 2), &[]));
        let long = format!("r1m > 0{}", " && r1m > 0".repeat(100));
        assert!(eval(&long, &[("r1m", 1.0)]));
    }

    #[test]
    fn indices_listed() {
        let c = Cond::parse("r1m > 1 && (cpu < 3 || gpu > 0)").unwrap_or_else(|e| panic!("{e}"));
        let mut v = Vec::new();
        c.indices(&mut v);
        assert_eq!(v, vec!["r1m".to_owned(), "gpu".to_owned()]);
    }
}
