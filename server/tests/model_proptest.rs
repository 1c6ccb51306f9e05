//! Building the model never panics and every range it reports lies inside the text,
//! on character boundaries, whatever random mutations do to a real sample.

use hlo_lsp::model;
use proptest::prelude::*;

const SAMPLES: &[&str] = &[
    include_str!("../../tests/data/samples/xla/xla__tools__print_indexing_test.hlo"),
    include_str!("../../tests/data/samples/xla/xla__backends__gpu__tests__pdl.hlo"),
    include_str!("../../tests/data/jax/gather.after.hlo"),
];

/// Pieces of HLO syntax that make interesting insertions.
const PIECES: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    "=",
    " ",
    "\n",
    "%x",
    "p0",
    "f32[2]",
    "f32[<=3,?]",
    "(f32[], s32[1])",
    "{1,0}",
    "ROOT ",
    "ENTRY ",
    "add",
    "fusion",
    "calls=",
    "to_apply=",
    "dimensions=",
    "slice={[0:9:0]}",
    "padding=1_x",
    "window={size=2x}",
    "dim_labels=b0f_0io->",
    "// -----\n",
    "HloModule m\n",
    "é",
    "\"",
    "/*",
    "*/",
    "backend_config={a:[}",
    "parameter(7)",
    "-1",
    "99999999999999999999",
];

#[derive(Debug, Clone)]
enum Mutation {
    Delete { at: usize, len: usize },
    Insert { at: usize, piece: usize },
    Duplicate { at: usize, len: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0usize..40).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 0..PIECES.len()).prop_map(|(at, piece)| Mutation::Insert { at, piece }),
        (any::<usize>(), 0usize..200).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
    ]
}

fn boundary(text: &str, at: usize) -> usize {
    let mut at = at % (text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn apply(text: &mut String, m: &Mutation) {
    match *m {
        Mutation::Delete { at, len } => {
            let start = boundary(text, at);
            let end = boundary(text, (start + len).min(text.len()));
            text.replace_range(start..end.max(start), "");
        }
        Mutation::Insert { at, piece } => {
            let at = boundary(text, at);
            text.insert_str(at, PIECES[piece]);
        }
        Mutation::Duplicate { at, len } => {
            let start = boundary(text, at);
            let end = boundary(text, (start + len).min(text.len())).max(start);
            let copy = text[start..end].to_string();
            text.insert_str(end, &copy);
        }
    }
}

fn valid(text: &str, r: &std::ops::Range<usize>) -> bool {
    r.start <= r.end
        && r.end <= text.len()
        && text.is_char_boundary(r.start)
        && text.is_char_boundary(r.end)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn building_never_panics_and_ranges_are_valid(
        sample in 0..SAMPLES.len(),
        mutations in prop::collection::vec(mutation(), 1..8),
    ) {
        let mut text = SAMPLES[sample].to_string();
        for m in &mutations {
            apply(&mut text, m);
        }
        let file = model::parse_hlo(&text);
        for d in &file.diagnostics {
            prop_assert!(valid(&text, &d.range), "diagnostic {:?} outside the text", d);
            for (r, _) in &d.related {
                prop_assert!(valid(&text, r));
            }
        }
        for (r, instr) in file.all_instructions() {
            let c = file.computation(r);
            let valid = |span| valid(&text, &c.abs(span)) && text[c.abs(span)] == *c.src(span);
            prop_assert!(valid(instr.range) && valid(instr.name_range));
            prop_assert!(valid(instr.shape_range) && valid(instr.opcode_range));
            for o in &instr.operands {
                prop_assert!(valid(o.range));
            }
            for a in &instr.attributes {
                prop_assert!(valid(a.name_range) && valid(a.value_range));
            }
        }
        for m in &file.modules {
            prop_assert!(m.entry.is_none_or(|e| e.index() < m.computation_count()));
            for c in m.computations() {
                prop_assert!(c.root.is_none_or(|r| r.index() < c.instructions.len()));
                for i in &c.instructions {
                    prop_assert!(i.operands.iter().all(|o| o.target.is_none_or(|t| t.index() < c.instructions.len())));
                }
            }
        }
    }
}
