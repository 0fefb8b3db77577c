//! DESIGN rule 1: the deterministic cores have no runtime, network, OS or
//! database crates anywhere in their dependency tree.

use std::process::Command;

const FORBIDDEN: &[&str] = &[
    "tokio", "tonic", "nix", "sysinfo", "rusqlite", "procfs", "mio",
];
const PURE: &[&str] = &[
    "basalt-core",
    "basalt-lim-core",
    "basalt-sched",
    "basalt-eventlog",
    "basalt-susp-core",
];

#[test]
fn pure_cores_have_no_io_dependencies() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    for krate in PURE {
        let out = Command::new(&cargo)
            .current_dir(root)
            .args([
                "tree",
                "--offline",
                "-e",
                "normal,build",
                "--prefix",
                "none",
                "-p",
                krate,
            ])
            .output()
            .expect("running cargo tree");
        assert!(
            out.status.success(),
            "cargo tree -p {krate} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tree = String::from_utf8_lossy(&out.stdout);
        assert!(
            tree.contains(krate),
            "cargo tree printed nothing for {krate}"
        );
        for line in tree.lines() {
            let name = line.split_whitespace().next().unwrap_or("");
            assert!(
                !FORBIDDEN.contains(&name),
                "{krate} depends on {name}:\n{tree}"
            );
        }
    }
}
