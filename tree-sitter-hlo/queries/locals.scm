; Definitions and references of instruction and computation names.
; A computation is a scope for its parameters and instructions.

(computation) @local.scope

(parameter name: (name) @local.definition.parameter)
(instruction name: (name) @local.definition.var)
(operand name: (name) @local.reference)
