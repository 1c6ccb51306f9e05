; Code navigation: computations and instructions are definitions,
; computation references (calls=, to_apply=, ...) are calls.

(computation name: (name) @name) @definition.function
(instruction name: (name) @name) @definition.variable
(computation_ref (name) @name) @reference.call
(computation_list (name) @name) @reference.call
