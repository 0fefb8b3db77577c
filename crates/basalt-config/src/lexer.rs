//! The lexer shared by every sectioned file (everything except `lsf.conf`):
//! comments, continuation lines, `Begin`/`End` sections, vertical
//! (`KEY = value`) sections and horizontal (header + rows) sections.

use crate::error::Ctx;

/// One logical line: comments removed, continuation lines joined. `no` is the
/// 1-based number of the physical line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub no: usize,
    pub text: String,
}

/// Cut a `#` comment off a line (a `#` inside double quotes is kept).
pub(crate) fn strip_comment(line: &str) -> &str {
    let mut in_quote = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_quote = !in_quote,
            '#' if !in_quote => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Split a file into logical lines: comments stripped, a trailing `\` joins
/// the next line, blank lines dropped.
pub(crate) fn logical_lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut pending: Option<Line> = None;
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let stripped = strip_comment(raw).trim_end();
        let (body, continues) = match stripped.strip_suffix('\\') {
            Some(b) => (b, true),
            None => (stripped, false),
        };
        let mut line = match pending.take() {
            Some(mut l) => {
                let body = body.trim_start();
                if !body.is_empty() {
                    if !l.text.is_empty() {
                        l.text.push(' ');
                    }
                    l.text.push_str(body);
                }
                l
            }
            None => Line {
                no,
                text: body.to_owned(),
            },
        };
        if continues {
            line.text = line.text.trim_end().to_owned();
            pending = Some(line);
        } else if !line.text.trim().is_empty() {
            out.push(line);
        }
    }
    if let Some(l) = pending
        && !l.text.trim().is_empty()
    {
        out.push(l);
    }
    out
}

/// A `Begin <name>` … `End <name>` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section {
    /// The name as written after `Begin`.
    pub name: String,
    /// Line of the `Begin`.
    pub line: usize,
    /// The lines between `Begin` and `End`.
    pub lines: Vec<Line>,
}

impl Section {
    /// True when the section is named `name` (case-insensitive).
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }

    /// A vertical section is one whose first line is `KEY = value`.
    pub fn looks_vertical(&self) -> bool {
        self.lines.first().is_some_and(|l| l.text.contains('='))
    }
}

enum Marker<'a> {
    Begin(&'a str),
    End(&'a str),
}

fn marker(text: &str) -> Option<Marker<'_>> {
    if text.contains('=') {
        return None;
    }
    let mut words = text.split_whitespace();
    let first = words.next()?;
    let name = words.next().unwrap_or("");
    if first.eq_ignore_ascii_case("begin") {
        Some(Marker::Begin(name))
    } else if first.eq_ignore_ascii_case("end") {
        Some(Marker::End(name))
    } else {
        None
    }
}

/// Split logical lines into sections. Text outside sections is ignored.
pub(crate) fn sections(ctx: &mut Ctx<'_>, lines: Vec<Line>) -> Vec<Section> {
    let mut out = Vec::new();
    let mut cur: Option<Section> = None;
    for l in lines {
        match marker(&l.text) {
            Some(Marker::Begin(name)) => {
                if let Some(open) = cur.take() {
                    ctx.err(
                        open.line,
                        format!(
                            "Begin {0} has no matching End {0} (another Begin follows at line {1})",
                            open.name, l.no
                        ),
                    );
                }
                if name.is_empty() {
                    ctx.err(l.no, "Begin without a section name");
                }
                cur = Some(Section {
                    name: name.to_owned(),
                    line: l.no,
                    lines: Vec::new(),
                });
            }
            Some(Marker::End(name)) => match cur.take() {
                None => ctx.err(l.no, format!("End {name} without a matching Begin")),
                Some(s) => {
                    if !s.name.eq_ignore_ascii_case(name) {
                        ctx.err(
                            l.no,
                            format!(
                                "End {name} does not match Begin {} at line {}",
                                s.name, s.line
                            ),
                        );
                    }
                    out.push(s);
                }
            },
            None => {
                if let Some(s) = cur.as_mut() {
                    s.lines.push(l);
                }
            }
        }
    }
    if let Some(open) = cur {
        ctx.err(
            open.line,
            format!("Begin {0} has no matching End {0}", open.name),
        );
    }
    out
}

/// Parse a whole sectioned file.
pub(crate) fn parse_sections(ctx: &mut Ctx<'_>, text: &str) -> Vec<Section> {
    sections(ctx, logical_lines(text))
}

/// One `KEY = value` line of a vertical section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The key as written.
    pub key: String,
    /// The value, trimmed; may be empty.
    pub value: String,
    pub line: usize,
}

impl Entry {
    /// The key in upper case, for matching.
    pub fn upper(&self) -> String {
        self.key.to_ascii_uppercase()
    }
}

/// The `KEY = value` lines of a vertical section.
pub(crate) fn vertical(ctx: &mut Ctx<'_>, section: &Section) -> Vec<Entry> {
    let mut out = Vec::new();
    for l in &section.lines {
        let Some((key, value)) = l.text.split_once('=') else {
            ctx.err(
                l.no,
                format!(
                    "expected `KEY = value` in section {}, found `{}`",
                    section.name,
                    l.text.trim()
                ),
            );
            continue;
        };
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            ctx.err(
                l.no,
                format!("bad keyword `{key}` in section {}", section.name),
            );
            continue;
        }
        out.push(Entry {
            key: key.to_owned(),
            value: value.trim().to_owned(),
            line: l.no,
        });
    }
    out
}

/// Split a horizontal row into raw fields: blanks separate fields except inside
/// parentheses, brackets or double quotes.
pub(crate) fn split_fields(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut stack: Vec<char> = Vec::new();
    let mut in_quote = false;
    for c in s.chars() {
        if in_quote {
            cur.push(c);
            if c == '"' {
                in_quote = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_quote = true;
                cur.push(c);
            }
            '(' | '[' => {
                stack.push(c);
                cur.push(c);
            }
            ')' | ']' => {
                let open = if c == ')' { '(' } else { '[' };
                if stack.pop() != Some(open) {
                    return Err(format!("unbalanced `{c}` in `{}`", s.trim()));
                }
                cur.push(c);
            }
            c if c.is_whitespace() && stack.is_empty() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if in_quote {
        return Err(format!("unterminated quote in `{}`", s.trim()));
    }
    if let Some(open) = stack.last() {
        return Err(format!("unclosed `{open}` in `{}`", s.trim()));
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// The value of a raw field: `()` and `-` mean "not set"; an outer pair of
/// parentheses or double quotes is removed (`(a b)` -> `a b`).
pub(crate) fn field_value(raw: &str) -> Option<String> {
    let raw = raw.trim();
    if raw == "-" {
        return None;
    }
    let parenthesised = raw.starts_with('(') && closing_paren(raw) == Some(raw.len() - 1);
    let quoted = raw.len() >= 2 && raw.starts_with('"') && raw.ends_with('"');
    let inner = if parenthesised || quoted {
        &raw[1..raw.len() - 1]
    } else {
        raw
    };
    let inner = inner.trim();
    if inner.is_empty() {
        None
    } else {
        Some(inner.to_owned())
    }
}

/// Byte index of the `)` that closes the `(` at index 0.
fn closing_paren(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// A horizontal section: column names, then rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table {
    /// Column names as written.
    pub columns: Vec<String>,
    /// Line of the header.
    pub line: usize,
    pub rows: Vec<Row>,
}

/// One row; `fields[i]` belongs to `columns[i]` (`None` = not set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub line: usize,
    pub fields: Vec<Option<String>>,
}

impl Table {
    /// Index of a column (case-insensitive).
    pub fn col(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
    }
}

impl Row {
    /// The value in column `idx`, if the column exists and is set.
    pub fn get(&self, idx: Option<usize>) -> Option<&str> {
        idx.and_then(|i| self.fields.get(i))
            .and_then(|f| f.as_deref())
    }
}

/// Parse a horizontal section. `None` when the section is empty.
pub(crate) fn horizontal(ctx: &mut Ctx<'_>, section: &Section) -> Option<Table> {
    let (header, rows) = section.lines.split_first()?;
    let columns: Vec<String> = header.text.split_whitespace().map(str::to_owned).collect();
    let mut table = Table {
        columns,
        line: header.no,
        rows: Vec::new(),
    };
    for l in rows {
        let raw = match split_fields(&l.text) {
            Ok(f) => f,
            Err(e) => {
                ctx.err(l.no, format!("section {}: {e}", section.name));
                continue;
            }
        };
        if raw.len() > table.columns.len() {
            ctx.err(
                l.no,
                format!(
                    "section {}: {} fields but only {} columns ({})",
                    section.name,
                    raw.len(),
                    table.columns.len(),
                    table.columns.join(" ")
                ),
            );
            continue;
        }
        let mut fields: Vec<Option<String>> = raw.iter().map(|f| field_value(f)).collect();
        fields.resize(table.columns.len(), None);
        table.rows.push(Row { line: l.no, fields });
    }
    Some(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Diag;
    use std::path::Path;

    fn lex(text: &str) -> (Vec<Section>, Diag) {
        let mut d = Diag::default();
        let s = parse_sections(&mut d.file(Path::new("f")), text);
        (s, d)
    }

    #[test]
    fn continuation_lines_join_and_keep_start_line() {
        let lines = logical_lines("a = 1 \\\n  2 \\\n 3\nb = 4\n");
        assert_eq!(
            lines,
            vec![
                Line {
                    no: 1,
                    text: "a = 1 2 3".into()
                },
                Line {
                    no: 4,
                    text: "b = 4".into()
                }
            ]
        );
    }

    #[test]
    fn comments_are_stripped() {
        let lines = logical_lines("# full\nDEFAULT_QUEUE = normal   #default queue\n\n  \n");
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].text.trim_end(), "DEFAULT_QUEUE = normal");
        assert_eq!(lines[0].no, 2);
        assert_eq!(strip_comment(r#"X = "a#b" # c"#), r#"X = "a#b" "#);
    }

    #[test]
    fn sections_case_insensitive_and_outside_text_ignored() {
        let (s, d) =
            lex("junk\nBEGIN Queue\nA = 1\nend QUEUE\nmore junk\nbegin host\nX\nEnd Host\n");
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(s.len(), 2);
        assert!(s[0].is("queue"));
        assert_eq!(s[0].line, 2);
        assert_eq!(s[0].lines.len(), 1);
        assert!(s[1].is("Host"));
    }

    #[test]
    fn unterminated_and_mismatched_sections() {
        let (_, d) = lex("Begin Queue\nA = 1\n");
        assert_eq!(d.errors.len(), 1);
        assert_eq!(d.errors[0].line, 1);
        assert!(d.errors[0].message.contains("no matching End"));

        let (_, d) = lex("Begin Queue\nA = 1\nEnd Host\n");
        assert_eq!(d.errors.len(), 1);
        assert_eq!(d.errors[0].line, 3);

        let (s, d) = lex("Begin Queue\nA = 1\nBegin Queue\nB = 2\nEnd Queue\n");
        assert_eq!(d.errors.len(), 1);
        assert_eq!(d.errors[0].line, 1);
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn parenthesised_fields() {
        assert_eq!(
            split_fields("G1   (david john zebra)  ([david,1] [john,1] [zebra,1])").unwrap(),
            vec!["G1", "(david john zebra)", "([david,1] [john,1] [zebra,1])"]
        );
        assert_eq!(
            split_fields("hostA 8 2 3.5/4.5 15/() () - (20:00-8:30)").unwrap(),
            vec![
                "hostA",
                "8",
                "2",
                "3.5/4.5",
                "15/()",
                "()",
                "-",
                "(20:00-8:30)"
            ]
        );
        assert_eq!(
            split_fields(r#"a "b c" d"#).unwrap(),
            vec!["a", r#""b c""#, "d"]
        );
        assert!(split_fields("a (b c").is_err());
        assert!(split_fields("a b)").is_err());
        assert!(split_fields("a ([b)]").is_err());

        assert_eq!(field_value("()"), None);
        assert_eq!(field_value("-"), None);
        assert_eq!(field_value("( )"), None);
        assert_eq!(field_value("(cs)").as_deref(), Some("cs"));
        assert_eq!(field_value("(a b)").as_deref(), Some("a b"));
        assert_eq!(field_value("15/()").as_deref(), Some("15/()"));
        assert_eq!(field_value("()/4.5").as_deref(), Some("()/4.5"));
        assert_eq!(
            field_value("([david,1] [john,1])").as_deref(),
            Some("[david,1] [john,1]")
        );
        assert_eq!(field_value(r#""x y""#).as_deref(), Some("x y"));
    }

    #[test]
    fn horizontal_rows() {
        let (s, d) = lex(
            "Begin Host\nHOSTNAME model server RESOURCES\nhostA IntelI5 1 (cs fs)\nhostB - \nhostC a b c d\nEnd Host\n",
        );
        assert!(d.errors.is_empty());
        let mut d = Diag::default();
        let t = horizontal(&mut d.file(Path::new("f")), &s[0]).unwrap();
        assert_eq!(d.errors.len(), 1, "too many fields");
        assert_eq!(d.errors[0].line, 5);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.col("resources"), Some(3));
        assert_eq!(t.rows[0].get(t.col("RESOURCES")), Some("cs fs"));
        assert_eq!(t.rows[1].get(t.col("model")), None);
        assert_eq!(t.rows[1].get(t.col("server")), None);
        assert_eq!(t.rows[1].get(t.col("nosuch")), None);
    }

    #[test]
    fn vertical_entries() {
        let (s, _) = lex("Begin Parameters\nA = 1\nB =\nC = x = y\nbroken\nEnd Parameters\n");
        let mut d = Diag::default();
        let e = vertical(&mut d.file(Path::new("f")), &s[0]);
        assert_eq!(e.len(), 3);
        assert_eq!(e[1].value, "");
        assert_eq!(e[2].value, "x = y");
        assert_eq!(d.errors.len(), 1);
        assert_eq!(d.errors[0].line, 5);
    }
}
