// "Which pass made this instruction": the server's `hlo-lsp.history` answer (the passes of
// one instruction of a pass-by-pass dump, each with the snapshots just before and after
// it) as quick-pick items, and what can be done with one pass. Kept free of `vscode` so
// the unit tests build the items from an answer in plain Node.
import type { LspRange } from './kernels';

/** The server command that answers the passes of an instruction. */
export const HISTORY_COMMAND = 'hlo-lsp.history';
/** The server command that diffs two snapshots (`computation`: only that one). */
export const DIFF_COMMAND = 'hlo-lsp.diff';

/** Where to look in one snapshot file. */
export interface HistoryPlace {
  uri: string;
  file: string;
  /** The instruction's name, or what stands in its place (`found`). */
  range: LspRange;
  /** `instruction`, `instead` (what took its place, named `instead`), `computation` (its header), `file`. */
  found: 'instruction' | 'instead' | 'computation' | 'file';
  instead?: string | null;
}

export interface HistoryPass {
  event: 'introduced' | 'changed' | 'removed';
  pass: string;
  step: number | null;
  /** `introduced by algsimp (step 7)`, `changed by fusion (step 20)`, `fused into %f by fusion (step 20)`. */
  label: string;
  before: HistoryPlace | null;
  after: HistoryPlace;
}

/** The `hlo-lsp.history` answer. */
export interface HistoryResponse {
  instruction: string;
  computation: string;
  opcode: string;
  summary: string;
  passes: HistoryPass[];
}

export interface PassPickItem {
  label: string;
  description: string;
  detail: string;
  pass: HistoryPass;
}

/** The file name of a path. */
function baseName(file: string): string {
  return file.split(/[\\/]/).pop() ?? file;
}

/** One row per pass, in order: its label, the snapshot files before → after. */
export function passPickItems(response: HistoryResponse | null | undefined): PassPickItem[] {
  return (response?.passes ?? []).map((pass) => ({
    label: pass.label,
    description: pass.event,
    detail: pass.before ? `${baseName(pass.before.file)} → ${baseName(pass.after.file)}` : baseName(pass.after.file),
    pass,
  }));
}

/** The pass quick pick's placeholder. */
export function passPickTitle(response: HistoryResponse): string {
  return `%${response.instruction} (${response.opcode}): ${response.summary}. Pick a pass`;
}

/** What can be done with one pass. */
export type PassAction = 'compare' | 'changes' | 'before' | 'after';

export interface ActionPickItem {
  label: string;
  detail: string;
  action: PassAction;
}

/** Where a place points, in words: `at %dot.1`, `at %fusion.3, which took its place`. */
export function placeWords(place: HistoryPlace, instruction: string): string {
  switch (place.found) {
    case 'instruction':
      return `at %${instruction}`;
    case 'instead':
      return `at %${place.instead}, in its place`;
    case 'computation':
      return 'at its computation (it is not there)';
    default:
      return '(its computation is not there)';
  }
}

/**
 * The actions on one pass: the two snapshots side by side first (what someone bisecting
 * a transpose wants), then what the pass did to the computation, then each snapshot
 * alone. A pass that made the first snapshot has only the snapshot after it.
 */
export function actionPickItems(pass: HistoryPass, instruction: string, computation: string): ActionPickItem[] {
  const after = { label: 'Open the snapshot after the pass', detail: `${baseName(pass.after.file)} ${placeWords(pass.after, instruction)}`, action: 'after' as const };
  if (!pass.before) return [after];
  return [
    { label: 'Compare the snapshots before and after the pass', detail: `${baseName(pass.before.file)} ↔ ${baseName(pass.after.file)}`, action: 'compare' },
    { label: `Show what the pass did to %${computation}`, detail: 'added, removed and changed instructions, and the fusion maps that changed', action: 'changes' },
    { label: 'Open the snapshot before the pass', detail: `${baseName(pass.before.file)} ${placeWords(pass.before, instruction)}`, action: 'before' },
    after,
  ];
}
