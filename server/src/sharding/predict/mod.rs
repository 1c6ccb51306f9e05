//! The collectives XLA's SPMD partitioner will insert, predicted from a
//! module before partitioning (global shapes, `sharding=` on parameters,
//! constraints and results: JAX's before-optimizations dump, or StableHLO
//! with `mhlo.sharding`/`sdy.sharding` translated to HLO). Layouts are carried
//! forward from the written shardings through each op ([`ops`]); where an
//! op's operands disagree, or a written sharding differs from what reaches
//! it, the change needs a collective ([`reshard`]); a reduce or dot over a
//! split dimension needs an all-reduce of its partial results.
//!
//! This follows the partitioner's rules where they are fixed; where XLA
//! chooses by cost (which operand of a dot to gather) or propagation may
//! choose a different sharding than the one carried forward here, the
//! instruction is reported as not predicted, with why.

mod layout;
mod ops;
mod reshard;

pub use layout::{groups, Layout, Piece};
pub use reshard::Need;

use rustc_hash::FxHashMap;

use super::collective::{traffic, Traffic};
use super::mesh::{self, Mesh};
use crate::cost::collective::op::Op;
use crate::model::{ComputationRef, InstrId, Instruction, Module, Opcode};
use ops::Step;

/// A collective the partitioner will insert.
#[derive(Clone, Debug)]
pub struct Predicted {
    pub computation: String,
    /// The instruction that causes it.
    pub instruction: String,
    pub op: Op,
    pub groups: Vec<Vec<i64>>,
    /// The mesh axes the groups run along, when they follow whole axes.
    pub axes: Option<Vec<usize>>,
    /// "over axis 1 ('y') of the 2x4 mesh".
    pub over: String,
    /// The bytes of the collective's operand on each device.
    pub bytes: i64,
    pub traffic: Option<Traffic>,
    pub why: String,
}

/// An instruction whose partitioning is not predicted, and why.
#[derive(Clone, Debug)]
pub struct Unpredicted {
    pub computation: String,
    pub instruction: String,
    pub why: String,
}

/// What the partitioner will need, for one module.
#[derive(Clone, Debug, Default)]
pub struct Prediction {
    pub collectives: Vec<Predicted>,
    pub unpredicted: Vec<Unpredicted>,
    pub mesh: Option<Mesh>,
    pub devices: i64,
}

impl Prediction {
    /// The collectives caused by `instruction` of `computation`.
    pub fn at<'a>(
        &'a self,
        computation: &'a str,
        instruction: &'a str,
    ) -> impl Iterator<Item = &'a Predicted> + 'a {
        self.collectives
            .iter()
            .filter(move |p| p.computation == computation && p.instruction == instruction)
    }

    /// Why `instruction` is not predicted, if it is not.
    pub fn unpredicted_at(&self, computation: &str, instruction: &str) -> Option<&Unpredicted> {
        self.unpredicted
            .iter()
            .find(|u| u.computation == computation && u.instruction == instruction)
    }
}

/// How far [`Walk::wanted`] follows a result to the sharding written for it.
const MAX_WANTED_STEPS: usize = 8;

/// How deep calls are followed.
const MAX_CALL_DEPTH: usize = 8;

/// The layouts of a value: one per tuple element (one for an array);
/// `None` where it is not known.
type Value = Vec<Option<Layout>>;

/// Predicts the collectives of `module`, from its ENTRY computation (and the
/// computations it calls).
pub fn predict(module: &Module) -> Prediction {
    let mesh = mesh::of_module(module);
    let devices = match module.num_partitions() {
        n if n > 1 => n,
        _ => mesh.as_ref().map_or(1, Mesh::num_devices),
    };
    let mut walk = Walk {
        module,
        devices,
        mesh: mesh.clone(),
        out: Prediction {
            mesh,
            devices,
            ..Prediction::default()
        },
        users: FxHashMap::default(),
    };
    if devices > 1 {
        if let Some(entry) = module.entry_computation() {
            walk.computation(entry, None, 0);
        }
    }
    walk.out
}

struct Walk<'m> {
    module: &'m Module,
    devices: i64,
    mesh: Option<Mesh>,
    out: Prediction,
    /// The users of each instruction of the computation being walked.
    users: FxHashMap<u32, Vec<InstrId>>,
}

fn rank(instr: &Instruction) -> usize {
    instr.shape.as_array().map_or(0, |a| a.dims.len())
}

