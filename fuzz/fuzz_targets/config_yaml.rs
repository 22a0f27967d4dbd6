//! A configuration file as a user may write it: read, or refused with an error. Nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = squall::config::CrawlConfig::from_yaml_str(text);
});
