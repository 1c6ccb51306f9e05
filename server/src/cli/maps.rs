//! `hlo-lsp maps FILE`: the indexing maps of instructions and fusions, in XLA's
//! `operand id = N <map>` text or as JSON with operand utilization.
//!
//! Default target: the ROOT of the entry computation (as XLA's tests do).
//! `--all`: every fusion of every computation plus the entry ROOT, analyzed in
//! parallel. Output to input, a multi-output instruction (a tuple-shaped fusion,
//! a variadic reduce) is printed once per output, as XLA's `print_indexing` does;
//! `--output K` narrows it to one. Errors are one line on stderr and a non-zero exit.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::{json, Value};

use crate::algebra::{DivSpelling, PrintOptions};
use crate::analysis::fusion::{grouped_from_every_output, output_start, Reached};
use crate::analysis::operand_indexing::{entry_to_string, operand_map_to_string, OperandIndexing};
use crate::analysis::utilization::{utilization, DEFAULT_BUDGET};
use crate::analysis::{analyze_many, view, Direction, InstructionIndexing, Module, Query};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DirectionArg {
    OutputToInput,
    InputToOutput,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DivArg {
    /// `d0 floordiv 8` (the indexing documentation's spelling).
    Floordiv,
    /// `d0 / 8` (XLA's printer since 2026-06).
    Slash,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO text file.
    pub file: PathBuf,
    /// Instruction to analyze (repeatable); default: the entry computation's ROOT.
    #[arg(long = "instruction", value_name = "NAME")]
    pub instructions: Vec<String>,
    /// Every fusion instruction of every computation, plus the entry ROOT.
    #[arg(long)]
    pub all: bool,
    /// Which way the maps go.
    #[arg(long, value_enum, default_value = "output-to-input")]
    pub direction: DirectionArg,
    /// Input to output: the operand whose elements are mapped.
    #[arg(long, default_value_t = 0)]
    pub operand: usize,
    /// Output to input: only this output of a multi-output instruction (default: every output).
    #[arg(long)]
    pub output: Option<usize>,
    /// Map between physical (layout-ordered) index spaces.
    #[arg(long)]
    pub physical_layout: bool,
    /// How to spell floor division.
    #[arg(long, value_enum, default_value = "slash")]
    pub div: DivArg,
    /// For instructions inside a fused computation: the composed maps from every
    /// output of the calling fusion to the instruction (what the hover shows first);
    /// `--output K` narrows to one fusion output. With `--all`: every fused instruction.
    #[arg(long)]
    pub from_fusion: bool,
    /// Print JSON (with operand utilization) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Utilization: enumerate at most this many domain points per operand.
    #[arg(long, default_value_t = DEFAULT_BUDGET as u64)]
    pub budget: u64,
}

/// One instruction to analyze: module, computation, instruction.
#[derive(Clone, Copy, Debug)]
struct Target {
    module: usize,
    computation: usize,
    instruction: usize,
}

pub fn run(args: Args) -> ExitCode {
    super::print_or_fail(run_inner(&args))
}

fn run_inner(args: &Args) -> Result<String, String> {
    let mut text = super::read_text(&args.file)?;
    if crate::language::detect(&args.file.to_string_lossy(), None, &text)
        == crate::language::Language::Mlir
    {
        // StableHLO: its ops as the HLO instructions they are, named `%3`.
        let file = crate::mlir::read(&text);
        if !crate::mlir::stablehlo::is_stablehlo(&file) {
            return Err(format!(
                "{}: no StableHLO op found (for linalg and other MLIR: hlo-lsp mlir)",
                args.file.display()
            ));
        }
        text = crate::mlir::stablehlo::translate(&text, &file).hlo;
        let parsed = view::parse(&text);
        return maps_of(args, &parsed.0, &parsed.1).map(|out| ssa_names(out, args.json));
    }
    let parsed = view::parse(&text);
    super::input::refuse_syntax_errors(&args.file, &text, &parsed.0.diagnostics)?;
    let out = maps_of(args, &parsed.0, &parsed.1);
    // The process ends right after: freeing the model would only cost time.
    std::mem::forget((parsed, text));
    out
}

fn maps_of(
    args: &Args,
    file: &crate::model::HloFile,
    modules: &[Module],
) -> Result<String, String> {
    if modules.iter().all(|m| m.is_empty()) {
        return Err(format!("{}: no HLO computation found", args.file.display()));
    }
    let options = PrintOptions {
        div: match args.div {
            DivArg::Floordiv => DivSpelling::FloorDiv,
            DivArg::Slash => DivSpelling::Slash,
        },
        ..PrintOptions::default()
    };
    if args.from_fusion {
        return from_fusion(args, file, modules, &options);
    }
    let targets = targets(args, modules)?;
    if let Some(note) = tuple_root_note(args, modules) {
        eprintln!("{note}");
    }
    let direction = match args.direction {
        DirectionArg::OutputToInput => Direction::OutputToInput,
        DirectionArg::InputToOutput => Direction::InputToOutput,
    };
    let jobs: Vec<(Target, usize)> = targets
        .iter()
        .flat_map(|t| {
            let outputs = match (direction, args.output) {
                (Direction::OutputToInput, Some(k)) => vec![k],
                (Direction::OutputToInput, None) => {
                    let n = &modules[t.module].computation(t.computation).nodes[t.instruction];
                    (0..n.op.shape.output_count().max(1)).collect()
                }
                (Direction::InputToOutput, _) => vec![0],
            };
            outputs.into_iter().map(move |k| (*t, k))
        })
        .collect();
    let query = |&(t, output_id): &(Target, usize)| Query {
        computation: t.computation,
        instruction: t.instruction,
        direction,
        output_id,
        operand_id: args.operand,
        physical_layout: args.physical_layout,
    };
    // Each module's queries in one batch; the answers in the jobs' order.
    let mut answers: Vec<Option<Arc<InstructionIndexing>>> = vec![None; jobs.len()];
    for (mi, module) in modules.iter().enumerate() {
        let of_module: Vec<usize> = (0..jobs.len())
            .filter(|&j| jobs[j].0.module == mi)
            .collect();
        let queries: Vec<Query> = of_module.iter().map(|&j| query(&jobs[j])).collect();
        for (j, answer) in of_module.into_iter().zip(analyze_many(module, &queries)) {
            answers[j] = Some(answer);
        }
    }
    let results: Vec<(Target, usize, Arc<InstructionIndexing>)> = jobs
        .iter()
        .zip(answers)
        .map(|(&(t, k), answer)| (t, k, answer.expect("every module's jobs are answered")))
        .collect();
    if args.json {
        let instructions: Vec<Value> = results
            .par_iter()
            .map(|(t, output, indexing)| {
                instruction_json(args, &modules[t.module], *t, *output, indexing, &options)
            })
            .collect();
        let doc = json!({ "instructions": instructions });
        Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?
        ))
    } else {
        let (maps, which_map) = printed_once(&results, |indexing| indexing.to_xla_string(&options));
        let records: Vec<String> = results
            .par_iter()
            .zip(&which_map)
            .map(|((t, output, _), &k)| {
                let m = &modules[t.module];
                let c = m.computation(t.computation);
                let n = &c.nodes[t.instruction];
                let which = match direction {
                    Direction::OutputToInput => {
                        let count = n.op.shape.output_count();
                        match output_shape(file, *t, *output) {
                            Some(shape) if count > 1 => {
                                format!("output {output} of {count} ({shape})")
                            }
                            _ => format!("output {output}"),
                        }
                    }
                    Direction::InputToOutput => format!("operand {}", args.operand),
                };
                format!(
                    "// {} = {} in {}, {}\n{}",
                    n.name, n.op.opcode, c.name, which, maps[k]
                )
            })
            .collect();
        Ok(records.concat())
    }
}

