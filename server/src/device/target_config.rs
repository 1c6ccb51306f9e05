//! A [`Device`] from the text proto XLA writes for a GPU: a `GpuTargetConfig`
//! (`--xla_dump_to` leaves `*.gpu_target_config.pbtxt`; `hlo_opt` reads
//! `xla/tools/hlo_opt/gpu_specs/*.txtpb`), whose `gpu_device_info` block is a
//! `GpuDeviceInfoProto`, or that block alone.
//!
//! As XLA's `DeviceDescription(const GpuDeviceInfoProto&)`, a field left out is
//! zero; the result is not validated ([`Device::validate`] says whether the cost
//! model can use it), because XLA's own tests build devices from nearly empty
//! protos. Unknown fields are skipped, so newer protos still read.

use super::text_proto::{self, Field, Message, TextProtoError, Value};
use super::units::{self, Rate};
use super::{ComputeCapability, Device};

/// Why a text proto is not a device: unreadable text, or a field whose value
/// has the wrong type. `offset` is a byte offset into the input.
pub type DeviceProtoError = TextProtoError;

/// Reads a `GpuTargetConfig` or a bare `GpuDeviceInfoProto`.
pub fn from_text_proto(text: &str) -> Result<Device, DeviceProtoError> {
    let top = text_proto::parse(text)?;
    let mut name = String::from("custom");
    let info = match top.get("gpu_device_info") {
        Some(field) => {
            if let Some(description) = top.get("device_description_str") {
                name = string(description)?;
            }
            message(field)?
        }
        None => &top,
    };
    let mut device = Device::empty(&name);
    let (mut matrix, mut vector) = (None, None);
    for field in &info.fields {
        let slot: Option<&mut i64> = match field.name.as_str() {
            "threads_per_block_limit" => Some(&mut device.threads_per_block),
            "threads_per_warp" => Some(&mut device.warp_size),
            "shared_memory_per_block" => Some(&mut device.shared_memory_per_block),
            "shared_memory_per_block_optin" => Some(&mut device.shared_memory_per_block_optin),
            "shared_memory_per_core" => Some(&mut device.shared_memory_per_core),
            "threads_per_core_limit" => Some(&mut device.threads_per_sm),
            "core_count" => Some(&mut device.sm_count),
            "fpus_per_core" => Some(&mut device.fpus_per_core),
            "block_dim_limit_x" => Some(&mut device.block_dim_limit[0]),
            "block_dim_limit_y" => Some(&mut device.block_dim_limit[1]),
            "block_dim_limit_z" => Some(&mut device.block_dim_limit[2]),
            "memory_bandwidth" => Some(&mut device.memory_bandwidth),
            "l2_cache_size" => Some(&mut device.l2_cache_size),
            "device_memory_size" => Some(&mut device.device_memory_size),
            "registers_per_core_limit" => Some(&mut device.registers_per_core_limit),
            "registers_per_block_limit" => Some(&mut device.registers_per_block_limit),
            "pcie_bandwidth" => Some(&mut device.host_bandwidth),
            _ => None,
        };
        if let Some(slot) = slot {
            *slot = integer(field)?;
            continue;
        }
        match field.name.as_str() {
            "clock_rate_ghz" => device.clock_rate_ghz = float(field)?,
            "cuda_compute_capability" => {
                let cc = message(field)?;
                let part = |k: &str| cc.get(k).map(integer).transpose().map(|v| v.unwrap_or(0));
                device.set_compute_capability(ComputeCapability::Cuda {
                    major: part("major")?,
                    minor: part("minor")?,
                });
            }
            "rocm_compute_capability" => {
                let cc = message(field)?;
                let gcn_arch_name = match cc.get("gcn_arch_name") {
                    Some(f) => string(f)?,
                    None => String::new(),
                };
                device.set_compute_capability(ComputeCapability::Rocm { gcn_arch_name });
            }
            "matrix_unit_description" => matrix = Some(rates(message(field)?)?),
            "scalar_unit_description" => vector = Some(rates(message(field)?)?),
            _ => {}
        }
    }
    // A proto without unit descriptions (XLA's older specs, most dumps' target
    // configs) gets the table's, as XLA fills them for a device it opens.
    device.fill_units();
    if let Some(m) = matrix {
        device.matrix_units = m;
    }
    if let Some(v) = vector {
        device.vector_units = v;
    }
    // XLA writes -1 for a link it could not measure.
    device.host_bandwidth = device.host_bandwidth.max(0);
    Ok(device)
}

