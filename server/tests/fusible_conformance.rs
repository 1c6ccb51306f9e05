//! XLA's fusibility tests (`gpu_fusible_test.cc`, 88 records in
//! `tests/data/conformance/xla/fusible.jsonl`) against `hlo_lsp::fusible`: every
//! record runs through the function it names, with its instruction arguments, on its
//! device, and must give XLA's answer.

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

fn records() -> Vec<Value> {
    let path = format!(
        "{}/../tests/data/conformance/xla/fusible.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What `record` asks, answered by the library (or why it cannot be asked).
fn answer(record: &Value) -> Result<Value, String> {
    let text = record["hlo"].as_str().unwrap();
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
