//! `squall-frontier` as a process: the binary beside the tests, and the address it prints.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Child;

/// The server binary beside the test executable (`cargo test` builds the crate's binaries).
pub fn server_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_squall-frontier"))
}

/// The address of the server's first line on its (piped) standard output, `listening on ADDR`.
pub fn listening_address(child: &mut Child) -> String {
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read its first line");
    line.trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string()
}
