; Syntax highlighting for HLO text.

(comment) @comment
(module_separator) @comment.special

"HloModule" @keyword
(entry) @keyword
(root) @keyword
(table_kind) @keyword
(table_body) @string.special

(module_header name: (identifier) @module)

(computation name: (name) @function)
(computation_ref (name) @function)
(computation_list (name) @function)

(parameter name: (name) @variable.parameter)
(instruction name: (name) @variable)
(operand name: (name) @variable)

(opcode) @function.builtin

(shape) @type
(attribute_name) @property
(attribute_atom) @constant
(brace_block) @string.special
(string) @string
(number) @number
(boolean) @constant.builtin

["=" "->" ":"] @operator
["(" ")" "{" "}"] @punctuation.bracket
"," @punctuation.delimiter
