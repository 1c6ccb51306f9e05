//! `hlo-lsp sharding FILE [--instruction NAME] [--device D] [--as global|partitioned]
//! [--json]`: what each device holds of every instruction with a `sharding=`
//! ([`crate::sharding`]), and every collective's replica groups as device
//! sets. Whether the written shapes are global or per device is guessed
//! ([`crate::sharding::written_shapes`]) and said; `--as` overrides it.
//! A StableHLO file is read as the HLO XLA's importer makes of it, its
//! `mhlo.sharding` strings and Shardy attributes as shardings.
//! Exit 0 with the report, 2 on bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use super::gpu;
use crate::cost::step::{self, StepOptions};
use crate::cost::{report, Model};
use crate::device::Device;
use crate::model::{Module, Shape};
use crate::sharding::{self, collective, ElementLayout, Written};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AsArg {
    /// The written shapes are the global arrays (before XLA's SPMD partitioner).
    Global,
    /// The written shapes are each device's buffer (after the partitioner).
    Partitioned,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO text file.
    pub file: PathBuf,
    /// Only this instruction.
    #[arg(long, value_name = "NAME")]
    pub instruction: Option<String>,
    /// What this device holds of every sharded instruction.
    #[arg(long, value_name = "D")]
    pub device: Option<i64>,
    /// Read the written shapes as global or partitioned instead of guessing.
    #[arg(long = "as", value_enum, value_name = "global|partitioned")]
    pub as_: Option<AsArg>,
    #[arg(long)]
    pub json: bool,
    /// Estimate each collective's time on this GPU (a preset or a GPU target
    /// config file), as `hlo-lsp cost --device` does; a GPU dump is estimated
    /// on its own device without it, a CPU dump not at all.
    #[arg(long, value_name = "NAME|FILE")]
    pub gpu: Option<String>,
    /// Which module of a file that holds several (name or index).
    #[arg(long, value_name = "NAME|INDEX")]
    pub module: Option<String>,
}

pub fn run(args: Args) -> ExitCode {
    super::print_or_fail(run_inner(&args))
}

/// The HLO text of the file and its model: StableHLO (a `.mlir` file, as
/// `jax.jit(f).lower(x).as_text()` prints it) read as the HLO XLA's importer
/// makes of it, its `mhlo.sharding` and Shardy attributes as `sharding=`
/// ([`crate::mlir::stablehlo::sharding`]).
fn parse(path: &std::path::Path) -> Result<(String, crate::model::HloFile), String> {
    let text = super::read_text(path)?;
    if crate::language::detect(&path.to_string_lossy(), None, &text)
        != crate::language::Language::Mlir
    {
        return gpu::parse(path);
    }
    let mlir = crate::mlir::read(&text);
    if !crate::mlir::stablehlo::is_stablehlo(&mlir) {
        return Err(format!(
            "{}: no StableHLO op found (sharding reads HLO and StableHLO)",
            path.display()
        ));
    }
    let hlo = crate::mlir::stablehlo::translate(&text, &mlir).hlo;
    let parsed = crate::model::parse_hlo(&hlo);
    if parsed.modules.is_empty() {
        return Err(format!("{}: no function with a body", path.display()));
    }
    Ok((hlo, parsed))
}

/// The devices an untiled sharding spans: the module's partitions, or the
/// highest device any tiling names.
fn device_count(module: &Module, layouts: &[ElementLayout]) -> i64 {
    let partitions = module.num_partitions();
    if partitions > 1 {
        return partitions;
    }
    layouts
        .iter()
        .filter_map(|l| l.leaf.tiling())
        .flat_map(|t| t.0.devices.iter().copied())
        .max()
        .map_or(1, |d| d + 1)
}

fn dims_text(element: &str, dims: &[i64]) -> String {
    let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("{element}[{}]", dims.join(","))
}

/// `[0:32, 64:96]`.
fn ranges_text(start: &[i64], limit: &[i64]) -> String {
    let parts: Vec<String> = start
        .iter()
        .zip(limit)
        .map(|(s, l)| format!("{s}:{l}"))
        .collect();
    format!("[{}]", parts.join(", "))
}

