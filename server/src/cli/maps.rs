//! `hlo-lsp maps` and `hlo-lsp check` (not implemented yet).

use std::process::ExitCode;

#[derive(Debug, Default, clap::Args)]
pub struct Args {}

#[derive(Debug, Default, clap::Args)]
pub struct CheckArgs {}

pub fn run(_args: Args) -> ExitCode {
    super::fail("`maps` is not implemented yet")
}

pub fn run_check(_args: CheckArgs) -> ExitCode {
    super::fail("`check` is not implemented yet")
}
