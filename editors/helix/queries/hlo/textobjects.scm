; Helix text objects for HLO: `]f`/`mif` move over / select computations, `mia` operands.
(computation
  body: (computation_body) @function.inside) @function.around

(computation_signature (parameter) @parameter.inside @parameter.around)
(operand_list (operand) @parameter.inside @parameter.around)
(instruction (attribute) @parameter.inside @parameter.around)

(comment) @comment.inside
(comment)+ @comment.around
