; Instructions inside a computation body are indented; the closing brace is not.
(computation_body) @indent
"}" @outdent
