//! What the "read but not applied" warnings of a configuration must be, worked out from
//! the files' text by a reader of its own (not basalt-config's parser) and the public
//! tables of `basalt_config::not_applied`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use basalt_config::Loaded;
use basalt_config::not_applied::{self, NotApplied};

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/examples")
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A scratch copy of an example set.
pub fn scratch(example: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&examples().join(example), dir.path());
    dir
}

/// Replace `from` (which must occur) by `to` in `file`.
pub fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} does not contain {from:?}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// 1-based line of the first line of `file` containing `needle`.
pub fn line_of(dir: &Path, file: &str, needle: &str) -> usize {
    let text = fs::read_to_string(dir.join(file)).unwrap();
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in {file}"))
        + 1
}

/// (file, line, how the warning names the keyword).
pub type Expected = BTreeSet<(PathBuf, usize, String)>;

/// The not-applied warnings of `loaded`, in the form of [`Expected`]: the message up to
/// ` is read but not applied`.
pub fn not_applied_warnings(loaded: &Loaded) -> Expected {
    loaded
        .warnings
        .iter()
        .filter(|w| w.not_applied)
        .map(|w| {
            let label = w
                .message
                .split(" is read but not applied")
                .next()
                .unwrap_or_default();
            (w.file.clone(), w.line, label.to_owned())
        })
        .collect()
}

/// Lines of a file: comments cut, continuation lines joined (numbered by their first
/// line), blank lines dropped.
fn lines(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let body = raw.split('#').next().unwrap_or_default().trim_end();
        let (body, more) = match body.strip_suffix('\\') {
            Some(b) => (b, true),
            None => (body, false),
        };
        let (no, mut acc) = pending.take().unwrap_or((i + 1, String::new()));
        acc.push(' ');
        acc.push_str(body.trim());
        if more {
            pending = Some((no, acc));
        } else if !acc.trim().is_empty() {
            out.push((no, acc.trim().to_owned()));
        }
    }
    out.extend(pending);
    out
}

/// Fields of a row: blank-separated, `(a b)` one field; `()` and `-` are unset.
fn fields(row: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in row.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            c if c.is_whitespace() && depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.into_iter()
        .map(|f| {
            let inner = f
                .strip_prefix('(')
                .and_then(|x| x.strip_suffix(')'))
                .unwrap_or(&f)
                .trim()
                .to_owned();
            (!inner.is_empty() && inner != "-").then_some(inner)
        })
        .collect()
}

fn entries<'t>(
    table: &'t [NotApplied],
    section: &'t str,
    keyword: &'t str,
) -> impl Iterator<Item = &'t NotApplied> + 't {
    not_applied::lookup(table, section, keyword).filter(|e| !e.custom)
}

fn label(e: &NotApplied, keyword: &str) -> String {
    if e.keyword == "*" {
        keyword.to_ascii_uppercase()
    } else {
        e.label().to_owned()
    }
}

/// One Begin/End section as this reader sees it.
struct Section {
    name: String,
    line: usize,
    body: Vec<(usize, String)>,
}

fn sections(text: &str) -> Vec<Section> {
    let mut out = Vec::new();
    let mut cur: Option<Section> = None;
    for (no, l) in lines(text) {
        let mut w = l.split_whitespace();
        let first = w.next().unwrap_or_default();
        if !l.contains('=') && first.eq_ignore_ascii_case("begin") {
            cur = Some(Section {
                name: w.next().unwrap_or_default().to_owned(),
                line: no,
                body: Vec::new(),
            });
        } else if !l.contains('=') && first.eq_ignore_ascii_case("end") {
            out.extend(cur.take());
        } else if let Some(s) = cur.as_mut() {
            s.body.push((no, l));
        }
    }
    out
}