fn run_inner(args: &Args) -> Result<String, String> {
    let (source, file) = parse(&args.file)?;
    let module =
        super::input::pick_module(&args.file, &source, &file.modules, args.module.as_deref())?;
    let path = args.file.to_string_lossy();
    let (written, why) = match args.as_ {
        Some(AsArg::Global) => (Written::Global, "chosen with --as".to_string()),
        Some(AsArg::Partitioned) => (Written::PerDevice, "chosen with --as".to_string()),
        None => sharding::written_shapes(module, Some(&path)),
    };
    let mut sharded = sharding::sharded_instructions(module);
    if let Some(name) = &args.instruction {
        let name = name.trim_start_matches('%');
        sharded.retain(|s| &*s.instruction.name == name);
        if sharded.is_empty() {
            return Err(format!("no instruction `{name}` with a sharding"));
        }
    }
    // First pass without device names, to count the devices the tilings use.
    let mut all = vec![];
    for s in &sharded {
        if let Ok(parsed) = &s.sharding {
            all.extend(sharding::layouts(
                &s.instruction.shape,
                parsed,
                written,
                None,
            ));
        }
    }
    let devices = device_count(module, &all);
    let mut entries = vec![];
    let mut text = format!(
        "shapes read as {} ({why}); {devices} {}\n",
        written.name(),
        if devices == 1 { "device" } else { "devices" }
    );
    for s in &sharded {
        let name = &*s.instruction.name;
        let parsed = match &s.sharding {
            Ok(parsed) => parsed,
            Err(e) => {
                text.push_str(&format!("{name}: cannot read `{}`: {e}\n", s.text));
                entries.push(json!({"name": name, "sharding": s.text, "error": e.to_string()}));
                continue;
            }
        };
        let layouts = sharding::layouts(&s.instruction.shape, parsed, written, Some(devices));
        let arrays = matches!(&*s.instruction.shape, Shape::Array(_) | Shape::Tuple(_));
        if layouts.is_empty() && arrays {
            let why = format!(
                "`{}` does not fit its shape {}",
                s.text, s.instruction.shape
            );
            text.push_str(&format!("{name}: {why}\n"));
            entries.push(json!({"name": name, "sharding": s.text, "error": why}));
        }
        for layout in layouts {
            let label = match layout.index {
                Some(k) => format!("{name}{{{k}}}"),
                None => name.to_string(),
            };
            entries.push(entry(&label, name, &layout, args.device));
            text.push_str(&line(&label, &layout, args.device));
            if let (None, Ok(tiles)) = (args.device, &layout.tiles) {
                if let Some(grid) = sharding::grid::draw(tiles) {
                    for row in grid.lines() {
                        text.push_str(&format!("  {row}\n"));
                    }
                }
            }
        }
    }
    let (groups, collectives_text) = if args.instruction.is_some() {
        (vec![], String::new())
    } else {
        collectives(module, args)?
    };
    text.push_str(&collectives_text);
    let predicted = if written == Written::Global && args.instruction.is_none() {
        let prediction = sharding::predict::predict(module);
        text.push_str(&prediction_text(&prediction));
        Some(prediction_json(&prediction))
    } else {
        None
    };
    if sharded.is_empty() && groups.is_empty() {
        // Said, not left as an empty list under the header.
        text.push_str(
            "nothing sharded: no instruction has a sharding and no collective has replica groups\n",
        );
    }
    if args.json {
        let mut out = json!({
            "assumed": written.name(),
            "why": why,
            "devices": devices,
            "instructions": entries,
            "collectives": groups,
        });
        if let Some(d) = args.device {
            out["device"] = json!(d);
        }
        if let Some(p) = predicted {
            out["predicted"] = p;
        }
        return serde_json::to_string_pretty(&out)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string());
    }
    Ok(text)
}

