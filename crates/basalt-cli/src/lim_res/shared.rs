//! Shared resources of the ResourceMap section ([`shared_instances`]) and the layouts
//! of `lsload -s`, `lshosts -s` ([`shared_table`]) and `bhosts -s` ([`batch_shared_table`]).

use super::*;

pub use basalt_config::resource_map::{SharedInstance, shared_instances};

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
pub(super) fn host_list(out: &mut String, hosts: &[String], mut pos: usize) {
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
    reserved_of: impl Fn(&SharedInstance) -> String,
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
            reserved_of(i)
        ));
        host_list(&mut out, &i.hosts, 52);
    }
    out
}

/// A value as an ELIM reports it: integers without a fraction.
pub fn number_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}
