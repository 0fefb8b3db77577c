//! Job scripts: shell words, `#BSUB` directives, the options they give, and `-env`.

use super::*;

/// Split a line the way a shell would: whitespace separates words, `'...'` is literal,
/// `"..."` honours `\" \\ \$ \``, a backslash outside quotes escapes the next character,
/// and an unquoted `#` at the start of a word ends the line.
pub fn shell_words(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err("unmatched '".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.peek() {
                            Some(&n) if matches!(n, '"' | '\\' | '$' | '`') => {
                                cur.push(n);
                                chars.next();
                            }
                            _ => cur.push('\\'),
                        },
                        Some(ch) => cur.push(ch),
                        None => return Err("unmatched \"".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// The `#BSUB` directives of a script: (line number, words after `#BSUB`). Only lines
/// starting in column 0 with `#BSUB` followed by a blank count.
pub fn directives(script: &str) -> Vec<(usize, Result<Vec<String>, String>)> {
    script
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let rest = line.strip_prefix("#BSUB")?;
            if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
                return None;
            }
            Some((i + 1, shell_words(rest)))
        })
        .collect()
}

/// Parse a script's directives into options. Words that are not options are reported
/// as warnings (returned) and otherwise ignored.
pub fn script_opts(script: &str, cx: &ValueCtx) -> Result<(BsubOpts, Vec<String>), String> {
    let mut o = BsubOpts::default();
    let mut warnings = Vec::new();
    for (line, words) in directives(script) {
        let words = words.map_err(|e| format!("#BSUB at line {line}: {e}"))?;
        let items =
            opts::parse(&words, &SPEC, false).map_err(|e| format!("#BSUB at line {line}: {e}"))?;
        for it in items {
            match it {
                Item::Opt(n, _) if n == "h" || n == "V" => {}
                Item::Opt(n, v) => apply(&mut o, &n, v.as_deref(), cx)
                    .map_err(|e| format!("#BSUB at line {line}: {e}"))?,
                Item::Arg(a) => warnings.push(format!(
                    "#BSUB at line {line}: ignoring <{a}>, which is not an option"
                )),
            }
        }
    }
    Ok((o, warnings))
}

/// Resolve the `-env` values against the submitter's environment (all of it when no
/// `-env` was given): `all` (minus `~VAR`), `none`, `VAR` (taken from the environment)
/// and `VAR=value`, merged over every `-env`.
pub fn resolve_env(specs: &[String], vars: &[(String, String)]) -> Vec<String> {
    if specs.is_empty() {
        return vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
    }
    let starts_token = |p: &str| -> bool {
        let p = p.trim_start();
        if p == "all" || p == "none" {
            return true;
        }
        let p = p.strip_prefix('~').unwrap_or(p);
        let name_len = p
            .char_indices()
            .take_while(|(i, c)| {
                c.is_ascii_alphabetic() || *c == '_' || (*i > 0 && c.is_ascii_digit())
            })
            .count();
        name_len > 0 && (name_len == p.len() || p[name_len..].starts_with('='))
    };
    let mut tokens: Vec<String> = Vec::new();
    for spec in specs {
        let mut spec_tokens: Vec<String> = Vec::new();
        for piece in spec.split(',') {
            // A piece that is not a token of its own, or a bare word right after an
            // assignment with no blank after the comma (`LIST=a,b`), continues the
            // previous value.
            let continues = |last: &String| {
                !starts_token(piece)
                    || (last.contains('=')
                        && !piece.contains('=')
                        && !piece.starts_with(char::is_whitespace)
                        && !matches!(piece.trim(), "all" | "none"))
            };
            match spec_tokens.last_mut() {
                Some(last) if continues(last) => {
                    last.push(',');
                    last.push_str(piece);
                }
                _ => spec_tokens.push(piece.to_owned()),
            }
        }
        tokens.extend(spec_tokens);
    }
    let mut all = false;
    let mut exclude: Vec<String> = Vec::new();
    let mut include: Vec<String> = Vec::new();
    let mut set: Vec<(String, String)> = Vec::new();
    for t in tokens {
        let t = t.trim();
        match t {
            "" | "none" => {}
            "all" => all = true,
            _ => {
                if let Some(name) = t.strip_prefix('~') {
                    exclude.push(name.trim().to_owned());
                } else if let Some((k, v)) = t.split_once('=') {
                    set.retain(|(sk, _)| sk != k.trim());
                    set.push((k.trim().to_owned(), v.to_owned()));
                } else {
                    include.push(t.to_owned());
                }
            }
        }
    }
    let mut out: Vec<(String, String)> = if all {
        vars.iter()
            .filter(|(k, _)| !exclude.contains(k))
            .cloned()
            .collect()
    } else {
        vars.iter()
            .filter(|(k, _)| include.contains(k))
            .cloned()
            .collect()
    };
    for (k, v) in set {
        match out.iter_mut().find(|(ok, _)| *ok == k) {
            Some(slot) => slot.1 = v,
            None => out.push((k, v)),
        }
    }
    out.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
}
