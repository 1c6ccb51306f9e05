/**
 * Tree-sitter grammar for XLA's HLO text format.
 *
 * Design: coarse tokens where no consumer needs the inside (a whole array shape
 * with its layout, any `{...}` attribute value, strings, atoms), nodes where the
 * language server needs them (names, opcodes, operands, attribute keys,
 * computation references). Tree-sitter spends roughly the same time per node
 * whatever its length, so every token we avoid is parse speed.
 */

// Attribute keys whose value names computations.
const COMPUTATION_KEYS = [
  'calls', 'to_apply', 'condition', 'body', 'select', 'scatter',
  'true_computation', 'false_computation', 'branch_computations',
  'called_computations', 'async_wrapped_computation',
];

const STRING = /"([^"\\\n]|\\[^\n])*"/;

module.exports = grammar({
  name: 'hlo',

  externals: $ => [
    $.brace_block,
    // A `{...}` holding instructions (`calls={ p = f32[] parameter(0) ... }`): a
    // computation written inline, as XLA's parser accepts it. Only where a computation
    // key's value may start; a `{a, b}` list of names is left to the grammar.
    $.inline_computation,
    // Never valid in the grammar: when the scanner sees it valid, tree-sitter is
    // in error recovery and the scanner declines (keeps recovery local).
    $._error_sentinel,
  ],

  extras: $ => [/\s/, $.comment],

  conflicts: $ => [],

  rules: {
    source_file: $ => repeat(choice(
      $.module_header,
      $.table,
      $.computation,
      $.module_separator,
      alias($.single_instruction, $.instruction),
    )),

    // A file that is one instruction (`f32[4] negate(f32[4])`, `n = f32[4] negate(p)`):
    // XLA's parser reads it as a module whose entry computation is that instruction.
    single_instruction: $ => seq(
      choice(
        seq(field('name', $.name), '=', optional(field('shape', $._any_shape))),
        field('shape', $._any_shape),
      ),
      field('opcode', $.opcode),
      field('operands', $.operand_list),
      repeat(seq(',', field('attribute', $.attribute))),
    ),

    module_separator: _ => token(prec(2, /\/\/ -----[^\n]*/)),

    // `//` ends at a line break (`\r` alone too, as old Mac files have it); `/* */`
    // may span lines.
    comment: _ => token(choice(
      /\/\/[^\n\r]*/,
      /\/\*([^*]|\*+[^*\/])*\*+\//,
    )),

    module_header: $ => seq(
      'HloModule',
      field('name', $.identifier),
      // `HloModule name:`, the header's old form, still accepted by XLA.
      optional(':'),
      repeat(seq(',', field('attribute', $.attribute))),
    ),

    identifier: _ => /[A-Za-z0-9_%][A-Za-z0-9_.\-]*/,

    table: $ => seq(
      field('kind', alias(choice('FileNames', 'FunctionNames', 'FileLocations', 'StackFrames'), $.table_kind)),
      optional(field('body', $.table_body)),
    ),

    // All entries of a table as one token: `1 "file.py"` / `1 {file_name_id=1 ...}` lines.
    table_body: _ => token(seq(
      /\d+[ \t]+/, choice(STRING, /\{[^{}\n]*\}/),
      repeat(seq(/\s+\d+[ \t]+/, choice(STRING, /\{[^{}\n]*\}/))),
    )),

    computation: $ => seq(
      optional(field('entry', alias('ENTRY', $.entry))),
      field('name', $.name),
      optional(field('signature', $.computation_signature)),
      field('body', $.computation_body),
      repeat(seq(',', field('attribute', $.attribute))),
    ),

    computation_signature: $ => seq(
      '(',
      optional(seq($.parameter, repeat(seq(',', $.parameter)))),
      ')',
      '->',
      field('result', $._any_shape),
    ),

    parameter: $ => seq(field('name', $.name), ':', field('shape', $._any_shape)),

    computation_body: $ => seq('{', repeat($.instruction), '}'),

    instruction: $ => seq(
      optional(field('root', alias('ROOT', $.root))),
      field('name', $.name),
      '=',
      // XLA infers the shape when it is left out (`t = tuple(a, b)`).
      optional(field('shape', $._any_shape)),
      field('opcode', $.opcode),
      field('operands', $.operand_list),
      repeat(seq(',', field('attribute', $.attribute))),
    ),

    name: _ => /%[A-Za-z0-9_.\-]+|[A-Za-z_][A-Za-z0-9_.\-]*/,

    opcode: _ => /[a-z][a-z0-9_\-]*/,

    _any_shape: $ => choice($.shape, $.tuple_shape),

    // One token: element type, dimensions (static, `<=N` bounded, `?`), and the
    // optional layout (minor-to-major, tiles, memory space...), even after a space.
    // Lower case only after the `:` (a physical shape, `P(s32[10])`): a `{...}` of
    // words after a shape is a literal, not its layout.
    shape: _ => token(prec(1, seq(
      /[a-z][a-z0-9]*\[[^\]\n]*\]/,
      optional(/[ \t]*\{[^{}\n%="a-z:]*(:[^{}\n%="]*)?\}/),
    ))),

    tuple_shape: $ => seq('(', optional(seq($._any_shape, repeat(seq(',', $._any_shape)))), ')'),

    operand_list: $ => seq('(', optional(seq($.operand, repeat(seq(',', $.operand)))), ')'),

    operand: $ => choice(
      seq(optional(field('shape', $._any_shape)), field('name', $.name)),
      // A shape alone: an operand of a single-instruction file, which XLA makes a
      // parameter of.
      field('shape', $._any_shape),
      field('nested', $.nested_instruction),
      field('literal', $.literal),
    ),

    // `add(f32[] constant(1), x)`; the shape may be left out, as on instructions.
    nested_instruction: $ => seq(
      optional(field('shape', $._any_shape)),
      field('opcode', alias($.name, $.opcode)),
      field('operands', $.operand_list),
    ),

    literal: $ => choice(
      $.brace_block,
      $.string,
      $.number,
      alias(choice('true', 'false'), $.boolean),
      $.tuple_literal,
    ),

    // A tuple constant's value, `( {1, 2}, 3 )`, or a complex scalar, `(1, 0)`.
    tuple_literal: $ => seq('(', $.literal, repeat(seq(',', $.literal)), ')'),

    number: _ => token(prec(1, choice(
      /[-+]?(inf|nan)/,
      /[-+]?\d[0-9A-Za-z_.]*([eE][-+]?\d+)?/,
      /[-+]?\.\d+([eE][-+]?\d+)?/,
    ))),

    string: _ => token(STRING),

    attribute: $ => choice(
      seq(
        field('key', alias(choice(...COMPUTATION_KEYS), $.attribute_name)),
        '=',
        field('value', choice($.computation_ref, $.computation_list, $.string, $.inline_computation)),
      ),
      seq(
        field('key', $.attribute_name),
        '=',
        field('value', choice(
          $.brace_block, $.string, $.shape, $.tuple_shape, $.attribute_atom,
          alias($.mesh_groups, $.attribute_atom), $.typed_literal,
        )),
      ),
    ),

    // `literal=s32[2]{0} {1, 2}` of a custom call, `literal=f32[] 0.1`, or a tuple of
    // them, `literal=( s32[2]{0} {1, 2}, pred[] true )`.
    typed_literal: $ => choice(
      seq($.shape, choice($.brace_block, $.number, alias(choice('true', 'false'), $.boolean))),
      seq('(', $.typed_literal, repeat(seq(',', $.typed_literal)), ')'),
    ),

    attribute_name: _ => /[A-Za-z_][A-Za-z0-9_\-]*/,

    computation_ref: $ => $.name,

    computation_list: $ => seq('{', optional(seq($.name, repeat(seq(',', $.name)))), '}'),

    // `kLoop`, `b01f_01io->b01f`, `1_4_1x4_8_0`, `true`, `-1`, `[2,4]<=[8]T(1,0)`.
    // Also mesh-axes replica groups as JAX prints them, one token:
    // `mesh['axis_0'=1,'axis_1'=8] {'axis_1'}` (with `device_ids=`: `mesh_groups`).
    attribute_atom: _ => token(choice(
      seq(
        choice(/[^\s,{}()\[\]"]/, /\[[^\]\n]*\]/),
        repeat(choice(/[^\s,{}()\[\]"]/, /\[[^\]\n]*\]/, /\([^)\n]*\)/)),
      ),
      /[A-Za-z_][A-Za-z0-9_]*\[[^\]\n]*\][ \t]*\{[^{}\n]*\}/,
    )),

    // Mesh replica groups in the mesh's own device order, one token:
    // `mesh['axis_0'=4,'axis_1'=2], device_ids=([2,4]T(1,0)) {'axis_0'}`. Above a
    // shape's precedence, which would otherwise end the token at `]`.
    mesh_groups: _ => token(prec(2,
      /[A-Za-z_][A-Za-z0-9_]*\[[^\]\n]*\],[ \t]*device_ids=\([^{}\n]*\)[ \t]*\{[^{}\n]*\}/,
    )),
  },
});
