//! Issue 50 item 8: values that are wrong are reported by name, file and line, as LSF
//! reports them, instead of loading silently: a limit that does not parse (an error), a
//! queue's HOSTS or USERS naming nothing that exists and a Limit naming a queue or host
//! that does not exist (warnings; the name is dropped, and what is left with no valid
//! name is ignored), and every problem of every file in one load.

use std::path::Path;

use basalt_config::{ConfigErrors, Loaded, Warning, load, load_with_users};

mod common;
use common::{edit, line_of, scratch};

fn load_ok(dir: &Path) -> Loaded {
    load(dir).unwrap_or_else(|e| panic!("configuration errors:\n{e}"))
}

fn expect_errors(dir: &Path) -> ConfigErrors {
    match load(dir) {
        Ok(l) => panic!("loaded although it should not: warnings {:?}", l.warnings),
        Err(e) => e,
    }
}

/// The warnings (not the not-applied ones) at `file:line` of `dir`.
fn warnings_at<'w>(warnings: &'w [Warning], dir: &Path, file: &str, line: usize) -> Vec<&'w str> {
    warnings
        .iter()
        .filter(|w| !w.not_applied && w.file == dir.join(file) && w.line == line)
        .map(|w| w.message.as_str())
        .collect()
}

/// `RUNLIMIT = 10 abc` was kept as the text "10 abc" (and not applied); every limit
/// value must parse as LSF's `[default] maximum`, each `[hour:]minute[/host_spec]` (a
/// count or a size for the others); one that does not is an error naming the line.
#[test]
fn item8_a_limit_that_does_not_parse_is_an_error_naming_its_line() {
    for (bad, word) in [
        ("RUNLIMIT     = 10 abc", "abc"),
        ("CPULIMIT     = 1:x", "1:x"),
        ("RUNLIMIT     = 1 2 3", "1 2 3"),
        ("RUNLIMIT     = 60 10", "60"),
        ("MEMLIMIT     = 10 lots", "lots"),
        ("PROCESSLIMIT = 4.5", "4.5"),
    ] {
        let dir = scratch("openlava");
        edit(
            dir.path(),
            "lsb.queues",
            "PRIORITY     = 30",
            &format!("PRIORITY     = 30\n{bad}"),
        );
        let errors = expect_errors(dir.path());
        let at = format!(
            "{}:{}:",
            dir.path().join("lsb.queues").display(),
            line_of(dir.path(), "lsb.queues", bad)
        );
        let key = bad.split_whitespace().next().unwrap_or_default();
        assert!(
            errors.0.iter().any(|e| e.to_string().starts_with(&at)
                && e.message.contains(key)
                && e.message.contains(word)),
            "{bad}: expected an error at {at} naming {key} and `{word}`:\n{errors}"
        );
    }
    // LSF's forms load.
    let dir = scratch("openlava");
    edit(
        dir.path(),
        "lsb.queues",
        "PRIORITY     = 30",
        "PRIORITY     = 30\nRUNLIMIT = 10 1:30/hostA\nCPULIMIT = 5/IntelI5\n\
         MEMLIMIT = 100 2G\nPROCESSLIMIT = 4 8\nCORELIMIT = 0",
    );
    let loaded = load_ok(dir.path());
    let q = loaded.config.batch.queue("normal").unwrap();
    assert_eq!(q.limits["RUNLIMIT"], "10 1:30/hostA");
    // lsb.applications too.
    let dir = scratch("ibm");
    let apps = "lsbatch/openlava/configdir/lsb.applications";
    edit(
        dir.path(),
        apps,
        "RUNLIMIT     = 10",
        "RUNLIMIT     = 10 abc",
    );
    let errors = expect_errors(dir.path());
    assert!(
        errors.to_string().contains(&format!(
            "{}:{}: RUNLIMIT",
            dir.path().join(apps).display(),
            line_of(dir.path(), apps, "10 abc")
        )),
        "{errors}"
    );
}