/// `print` of each result's answer, printed once per answer (the fusions of one
/// structural class share theirs, see [`analyze_many`], and a transformer dump has
/// dozens of each): the texts, and which text is each result's.
fn printed_once(
    results: &[(Target, usize, Arc<InstructionIndexing>)],
    print: impl Fn(&InstructionIndexing) -> String + Sync,
) -> (Vec<String>, Vec<usize>) {
    let mut distinct: Vec<&InstructionIndexing> = Vec::new();
    let mut index: rustc_hash::FxHashMap<*const InstructionIndexing, usize> =
        rustc_hash::FxHashMap::default();
    let which: Vec<usize> = results
        .iter()
        .map(|(_, _, answer)| {
            *index.entry(Arc::as_ptr(answer)).or_insert_with(|| {
                distinct.push(answer);
                distinct.len() - 1
            })
        })
        .collect();
    (distinct.par_iter().map(|a| print(a)).collect(), which)
}

/// `--from-fusion`: the maps from the calling fusion's outputs to each target
/// instruction (`--instruction`, or with `--all` every instruction of every fused
/// computation), one record per fusion output.
fn from_fusion(
    args: &Args,
    file: &crate::model::HloFile,
    modules: &[Module],
    options: &PrintOptions,
) -> Result<String, String> {
    let mut targets = vec![];
    for name in &args.instructions {
        let name = name.trim_start_matches('%');
        let found = modules.iter().enumerate().find_map(|(mi, m)| {
            m.computations().enumerate().find_map(|(ci, c)| {
                let ii = c.find(name)?;
                calling_fusion(m, ci).map(|_| Target {
                    module: mi,
                    computation: ci,
                    instruction: ii,
                })
            })
        });
        targets.push(found.ok_or_else(|| {
            format!(
                "no instruction named `{name}` inside a fused computation in {}",
                args.file.display()
            )
        })?);
    }
    if args.all {
        for (mi, m) in modules.iter().enumerate() {
            for (ci, c) in m.computations().enumerate() {
                if calling_fusion(m, ci).is_some() {
                    targets.extend((0..c.nodes.len()).map(|ii| Target {
                        module: mi,
                        computation: ci,
                        instruction: ii,
                    }));
                }
            }
        }
    }
    if targets.is_empty() && args.all {
        // Nothing to do, as `maps` on a file with nothing to analyze: an error exit.
        return Err(format!(
            "{}: no fusion calls a fused computation: nothing to map from (--from-fusion --all)",
            args.file.display()
        ));
    }
    if targets.is_empty() {
        return Err(
            "--from-fusion needs --instruction NAME (inside a fused computation) or --all".into(),
        );
    }
    let mut text = String::new();
    let mut records = vec![];
    // Maps from every output, per (module, fused computation), composed once.
    let mut cache: HashMap<(usize, usize), Vec<Vec<Reached>>> = HashMap::new();
    for t in targets {
        let m = &modules[t.module];
        let (fc, fi) = calling_fusion(m, t.computation).expect("targets are fused");
        let every = cache
            .entry((t.module, t.computation))
            .or_insert_with(|| grouped_from_every_output(m, t.computation));
        let c = m.computation(t.computation);
        let node = &c.nodes[t.instruction];
        let fusion = &m.computation(fc).nodes[fi];
        let outputs: Vec<usize> = match args.output {
            Some(k) => vec![k],
            None => (0..every.len()).collect(),
        };
        for k in outputs {
            let Some(reached) = every.get(k).and_then(|r| r.get(t.instruction)) else {
                return Err(format!("fusion `{}` has no output {k}", fusion.name));
            };
            let mut entry = reached.to_entry();
            let from = output_start(m, t.computation, k)
                .and_then(|(start, out)| c.nodes[start].op.shape.output(out));
            let tag = reached.maps.first().map_or(0, |(tag, _)| *tag);
            if let (true, Some(from), Some(to)) =
                (args.physical_layout, from, node.op.shape.output(tag))
            {
                for om in &mut entry.maps {
                    *om = crate::analysis::layout::to_physical(om, from, to);
                }
            }
            let fusion_target = Target {
                module: t.module,
                computation: fc,
                instruction: fi,
            };
            let shape = output_shape(file, fusion_target, k);
            if args.json {
                let mut v = json!({ "name": node.name, "computation": c.name, "fusion": fusion.name,
                                    "output_id": k, "read": reached.is_read() });
                add_maps_json(&mut v, &entry, options);
                if let Some(shape) = shape {
                    v["output_shape"] = json!(shape);
                }
                records.push(v);
            } else {
                let shape = shape.map(|s| format!(" ({s})")).unwrap_or_default();
                text.push_str(&format!(
                    "// {} in {}, from output {k}{shape} of fusion %{}\n",
                    node.name, c.name, fusion.name
                ));
                if reached.is_read() {
                    text.push_str(&entry_to_string(&entry, options));
                } else {
                    text.push_str("  not read\n");
                }
            }
        }
    }
    if args.json {
        let doc = json!({ "instructions": records });
        return serde_json::to_string_pretty(&doc)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string());
    }
    Ok(text)
}

