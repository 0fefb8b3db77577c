//! The C API's test programs (`crates/basalt-capi/tests/c/*.c`): compiled with the
//! system `cc` against the headers and the `libbat.so` these tests were built with,
//! run with every check printing `ok` (a `FAIL` line or an exit status fails), and run
//! under Valgrind where it is installed.

use crate::output_text;
use anyhow::{Context as _, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `crates/basalt-capi` of this checkout.
pub fn capi_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../basalt-capi")
}

/// target/<profile>/deps/, where cargo builds `libbat.so` as a dependency of the tests
/// (it is copied up to target/<profile>/ only when built for itself).
pub fn lib_dir() -> Result<PathBuf> {
    let dir = crate::bin_dir()?.join("deps");
    if !dir.join("libbat.so").is_file() {
        bail!("{} has no libbat.so (build basalt-capi)", dir.display());
    }
    Ok(dir)
}

/// Compile `tests/c/<program>.c` into `dir/<program>`. Bound to the library in
/// [`lib_dir`] by DT_RPATH, which the loader searches before `LD_LIBRARY_PATH`: cargo's
/// puts target/<profile>/ first, where an older `libbat.so` may lie.
pub fn build(program: &str, dir: &Path) -> Result<PathBuf> {
    let lib = lib_dir()?;
    let exe = dir.join(program);
    let o = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-D_DEFAULT_SOURCE", "-I"])
        .arg(capi_dir().join("include"))
        .arg(capi_dir().join("tests/c").join(format!("{program}.c")))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .arg("-Wl,--disable-new-dtags")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lbat")
        .output()
        .context("running cc")?;
    if !o.status.success() {
        bail!("cc failed: {}", output_text(&o));
    }
    Ok(exe)
}

/// Run `cmd` with `args`: its output, or an error when it failed or printed `FAIL`.
pub fn checked(mut cmd: Command, args: &[&str]) -> Result<String> {
    let o = cmd.args(args).output()?;
    let text = output_text(&o);
    if !o.status.success() || text.contains("FAIL") {
        bail!("{:?} {args:?} failed:\n{text}", cmd.get_program());
    }
    Ok(text)
}

/// Valgrind ready to run a test program against the cluster of `envdir` (the program
/// and its arguments to add): a definite leak or a memory error exits 99;
/// `tests/c/valgrind.supp` silences the one report inside tower's buffer worker. `None`
/// (said on stderr) when Valgrind is not installed (`.ci/run` installs it).
pub fn valgrind(envdir: &Path, what: &str) -> Option<Command> {
    if Command::new("valgrind").arg("--version").output().is_err() {
        crate::skip(what, "valgrind is not installed");
        return None;
    }
    let mut cmd = Command::new("valgrind");
    cmd.env("LSF_ENVDIR", envdir)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("BASALT_HOST")
        .env_remove("LSF_SERVER_HOSTS")
        .args([
            "-q",
            "--leak-check=full",
            "--show-leak-kinds=definite",
            "--errors-for-leak-kinds=definite",
            "--error-exitcode=99",
        ])
        .arg(format!(
            "--suppressions={}",
            capi_dir().join("tests/c/valgrind.supp").display()
        ));
    Some(cmd)
}
