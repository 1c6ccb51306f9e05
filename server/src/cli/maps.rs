//! `hlo-lsp maps` (not implemented yet). `check` lives in `check.rs`.

use std::process::ExitCode;

#[derive(Debug, Default, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> ExitCode {
    super::fail("`maps` is not implemented yet")
}
