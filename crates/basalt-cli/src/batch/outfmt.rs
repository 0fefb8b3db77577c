//! LSF 10's custom output, shared by `bjobs`, `bhosts` and `bqueues`: `-o "field[:[-]width]
//! ... [delimiter='c']"` (cli-contract.md §4.3), `-noheader`, and the `-json` document
//! `{"COMMAND":"<cmd>","<COUNT>":n,"RECORDS":[...]}` with upper-case field names and
//! string values (§4.4). Each command has its own field table ([`FieldDef`]); parsing,
//! the column layout and the document are here.
//!
//! Layout: a field without a width prints its value and one space, with no blank at the
//! end of the line; `name:` takes the field's recommended width, `name:N` pads or cuts
//! to N (LSF's `*` cut), `name:-N` aligns right; `delimiter='c'` joins the cells with
//! `c`. A field with no value prints `-` (`""` in JSON). `all` names every field.

use super::text::star_cut;

/// A field `-o` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDef {
    /// Canonical name (lower case).
    pub name: &'static str,
    /// Header / JSON key.
    pub header: &'static str,
    /// Recommended width (`name:`).
    pub width: usize,
    pub aliases: &'static [&'static str],
}

/// A [`FieldDef`] (for the field tables).
pub const fn f(
    name: &'static str,
    header: &'static str,
    width: usize,
    aliases: &'static [&'static str],
) -> FieldDef {
    FieldDef {
        name,
        header,
        width,
        aliases,
    }
}

/// Look a field up in `fields` by name or alias (case-insensitive).
pub fn find(fields: &'static [FieldDef], name: &str) -> Option<&'static FieldDef> {
    let n = name.to_ascii_lowercase();
    fields
        .iter()
        .find(|f| f.name == n || f.aliases.contains(&n.as_str()))
}

/// One requested column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub def: &'static FieldDef,
    /// None = un-sized (value + one space).
    pub width: Option<usize>,
    /// `name:-N`: right-aligned.
    pub right: bool,
}

/// A parsed `-o` string.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Format {
    pub columns: Vec<Column>,
    pub delimiter: Option<String>,
}

impl Format {
    /// The un-sized columns of these fields (a command's default `-json` fields).
    pub fn of(fields: &'static [FieldDef], names: &[&str]) -> Format {
        Format {
            columns: names
                .iter()
                .filter_map(|n| find(fields, n))
                .map(|def| Column {
                    def,
                    width: None,
                    right: false,
                })
                .collect(),
            delimiter: None,
        }
    }

    /// The fields of the columns, in order.
    pub fn fields(&self) -> Vec<&'static FieldDef> {
        self.columns.iter().map(|c| c.def).collect()
    }
}

/// Parse `-o "jobid stat:7 name:-10 delimiter=','"` against `fields`.
pub fn parse(s: &str, fields: &'static [FieldDef]) -> Result<Format, String> {
    let mut fmt = Format::default();
    let mut rest = s.trim();
    // delimiter='c' may contain a blank, so find it first.
    if let Some(pos) = rest.to_ascii_lowercase().find("delimiter=") {
        let value = rest[pos + "delimiter=".len()..].trim();
        let d = if let Some(q) = value.chars().next().filter(|c| *c == '\'' || *c == '"') {
            let inner = &value[1..];
            let end = inner
                .find(q)
                .ok_or_else(|| format!("unterminated delimiter: {value}"))?;
            &inner[..end]
        } else {
            value.split_whitespace().next().unwrap_or("")
        };
        if d.is_empty() {
            return Err("empty delimiter".into());
        }
        fmt.delimiter = Some(d.to_owned());
        rest = rest[..pos].trim();
    }
    for spec in rest.split_whitespace() {
        let (name, width) = match spec.split_once(':') {
            Some((n, w)) => (n, Some(w)),
            None => (spec, None),
        };
        let defs: Vec<&'static FieldDef> = if name.eq_ignore_ascii_case("all") {
            fields.iter().collect()
        } else {
            vec![find(fields, name).ok_or_else(|| format!("unknown field name <{name}>"))?]
        };
        for def in defs {
            let (width, right) = match width {
                None => (None, false),
                Some("") => (Some(def.width), false),
                Some(w) => {
                    let (digits, right) = match w.strip_prefix('-') {
                        Some(d) => (d, true),
                        None => (w, false),
                    };
                    // LSF allows a unit after a second colon (mem:10:G); the width is first.
                    let digits = digits.split(':').next().unwrap_or(digits);
                    let n: usize = digits
                        .parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| format!("bad width in <{spec}>"))?;
                    (Some(n), right)
                }
            };
            fmt.columns.push(Column { def, width, right });
        }
    }
    if fmt.columns.is_empty() {
        return Err("no field names".into());
    }
    Ok(fmt)
}

