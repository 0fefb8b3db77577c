//! Compiles the wire schemas in `proto/` with protox (a pure-Rust protobuf compiler, so no
//! `protoc` binary is needed) and generates prost messages and tonic services from them.
//! It also renders the schemas' API — every message, field number, type, enum value and
//! RPC — as a canonical text (`$OUT_DIR/api.txt`, [`basalt_proto::API`]) that the test
//! `api_lock` compares with the checked-in `proto/api.lock`.

use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, EnumDescriptorProto, FileDescriptorSet};
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let files = [
        "basalt/common/v1/common.proto",
        "basalt/lim/v1/lim.proto",
        "basalt/mbatchd/v1/mbatchd.proto",
        "basalt/res/v1/res.proto",
        "basalt/sbatchd/v1/sbatchd.proto",
    ];
    for f in &files {
        println!("cargo:rerun-if-changed={}", root.join(f).display());
    }
    let fds = protox::compile(files, [&root])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("api.txt");
    std::fs::write(out, api_listing(&fds))?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("client_streaming.rs");
    std::fs::write(out, client_streaming(&fds))?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}

/// The gRPC paths (`/package.Service/Method`) of every client-streaming method, as a
/// Rust constant: their requests have no single body to seal (basalt-auth binds their
/// credentials to the path alone).
fn client_streaming(fds: &FileDescriptorSet) -> String {
    let mut s = String::from(
        "/// The paths of the client-streaming gRPC methods.\npub const CLIENT_STREAMING: &[&str] = &[\n",
    );
    for f in &fds.file {
        for svc in &f.service {
            for m in &svc.method {
                if m.client_streaming() {
                    let _ = writeln!(s, "    \"/{}.{}/{}\",", f.package(), svc.name(), m.name());
                }
            }
        }
    }
    s.push_str("];\n");
    s
}

/// One line per API element, in declaration order, with full names.
fn api_listing(fds: &FileDescriptorSet) -> String {
    let mut s = String::new();
    for f in &fds.file {
        let pkg = f.package();
        let _ = writeln!(s, "file {} package {pkg}", f.name());
        for e in &f.enum_type {
            enum_listing(&mut s, pkg, e);
        }
        for m in &f.message_type {
            message_listing(&mut s, pkg, m);
        }
        for svc in &f.service {
            let _ = writeln!(s, "service {pkg}.{}", svc.name());
            for m in &svc.method {
                let _ = writeln!(
                    s,
                    "  rpc {}({}{}) returns ({}{})",
                    m.name(),
                    if m.client_streaming() { "stream " } else { "" },
                    m.input_type(),
                    if m.server_streaming() { "stream " } else { "" },
                    m.output_type()
                );
            }
        }
    }
    s
}

fn enum_listing(s: &mut String, scope: &str, e: &EnumDescriptorProto) {
    let _ = writeln!(s, "enum {scope}.{}", e.name());
    for v in &e.value {
        let _ = writeln!(s, "  value {} {}", v.number(), v.name());
    }
    for r in &e.reserved_range {
        let _ = writeln!(s, "  reserved {}..={}", r.start(), r.end());
    }
    for n in &e.reserved_name {
        let _ = writeln!(s, "  reserved \"{n}\"");
    }
}

fn message_listing(s: &mut String, scope: &str, m: &DescriptorProto) {
    let full = format!("{scope}.{}", m.name());
    let _ = writeln!(s, "message {full}");
    for f in &m.field {
        let label = match f.label() {
            Label::Repeated => "repeated ",
            _ if f.proto3_optional() => "optional ",
            _ => "",
        };
        let ty = match f.r#type() {
            Type::Message | Type::Enum | Type::Group => f.type_name().to_owned(),
            t => t.as_str_name().trim_start_matches("TYPE_").to_lowercase(),
        };
        let oneof = match f.oneof_index {
            Some(i) if !f.proto3_optional() => m
                .oneof_decl
                .get(i as usize)
                .map(|o| format!(" oneof {}", o.name()))
                .unwrap_or_default(),
            _ => String::new(),
        };
        let _ = writeln!(s, "  field {} {}: {label}{ty}{oneof}", f.number(), f.name());
    }
    // Message reserved ranges are end-exclusive.
    for r in &m.reserved_range {
        let _ = writeln!(s, "  reserved {}..={}", r.start(), r.end() - 1);
    }
    for n in &m.reserved_name {
        let _ = writeln!(s, "  reserved \"{n}\"");
    }
    for e in &m.enum_type {
        enum_listing(s, &full, e);
    }
    for n in &m.nested_type {
        message_listing(s, &full, n);
    }
}
