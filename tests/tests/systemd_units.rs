//! The units in config/systemd pass `systemd-analyze verify` without a single
//! warning (the tool exits 0 on unknown keys, so its output is checked too).
//!
//! ExecStart paths are rewritten to the binaries of this build, which must exist (the
//! lim, res and sbatchd daemons). Without systemd-analyze the test fails under CI
//! (`CI` set; .ci/run installs systemd) and is skipped with a notice elsewhere.

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn systemd_units_verify_cleanly() {
    let have = Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok();
    if !have {
        assert!(
            std::env::var_os("CI").is_none(),
            "systemd-analyze is missing under CI: .ci/run must install systemd"
        );
        basalt_testkit::skip(
            "systemd_units_verify_cleanly",
            "systemd-analyze is not installed",
        );
        return;
    }
    let units = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../config/systemd"));
    let bin = basalt_testkit::bin_dir().expect("built binaries");
    let dir = tempfile_dir();
    let mut checked = 0;
    for entry in std::fs::read_dir(units).expect("config/systemd") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "service") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("unit text");
        let rewritten: String = text
            .lines()
            .map(|l| {
                for key in ["ExecStart=", "ExecStartPre="] {
                    if let Some(cmd) = l.strip_prefix(key) {
                        let mut words = cmd.split_whitespace();
                        let exe = words.next().unwrap_or("");
                        let name = Path::new(exe).file_name().unwrap_or_default();
                        let built = bin.join(name);
                        // Every unit starts a daemon this build has.
                        assert!(
                            built.exists(),
                            "{}: {key}{exe} names no binary of this build",
                            path.display()
                        );
                        let target = built;
                        let rest: Vec<&str> = words.collect();
                        return format!("{key}{} {}", target.display(), rest.join(" "));
                    }
                }
                l.to_owned()
            })
            .map(|l| l + "\n")
            .collect();
        let out_path = dir.join(path.file_name().expect("name"));
        std::fs::write(&out_path, rewritten).expect("write unit");
        let out = Command::new("systemd-analyze")
            .args(["verify", "--man=no"])
            .arg(&out_path)
            .output()
            .expect("systemd-analyze");
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Lines about the host's own units (not ours) are not our concern.
        let ours: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains(&*out_path.to_string_lossy()) || l.contains("basalt"))
            .collect();
        assert!(
            out.status.success() && ours.is_empty(),
            "{} does not verify cleanly:\n{stderr}",
            path.display()
        );
        checked += 1;
    }
    assert_eq!(checked, 3, "expected the lim, res and sbatchd units");
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempfile_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("basalt-units-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}