fn dims(instr: &Instruction) -> Vec<i64> {
    instr
        .shape
        .as_array()
        .map(|a| a.dims.clone())
        .unwrap_or_default()
}

fn bits(instr: &Instruction) -> i64 {
    instr.shape.element_bits().unwrap_or(32)
}

impl Walk<'_> {
    /// Walks `computation` with its parameters' layouts (`None` in ENTRY:
    /// their written shardings), returning its root's value.
    fn computation(
        &mut self,
        computation: ComputationRef<'_>,
        params: Option<&[Value]>,
        depth: usize,
    ) -> Value {
        let model = computation.model();
        // Each instruction's users, for `wanted` (restored after a call's walk).
        let mut users: FxHashMap<u32, Vec<InstrId>> = FxHashMap::default();
        for instr in &model.instructions {
            for t in instr.operands.iter().filter_map(|o| o.target) {
                let list = users.entry(t.0).or_default();
                if !list.contains(&instr.id) {
                    list.push(instr.id);
                }
            }
        }
        let callers_users = std::mem::replace(&mut self.users, users);
        let mut values: FxHashMap<u32, Value> = FxHashMap::default();
        let mut root = vec![None];
        for instr in &model.instructions {
            let operands: Vec<Option<&Value>> = instr
                .operands
                .iter()
                .map(|o| o.target.and_then(|t| values.get(&t.0)))
                .collect();
            let natural = self.natural(computation, instr, &operands, params, depth);
            let value = self.written(computation, instr, natural);
            if instr.is_root {
                root = value.clone();
            }
            values.insert(instr.id.0, value);
        }
        self.users = callers_users;
        root
    }

    /// The layout an instruction's operands give it, recording what it needs.
    fn natural(
        &mut self,
        computation: ComputationRef<'_>,
        instr: &Instruction,
        operands: &[Option<&Value>],
        params: Option<&[Value]>,
        depth: usize,
    ) -> Option<Value> {
        let devices = self.devices;
        let array = |k: usize| -> Option<&Layout> { operands.get(k)?.as_ref()?.first()?.as_ref() };
        let known = operands
            .iter()
            .all(|o| o.is_some_and(|v| v.iter().all(Option::is_some)));
        let one = |l: Option<Layout>| l.map(|l| vec![Some(l)]);
        match &instr.opcode {
            Opcode::Parameter => {
                let k = instr.parameter_number? as usize;
                match params {
                    Some(p) => p.get(k).cloned(),
                    None => None,
                }
            }
            Opcode::Constant | Opcode::Iota => one(Some(Layout::replicated(rank(instr), devices))),
            _ if !known => None,
            op if op.is_elementwise() => {
                let layouts: Vec<Layout> = (0..operands.len())
                    .filter_map(|k| array(k).cloned())
                    .collect();
                // Its own sharding when written (a StableHLO result's), else
                // the one written where it is used.
                let wanted = self
                    .written_layouts(computation, instr)
                    .and_then(|v| v.first().cloned().flatten())
                    .or_else(|| self.wanted(computation, instr));
                let carried = ops::elementwise(&layouts, wanted.as_ref())?;
                let bytes: Vec<i64> = (0..operands.len())
                    .map(|k| self.operand_bytes(computation, instr, k, array(k)))
                    .collect();
                self.record_steps(computation, instr, &carried.steps, |s| {
                    s.operand.and_then(|k| bytes.get(k).copied()).unwrap_or(0)
                });
                one(Some(carried.layout))
            }
            Opcode::Broadcast => {
                let d = instr.attrs().dimensions.clone().unwrap_or_default();
                one(ops::broadcast(array(0)?, &d, rank(instr)))
            }
            Opcode::Transpose => {
                let d = instr.attrs().dimensions.clone().unwrap_or_default();
                one(ops::transpose(array(0)?, &d))
            }
            Opcode::Reshape | Opcode::Bitcast => {
                let from = dims(computation.instruction(instr.operands[0].target?));
                let layout = ops::reshape(array(0)?, &from, &dims(instr));
                if layout.is_none() {
                    self.unpredicted(computation, instr, "a reshape that moves a split to a dimension that cannot hold it whole (XLA reshards around it)");
                }
                one(layout)
            }
            Opcode::Copy => one(array(0).cloned()),
            Opcode::CustomCall
                if operands.len() == 1 && operands[0].is_some_and(|v| v.len() == 1) =>
            {
                // A constraint, JAX's result marker: the value passes through.
                one(array(0).cloned())
            }
            Opcode::Reduce => {
                let d = instr.attrs().dimensions.clone().unwrap_or_default();
                let carried = ops::reduce(array(0)?, &d);
                let leaves = instr.shape.leaves();
                let bytes: i64 = leaves
                    .iter()
                    .map(|l| {
                        carried
                            .layout
                            .shard_bytes(&l.dims, l.element.bit_width().map_or(32, i64::from))
                    })
                    .sum();
                self.record_steps(computation, instr, &carried.steps, |_| bytes);
                Some(vec![Some(carried.layout); leaves.len().max(1)])
            }
            Opcode::Dot => {
                let dd = instr.attrs().dot.clone()?;
                match ops::dot(array(0)?, array(1)?, &dd) {
                    Ok(carried) => {
                        let bytes = carried.layout.shard_bytes(&dims(instr), bits(instr));
                        self.record_steps(computation, instr, &carried.steps, |_| bytes);
                        one(Some(carried.layout))
                    }
                    Err(why) => {
                        self.unpredicted(computation, instr, &why);
                        None
                    }
                }
            }
            Opcode::Tuple => Some(
                operands
                    .iter()
                    .map(|o| o.and_then(|v| v.first().cloned().flatten()))
                    .collect(),
            ),
            Opcode::GetTupleElement => {
                let index = instr.attrs().tuple_index? as usize;
                Some(vec![operands.first()?.as_ref()?.get(index)?.clone()])
            }
            Opcode::Call if depth < MAX_CALL_DEPTH => {
                let callee = instr.called.first().and_then(|c| self.module.resolve(c))?;
                let args: Vec<Value> = operands
                    .iter()
                    .map(|o| o.cloned().unwrap_or_default())
                    .collect();
                Some(self.computation(callee, Some(&args), depth + 1))
            }
            other => {
                self.unpredicted(
                    computation,
                    instr,
                    &format!("how XLA partitions `{}` is not modelled here", other.name()),
                );
                None
            }
        }
    }

    /// The value after the instruction's own `sharding=`: what reaches it is
    /// resharded to it.
    fn written(
        &mut self,
        computation: ComputationRef<'_>,
        instr: &Instruction,
        natural: Option<Value>,
    ) -> Value {
        let Some(written) = self.written_layouts(computation, instr) else {
            return natural.unwrap_or_else(|| vec![None]);
        };
        if instr.opcode == Opcode::Parameter {
            return written;
        }
        if let Some(natural) = &natural {
            let leaves = instr.shape.leaves();
            for (k, (from, to)) in natural.iter().zip(&written).enumerate() {
                let (Some(from), Some(to)) = (from, to) else {
                    continue;
                };
                let leaf = leaves.get(k);
                let shape = leaf.map(|l| l.dims.clone()).unwrap_or_default();
                let bits = leaf
                    .and_then(|l| l.element.bit_width())
                    .map_or(32, i64::from);
                let needs = reshard::reshard(from, to);
                // Each collective's operand: the array as the ones before it left it.
                let mut now = from.clone();
                let mut bytes = vec![];
                for need in &needs {
                    bytes.push(if need.op == Op::CollectivePermute {
                        to.shard_bytes(&shape, bits)
                    } else {
                        now.shard_bytes(&shape, bits)
                    });
                    now = now.after(need);
                }
                let steps: Vec<Step> = needs
                    .into_iter()
                    .map(|need| Step {
                        why: reshard_words(&need, "the sharding written here"),
                        need,
                        operand: Some(0),
                    })
                    .collect();
                self.record_steps(computation, instr, &steps, |s| {
                    steps
                        .iter()
                        .position(|t| std::ptr::eq(t, s))
                        .and_then(|k| bytes.get(k).copied())
                        .unwrap_or(0)
                });
            }
        }
        written
    }

    /// The layout written where `instr`'s result is used: its only user,
    /// followed through pass-through ops (elementwise with one operand, copy,
    /// a one-operand custom-call, tuple and the get-tuple-element that reads
    /// the element back) to the first `sharding=`.
    fn wanted(&self, computation: ComputationRef<'_>, instr: &Instruction) -> Option<Layout> {
        let mut at = instr;
        let mut element: Option<usize> = None;
        for _ in 0..MAX_WANTED_STEPS {
            let [user] = self.users.get(&at.id.0).map(Vec::as_slice)? else {
                return None;
            };
            let user = computation.instruction(*user);
            if let Some(value) = self.written_layouts(computation, user) {
                let k = match user.opcode {
                    Opcode::Tuple => user.operands.iter().position(|o| o.target == Some(at.id))?,
                    _ => 0,
                };
                return value.get(k).cloned().flatten();
            }
            match &user.opcode {
                Opcode::Tuple => {
                    element = user.operands.iter().position(|o| o.target == Some(at.id));
                }
                Opcode::GetTupleElement => {
                    if element != user.attrs().tuple_index.map(|t| t as usize) {
                        return None;
                    }
                    element = None;
                }
                Opcode::Copy | Opcode::CustomCall if user.operands.len() == 1 => {}
                op if op.is_elementwise() && user.operands.len() == 1 => {}
                _ => return None,
            }
            at = user;
        }
        None
    }

    /// The layouts of the instruction's `sharding=`, one per tuple element.
    fn written_layouts(
        &self,
        computation: ComputationRef<'_>,
        instr: &Instruction,
    ) -> Option<Value> {
        let text = computation.src(instr.attribute("sharding")?.value_range);
        let sharding = super::parse(text).ok()?;
        let leaves = instr.shape.leaves();
        let value: Value = leaves
            .iter()
            .enumerate()
            .map(|(k, leaf)| {
                let element = sharding.element(k)?.v2()?;
                Layout::of(&element, leaf.dims.len(), self.devices)
            })
            .collect();
        Some(value)
    }

    fn operand_bytes(
        &self,
        computation: ComputationRef<'_>,
        instr: &Instruction,
        k: usize,
        layout: Option<&Layout>,
    ) -> i64 {
        let (Some(layout), Some(target)) = (layout, instr.operands.get(k).and_then(|o| o.target))
        else {
            return 0;
        };
        let operand = computation.instruction(target);
        layout.shard_bytes(&dims(operand), bits(operand))
    }

    fn unpredicted(&mut self, computation: ComputationRef<'_>, instr: &Instruction, why: &str) {
        self.out.unpredicted.push(Unpredicted {
            computation: computation.model().name.to_string(),
            instruction: instr.name.to_string(),
            why: why.to_string(),
        });
    }

    fn record_steps(
        &mut self,
        computation: ComputationRef<'_>,
        instr: &Instruction,
        steps: &[Step],
        bytes: impl Fn(&Step) -> i64,
    ) {
        for step in steps {
            let groups = layout::groups(&step.need.pieces, self.devices);
            let n = groups.first().map_or(1, |g| g.len() as i64);
            let b = bytes(step);
            let axes = self.mesh.as_ref().and_then(|m| m.axes_of_groups(&groups));
            let over = match (&self.mesh, &axes) {
                (Some(m), Some(a)) => m.axes_text(a),
                (Some(m), None) => m
                    .sub_axes_of_groups(&groups)
                    .map(|p| m.sub_axes_text(&p))
                    .unwrap_or_else(|| format!("groups of {n} devices")),
                (None, _) => format!("groups of {n} devices"),
            };
            let traffic = if step.need.op == Op::CollectivePermute {
                Some(Traffic {
                    sends: b,
                    receives: b,
                    rule: format!(
                        "each device sends its {} tile to the device that holds it next",
                        crate::units::signed_bytes(b)
                    ),
                })
            } else {
                traffic(step.need.op, b, n, &[])
            };
            let why = step.why.clone();
            self.out.collectives.push(Predicted {
                computation: computation.model().name.to_string(),
                instruction: instr.name.to_string(),
                op: step.need.op,
                groups,
                axes,
                over,
                bytes: b,
                traffic,
                why,
            });
        }
    }
}

/// Why a reshard needs its collective: "the sharding written here wants dim
/// 0 whole".
pub(crate) fn reshard_words(need: &Need, wanted_by: &str) -> String {
    match (need.op, need.to_dim) {
        (Op::AllToAll, Some(to)) => format!(
            "{wanted_by} moves the split of dim {} to dim {to}",
            need.dim
        ),
        (Op::AllGather, _) => format!("{wanted_by} wants dim {} whole", need.dim),
        _ => format!(
            "{wanted_by} splits dim {} over other devices: each tile moves",
            need.dim
        ),
    }
}

/// "all-reduce over axis 1 ('y') of the 2x4 mesh, 48 B per device: the
/// contracting dim ... is split".
pub fn text(p: &Predicted) -> String {
    let moved = p
        .traffic
        .as_ref()
        .map(|t| {
            format!(
                ", each device sends {}",
                crate::units::signed_bytes(t.sends)
            )
        })
        .unwrap_or_default();
    format!("{} over {}{moved}: {}", p.op.name(), p.over, p.why)
}
