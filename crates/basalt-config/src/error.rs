//! Problems found while loading a configuration: errors (the configuration is
//! rejected) and warnings (it loads, but something was ignored). Both name the
//! file and line; all of them are collected before [`crate::load`] returns.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// One malformed or inconsistent piece of configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file the problem is in.
    pub file: PathBuf,
    /// 1-based line number; 0 when the problem is not tied to a line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        located(f, &self.file, self.line, &self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Something that was ignored or looks suspicious, but does not stop loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The file the problem is in.
    pub file: PathBuf,
    /// 1-based line number; 0 when the problem is not tied to a line.
    pub line: usize,
    /// What was ignored and why.
    pub message: String,
    /// The warning is about a keyword that is read but not applied yet
    /// ([`crate::not_applied`]): `badmin ckconfig` lists these even without `-v`.
    pub not_applied: bool,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        located(f, &self.file, self.line, &self.message)
    }
}

fn located(f: &mut fmt::Formatter<'_>, file: &Path, line: usize, msg: &str) -> fmt::Result {
    if line == 0 {
        write!(f, "{}: {msg}", file.display())
    } else {
        write!(f, "{}:{line}: {msg}", file.display())
    }
}

/// Every error found in a configuration, in the order the files were read (`.0`), and
/// every warning of the same load (`.1`): a configuration with errors is checked whole,
/// so that `badmin ckconfig` lists every problem in one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>, pub Vec<Warning>);

impl ConfigErrors {
    /// The errors.
    pub fn errors(&self) -> &[ConfigError] {
        &self.0
    }

    /// The warnings found with them.
    pub fn warnings(&self) -> &[Warning] {
        &self.1
    }
}

impl fmt::Display for ConfigErrors {
    /// One error per line, `path:line: message` (the warnings are not shown).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// The collector every parser writes into.
#[derive(Debug, Default)]
pub(crate) struct Diag {
    pub errors: Vec<ConfigError>,
    pub warnings: Vec<Warning>,
    /// Read the files from this snapshot instead of the disk.
    pub source: Option<std::sync::Arc<crate::snapshot::Snapshot>>,
    /// Every file read, with its text (what a snapshot of this load holds).
    pub read: Vec<(std::path::PathBuf, String)>,
}

impl Diag {
    /// A reporter bound to one file.
    pub fn file<'a>(&'a mut self, file: &'a Path) -> Ctx<'a> {
        Ctx { file, diag: self }
    }
}

/// Reports problems for one file.
#[derive(Debug)]
pub(crate) struct Ctx<'a> {
    pub file: &'a Path,
    diag: &'a mut Diag,
}

impl Ctx<'_> {
    pub fn err(&mut self, line: usize, message: impl Into<String>) {
        self.diag.errors.push(ConfigError {
            file: self.file.to_path_buf(),
            line,
            message: message.into(),
        });
    }

    pub fn warn(&mut self, line: usize, message: impl Into<String>) {
        self.diag.warnings.push(Warning {
            file: self.file.to_path_buf(),
            line,
            message: message.into(),
            not_applied: false,
        });
    }

    /// A keyword that is read but not applied ([`crate::not_applied`]).
    pub fn not_applied(&mut self, line: usize, message: impl Into<String>) {
        self.diag.warnings.push(Warning {
            file: self.file.to_path_buf(),
            line,
            message: message.into(),
            not_applied: true,
        });
    }

    /// Parse `value` of `key`, reporting an error (`expected <what>`) when it
    /// does not parse.
    pub fn parse<T: FromStr>(
        &mut self,
        line: usize,
        key: &str,
        value: &str,
        what: &str,
    ) -> Option<T> {
        match value.trim().parse::<T>() {
            Ok(v) => Some(v),
            Err(_) => {
                self.err(line, format!("{key}: expected {what}, found `{value}`"));
                None
            }
        }
    }

    /// A non-negative integer.
    pub fn uint(&mut self, line: usize, key: &str, value: &str) -> Option<u32> {
        self.parse(line, key, value, "a non-negative integer")
    }

    /// A finite number (fractions allowed).
    pub fn float(&mut self, line: usize, key: &str, value: &str) -> Option<f64> {
        self.parse::<f64>(line, key, value, "a number")
            .and_then(|v| {
                if v.is_finite() {
                    Some(v)
                } else {
                    self.err(
                        line,
                        format!("{key}: expected a finite number, found `{value}`"),
                    );
                    None
                }
            })
    }

    /// `y`/`yes`/`n`/`no` (any case); also `1`/`0`.
    pub fn yes_no(&mut self, line: usize, key: &str, value: &str) -> Option<bool> {
        match parse_yes_no(value) {
            Some(b) => Some(b),
            None => {
                self.err(line, format!("{key}: expected Y or N, found `{value}`"));
                None
            }
        }
    }
}

pub(crate) fn parse_yes_no(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" | "1" | "true" => Some(true),
        "n" | "no" | "0" | "false" => Some(false),
        _ => None,
    }
}
