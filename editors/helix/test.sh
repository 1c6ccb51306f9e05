#!/usr/bin/env bash
# Checks the Helix integration without Helix (no package registry reachable here ships an
# `hx` binary: see editors/README.md). What it checks:
#   - the generated queries are up to date with tree-sitter-hlo/queries (a warning: a grammar
#     helper's query change must not turn the whole suite red);
#   - every capture name is one Helix knows: highlight scopes from Helix's theme
#     documentation (a dotted name must extend a documented scope, as Helix falls back to the
#     longest documented prefix), text objects and indent captures from its guides;
#   - languages.toml has the shape of Helix's `languages.toml` documentation (25.07): the keys
#     of [[language]], [language-server.*] and [[grammar]], file-types as extensions or globs,
#     the grammar source as git + rev (+ subpath) or path;
#   - with the tree-sitter CLI (optional), that every query compiles and captures. The same
#     check runs in `cargo test` without the CLI (tree-sitter-hlo/tests/editor_queries.rs).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
grammar="$(cd "$here/../../tree-sitter-hlo" && pwd)"
sample="$here/../neovim/test/fixtures/transpose_fusion.hlo"
"$here/update-queries.sh" --check || echo "editors/helix: WARNING: stale queries (see above); the committed ones are still checked below"
if command -v tree-sitter >/dev/null 2>&1; then
  for q in "$here"/queries/hlo/*.scm; do
    if ! out="$(cd "$grammar" && timeout 120 tree-sitter query "$q" "$sample" 2>&1)"; then
      echo "editors/helix: $(basename "$q") does not compile against tree-sitter-hlo:"; echo "$out"; exit 1
    fi
    # injections only match backend_config, which the sample lacks.
    if [ "$(basename "$q")" != injections.scm ] && ! grep -q 'capture:' <<<"$out"; then
      echo "editors/helix: $(basename "$q") captures nothing in $sample"; exit 1
    fi
  done
  echo "editors/helix: $(ls "$here"/queries/hlo/*.scm | wc -l) query files compile and capture (tree-sitter CLI)"
else
  echo "editors/helix: tree-sitter CLI not found: query compilation is checked by cargo test (tree-sitter-hlo/tests/editor_queries.rs)"
fi
if ! python3 -c 'import tomllib' 2>/dev/null; then
  echo "editors/helix: FAILED: python3 with tomllib (3.11+) is needed to check languages.toml and the capture names"
  exit 1
fi
python3 - "$here" <<'PY'
import pathlib, re, sys, tomllib

here = pathlib.Path(sys.argv[1])
queries = here / 'queries' / 'hlo'

# Helix's documented names (book/src/themes.md "Syntax highlighting", guides/textobject.md,
# guides/indent.md, and the locals/injections captures of its query guide; Helix 25.07).
HIGHLIGHT_SCOPES = set('''
attribute type type.builtin type.parameter type.enum type.enum.variant constructor constant
constant.builtin constant.builtin.boolean constant.character constant.character.escape
constant.numeric constant.numeric.integer constant.numeric.float string string.regexp
string.special string.special.path string.special.url string.special.symbol comment
comment.line comment.line.documentation comment.block comment.block.documentation
comment.unused variable variable.builtin variable.parameter variable.other
variable.other.member variable.other.member.private label punctuation punctuation.delimiter
punctuation.bracket punctuation.special keyword keyword.control keyword.control.conditional
keyword.control.repeat keyword.control.import keyword.control.return keyword.control.exception
keyword.operator keyword.directive keyword.function keyword.storage keyword.storage.type
keyword.storage.modifier operator function function.builtin function.method
function.method.private function.macro function.special tag tag.builtin namespace special
'''.split())
TEXTOBJECTS = {f'{k}.{w}' for k in ('function', 'class', 'test', 'parameter', 'comment', 'entry') for w in ('inside', 'around')}
INDENTS = {'indent', 'indent.always', 'outdent', 'outdent.always', 'align', 'anchor', 'extend', 'extend.prevent-once'}
LOCALS = {'local.scope', 'local.reference', 'local.definition'}
INJECTIONS = {'injection.content', 'injection.language', 'injection.filename', 'injection.shebang'}


def captures(name):
    text = (queries / name).read_text()
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)  # strings may contain '@'
    text = re.sub(r';.*', '', text)
    return sorted(set(re.findall(r'@([A-Za-z_][\w.-]*)', text)))


def documented(capture, names):
    parts = capture.split('.')
    return any('.'.join(parts[:i]) in names for i in range(len(parts), 0, -1))


problems = []
for capture in captures('highlights.scm'):
    if not capture.startswith('_') and not documented(capture, HIGHLIGHT_SCOPES):
        problems.append(f'highlights.scm: @{capture} is no Helix theme scope (nor extends one)')
for name, allowed, prefix_ok in [('textobjects.scm', TEXTOBJECTS, False), ('indents.scm', INDENTS, False),
                                 ('locals.scm', LOCALS, True), ('injections.scm', INJECTIONS, False)]:
    for capture in captures(name):
        ok = documented(capture, allowed) if prefix_ok else capture in allowed
        if not capture.startswith('_') and not ok:
            problems.append(f'{name}: @{capture} is not a capture Helix reads in {name}')

cfg = tomllib.loads((here / 'languages.toml').read_text())
LANGUAGE_KEYS = {'name', 'language-id', 'scope', 'injection-regex', 'file-types', 'shebangs', 'roots',
                 'auto-format', 'diagnostic-severity', 'comment-tokens', 'comment-token', 'block-comment-tokens',
                 'indent', 'language-servers', 'grammar', 'formatter', 'soft-wrap', 'text-width', 'rulers',
                 'path-completion', 'workspace-lsp-roots', 'persistent-diagnostic-sources'}
SERVER_KEYS = {'command', 'args', 'config', 'timeout', 'environment', 'required-root-patterns'}
(lang,) = cfg['language']
problems += [f'[[language]] key {k!r} is not in Helix\'s documentation' for k in lang if k not in LANGUAGE_KEYS]
if lang.get('name') != 'hlo' or lang.get('scope') != 'source.hlo':
    problems.append(f'[[language]] name/scope: {lang.get("name")}/{lang.get("scope")}')
for ft in lang['file-types']:
    if not (isinstance(ft, str) and '.' not in ft and '*' not in ft) and not (isinstance(ft, dict) and set(ft) == {'glob'}):
        problems.append(f'file-types entry {ft!r}: an extension without a dot, or {{ glob = "..." }}')
if lang.get('language-servers') != ['hlo-lsp']:
    problems.append(f'language-servers = {lang.get("language-servers")!r}')
server = cfg['language-server']['hlo-lsp']
problems += [f'[language-server.hlo-lsp] key {k!r} is not in Helix\'s documentation' for k in server if k not in SERVER_KEYS]
if server.get('args'):
    problems.append('hlo-lsp serves LSP with no arguments: args must be empty')
config = server.get('config', {})
if set(config) != {'inlayHints', 'divSpelling', 'utilizationBudget', 'physicalLayout'} or config['inlayHints'] != {'mode': 'short'}:
    problems.append(f'config is not the settings object of editors/README.md: {config!r}')
(gr,) = cfg['grammar']
source = gr.get('source', {})
if gr.get('name') != 'hlo' or set(gr) != {'name', 'source'}:
    problems.append(f'[[grammar]]: {gr!r}')
if set(source) == {'path'}:
    # The README's sed line puts the checkout's absolute path in place of /path/to/hlo-lsp.
    placeholder = '/path/to/hlo-lsp/'
    repo = here.parent.parent
    if not source['path'].startswith(placeholder):
        problems.append(f'grammar path {source["path"]!r} does not start with {placeholder}')
    elif not (repo / source['path'][len(placeholder):] / 'src' / 'parser.c').is_file():
        problems.append(f'{source["path"]} with this checkout in place of /path/to/hlo-lsp has no src/parser.c')
elif set(source) - {'subpath'} == {'git', 'rev'}:
    if not re.fullmatch(r'[0-9a-f]{40}|v?\d[\w.-]*', source['rev']):
        problems.append(f'grammar rev {source["rev"]!r}: Helix fetches a commit hash or a tag, not a branch')
    if source.get('subpath') != 'tree-sitter-hlo':
        problems.append(f'grammar subpath {source.get("subpath")!r}: the grammar is in tree-sitter-hlo/')
else:
    problems.append(f'grammar source {source!r}: git + rev (+ subpath), or path')

if problems:
    print('editors/helix: FAILED:\n  ' + '\n  '.join(problems))
    sys.exit(1)
counts = {n: len(captures(n)) for n in sorted(p.name for p in queries.glob('*.scm'))}
print(f'editors/helix: capture names are Helix\'s ({counts}); languages.toml matches Helix\'s documented format')
PY
