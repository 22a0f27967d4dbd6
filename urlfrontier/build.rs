//! Generates the URLFrontier messages and service from the descriptor of URLFrontier API 2.6, as
//! its `urlfrontier-API` jar embeds it (see `proto/README.md`): no protobuf compiler is needed to
//! build squall.
//!
//! It first checks that API 2.6 holds every message, field and call of API 2.5 (the descriptor
//! of the published 2.5 jar) unchanged, so that 2.5 clients and servers keep working with squall.

use prost::Message;
use prost_types::{DescriptorProto, FileDescriptorSet};

const SERVED: &str = "proto/urlfrontier-2.6.fds";
const EARLIER: &str = "proto/urlfrontier-2.5.fds";

fn main() -> std::io::Result<()> {
    let served = read(SERVED)?;
    wire_compatible(&read(EARLIER)?, &served).map_err(|problem| {
        std::io::Error::other(format!(
            "{SERVED} is not wire-compatible with {EARLIER}: {problem}"
        ))
    })?;
    // Stats.counts in key order: the reference service's two counts (`active_queues`, `completed`)
    // then squall's (`squall.*`), the same on every call.
    tonic_prost_build::configure()
        .btree_map("Stats.counts")
        .compile_fds(served)
}

fn read(path: &str) -> std::io::Result<FileDescriptorSet> {
    println!("cargo:rerun-if-changed={path}");
    let bytes = std::fs::read(path)?;
    FileDescriptorSet::decode(bytes.as_slice())
        .map_err(|error| std::io::Error::other(format!("{path}: {error}")))
}

/// Whether `newer` keeps every message, field (name, number, type, label) and call (types and
/// streaming) of `older`: the first one it does not, named.
fn wire_compatible(older: &FileDescriptorSet, newer: &FileDescriptorSet) -> Result<(), String> {
    for (old_file, new_file) in older.file.iter().zip(&newer.file) {
        for message in &old_file.message_type {
            let found = new_file
                .message_type
                .iter()
                .find(|m| m.name == message.name);
            same_fields(
                message,
                found.ok_or(format!("message {:?} gone", message.name))?,
            )?;
        }
        for (old_service, new_service) in old_file.service.iter().zip(&new_file.service) {
            for call in &old_service.method {
                let kept = new_service.method.iter().any(|m| m == call);
                if !kept {
                    return Err(format!("call {:?} gone or changed", call.name));
                }
            }
        }
    }
    Ok(())
}

fn same_fields(older: &DescriptorProto, newer: &DescriptorProto) -> Result<(), String> {
    for field in &older.field {
        let kept = newer.field.iter().any(|f| {
            (&f.name, f.number, f.r#type, &f.type_name, f.label)
                == (
                    &field.name,
                    field.number,
                    field.r#type,
                    &field.type_name,
                    field.label,
                )
        });
        if !kept {
            return Err(format!(
                "field {:?}.{:?} gone or changed",
                older.name, field.name
            ));
        }
    }
    for nested in &older.nested_type {
        let found = newer.nested_type.iter().find(|m| m.name == nested.name);
        same_fields(
            nested,
            found.ok_or(format!("message {:?} gone", nested.name))?,
        )?;
    }
    Ok(())
}
