; Fold computation bodies, tables and long attribute values.
(computation_body) @fold
(table) @fold
(brace_block) @fold
