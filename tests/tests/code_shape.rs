//! Issue 53's shape rules for the scheduler core and mbatchd: no source file over
//! [`MAX_FILE_LINES`] lines and no function over [`MAX_FN_LINES`] in `basalt-sched` and
//! `basalt-mbatchd`.
//!
//! The code is not there yet: [`KNOWN`] lists what is still over, each with the size it
//! has now. The test fails when anything else goes over, when a listed one grows, and
//! when a listed one has come within the limit (take it off the list): the list only
//! shrinks, until it is empty.
//!
//! Functions are found in rustfmt's layout: a line starting `fn name` (after `pub`,
//! `const`, `async`, `unsafe`) ends at the first later line that is its indentation and
//! `}`; a declaration without a body (a `;` at its indentation first) is not one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 800;
const MAX_FN_LINES: usize = 150;

/// What is still over the limits: (path from the workspace root, function name or "" for
/// the file itself, its lines now).
const KNOWN: &[(&str, &str, usize)] = &[
    ("crates/basalt-sched/src/logswitch.rs", "job_history", 193),
    ("crates/basalt-sched/src/logswitch_tests.rs", "", 1283),
    (
        "crates/basalt-sched/src/logswitch_tests.rs",
        "a_rich_state_survives_the_switch",
        199,
    ),
    ("crates/basalt-sched/src/logswitch_tests.rs", "step", 171),
    ("crates/basalt-sched/src/mc_tests.rs", "", 1205),
    ("crates/basalt-sched/src/preempt_tests.rs", "", 1063),
    ("crates/basalt-sched/src/reslimit_tests.rs", "", 865),
    ("crates/basalt-sched/src/tests.rs", "", 1953),
    ("crates/basalt-mbatchd/src/dispatch.rs", "", 1143),
    ("crates/basalt-mbatchd/src/dispatch.rs", "carry_out", 182),
    ("crates/basalt-mbatchd/src/handlers.rs", "handle", 351),
    ("crates/basalt-mbatchd/src/lib.rs", "serve", 292),
    ("crates/basalt-mbatchd/src/owner.rs", "run", 212),
    ("crates/basalt-mbatchd/src/service.rs", "", 832),
];

const CRATES: &[&str] = &["crates/basalt-sched/src", "crates/basalt-mbatchd/src"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The name of the function a line opens, with its indentation.
fn fn_name(line: &str) -> Option<(&str, &str)> {
    let body = line.trim_start();
    let indent = &line[..line.len() - body.len()];
    let mut rest = body;
    loop {
        if rest.starts_with("pub(") {
            let close = rest.find(')')?;
            rest = rest[close + 1..].trim_start();
            continue;
        }
        let word_end = rest.find([' ', '(']).unwrap_or(rest.len());
        let word = &rest[..word_end];
        match word {
            "pub" | "const" | "async" | "unsafe" | "extern" | "\"C\"" => {
                rest = rest[word_end..].trim_start();
            }
            "fn" => {
                let name = rest[2..].trim_start();
                let end = name
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(name.len());
                return (end > 0).then(|| (indent, &name[..end]));
            }
            _ => return None,
        }
    }
}

/// Each function of `text` with its length in lines.
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((indent, name)) = fn_name(line) else {
            continue;
        };
        if line.trim_end().ends_with('}') {
            out.push((name.to_owned(), 1));
            continue;
        }
        let close = format!("{indent}}}");
        for (j, l) in lines.iter().enumerate().skip(i) {
            let at_indent = l.starts_with(indent) && !l[indent.len()..].starts_with(' ');
            if j > i && *l == close {
                out.push((name.to_owned(), j - i + 1));
                break;
            }
            if at_indent && l.trim_end().ends_with(';') {
                break;
            }
        }
    }
    out
}

/// Everything over the limits now: (path, name or "", lines).
fn over() -> Vec<(String, String, usize)> {
    let root = root();
    let mut out = Vec::new();
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&root.join(krate), &mut files);
        assert!(!files.is_empty(), "no sources under {krate}");
        for f in files {
            let text = std::fs::read_to_string(&f).expect("read a source file");
            let rel = f
                .strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .replace("/../", "/");
            let n = text.lines().count();
            if n > MAX_FILE_LINES {
                out.push((rel.clone(), String::new(), n));
            }
            for (name, len) in functions(&text) {
                if len > MAX_FN_LINES {
                    out.push((rel.clone(), name, len));
                }
            }
        }
    }
    out
}

#[test]
fn no_file_over_800_lines_and_no_function_over_150_beyond_the_shrinking_list() {
    let known: BTreeMap<(&str, &str), usize> =
        KNOWN.iter().map(|(p, f, n)| ((*p, *f), *n)).collect();
    let now = over();
    let mut problems = Vec::new();
    for (path, name, n) in &now {
        let what = if name.is_empty() {
            format!("{path}: {n} lines (at most {MAX_FILE_LINES})")
        } else {
            format!("{path}: fn {name}: {n} lines (at most {MAX_FN_LINES})")
        };
        match known.get(&(path.as_str(), name.as_str())) {
            None => problems.push(format!("new: {what}")),
            Some(was) if n > was => problems.push(format!("grew from {was}: {what}")),
            Some(_) => {}
        }
    }
    for (path, name) in known.keys() {
        if !now.iter().any(|(p, f, _)| p == path && f == name) {
            problems.push(format!(
                "{path} {name}: within the limits now; take it off KNOWN in {}",
                file!()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn functions_are_found_in_rustfmt_layout() {
    let text = "fn a() {\n    1;\n}\n\nimpl X {\n    pub(crate) fn b(\n        x: u32,\n    ) -> u32 {\n        x\n    }\n\n    fn decl(&self);\n    pub async fn c() {}\n}\n";
    assert_eq!(
        functions(text),
        vec![
            ("a".to_owned(), 3),
            ("b".to_owned(), 5),
            ("c".to_owned(), 1)
        ]
    );
}
