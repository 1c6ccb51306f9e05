//! Which XLA backend compiled a module: a CPU dump is not a GPU kernel graph, so GPU
//! analyses (coalescing, the GPU cost model) do not judge it unless the user asks for
//! a GPU ("as if compiled for ...").
//!
//! XLA says it in two places: the dump's file name (`*.cpu_after_optimizations.txt`,
//! `*.sm_9.0_gpu_after_optimizations.txt`) and the instructions' `backend_config`
//! (CPU fusions carry `outer_dimension_partitions`, GPU instructions an
//! `operation_queue_id` and GPU fusions a `fusion_backend_config`), plus custom-call
//! targets of one backend's libraries (`__cublas$gemm`, `__onednn$matmul`). Text from
//! XLA's own tests often has neither: then nothing is known.

use super::{Instruction, Module};

/// How much of a module's text [`Backend::of_module`] reads before it gives up: the
/// marks stand on most instructions of a compiled module, so the first computations
/// say it; text without any (XLA's tests) is not read whole for nothing.
const SCANNED_BYTES: usize = 4 << 20;

/// A compiler backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Cpu,
    Gpu,
}

impl Backend {
    /// The backend a dump file's name gives: XLA names the after-optimizations
    /// dump after the platform (`cpu_after_optimizations`, `gpu_after_optimizations`)
    /// and pass-by-pass dumps after the module's platform too.
    pub fn from_file_name(name: &str) -> Option<Backend> {
        if name.contains("cpu_after_optimizations") || name.contains(".cpu_") {
            Some(Backend::Cpu)
        } else if name.contains("gpu_after_optimizations") || name.contains(".gpu_") {
            Some(Backend::Gpu)
        } else {
            None
        }
    }

    /// The backend of a dump whose own name does not say (a pass-by-pass dump,
    /// `module_0004.jit_step.0001.HLO_passes_after_layout_assignment....txt`, or
    /// `module_0004.jit_step.before_optimizations.txt`), from the name of the
    /// after-optimizations dump XLA wrote for the same module in the same folder
    /// (`module_0004.jit_step.cpu_after_optimizations.txt`). `siblings` are the names
    /// of the files beside it.
    pub fn from_siblings<'a>(
        file_name: &str,
        siblings: impl IntoIterator<Item = &'a str>,
    ) -> Option<Backend> {
        let module = dump_module_prefix(file_name)?;
        siblings
            .into_iter()
            .filter(|name| name.starts_with(module) && *name != file_name)
            .find_map(Backend::from_file_name)
    }

    /// The backend an instruction's own attributes give, if they say.
    pub fn of_instruction(instruction: &Instruction) -> Option<Backend> {
        let attrs = instruction.attrs();
        let config = attrs.backend_config();
        if let Some(config) = config.as_ref().and_then(|c| c.as_object()) {
            if config.contains_key("outer_dimension_partitions") {
                return Some(Backend::Cpu);
            }
            if config.contains_key("operation_queue_id")
                || config.contains_key("fusion_backend_config")
                || config.contains_key("cudnn_conv_backend_config")
                || config.contains_key("gemm_backend_config")
            {
                return Some(Backend::Gpu);
            }
        }
        let target = attrs.uncommon().custom_call_target.as_deref()?;
        const GPU: &[&str] = &["__cublas", "__cudnn", "__triton", "__gpu$", "__nccl"];
        const CPU: &[&str] = &["__onednn", "__xla_cpu", "__ynn"];
        if GPU.iter().any(|p| target.starts_with(p)) {
            Some(Backend::Gpu)
        } else if CPU.iter().any(|p| target.starts_with(p)) {
            Some(Backend::Cpu)
        } else {
            None
        }
    }

    /// The backend of a module, from its text (see [`Self::of_text`]), found once
    /// per module outline. The entry computation is read first: its kernels carry the
    /// marks, while fused computations (which often come first in a dump) do not.
    /// A module XLA printed after its pipeline ([`Module::compiled`]) without any GPU
    /// mark is a CPU one: XLA's GPU backend gives every scheduled kernel an operation
    /// queue. (Test modules written by hand for the GPU may be scheduled without
    /// marks; they do not give the entry layout, and stay unknown.)
    pub fn of_module(module: &Module) -> Option<Backend> {
        *module.refs.backend.get_or_init(|| {
            let entry = module.entry_computation();
            let others = module
                .computations()
                .filter(|c| Some(c.id) != entry.as_ref().map(|e| e.id));
            let mut scanned = 0;
            for c in entry.into_iter().chain(others) {
                if let Some(backend) = Backend::of_text(c.text) {
                    return Some(backend);
                }
                scanned += c.text.len();
                if scanned > SCANNED_BYTES {
                    break;
                }
            }
            module.compiled.then_some(Backend::Cpu)
        })
    }

    /// The backend a piece of HLO text names: the first of the marks of
    /// [`Self::of_instruction`] found in it, as raw text (no model is built).
    pub fn of_text(text: &str) -> Option<Backend> {
        const MARKS: &[(&str, Backend)] = &[
            ("\"outer_dimension_partitions\"", Backend::Cpu),
            ("__onednn$", Backend::Cpu),
            ("__xla_cpu", Backend::Cpu),
            ("__ynn_fusion", Backend::Cpu),
            ("\"operation_queue_id\"", Backend::Gpu),
            ("\"fusion_backend_config\"", Backend::Gpu),
            ("__cublas", Backend::Gpu),
            ("__cudnn", Backend::Gpu),
            ("__triton", Backend::Gpu),
        ];
        MARKS
            .iter()
            .filter_map(|(mark, backend)| {
                memchr::memmem::find(text.as_bytes(), mark.as_bytes()).map(|at| (at, *backend))
            })
            .min_by_key(|(at, _)| *at)
            .map(|(_, backend)| backend)
    }

    /// How a hover or a report says it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "CPU",
            Backend::Gpu => "GPU",
        }
    }
}