/// The collectives XLA's partitioner will insert, one line each, and the
/// instructions not predicted; nothing when the module has no sharding.
fn prediction_text(p: &sharding::predict::Prediction) -> String {
    if p.collectives.is_empty() && p.unpredicted.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "predicted before partitioning: {} collective{}\n",
        p.collectives.len(),
        if p.collectives.len() == 1 { "" } else { "s" }
    );
    for c in &p.collectives {
        out.push_str(&format!(
            "{}: {}\n",
            c.instruction,
            sharding::predict::text(c)
        ));
    }
    for u in &p.unpredicted {
        out.push_str(&format!("{}: not predicted: {}\n", u.instruction, u.why));
    }
    out
}

fn prediction_json(p: &sharding::predict::Prediction) -> Value {
    json!({
        "collectives": p.collectives.iter().map(|c| {
            let mut v = json!({
                "computation": c.computation,
                "instruction": c.instruction,
                "kind": c.op.name(),
                "groups": c.groups,
                "over": c.over,
                "bytes_per_device": c.bytes,
                "why": c.why,
            });
            if let Some(a) = &c.axes {
                v["mesh_axes"] = json!(a);
            }
            if let Some(t) = &c.traffic {
                v["sends_bytes"] = json!(t.sends);
                v["receives_bytes"] = json!(t.receives);
                v["traffic_rule"] = json!(t.rule);
            }
            v
        }).collect::<Vec<_>>(),
        "unpredicted": p.unpredicted.iter().map(|u| json!({
            "computation": u.computation,
            "instruction": u.instruction,
            "why": u.why,
        })).collect::<Vec<_>>(),
    })
}

/// The JSON of one sharded array.
fn entry(label: &str, name: &str, layout: &ElementLayout, device: Option<i64>) -> Value {
    let mut v = json!({
        "name": label,
        "instruction": name,
        "sharding": layout.leaf.to_text(false),
        "written_shape": layout.written,
        "description": layout.words(),
    });
    if let Some(k) = layout.index {
        v["tuple_index"] = json!(k);
    }
    match &layout.tiles {
        Ok(t) => {
            v["global_shape"] = json!(t.global);
            v["shard_shape"] = json!(t.shard);
            v["replicated_over"] = json!(t.replicated);
            v["unreduced_over"] = json!(t.unreduced);
            v["manual_over"] = json!(t.manual);
            v["tiles"] = json!(t
                .tiles
                .iter()
                .map(|tile| json!({"devices": tile.devices, "start": tile.start, "limit": tile.limit}))
                .collect::<Vec<_>>());
            if let Some(d) = device {
                v["holds"] = match t.tiles.iter().find(|tile| tile.devices.contains(&d)) {
                    Some(tile) => json!({"start": tile.start, "limit": tile.limit}),
                    None => Value::Null,
                };
            }
        }
        Err(e) => v["error"] = json!(e),
    }
    v
}

/// The text of one sharded array.
fn line(label: &str, layout: &ElementLayout, device: Option<i64>) -> String {
    let mut out = format!(
        "{label} {}\n  {}\n",
        layout.leaf.to_text(false),
        layout.words()
    );
    let Ok(t) = &layout.tiles else {
        return out;
    };
    match device {
        Some(d) => match t.tiles.iter().find(|tile| tile.devices.contains(&d)) {
            Some(tile) => out.push_str(&format!(
                "  device {d} holds {} of {}\n",
                ranges_text(&tile.start, &tile.limit),
                dims_text(&layout.element, &t.global)
            )),
            None => out.push_str(&format!("  device {d} holds nothing of it\n")),
        },
        None => {
            for tile in &t.tiles {
                let devices: Vec<String> = tile.devices.iter().map(i64::to_string).collect();
                out.push_str(&format!(
                    "  {} on devices {}\n",
                    ranges_text(&tile.start, &tile.limit),
                    devices.join(",")
                ));
            }
        }
    }
    out
}