/// What a sectioned file must warn about. `hosts` are the cluster's hosts and
/// `models_and_types` the host models and types of lsf.shared (for lsb.hosts rows).
fn sectioned(
    path: &Path,
    table: &[NotApplied],
    hosts: &[String],
    models_and_types: &[String],
    out: &mut Expected,
) {
    let Ok(text) = fs::read_to_string(path) else {
        return;
    };
    let file = path
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    for s in sections(&text) {
        let name = s.name.as_str();
        let custom = |keyword: &str| {
            table
                .iter()
                .find(|e| e.custom && e.keyword.eq_ignore_ascii_case(keyword))
        };
        if let Some(e) = custom(name).filter(|e| e.keyword != "Limit") {
            // A whole section: HostPartition always; ResourceMap only for a row naming a
            // dynamic Boolean or String resource, which these test configurations have
            // none of.
            if e.keyword != "ResourceMap" {
                out.insert((path.to_path_buf(), s.line, e.keyword.to_owned()));
            }
            continue;
        }
        let name = table
            .iter()
            .find(|e| e.section.eq_ignore_ascii_case(name))
            .map_or(name, |e| e.section);
        let vertical = s.body.first().is_some_and(|(_, l)| l.contains('='));
        if vertical {
            let mut limit_name = None;
            for (no, l) in &s.body {
                let Some((k, v)) = l.split_once('=') else {
                    continue;
                };
                let (k, v) = (k.trim(), v.trim());
                if k.eq_ignore_ascii_case("NAME") {
                    limit_name = Some(v.to_owned());
                }
                for e in entries(table, name, k) {
                    if e.matches_value(v) {
                        out.insert((path.to_path_buf(), *no, label(e, k)));
                    }
                }
            }
            if name == "Limit" && custom("Limit").is_some() {
                let n = limit_name.unwrap_or_default();
                out.insert((path.to_path_buf(), s.line, format!("Limit `{n}`")));
            }
            // What a Limit applies only with PER_HOST (SLOTS_PER_PROCESSOR, MEM = n%).
            let per_host = s.body.iter().any(|(_, l)| {
                l.split_once('=')
                    .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("PER_HOST"))
            });
            if name == "Limit" && !per_host {
                for (no, l) in &s.body {
                    let Some((k, v)) = l.split_once('=') else {
                        continue;
                    };
                    let (k, v) = (k.trim(), v.trim());
                    for e in table.iter().filter(|e| {
                        e.custom
                            && e.section == "Limit"
                            && e.keyword.eq_ignore_ascii_case(k)
                            && e.matches_value(v)
                    }) {
                        out.insert((path.to_path_buf(), *no, label(e, k)));
                    }
                }
            }
            continue;
        }
        let Some(((header_no, header), rows)) = s.body.split_first() else {
            continue;
        };
        let columns: Vec<&str> = header.split_whitespace().collect();
        let rows: Vec<(usize, Vec<Option<String>>)> =
            rows.iter().map(|(no, r)| (*no, fields(r))).collect();
        let value = |row: &[Option<String>], i: usize| row.get(i).cloned().flatten();
        for (i, c) in columns.iter().enumerate() {
            for e in entries(table, name, c) {
                if rows
                    .iter()
                    .any(|(_, r)| value(r, i).is_some_and(|v| e.matches_value(&v)))
                {
                    out.insert((path.to_path_buf(), *header_no, label(e, c)));
                }
            }
        }
        if name == "Limit" && custom("Limit").is_some() {
            let n = columns.iter().position(|c| c.eq_ignore_ascii_case("NAME"));
            for (no, r) in &rows {
                let n = n.and_then(|n| value(r, n)).unwrap_or_default();
                out.insert((path.to_path_buf(), *no, format!("Limit `{n}`")));
            }
        }
        if file == "lsb.hosts" && name == "Host" && custom("HOST_NAME").is_some() {
            // A row that names no host of the cluster and sets what mbatchd takes only
            // from host rows and `default` (a model or type row keeps its loadStop).
            let col = |n: &str| columns.iter().position(|c| c.eq_ignore_ascii_case(n));
            let Some(name_col) = col("HOST_NAME") else {
                continue;
            };
            for (no, r) in &rows {
                let host = value(r, name_col).unwrap_or_default();
                if host == "default" || hosts.iter().any(|h| h.eq_ignore_ascii_case(&host)) {
                    continue;
                }
                let model_or_type = models_and_types.iter().any(|m| m == &host);
                let mut for_mbatchd = false;
                let mut any = false;
                for (i, c) in columns.iter().enumerate() {
                    let Some(v) = value(r, i) else { continue };
                    let c = c.to_ascii_uppercase();
                    if c == "HOST_NAME" || ["CHKPNT", "EXIT_RATE", "AFFINITY"].contains(&c.as_str())
                    {
                        continue;
                    }
                    any = true;
                    let sched_side = v.split('/').next().unwrap_or_default().trim();
                    if ["MXJ", "JL/U", "DISPATCH_WINDOW"].contains(&c.as_str())
                        || !(sched_side.is_empty() || sched_side == "()")
                    {
                        for_mbatchd = true;
                    }
                }
                if for_mbatchd || (any && !model_or_type) {
                    out.insert((path.to_path_buf(), *no, format!("HOST_NAME `{host}`")));
                }
            }
        }
    }
}

