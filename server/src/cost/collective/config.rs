//! The network XLA's Speed-of-Light collective model assumes
//! (`SolGPUCostModel::Config`) and how it is chosen (`SolGPUCostModel::GetConfig`):
//! defaults by the device's name, overridden by the user's
//! `xla_gpu_analytical_latency_estimator_options` (here [`SolConfig`], what
//! `--latency-options` passes).

use super::platform;
use crate::cost::Duration;
use crate::device::Device;

/// `kDefaultNcclCostModelCoeff`: XLA scales each measured default by it (in
/// single precision, as the `float` constants are multiplied).
const COEFFICIENT: f32 = 0.45;
/// `kDefaultNcclCostModelChunkSizeBytes`: 4 MiB.
const CHUNK_SIZE_BYTES: i64 = 4 * 1024 * 1024;

/// `SolGPUCostModel::Config`: the parameters of the SoL model for one device.
#[derive(Clone, Debug, PartialEq)]
pub struct SolParameters {
    /// Time to start one NCCL collective.
    pub nccl_op_launch_time: Duration,
    /// NIC bandwidth in GB/s (10^9 bytes per second, not bits).
    pub nic_speed_gbps: f64,
    /// Time to prepare one chunk.
    pub chunk_prep_time: Duration,
    /// Network round trip.
    pub rtt: Duration,
    /// GPUs of one node: the size of a partition unless `partition_size` says.
    pub gpus_per_node: i64,
    pub chunk_size_bytes: i64,
    /// Devices of one fast-interconnect domain; 0: not said.
    pub partition_size: i64,
    /// One NVLink lane's bandwidth in GB/s (for the intra-node all-reduce
    /// kernels); 0 when unknown.
    pub nvlink_bw_per_lane_gbps: f64,
    /// The barrier of the intra-node one-shot and two-shot kernels.
    pub nvlink_barrier_latency: Duration,
}

/// `absl::Microseconds(float)`.
fn micros(us: f32) -> Duration {
    Duration::from_secs_f64(f64::from(us) / 1e6)
}

impl SolParameters {
    /// The defaults XLA keeps for a device name (`device_to_cfg`): measured on
    /// an H100 (`NVIDIA H100 80GB HBM3`) and a B200 (`NVIDIA B200`), each
    /// scaled by 0.45; any other name gets the H100's latencies with the
    /// B200's NIC (50 GB/s). The NVLink lane bandwidth is filled from the
    /// device by [`SolParameters::for_device`].
    pub fn defaults_for_name(name: &str) -> SolParameters {
        let scaled = |x: f32| x * COEFFICIENT;
        let (nic, prep, rtt, barrier) = match name {
            "NVIDIA H100 80GB HBM3" => (55.56, 13.34, 68.89, Duration::from_nanos(1500)),
            "NVIDIA B200" => (111.12, 4.45, 46.67, Duration::from_micros(1)),
            _ => (111.12, 13.34, 68.89, Duration::from_nanos(1500)),
        };
        SolParameters {
            nccl_op_launch_time: micros(scaled(100.0)),
            nic_speed_gbps: f64::from(scaled(nic)),
            chunk_prep_time: micros(scaled(prep)),
            rtt: micros(scaled(rtt)),
            gpus_per_node: 8,
            chunk_size_bytes: CHUNK_SIZE_BYTES,
            partition_size: 0,
            nvlink_bw_per_lane_gbps: 0.0,
            nvlink_barrier_latency: barrier,
        }
    }

    /// `SolGPUCostModel::GetConfig(module, device)`: the device's defaults
    /// (`GetPlatformConfig`, NVLink bandwidth included), then the options.
    pub fn for_device(device: &Device, options: &SolConfig) -> SolParameters {
        let mut p = SolParameters::defaults_for_name(&platform::xla_device_name(device));
        p.nvlink_bw_per_lane_gbps = platform::nvlink_bandwidth_per_lane_gbps(device).unwrap_or(0.0);
        p.with_options(options)
    }

    /// The options laid over these parameters.
    pub fn with_options(mut self, options: &SolConfig) -> SolParameters {
        let us = |v: i64| Duration::from_micros(v);
        if let Some(v) = options.nccl_op_launch_us {
            self.nccl_op_launch_time = us(v);
        }
        if let Some(v) = options.nic_speed_gbps {
            self.nic_speed_gbps = v;
        }
        if let Some(v) = options.chunk_prep_us {
            self.chunk_prep_time = us(v);
        }
        if let Some(v) = options.rtt_us {
            self.rtt = us(v);
        }
        if let Some(v) = options.gpus_per_node {
            self.gpus_per_node = v;
        }
        if let Some(v) = options.chunk_size_bytes {
            self.chunk_size_bytes = v;
        }
        if let Some(v) = options.partition_size {
            self.partition_size = v;
        }
        self
    }
}

