//! What the coalescing analysis looks at: one fusion (its fused computation in the
//! analysis view) and the tensors it reads, with their element types and layouts.
//!
//! An instruction that is not a fusion is treated as a fusion of that one op, as
//! XLA's tiled coalescing tests do with an ENTRY ROOT `transpose`: its operands
//! become the parameters of a synthetic one-instruction computation.

use crate::analysis::{self, graph, Node, OpInfo};
use crate::model::{self, ComputationRef, Instruction};

/// The analysis view the subject's computation lives in: the caller's (a fusion's
/// fused computation, shared with the hover's cached maps) or its own (one op).
pub enum View<'a> {
    Borrowed(&'a analysis::Module<'a>),
    Owned(Box<analysis::Module<'static>>),
}

impl<'a> View<'a> {
    pub fn get(&self) -> &analysis::Module<'a> {
        match self {
            View::Borrowed(m) => m,
            View::Owned(m) => m,
        }
    }
}

/// One tensor the subject reads: operand `index` of the fusion.
#[derive(Clone, Debug)]
pub struct Operand {
    pub index: usize,
    /// The operand's name in the calling computation (without `%`), or `#k`.
    pub name: String,
    /// Its shape as written (element type and layout), from the calling computation.
    pub shape: model::Shape,
    /// `parameter(index)` of the fused computation: node index and name.
    pub parameter: Option<(usize, String)>,
    /// That parameter's shape, when its extents are not the operand's (a call the
    /// model warns about, `call-shape-mismatch`): the read maps index the parameter,
    /// so they say nothing about this operand's memory.
    pub declared_otherwise: Option<model::Shape>,
}

impl Operand {
    /// The array shape, if the operand is an array.
    pub fn array(&self) -> Option<&model::ArrayShape> {
        self.shape.as_array()
    }

    /// Bits per element (`E(n)` of the layout wins), if known.
    pub fn element_bits(&self) -> Option<i64> {
        self.shape.element_bits()
    }

    /// The shape as the analysis sees it (extents and layout).
    pub fn analysis_shape(&self) -> Option<analysis::ArrayShape> {
        analysis::view::shape(&self.shape).as_array().cloned()
    }

    /// `f32[100,200]{0,1}`.
    pub fn shape_text(&self) -> String {
        self.shape.to_string()
    }
}

/// The fusion (or one-op fusion) under analysis.
pub struct Subject<'a> {
    view: View<'a>,
    /// The fused computation (index in the view).
    pub computation: usize,
    /// The fusion instruction's name (or the op's).
    pub name: String,
    /// `kind=` of a fusion (`kLoop`, `kInput`, `kCustom`), `None` for one op.
    pub fusion_kind: Option<String>,
    /// `backend_config.fusion_backend_config.kind` (`__triton`, ...).
    pub backend_kind: Option<String>,
    pub operands: Vec<Operand>,
    /// Bits per element of each node's (first) array output, by node index.
    pub node_bits: Vec<Option<i64>>,
    /// True when the subject is one op viewed as a fusion.
    pub one_op: bool,
    /// Tile sizes per output from `output_tiles` in the backend_config (a
    /// malformed config counts as none: the tiling diagnostics report it).
    pub output_tiles: Option<Vec<Vec<i64>>>,
}

