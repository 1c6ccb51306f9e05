//! XLA's `MatmulInterpolator` (`matmul_interpolator.cc`): a GEMM's time read
//! off measured throughputs, the estimate XLA's `SolLatencyEstimator` gives a
//! dot, a cuBLASLt call or a Triton GEMM fusion.
//!
//! Why a second estimate beside [`super::gemm`]'s: it is what the measurements
//! say (XLA's H100 table peaks near 800 TFLOP/s in bf16, where the tensor cores'
//! dense peak is 989), and what XLA's latency-hiding scheduler sees.
//!
//! * The default table ([`estimate`]): XLA's `default_matmul_perf_table.txtpb`,
//!   kept as `server/data/matmul_perf_table.txt` (origin in the README beside
//!   it), one section per device profile (`sm_90`; `sm_100_<last word of the
//!   device name>` for compute capability 10.0, here `sm_100_B200`). Per type
//!   combination (`bf16xbf16->bf16`), a [`WeightedAverage`] over `(b, m, k, n)`
//!   on the measured power-of-two grid (b 1..4, the rest 256..4096); the
//!   combinations the table lacks use the bf16 measurements with `m`, `k`, `n`
//!   doubled, looked up by the GEMM's extents in bytes of its output type.
//! * A profile list ([`Interpolator::from_profiles`], XLA's
//!   `xla_gpu_experimental_matmul_perf_table_path`): nearest neighbour over
//!   extents in bytes of the output type, each measurement's clock cycles at the
//!   device's clock.
//!
//! Supported instructions (`GetInterpolationSpec`): a dot, a cuBLASLt call
//! (`IsCublasLtGemm`: not the legacy `__cublas$gemm`) and a Triton GEMM fusion
//! with one dot; anything else is an `Err`, as is a device without a table.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::duration::Duration;
use super::gemm::{Gemm, GemmKind};
use super::interpolator::{NearestNeighbour, WeightedAverage};
use crate::device::{ComputeCapability, Device};
use crate::model::{ComputationRef, Instruction, Module, PrimitiveType};

/// XLA's default matmul perf table in this project's format.
const TABLE: &str = include_str!("../../data/matmul_perf_table.txt");

/// `InterpolationSpecification`: the GEMM's extents, `m`, `k`, `n` in bytes of
/// the output type (`ExtractDotSpec`), and its types.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub b: i64,
    pub m: i64,
    pub k: i64,
    pub n: i64,
    pub lhs: PrimitiveType,
    pub rhs: PrimitiveType,
    pub out: PrimitiveType,
}

fn byte_size(t: &PrimitiveType) -> i64 {
    // `ByteSizeOfPrimitiveType`: sub-byte types count one byte.
    i64::from(t.bit_width().unwrap_or(8).div_ceil(8)).max(1)
}

impl Spec {
    /// `GetInterpolationSpec`: `Err` for what the interpolator does not cover.
    pub fn of(gemm: &Gemm) -> Result<Spec, String> {
        match gemm.kind {
            GemmKind::Dot
            | GemmKind::CublasLt
            | GemmKind::TritonGemm
            | GemmKind::TritonNestedGemm => {}
            GemmKind::CublasLegacy | GemmKind::Cudnn => {
                return Err(format!(
                    "Unsupported instruction: the matmul interpolator covers dots, cuBLASLt \
                     calls and Triton GEMM fusions, not {:?}",
                    gemm.kind
                ))
            }
        }
        let (b, m, n, k) = gemm.bmnk();
        let bytes = byte_size(&gemm.out.element);
        Ok(Spec {
            b,
            m: m.saturating_mul(bytes),
            k: k.saturating_mul(bytes),
            n: n.saturating_mul(bytes),
            lhs: gemm.lhs.element.clone(),
            rhs: gemm.rhs.element.clone(),
            out: gemm.out.element.clone(),
        })
    }

    fn point(&self) -> [i64; 4] {
        [self.b, self.m, self.k, self.n]
    }

    /// `MatmulDTypeKey::KeyString`: `lhsxrhs->out`.
    fn key(&self) -> String {
        format!("{}x{}->{}", self.lhs, self.rhs, self.out)
    }
}

/// `2 * b * m * k * n` of a point (a multiply and an add per product term).
fn product(point: &[i64; 4]) -> i64 {
    point.iter().fold(2i64, |a, &x| a.saturating_mul(x))
}

/// One measured GEMM of a profile list (`HloInstructionProfile`): the dot and
/// how many clock cycles it took.
#[derive(Clone, Debug)]
pub struct Profile {
    pub gemm: Gemm,
    pub clock_cycles: i64,
}