/// `HOSTS = hostZ` (no host of the cluster, no host group, not all/others/none) loaded
/// silently and made a queue that never dispatches: the name is a warning naming the
/// line and is dropped; a queue left with no valid host is ignored with a warning.
#[test]
fn item8_a_queue_host_that_does_not_exist_warns_and_a_queue_left_without_hosts_is_dropped() {
    let dir = scratch("openlava");
    edit(
        dir.path(),
        "lsb.queues",
        "PRIORITY     = 30",
        "PRIORITY     = 30\nHOSTS = hostA+2 hostZ group0+1 others+1 ~hostB",
    );
    edit(
        dir.path(),
        "lsb.queues",
        "HOSTS        = group0",
        "HOSTS        = hostZ nogroup+1",
    );
    let loaded = load_ok(dir.path());
    let w = &loaded.warnings;
    let normal_at = line_of(dir.path(), "lsb.queues", "hostZ group0");
    let got = warnings_at(w, dir.path(), "lsb.queues", normal_at);
    assert_eq!(got.len(), 1, "{w:#?}");
    assert!(
        got[0].contains("normal") && got[0].contains("hostZ") && got[0].contains("ignored"),
        "{got:?}"
    );
    let normal = loaded.config.batch.queue("normal").unwrap();
    assert_eq!(
        normal.hosts,
        vec!["hostA+2", "group0+1", "others+1", "~hostB"]
    );
    // idle named no valid host: dropped, with a warning at its HOSTS line.
    assert!(loaded.config.batch.queue("idle").is_none());
    let idle_at = line_of(dir.path(), "lsb.queues", "hostZ nogroup");
    let got = warnings_at(w, dir.path(), "lsb.queues", idle_at);
    assert!(got.iter().any(|m| m.contains("nogroup")), "{got:?}");
    assert!(
        got.iter()
            .any(|m| m.contains("idle") && m.contains("No valid value for key HOSTS")),
        "{got:?}"
    );
    // Its Limit (`QUEUES = all ~idle`) now names a queue that does not exist: a warning.
    let limit_at = line_of(dir.path(), "lsb.resources", "QUEUES   = all ~idle");
    let got = warnings_at(w, dir.path(), "lsb.resources", limit_at);
    assert!(got.iter().any(|m| m.contains("idle")), "{w:#?}");

    // `none`, `all` and a host group are hosts enough.
    let dir = scratch("openlava");
    edit(
        dir.path(),
        "lsb.queues",
        "PRIORITY     = 30",
        "PRIORITY     = 30\nHOSTS = all ~group0",
    );
    let loaded = load_ok(dir.path());
    assert!(
        loaded.warnings.iter().all(|w| w.not_applied),
        "{:#?}",
        loaded.warnings
    );
    common::assert_lists_every_not_applied(&loaded);
}

/// `USERS = nosuchuser` made a queue nobody can use: a name that is no user (as the
/// system knows them), no user group of lsb.users and not `all` is a warning and is
/// dropped; a queue left with no valid user is ignored with a warning.
#[test]
fn item8_queue_users_that_do_not_exist_warn_and_a_queue_nobody_can_use_is_dropped() {
    let dir = scratch("openlava");
    edit(
        dir.path(),
        "lsb.queues",
        "PRIORITY     = 30",
        "PRIORITY     = 30\nUSERS = alice nosuchuser develop ~ghost",
    );
    edit(
        dir.path(),
        "lsb.queues",
        "HOSTS        = group0",
        "HOSTS        = group0\nUSERS = nosuchuser",
    );
    let known = |u: &str| matches!(u, "alice" | "bob" | "david");
    let loaded = load_with_users(dir.path(), &known).unwrap_or_else(|e| panic!("errors:\n{e}"));
    let w = &loaded.warnings;
    let at = line_of(dir.path(), "lsb.queues", "alice nosuchuser");
    let got = warnings_at(w, dir.path(), "lsb.queues", at);
    assert!(
        got.iter()
            .any(|m| m.contains("nosuchuser") && m.contains("normal")),
        "{w:#?}"
    );
    assert!(got.iter().any(|m| m.contains("ghost")), "{w:#?}");
    let normal = loaded.config.batch.queue("normal").unwrap();
    assert_eq!(normal.users, vec!["alice", "develop"]);
    assert!(loaded.config.batch.queue("idle").is_none());
    let at = line_of(dir.path(), "lsb.queues", "USERS = nosuchuser");
    let got = warnings_at(w, dir.path(), "lsb.queues", at);
    assert!(
        got.iter()
            .any(|m| m.contains("idle") && m.contains("No valid value for key USERS")),
        "{w:#?}"
    );
    // Without a way to look users up (`load`), names are not judged.
    let loaded = load_ok(dir.path());
    assert!(loaded.config.batch.queue("idle").is_some());
}

