//! The GPU the coalescing analysis reasons about: the few numbers XLA's launch
//! heuristics and coalescing rules read from its `se::DeviceDescription`.
//!
//! Presets (every number sourced):
//! * `a6000`: NVIDIA RTX A6000 (GA102, compute capability 8.6). XLA's own tests use
//!   it (`TestGpuDeviceInfo::RTXA6000DeviceInfo`, `gpu_device_info_for_tests.cc`):
//!   84 SMs, 1536 resident threads per SM, 48 KiB shared memory per block.
//! * `a100`: NVIDIA A100 SXM4 (GA100, 8.0): 108 SMs, 2048 threads per SM (NVIDIA
//!   A100 Tensor Core GPU Architecture whitepaper; CUDA C++ Programming Guide,
//!   "Compute Capabilities", table 21), 48 KiB static shared memory per block.
//! * `h100`: NVIDIA H100 SXM5 (GH100, 9.0): 132 SMs, 2048 threads per SM (NVIDIA H100
//!   Tensor Core GPU Architecture whitepaper; same table), 48 KiB per block.
//!
//! All three: 32 threads per warp, 1024 threads per block, and a 64-byte DRAM-to-L2
//! transaction: two 32-byte sectors of a 128-byte L2 line, the default since Volta
//! (XLA's `DeviceDescription::dram_to_l2_transaction_size_bytes`, citing NVIDIA's
//! GTC 2020 talk S21819 "Optimizing Applications for NVIDIA Ampere GPU Architecture",
//! page 10).

use serde::Deserialize;

/// The device numbers the analysis uses.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Device {
    /// `a6000`, or `custom`.
    pub name: String,
    /// Threads that issue one memory instruction together.
    pub warp_size: i64,
    /// Streaming multiprocessors (XLA's `core_count`).
    pub sm_count: i64,
    /// Resident threads per SM (XLA's `threads_per_core_limit`).
    pub threads_per_sm: i64,
    /// Most threads in one block (XLA's `threads_per_block_limit`).
    pub threads_per_block: i64,
    /// Shared memory one block may use without opting in, in bytes.
    pub shared_memory_per_block: i64,
    /// The granularity of a DRAM-to-L2 transfer, in bytes: a read that uses less
    /// of the transfer wastes bandwidth.
    pub dram_to_l2_transaction_bytes: i64,
}

/// The preset names, for messages.
pub const PRESETS: &[&str] = &["a6000", "a100", "h100"];

/// Numbers every preset shares (see the module documentation).
const WARP_SIZE: i64 = 32;
const THREADS_PER_BLOCK: i64 = 1024;
const SHARED_MEMORY_PER_BLOCK: i64 = 48 * 1024;
const DRAM_TO_L2_TRANSACTION_BYTES: i64 = 64;

impl Device {
    /// The device XLA's coalescing tests use (and the default).
    pub fn a6000() -> Device {
        Device::nvidia("a6000", 84, 1536)
    }

    pub fn a100() -> Device {
        Device::nvidia("a100", 108, 2048)
    }

    pub fn h100() -> Device {
        Device::nvidia("h100", 132, 2048)
    }

    fn nvidia(name: &str, sm_count: i64, threads_per_sm: i64) -> Device {
        Device {
            name: name.to_string(),
            warp_size: WARP_SIZE,
            sm_count,
            threads_per_sm,
            threads_per_block: THREADS_PER_BLOCK,
            shared_memory_per_block: SHARED_MEMORY_PER_BLOCK,
            dram_to_l2_transaction_bytes: DRAM_TO_L2_TRANSACTION_BYTES,
        }
    }

    /// A preset by name (case-insensitive).
    pub fn preset(name: &str) -> Option<Device> {
        match name.to_ascii_lowercase().as_str() {
            "a6000" | "rtx-a6000" | "rtxa6000" => Some(Device::a6000()),
            "a100" => Some(Device::a100()),
            "h100" => Some(Device::h100()),
            _ => None,
        }
    }

