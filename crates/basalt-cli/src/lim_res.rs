//! Resource requirements and shared resources for the host commands.
//!
//! * `lsload -R res_req` and `lshosts -R res_req` keep the hosts whose values satisfy the
//!   select part of `res_req` ([`Select`]): `select[...]` sections and text outside any
//!   section, ANDed. The expression is LSF's (daemon-behaviour.md §7): `&& || ! == != > <
//!   >= <= + - * /`, the old `:` for AND, `defined(res)`, boolean resources as predicates
//!   (`cs`, `server`), string comparisons (`type==LINUX`, `hname!='hostA'`, `model == X`,
//!   `type==any`, `type==local`). Numbers are evaluated by basalt-config's condition
//!   parser ([`Cond`]); string comparisons and boolean resources are decided per host first.
//!   Run-queue lengths are compared as effective values, as LSF schedules on them.
//!   `order[]`, `rusage[]` and the other sections are accepted and do not filter.
//! * `lsload -s`, `lshosts -s` and `bhosts -s` list the shared resources of the
//!   ResourceMap section of `lsf.cluster.<cluster>` ([`shared_instances`]) in LSF's
//!   layouts ([`shared_table`], [`batch_shared_table`]).

use basalt_config::cond::Cond;
use basalt_config::{Config, ResourceKind};
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
    fn has(&self, name: &str) -> bool {
        self.numbers.contains_key(&canonical(name))
            || self.strings.contains_key(name)
            || self.booleans.iter().any(|b| b == name)
    }
}

/// Why a resource requirement cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadResReq;

/// Static numeric resources every host has (LSF's built-in static resources).
const STATIC_NUMERIC: [&str; 10] = [
    "ncpus", "maxmem", "maxswp", "maxtmp", "cpuf", "ndisks", "nprocs", "ncores", "nthreads",
    "rexpri",
];

/// Built-in string resources.
const STATIC_STRING: [&str; 4] = ["type", "model", "hname", "status"];

