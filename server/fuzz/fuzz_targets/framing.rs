//! cargo fuzz target `framing`: the body is `fuzz_support::framing` (tests/fuzz_support),
//! which the normal test suite replays on every input kept in tests/data/fuzz/framing.
#![no_main]

#[path = "../../tests/fuzz_support/mod.rs"]
mod fuzz_support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_support::framing(data));
