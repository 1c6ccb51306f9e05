//! `hlo-lsp history DIR`: which pass made each instruction of a dump directory
//! written with `--xla_dump_hlo_pass_re=.*` (see [`crate::dump::history`]): a short
//! story per instruction (where it came from, each pass that changed it, where it
//! went), or `--json`. Without `--module`, the module with the most instructions (a
//! JAX dump holds small helper modules beside the program's), said on stderr.
//!
//! Exit code: 0, or 2 on bad input (no such directory, module or instruction).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::dump::history::{story, DirectoryHistory, InstructionHistory, ModuleHistory};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// An XLA dump directory (`--xla_dump_to`) written with `--xla_dump_hlo_pass_re=.*`.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The module: its name (`jit_step`) or id (`4`, `module_0004`).
    #[arg(long, value_name = "NAME")]
    pub module: Option<String>,
    /// Only the instructions of this name (without `%`).
    #[arg(long, value_name = "NAME")]
    pub instruction: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> ExitCode {
    if args.dir.is_file() {
        return super::fail(format!(
            "{} is a file: history reads an XLA dump directory, written with \
             XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*\"",
            args.dir.display()
        ));
    }
    let history = match DirectoryHistory::build(&args.dir) {
        Ok(history) => history,
        Err(e) => return super::fail(format!("cannot read {}: {e}", args.dir.display())),
    };
    match answer(&args, &history) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(message) => super::fail(message),
    }
}

fn answer(args: &Args, history: &DirectoryHistory) -> Result<String, String> {
    let module = choose(args, history)?;
    let wanted = |i: &InstructionHistory| {
        args.instruction
            .as_deref()
            .is_none_or(|name| i.name == name.trim_start_matches('%'))
    };
    if let Some(name) = &args.instruction {
        if !module.instructions.iter().any(wanted) {
            return Err(format!(
                "no instruction %{name} in module {}",
                module.module
            ));
        }
    }
    Ok(if args.json {
        format!("{}\n", story::to_json(module, wanted))
    } else {
        story::render(module, wanted, args.instruction.is_none())
    })
}

/// The module asked for, else the largest (said on stderr when there are others).
fn choose<'a>(args: &Args, history: &'a DirectoryHistory) -> Result<&'a ModuleHistory, String> {
    let names = || {
        let names: Vec<String> = history
            .modules
            .iter()
            .map(|m| format!("{} (module_{:04})", m.module, m.module_id))
            .collect();
        names.join(", ")
    };
    if let Some(query) = &args.module {
        return history.module(query).ok_or_else(|| {
            format!(
                "no module {query} in {}; there are: {}",
                args.dir.display(),
                names()
            )
        });
    }
    let module = history.main_module().ok_or_else(|| {
        format!(
            "{}: no XLA HLO dumps (module_*.txt) found",
            args.dir.display()
        )
    })?;
    if history.modules.len() > 1 {
        eprintln!(
            "hlo-lsp: {} modules; showing {} (module_{:04}), the largest; choose with --module",
            history.modules.len(),
            module.module,
            module.module_id
        );
    }
    Ok(module)
}
