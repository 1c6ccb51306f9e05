// The "Show Fusion Indexing Maps at Cursor" panel. It asks the server for the hover at the
// cursor (standard `textDocument/hover`, which on an instruction inside a fusion carries the
// composed maps) and renders it as a markdown document opened beside the editor. Using the
// hover keeps one source of truth: the panel shows exactly what the hover shows, unclipped.

/** LSP hover contents in any of the three shapes the protocol allows. */
export type MarkedString = string | { language: string; value: string };
export type HoverContents = { kind: 'markdown' | 'plaintext'; value: string } | MarkedString | MarkedString[];

export function contentsToMarkdown(contents: HoverContents): string {
  const one = (m: MarkedString): string =>
    typeof m === 'string' ? m : '```' + m.language + '\n' + m.value.replace(/\n$/, '') + '\n```';
  if (Array.isArray(contents)) return contents.map(one).join('\n\n');
  if (typeof contents === 'object' && 'kind' in contents) {
    return contents.kind === 'markdown' ? contents.value : '```text\n' + contents.value.replace(/\n$/, '') + '\n```';
  }
  return one(contents);
}

/** The panel's text: a title naming the file and position, then the server's answer. */
export function panelMarkdown(fileName: string, line: number, character: number, contents: HoverContents | null | undefined): string {
  const where = `${fileName}:${line + 1}:${character + 1}`;
  const body =
    contents == null || contentsToMarkdown(contents).trim() === ''
      ? '_The server has nothing at this position. Put the cursor on an instruction name or opcode (inside a fused computation for the composed maps), or on a fusion instruction._'
      : contentsToMarkdown(contents);
  return `# Indexing maps at \`${where}\`\n\n${body}\n`;
}
