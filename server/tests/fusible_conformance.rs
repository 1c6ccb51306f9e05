//! XLA's fusibility tests (`gpu_fusible_test.cc`, 88 records in
//! `tests/data/conformance/xla/fusible.jsonl`) against `hlo_lsp::fusible`: every
//! record runs through the function it names, with its instruction arguments, on its
//! device, and must give XLA's answer. `more_records` adds 13 expectations of the same
//! test file that the shared data does not carry.

use hlo_lsp::device::Device;
use hlo_lsp::fusible::{self, Compilation, Hlo, Instr, Target};
use hlo_lsp::model;
use serde_json::Value;

/// The device a record names: `TestGpuDeviceInfo::H100SXMDeviceInfo()` and
/// `B200SXMDeviceInfo()` are the presets; `B200WithCUDA129()` compiles for B200 with CUDA
/// 12.9; `MakeDeviceDescription()` is an empty `GpuDeviceInfoProto` with 32 threads per
/// warp.
fn device(text: &str) -> Device {
    if text.contains("B200") {
        Device::b200()
    } else if text.contains("H100") {
        Device::h100()
    } else {
        let mut d = Device::empty("MakeDeviceDescription");
        d.warp_size = 32;
        d
    }
}

/// XLA's `kModulePrefix`.
const PREFIX: &str = "HloModule test_module\nscalar_add {\n  lhs = f32[] parameter(0)\n  rhs = f32[] parameter(1)\n  ROOT add = f32[] add(lhs, rhs)\n}\n";

fn records() -> Vec<Value> {
    crate::conformance_support::xla_records("fusible.jsonl")
}

/// What `record` asks, answered by the library (or why it cannot be asked).
fn answer(record: &Value) -> Result<Value, String> {
    let text = record["hlo"].as_str().unwrap();
    let text = text.replace("$PREFIX", PREFIX);
    let text = text.as_str();
    let file = model::parse_hlo(text);
    let module = file.modules.first().ok_or("no module")?;
    let h = Hlo::new(module);
    let device_text = record["device"].as_str().unwrap_or("");
    let device = device(device_text);
    let toolkit = if device_text.contains("compile_time_toolkit_version 12.9") {
        (12, 9)
    } else {
        (0, 0)
    };
    let target = Compilation {
        device: &device,
        toolkit,
    };
    let args: Vec<Instr> = record["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let name = a.as_str().unwrap();
            // `reduce_window_sum (HloFusionAdaptor::ForInstruction)` names the instruction.
            let name = name.split(' ').next().unwrap();
            h.find(name).ok_or(format!("no instruction {name}"))
        })
        .collect::<Result<_, _>>()?;
    let function = record["function"].as_str().unwrap();
    let t: &dyn Target = &target;
    Ok(match function {
        "IsPhysicallyTransposing" => fusible::is_physically_transposing(&h, args[0]).into(),
        "TransposesMinorDimension" => fusible::transposes_minor_dimension(&h, args[0]).into(),
        "IsReduceInputFusion" => fusible::is_reduce_input_fusion(&h, args[0], t).into(),
        "IsInputFusibleReduction" => fusible::is_input_fusible_reduction(&h, args[0], t).into(),
        "IsFusibleAsMultiOutputFusionRoot" => {
            fusible::is_fusible_as_multi_output_fusion_root(&h, args[0], t).into()
        }
        "IsProducerMultiOutputFusible" => fusible::is_producer_multi_output_fusible(&h, args[0], t)
            .is_allowed()
            .into(),
        "FusionHeroesAreCompatible" => {
            fusible::fusion_heroes_are_compatible(&h, args[0], args[1], t)
                .is_allowed()
                .into()
        }
        "ShapesCompatibleForMultiOutputFusion" => {
            fusible::shapes_compatible_for_multi_output_fusion(&h, args[0], args[1], t)
                .is_allowed()
                .into()
        }
        "ChooseFusionKind" => fusible::choose_fusion_kind(&h, args[0], args[1], t)
            .name()
            .into(),
        "FusionInfoCache::GetSharedMemoryUsage" => {
            fusible::shared_memory_usage(&h, args[0], t).into()
        }
        "IsConsumerTheOnlyNonRootUser" => {
            fusible::is_consumer_the_only_non_root_user(&h, args[0], args[1]).into()
        }
        "MayCausePerformanceDropIfUnrolled" => {
            fusible::may_cause_performance_drop_if_unrolled(&h, args[0]).into()
        }
        f if f.starts_with("ComputeLoopFusionConfig") => {
            fusible::unroll_factor(&h, args[0], t).into()
        }
        other => return Err(format!("unknown function {other}")),
    })
}