/// The fusion instruction `(computation, instruction)` that calls `comp`.
fn calling_fusion(m: &Module, comp: usize) -> Option<(usize, usize)> {
    m.computations().enumerate().find_map(|(ci, c)| {
        c.nodes
            .iter()
            .position(|n| n.op.opcode == "fusion" && n.called.first() == Some(&comp))
            .map(|ii| (ci, ii))
    })
}

/// Output `output` of a target's shape in the model, without layout (`s32[1024]`).
fn output_shape(file: &crate::model::HloFile, t: Target, output: usize) -> Option<String> {
    let module = file.modules.get(t.module)?;
    if t.computation >= module.computation_count() {
        return None;
    }
    let computation = module.computation(crate::model::ComputationId(t.computation as u32));
    let shape = &computation.instructions.get(t.instruction)?.shape;
    let a = if shape.is_tuple() {
        shape.tuple_element(output)?.as_array()?
    } else {
        shape.as_array()?
    };
    let mut a = a.clone();
    a.layout = None;
    Some(a.to_string())
}

/// When the default target, the ENTRY ROOT, is the tuple a real dump ends with:
/// its maps only pass the outputs through, so say where the kernels' maps are.
fn tuple_root_note(args: &Args, modules: &[Module]) -> Option<String> {
    if args.all || !args.instructions.is_empty() {
        return None;
    }
    let [module] = modules else { return None };
    let entry = module.get(module.entry)?;
    let root = entry.nodes.get(entry.root)?;
    (root.op.opcode == "tuple").then(|| {
        format!(
            "hlo-lsp: note: the ENTRY ROOT %{} is a tuple: its maps pass the outputs through; \
             --all prints every fusion's maps, --instruction NAME one instruction's",
            root.name
        )
    })
}