/// An `ExecutionUnitDescriptionProto`: `rate_infos { key: <PrimitiveType number>
/// value { clock_rate_ghz units_per_core ops_per_clock } }`, one per type; keys
/// that name no type XLA knows are skipped.
fn rates(description: &Message) -> Result<Vec<Rate>, DeviceProtoError> {
    let mut out = vec![];
    for entry in description.fields.iter().filter(|f| f.name == "rate_infos") {
        let entry = message(entry)?;
        let Some(key) = entry.get("key") else {
            continue;
        };
        let Some(dtype) = units::proto_type_name(integer(key)?) else {
            continue;
        };
        let mut rate = Rate {
            dtype: dtype.to_string(),
            units_per_core: 0,
            clock_rate_ghz: 0.0,
            ops_per_clock: 0,
        };
        if let Some(value) = entry.get("value") {
            let value = message(value)?;
            for f in &value.fields {
                match f.name.as_str() {
                    "clock_rate_ghz" => rate.clock_rate_ghz = float(f)? as f32,
                    "units_per_core" => rate.units_per_core = integer(f)?,
                    "ops_per_clock" => rate.ops_per_clock = integer(f)?,
                    _ => {}
                }
            }
        }
        out.push(rate);
    }
    Ok(out)
}

fn error<T>(at: usize, message: String) -> Result<T, DeviceProtoError> {
    Err(TextProtoError {
        offset: at,
        message,
    })
}

fn scalar(field: &Field) -> Result<(&str, bool, usize), DeviceProtoError> {
    match &field.value {
        Value::Scalar { text, quoted, at } => Ok((text.as_str(), *quoted, *at)),
        Value::Message(_) => error(
            field.at,
            format!("{} must be a value, not a message", field.name),
        ),
    }
}

fn message(field: &Field) -> Result<&Message, DeviceProtoError> {
    match &field.value {
        Value::Message(m) => Ok(m),
        Value::Scalar { at, .. } => error(*at, format!("{} must be a message {{...}}", field.name)),
    }
}

/// An integer field; a float spelling of a whole number (`7.68e11`) is accepted.
fn integer(field: &Field) -> Result<i64, DeviceProtoError> {
    let (text, quoted, at) = scalar(field)?;
    if !quoted {
        if let Ok(v) = text.parse::<i64>() {
            return Ok(v);
        }
        if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            if let Ok(v) = i64::from_str_radix(hex, 16) {
                return Ok(v);
            }
        }
        if let Ok(v) = text.parse::<f64>() {
            if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.2e18 {
                return Ok(v as i64);
            }
        }
    }
    error(
        at,
        format!("{} must be an integer, got {text:?}", field.name),
    )
}

fn float(field: &Field) -> Result<f64, DeviceProtoError> {
    let (text, quoted, at) = scalar(field)?;
    let trimmed = text.strip_suffix(['f', 'F']).unwrap_or(text);
    match trimmed.parse::<f64>() {
        Ok(v) if !quoted && v.is_finite() => Ok(v),
        _ => error(at, format!("{} must be a number, got {text:?}", field.name)),
    }
}

fn string(field: &Field) -> Result<String, DeviceProtoError> {
    let (text, quoted, at) = scalar(field)?;
    if quoted {
        Ok(text.to_string())
    } else {
        error(at, format!("{} must be a quoted string", field.name))
    }
}

/// The `*.gpu_target_config.pbtxt` XLA writes beside its dumps, in the folder of
/// `file` (the first by name when there are several).
pub fn beside(file: &std::path::Path) -> Option<std::path::PathBuf> {
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".gpu_target_config.pbtxt"))
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `xla/tools/hlo_opt/gpu_specs/a6000.txtpb` (tensorflow/tensorflow@dd0b533d),
    /// without its license header.
    const A6000: &str = r#"