/// A Limit naming a queue or host that does not exist loaded silently: each such name
/// is a warning naming the line and is dropped; a Limit whose consumer list is left
/// with no valid name is ignored (not widened to every queue or host).
#[test]
fn item8_limits_naming_a_queue_or_host_that_does_not_exist_warn() {
    let dir = scratch("openlava");
    let limits = "\nBegin Limit\nNAME = someq\nQUEUES = normal nosuchq\nSLOTS = 4\nEnd Limit\n\
                  \nBegin Limit\nNAME = noq\nPER_QUEUE = nosuchq\nSLOTS = 4\nEnd Limit\n\
                  \nBegin Limit\nNAME = hosts\nHOSTS = hostA hostZ group0 ~hostB\nJOBS = 4\nEnd Limit\n\
                  \nBegin Limit\nNAME = nohost\nPER_HOST = hostZ\nJOBS = 4\nEnd Limit\n";
    let text = std::fs::read_to_string(dir.path().join("lsb.resources")).unwrap() + limits;
    std::fs::write(dir.path().join("lsb.resources"), text).unwrap();
    let loaded = load_ok(dir.path());
    let w = &loaded.warnings;
    let b = &loaded.config.batch;
    let some = b.limits.iter().find(|l| l.name == "someq").unwrap();
    assert_eq!(some.queues, vec!["normal"]);
    let at = line_of(dir.path(), "lsb.resources", "QUEUES = normal nosuchq");
    assert!(
        warnings_at(w, dir.path(), "lsb.resources", at)
            .iter()
            .any(|m| m.contains("someq") && m.contains("nosuchq")),
        "{w:#?}"
    );
    let hosts = b.limits.iter().find(|l| l.name == "hosts").unwrap();
    assert_eq!(hosts.hosts, vec!["hostA", "group0", "~hostB"]);
    let at = line_of(dir.path(), "lsb.resources", "hostA hostZ group0");
    assert!(
        warnings_at(w, dir.path(), "lsb.resources", at)
            .iter()
            .any(|m| m.contains("hostZ")),
        "{w:#?}"
    );
    for (name, needle) in [
        ("noq", "PER_QUEUE = nosuchq"),
        ("nohost", "PER_HOST = hostZ"),
    ] {
        assert!(
            !b.limits.iter().any(|l| l.name == name),
            "{name} is ignored"
        );
        let at = line_of(dir.path(), "lsb.resources", needle);
        assert!(
            warnings_at(w, dir.path(), "lsb.resources", at)
                .iter()
                .any(|m| m.contains(name) && m.contains("ignored")),
            "{name}: {w:#?}"
        );
    }
}

/// `badmin ckconfig` showed the warnings only once the fatal errors were fixed: a load
/// that fails keeps every warning of every file with its errors.
#[test]
fn item8_a_failed_load_keeps_the_warnings_of_every_file() {
    let dir = scratch("openlava");
    edit(
        dir.path(),
        "lsb.queues",
        "PRIORITY     = 30",
        "PRIORITY     = 30\nRUNLIMIT = 10 abc",
    );
    edit(
        dir.path(),
        "lsb.params",
        "DEFAULT_QUEUE",
        "NO_SUCH_KEYWORD = 1\nDEFAULT_QUEUE",
    );
    edit(
        dir.path(),
        "lsb.hosts",
        "(hostA hostB)",
        "(hostA hostB hostZ)",
    );
    edit(
        dir.path(),
        "lsb.resources",
        "QUEUES   = all ~idle",
        "QUEUES   = all ~nosuchq",
    );
    let errors = expect_errors(dir.path());
    assert_eq!(errors.0.len(), 1, "{errors}");
    let files: std::collections::BTreeSet<_> = errors
        .warnings()
        .iter()
        .filter(|w| !w.not_applied)
        .map(|w| w.file.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for f in ["lsb.params", "lsb.hosts", "lsb.resources"] {
        assert!(
            files.contains(f),
            "no warning of {f}: {:#?}",
            errors.warnings()
        );
    }
}
