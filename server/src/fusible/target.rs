//! The few device numbers XLA's fusion rules read from its `se::DeviceDescription`:
//! the warp size (which reductions the reduction emitters take), the number of
//! resident threads (when the loop emitter unrolls), the shared memory a block may use
//! (the budget of a fusion's reductions and transposes), and whether the GPU is a
//! Blackwell with a toolkit that emits 256-bit vector accesses (how far loops unroll).
//!
//! A trait, not a device type: the device model is [`crate::device::Device`]; the
//! toolkit the kernels are compiled with is not a device number, so [`Compilation`]
//! pairs the two.

use crate::device::{ComputeCapability, Device};

/// What the fusion rules ask of a GPU.
pub trait Target {
    /// `WarpSize(device_info)`.
    fn warp_size(&self) -> i64;
    /// `core_count()`: streaming multiprocessors.
    fn core_count(&self) -> i64;
    /// `threads_per_core_limit()`: resident threads per SM.
    fn threads_per_core_limit(&self) -> i64;
    /// `shared_memory_per_block()`: the shared memory one block may use without opting
    /// in, in bytes: the budget of `FusionFitsInBudget` (XLA's source compares against
    /// this, not the opt-in maximum).
    fn shared_memory_per_block(&self) -> i64;
    /// `shared_memory_per_block_optin()`: what a block may use when it opts in.
    fn shared_memory_per_block_optin(&self) -> i64;
    /// `cuda_compute_capability().IsBlackwell()`.
    fn is_blackwell(&self) -> bool {
        false
    }
    /// The widest vector access the compiler emits, in bits: 256 on Blackwell with CUDA
    /// 12.9 or later (`v8.b32`), 128 otherwise.
    fn max_vector_bits(&self) -> i64 {
        128
    }
    /// An AMD GPU (`RocmComputeCapability`): Triton takes no FP8 there.
    fn is_rocm(&self) -> bool {
        false
    }
    /// `xla_gpu_experimental_enable_triton_heroless_priority_fusion`: every fusion
    /// priority fusion makes is tried as a Triton fusion first.
    fn triton_heroless_fusion(&self) -> bool {
        false
    }
    /// `xla_gpu_unsupported_enable_triton_multi_output_fusion`: a producer that cannot
    /// go into all its users may form a multi-output Triton fusion with one of them.
    fn triton_multi_output_fusion(&self) -> bool {
        false
    }
}

impl Target for Device {
    fn is_rocm(&self) -> bool {
        matches!(self.compute_capability, ComputeCapability::Rocm { .. })
    }
    fn warp_size(&self) -> i64 {
        self.warp_size
    }
    fn core_count(&self) -> i64 {
        self.sm_count
    }
    fn threads_per_core_limit(&self) -> i64 {
        self.threads_per_sm
    }
    fn shared_memory_per_block(&self) -> i64 {
        self.shared_memory_per_block
    }
    fn shared_memory_per_block_optin(&self) -> i64 {
        self.shared_memory_per_block_optin
    }
    /// Compute capability 10.x (B100, B200, GB200), XLA's `IsBlackwell`.
    fn is_blackwell(&self) -> bool {
        matches!(
            self.compute_capability,
            ComputeCapability::Cuda { major: 10, .. }
        )
    }
}

/// A device with the CUDA toolkit the kernels are compiled with (XLA's
/// `compile_time_toolkit_version`), which decides the widest vector access.
#[derive(Clone, Copy, Debug)]
pub struct Compilation<'a> {
    pub device: &'a Device,
    /// `(major, minor)`, e.g. `(12, 9)`.
    pub toolkit: (i64, i64),
}

impl Target for Compilation<'_> {
    fn warp_size(&self) -> i64 {
        self.device.warp_size()
    }
    fn core_count(&self) -> i64 {
        self.device.core_count()
    }
    fn threads_per_core_limit(&self) -> i64 {
        self.device.threads_per_core_limit()
    }
    fn shared_memory_per_block(&self) -> i64 {
        self.device.shared_memory_per_block()
    }
    fn shared_memory_per_block_optin(&self) -> i64 {
        self.device.shared_memory_per_block_optin()
    }
    fn is_blackwell(&self) -> bool {
        self.device.is_blackwell()
    }
    /// 256-bit accesses (`v8.b32`) on Blackwell from CUDA 12.9 on.
    fn max_vector_bits(&self) -> i64 {
        if self.is_blackwell() && self.toolkit >= (12, 9) {
            256
        } else {
            128
        }
    }
}

/// A target with the compiler's Triton fusion flags set (XLA's debug options; both
/// off by default).
#[derive(Clone, Copy)]
pub struct Flags<'a> {
    pub target: &'a dyn Target,
    pub triton_heroless_fusion: bool,
    pub triton_multi_output_fusion: bool,
}

impl Target for Flags<'_> {
    fn warp_size(&self) -> i64 {
        self.target.warp_size()
    }
    fn core_count(&self) -> i64 {
        self.target.core_count()
    }
    fn threads_per_core_limit(&self) -> i64 {
        self.target.threads_per_core_limit()
    }
    fn shared_memory_per_block(&self) -> i64 {
        self.target.shared_memory_per_block()
    }
    fn shared_memory_per_block_optin(&self) -> i64 {
        self.target.shared_memory_per_block_optin()
    }
    fn is_blackwell(&self) -> bool {
        self.target.is_blackwell()
    }
    fn max_vector_bits(&self) -> i64 {
        self.target.max_vector_bits()
    }
    fn is_rocm(&self) -> bool {
        self.target.is_rocm()
    }
    fn triton_heroless_fusion(&self) -> bool {
        self.triton_heroless_fusion
    }
    fn triton_multi_output_fusion(&self) -> bool {
        self.triton_multi_output_fusion
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blackwell_and_toolkit() {
        let b200 = Device::b200();
        assert!(b200.is_blackwell() && !Device::h100().is_blackwell());
        assert_eq!(b200.max_vector_bits(), 128);
        let new = Compilation {
            device: &b200,
            toolkit: (12, 9),
        };
        assert_eq!(new.max_vector_bits(), 256);
        let h100 = Device::h100();
        let hopper = Compilation {
            device: &h100,
            toolkit: (12, 9),
        };
        assert_eq!(hopper.max_vector_bits(), 128);
        assert_eq!(b200.shared_memory_per_block_optin(), 232_448);
    }
}
