//! The select part of a resource requirement (`select[...]` sections and text outside
//! any section, ANDed), for `lsload -R`/`lshosts -R` and for the scheduler: the values a
//! host offers ([`HostValues`]), the tokenizer and [`Select`], which decides per host.
//!
//! The expression is LSF's (daemon-behaviour.md §7): `&& || ! == != > < >= <= + - * /`,
//! the old `:` for AND, `defined(res)`, boolean resources as predicates (`cs`, `server`),
//! string comparisons (`type==LINUX`, `hname!='hostA'`, `model == X`, `type==any`,
//! `type==local`). Numbers are evaluated by the condition parser ([`Cond`]); string
//! comparisons and boolean resources are decided per host first. Run-queue lengths are
//! compared as the caller gives them (effective values, as LSF schedules on them).

use crate::cond::Cond;
use crate::{Config, ResourceKind};
use std::collections::BTreeMap;

/// What one host offers to a select expression.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostValues {
    pub name: String,
    /// Numeric values by canonical name: load indices (run queues effective), static
    /// values (`ncpus maxmem maxswp maxtmp cpuf`), numeric and external resources.
    pub numbers: BTreeMap<String, f64>,
    /// String values: `type model hname status` and string resources.
    pub strings: BTreeMap<String, String>,
    /// Boolean resources the host has (`server` for a server host).
    pub booleans: Vec<String>,
}

impl HostValues {
    pub(crate) fn has(&self, name: &str) -> bool {
        self.numbers.contains_key(&canonical(name))
            || self.strings.contains_key(name)
            || self.booleans.iter().any(|b| b == name)
    }
}

/// Why a resource requirement cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadResReq;

/// Static numeric resources every host has (LSF's built-in static resources).
pub(crate) const STATIC_NUMERIC: [&str; 10] = [
    "ncpus", "maxmem", "maxswp", "maxtmp", "cpuf", "ndisks", "nprocs", "ncores", "nthreads",
    "rexpri",
];

/// Built-in string resources.
pub(crate) const STATIC_STRING: [&str; 4] = ["type", "model", "hname", "status"];

/// The canonical name of a load index or alias (`cpu` = r1m ...), else the name itself;
/// the names [`Cond`] asks for.
pub fn canonical(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let alias = match lower.as_str() {
        "cpu" => "r1m",
        "login" => "ls",
        "idle" => "it",
        "swap" => "swp",
        other => other,
    };
    match basalt_core::LoadIndex::from_name(alias) {
        Some(i) => i.name().to_owned(),
        None if STATIC_NUMERIC.contains(&lower.as_str()) => lower,
        None => name.to_owned(),
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Word(String),
    Quoted(String),
    Num(String),
    Op(&'static str),
}

pub(crate) fn lex(s: &str) -> Result<Vec<Tok>, BadResReq> {
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
        if let Some(op) = ["&&", "||", "==", "!=", ">=", "<="]
            .into_iter()
            .find(|o| *o == two)
        {
            out.push(Tok::Op(op));
            i += 2;
            continue;
        }
        if let Some(op) = ["<", ">", "=", "!", "+", "-", "*", "/", "(", ")", ":"]
            .into_iter()
            .find(|o| o.as_bytes()[0] == c)
        {
            out.push(Tok::Op(op));
            i += 1;
            continue;
        }
        match c {
            b'\'' | b'"' => {
                let end = s[i + 1..].find(c as char).ok_or(BadResReq)?;
                out.push(Tok::Quoted(s[i + 1..i + 1 + end].to_owned()));
                i += end + 2;
            }
            b'0'..=b'9' | b'.' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                    // An exponent sign (1e-3) belongs to the number.
                    if (b[i] == b'e' || b[i] == b'E') && matches!(b.get(i + 1), Some(b'+' | b'-')) {
                        i += 1;
                    }
                    i += 1;
                }
                out.push(Tok::Num(s[start..i].to_owned()));
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.')
                {
                    i += 1;
                }
                out.push(Tok::Word(s[start..i].to_owned()));
            }
            _ => return Err(BadResReq),
        }
    }
    Ok(out)
}

/// The kind of a resource name in a select expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    Numeric,
    String,
    Boolean,
}

