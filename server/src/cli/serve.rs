//! `hlo-lsp serve` (and `hlo-lsp` with no arguments): the language server on stdio.

use std::process::ExitCode;

#[derive(Debug, Default, clap::Args)]
pub struct Args {}

/// Runs the server until the client sends `exit`; see [`crate::lsp::run_stdio`].
pub fn run(_args: Args) -> ExitCode {
    crate::lsp::run_stdio()
}
