//! The headers and the library agree: every structure's size and every field's offset
//! as the C compiler lays them out from `include/lsf/*.h` equal `ffi`'s, and every
//! function the headers declare is exported by the built `libbat.so` (a program or a
//! SWIG wrapper that calls any declared function must link).

use std::path::{Path, PathBuf};
use std::process::Command;

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// target/<profile>/deps/, where the cdylib is built (next to this test binary).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent().map(Path::to_path_buf).unwrap_or_default()
}

fn cc(src: &str, out: &Path, extra: &[&str]) {
    let dir = out.parent().expect("output directory");
    let c = dir.join("prog.c");
    std::fs::write(&c, src).expect("write the C program");
    let o = Command::new("cc")
        .arg("-std=c99")
        .arg("-Wall")
        .arg("-Werror")
        .arg("-I")
        .arg(include_dir())
        .arg(&c)
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .expect("run cc (the C compiler)");
    assert!(
        o.status.success(),
        "cc failed:\n{}\n{src}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn every_struct_has_the_layout_the_headers_give_it() {
    let mut src = String::from(
        "#include <lsf/lsbatch.h>\n#include <stdio.h>\n#include <stddef.h>\nint main(void) {\n",
    );
    let layouts = bat::ffi::all_layouts();
    for (name, _, fields) in &layouts {
        src.push_str(&format!(
            "printf(\"{name} size %zu\\n\", sizeof(struct {name}));\n"
        ));
        for (f, _) in fields {
            src.push_str(&format!(
                "printf(\"{name}.{f} %zu\\n\", offsetof(struct {name}, {f}));\n"
            ));
        }
    }
    src.push_str("return 0;\n}\n");
    let dir = tempfile::tempdir().expect("temporary directory");
    let exe = dir.path().join("layout");
    cc(&src, &exe, &[]);
    let out = Command::new(&exe).output().expect("run the layout program");
    let c_view = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut rust_view = String::new();
    for (name, size, fields) in &layouts {
        rust_view.push_str(&format!("{name} size {size}\n"));
        for (f, off) in fields {
            rust_view.push_str(&format!("{name}.{f} {off}\n"));
        }
    }
    assert_eq!(
        c_view, rust_view,
        "C (left) and Rust (right) layouts differ"
    );
}

/// The function names the headers declare (`extern <type> name(`).
fn declared_functions() -> Vec<String> {
    let mut out = Vec::new();
    for h in ["lsf/lsf.h", "lsf/lsbatch.h"] {
        let text = std::fs::read_to_string(include_dir().join(h)).expect("read header");
        for line in text.lines() {
            let Some(rest) = line.trim().strip_prefix("extern ") else {
                continue;
            };
            let Some(open) = rest.find('(') else { continue };
            let name = rest[..open].trim().rsplit([' ', '*']).next().unwrap_or("");
            if !name.is_empty() && !rest.starts_with("\"C\"") {
                out.push(name.to_owned());
            }
        }
    }
    out
}

#[test]
fn every_declared_function_is_exported_and_links() {
    let names = declared_functions();
    assert!(names.len() > 30, "too few declarations found: {names:?}");
    // A program that takes the address of every declared function, linked against the
    // built library: an unresolved one fails the link.
    let mut src = String::from("#include <lsf/lsbatch.h>\n#include <stdio.h>\nint main(void) {\n");
    src.push_str("void *f[] = {\n");
    for n in &names {
        src.push_str(&format!("(void *)&{n},\n"));
    }
    src.push_str("};\nprintf(\"%zu\\n\", sizeof f / sizeof f[0]);\nreturn 0;\n}\n");
    let dir = tempfile::tempdir().expect("temporary directory");
    let exe = dir.path().join("symbols");
    let lib = lib_dir();
    assert!(
        lib.join("libbat.so").is_file(),
        "{} is not built",
        lib.join("libbat.so").display()
    );
    cc(
        &src,
        &exe,
        &[
            "-Wno-pedantic",
            &format!("-L{}", lib.display()),
            &format!("-Wl,-rpath,{}", lib.display()),
            "-lbat",
        ],
    );
    // Cargo's LD_LIBRARY_PATH names target/<profile>/ too, where an older copy of the
    // library may be: the program finds the one it was linked with by its run path.
    let out = Command::new(&exe)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run the symbols program");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        names.len().to_string()
    );
}