/// How an interpolator reads its measurements.
#[derive(Debug)]
enum Source {
    /// A profile list: nearest neighbour over flops per second.
    Profiles(NearestNeighbour<4>),
    /// The default table: per type combination, and the bf16 fallback.
    Table {
        per_type: HashMap<String, WeightedAverage<4>>,
        fallback: WeightedAverage<4>,
    },
}

/// `MatmulInterpolator`.
#[derive(Debug)]
pub struct Interpolator {
    source: Source,
}

/// One device's section of the table: type names and `(b, m, n, k, flops per type)`.
struct Section {
    types: Vec<String>,
    rows: Vec<([i64; 4], Vec<Option<f64>>)>,
}

/// The table, parsed once.
fn sections() -> &'static Result<HashMap<String, Section>, String> {
    static SECTIONS: OnceLock<Result<HashMap<String, Section>, String>> = OnceLock::new();
    SECTIONS.get_or_init(|| parse_table(TABLE))
}

fn parse_table(text: &str) -> Result<HashMap<String, Section>, String> {
    let mut out: HashMap<String, Section> = HashMap::new();
    let mut current: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || format!("matmul_perf_table.txt:{}: cannot read {line:?}", n + 1);
        if let Some(name) = line.strip_prefix("device ") {
            current = Some(name.to_string());
            out.insert(
                name.to_string(),
                Section {
                    types: vec![],
                    rows: vec![],
                },
            );
            continue;
        }
        let section = current
            .as_ref()
            .and_then(|c| out.get_mut(c))
            .ok_or_else(bad)?;
        if let Some(types) = line.strip_prefix("types ") {
            section.types = types.split_whitespace().map(str::to_string).collect();
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != 4 + section.types.len() {
            return Err(bad());
        }
        let dim = |i: usize| fields[i].parse::<i64>().map_err(|_| bad());
        let dims = [dim(0)?, dim(1)?, dim(2)?, dim(3)?];
        let flops = fields[4..]
            .iter()
            .map(|f| match *f {
                "-" => Ok(None),
                f => f.parse::<f64>().map(Some).map_err(|_| bad()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        section.rows.push((dims, flops));
    }
    Ok(out)
}

/// `HloOpProfiles::GetDeviceSpecificProfileName`: `sm_90`; on compute
/// capability 10.0, `sm_100_` and the device name's last word (`B200`).
pub fn profile_name(device: &Device) -> Result<String, String> {
    match &device.compute_capability {
        ComputeCapability::Cuda { major, minor } => {
            let name = format!("sm_{major}{minor}");
            if name == "sm_100" {
                let last = device.name.split(' ').next_back().unwrap_or("");
                return Ok(format!("{name}_{last}"));
            }
            Ok(name)
        }
        ComputeCapability::Rocm { gcn_arch_name } => {
            Ok(gcn_arch_name.split(':').next().unwrap_or("").to_string())
        }
        ComputeCapability::Unknown => Err("Cannot find key: <unknown>".into()),
    }
}

impl Interpolator {
    /// `MatmulInterpolator::Create(device_info)`: XLA's default table for the
    /// device's profile (the section name compared without case, since our
    /// presets' names are lower case).
    pub fn for_device(device: &Device) -> Result<Arc<Interpolator>, String> {
        let key = profile_name(device)?;
        static CACHE: OnceLock<Mutex<HashMap<String, Arc<Interpolator>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(hit) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(hit);
        }
        let sections = sections().as_ref().map_err(Clone::clone)?;
        let section = sections
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(&key))
            .map(|(_, s)| s)
            .ok_or_else(|| format!("Cannot find key: {key}"))?;
        let built = Arc::new(Interpolator::from_section(section));
        if let Ok(mut c) = cache.lock() {
            c.insert(key, built.clone());
        }
        Ok(built)
    }

    fn from_section(section: &Section) -> Interpolator {
        let mut per_type: HashMap<String, WeightedAverage<4>> = HashMap::new();
        let mut fallback = WeightedAverage::new([4, 8192, 8192, 8192], [1, 512, 512, 512]);
        for ([b, m, n, k], flops) in &section.rows {
            for (t, f) in section.types.iter().zip(flops) {
                let Some(f) = *f else { continue };
                let point = [*b, *m, *k, *n];
                per_type
                    .entry(t.clone())
                    .or_insert_with(|| {
                        WeightedAverage::new([4, 4096, 4096, 4096], [1, 256, 256, 256])
                    })
                    .add(point, f);
                if t == "bf16xbf16->bf16" {
                    fallback.add([*b, m * 2, k * 2, n * 2], f);
                }
            }
        }
        Interpolator {
            source: Source::Table { per_type, fallback },
        }
    }

    /// `MatmulInterpolator::Create(profiles, device_info)`: each measured GEMM's
    /// flops per second at the device's clock (cycles over GHz, truncated to
    /// whole nanoseconds, the rate to an integer, as XLA's types do).
    pub fn from_profiles(profiles: &[Profile], device: &Device) -> Result<Interpolator, String> {
        let mut nn = NearestNeighbour::default();
        for p in profiles {
            if p.gemm.kind != GemmKind::Dot {
                return Err("Expected dot".into());
            }
            let spec = Spec::of(&p.gemm)?;
            let fmas = product(&spec.point());
            // `clock_cycles() / clock_rate_ghz()`: an int64 over a float,
            // divided in single precision.
            let runtime_ns = (p.clock_cycles as f32 / device.clock_rate_ghz as f32) as i64;
            if runtime_ns <= 0 {
                return Err("a profile ran no time".into());
            }
            nn.add(spec.point(), (fmas as f64 * 1e9 / runtime_ns as f64) as i64);
        }
        Ok(Interpolator {
            source: Source::Profiles(nn),
        })
    }

    /// `EstimatedRuntime` of a recognized GEMM.
    pub fn estimated_runtime(&self, gemm: &Gemm) -> Result<Duration, String> {
        let spec = Spec::of(gemm)?;
        let seconds = match &self.source {
            Source::Table { per_type, fallback } => match per_type.get(&spec.key()) {
                Some(table) => {
                    // `PreciseFlopsRetrieval`: back to element extents.
                    let bytes = byte_size(&spec.out);
                    let point = [spec.b, spec.m / bytes, spec.k / bytes, spec.n / bytes];
                    let flops = product(&point);
                    flops as f64 / table.eval(&point)?
                }
                None => product(&spec.point()) as f64 / fallback.eval(&spec.point())?,
            },
            Source::Profiles(nn) => {
                let rate = nn.eval(&spec.point()).ok_or("no profiles")?;
                product(&spec.point()) as f64 / rate as f64
            }
        };
        if !seconds.is_finite() || seconds < 0.0 {
            return Err(format!("no finite estimate ({seconds} s)"));
        }
        Ok(Duration::from_secs_f64(seconds))
    }

    /// [`Interpolator::estimated_runtime`] of `instr` of `computation`.
    pub fn estimate(
        &self,
        module: &Module,
        computation: ComputationRef<'_>,
        instr: &Instruction,
    ) -> Result<Duration, String> {
        let gemm = Gemm::of(module, computation, instr).ok_or_else(|| {
            format!(
                "Unsupported instruction: {} is not a dot, a cuBLASLt call or a Triton GEMM fusion",
                instr.name
            )
        })?;
        self.estimated_runtime(&gemm)
    }
}

/// The time XLA's `MatmulInterpolator` with its default table gives `instr`
/// (a dot, a cuBLASLt call, a `__triton_gemm` or `__triton_nested_gemm_fusion`
/// fusion) on `device`; `Err` with XLA's reason when the instruction is not
/// supported or the device has no table (only `sm_90` and `sm_100_B200` do).
pub fn estimate(
    module: &Module,
    computation: ComputationRef<'_>,
    instr: &Instruction,
    device: &Device,
) -> Result<Duration, String> {
    Interpolator::for_device(device)?.estimate(module, computation, instr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model;

    #[test]
    fn the_table_parses_and_has_both_devices() {
        let s = sections().as_ref().unwrap();
        for name in ["sm_90", "sm_100_B200"] {
            let section = &s[name];
            assert_eq!(section.rows.len(), 375, "{name}");
            assert!(section.types.contains(&"bf16xbf16->bf16".to_string()));
        }
        assert!(parse_table("1 2 3 4").is_err());
    }

    #[test]
    fn a_bf16_gemm_on_h100_and_devices_without_a_table() {
        let text = "ENTRY e {\n a = bf16[4096,4096] parameter(0)\n b = bf16[4096,4096] parameter(1)\n ROOT d = bf16[4096,4096] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
        let file = model::parse_hlo(text);
        let module = &file.modules[0];
        let entry = module.entry_computation().unwrap();
        let root = entry.model().root_instruction().unwrap();
        let t = estimate(module, entry, root, &Device::h100()).unwrap();
        // A measured point: about 0.7 PFLOP/s.
        let tflops = 2.0 * 4096f64.powi(3) / t.as_nanos_f64() / 1000.0;
        assert!((500.0..900.0).contains(&tflops), "{tflops}");
        let e = estimate(module, entry, root, &Device::a100()).unwrap_err();
        assert_eq!(e, "Cannot find key: sm_80");
        let p = entry.model().instruction_by_name("a").unwrap();
        assert!(estimate(module, entry, p, &Device::h100()).is_err());
        assert_eq!(profile_name(&Device::b200()).unwrap(), "sm_100_b200");
        assert!(estimate(module, entry, root, &Device::b200()).is_ok());
    }
}
