//! What `hlo-lsp cost` and `hlo-lsp fusion` share: the GPU a module is judged on
//! (`--device`, the target config XLA writes beside a dump, or the default), whether the
//! module is a CPU dump, and instructions named on the command line.

use std::path::Path;

use crate::device::{self, Device};
use crate::fusible::{Hlo, Instr};
use crate::model::backend::Backend;
use crate::model::Module;

/// The device a command judges on, and where it came from.
pub struct Chosen {
    pub device: Device,
    /// `--device` was given.
    pub explicit: bool,
}

/// `--device NAME|FILE`; without it, a `*.gpu_target_config.pbtxt` beside `file`,
/// else `a6000`.
pub fn device(spec: Option<&str>, file: &Path) -> Result<Chosen, String> {
    match spec {
        Some(spec) => Ok(Chosen {
            device: named(spec)?,
            explicit: true,
        }),
        None => {
            let device = match device::target_config::beside(file) {
                Some(config) => read_config(&config)?,
                None => Device::a6000(),
            };
            Ok(Chosen {
                device,
                explicit: false,
            })
        }
    }
}

/// A preset, or a path to a `GpuDeviceInfoProto`/`GpuTargetConfig` text proto.
fn named(spec: &str) -> Result<Device, String> {
    resolve(spec).map_err(|e| {
        if Path::new(spec).is_file() {
            e
        } else {
            format!("--device {e}")
        }
    })
}

/// [`named`] without the option's name in its error (`hlo-lsp device NAME|FILE`).
pub fn resolve(spec: &str) -> Result<Device, String> {
    if let Some(d) = Device::preset(spec) {
        return Ok(d);
    }
    let path = Path::new(spec);
    if path.is_file() {
        return read_config(path);
    }
    Err(format!(
        "{spec}: neither a preset ({}) nor a file",
        device::PRESETS.join(", ")
    ))
}

fn read_config(path: &Path) -> Result<Device, String> {
    let text = super::read_text(path)?;
    let mut device = device::from_text_proto(&text).map_err(|e| {
        let (line, col) = crate::syntax::line_col(&text, e.offset);
        format!("{}:{line}:{col}: {}", path.display(), e.message)
    })?;
    device
        .validate()
        .map_err(|e| format!("{}: not a usable GPU: {e}", path.display()))?;
    if device.name == "custom" {
        if let Some(stem) = path.file_name().and_then(|n| n.to_str()) {
            device.name = stem.to_string();
        }
    }
    Ok(device)
}

/// Whether the module was compiled for the CPU (its file name or its text says so, or
/// the after-optimizations dump of its module beside it).
pub fn is_cpu_dump(file: &Path, module: &Module) -> bool {
    let by_name = file
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(Backend::from_file_name);
    by_name
        .or_else(|| Backend::of_module(module))
        .or_else(|| crate::dump::naming::backend_beside(file))
        == Some(Backend::Cpu)
}

/// The note a CPU dump gets when no `--device` was asked for: `what` says what
/// does not apply to it (XLA's GPU cost model, its coalescing analysis).
pub fn cpu_note(file: &Path, what: &str) -> String {
    format!(
        "hlo-lsp: note: {} is a CPU dump: {what}; \
         pass --device (a6000, a100, h100, b200, or a GPU target config file) to read it as if \
         compiled for that GPU",
        file.display()
    )
}

/// What `cost` and `fusion` say does not apply to a CPU dump ([`cpu_note`]).
pub const COST_MODEL: &str = "XLA's GPU cost model and fusion rules do not apply";

/// An instruction named `NAME` or `COMPUTATION/NAME` (a leading `%` allowed); an
/// unknown name is an error that lists close names.
pub fn find(h: &Hlo, name: &str) -> Result<Instr, String> {
    let bare = name.replace('%', "");
    let bare = bare.as_str();
    if let Some(i) = h.find(bare) {
        return Ok(i);
    }
    let wanted = bare.rsplit('/').next().unwrap_or(bare);
    let mut names: Vec<(usize, String)> = h
        .model
        .computations()
        .flat_map(|c| {
            c.model()
                .instructions
                .iter()
                .filter(|i| !i.synthetic)
                .map(|i| i.name.to_string())
                .collect::<Vec<_>>()
        })
        .map(|n| (distance(wanted, &n), n))
        .filter(|(d, n)| *d <= (wanted.len() / 3).max(2) || n.contains(wanted))
        .collect();
    names.sort();
    names.dedup_by(|a, b| a.1 == b.1);
    let close: Vec<String> = names.into_iter().take(5).map(|(_, n)| n).collect();
    Err(if close.is_empty() {
        format!("no instruction named {name}")
    } else {
        format!(
            "no instruction named {name} (close names: {})",
            close.join(", ")
        )
    })
}

/// Levenshtein distance (in chars).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The device's main numbers as JSON.
pub fn device_json(d: &Device) -> serde_json::Value {
    serde_json::json!({
        "name": d.name,
        "sm_count": d.sm_count,
        "clock_rate_ghz": d.clock_rate_ghz,
        "memory_bandwidth": d.memory_bandwidth,
        "l2_cache_size": d.l2_cache_size,
        "shared_memory_per_block": d.shared_memory_per_block,
        "threads_per_sm": d.threads_per_sm,
        "fpus_per_core": d.fpus_per_core,
    })
}

/// An HLO file's text and model: not MLIR, no syntax error
/// ([`super::input::refuse_syntax_errors`]), and at least one module.
pub fn parse(file: &Path) -> Result<(String, crate::model::HloFile), String> {
    let text = super::read_text(file)?;
    let parsed = crate::model::parse_hlo(&text);
    super::input::refuse_syntax_errors(file, &text, &parsed.diagnostics)?;
    if parsed.modules.is_empty() {
        return Err(format!("{}: no HLO module", file.display()));
    }
    Ok((text, parsed))
}
