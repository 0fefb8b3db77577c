//! Field-level syntax of a record line (event-log.md §2): the tokenizer shared by every
//! record parser, [`split_fields`], and the writer helpers that reproduce LSF's `printf`
//! formats.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::str::FromStr;

use crate::error::{ParseError, excerpt};

/// One field of a record line.
///
/// `Str` is a double-quoted string with the `""` doubling undone; `Num` is any unquoted
/// token (integers, floats), kept as its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Field {
    Str(String),
    Num(String),
}

impl Field {
    /// An integer field (any integer type: `Field::int(job_id)`, `Field::int(-1)`).
    pub fn int(v: impl Into<i128>) -> Field {
        Field::Num(v.into().to_string())
    }

    /// A string field.
    pub fn str(s: impl Into<String>) -> Field {
        Field::Str(s.into())
    }

    /// The field's text (unquoted for strings).
    pub fn text(&self) -> &str {
        match self {
            Field::Str(s) | Field::Num(s) => s,
        }
    }

    /// The field as an integer, when it is an unquoted integer.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Field::Num(s) => s.parse().ok(),
            Field::Str(_) => None,
        }
    }

    /// Append the field as it is written on a line (no leading space).
    ///
    /// A `Num` whose text could not be read back as one unquoted token (empty, or holding
    /// white space or a quote) is written as a quoted string instead, so that a line never
    /// breaks; newlines are deleted from strings as LSF does.
    pub fn write_to(&self, out: &mut String) {
        match self {
            Field::Str(s) => push_quoted(out, s),
            Field::Num(s) => {
                if is_plain_token(s) {
                    out.push_str(s);
                } else {
                    push_quoted(out, s);
                }
            }
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write_to(&mut s);
        f.write_str(&s)
    }
}

fn is_plain_token(s: &str) -> bool {
    !s.is_empty()
        && !s
            .chars()
            .any(|c| c == '"' || c.is_whitespace() || c == '\0' || c.is_control())
}

