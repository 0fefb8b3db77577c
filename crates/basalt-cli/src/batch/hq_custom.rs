//! `bhosts -o/-json` and `bqueues -o/-json` (LSF 10.1): their field tables, each field's
//! value, and the default fields of `-json` without `-o` (the columns of the default
//! table). Layout and document: [`super::outfmt`]. `LSB_BHOSTS_FORMAT` and
//! `LSB_BQUEUES_FORMAT` give a default `-o`, as `LSB_BJOBS_FORMAT` does for bjobs.

use super::bqueues::queue_status;
use super::outfmt::{self, FieldDef, Format, f};
use basalt_proto::mbatchd::{BatchHostInfo, QueueInfo};

/// The fields of `bhosts -o`.
pub const HOST_FIELDS: &[FieldDef] = &[
    f("host_name", "HOST_NAME", 20, &["hname"]),
    f("status", "STATUS", 15, &[]),
    f("cpuf", "CPUF", 10, &[]),
    f("jl_u", "JL_U", 10, &["jlu"]),
    f("max", "MAX", 10, &[]),
    f("njobs", "NJOBS", 10, &[]),
    f("run", "RUN", 10, &[]),
    f("ssusp", "SSUSP", 10, &[]),
    f("ususp", "USUSP", 10, &[]),
    f("rsv", "RSV", 10, &[]),
    f("dispatch_window", "DISPATCH_WINDOW", 50, &["dispwin"]),
    f("comments", "COMMENTS", 128, &["comment"]),
];

/// The fields `bhosts -json` shows without `-o`: the default table's.
pub const HOST_DEFAULT: &[&str] = &[
    "host_name",
    "status",
    "jl_u",
    "max",
    "njobs",
    "run",
    "ssusp",
    "ususp",
    "rsv",
];

/// The fields of `bqueues -o`.
pub const QUEUE_FIELDS: &[FieldDef] = &[
    f("queue_name", "QUEUE_NAME", 15, &["qname"]),
    f("description", "DESCRIPTION", 50, &["desc"]),
    f("priority", "PRIORITY", 10, &["prio"]),
    f("status", "STATUS", 12, &["stat"]),
    f("max", "MAX", 10, &[]),
    f("jl_u", "JL_U", 10, &["jlu"]),
    f("jl_p", "JL_P", 10, &["jlp"]),
    f("jl_h", "JL_H", 10, &["jlh"]),
    f("njobs", "NJOBS", 10, &[]),
    f("pend", "PEND", 10, &[]),
    f("run", "RUN", 10, &[]),
    f("susp", "SUSP", 10, &[]),
    f("rsv", "RSV", 10, &[]),
    f("ususp", "USUSP", 10, &[]),
    f("ssusp", "SSUSP", 10, &[]),
    f("nice", "NICE", 6, &[]),
    f("res_req", "RES_REQ", 20, &[]),
    f("hosts", "HOSTS", 50, &[]),
    f("users", "USERS", 50, &[]),
];

/// The fields `bqueues -json` shows without `-o`: the default table's.
pub const QUEUE_DEFAULT: &[&str] = &[
    "queue_name",
    "priority",
    "status",
    "max",
    "jl_u",
    "jl_p",
    "jl_h",
    "njobs",
    "pend",
    "run",
    "susp",
];

/// A limit as bhosts and bqueues show it (`-` for none).
fn limit(v: i64) -> String {
    if v < 0 { "-".into() } else { v.to_string() }
}

/// Field `name` of host `h` ("" when it has no value).
pub fn host_value(h: &BatchHostInfo, name: &str) -> String {
    match name {
        "host_name" => h.name.clone(),
        "status" if h.long_status.is_empty() => h.status.clone(),
        "status" => h.long_status.clone(),
        "cpuf" => format!("{:.2}", h.cpu_factor),
        "jl_u" => limit(h.jl_u),
        "max" => limit(h.max),
        "njobs" => h.njobs.to_string(),
        "run" => h.run.to_string(),
        "ssusp" => h.ssusp.to_string(),
        "ususp" => h.ususp.to_string(),
        "rsv" => h.rsv.to_string(),
        "dispatch_window" => h.dispatch_window.clone(),
        "comments" => h.message.clone(),
        _ => String::new(),
    }
}

/// Field `name` of queue `q` ("" when it has no value).
pub fn queue_value(q: &QueueInfo, name: &str) -> String {
    let list = |v: &[String]| {
        if v.is_empty() {
            "all".to_owned()
        } else {
            v.join(" ")
        }
    };
    match name {
        "queue_name" => q.name.clone(),
        "description" => q.description.clone(),
        "priority" => q.priority.to_string(),
        "status" => queue_status(q, false),
        "max" => limit(q.max_jobs),
        "jl_u" => limit(q.jl_u),
        "jl_p" if q.jl_p < 0.0 || !q.jl_p.is_finite() => "-".to_owned(),
        "jl_p" => format!("{:.0}", q.jl_p),
        "jl_h" => limit(q.jl_h),
        "njobs" => q.njobs.to_string(),
        "pend" => q.pend.to_string(),
        "run" => q.run.to_string(),
        "susp" => (q.ssusp + q.ususp).to_string(),
        "rsv" => q.rsv.to_string(),
        "ususp" => q.ususp.to_string(),
        "ssusp" => q.ssusp.to_string(),
        "nice" => q.nice.to_string(),
        "res_req" => q.res_req.clone(),
        "hosts" => list(&q.hosts),
        "users" => list(&q.users),
        _ => String::new(),
    }
}

