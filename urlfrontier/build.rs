//! Generates the URLFrontier messages and service from the descriptor of the official
//! `com.github.crawler-commons:urlfrontier-API:2.5` jar (see `proto/README.md`): no protobuf
//! compiler is needed to build squall.

use prost::Message;

fn main() -> std::io::Result<()> {
    let path = "proto/urlfrontier-2.5.fds";
    println!("cargo:rerun-if-changed={path}");
    let bytes = std::fs::read(path)?;
    let descriptors = prost_types::FileDescriptorSet::decode(bytes.as_slice())
        .map_err(|error| std::io::Error::other(format!("{path}: {error}")))?;
    // Stats.counts in key order: the reference service's two counts (`active_queues`, `completed`)
    // then squall's (`squall.*`), the same on every call.
    tonic_prost_build::configure()
        .btree_map("Stats.counts")
        .compile_fds(descriptors)
}