fn is_sep(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Split a record line into its fields: strings are unquoted (`""` inside becomes `"`),
/// runs of spaces (and tabs) between fields are accepted, a trailing `\r` is ignored.
///
/// ```
/// use basalt_eventlog::{split_fields, Field};
/// let f = split_fields(r#""JOB_FORCE" "22" 1795342025 6 0 0 1 1  "vm" "root""#).unwrap();
/// assert_eq!(f.len(), 10);
/// assert_eq!(f[8], Field::Str("vm".into()));
/// let f = split_fields(r#""a ""b"" c" """#).unwrap();
/// assert_eq!(f, vec![Field::Str(r#"a "b" c"#.into()), Field::Str(String::new())]);
/// ```
pub fn split_fields(line: &str) -> Result<Vec<Field>, ParseError> {
    let mut c = Cursor::new(line);
    c.rest()
}

/// One token as the cursor sees it.
pub(crate) enum Tok<'a> {
    Str(Cow<'a, str>),
    Num(&'a str),
}

impl Tok<'_> {
    fn describe(&self) -> String {
        match self {
            Tok::Str(s) => format!("the string {}", excerpt(s)),
            Tok::Num(s) => format!("{}", excerpt(s)),
        }
    }

    fn into_field(self) -> Field {
        match self {
            Tok::Str(s) => Field::Str(s.into_owned()),
            Tok::Num(s) => Field::Num(s.to_owned()),
        }
    }
}

/// A position in a line. Cheap to copy, so parsers can try a layout and back off.
#[derive(Clone, Copy)]
pub(crate) struct Cursor<'a> {
    line: &'a str,
    pos: usize,
    /// 1-based position of the last field read (0 before the first).
    field: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(line: &'a str) -> Cursor<'a> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        Cursor {
            line,
            pos: 0,
            field: 0,
        }
    }

    /// The 1-based position of the next field.
    pub(crate) fn next_index(&self) -> usize {
        self.field + 1
    }

    fn skip_sep(&mut self) {
        let b = self.line.as_bytes();
        while self.pos < b.len() && is_sep(b[self.pos]) {
            self.pos += 1;
        }
    }

    /// True when no field is left.
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_sep();
        self.pos >= self.line.len()
    }

    pub(crate) fn next_tok(&mut self) -> Result<Option<Tok<'a>>, ParseError> {
        self.skip_sep();
        let b = self.line.as_bytes();
        if self.pos >= b.len() {
            return Ok(None);
        }
        self.field += 1;
        if b[self.pos] == b'"' {
            let start = self.pos + 1;
            let mut seg = start;
            let mut i = start;
            let mut owned: Option<String> = None;
            loop {
                let Some(off) = b[i..].iter().position(|&x| x == b'"') else {
                    return Err(ParseError::new(
                        self.field,
                        "unterminated string (no closing quote)",
                    ));
                };
                let q = i + off;
                if q + 1 < b.len() && b[q + 1] == b'"' {
                    // A doubled quote stands for one quote character.
                    let o = owned.get_or_insert_with(String::new);
                    o.push_str(&self.line[seg..q]);
                    o.push('"');
                    i = q + 2;
                    seg = i;
                    continue;
                }
                if q + 1 < b.len() && !is_sep(b[q + 1]) {
                    return Err(ParseError::new(
                        self.field,
                        "closing quote is not followed by a space",
                    ));
                }
                let tok = match owned {
                    Some(mut o) => {
                        o.push_str(&self.line[seg..q]);
                        Tok::Str(Cow::Owned(o))
                    }
                    None => Tok::Str(Cow::Borrowed(&self.line[start..q])),
                };
                self.pos = q + 1;
                return Ok(Some(tok));
            }
        }
        let start = self.pos;
        let mut i = start;
        while i < b.len() && !is_sep(b[i]) {
            if b[i] == b'"' {
                return Err(ParseError::new(
                    self.field,
                    "quote inside an unquoted field",
                ));
            }
            i += 1;
        }
        self.pos = i;
        Ok(Some(Tok::Num(&self.line[start..i])))
    }

    fn missing(&self, what: &str) -> ParseError {
        ParseError::new(
            self.field + 1,
            format!("{what}: missing (the line ends early)"),
        )
    }

    /// A quoted string.
    pub(crate) fn str(&mut self, what: &str) -> Result<String, ParseError> {
        match self.next_tok()? {
            Some(Tok::Str(s)) => Ok(s.into_owned()),
            Some(t) => Err(ParseError::new(
                self.field,
                format!("{what}: expected a quoted string, found {}", t.describe()),
            )),
            None => Err(self.missing(what)),
        }
    }

    /// A quoted string, or `None` at the end of the line.
    pub(crate) fn opt_str(&mut self, what: &str) -> Result<Option<String>, ParseError> {
        if self.at_end() {
            return Ok(None);
        }
        self.str(what).map(Some)
    }

    fn num_text(&mut self, what: &str, kind: &str) -> Result<&'a str, ParseError> {
        match self.next_tok()? {
            Some(Tok::Num(s)) => Ok(s),
            Some(t) => Err(ParseError::new(
                self.field,
                format!("{what}: expected {kind}, found {}", t.describe()),
            )),
            None => Err(self.missing(what)),
        }
    }

    /// An unquoted integer of type `T`.
    pub(crate) fn int<T: FromStr>(&mut self, what: &str) -> Result<T, ParseError> {
        let s = self.num_text(what, "an integer")?;
        let digits = s.strip_prefix('+').unwrap_or(s);
        digits.parse::<T>().map_err(|_| {
            ParseError::new(
                self.field,
                format!("{what}: expected an integer, found {}", excerpt(s)),
            )
        })
    }

    /// An integer, or `None` at the end of the line.
    pub(crate) fn opt_int<T: FromStr>(&mut self, what: &str) -> Result<Option<T>, ParseError> {
        if self.at_end() {
            return Ok(None);
        }
        self.int(what).map(Some)
    }

    /// A bit set written with `%d`: accepts the negative `int` form of bit 31 as well as
    /// the unsigned form.
    pub(crate) fn bits(&mut self, what: &str) -> Result<u32, ParseError> {
        let v: i64 = self.int(what)?;
        if let Ok(u) = u32::try_from(v) {
            Ok(u)
        } else if let Ok(i) = i32::try_from(v) {
            Ok(i as u32)
        } else {
            Err(ParseError::new(
                self.field,
                format!("{what}: {v} does not fit in 32 bits"),
            ))
        }
    }

    /// A bit set, or `None` at the end of the line.
    pub(crate) fn opt_bits(&mut self, what: &str) -> Result<Option<u32>, ParseError> {
        if self.at_end() {
            return Ok(None);
        }
        self.bits(what).map(Some)
    }

    /// An unquoted number (integer or float).
    pub(crate) fn float(&mut self, what: &str) -> Result<f64, ParseError> {
        let s = self.num_text(what, "a number")?;
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(ParseError::new(
                self.field,
                format!("{what}: expected a number, found {}", excerpt(s)),
            )),
        }
    }

    /// A list of `n` quoted host names (`n` read by the caller), expanding the
    /// `SHORT_EVENTFILE` form `"4*hostA"` into four entries.
    pub(crate) fn hosts(&mut self, n: i64, what: &str) -> Result<Vec<String>, ParseError> {
        /// Refuse absurd expansions rather than allocate without bound.
        const MAX_SLOTS: usize = 1 << 20;
        if n < 0 {
            return Err(ParseError::new(
                self.field,
                format!("{what}: negative count {n}"),
            ));
        }
        let mut out = Vec::new();
        for _ in 0..n {
            let h = self.str(what)?;
            match expand_short(&h) {
                Some((count, name)) => {
                    if out.len() + count > MAX_SLOTS {
                        return Err(ParseError::new(
                            self.field,
                            format!("{what}: {} expands to too many slots", excerpt(&h)),
                        ));
                    }
                    out.extend(std::iter::repeat_n(name.to_owned(), count));
                }
                None => out.push(h),
            }
        }
        Ok(out)
    }

    /// Every field left on the line.
    pub(crate) fn rest(&mut self) -> Result<Vec<Field>, ParseError> {
        let mut v = Vec::new();
        while let Some(t) = self.next_tok()? {
            v.push(t.into_field());
        }
        Ok(v)
    }
}