/// What `-o`, `-noheader` and `-json` asked of bhosts or bqueues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Custom {
    /// The columns (`-o`, else the default fields of `-json`).
    pub format: Format,
    pub json: bool,
    pub noheader: bool,
}

/// The custom output asked for: `-o` (else the environment's `env_var`) and `-json`;
/// None for the ordinary tables. Err: the message for an unknown field.
pub fn asked(
    o: Option<&str>,
    json: bool,
    noheader: bool,
    env_var: &str,
    fields: &'static [FieldDef],
    default: &[&str],
) -> Result<Option<Custom>, String> {
    let text = o
        .map(str::to_owned)
        .or_else(|| std::env::var(env_var).ok().filter(|s| !s.trim().is_empty()));
    let format = match text {
        Some(t) => outfmt::parse(&t, fields)?,
        None if json => Format::of(fields, default),
        None => return Ok(None),
    };
    Ok(Some(Custom {
        format,
        json,
        noheader,
    }))
}

/// The text of `rows` as `c` asks (`-json`: the document with `command` and
/// `count_key`).
pub fn render<T>(
    rows: &[T],
    c: &Custom,
    command: &str,
    count_key: &str,
    value: impl Fn(&T, &str) -> String,
) -> String {
    if c.json {
        let fields = c.format.fields();
        let records: Vec<String> = rows
            .iter()
            .map(|r| outfmt::json_record(&fields, |n| value(r, n)))
            .collect();
        outfmt::json_document(command, count_key, &records)
    } else {
        outfmt::table(rows, &c.format, c.noheader, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> BatchHostInfo {
        BatchHostInfo {
            name: "hostA".into(),
            status: "closed".into(),
            long_status: "closed_Adm".into(),
            jl_u: -1,
            max: 4,
            njobs: 1,
            run: 1,
            cpu_factor: 1.0,
            message: "disk change".into(),
            ..Default::default()
        }
    }

    #[test]
    fn bhosts_json_has_the_default_columns_and_o_picks_them() {
        let c = asked(
            None,
            true,
            false,
            "NO_SUCH_VAR_X",
            HOST_FIELDS,
            HOST_DEFAULT,
        )
        .expect("parse")
        .expect("json");
        let got = render(&[host()], &c, "bhosts", "HOSTS", host_value);
        assert_eq!(
            got,
            "{\"COMMAND\":\"bhosts\",\"HOSTS\":1,\"RECORDS\":[\n  {\"HOST_NAME\":\"hostA\",\"STATUS\":\"closed_Adm\",\"JL_U\":\"-\",\"MAX\":\"4\",\"NJOBS\":\"1\",\"RUN\":\"1\",\"SSUSP\":\"0\",\"USUSP\":\"0\",\"RSV\":\"0\"}]}\n"
        );
        let c = asked(
            Some("hname:8 max:-4 comment dispwin"),
            false,
            false,
            "NO_SUCH_VAR_X",
            HOST_FIELDS,
            HOST_DEFAULT,
        )
        .expect("parse")
        .expect("o");
        assert_eq!(
            render(&[host()], &c, "bhosts", "HOSTS", host_value),
            "HOST_NAM  MAX COMMENTS DISPATCH_WINDOW\nhostA       4 disk change -\n"
        );
        assert!(
            asked(
                None,
                false,
                false,
                "NO_SUCH_VAR_X",
                HOST_FIELDS,
                HOST_DEFAULT
            )
            .expect("none")
            .is_none()
        );
        assert!(asked(Some("nosuch"), false, false, "X", HOST_FIELDS, HOST_DEFAULT).is_err());
    }

    #[test]
    fn bqueues_o_and_json() {
        let mut q = super::super::bqueues::tests::normal();
        q.ssusp = 1;
        q.ususp = 2;
        let c = asked(
            Some("queue_name priority status susp delimiter=','"),
            false,
            true,
            "NO_SUCH_VAR_X",
            QUEUE_FIELDS,
            QUEUE_DEFAULT,
        )
        .expect("parse")
        .expect("o");
        assert_eq!(
            render(&[q.clone()], &c, "bqueues", "QUEUES", queue_value),
            "normal,30,Open:Active,3\n"
        );
        let c = asked(
            None,
            true,
            false,
            "NO_SUCH_VAR_X",
            QUEUE_FIELDS,
            QUEUE_DEFAULT,
        )
        .expect("parse")
        .expect("json");
        let got = render(&[q], &c, "bqueues", "QUEUES", queue_value);
        assert!(
            got.starts_with("{\"COMMAND\":\"bqueues\",\"QUEUES\":1,\"RECORDS\":[\n  {\"QUEUE_NAME\":\"normal\",\"PRIORITY\":\"30\",\"STATUS\":\"Open:Active\",\"MAX\":\"-\""),
            "{got}"
        );
    }
}