gpu_device_info {
  threads_per_block_limit: 1024
  threads_per_warp: 32
  shared_memory_per_block: 49152
  shared_memory_per_core: 102400
  threads_per_core_limit: 1536
  core_count: 84
  fpus_per_core: 128
  block_dim_limit_x: 2147483647
  block_dim_limit_y: 65535
  block_dim_limit_z: 65535
  memory_bandwidth: 768096000000
  l2_cache_size: 6291456
  clock_rate_ghz: 1.8
  device_memory_size: 51041271808
  shared_memory_per_block_optin: 101376
  cuda_compute_capability {
    major: 8
    minor: 6
  }
  registers_per_core_limit: 65536
  registers_per_block_limit: 65536
}
platform_name: "CUDA"
dnn_version_info {
  major: 8
  minor: 9
  patch: 4
}
device_description_str: "NVIDIA RTX A6000"
"#;

    #[test]
    fn reads_xlas_a6000_spec() {
        let d = from_text_proto(A6000).unwrap();
        d.validate().unwrap();
        assert_eq!(d.name, "NVIDIA RTX A6000");
        // The spec's clock (1.8 GHz) differs from the test device's (1.41).
        let mut expected = Device::a6000();
        expected.name = d.name.clone();
        expected.clock_rate_ghz = 1.8;
        expected.device_memory_size = 51_041_271_808;
        expected.fill_units();
        // The spec has no `pcie_bandwidth`.
        expected.host_bandwidth = 0;
        assert_eq!(d, expected);
    }

    #[test]
    fn bare_device_info_and_rocm() {
        let d = from_text_proto(
            "threads_per_warp: 64 core_count: 304 rocm_compute_capability { gcn_arch_name: \"gfx942:sramecc+:xnack-\" }",
        )
        .unwrap();
        assert_eq!((d.warp_size, d.sm_count), (64, 304));
        assert_eq!(d.dram_to_l2_transaction_bytes, 128);
        assert_eq!(d.name, "custom");
        // An empty proto is XLA's all-zero description.
        let empty = from_text_proto("").unwrap();
        assert_eq!(empty.sm_count, 0);
        assert!(empty.validate().is_err());
    }

    /// The unit descriptions and host link of XLA's newer specs
    /// (`xla/backends/gpu/target_config/specs/h100_sxm.txtpb`, two entries of each).
    #[test]
    fn reads_unit_descriptions_and_the_host_link() {
        let text = r#"gpu_device_info {
  core_count: 132
  clock_rate_ghz: 1.98
  cuda_compute_capability { major: 9 }
  scalar_unit_description {
    rate_infos { key: 11 value { clock_rate_ghz: 1.98 units_per_core: 128 ops_per_clock: 1 } }
  }
  matrix_unit_description {
    rate_infos { key: 16 value { clock_rate_ghz: 1.8295201 units_per_core: 4 ops_per_clock: 512 } }
    rate_infos { key: 99 value { units_per_core: 4 } }
  }
  pcie_bandwidth: 34359738368
}"#;
        let d = from_text_proto(text).unwrap();
        assert_eq!(d.host_bandwidth, 32 << 30);
        assert_eq!(d.matrix_units.len(), 1);
        let bf16 = d
            .peak_ops_per_ns(
                super::super::Unit::Matrix,
                &crate::model::PrimitiveType::Bf16,
            )
            .unwrap();
        assert!((bf16 / 1000.0 - 989.0).abs() < 2.0, "{bf16}");
        // Listed units replace the table's: f16 is not in this description.
        assert!(d
            .peak_ops_per_ns(
                super::super::Unit::Matrix,
                &crate::model::PrimitiveType::F16
            )
            .is_none());
        // Without descriptions, the table's (as XLA fills a device it opens).
        let d = from_text_proto("core_count: 132 clock_rate_ghz: 1.98 cuda_compute_capability { major: 9 } pcie_bandwidth: -1").unwrap();
        assert!(d.matrix_units.len() > 10);
        assert_eq!(d.host_bandwidth, 0);
    }

    #[test]
    fn type_errors_are_positioned() {
        let e = from_text_proto("core_count: \"many\"").unwrap_err();
        assert_eq!(e.offset, 12);
        let e = from_text_proto("core_count: 1.5").unwrap_err();
        assert_eq!(e.offset, 12);
        let e = from_text_proto("gpu_device_info: 3").unwrap_err();
        assert_eq!(e.offset, 17);
        let e = from_text_proto("cuda_compute_capability: 8").unwrap_err();
        assert_eq!(e.offset, 25);
        let e = from_text_proto("clock_rate_ghz { }").unwrap_err();
        assert_eq!(e.offset, 0);
        let e = from_text_proto("gpu_device_info { core_count: 1 ").unwrap_err();
        assert!(e.to_string().starts_with("byte 32"));
    }
}