/// Resolves `--instruction`, `--all` and the default into targets (in file order).
fn targets(args: &Args, modules: &[Module]) -> Result<Vec<Target>, String> {
    let mut out = vec![];
    for name in &args.instructions {
        let name = name.trim_start_matches('%');
        let found = modules.iter().enumerate().find_map(|(mi, m)| {
            m.computations()
                .enumerate()
                .find_map(|(ci, c)| c.find(name).map(|ii| (mi, ci, ii)))
        });
        let (module, computation, instruction) = found
            .ok_or_else(|| format!("no instruction named `{name}` in {}", args.file.display()))?;
        out.push(Target {
            module,
            computation,
            instruction,
        });
    }
    if args.all {
        for (mi, m) in modules.iter().enumerate() {
            for (ci, c) in m.computations().enumerate() {
                for (ii, n) in c.nodes.iter().enumerate() {
                    if n.op.opcode == "fusion" {
                        out.push(Target {
                            module: mi,
                            computation: ci,
                            instruction: ii,
                        });
                    }
                }
            }
        }
    }
    if args.all || args.instructions.is_empty() {
        for (mi, m) in modules.iter().enumerate() {
            if let Some(c) = m.get(m.entry) {
                if c.root < c.nodes.len()
                    && !out.iter().any(|t| {
                        t.module == mi && t.computation == m.entry && t.instruction == c.root
                    })
                {
                    out.push(Target {
                        module: mi,
                        computation: m.entry,
                        instruction: c.root,
                    });
                }
            }
        }
    }
    if out.is_empty() {
        return Err(format!("{}: nothing to analyze", args.file.display()));
    }
    Ok(out)
}