#[test]
fn every_fusible_record_matches_xla() {
    let records = records();
    assert_eq!(records.len(), 88);
    let mut failures = vec![];
    for r in &records {
        let expected = &r["expected"];
        match answer(r) {
            Ok(got) if &got == expected => {}
            Ok(got) => failures.push(format!(
                "{} {} {}: expected {expected}, got {got}",
                r["name"], r["function"], r["args"]
            )),
            Err(e) => failures.push(format!("{} {}: {e}", r["name"], r["function"])),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} records differ:\n{}",
        failures.len(),
        records.len(),
        failures.join("\n")
    );
}

/// More `EXPECT_*`s of `gpu_fusible_test.cc` (same commit) that `fusible.jsonl` does not
/// carry, written in its record form (`$PREFIX` is `kModulePrefix`).
fn more_records() -> Vec<Value> {
    let r = |name: &str, hlo: &str, function: &str, args: &[&str], expected: Value| {
        serde_json::json!({"name": name, "hlo": hlo, "function": function, "args": args,
                           "expected": expected, "device": "MakeDeviceDescription()"})
    };
    let different_reduce_dims = "$PREFIX
fused_reduce_1 {
  p0.1 = f32[32,32,32]{2,1,0} parameter(0)
  c0 = f32[] constant(0)
  ROOT reduce = f32[32,32]{1,0} reduce(p0.1, c0), dimensions={0}, to_apply=scalar_add
}
fused_reduce_2 {
  p0.2 = f32[32,32,32]{2,1,0} parameter(0)
  mul = f32[32,32,32]{2,1,0} multiply(p0.2, p0.2)
  c1 = f32[] constant(0)
  ROOT reduce = f32[32,32]{1,0} reduce(mul, c1), dimensions={2}, to_apply=scalar_add
}
ENTRY reduce {
  p0 = f32[32,32,32]{2,1,0} parameter(0)
  p1 = f32[32,32,32]{2,1,0} parameter(1)
  reduce_1 = f32[32,32]{1,0} fusion(p0), kind=kLoop, calls=fused_reduce_1
  reduce_2 = f32[32,32]{1,0} fusion(p1), kind=kLoop, calls=fused_reduce_2
  ROOT root = (f32[32,32]{1,0}, f32[32,32]{1,0}) tuple(reduce_1, reduce_2)
}";
    let no_reduction_to_vector = "$PREFIX
fused_element_wise {
  p0.1 = f32[32,32,32]{2,1,0} parameter(0)
  p1.1 = f32[32,32,32]{2,1,0} parameter(1)
  ROOT add = f32[32,32,32]{2,1,0} add(p0.1, p1.1)
}
fused_reduce {
  p0.2 = f32[32,32,32]{2,1,0} parameter(0)
  mul = f32[32,32,32]{2,1,0} multiply(p0.2, p0.2)
  broadcast = f32[32,32,32,32]{3,2,1,0} broadcast(mul), dimensions={3,2,1}
  c1 = f32[] constant(0)
  ROOT reduce = f32[32,32]{1,0} reduce(broadcast, c1), dimensions={1,3}, to_apply=scalar_add
}
ENTRY reduce {
  p0 = f32[32,32,32]{2,1,0} parameter(0)
  p1 = f32[32,32,32]{2,1,0} parameter(1)
  element_wise = f32[32,32,32]{2,1,0} fusion(p0, p1), kind=kLoop, calls=fused_element_wise
  fusion = f32[32,32]{1,0} fusion(element_wise), kind=kLoop, calls=fused_reduce
  ROOT root = (f32[32,32]{1,0}, f32[32,32,32]{2,1,0}) tuple(fusion, element_wise)
}";
    let reduce_unfriendly = "$PREFIX
mixed_input_layouts_computation {
  p0.1 = f16[128,1024,32,32]{1,3,2,0} parameter(0)
  p1.1 = f16[128,1024,33,33]{3,2,1,0} parameter(1)
  copy = f16[128,1024,33,33]{1,3,2,0} copy(p1.1)
  slice = f16[128,1024,32,32]{1,3,2,0} slice(copy), slice={[0:128],[0:1024],[0:32],[0:32]}
  c0 = f16[] constant(0)
  broadcast = f16[128,1024,32,32]{1,3,2,0} broadcast(c0), dimensions={}
  greater-than = pred[128,1024,32,32]{1,3,2,0} compare(slice, broadcast), direction=GT
  ROOT root = f16[128,1024,32,32]{1,3,2,0} select(greater-than, p0.1, broadcast)
}
fused_reduce {
  p0.2 = f16[128,1024,32,32]{1,3,2,0} parameter(0)
  convert = f32[128,1024,32,32]{1,3,2,0} convert(p0.2)
  c0.2 = f32[] constant(0)
  ROOT reduce = f32[1024]{0} reduce(convert, c0.2), dimensions={0,2,3}, to_apply=scalar_add
}
ENTRY reduce {
  p0 = f16[128,1024,32,32]{1,3,2,0} parameter(0)
  p1 = f16[128,1024,33,33]{3,2,1,0} parameter(1)
  loop_fusion = f16[128,1024,32,32]{1,3,2,0} fusion(p0, p1), kind=kLoop, calls=mixed_input_layouts_computation
  reduce_fusion = f32[1024]{0} fusion(loop_fusion), kind=kInput, calls=fused_reduce
  ROOT root = (f32[1024]{0}, f16[128,1024,32,32]{1,3,2,0}) tuple(reduce_fusion, loop_fusion)
}";
    let variadic = "$PREFIX
reducer {
  p0 = pred[] parameter(0)
  p1 = s32[] parameter(1)
  p2 = pred[] parameter(2)
  p3 = s32[] parameter(3)
  ROOT tuple.20.0 = (pred[], s32[]) tuple(p2, p3)
}
reduce {
  p0 = pred[4,128,128] parameter(0)
  p1 = s32[4,128,128] parameter(1)
  cfalse = pred[] constant(false)
  c0 = s32[] constant(0)
  ROOT reduce = (pred[4,128], s32[4,128]) reduce(p0, p1, cfalse, c0), dimensions={1}, to_apply=reducer
}
ENTRY main {
  p0 = pred[4,128,128] parameter(0)
  p1 = s32[4,128,128] parameter(1)
  ROOT fusion = (pred[4,128], s32[4,128]) fusion(p0, p1), kind=kInput, calls=reduce
}";
    let larger_window = "HloModule m
add {
  lhs = f16[] parameter(0)
  rhs = f16[] parameter(1)
  ROOT result = f16[] add(lhs, rhs)
}
ENTRY main {
  p0 = f16[2048,10,40,2048]{3,2,1,0} parameter(0)
  constant_0 = f16[] constant(0)
  ROOT reduce_window_sum = f16[2048,5,5,2048]{3,2,1,0} reduce-window(p0, constant_0), window={size=1x2x8x1 stride=1x2x8x1}, to_apply=add
}";
    let custom = "triton_fusion {
  p = s32[20,3] parameter(0)
  ROOT neg = s32[20,3] negate(p)
}
ENTRY e {
  p = s32[20,3] parameter(0)
  ROOT r = s32[20,3] fusion(p), kind=kCustom, calls=triton_fusion
}";
    let trivial_dim = "$PREFIX