    /// A device from a setting: a preset name, or an object with a `base` preset
    /// (default `a6000`) and any of the fields in camelCase overriding it
    /// (`{"base": "a100", "dramToL2TransactionBytes": 32}`).
    pub fn from_setting(value: &serde_json::Value) -> Result<Device, String> {
        match value {
            serde_json::Value::String(name) => Device::preset(name).ok_or_else(|| {
                format!("unknown device {name:?} (presets: {})", PRESETS.join(", "))
            }),
            serde_json::Value::Object(fields) => {
                let base = match fields.get("base") {
                    Some(b) => Device::from_setting(b)?,
                    None => Device::a6000(),
                };
                let mut merged =
                    serde_json::to_value(base.to_fields()).map_err(|e| e.to_string())?;
                for (k, v) in fields {
                    if k != "base" {
                        merged[k] = v.clone();
                    }
                }
                merged["name"] = serde_json::json!("custom");
                let device: Device =
                    serde_json::from_value(merged).map_err(|e| format!("device settings: {e}"))?;
                device.validate()?;
                Ok(device)
            }
            other => Err(format!(
                "device must be a preset name or an object, got {other}"
            )),
        }
    }

    fn to_fields(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        let mut put = |k: &str, v: i64| {
            m.insert(k.to_string(), serde_json::json!(v));
        };
        put("warpSize", self.warp_size);
        put("smCount", self.sm_count);
        put("threadsPerSm", self.threads_per_sm);
        put("threadsPerBlock", self.threads_per_block);
        put("sharedMemoryPerBlock", self.shared_memory_per_block);
        put(
            "dramToL2TransactionBytes",
            self.dram_to_l2_transaction_bytes,
        );
        m.insert("name".into(), serde_json::json!(self.name));
        m
    }

    /// Every number must be positive, and a warp at most one block.
    pub fn validate(&self) -> Result<(), String> {
        let fields = [
            ("warpSize", self.warp_size),
            ("smCount", self.sm_count),
            ("threadsPerSm", self.threads_per_sm),
            ("threadsPerBlock", self.threads_per_block),
            ("sharedMemoryPerBlock", self.shared_memory_per_block),
            (
                "dramToL2TransactionBytes",
                self.dram_to_l2_transaction_bytes,
            ),
        ];
        for (name, v) in fields {
            if v < 1 {
                return Err(format!("device {name} must be positive, got {v}"));
            }
        }
        if self.warp_size > self.threads_per_block || self.warp_size > 1024 {
            return Err(format!(
                "device warpSize {} must be at most threadsPerBlock {} (and 1024)",
                self.warp_size, self.threads_per_block
            ));
        }
        Ok(())
    }

    /// Threads the whole GPU keeps resident: XLA unrolls loop fusions only when
    /// the output has at least this many elements.
    pub fn resident_threads(&self) -> i64 {
        self.sm_count.saturating_mul(self.threads_per_sm)
    }
}

impl Default for Device {
    fn default() -> Device {
        Device::a6000()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn presets_and_custom_values() {
        assert_eq!(
            Device::preset("A6000").unwrap().resident_threads(),
            84 * 1536
        );
        assert_eq!(Device::preset("h100").unwrap().sm_count, 132);
        assert!(Device::preset("v100").is_none());
        let d =
            Device::from_setting(&json!({"base": "a100", "dramToL2TransactionBytes": 32})).unwrap();
        assert_eq!((d.sm_count, d.dram_to_l2_transaction_bytes), (108, 32));
        assert_eq!(d.name, "custom");
        assert!(Device::from_setting(&json!({"warpSize": 0})).is_err());
        assert!(Device::from_setting(&json!("tpu"))
            .unwrap_err()
            .contains("presets"));
        assert!(Device::from_setting(&json!({"smCount": "many"})).is_err());
    }
}