/// Every collective of the module (replica groups, mesh axes, bytes per
/// device, the sharding that calls for it, and the collective model's time on
/// a GPU), as JSON entries and text.
fn collectives(module: &Module, args: &Args) -> Result<(Vec<Value>, String), String> {
    let view = crate::analysis::view::borrowed(module);
    let gpu = collective_gpu(module, args)?;
    let models = gpu
        .as_ref()
        .map(|d| step::Models::new(module, d, StepOptions::default()));
    let mut entries = vec![];
    let mut text = String::new();
    for computation in module.computations() {
        for instruction in &computation.model().instructions {
            let Some(explained) = collective::explain(module, &view, computation, instruction)
            else {
                continue;
            };
            let name = &*instruction.name;
            let written = instruction
                .attribute("replica_groups")
                .or_else(|| instruction.attribute("source_target_pairs"))
                .map(|a| computation.src(a.value_range));
            let mut v = json!({"name": name, "opcode": instruction.opcode.name()});
            if let Some(w) = written {
                v["replica_groups"] = json!(w);
            }
            let report = match explained {
                Ok(report) => report,
                Err(e) => {
                    text.push_str(&format!("{name}: cannot read its devices: {e}\n"));
                    v["error"] = json!(e);
                    entries.push(v);
                    continue;
                }
            };
            v["groups"] = json!(report.groups);
            text.push_str(&format!(
                "{name} {}: {} = {}\n",
                report.op.name(),
                collective::groups_text(&report),
                serde_json::to_string(&report.groups).unwrap_or_default()
            ));
            if let (Some(mesh), Some(axes)) = (&report.mesh, &report.axes) {
                v["mesh"] = json!({
                    "axes": mesh.axes.iter().map(|(n, s)| json!({"name": n, "size": s})).collect::<Vec<_>>(),
                    "from": mesh.source,
                });
                v["mesh_axes"] = json!(axes);
            }
            if let (Some(mesh), Some(pieces)) = (&report.mesh, &report.sub_axes) {
                v["mesh"] = json!({
                    "axes": mesh.axes.iter().map(|(n, s)| json!({"name": n, "size": s})).collect::<Vec<_>>(),
                    "from": mesh.source,
                });
                v["mesh_sub_axes"] = json!(pieces
                    .iter()
                    .map(|&(axis, pre, size)| json!({"axis": axis, "pre": pre, "size": size}))
                    .collect::<Vec<_>>());
            }
            if let Some(t) = &report.traffic {
                v["sends_bytes"] = json!(t.sends);
                v["receives_bytes"] = json!(t.receives);
                v["traffic_rule"] = json!(t.rule);
                text.push_str(&format!("  {}\n", collective::traffic_text(t)));
            }
            if let (Some(models), Some(device)) = (&models, &gpu) {
                let model = Model::new(&view, module, computation, device);
                match step::estimate_kernel(&model, models, instruction) {
                    Some(Ok(e)) => {
                        v["estimate_us"] = json!(e.cost.exec_time.as_micros_f64());
                        let summary = report::estimate_summary(&e);
                        text.push_str(&format!("  cost {summary} ({})\n", device.name));
                        v["estimate"] = json!(summary);
                    }
                    Some(Err(why)) => {
                        text.push_str(&format!("  cost not modelled: {why}\n"));
                        v["estimate_error"] = json!(why);
                    }
                    None => {}
                }
            }
            for why in &report.why {
                text.push_str(&format!("  why: {why}\n"));
            }
            v["why"] = json!(report.why);
            entries.push(v);
        }
    }
    Ok((entries, text))
}

/// The GPU a collective's time is estimated on: `--gpu`, else the device of a
/// GPU dump (as `hlo-lsp cost` picks it); `None` for a CPU dump without `--gpu`.
fn collective_gpu(module: &Module, args: &Args) -> Result<Option<Device>, String> {
    let chosen = gpu::device(args.gpu.as_deref(), &args.file)?;
    if !chosen.explicit && gpu::is_cpu_dump(&args.file, module) {
        return Ok(None);
    }
    Ok(Some(chosen.device))
}
