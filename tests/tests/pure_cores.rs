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
    "basalt-records",
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

/// The cores that take time as an input never read the clock, touch files, the environment
/// or processes: each has a clippy.toml whose `disallowed-methods` CI enforces with
/// `cargo clippy -- -D warnings`. This test keeps those files from quietly going away.
#[test]
fn pure_cores_forbid_clock_and_file_access_to_clippy() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    const CLOCK_AND_FILES: &[&str] = &[
        "basalt-core",
        "basalt-lim-core",
        "basalt-sched",
        "basalt-susp-core",
        "basalt-records",
    ];
    for krate in CLOCK_AND_FILES {
        let path = format!("{root}/crates/{krate}/clippy.toml");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e} (a pure core needs its clippy.toml)"));
        for method in [
            "std::time::SystemTime::now",
            "std::time::Instant::now",
            "std::fs::read_to_string",
            "std::fs::write",
            "std::fs::File::open",
            "std::fs::OpenOptions::open",
            "std::env::var",
            "std::process::Command::new",
        ] {
            assert!(
                text.contains(&format!("path = \"{method}\"")),
                "{path} does not forbid {method}"
            );
        }
    }
}