impl<'a> Subject<'a> {
    pub fn view(&self) -> &analysis::Module<'a> {
        self.view.get()
    }

    /// The fused computation's nodes.
    pub fn nodes(&self) -> &[Node] {
        &self.view().computation(self.computation).nodes
    }

    pub fn graph(&self) -> &graph::Computation {
        self.view().computation(self.computation)
    }

    /// The subject for `instruction` of computation `computation` of `module`,
    /// whose analysis view is `view` (`analysis::view::borrowed(module)` or the
    /// server's cached one). A fusion whose computation cannot be resolved is an
    /// error; any other instruction is a one-op fusion.
    pub fn new(
        module: &model::Module,
        view: &'a analysis::Module<'a>,
        computation: ComputationRef<'_>,
        instruction: &Instruction,
    ) -> Result<Subject<'a>, String> {
        let operands = caller_operands(computation, instruction);
        if instruction.opcode.name() == "fusion" {
            let fused = module
                .called_computation(instruction, "calls")
                .ok_or_else(|| format!("fusion {} calls no known computation", instruction.name))?;
            let mut operands = operands;
            for op in &mut operands {
                let parameter = fused.model().parameter(op.index);
                op.parameter = parameter.map(|p| (p.id.index(), p.name.to_string()));
                // A shape that did not parse has its own error where it is written.
                let invalid = |s: &model::Shape| matches!(s, model::Shape::Invalid);
                op.declared_otherwise = parameter
                    .filter(|p| !invalid(&p.shape) && !invalid(&op.shape))
                    .filter(|p| !p.shape.same_extents(&op.shape))
                    .map(|p| model::Shape::clone(&p.shape));
            }
            let attrs = instruction.attrs();
            let backend_kind = attrs
                .backend_config()
                .and_then(|c| c.pointer("/fusion_backend_config/kind").cloned())
                .and_then(|k| k.as_str().map(str::to_string));
            let output_tiles = crate::tiling::config::output_tiles(computation, instruction)
                .and_then(Result::ok)
                .map(|t| t.sizes);
            return Ok(Subject {
                output_tiles,
                view: View::Borrowed(view),
                computation: fused.id.index(),
                name: instruction.name.to_string(),
                fusion_kind: attrs.fusion_kind.as_deref().map(str::to_string),
                backend_kind,
                node_bits: fused
                    .model()
                    .instructions
                    .iter()
                    .map(|i| i.shape.element_bits())
                    .collect(),
                operands,
                one_op: false,
            });
        }
        let node = view
            .get(computation.id.index())
            .and_then(|c| c.nodes.get(instruction.id.index()))
            .ok_or_else(|| format!("{} has no analysis view", instruction.name))?;
        Ok(one_op(node, instruction, operands))
    }
}

/// The operands of `instruction` as the caller writes them.
fn caller_operands(computation: ComputationRef<'_>, instruction: &Instruction) -> Vec<Operand> {
    (0..instruction.operands.len())
        .map(|k| caller_operand(computation, instruction, k))
        .collect()
}

/// Operand `k` of `instruction` as the caller writes it: its name and shape.
pub fn caller_operand(
    computation: ComputationRef<'_>,
    instruction: &Instruction,
    k: usize,
) -> Operand {
    let target = instruction.operands[k]
        .target
        .map(|t| computation.instruction(t));
    Operand {
        index: k,
        name: target.map_or_else(|| format!("#{k}"), |t| t.name.to_string()),
        shape: computation
            .operand_shape(instruction, k)
            .cloned()
            .unwrap_or(model::Shape::Invalid),
        parameter: None,
        declared_otherwise: None,
    }
}

/// A computation of `parameter(k)` for each operand followed by the op itself.
fn one_op<'a>(node: &Node, instruction: &Instruction, mut operands: Vec<Operand>) -> Subject<'a> {
    let mut nodes: Vec<Node> = operands
        .iter_mut()
        .map(|op| {
            let name = op.name.clone();
            op.parameter = Some((op.index, name.clone()));
            let mut p = Node::new(
                name,
                OpInfo::new("parameter", analysis::view::shape(&op.shape), vec![]),
                vec![],
            );
            p.parameter_number = Some(op.index);
            p
        })
        .collect();
    let mut root = node.clone();
    root.operands = (0..operands.len()).collect();
    // Called computations belong to the caller's module; the op's own maps do
    // not need them (a reduce's reducer does not change its indexing).
    root.called.clear();
    nodes.push(root);
    let mut node_bits: Vec<Option<i64>> = operands.iter().map(Operand::element_bits).collect();
    node_bits.push(instruction.shape.element_bits());
    let root_index = nodes.len() - 1;
    let computation = graph::Computation {
        name: format!("{}.one_op", instruction.name),
        nodes,
        root: root_index,
    };
    Subject {
        view: View::Owned(Box::new(analysis::Module::new(vec![computation], 0))),
        computation: 0,
        name: instruction.name.to_string(),
        fusion_kind: None,
        backend_kind: None,
        operands,
        node_bits,
        one_op: true,
        output_tiles: None,
    }
}