/// The user's `xla_gpu_analytical_latency_estimator_options`: each key that
/// `GetConfig` reads, when given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolConfig {
    pub nccl_op_launch_us: Option<i64>,
    pub nic_speed_gbps: Option<f64>,
    pub chunk_prep_us: Option<i64>,
    pub rtt_us: Option<i64>,
    pub gpus_per_node: Option<i64>,
    pub chunk_size_bytes: Option<i64>,
    pub partition_size: Option<i64>,
}

impl SolConfig {
    /// The keys `GetConfig` reads (`kSolNcclOpLaunchUs`, ...).
    pub const KEYS: [&'static str; 7] = [
        "nccl_op_launch_us",
        "nic_speed_gbps",
        "chunk_prep_us",
        "rtt_us",
        "gpus_per_node",
        "chunk_size_bytes",
        "partition_size",
    ];

    /// Reads XLA's flag syntax, `key=value` separated by commas
    /// (`nccl_op_launch_us=55,nic_speed_gbps=40`). XLA skips what it cannot
    /// use; here an unknown key, a value that is not a number of the key's
    /// kind or not positive is an error naming the key. `-1`, XLA's own
    /// placeholder for "not set", keeps the device's default.
    pub fn parse(options: &str) -> Result<SolConfig, String> {
        let mut config = SolConfig::default();
        for part in options.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            let (key, value) = (key.trim(), value.trim());
            if !SolConfig::KEYS.contains(&key) {
                return Err(format!(
                    "latency option `{key}` is not one XLA's SoL model reads (it reads {})",
                    SolConfig::KEYS.join(", ")
                ));
            }
            if value == "-1" {
                continue;
            }
            if key == "nic_speed_gbps" {
                config.nic_speed_gbps = Some(positive_number(key, value)?);
                continue;
            }
            let v = positive_integer(key, value)?;
            let slot = match key {
                "nccl_op_launch_us" => &mut config.nccl_op_launch_us,
                "chunk_prep_us" => &mut config.chunk_prep_us,
                "rtt_us" => &mut config.rtt_us,
                "gpus_per_node" => &mut config.gpus_per_node,
                "chunk_size_bytes" => &mut config.chunk_size_bytes,
                _ => &mut config.partition_size,
            };
            *slot = Some(v);
        }
        Ok(config)
    }
}

/// `absl::SimpleAtoi` and `value > 0`.
fn positive_integer(key: &str, value: &str) -> Result<i64, String> {
    match value.strip_prefix('+').unwrap_or(value).parse::<i64>() {
        Ok(v) if v > 0 => Ok(v),
        Ok(v) => Err(format!("latency option `{key}`: {v} is not positive")),
        Err(_) => Err(format!(
            "latency option `{key}`: `{value}` is not a whole number"
        )),
    }
}

/// `absl::SimpleAtod` and `value > 0`.
fn positive_number(key: &str, value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err(format!(
            "latency option `{key}`: `{value}` is not a positive number"
        )),
        Err(_) => Err(format!("latency option `{key}`: `{value}` is not a number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_device_name() {
        let h100 = SolParameters::for_device(&Device::h100(), &SolConfig::default());
        assert_eq!(h100.nic_speed_gbps as i64, 25);
        assert_eq!(h100.nccl_op_launch_time, Duration::from_micros(45));
        assert_eq!(h100.nvlink_bw_per_lane_gbps, 20.0);
        let b200 = SolParameters::defaults_for_name("NVIDIA B200");
        assert_eq!(b200.nic_speed_gbps as i64, 50);
        let prep = b200.chunk_prep_time.as_nanos_f64();
        assert!((prep - 2000.0).abs() <= 10.0, "{prep}");
        let h200 = SolParameters::defaults_for_name("NVIDIA H200");
        assert_eq!(h200.nic_speed_gbps as i64, 50);
        assert_eq!(h200.gpus_per_node, 8);
    }

    #[test]
    fn options_override_and_bad_ones_name_their_key() {
        let c =
            SolConfig::parse("nccl_op_launch_us=55,nic_speed_gbps=40.5, gpus_per_node=4,rtt_us=-1")
                .unwrap();
        assert_eq!(c.nccl_op_launch_us, Some(55));
        assert_eq!(c.nic_speed_gbps, Some(40.5));
        assert_eq!(c.rtt_us, None);
        let p = SolParameters::defaults_for_name("x").with_options(&c);
        assert_eq!(p.gpus_per_node, 4);
        assert_eq!(p.nccl_op_launch_time, Duration::from_micros(55));
        assert_eq!(SolConfig::parse("").unwrap(), SolConfig::default());
        for (bad, key) in [
            ("gpus_per_node=0", "gpus_per_node"),
            ("chunk_size_bytes=1.5", "chunk_size_bytes"),
            ("nic_speed_gbps=fast", "nic_speed_gbps"),
            ("rtt_us", "rtt_us"),
            ("nic_speed=4", "nic_speed"),
        ] {
            let e = SolConfig::parse(bad).unwrap_err();
            assert!(e.contains(&format!("`{key}`")), "{bad}: {e}");
        }
    }
}