/// The kinds of the resource names of lsf.shared (and `server`, a boolean every server
/// host has), for [`Select::parse_with`].
pub fn resource_kinds(config: &Config) -> BTreeMap<String, NameKind> {
    let mut kinds: BTreeMap<String, NameKind> = BTreeMap::new();
    for r in &config.shared.resources {
        let k = match r.kind {
            ResourceKind::Numeric => NameKind::Numeric,
            ResourceKind::String => NameKind::String,
            ResourceKind::Boolean => NameKind::Boolean,
        };
        kinds.insert(r.name.clone(), k);
    }
    kinds.insert("server".into(), NameKind::Boolean);
    kinds
}

/// A parsed `-R` requirement: its select part, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    pub(crate) toks: Vec<Tok>,
    /// Resource kinds from lsf.shared, by name.
    pub(crate) kinds: BTreeMap<String, NameKind>,
}

impl Select {
    /// Parse `res_req`; `extra_numeric` are other numeric names hosts report (ELIM
    /// indices). An empty select part selects every host.
    pub fn parse(
        res_req: &str,
        config: &Config,
        extra_numeric: &[String],
    ) -> Result<Select, BadResReq> {
        let mut kinds = resource_kinds(config);
        for n in extra_numeric {
            kinds.entry(n.clone()).or_insert(NameKind::Numeric);
        }
        Select::parse_with(res_req, kinds)
    }

    /// Parse `res_req` with the resource names' kinds given ([`resource_kinds`]).
    pub fn parse_with(
        res_req: &str,
        kinds: BTreeMap<String, NameKind>,
    ) -> Result<Select, BadResReq> {
        if res_req.len() > 4096 || !crate::resreq::brackets_closed(res_req) {
            return Err(BadResReq);
        }
        let (select, _) = crate::resreq::sections(res_req);
        let body = match select.len() {
            0 => String::new(),
            1 => select[0].clone(),
            _ => select
                .iter()
                .map(|s| format!("({s})"))
                .collect::<Vec<_>>()
                .join(" && "),
        };
        let sel = Select {
            toks: lex(&body)?,
            kinds,
        };
        // Check the expression once, against a host with no values.
        if !sel.toks.is_empty() {
            let text = sel.rewrite(&HostValues::default(), None)?;
            Cond::parse(&text).map_err(|_| BadResReq)?;
        }
        Ok(sel)
    }

    /// True when the requirement has no select part (it selects every host).
    pub fn is_empty(&self) -> bool {
        self.toks.is_empty()
    }

    /// Does the expression name `type` or another string or Boolean resource? Then a
    /// job's default `type==local` does not apply (LSF: "the default is type==local
    /// unless a string or Boolean resource is specified, in which case it is
    /// type==any").
    pub fn names_string_or_boolean(&self) -> bool {
        self.toks.iter().any(|t| {
            matches!(t, Tok::Word(w)
                if matches!(self.kind(w), Some(NameKind::String | NameKind::Boolean)))
        })
    }

    /// Does the expression compare with `local` (`type==local`, `model==local`), which
    /// needs the submission host's values?
    pub fn uses_local(&self) -> bool {
        self.toks
            .iter()
            .any(|t| matches!(t, Tok::Word(w) if w == "local"))
    }

    pub(crate) fn kind(&self, name: &str) -> Option<NameKind> {
        if STATIC_STRING.contains(&name) {
            return Some(NameKind::String);
        }
        let c = canonical(name);
        if basalt_core::LoadIndex::from_name(&c).is_some() || STATIC_NUMERIC.contains(&c.as_str()) {
            return Some(NameKind::Numeric);
        }
        self.kinds.get(name).copied()
    }

    /// The value of one side of a string comparison: a string resource's value on the
    /// host (None when the host has none), else the literal text.
    pub(crate) fn string_side(&self, t: &Tok, h: &HostValues) -> Option<Option<String>> {
        match t {
            Tok::Quoted(s) => Some(Some(s.clone())),
            Tok::Word(w) if self.kind(w) == Some(NameKind::String) => {
                Some(h.strings.get(w).cloned())
            }
            Tok::Word(w) if self.kind(w).is_none() => Some(Some(w.clone())),
            Tok::Num(n) => Some(Some(n.clone())),
            _ => None,
        }
    }

    pub(crate) fn is_string_name(&self, t: &Tok) -> bool {
        matches!(t, Tok::Word(w) if self.kind(w) == Some(NameKind::String))
    }

