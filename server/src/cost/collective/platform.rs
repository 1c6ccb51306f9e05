//! What XLA's collective cost models read of the GPU beyond the numbers of
//! [`Device`]: the device's name (`DeviceDescription::name`, which picks the
//! SoL model's defaults), the name of its measurements in XLA's performance
//! tables (`HloOpProfiles::GetDeviceSpecificProfileName`), its NVLink lanes
//! and their bandwidth (`device_interconnect_info().active_links`,
//! `GpuPerformanceWithCollectiveModel::GetIciBandwidthPerLaneGbps`).

use crate::device::{ComputeCapability, Device};

/// The name XLA's `DeviceDescription` gives the GPU: the real device's for the
/// presets (`nvidia-smi`'s names, which XLA's SoL defaults are keyed by), the
/// proto's `device_description_str` (kept in [`Device::name`]) otherwise.
pub fn xla_device_name(device: &Device) -> String {
    match device.name.as_str() {
        "a6000" => "NVIDIA RTX A6000",
        "a100" => "NVIDIA A100-SXM4-80GB",
        "h100" => "NVIDIA H100 80GB HBM3",
        "b200" => "NVIDIA B200",
        other => other,
    }
    .to_string()
}

/// `GetDeviceSpecificProfileName`: `sm_90` for compute capability 9.0, and for
/// 10.0 the last word of the device's name too (`sm_100_B200`,
/// `sm_100_GB200`); the `gfx` name on AMD. `None` when the capability is not
/// said.
pub fn profile_name(device: &Device) -> Option<String> {
    match &device.compute_capability {
        ComputeCapability::Cuda { major, minor } => {
            let name = format!("sm_{major}{minor}");
            if name == "sm_100" {
                let name_of_device = xla_device_name(device);
                let last = name_of_device.split(' ').next_back().unwrap_or("");
                return Some(format!("{name}_{last}"));
            }
            Some(name)
        }
        ComputeCapability::Rocm { gcn_arch_name } => {
            Some(gcn_arch_name.split(':').next().unwrap_or("").to_string())
        }
        ComputeCapability::Unknown => None,
    }
}

/// Whether XLA's `CommunicationType` can sort this GPU's collectives: CUDA
/// GPUs and AMD's MI350 (`gfx950`). A device whose capability is not said is
/// taken as CUDA, as the rest of the cost model does.
pub fn sorts_communication(device: &Device) -> bool {
    match &device.compute_capability {
        ComputeCapability::Rocm { gcn_arch_name } => {
            gcn_arch_name.split(':').next() == Some("gfx950")
        }
        _ => true,
    }
}

/// Active NVLink lanes of one GPU (`device_interconnect_info().active_links`),
/// as XLA's test devices set them: 12 on the A100, 18 on the H100 and B200,
/// none said for the RTX A6000 (nor for a device read from a proto).
pub fn active_links(device: &Device) -> i64 {
    match device.name.as_str() {
        "a100" => 12,
        "h100" | "b200" => 18,
        _ => 0,
    }
}

/// `GetIciBandwidthPerLaneGbps`: one NVLink (or Infinity Fabric) lane's
/// bandwidth in GB/s by generation (`CudaBandwidthSettings::GetNvlinkBw`,
/// `RocmBandwidthSettings::GetNvlinkBw`); unknown CUDA generations are taken
/// as Blackwell, as XLA does. `None` when the capability is not said.
pub fn nvlink_bandwidth_per_lane_gbps(device: &Device) -> Option<f64> {
    match &device.compute_capability {
        ComputeCapability::Cuda { major, .. } => Some(match major {
            6 => 18.0,
            7..=9 => 20.0,
            _ => 40.0,
        }),
        ComputeCapability::Rocm { gcn_arch_name } => {
            Some(match gcn_arch_name.split(':').next().unwrap_or("") {
                "gfx908" => 37.5,
                "gfx90a" => 75.0,
                _ => 112.0,
            })
        }
        ComputeCapability::Unknown => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_names_follow_xla() {
        assert_eq!(profile_name(&Device::h100()).as_deref(), Some("sm_90"));
        assert_eq!(
            profile_name(&Device::b200()).as_deref(),
            Some("sm_100_B200")
        );
        assert_eq!(profile_name(&Device::a6000()).as_deref(), Some("sm_86"));
        let mut gb200 = Device::b200();
        gb200.name = "NVIDIA GB200".into();
        assert_eq!(profile_name(&gb200).as_deref(), Some("sm_100_GB200"));
        assert_eq!(xla_device_name(&Device::h100()), "NVIDIA H100 80GB HBM3");
        assert_eq!(nvlink_bandwidth_per_lane_gbps(&Device::h100()), Some(20.0));
        assert_eq!(active_links(&Device::h100()), 18);
    }
}
