//! The few device numbers XLA's fusion rules read from its `se::DeviceDescription`:
//! the warp size (which reductions the reduction emitters take), the number of
//! resident threads (when the loop emitter unrolls), the shared memory a block may use
//! (the budget of a fusion's reductions and transposes), and whether the GPU is a
//! Blackwell with a toolkit that emits 256-bit vector accesses (how far loops unroll).
//!
//! A trait, not a device type: the device model lives elsewhere
//! ([`crate::coalescing::Device`] today), and the rules only ask these questions.

/// What the fusion rules ask of a GPU.
pub trait Target {
    /// `WarpSize(device_info)`.
    fn warp_size(&self) -> i64;
    /// `core_count()`: streaming multiprocessors.
    fn core_count(&self) -> i64;
    /// `threads_per_core_limit()`: resident threads per SM.
    fn threads_per_core_limit(&self) -> i64;
    /// The shared memory one block may use when it opts in, in bytes: the budget of
    /// `FusionFitsInBudget`.
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
}

impl Target for crate::coalescing::Device {
    fn warp_size(&self) -> i64 {
        self.warp_size
    }
    fn core_count(&self) -> i64 {
        self.sm_count
    }
    fn threads_per_core_limit(&self) -> i64 {
        self.threads_per_sm
    }
    fn shared_memory_per_block_optin(&self) -> i64 {
        self.shared_memory_per_block
    }
}
