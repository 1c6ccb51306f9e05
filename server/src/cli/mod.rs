//! Command-line interface: one module per subcommand, each a thin layer over the
//! library that formats results for a terminal or as JSON.
//!
//! The CLI and the language server ([`crate::lsp`]) are sibling front ends that never
//! import each other: `main` parses the command line here and starts the server
//! itself when asked ([`Cli::wants_server`]).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod check;
pub mod coalescing;
pub mod cost;
pub mod device;
pub mod diff;
pub mod fmt;
pub mod fusion;
pub mod gpu;
pub mod graph;
pub mod history;
pub mod input;
pub mod maps;
pub mod memory;
pub mod mlir;
pub mod parse;
pub mod profile;
pub mod sharding;
pub mod simplify;
pub mod tiles;

/// Exit code for bad invocations and unreadable input (missing file, not UTF-8).
pub const EXIT_USAGE: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "hlo-lsp",
    version,
    about = "XLA indexing maps for HLO text: language server and CLI"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse an HLO file and report syntax errors (`--sexp` prints the tree).
    Parse(parse::Args),
    /// Simplify an indexing map given as XLA text (or a batch of JSON lines on stdin).
    Simplify(simplify::Args),
    /// Print the indexing maps of instructions and fusions.
    Maps(maps::Args),
    /// Print the index maps of an MLIR file (linalg domains, operand maps, tiling checks).
    Mlir(mlir::Args),
    /// Report every syntax and semantic diagnostic of an HLO file.
    Check(check::CheckArgs),
    /// Tiling analysis of tiled fusions: holes, predicates, valid tile sizes.
    Tiles(tiles::Args),
    /// Whether each operand read of a fusion is coalesced (XLA's GPU coalescing analysis).
    Coalescing(coalescing::Args),
    /// Every kernel ranked by the time XLA's GPU performance model estimates.
    Cost(cost::Args),
    /// What the cost model assumes of a GPU: SMs, clocks, bandwidths, caches, peak TFLOP/s per type.
    Device(device::Args),
    /// XLA's GPU fusion rules and cost model: may a producer be fused, rule facts, a simulation.
    Fusion(fusion::Args),
    /// Memory: the totals of memory_analysis(), the allocations and the buffers live at the peak.
    Memory(memory::Args),
    /// The dataflow around an instruction (or of a computation), the maps on its edges: JSON, DOT or SVG.
    Graph(graph::Args),
    /// What changed between two dumps of a module (or each pass of an XLA dump directory).
    Diff(diff::Args),
    /// Which pass made each instruction of a pass-by-pass dump directory, and what later passes did to it.
    History(history::Args),
    /// Measured time per instruction from an XProf profile (logdir, .xplane.pb, .trace.json.gz), beside the cost model's estimate.
    Profile(profile::Args),
    /// What each device holds of every sharded instruction, and every collective's device groups.
    Sharding(sharding::Args),
    /// Print the module as XLA prints it (`--style long|short`); `--check` names the first line that differs.
    Fmt(fmt::Args),
    /// Speak the Language Server Protocol over stdio (the default with no arguments).
    Serve,
}

impl Cli {
    /// The command line of this process.
    pub fn from_args() -> Cli {
        Cli::parse()
    }

    /// Whether it asks for the language server (`serve`, or no subcommand).
    pub fn wants_server(&self) -> bool {
        matches!(self.command, None | Some(Command::Serve))
    }
}

/// Runs a CLI command; the language server is `main`'s to start
/// ([`Cli::wants_server`]).
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Some(Command::Parse(args)) => parse::run(args),
        Some(Command::Simplify(args)) => simplify::run(args),
        Some(Command::Maps(args)) => maps::run(args),
        Some(Command::Check(args)) => check::run_check(args),
        Some(Command::Mlir(args)) => mlir::run(args),
        Some(Command::Tiles(args)) => tiles::run(args),
        Some(Command::Coalescing(args)) => coalescing::run(args),
        Some(Command::Diff(args)) => diff::run(args),
        Some(Command::History(args)) => history::run(args),
        Some(Command::Cost(args)) => cost::run(args),
        Some(Command::Device(args)) => device::run(args),
        Some(Command::Fusion(args)) => fusion::run(args),
        Some(Command::Memory(args)) => memory::run(args),
        Some(Command::Graph(args)) => graph::run(args),
        Some(Command::Profile(args)) => profile::run(args),
        Some(Command::Sharding(args)) => sharding::run(args),
        Some(Command::Fmt(args)) => fmt::run(args),
        Some(Command::Serve) | None => {
            fail("the language server is started by main, not by the CLI")
        }
    }
}

/// A utilization as JSON: `fraction`, `multiplicity`, `exact`, and when the reads
/// depend on runtime values or were not counted, `least` / `most` (`fraction`,
/// `multiplicity`) with `attained` (true: both reached by some run; false: bounds).
pub fn utilization_json(u: &crate::analysis::utilization::Utilization) -> serde_json::Value {
    let mut v = serde_json::json!({
        "fraction": u.fraction, "multiplicity": u.multiplicity, "exact": u.exact,
    });
    if let Some(s) = &u.spread {
        v["least"] = serde_json::json!({ "fraction": s.least.0, "multiplicity": s.least.1 });
        v["most"] = serde_json::json!({ "fraction": s.most.0, "multiplicity": s.most.1 });
        v["attained"] = serde_json::json!(s.attained);
    }
    v
}

pub use crate::dump::read_text;

/// Prints a command's output and succeeds, or prints its error and returns the usage
/// exit code.
pub fn print_or_fail(result: Result<String, String>) -> ExitCode {
    match result {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(message) => fail(message),
    }
}

/// Prints a one-line error to stderr and returns the usage exit code.
pub fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("hlo-lsp: error: {message}");
    ExitCode::from(EXIT_USAGE)
}
