; backend_config={...} holds JSON (the whole braced value is one token).
((attribute
  key: (attribute_name) @_key
  value: (brace_block) @injection.content)
  (#eq? @_key "backend_config")
  (#set! injection.language "json"))
