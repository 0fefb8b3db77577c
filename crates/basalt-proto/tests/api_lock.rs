//! The wire API is locked: `proto/api.lock` holds the canonical listing of every message,
//! field number and type, enum value and RPC of `proto/` ([`basalt_proto::API`]), and this
//! test fails when the schemas and the lock differ, so that a wire change is always a
//! deliberate, reviewed change of the lock.
//!
//! To accept a change: `BASALT_BLESS_PROTO=1 cargo test -p basalt-proto --test api_lock`
//! rewrites the lock when the change only adds (new messages, fields, values, RPCs, or
//! removals whose numbers are reserved). A breaking change (a field's number reused with
//! another type, a field or value removed without reserving its number, an enum value
//! renamed, an RPC removed or retyped) also needs `BASALT_PROTO_BREAK=1` and a protocol
//! version bump that peers check.

use std::collections::BTreeMap;

fn lock_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto/api.lock")
}

/// (container, element) → description, and each container's reserved number ranges.
#[derive(Default)]
struct Api {
    items: BTreeMap<(String, String), String>,
    reserved: BTreeMap<String, Vec<(i64, i64)>>,
}

fn parse(text: &str) -> Api {
    let mut api = Api::default();
    let mut container = String::new();
    for line in text.lines() {
        let Some(inner) = line.strip_prefix("  ") else {
            container = line.to_owned();
            continue;
        };
        let mut words = inner.splitn(3, ' ');
        let (kind, a, rest) = (
            words.next().unwrap_or(""),
            words.next().unwrap_or(""),
            words.next().unwrap_or(""),
        );
        match kind {
            "field" | "value" => {
                api.items
                    .insert((container.clone(), format!("{kind} {a}")), rest.to_owned());
            }
            "rpc" => {
                let name = a.split('(').next().unwrap_or(a).to_owned();
                api.items
                    .insert((container.clone(), format!("rpc {name}")), inner.to_owned());
            }
            "reserved" => {
                if let Some((lo, hi)) = a.split_once("..=")
                    && let (Ok(lo), Ok(hi)) = (lo.parse(), hi.parse())
                {
                    api.reserved
                        .entry(container.clone())
                        .or_default()
                        .push((lo, hi));
                }
            }
            _ => {}
        }
    }
    api
}

/// `container` is a message that `api` neither defines nor names as a field's type.
fn message_unused(container: &str, api: &Api) -> bool {
    let Some(name) = container.strip_prefix("message ") else {
        return false;
    };
    let ty = format!(".{name}");
    let defined = api.items.keys().any(|(c, _)| c == container);
    let named = api.items.values().any(|d| {
        d.split_once(": ")
            .is_some_and(|(_, t)| t.trim_start_matches("repeated ") == ty)
    });
    !defined && !named
}