/// A header cell of column `c`.
pub fn header_cell(value: &str, c: &Column) -> String {
    match c.width {
        None => value.to_owned(),
        Some(w) if c.right => format!("{value:>w$.w$}"),
        Some(w) => format!("{value:<w$.w$}"),
    }
}

/// A value cell of column `c` (a value too long is cut LSF's way: `*` and its end).
pub fn cell(value: &str, c: &Column) -> String {
    match c.width {
        None => value.to_owned(),
        Some(w) if c.right => format!("{:>w$}", star_cut(value, w)),
        Some(w) => format!("{:<w$}", star_cut(value, w)),
    }
}

/// The cells of one line, joined by the delimiter or one blank (no blank at the end).
pub fn join_cells(cells: Vec<String>, fmt: &Format) -> String {
    match &fmt.delimiter {
        Some(d) => cells.join(d),
        None => cells.join(" ").trim_end_matches(' ').to_owned(),
    }
}

/// The `-o` table of `rows`: a header (unless `noheader`), then a line per row with the
/// value `value(row, field name)` of each column (`-` for none).
pub fn table<T>(
    rows: &[T],
    fmt: &Format,
    noheader: bool,
    value: impl Fn(&T, &str) -> String,
) -> String {
    let mut out = String::new();
    if !noheader {
        let cells = fmt
            .columns
            .iter()
            .map(|c| header_cell(c.def.header, c))
            .collect();
        out.push_str(&join_cells(cells, fmt));
        out.push('\n');
    }
    for r in rows {
        let cells = fmt
            .columns
            .iter()
            .map(|c| {
                let v = value(r, c.def.name);
                cell(if v.is_empty() { "-" } else { &v }, c)
            })
            .collect();
        out.push_str(&join_cells(cells, fmt));
        out.push('\n');
    }
    out
}

/// A JSON string.
pub fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

/// One `-json` record: `{"FIELD":"value",...}` of `fields` in order.
pub fn json_record(fields: &[&FieldDef], value: impl Fn(&str) -> String) -> String {
    let kv: Vec<String> = fields
        .iter()
        .map(|f| format!("{}:{}", json_str(f.header), json_str(&value(f.name))))
        .collect();
    format!("{{{}}}", kv.join(","))
}

/// The `-json` document of `command`: `{"COMMAND":"bhosts","HOSTS":n,"RECORDS":[` then a
/// record per line, `]}`.
pub fn json_document(command: &str, count_key: &str, records: &[String]) -> String {
    if records.is_empty() {
        return format!("{{\"COMMAND\":\"{command}\",\"{count_key}\":0,\"RECORDS\":[]}}\n");
    }
    let body: Vec<String> = records.iter().map(|r| format!("  {r}")).collect();
    format!(
        "{{\"COMMAND\":\"{command}\",\"{count_key}\":{},\"RECORDS\":[\n{}]}}\n",
        records.len(),
        body.join(",\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: &[FieldDef] = &[
        f("host_name", "HOST_NAME", 20, &["hname"]),
        f("max", "MAX", 10, &[]),
    ];

    #[test]
    fn widths_alignment_all_and_the_document() {
        let fmt = parse("HNAME:6 max:-4", FIELDS).expect("parse");
        let rows = [("hostA", "2"), ("a-long-name", "")];
        let got = table(&rows, &fmt, false, |r, n| match n {
            "host_name" => r.0.to_owned(),
            _ => r.1.to_owned(),
        });
        assert_eq!(got, "HOST_N  MAX\nhostA     2\n*-name    -\n");
        assert_eq!(parse("all", FIELDS).expect("all").columns.len(), 2);
        assert!(parse("nosuch", FIELDS).is_err());
        let rec = json_record(&fmt.fields(), |n| n.to_uppercase());
        assert_eq!(rec, r#"{"HOST_NAME":"HOST_NAME","MAX":"MAX"}"#);
        assert_eq!(
            json_document("bhosts", "HOSTS", &[rec.clone(), rec]),
            "{\"COMMAND\":\"bhosts\",\"HOSTS\":2,\"RECORDS\":[\n  {\"HOST_NAME\":\"HOST_NAME\",\"MAX\":\"MAX\"},\n  {\"HOST_NAME\":\"HOST_NAME\",\"MAX\":\"MAX\"}]}\n"
        );
        assert_eq!(
            json_document("bqueues", "QUEUES", &[]),
            "{\"COMMAND\":\"bqueues\",\"QUEUES\":0,\"RECORDS\":[]}\n"
        );
    }
}