/// `"4*hostA"` → `(4, "hostA")`.
fn expand_short(h: &str) -> Option<(usize, &str)> {
    let (n, name) = h.split_once('*')?;
    if n.is_empty() || name.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((n.parse().ok()?, name))
}

/// Append `s` double-quoted: `"` doubled, newline, carriage-return and NUL characters
/// deleted (LSF deletes newlines; a raw newline would split the record).
pub(crate) fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\"\""),
            '\n' | '\r' | '\0' => {}
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Builds one record line with LSF's field formats.
pub(crate) struct LineWriter<'o> {
    out: &'o mut String,
}

impl<'o> LineWriter<'o> {
    /// Start a line with the common header `"TYPE" "version" time`.
    pub(crate) fn start(out: &'o mut String, kind: &str, version: &str, time: i64) -> Self {
        push_quoted(out, kind);
        out.push(' ');
        push_quoted(out, version);
        let _ = write!(out, " {time}");
        LineWriter { out }
    }

    pub(crate) fn str(&mut self, s: &str) -> &mut Self {
        self.out.push(' ');
        push_quoted(self.out, s);
        self
    }

    pub(crate) fn int(&mut self, v: impl fmt::Display) -> &mut Self {
        let _ = write!(self.out, " {v}");
        self
    }

    /// A bit set, written as C's `%d` of an `int` (bit 31 makes it negative).
    pub(crate) fn bits(&mut self, v: u32) -> &mut Self {
        let _ = write!(self.out, " {}", v as i32);
        self
    }

    /// `%6.2f` (JOB_NEW hostFactor): right-aligned in 6 columns.
    pub(crate) fn f6_2(&mut self, v: f64) -> &mut Self {
        let _ = write!(self.out, " {:6.2}", unsigned_zero(finite_or(v, 0.0), 2));
        self
    }

    /// `%3.1f` (JOB_START / JOB_FINISH hostFactor).
    pub(crate) fn f3_1(&mut self, v: f64) -> &mut Self {
        let _ = write!(self.out, " {:3.1}", unsigned_zero(finite_or(v, 0.0), 1));
        self
    }

    /// `%4.4f` (cpuTime).
    pub(crate) fn f4_4(&mut self, v: f64) -> &mut Self {
        let _ = write!(self.out, " {:4.4}", unsigned_zero(finite_or(v, 0.0), 4));
        self
    }

    /// A resource-usage value: `%1.6f` for the two times, `%1.0f` otherwise; `-1`
    /// (unknown) is always written as `-1`, and so is a value that prints as -1.
    pub(crate) fn ru(&mut self, v: f64, time: bool) -> &mut Self {
        let decimals = if time { 6 } else { 0 };
        let v = unsigned_zero(finite_or(v, -1.0), decimals);
        let start = self.out.len();
        let _ = write!(self.out, " {:.*}", decimals, v);
        // Read back, "-1.000000" is -1 (unknown), which is written "-1".
        if &self.out[start..] == " -1.000000" {
            self.out.truncate(start + 3);
        }
        self
    }

    pub(crate) fn field(&mut self, f: &Field) -> &mut Self {
        self.out.push(' ');
        f.write_to(self.out);
        self
    }

    pub(crate) fn fields(&mut self, fs: &[Field]) -> &mut Self {
        for f in fs {
            self.field(f);
        }
        self
    }

