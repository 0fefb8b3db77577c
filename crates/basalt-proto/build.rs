//! Compiles the wire schemas in `proto/` with protox (a pure-Rust protobuf compiler, so no
//! `protoc` binary is needed) and generates prost messages and tonic services from them.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let files = [
        "basalt/common/v1/common.proto",
        "basalt/lim/v1/lim.proto",
        "basalt/mbatchd/v1/mbatchd.proto",
        "basalt/sbatchd/v1/sbatchd.proto",
    ];
    for f in &files {
        println!("cargo:rerun-if-changed={}", root.join(f).display());
    }
    let fds = protox::compile(files, [&root])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
