// Measured time from an XProf profile: "HLO: Show Hottest Instructions" (the server's
// `hlo-lsp/hottest` answer as quick-pick items) and "HLO: Load Profile" (the
// `hlo-lsp.loadProfile` answer as one message). Kept free of `vscode` so the unit tests
// build both from answers in plain Node.
import { formatTime, type LspRange } from './kernels';

/** The request: `{ textDocument: { uri }, limit? }`. */
export const HOTTEST_REQUEST = 'hlo-lsp/hottest';
/** The server command that reads a profile: `{ path, uri? }`. */
export const LOAD_PROFILE_COMMAND = 'hlo-lsp.loadProfile';

/** One instruction, the most measured time first. */
export interface HotInstruction {
  name: string;
  computation: string;
  /** Per execution, every event of the instruction summed. */
  measured_us: number;
  percent: number;
  cumulative_percent: number;
  /** Events per execution (a while body's instruction: the trip count). */
  count: number;
  self_us: number;
  /** The GPU cost model's estimate per step, where it applies. */
  estimate_us: number | null;
  ratio: number | null;
  range: LspRange;
}

export interface HotModule {
  module: string;
  executions: number;
  step_us: number;
  measured: number;
  never_ran: number;
  unmatched: number;
  instructions: HotInstruction[];
}

/** The `hlo-lsp/hottest` answer; `message` says why there is nothing. */
export interface HottestResponse {
  profile: { file: string; format: string; run: string | null } | null;
  message: string | null;
  modules: HotModule[];
}

export interface HotPickItem {
  label: string;
  description: string;
  detail: string;
  instruction: HotInstruction;
}

/** A measured time as the server writes it: `402 ns`, `2.38 µs`, `29.30 ms`. */
export function formatMeasured(us: number): string {
  if (!Number.isFinite(us)) return '? µs';
  if (us < 0.01) return `${(us * 1000).toFixed(2)} ns`;
  if (us < 1) return `${(us * 1000).toFixed(0)} ns`;
  if (us < 1000) return `${us.toFixed(2)} µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(2)} ms`;
  return `${(us / 1_000_000).toFixed(2)} s`;
}

/** A share as the server writes it: `12%`, `7.7%`, `<0.1%`. */
export function formatPercent(p: number): string {
  if (p >= 10) return `${p.toFixed(0)}%`;
  if (p >= 0.1) return `${p.toFixed(1)}%`;
  return p > 0 ? '<0.1%' : '0%';
}

function count(c: number): string {
  return Math.abs(c - Math.round(c)) < 1e-9 ? String(Math.round(c)) : c.toFixed(2);
}

/**
 * The rows, in the server's order (the most measured time first), every module's: label
 * `name  measured 2.38 µs`, description `7.7% of step · ×5 · computation`, detail the
 * cumulative share and, where the cost model applies, the estimate and the ratio.
 */
export function hotPickItems(response: HottestResponse | null | undefined): HotPickItem[] {
  const several = (response?.modules.length ?? 0) > 1;
  return (response?.modules ?? []).flatMap((m) =>
    m.instructions.map((i) => {
      const parts = [`${formatPercent(i.percent)} of step`];
      if (Math.abs(i.count - 1) > 1e-9) parts.push(`×${count(i.count)}`);
      parts.push(several ? `${i.computation} (${m.module})` : i.computation);
      const detail = [`${formatPercent(i.cumulative_percent)} of the step with the rows above`];
      if (i.self_us + 1e-9 < i.measured_us) detail.push(`${formatMeasured(i.self_us)} its own`);
      // The estimate as the lenses write it (the cost model's quarter nanoseconds).
      if (i.estimate_us !== null) detail.push(`est. ${formatTime(i.estimate_us)}`);
      if (i.ratio !== null) detail.push(`measured/est. ${i.ratio < 10 ? i.ratio.toFixed(2) : i.ratio.toFixed(1)}`);
      return { label: `${i.name}  measured ${formatMeasured(i.measured_us)}`, description: parts.join(' · '), detail: detail.join(' · '), instruction: i };
    }),
  );
}

/** The quick pick's placeholder: how many, of which module, the step, the profile. */
export function hotPickTitle(response: HottestResponse): string {
  const n = response.modules.reduce((s, m) => s + m.instructions.length, 0);
  const m = response.modules[0];
  const file = response.profile?.file.split(/[\\/]/).pop() ?? 'the profile';
  const step = m ? `, step ${formatMeasured(m.step_us)} over ${m.executions} execution${m.executions === 1 ? '' : 's'}` : '';
  return `${n} instruction${n === 1 ? '' : 's'} of ${m?.module ?? 'the module'}, the most measured time first${step} (${file}): pick one to go to it`;
}

/** The `hlo-lsp.loadProfile` answer. */
export interface LoadProfileResponse {
  file: string;
  format: string;
  run: string | null;
  note: string | null;
  measured_on: string | null;
  documents: { uri: string; modules: { module: string; executions: number; step_us: number; instructions: number }[] }[];
}

/** `HLO: vm.xplane.pb (run 2026_11_28_07_58_36) measured 6 instructions of jit_attention, step 30.98 µs`. */
export function loadedMessage(r: LoadProfileResponse): string {
  const file = r.file.split(/[\\/]/).pop() ?? r.file;
  const run = r.run ? ` (run ${r.run})` : '';
  const modules = r.documents.flatMap((d) => d.modules);
  const what = modules
    .map((m) => `${m.instructions} instruction${m.instructions === 1 ? '' : 's'} of ${m.module}, step ${formatMeasured(m.step_us)}`)
    .join('; ');
  const note = r.note ? ` (${r.note})` : '';
  return `HLO: ${file}${run} measured ${what}${note}.`;
}
