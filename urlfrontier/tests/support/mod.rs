//! What the test files share: the server in the test process (`serving.rs`) and as a process
//! (`process.rs`), the official Java client (`java.rs`) and the reference implementation
//! (`reference.rs`).

pub mod java;
pub mod process;
pub mod reference;
pub mod serving;
