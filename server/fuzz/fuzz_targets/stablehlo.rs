//! cargo fuzz target `stablehlo`: the body is `fuzz_support::stablehlo`
//! (tests/fuzz_support), which the normal test suite replays on every input kept
//! in tests/data/fuzz/stablehlo.
#![no_main]

#[path = "../../tests/fuzz_support/mod.rs"]
mod fuzz_support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_support::stablehlo(data));
