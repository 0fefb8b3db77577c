//! LSF-style option parsing for the batch commands.
//!
//! LSF commands mix single-dash long options (`-noheader`, `-json`, `-oo`, `-env`,
//! `-cwd`) with bundles of one-letter flags (`-pr`, `-aJ pattern`, `-lw`). A token is
//! first matched exactly against the known names; otherwise it is read as a bundle of
//! one-letter options, where a one-letter option that takes a value takes the rest of
//! the token (`-Jname`) or the next argument.

use std::fmt;

/// The options a command knows.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Options without a value (`x`, `noheader`).
    pub flags: &'static [&'static str],
    /// Options with a value (`q`, `env`).
    pub valued: &'static [&'static str],
}

/// One parsed argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// An option (name without the dash) and its value.
    Opt(String, Option<String>),
    /// A positional argument.
    Arg(String),
}

/// Why parsing failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptError {
    Unknown(String),
    MissingValue(String),
}

impl fmt::Display for OptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptError::Unknown(o) => write!(f, "illegal option -- {o}"),
            OptError::MissingValue(o) => write!(f, "option requires an argument -- {o}"),
        }
    }
}

/// Parse `args` (without the program name). With `stop_at_arg`, the first positional
/// argument ends option parsing (bsub: the rest is the command); otherwise options and
/// positionals may be interleaved. `--` always ends options.
pub fn parse(args: &[String], spec: &Spec, stop_at_arg: bool) -> Result<Vec<Item>, OptError> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            out.extend(args[i..].iter().cloned().map(Item::Arg));
            break;
        }
        let Some(name) = a.strip_prefix('-').filter(|n| !n.is_empty()) else {
            out.push(Item::Arg(a.clone()));
            if stop_at_arg {
                out.extend(args[i..].iter().cloned().map(Item::Arg));
                break;
            }
            continue;
        };
        if spec.flags.contains(&name) {
            out.push(Item::Opt(name.to_owned(), None));
            continue;
        }
        if spec.valued.contains(&name) {
            let Some(v) = args.get(i) else {
                return Err(OptError::MissingValue(name.to_owned()));
            };
            i += 1;
            out.push(Item::Opt(name.to_owned(), Some(v.clone())));
            continue;
        }
        // A bundle of one-letter options.
        let chars: Vec<char> = name.chars().collect();
        let mut k = 0;
        while k < chars.len() {
            let c = chars[k].to_string();
            k += 1;
            if spec.flags.contains(&c.as_str()) {
                out.push(Item::Opt(c, None));
            } else if spec.valued.contains(&c.as_str()) {
                let rest: String = chars[k..].iter().collect();
                let value = if rest.is_empty() {
                    let Some(v) = args.get(i) else {
                        return Err(OptError::MissingValue(c));
                    };
                    i += 1;
                    v.clone()
                } else {
                    rest
                };
                out.push(Item::Opt(c, Some(value)));
                break;
            } else {
                return Err(OptError::Unknown(c));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: Spec = Spec {
        flags: &["a", "p", "r", "w", "l", "noheader", "json"],
        valued: &["J", "u", "o", "oo"],
    };

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    fn opt(n: &str, v: Option<&str>) -> Item {
        Item::Opt(n.into(), v.map(str::to_owned))
    }

    #[test]
    fn bundles_and_long_names() {
        let got = parse(
            &v(&["-aJ", "pat*", "-pr", "-noheader", "12", "-Jx", "-oo", "f"]),
            &SPEC,
            false,
        );
        assert_eq!(
            got,
            Ok(vec![
                opt("a", None),
                opt("J", Some("pat*")),
                opt("p", None),
                opt("r", None),
                opt("noheader", None),
                Item::Arg("12".into()),
                opt("J", Some("x")),
                opt("oo", Some("f")),
            ])
        );
    }

    #[test]
    fn stop_at_first_argument() {
        let got = parse(&v(&["-w", "sleep", "-u", "x"]), &SPEC, true).unwrap_or_default();
        assert_eq!(
            got,
            vec![
                opt("w", None),
                Item::Arg("sleep".into()),
                Item::Arg("-u".into()),
                Item::Arg("x".into())
            ]
        );
    }

    #[test]
    fn errors() {
        assert_eq!(
            parse(&v(&["-Z"]), &SPEC, false),
            Err(OptError::Unknown("Z".into()))
        );
        assert_eq!(
            parse(&v(&["-u"]), &SPEC, false),
            Err(OptError::MissingValue("u".into()))
        );
        assert_eq!(
            parse(&v(&["--", "-a"]), &SPEC, false),
            Ok(vec![Item::Arg("-a".into())])
        );
    }
}
