//! `hlo-lsp graph FILE [--instruction NAME --radius N | --computation NAME]
//! [--format json|dot|svg]`: the dataflow around an instruction (or of a
//! computation) with the indexing maps on its edges ([`crate::graph`]). Without
//! `--instruction` or `--computation`: the entry computation. Edges into GPU
//! kernels carry XLA's coalescing verdict (not on a CPU dump unless `--device`
//! is given). With `--profile`, each node has the time an XProf profile measured
//! (`measured_us`) and is coloured by its share of the step ([`graph::heat`]).
//! On a StableHLO `.mlir` file: the graph of `@main` (or around `--instruction %3`)
//! translated as XLA's converter does, nodes named by their SSA values, the ops
//! grouped by the name scopes of their locations (`--namespaces open|folded`,
//! [`graph::stablehlo`]).
//! Exit 0 with the graph, 2 on bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use super::gpu;
use crate::analysis;
use crate::graph::{self, build::Open, Options, Scope};
use crate::model::Module;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Json,
    Dot,
    Svg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NamespacesArg {
    /// A cluster around the ops of each name scope.
    Open,
    /// One node per name scope, one level below the scope all ops share.
    Folded,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OpenArg {
    /// The fusion drawn around (with `--instruction`).
    Focus,
    All,
    None,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO text file.
    pub file: PathBuf,
    /// Draw around this instruction.
    #[arg(long, value_name = "NAME", conflicts_with = "computation")]
    pub instruction: Option<String>,
    /// Hops from the instruction (operands and users; get-tuple-elements are no hop).
    #[arg(long, default_value_t = 2)]
    pub radius: usize,
    /// Draw this whole computation (up to --max-nodes).
    #[arg(long, value_name = "NAME")]
    pub computation: Option<String>,
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    /// Instruction nodes at most; the rest become "N more" stubs.
    #[arg(long, default_value_t = graph::build::DEFAULT_MAX_NODES)]
    pub max_nodes: usize,
    /// Which fusions open into their fused computation.
    #[arg(long, value_enum, default_value = "focus")]
    pub open_fusions: OpenArg,
    /// The GPU for coalescing verdicts (a6000, a100, h100, b200, or a target config).
    #[arg(long, value_name = "NAME|FILE")]
    pub device: Option<String>,
    /// Colour the nodes by the time this profile measured: an XProf logdir (its
    /// newest `plugins/profile/<run>/`), a run folder, a `*.xplane.pb` or a
    /// `*.trace.json[.gz]`.
    #[arg(long, value_name = "PROFILE")]
    pub profile: Option<PathBuf>,
    /// On StableHLO: the ops' name scopes (their locations' names) as clusters or
    /// folded into one node each.
    #[arg(long, value_enum, default_value = "open")]
    pub namespaces: NamespacesArg,
}

pub fn run(args: Args) -> ExitCode {
    super::print_or_fail(run_inner(&args))
}

fn run_inner(args: &Args) -> Result<String, String> {
    let text = super::read_text(&args.file)?;
    let language = crate::language::detect(&args.file.to_string_lossy(), None, &text);
    if language == crate::language::Language::Mlir {
        return stablehlo(args, &text);
    }
    let (text, file) = gpu::parse(&args.file)?;
    let (module, scope) = scope(&file.modules, args)?;
    let chosen = gpu::device(args.device.as_deref(), &args.file)?;
    let cpu = gpu::is_cpu_dump(&args.file, module);
    let measured = match &args.profile {
        Some(path) => {
            let read = super::profile::read_profile(path)?;
            let joined = super::profile::join_to(&read, module, &args.file, file.modules.len())?;
            Some(std::sync::Arc::new(joined))
        }
        None => None,
    };
    let options = Options {
        max_nodes: args.max_nodes.max(1),
        open: match args.open_fusions {
            OpenArg::Focus => Open::Focus,
            OpenArg::All => Open::All,
            OpenArg::None => Open::None,
        },
        device: (!cpu || chosen.explicit).then_some(chosen.device),
        measured,
        ..Options::default()
    };
    let view = analysis::view::borrowed(module);
    let g = graph::build(module, &view, &scope, &options);
    let out = render(&g, args.format, &text);
    // The process ends right after: freeing the model would only cost time.
    std::mem::forget(view);
    Ok(out)
}

/// The graph of a StableHLO file (no device, no profile: the translation is not
/// what XLA compiles for a GPU, and a profile names compiled instructions).
fn stablehlo(args: &Args, text: &str) -> Result<String, String> {
    if args.computation.is_some() || args.profile.is_some() || args.device.is_some() {
        return Err(format!(
            "{}: --computation, --profile and --device are for HLO text; on StableHLO: --instruction %VALUE, --namespaces",
            args.file.display()
        ));
    }
    let request = graph::stablehlo::Request {
        value: args.instruction.as_deref(),
        radius: args.radius,
        namespaces: match args.namespaces {
            NamespacesArg::Open => graph::stablehlo::Namespaces::Open,
            NamespacesArg::Folded => graph::stablehlo::Namespaces::Folded,
        },
    };
    let options = Options {
        max_nodes: args.max_nodes.max(1),
        ..Options::default()
    };
    let g = graph::stablehlo::graph(text, &request, &options)
        .map_err(|e| format!("{}: {e}", args.file.display()))?;
    Ok(render(&g, args.format, text))
}

/// The graph in the format asked, positions as lines and columns of `text`.
fn render(g: &graph::Graph, format: Format, text: &str) -> String {
    match format {
        Format::Json => {
            let lines = crate::syntax::LineIndex::new(text);
            let v = graph::json::to_json(g, |r| {
                let (line, column) = lines.line_col(text, r.start);
                json!({ "line": line, "column": column })
            });
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
        }
        Format::Dot => graph::dot::to_dot(g),
        Format::Svg => graph::svg::to_svg(g),
    }
}

/// The module and scope the arguments name.
fn scope<'m>(modules: &'m [Module], args: &Args) -> Result<(&'m Module, Scope), String> {
    let path = args.file.display();
    if let Some(name) = &args.instruction {
        return modules
            .iter()
            .find_map(|m| {
                let (c, i) = m.find_instruction(name)?;
                Some((
                    m,
                    Scope::Around {
                        computation: c,
                        instruction: i,
                        radius: args.radius,
                    },
                ))
            })
            .ok_or_else(|| format!("{path}: no instruction named {name}"));
    }
    if let Some(name) = &args.computation {
        let bare = name.trim_start_matches('%');
        return modules
            .iter()
            .find_map(|m| Some((m, Scope::Computation(m.computation_by_name(bare)?))))
            .ok_or_else(|| format!("{path}: no computation named {name}"));
    }
    modules
        .iter()
        .find_map(|m| Some((m, Scope::Computation(m.entry?))))
        .ok_or_else(|| format!("{path}: no entry computation"))
}