/// Adds an operand's maps to its JSON record so that unknown indexing cannot be read
/// as "nothing read": `"known": true, "maps": [..]` (an empty list means no element is
/// read), or `"known": false, "maps": null, "unknown": "<reason>"` with the maps of the
/// paths that are known in `"known_maps"` (a lower bound of what is read).
fn add_maps_json(v: &mut Value, entry: &OperandIndexing, options: &PrintOptions) {
    let maps: Vec<String> = entry
        .maps
        .iter()
        .map(|om| operand_map_to_string(om, options).trim_end().to_string())
        .collect();
    match &entry.unknown {
        None => {
            v["known"] = json!(true);
            v["maps"] = json!(maps);
        }
        Some(reason) => {
            v["known"] = json!(false);
            v["maps"] = Value::Null;
            v["unknown"] = json!(reason.to_string());
            v["known_maps"] = json!(maps);
        }
    }
}

fn instruction_json(
    args: &Args,
    m: &Module,
    t: Target,
    output: usize,
    indexing: &InstructionIndexing,
    options: &PrintOptions,
) -> Value {
    let c = m.computation(t.computation);
    let n = &c.nodes[t.instruction];
    let entries: Vec<Value> = indexing
        .entries
        .iter()
        .enumerate()
        .map(|(k, entry)| {
            let mut v = json!({ "index": k });
            add_maps_json(&mut v, entry, options);
            if args.direction == DirectionArg::OutputToInput {
                let name = n
                    .operands
                    .get(k)
                    .and_then(|&o| c.nodes.get(o))
                    .map(|o| o.name.clone());
                v["name"] = json!(name);
                let shape = n.op.operands.get(k).and_then(|s| s.as_array());
                v["utilization"] =
                    match shape.and_then(|s| utilization(entry, s, args.budget as u128)) {
                        Some(u) => super::utilization_json(&u),
                        None => Value::Null,
                    };
            }
            v
        })
        .collect();
    let mut v = json!({ "name": n.name, "computation": c.name, "opcode": n.op.opcode });
    match args.direction {
        DirectionArg::OutputToInput => {
            v["output_id"] = json!(output);
            v["operands"] = Value::Array(entries);
        }
        DirectionArg::InputToOutput => {
            v["operand_id"] = json!(args.operand);
            v["outputs"] = Value::Array(entries);
        }
    }
    v
}

/// StableHLO instructions are SSA values: printed as `%3`, as the `.mlir` text
/// names them (the HLO model keeps names without their `%`).
fn ssa_names(out: String, json: bool) -> String {
    if !json {
        return out
            .lines()
            .map(|l| match l.strip_prefix("// ") {
                Some(rest) if !rest.starts_with('%') => format!("// %{rest}\n"),
                _ => format!("{l}\n"),
            })
            .collect();
    }
    fn walk(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (k, x) in map.iter_mut() {
                    match x {
                        Value::String(s) if k == "name" && !s.starts_with('%') => s.insert(0, '%'),
                        _ => walk(x),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    match serde_json::from_str::<Value>(&out) {
        Ok(mut v) => {
            walk(&mut v);
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or(out))
        }
        Err(_) => out,
    }
}
