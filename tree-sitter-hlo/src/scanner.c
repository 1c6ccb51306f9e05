// External scanner for tree-sitter-hlo: `brace_block`, one token for a balanced
// `{...}` (attribute values, literals, JSON backend configs), skipping braces
// inside double-quoted strings. A regular expression cannot count nesting; doing it
// here keeps metadata and JSON blobs to a single tree node. `inline_computation` is
// the same token where a computation key's value may start, when the block holds an
// `=` (instructions, not a `{a, b}` list of names, which the grammar reads).
#include "tree_sitter/parser.h"

#include <stdbool.h>
#include <stdint.h>

enum TokenType { BRACE_BLOCK, INLINE_COMPUTATION, ERROR_SENTINEL };

void *tree_sitter_hlo_external_scanner_create(void) { return NULL; }
void tree_sitter_hlo_external_scanner_destroy(void *payload) { (void)payload; }
unsigned tree_sitter_hlo_external_scanner_serialize(void *payload, char *buffer) {
  (void)payload;
  (void)buffer;
  return 0;
}
void tree_sitter_hlo_external_scanner_deserialize(void *payload, const char *buffer,
                                                  unsigned length) {
  (void)payload;
  (void)buffer;
  (void)length;
}

bool tree_sitter_hlo_external_scanner_scan(void *payload, TSLexer *lexer,
                                           const bool *valid_symbols) {
  (void)payload;
  // In error recovery every symbol is valid; declining there keeps a stray `{`
  // (say, of a computation body) from swallowing the rest of the text.
  if (valid_symbols[ERROR_SENTINEL]) return false;
  bool brace = valid_symbols[BRACE_BLOCK];
  if (!brace && !valid_symbols[INLINE_COMPUTATION]) return false;
  while (lexer->lookahead == ' ' || lexer->lookahead == '\t' || lexer->lookahead == '\n' ||
         lexer->lookahead == '\r') {
    lexer->advance(lexer, true);
  }
  if (lexer->lookahead != '{') return false;
  uint32_t depth = 0;
  bool assigns = false;
  for (;;) {
    if (lexer->eof(lexer)) return false;  // unbalanced: no token, a local error instead
    int32_t c = lexer->lookahead;
    lexer->advance(lexer, false);
    if (c == '{') {
      depth++;
    } else if (c == '}') {
      depth--;
      if (depth == 0) break;
    } else if (c == '=') {
      assigns = true;
    } else if (c == '"') {
      // A string ends at its closing quote or, unterminated, at the end of the line.
      while (!lexer->eof(lexer) && lexer->lookahead != '"' && lexer->lookahead != '\n') {
        if (lexer->lookahead == '\\') {
          lexer->advance(lexer, false);
          if (lexer->eof(lexer) || lexer->lookahead == '\n') break;
        }
        lexer->advance(lexer, false);
      }
      if (lexer->lookahead == '"') lexer->advance(lexer, false);
    }
  }
  if (!brace && !assigns) return false;  // a list of names: the grammar's
  lexer->mark_end(lexer);
  lexer->result_symbol = brace ? BRACE_BLOCK : INLINE_COMPUTATION;
  return true;
}