/// `module_0004.jit_step.` of a file XLA dumped for module 4 (`module_` and its
/// number, then the module's name: the start of every file of that module).
fn dump_module_prefix(file_name: &str) -> Option<&str> {
    let rest = file_name.strip_prefix("module_")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || rest.as_bytes().get(digits) != Some(&b'.') {
        return None;
    }
    let after_number = "module_".len() + digits + 1;
    let name_end = file_name[after_number..].find('.')? + after_number + 1;
    Some(&file_name[..name_end])
}

/// Whether `module` is a dump of a program no backend has optimized yet: XLA printed
/// it from a compilation (its header gives `entry_computation_layout`, as in
/// `*.before_optimizations.txt` and JAX's `as_hlo_text()`), with no schedule, no
/// backend's marks and no fusion anywhere. Its instructions are not kernels yet (XLA
/// fuses most of them) and the text does not say which backend it was compiled for,
/// so GPU answers read it only when the user chose a GPU, as they read StableHLO.
/// A module written by hand for XLA's GPU tests rarely gives the layout, and is read
/// as a GPU program.
pub fn before_fusion(module: &Module) -> bool {
    *module.refs.before_fusion.get_or_init(|| {
        let dumped = module
            .header_text()
            .is_some_and(|h| h.contains("entry_computation_layout="));
        if !dumped || module.compiled || Backend::of_module(module).is_some() {
            return false;
        }
        let mut scanned = 0;
        for c in module.computations() {
            if memchr::memmem::find(c.text.as_bytes(), b" fusion(").is_some() {
                return false;
            }
            scanned += c.text.len();
            if scanned > SCANNED_BYTES {
                return false;
            }
        }
        module.entry_computation().is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_say_the_platform() {
        let cpu = "module_0004.jit_step.cpu_after_optimizations.txt";
        assert_eq!(Backend::from_file_name(cpu), Some(Backend::Cpu));
        let gpu = "module_0012.jit_f.sm_9.0_gpu_after_optimizations.txt";
        assert_eq!(Backend::from_file_name(gpu), Some(Backend::Gpu));
        assert_eq!(Backend::from_file_name("softmax.hlo"), None);
    }

    #[test]
    fn a_pass_dump_takes_the_platform_of_its_modules_final_dump() {
        let siblings = [
            "module_0004.jit_step.0001.HLO_passes_after_layout_assignment.after_fusion.txt",
            "module_0004.jit_step.cpu_after_optimizations.txt",
            "module_0012.jit_f.sm_9.0_gpu_after_optimizations.txt",
            "module_0012.jit_f.before_optimizations.txt",
        ];
        let pass = siblings[0];
        assert_eq!(Backend::from_siblings(pass, siblings), Some(Backend::Cpu));
        let before = siblings[3];
        assert_eq!(Backend::from_siblings(before, siblings), Some(Backend::Gpu));
        // Module 4 of another program (`jit_stepper`) is not module 4 of `jit_step`.
        let other = ["module_0004.jit_stepper.cpu_after_optimizations.txt"];
        assert_eq!(Backend::from_siblings(pass, other), None);
        assert_eq!(Backend::from_siblings("softmax.hlo", siblings), None);
    }

    #[test]
    fn backend_configs_and_library_calls_say_it_too() {
        let module = |body: &str| {
            let text =
                format!("HloModule m\n\nENTRY e {{\n  p = f32[8] parameter(0)\n  {body}\n}}\n");
            crate::model::parse_hlo(&text)
        };
        let cpu = module(
            r#"ROOT f = f32[8] negate(p), backend_config={"outer_dimension_partitions":[]}"#,
        );
        assert_eq!(Backend::of_module(&cpu.modules[0]), Some(Backend::Cpu));
        let gpu = module(
            r#"ROOT f = f32[8] negate(p), backend_config={"operation_queue_id":"0","wait_on_operation_queues":[]}"#,
        );
        assert_eq!(Backend::of_module(&gpu.modules[0]), Some(Backend::Gpu));
        let gemm = module(r#"ROOT f = f32[8] custom-call(p), custom_call_target="__cublas$gemm""#);
        assert_eq!(Backend::of_module(&gemm.modules[0]), Some(Backend::Gpu));
        let plain = module("ROOT f = f32[8] negate(p)");
        assert_eq!(Backend::of_module(&plain.modules[0]), None);
        // After XLA's pipeline, no GPU mark anywhere: the CPU's output.
        let scheduled = crate::model::parse_hlo(
            "HloModule m, is_scheduled=true, entry_computation_layout={(f32[8]{0})->f32[8]{0}}\n\nENTRY e {\n  p = f32[8] parameter(0)\n  ROOT f = f32[8] negate(p)\n}\n",
        );
        assert_eq!(
            Backend::of_module(&scheduled.modules[0]),
            Some(Backend::Cpu)
        );
        // Scheduled by a test's author, not printed by XLA: unknown.
        let by_hand = crate::model::parse_hlo(
            "HloModule m, is_scheduled=true\n\nENTRY e {\n  p = f32[8] parameter(0)\n  ROOT f = f32[8] negate(p)\n}\n",
        );
        assert_eq!(Backend::of_module(&by_hand.modules[0]), None);
    }

    #[test]
    fn a_dump_before_xlas_passes_is_before_fusion_and_a_test_module_is_not() {
        let module = |header: &str, body: &str| {
            let text = format!(
                "HloModule m{header}\n\nENTRY e {{\n  p = f32[8]{{0}} parameter(0)\n  {body}\n}}\n"
            );
            crate::model::parse_hlo(&text)
        };
        let layout = ", entry_computation_layout={(f32[8]{0})->f32[8]{0}}";
        let dumped = module(layout, "ROOT n = f32[8]{0} negate(p)");
        assert!(before_fusion(&dumped.modules[0]));
        // Written by hand for a test: read as the GPU program it is meant to be.
        let by_hand = module("", "ROOT n = f32[8]{0} negate(p)");
        assert!(!before_fusion(&by_hand.modules[0]));
        // Fused already: XLA's passes ran.
        let fused = crate::model::parse_hlo(&format!(
            "HloModule m{layout}\n\nf {{\n  q = f32[8]{{0}} parameter(0)\n  ROOT n = f32[8]{{0}} negate(q)\n}}\n\nENTRY e {{\n  p = f32[8]{{0}} parameter(0)\n  ROOT f = f32[8]{{0}} fusion(p), kind=kLoop, calls=f\n}}\n"
        ));
        assert!(!before_fusion(&fused.modules[0]));
        let scheduled = module(
            &format!(", is_scheduled=true{layout}"),
            "ROOT n = f32[8]{0} negate(p)",
        );
        assert!(!before_fusion(&scheduled.modules[0]));
    }
}