/// The canonical name of a load index or alias (`cpu` = r1m ...), else the name itself;
/// the names [`Cond`] asks for.
fn canonical(name: &str) -> String {
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
enum Tok {
    Word(String),
    Quoted(String),
    Num(String),
    Op(&'static str),
}

fn lex(s: &str) -> Result<Vec<Tok>, BadResReq> {
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
enum NameKind {
    Numeric,
    String,
    Boolean,
}

/// A parsed `-R` requirement: its select part, checked.
#[derive(Debug, Clone)]
pub struct Select {
    toks: Vec<Tok>,
    /// Resource kinds from lsf.shared, by name.
    kinds: BTreeMap<String, NameKind>,
}

impl Select {
    /// Parse `res_req`; `extra_numeric` are other numeric names hosts report (ELIM
    /// indices). An empty select part selects every host.
    pub fn parse(
        res_req: &str,
        config: &Config,
        extra_numeric: &[String],
    ) -> Result<Select, BadResReq> {
        if res_req.len() > 4096 {
            return Err(BadResReq);
        }
        let (select, _) = crate::batch::resreq::sections(res_req);
        let body = match select.len() {
            0 => String::new(),
            1 => select[0].clone(),
            _ => select
                .iter()
                .map(|s| format!("({s})"))
                .collect::<Vec<_>>()
                .join(" && "),
        };
        let mut kinds: BTreeMap<String, NameKind> = BTreeMap::new();
        for r in &config.shared.resources {
            let k = match r.kind {
                ResourceKind::Numeric => NameKind::Numeric,
                ResourceKind::String => NameKind::String,
                ResourceKind::Boolean => NameKind::Boolean,
            };
            kinds.insert(r.name.clone(), k);
        }
        for n in extra_numeric {
            kinds.entry(n.clone()).or_insert(NameKind::Numeric);
        }
        kinds.insert("server".into(), NameKind::Boolean);
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

    fn kind(&self, name: &str) -> Option<NameKind> {
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
    fn string_side(&self, t: &Tok, h: &HostValues) -> Option<Option<String>> {
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

    fn is_string_name(&self, t: &Tok) -> bool {
        matches!(t, Tok::Word(w) if self.kind(w) == Some(NameKind::String))
    }

    /// Decide `a op b` where one side is a string resource.
    fn compare(
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
    fn rewrite(&self, h: &HostValues, local: Option<&HostValues>) -> Result<String, BadResReq> {
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

/// One instance of a shared resource: a value shared by a set of hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedInstance {
    pub resource: String,
    pub kind: ResourceKind,
    /// Dynamic: its value comes from an ELIM (INTERVAL in lsf.shared).
    pub dynamic: bool,
    /// The configured value (`value@[...]`) of a static resource.
    pub value: Option<String>,
    pub hosts: Vec<String>,
}

/// The instances of the ResourceMap section, in file order. `LOCATION` is
/// `[value@][host ...]` one or more times: `all` is every host of the cluster
/// (`~host` leaves one out), `default` an instance on each host.
pub fn shared_instances(config: &Config) -> Vec<SharedInstance> {
    let all: Vec<String> = config
        .cluster
        .hosts
        .iter()
        .map(|h| h.name.clone())
        .collect();
    let mut out = Vec::new();
    for (name, location) in &config.cluster.resource_map {
        let Some(def) = config.shared.resource(name) else {
            continue;
        };
        let mut rest = location
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim();
        while let Some(open) = rest.find('[') {
            let value = rest[..open].trim().trim_end_matches('@').trim();
            let Some(close) = rest[open..].find(']') else {
                break;
            };
            let words: Vec<&str> = rest[open + 1..open + close].split_whitespace().collect();
            rest = &rest[open + close + 1..];
            let mut hosts: Vec<String> = Vec::new();
            let mut per_host = false;
            for w in &words {
                match *w {
                    "all" => hosts.extend(all.iter().cloned()),
                    "default" => {
                        per_host = true;
                        hosts.extend(all.iter().cloned());
                    }
                    _ => {}
                }
            }
            for w in &words {
                match w.strip_prefix('~') {
                    Some(x) => hosts.retain(|h| !basalt_core::same_host(h, x)),
                    None if *w == "all" || *w == "default" => {}
                    None => {
                        if !hosts.iter().any(|h| basalt_core::same_host(h, w)) {
                            hosts.push((*w).to_owned());
                        }
                    }
                }
            }
            let inst = |hosts: Vec<String>| SharedInstance {
                resource: def.name.clone(),
                kind: def.kind,
                dynamic: def.interval.is_some(),
                value: (!value.is_empty()).then(|| value.to_owned()),
                hosts,
            };
            if per_host {
                out.extend(hosts.into_iter().map(|h| inst(vec![h])));
            } else {
                out.push(inst(hosts));
            }
        }
    }
    out
}

/// Which shared resources a `-s` listing shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedKind {
    /// `lshosts -s`: static numeric and string resources.
    Static,
    /// `lsload -s`: dynamic resources.
    Dynamic,
}

/// The instances `-s` shows, restricted to `names` when given. Err(name) for a name
/// that is not a shared resource (`Bad resource name`).
pub fn select_instances<'a>(
    all: &'a [SharedInstance],
    names: &[String],
    keep: impl Fn(&SharedInstance) -> bool,
) -> Result<Vec<&'a SharedInstance>, String> {
    if let Some(bad) = names
        .iter()
        .find(|n| !all.iter().any(|i| i.resource == **n))
    {
        return Err(bad.clone());
    }
    Ok(all
        .iter()
        .filter(|i| names.is_empty() || names.contains(&i.resource))
        .filter(|i| keep(i))
        .collect())
}

/// Does `-s` of this kind show the instance?
pub fn shown_by(kind: SharedKind, i: &SharedInstance) -> bool {
    match kind {
        SharedKind::Static => !i.dynamic && i.kind != ResourceKind::Boolean,
        SharedKind::Dynamic => i.dynamic,
    }
}

/// The host list of a `-s` row after the columns ending at `pos`: `name ` each, wrapped
/// before column 80 onto lines indented by 52 spaces.
fn host_list(out: &mut String, hosts: &[String], mut pos: usize) {
    for h in hosts {
        pos += h.len() + 1;
        if pos > 80 {
            out.push('\n');
            out.push_str(&" ".repeat(52));
            pos = 52 + h.len() + 1;
        }
        out.push_str(h);
        out.push(' ');
    }
    out.push('\n');
}

/// `lsload -s` / `lshosts -s`: `RESOURCE VALUE LOCATION`; `value_of` gives an instance's
/// value. With nothing to show, LSF's `No static|dynamic shared resources defined `.
pub fn shared_table(
    kind: SharedKind,
    instances: &[&SharedInstance],
    value_of: impl Fn(&SharedInstance) -> String,
) -> String {
    if instances.is_empty() {
        return match kind {
            SharedKind::Static => "No static shared resources defined \n".to_owned(),
            SharedKind::Dynamic => "No dynamic shared resources defined \n".to_owned(),
        };
    }
    let mut out = format!("{:<25}{:>20}{:>15}\n", "RESOURCE", "VALUE", "LOCATION");
    for i in instances {
        let value = value_of(i);
        let pos = if value.len() <= 20 {
            out.push_str(&format!("{:<25}{:>20}       ", i.resource, value));
            52
        } else {
            out.push_str(&format!("{:<25}{:>20}  ", i.resource, value));
            25 + value.len() + 2
        };
        host_list(&mut out, &i.hosts, pos);
    }
    out
}

/// `bhosts -s`: `RESOURCE TOTAL RESERVED LOCATION` for the numeric shared resources.
/// Basalt reserves no shared resource, so RESERVED is 0.0.
pub fn batch_shared_table(
    instances: &[&SharedInstance],
    value_of: impl Fn(&SharedInstance) -> String,
) -> String {
    let mut out = format!(
        "{:<20}{:>10}{:>15}{:>15}\n",
        "RESOURCE", "TOTAL", "RESERVED", "LOCATION"
    );
    for i in instances.iter().filter(|i| i.kind == ResourceKind::Numeric) {
        out.push_str(&format!(
            "{:<20}{:>10}{:>15}       ",
            i.resource,
            value_of(i),
            "0.0"
        ));
        host_list(&mut out, &i.hosts, 52);
    }
    out
}

/// A number of a select expression; one with a size unit (`8192MB`, `4G`, `512KB`) is
/// turned into MB, the unit of `mem`, `swp` and `tmp`.
fn number_in_mb(n: &str) -> Option<String> {
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

/// A value as an ELIM reports it: integers without a fraction.
pub fn number_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use basalt_config::{ClusterHost, ResourceDef};

    fn resource(name: &str, kind: ResourceKind, interval: Option<u32>) -> ResourceDef {
        ResourceDef {
            name: name.into(),
            kind,
            interval,
            increasing: None,
            description: String::new(),
        }
    }

    /// A configuration with hosts `hosts`, lsf.shared resources `cs` (Boolean), `gpu`
    /// (Numeric), `licA` (static Numeric), `os` (String), `scratch` (dynamic Numeric),
    /// and the ResourceMap rows `map`.
    pub(crate) fn config(hosts: &[&str], map: &[(&str, &str)]) -> Config {
        let host = |name: &str| ClusterHost {
            name: name.into(),
            model: None,
            host_type: None,
            server: true,
            resources: Vec::new(),
            run_window: None,
            busy_thresholds: BTreeMap::new(),
            address: None,
            line: 1,
        };
        let mut cluster = basalt_config::ClusterFile {
            name: "basalt".into(),
            hosts: hosts.iter().map(|h| host(h)).collect(),
            ..Default::default()
        };
        cluster.resource_map = map
            .iter()
            .map(|(n, l)| ((*n).to_owned(), (*l).to_owned()))
            .collect();
        Config {
            envdir: "/nonexistent".into(),
            lsf_conf: Default::default(),
            confdir: "/nonexistent".into(),
            cluster_name: "basalt".into(),
            shared: basalt_config::Shared {
                resources: vec![
                    resource("cs", ResourceKind::Boolean, None),
                    resource("gpu", ResourceKind::Numeric, None),
                    resource("licA", ResourceKind::Numeric, None),
                    resource("os", ResourceKind::String, None),
                    resource("scratch", ResourceKind::Numeric, Some(60)),
                ],
                ..Default::default()
            },
            cluster,
            batch: Default::default(),
        }
    }

    fn values(
        name: &str,
        host_type: &str,
        numbers: &[(&str, f64)],
        booleans: &[&str],
    ) -> HostValues {
        HostValues {
            name: name.into(),
            numbers: numbers.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
            strings: [
                ("hname", name),
                ("type", host_type),
                ("model", "PC"),
                ("status", "ok"),
            ]
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
            booleans: booleans.iter().map(|b| (*b).to_owned()).collect(),
        }
    }

    /// The names of the hosts `res_req` selects, `local` being the command's host.
    fn selected(res_req: &str, local: usize) -> Result<Vec<String>, BadResReq> {
        let cfg = config(&["hostA", "hostB"], &[]);
        let hosts = [
            values(
                "hostA",
                "LINUX",
                &[("mem", 2000.0), ("ncpus", 4.0), ("r1m", 0.5), ("gpu", 2.0)],
                &["cs", "server"],
            ),
            values(
                "hostB",
                "AIX",
                &[("mem", 100.0), ("ncpus", 1.0)],
                &["server"],
            ),
        ];
        let sel = Select::parse(res_req, &cfg, &[])?;
        Ok(hosts
            .iter()
            .filter(|h| sel.matches(h, hosts.get(local)))
            .map(|h| h.name.clone())
            .collect())
    }

    fn names(v: &[&str]) -> Result<Vec<String>, BadResReq> {
        Ok(v.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn select_filters_hosts_on_load_static_string_and_boolean_values() {
        assert_eq!(selected("mem>1000", 0), names(&["hostA"]));
        assert_eq!(selected("select[type==AIX]", 0), names(&["hostB"]));
        assert_eq!(selected("select[type == \"AIX\"]", 0), names(&["hostB"]));
        assert_eq!(selected("hname!='hostA'", 0), names(&["hostB"]));
        assert_eq!(selected("cs", 0), names(&["hostA"]));
        assert_eq!(selected("!cs && mem < 500", 0), names(&["hostB"]));
        assert_eq!(selected("type==any", 0), names(&["hostA", "hostB"]));
        assert_eq!(selected("type==local", 1), names(&["hostB"]));
        assert_eq!(selected("defined(gpu)", 0), names(&["hostA"]));
        assert_eq!(selected("select[mem>=1GB]", 0), names(&["hostA"]));
        // Old syntax: `:` is AND; aliases of the built-in indices.
        assert_eq!(selected("mem>50:ncpus>=4", 0), names(&["hostA"]));
        assert_eq!(selected("cpu < 1", 0), names(&["hostA"]));
        // Sections other than select[] do not filter; several select parts are ANDed.
        assert_eq!(
            selected(
                "select[mem>50] order[r15s] rusage[mem=10] select[server]",
                0
            ),
            names(&["hostA", "hostB"])
        );
        assert_eq!(selected("server && gpu > 1", 0), names(&["hostA"]));
        assert_eq!(selected("", 0), names(&["hostA", "hostB"]));
    }

    #[test]
    fn malformed_or_unknown_select_expressions_are_refused() {
        for bad in [
            "mem >",
            "(mem > 1",
            "nosuchres > 1",
            "type > 3",
            "'LINUX'",
            "mem > 'x'",
            "defined(nosuchres)",
            "mem > 1XB",
            "mem $ 1",
        ] {
            assert_eq!(selected(bad, 0), Err(BadResReq), "{bad}");
        }
    }

    #[test]
    fn resource_map_locations_become_shared_instances() {
        let cfg = config(
            &["hostA", "hostB", "hostC"],
            &[
                ("licA", "5@[hostA hostB] 3@[hostC]"),
                ("scratch", "[all ~hostB]"),
                ("os", "(linux@[default])"),
            ],
        );
        let got: Vec<(String, Option<String>, Vec<String>, bool)> = shared_instances(&cfg)
            .into_iter()
            .map(|i| (i.resource, i.value, i.hosts, i.dynamic))
            .collect();
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            got,
            vec![
                (
                    "licA".into(),
                    Some("5".into()),
                    s(&["hostA", "hostB"]),
                    false
                ),
                ("licA".into(), Some("3".into()), s(&["hostC"]), false),
                ("scratch".into(), None, s(&["hostA", "hostC"]), true),
                ("os".into(), Some("linux".into()), s(&["hostA"]), false),
                ("os".into(), Some("linux".into()), s(&["hostB"]), false),
                ("os".into(), Some("linux".into()), s(&["hostC"]), false),
            ]
        );
    }

    fn sp(n: usize) -> String {
        " ".repeat(n)
    }

    #[test]
    fn shared_resource_tables_have_lsf_layouts() {
        let cfg = config(
            &["hostA", "hostB"],
            &[("licA", "5@[hostA hostB]"), ("scratch", "[all]")],
        );
        let all = shared_instances(&cfg);
        let statics =
            select_instances(&all, &[], |i| shown_by(SharedKind::Static, i)).unwrap_or_default();
        assert_eq!(
            shared_table(SharedKind::Static, &statics, |i| i
                .value
                .clone()
                .unwrap_or_default()),
            format!(
                "RESOURCE{}VALUE{}LOCATION\nlicA{}5{}hostA hostB \n",
                sp(32),
                sp(7),
                sp(40),
                sp(7)
            )
        );
        let dynamic =
            select_instances(&all, &[], |i| shown_by(SharedKind::Dynamic, i)).unwrap_or_default();
        assert_eq!(
            shared_table(SharedKind::Dynamic, &dynamic, |_| "120".into()),
            format!(
                "RESOURCE{}VALUE{}LOCATION\nscratch{}120{}hostA hostB \n",
                sp(32),
                sp(7),
                sp(35),
                sp(7)
            )
        );
        assert_eq!(
            shared_table(SharedKind::Static, &[], |_| String::new()),
            "No static shared resources defined \n"
        );
        assert_eq!(
            shared_table(SharedKind::Dynamic, &[], |_| String::new()),
            "No dynamic shared resources defined \n"
        );
        let every = select_instances(&all, &[], |_| true).unwrap_or_default();
        assert_eq!(
            batch_shared_table(&every, |i| i.value.clone().unwrap_or_else(|| "-".into())),
            format!(
                "RESOURCE{}TOTAL{}RESERVED{}LOCATION\n\
                 licA{}5{}0.0{}hostA hostB \n\
                 scratch{}-{}0.0{}hostA hostB \n",
                sp(17),
                sp(7),
                sp(7),
                sp(25),
                sp(12),
                sp(7),
                sp(22),
                sp(12),
                sp(7)
            )
        );
        assert_eq!(
            select_instances(&all, &["nosuch".to_string()], |_| true).map(|v| v.len()),
            Err("nosuch".to_string())
        );
    }

    #[test]
    fn long_host_lists_wrap_before_column_80_under_the_location_column() {
        let hosts: Vec<String> = (0..6).map(|i| format!("hostname{i}")).collect();
        let host_refs: Vec<&str> = hosts.iter().map(String::as_str).collect();
        let cfg = config(&host_refs, &[("licA", "2@[all]")]);
        let all = shared_instances(&cfg);
        let shown: Vec<&SharedInstance> = all.iter().collect();
        let text = shared_table(SharedKind::Static, &shown, |_| "2".into());
        let lines: Vec<&str> = text.lines().collect();
        // 52 columns, then two 10-column names a line.
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines.iter().all(|l| l.len() <= 80), "{text}");
        assert!(lines[1].ends_with("       hostname0 hostname1 "), "{text}");
        assert_eq!(lines[3], format!("{}hostname4 hostname5 ", sp(52)));
    }
}