/// What lsf.conf must warn about.
fn lsf_conf(path: &Path, out: &mut Expected) {
    let Ok(text) = fs::read_to_string(path) else {
        return;
    };
    for (no, l) in lines(&text) {
        let l = l.strip_prefix("export ").unwrap_or(&l);
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        let v = v.trim().trim_matches(|c| c == '"' || c == '\'');
        for e in entries(not_applied::LSF_CONF, "", k.trim()) {
            if e.matches_value(v) {
                out.insert((path.to_path_buf(), no, label(e, k.trim())));
            }
        }
    }
}

/// Every "read but not applied" warning a loaded configuration must carry, from its
/// files' text.
pub fn expected_not_applied(loaded: &Loaded) -> Expected {
    let c = &loaded.config;
    let mut out = Expected::new();
    let hosts: Vec<String> = c.cluster.hosts.iter().map(|h| h.name.clone()).collect();
    let mut models_and_types: Vec<String> = c
        .shared
        .host_models
        .iter()
        .map(|m| m.name.clone())
        .collect();
    models_and_types.extend(c.shared.host_types.iter().cloned());
    lsf_conf(&c.envdir.join("lsf.conf"), &mut out);
    sectioned(
        &c.confdir.join(format!("lsf.cluster.{}", c.cluster_name)),
        not_applied::LSF_CLUSTER,
        &hosts,
        &models_and_types,
        &mut out,
    );
    let dir = c.batch_confdir();
    for (file, table) in not_applied::TABLES {
        if file.starts_with("lsb.") {
            sectioned(&dir.join(file), table, &hosts, &models_and_types, &mut out);
        }
    }
    out
}

/// The not-applied warnings label a keyword by the expected label, possibly followed by
/// more (` (a host model)` after a HOST_NAME row): compare on the expected prefix.
pub fn assert_lists_every_not_applied(loaded: &Loaded) -> Expected {
    let expected = expected_not_applied(loaded);
    let actual = not_applied_warnings(loaded);
    let matches = |(f, l, label): &(PathBuf, usize, String),
                   (g, m, text): &(PathBuf, usize, String)| {
        f == g && l == m && (text == label || text.starts_with(&format!("{label} (")))
    };
    for e in &expected {
        assert!(
            actual.iter().any(|a| matches(e, a)),
            "missing warning {e:?}; got {actual:#?}"
        );
    }
    for a in &actual {
        assert!(
            expected.iter().any(|e| matches(e, a)),
            "unexpected warning {a:?}; expected {expected:#?}"
        );
    }
    expected
}