mixed_input_layouts_computation {
  p0.1 = f16[128,1,32,32]{1,3,2,0} parameter(0)
  p1.1 = f16[128,1,32,32]{3,2,1,0} parameter(1)
  bitcast = f16[128,1,32,32]{1,3,2,0} bitcast(p1.1)
  c0 = f16[] constant(0)
  broadcast = f16[128,1,32,32]{1,3,2,0} broadcast(c0), dimensions={}
  greater-than = pred[128,1,32,32]{1,3,2,0} compare(bitcast, broadcast), direction=GT
  ROOT root = f16[128,1,32,32]{1,3,2,0} select(greater-than, p0.1, broadcast)
}
fused_reduce {
  p0.2 = f16[128,1,32,32]{1,3,2,0} parameter(0)
  convert = f32[128,1,32,32]{1,3,2,0} convert(p0.2)
  c0.2 = f32[] constant(0)
  ROOT reduce = f32[1]{0} reduce(convert, c0.2), dimensions={0,2,3}, to_apply=scalar_add
}
ENTRY entry {
  p0 = f16[128,1,32,32]{1,3,2,0} parameter(0)
  p1 = f16[128,1,32,32]{3,2,1,0} parameter(1)
  loop_fusion = f16[128,1,32,32]{1,3,2,0} fusion(p0, p1), kind=kLoop, calls=mixed_input_layouts_computation
  reduce_fusion = f32[1]{0} fusion(loop_fusion), kind=kInput, calls=fused_reduce
  ROOT root = (f32[1]{0}, f16[128,1,32,32]{1,3,2,0}) tuple(reduce_fusion, loop_fusion)
}";
    let bitwidth = "e {
  a = s32[7,2]{1,0} parameter(0)
  b = s16[7]{0} bitcast(a)
}";
    let transposes = "$PREFIX