/// The changes from `old` to `new` that an older peer would misread.
fn breaking(old: &str, new: &str) -> Vec<String> {
    let (old, new) = (parse(old), parse(new));
    let mut out = Vec::new();
    for ((container, elem), was) in &old.items {
        match new.items.get(&(container.clone(), elem.clone())) {
            Some(now) if elem.starts_with("field ") => {
                let ty = |d: &str| d.split_once(": ").map(|(_, t)| t.to_owned());
                if ty(was) != ty(now) {
                    out.push(format!("{container}: {elem} changed type: {was} -> {now}"));
                }
            }
            Some(now) if now != was => {
                out.push(format!("{container}: {elem} changed: {was} -> {now}"));
            }
            Some(_) => {}
            // A message gone as a whole, that no field of the new API refers to, was
            // already out of use: nobody can send or receive it.
            None if message_unused(container, &new) => {}
            None => {
                let number = elem
                    .split_once(' ')
                    .and_then(|(_, n)| n.parse::<i64>().ok());
                let reserved = number.is_some_and(|n| {
                    new.reserved
                        .get(container)
                        .is_some_and(|r| r.iter().any(|&(lo, hi)| lo <= n && n <= hi))
                });
                if !reserved {
                    out.push(format!(
                        "{container}: {elem} ({was}) removed without reserving its number"
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn api_lock_matches_the_schemas() {
    let current = basalt_proto::API;
    let path = lock_path();
    let locked = std::fs::read_to_string(&path).unwrap_or_default();
    if locked == current {
        return;
    }
    let broken = breaking(&locked, current);
    if std::env::var_os("BASALT_BLESS_PROTO").is_some() {
        assert!(
            broken.is_empty() || std::env::var_os("BASALT_PROTO_BREAK").is_some(),
            "breaking wire changes (set BASALT_PROTO_BREAK=1 too if they are intended):\n{}",
            broken.join("\n")
        );
        std::fs::write(&path, current).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        eprintln!("rewrote {}", path.display());
        return;
    }
    let old: Vec<&str> = locked.lines().collect();
    let new: Vec<&str> = current.lines().collect();
    let mut diff = String::new();
    for l in old.iter().filter(|l| !new.contains(l)) {
        diff.push_str(&format!("- {l}\n"));
    }
    for l in new.iter().filter(|l| !old.contains(l)) {
        diff.push_str(&format!("+ {l}\n"));
    }
    panic!(
        "proto/ and {} differ:\n{diff}\nbreaking: {broken:#?}\nIf the change is intended, run \
         BASALT_BLESS_PROTO=1 cargo test -p basalt-proto --test api_lock",
        path.display()
    );
}

const OLD: &str = "message p.M\n  field 1 a: string\n  field 2 b: int32\nenum p.E\n  value 0 X\n  value 1 Y\nservice p.S\n  rpc Get(.p.M) returns (.p.M)\n";

#[test]
fn api_lock_accepts_additions() {
    let new = format!("{OLD}message p.N\n  field 1 c: bool\n");
    let new = new.replace(
        "  field 2 b: int32\n",
        "  field 2 b: int32\n  field 3 c: bytes\n",
    );
    assert_eq!(breaking(OLD, &new), Vec::<String>::new());
}

#[test]
fn api_lock_accepts_a_removed_field_whose_number_is_reserved() {
    let new = OLD.replace("  field 2 b: int32\n", "  reserved 2..=2\n");
    assert_eq!(breaking(OLD, &new), Vec::<String>::new());
}

#[test]
fn api_lock_refuses_a_removed_field_without_reservation() {
    let new = OLD.replace("  field 2 b: int32\n", "");
    assert_eq!(
        breaking(OLD, &new),
        vec!["message p.M: field 2 (b: int32) removed without reserving its number"]
    );
}

#[test]
fn api_lock_refuses_a_number_reused_with_another_type() {
    let new = OLD.replace("field 2 b: int32", "field 2 b: string");
    assert_eq!(breaking(OLD, &new).len(), 1);
}

#[test]
fn api_lock_refuses_renamed_enum_values_and_changed_rpcs() {
    let new = OLD
        .replace("value 1 Y", "value 1 Z")
        .replace("returns (.p.M)", "returns (.p.N)");
    assert_eq!(breaking(OLD, &new).len(), 2);
}

#[test]
fn api_lock_accepts_a_removed_message_nothing_refers_to() {
    let old = format!("{OLD}message p.C\n  field 1 uid: uint32\n");
    assert_eq!(breaking(&old, OLD), Vec::<String>::new());
}

#[test]
fn api_lock_refuses_a_removed_message_a_field_still_names() {
    let old = format!("{OLD}message p.C\n  field 1 uid: uint32\n");
    let new = OLD.replace("  field 2 b: int32\n", "  field 2 b: .p.C\n");
    let old = old.replace("  field 2 b: int32\n", "  field 2 b: .p.C\n");
    assert_eq!(
        breaking(&old, &new),
        vec!["message p.C: field 1 (uid: uint32) removed without reserving its number"]
    );
}
