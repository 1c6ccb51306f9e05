//! `hlo-lsp parse` (not implemented yet).

use std::process::ExitCode;

#[derive(Debug, Default, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> ExitCode {
    super::fail("`parse` is not implemented yet")
}
