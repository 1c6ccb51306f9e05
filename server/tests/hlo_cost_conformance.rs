//! XLA's `GpuHloCostAnalysis` tests (`gpu_hlo_cost_analysis_test.cc`; 26
//! records in `tests/data/conformance/xla/hlo_cost_analysis.jsonl`) against
//! `hlo_lsp::cost::hlo_cost`. Each record's module is analyzed as the test
//! visits its ENTRY computation, with the test's options (and op profile), and
//! every number it expects is compared exactly. The number that pass may only go
//! up: `PASSING` is a floor, and every record that fails is printed with what is
//! off.

use hlo_lsp::cost::hlo_cost::{self, InstructionCost, Options};
use hlo_lsp::cost::profile::Profile;
use hlo_lsp::model::{self, ComputationRef, Instruction, Module};
use serde_json::Value;

/// Records that must pass (a floor: raise it when more pass).
const PASSING: usize = 26;

fn records() -> Vec<Value> {
    crate::conformance_support::xla_records("hlo_cost_analysis.jsonl")
}

/// The record's op profile (`"clamp/F32": 7`) as a table of `(opcode, type, cycles)`.
fn profile_entries(record: &Value) -> Vec<(String, String, i64)> {
    record["fixture_info"]["hlo_op_profile"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| {
                    let (op, ty) = k.split_once('/')?;
                    Some((op.to_string(), ty.to_lowercase(), v.as_i64()?))
                })
                .collect()
        })
        .unwrap_or_default()
}

struct Case<'a> {
    module: &'a Module,
    entry: ComputationRef<'a>,
    options: Options<'a>,
}

impl<'a> Case<'a> {
    fn cost(&self, instr: &Instruction) -> InstructionCost {
        hlo_cost::analyze_with(self.module, self.entry, instr, &self.options)
    }

    fn instr(&self, name: &str) -> Result<&'a Instruction, String> {
        if name == "_" {
            return self
                .entry
                .model()
                .root_instruction()
                .ok_or("no root".into());
        }
        self.entry
            .model()
            .instruction_by_name(name)
            .ok_or_else(|| format!("no instruction {name}"))
    }

    /// `flop_count()` / `bytes_accessed()` of the analysis: the sums over the
    /// entry computation's instructions.
    fn totals(&self) -> (i64, i64) {
        self.entry
            .model()
            .instructions
            .iter()
            .map(|i| self.cost(i))
            .fold((0, 0), |(f, b), c| {
                (f + c.xla_flop_count(), b + c.bytes_accessed)
            })
    }
}

/// A fused instruction named in a key: `fused_parameter(k)`,
/// `fused_parameter(k)->users()[0]`, `fused_expression_root()`.
fn fused_index(module: &Module, fusion: &Instruction, what: &str) -> Result<usize, String> {
    let fused = module
        .called_computation(fusion, "calls")
        .ok_or("not a fusion")?;
    let body = fused.model();
    if what == "fused_expression_root()" {
        return body.root.map(|r| r.index()).ok_or("no root".into());
    }
    let k: usize = what
        .strip_prefix("fused_parameter(")
        .and_then(|r| r.split(')').next())
        .and_then(|k| k.parse().ok())
        .ok_or_else(|| format!("cannot read {what}"))?;
    let param = body.parameter(k).ok_or("no such parameter")?;
    if what.ends_with("->users()[0]") {
        let user = body.users(param.id).first().ok_or("no user")?;
        return Ok(user.index());
    }
    Ok(param.id.index())
}

fn check(key: &str, got: f64, want: f64) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{key}: got {got}, expected {want}"))
    }
}

fn run(record: &Value) -> Result<(), String> {
    let text = record["hlo"].as_str().ok_or("no hlo")?;
    let file = model::parse_hlo(text);
    let module = file.modules.first().ok_or("no module")?;
    let entry = module.entry_computation().ok_or("no entry")?;
    let entries = profile_entries(record);
    let table: Vec<(&str, &str, i64)> = entries
        .iter()
        .map(|(o, t, c)| (o.as_str(), t.as_str(), *c))
        .collect();
    let count_multiple = record["fixture_info"]["cost_analysis_options"]
        ["count_multiple_input_accesses"]
        .as_bool()
        .unwrap_or(true);
    let options = Options {
        count_multiple_input_accesses: count_multiple,
        profile: if table.is_empty() {
            Profile::SM_86
        } else {
            Profile::new(&table)
        },
    };
    let case = Case {
        module,
        entry,
        options,
    };
    let target = record["target"].as_str().unwrap_or("_");
    let target_name = target.split([' ', ',']).next().unwrap_or("_");
    let expected = record["expected"].as_object().ok_or("no expectations")?;
    for (key, want) in expected {
        let want = want.as_f64().ok_or_else(|| format!("{key} is no number"))?;
        let instr = || case.instr(target_name);
        let got: f64 = if let Some(k) = key
            .strip_prefix("operand_bytes_accessed[")
            .and_then(|r| r.strip_suffix(']'))
        {
            let k: usize = k.parse().map_err(|_| format!("bad key {key}"))?;
            *case
                .cost(instr()?)
                .operand_bytes
                .get(k)
                .ok_or("no such operand")? as f64
        } else if let Some(name) = key
            .strip_prefix("flop_count(")
            .and_then(|r| r.strip_suffix(')'))
        {
            case.cost(case.instr(name)?).xla_flop_count() as f64
        } else if let Some(inner) = key
            .strip_prefix("IrSize(")
            .and_then(|r| r.strip_suffix(')'))
        {
            let fusion = instr()?;
            let k = fused_index(module, fusion, inner)?;
            let cost = case.cost(fusion);
            let fused = cost.fused.ok_or("not analyzed as a fusion")?;
            *fused.ir_size.get(k).ok_or("no such instruction")? as f64
        } else if let Some(pair) = key
            .strip_prefix("CommonElementwiseUtilization(")
            .and_then(|r| r.strip_suffix(')'))
        {
            let (a, b) = pair.split_once(", ").ok_or("two arguments")?;
            let fusion = instr()?;
            let (a, b) = (
                fused_index(module, fusion, a)?,
                fused_index(module, fusion, b)?,
            );
            let fused = case.cost(fusion).fused.ok_or("not analyzed as a fusion")?;
            f64::from(fused.common(a, b))
        } else {
            match key.as_str() {
                "output_bytes_accessed" => case.cost(instr()?).output_bytes as f64,
                "bytes_accessed" => case.cost(instr()?).bytes_accessed as f64,
                "flop_count" => case.cost(instr()?).xla_flop_count() as f64,
                "IrSize" => case.cost(instr()?).ir_size as f64,
                "BytesTransferred" => case.cost(instr()?).bytes_transferred as f64,
                "module.flop_count" => case.totals().0 as f64,
                "module.bytes_accessed" => case.totals().1 as f64,
                other => return Err(format!("no check for {other}")),
            }
        };
        check(key, got, want)?;
    }
    Ok(())
}

#[test]
fn gpu_hlo_cost_analysis_records_match_xla() {
    let records = records();
    assert_eq!(records.len(), 26);
    crate::conformance_support::run_with_floor(&records, PASSING, run);
}