    /// Decide `a op b` where one side is a string resource.
    pub(crate) fn compare(
        &self,
        a: &Tok,
        op: &str,
        b: &Tok,
        h: &HostValues,
        local: Option<&HostValues>,
    ) -> Result<bool, BadResReq> {
        let (res, lit) = if self.is_string_name(a) {
            (a, b)
        } else {
            (b, a)
        };
        let Tok::Word(res_name) = res else {
            return Err(BadResReq);
        };
        let have = h.strings.get(res_name);
        let want = match lit {
            Tok::Word(w) if w == "any" && (res_name == "type" || res_name == "model") => {
                return Ok(op != "!=" && have.is_some());
            }
            Tok::Word(w) if w == "local" && (res_name == "type" || res_name == "model") => {
                local.and_then(|l| l.strings.get(res_name)).cloned()
            }
            _ => self.string_side(lit, h).ok_or(BadResReq)?,
        };
        let (Some(have), Some(want)) = (have, want) else {
            return Ok(false);
        };
        let equal = if res_name == "hname" {
            basalt_core::same_host(have, &want)
        } else {
            *have == want
        };
        Ok(if op == "!=" { !equal } else { equal })
    }

    /// The expression for one host, with string comparisons, `defined()` and boolean
    /// resources replaced by 1 or 0, ready for [`Cond`].
    pub(crate) fn rewrite(
        &self,
        h: &HostValues,
        local: Option<&HostValues>,
    ) -> Result<String, BadResReq> {
        let t = &self.toks;
        let mut out: Vec<String> = Vec::new();
        let bit = |b: bool| if b { "1" } else { "0" }.to_owned();
        let mut i = 0;
        while i < t.len() {
            if let (Tok::Word(w), Some(Tok::Op("(")), Some(Tok::Word(n)), Some(Tok::Op(")"))) =
                (&t[i], t.get(i + 1), t.get(i + 2), t.get(i + 3))
                && w == "defined"
            {
                if self.kind(n).is_none() {
                    return Err(BadResReq);
                }
                out.push(bit(h.has(n)));
                i += 4;
                continue;
            }
            if let (Some(Tok::Op(op @ ("==" | "!=" | "="))), Some(b)) = (t.get(i + 1), t.get(i + 2))
                && (self.is_string_name(&t[i]) || self.is_string_name(b))
            {
                out.push(bit(self.compare(&t[i], op, b, h, local)?));
                i += 3;
                continue;
            }
            match &t[i] {
                Tok::Word(w) => {
                    let lower = w.to_ascii_lowercase();
                    let keyword = ["and", "or", "not", "lt", "le", "gt", "ge", "eq", "ne"]
                        .contains(&lower.as_str());
                    match self.kind(w) {
                        _ if keyword => out.push(w.clone()),
                        Some(NameKind::Numeric) => {
                            // Cond's names: letters, digits and `_` only.
                            if !w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                                return Err(BadResReq);
                            }
                            out.push(canonical(w));
                        }
                        Some(NameKind::Boolean) => out.push(bit(h.booleans.iter().any(|b| b == w))),
                        Some(NameKind::String) | None => return Err(BadResReq),
                    }
                }
                Tok::Num(n) => out.push(number_in_mb(n).ok_or(BadResReq)?),
                Tok::Quoted(_) => return Err(BadResReq),
                Tok::Op(":") => out.push("&&".into()),
                Tok::Op(o) => out.push((*o).to_owned()),
            }
            i += 1;
        }
        Ok(out.join(" "))
    }

    /// Does `h` satisfy the requirement? `local` is the host the command runs on (for
    /// `type==local`).
    pub fn matches(&self, h: &HostValues, local: Option<&HostValues>) -> bool {
        if self.toks.is_empty() {
            return true;
        }
        let Ok(text) = self.rewrite(h, local) else {
            return false;
        };
        match Cond::parse(&text) {
            Ok(c) => c.holds(&|n| h.numbers.get(n).copied()),
            Err(_) => false,
        }
    }
}

/// A number of a select expression; one with a size unit (`8192MB`, `4G`, `512KB`) is
/// turned into MB, the unit of `mem`, `swp` and `tmp`.
pub fn number_in_mb(n: &str) -> Option<String> {
    let split = n
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(n.len());
    let (num, unit) = n.split_at(split);
    let factor = match unit.to_ascii_uppercase().as_str() {
        "" => return num.parse::<f64>().ok().map(|_| num.to_owned()),
        "K" | "KB" => 1.0 / 1024.0,
        "M" | "MB" => 1.0,
        "G" | "GB" => 1024.0,
        "T" | "TB" => 1024.0 * 1024.0,
        _ => return None,
    };
    let v: f64 = num.parse().ok()?;
    let mb = v * factor;
    mb.is_finite().then(|| format!("{mb}"))
}