ENTRY entry {
  default_layout = f32[10,20,30,40]{3,2,1,0} parameter(0)
  non_default_layout = f32[10,20,30,40]{1,2,3,0} parameter(1)
  transpose_major_default = f32[10,30,20,40]{3,2,1,0} transpose(default_layout), dimensions={0,2,1,3}
  ROOT r = tuple(transpose_major_default)
}";
    let trivial_transposes = "$PREFIX
ENTRY entry {
  default_layout = f32[10,20,1,1]{3,2,1,0} parameter(0)
  transpose_minor_default = f32[10,20,1,1]{3,2,1,0} transpose(default_layout), dimensions={0,1,3,2}
  transpose_one_major_default = f32[1,20,10,1]{3,2,1,0} transpose(default_layout), dimensions={2,1,0,3}
  ROOT r = tuple(transpose_minor_default, transpose_one_major_default)
}";
    vec![
        r(
            "ShapesCompatibleForMultiOutputFusion_DifferentReduceDimensions",
            different_reduce_dims,
            "ShapesCompatibleForMultiOutputFusion",
            &["reduce_1", "reduce_2"],
            false.into(),
        ),
        r(
            "ShapesCompatibleForMultiOutputFusion_NoReductionToVector",
            no_reduction_to_vector,
            "ShapesCompatibleForMultiOutputFusion",
            &["fusion", "element_wise"],
            false.into(),
        ),
        r(
            "ProducerConsumerFusionReduceUnfriendlyLoopFusion",
            reduce_unfriendly,
            "IsProducerMultiOutputFusible",
            &["loop_fusion"],
            false.into(),
        ),
        r(
            "ProducerConsumerFusionReduceUnfriendlyLoopFusion",
            reduce_unfriendly,
            "IsFusibleAsMultiOutputFusionRoot",
            &["reduce_fusion"],
            true.into(),
        ),
        r(
            "ProducerConsumerFusionReduceUnfriendlyLoopFusion",
            reduce_unfriendly,
            "ShapesCompatibleForMultiOutputFusion",
            &["loop_fusion", "reduce_fusion"],
            true.into(),
        ),
        r(
            "GetSharedMemoryUsageVariadicReduction",
            variadic,
            "FusionInfoCache::GetSharedMemoryUsage",
            &["fusion"],
            (5 * 32 * (32 * 4 + 1)).into(),
        ),
        r(
            "MayCausePerformanceDropIfUnrolledLargerReduceWindowIsNotOk",
            larger_window,
            "MayCausePerformanceDropIfUnrolled",
            &["reduce_window_sum"],
            true.into(),
        ),
        r(
            "CustomFusionIsNotFusibleAsConsumer",
            custom,
            "IsFusibleAsMultiOutputFusionRoot",
            &["r"],
            false.into(),
        ),
        r(
            "IsPhysicallyTransposing_MixedLayoutProducerWithTrivialDim",
            trivial_dim,
            "IsPhysicallyTransposing",
            &["loop_fusion"],
            false.into(),
        ),
        r(
            "BitwidthChangingBitcastIsNotFusible",
            bitwidth,
            "IsProducerMultiOutputFusible",
            &["b"],
            false.into(),
        ),
        r(
            "TransposesMinorDimension",
            transposes,
            "TransposesMinorDimension",
            &["transpose_major_default"],
            false.into(),
        ),
        r(
            "TransposesMinorDimensionSkipTrivialDimensions",
            trivial_transposes,
            "TransposesMinorDimension",
            &["transpose_minor_default"],
            false.into(),
        ),
        r(
            "TransposesMinorDimensionSkipTrivialDimensions",
            trivial_transposes,
            "TransposesMinorDimension",
            &["transpose_one_major_default"],
            true.into(),
        ),
    ]
}

#[test]
fn more_gpu_fusible_test_expectations_match_xla() {
    for r in more_records() {
        assert_eq!(
            answer(&r).as_ref(),
            Ok(&r["expected"]),
            "{} {} {}",
            r["name"],
            r["function"],
            r["args"]
        );
    }
}