    pub(crate) fn hosts(&mut self, hosts: &[String]) -> &mut Self {
        self.int(hosts.len());
        for h in hosts {
            self.str(h);
        }
        self
    }
}

/// `v`, or zero when `v` is negative but prints as zero with `decimals` decimals: read
/// back, "-0.00" is negative zero, which is written "0.00", so a record would not be
/// written the same twice.
fn unsigned_zero(v: f64, decimals: usize) -> f64 {
    if v < 0.0 && v > -1.0 {
        let s = format!("{v:.decimals$}");
        if !s.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
            return 0.0;
        }
    }
    v
}

/// Non-finite values are never written; negative zero is written as zero.
fn finite_or(v: f64, dflt: f64) -> f64 {
    if !v.is_finite() {
        dflt
    } else if v == 0.0 {
        0.0
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_handles_quotes_and_spaces() {
        let f = split_fields(r#""A"  "" "x""y" 12   -1 "a b""#).unwrap();
        assert_eq!(
            f,
            vec![
                Field::Str("A".into()),
                Field::Str(String::new()),
                Field::Str("x\"y".into()),
                Field::Num("12".into()),
                Field::Num("-1".into()),
                Field::Str("a b".into()),
            ]
        );
        // A string made only of a quote, and one ending in a quote.
        let f = split_fields(r#""""" "a""""#).unwrap();
        assert_eq!(f, vec![Field::Str("\"".into()), Field::Str("a\"".into())]);
        assert!(split_fields("").unwrap().is_empty());
        assert_eq!(split_fields("1\r").unwrap(), vec![Field::Num("1".into())]);
    }

    #[test]
    fn tokenizer_errors_name_the_field() {
        let e = split_fields(r#""A" "B" "unterminated"#).unwrap_err();
        assert_eq!(e.field, 3);
        let e = split_fields(r#""A" "B"x"#).unwrap_err();
        assert_eq!(e.field, 2);
        let e = split_fields(r#"1 2 ab"c"#).unwrap_err();
        assert_eq!(e.field, 3);
    }

    #[test]
    fn quoting_round_trips() {
        for s in [
            "",
            "\"",
            "a\"\"b",
            " x ",
            "env | grep -E \"^LSB_\" | sort",
            "\"\"\"",
        ] {
            let mut line = String::new();
            push_quoted(&mut line, s);
            line.push(' ');
            push_quoted(&mut line, "next");
            let f = split_fields(&line).unwrap();
            assert_eq!(
                f,
                vec![Field::Str(s.into()), Field::Str("next".into())],
                "{s:?}"
            );
        }
        let mut line = String::new();
        push_quoted(&mut line, "a\nb\r\nc");
        assert_eq!(line, "\"abc\"");
    }

    #[test]
    fn c_float_formats() {
        let mut s = String::new();
        {
            let mut w = LineWriter { out: &mut s };
            w.f6_2(100.0).f6_2(1.0).f3_1(100.0).f3_1(1.0).f4_4(0.0236);
            w.ru(0.00861, true)
                .ru(3976.0, false)
                .ru(-1.0, true)
                .ru(-1.0, false);
            w.ru(f64::NAN, false).f6_2(-0.0);
            // Negative values that print as zero or as -1 (found by fuzzing).
            w.f6_2(-0.001).f3_1(-0.04).f4_4(-0.00001).ru(-0.4, false);
            w.ru(-0.0000001, true).ru(-0.9999999, true).ru(-0.6, false);
        }
        assert_eq!(
            s,
            " 100.00   1.00 100.0 1.0 0.0236 0.008610 3976 -1 -1 -1   0.00   0.00 0.0 0.0000 0 \
             0.000000 -1 -1"
        );
    }

    #[test]
    fn num_fields_that_cannot_be_tokens_are_quoted() {
        let mut s = String::new();
        Field::Num("12".into()).write_to(&mut s);
        s.push(' ');
        Field::Num("1 2\n".into()).write_to(&mut s);
        s.push(' ');
        Field::Num(String::new()).write_to(&mut s);
        assert_eq!(s, "12 \"1 2\" \"\"");
    }

    #[test]
    fn short_eventfile_expansion() {
        let mut c = Cursor::new(r#""4*hostA" "hostB" "x*y""#);
        let h = c.hosts(3, "execHosts").unwrap();
        assert_eq!(h, ["hostA", "hostA", "hostA", "hostA", "hostB", "x*y"]);
        let mut c = Cursor::new(r#""999999999*h""#);
        assert!(c.hosts(1, "execHosts").is_err());
    }
}
