// "HLO: Show Costliest Kernels": the server's `hlo-lsp/kernels` answer (the module's kernels,
// costliest first) as quick-pick items. Kept free of `vscode` so the unit tests build the
// items from a response in plain Node.

/** An LSP range (0-based lines and UTF-16 columns). */
export interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

/** One kernel of the `hlo-lsp/kernels` response. */
export interface Kernel {
  name: string;
  computation: string;
  kind: string;
  exec_time_us: number;
  summary: string;
  /** The kernel's name in the document. */
  range: LspRange;
}

/** The `hlo-lsp/kernels` response: the GPU modelled and the kernels, costliest first. */
export interface KernelsResponse {
  device: string;
  kernels: Kernel[];
}

/** The request: `{ textDocument: { uri }, limit? }`. */
export const KERNELS_REQUEST = 'hlo-lsp/kernels';

export interface KernelPickItem {
  label: string;
  description: string;
  detail: string;
  kernel: Kernel;
}

/** An estimated time as the lenses print it: ns below a microsecond, then µs, ms and s. */
export function formatTime(us: number): string {
  if (!Number.isFinite(us)) return '? µs';
  if (us < 1) return `${(us * 1000).toFixed(2)} ns`;
  if (us < 1000) return `${us.toFixed(2)} µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(2)} ms`;
  return `${(us / 1_000_000).toFixed(2)} s`;
}

/**
 * The quick-pick rows, in the server's order (costliest first): label `name  ≈ time`,
 * description `kind · computation`, detail the server's one-line summary.
 */
export function kernelPickItems(response: KernelsResponse | null | undefined): KernelPickItem[] {
  return (response?.kernels ?? []).map((kernel) => ({
    label: `${kernel.name}  ≈ ${formatTime(kernel.exec_time_us)}`,
    description: kernel.computation && kernel.computation !== kernel.name ? `${kernel.kind} · ${kernel.computation}` : kernel.kind,
    detail: kernel.summary,
    kernel,
  }));
}

/** The quick pick's placeholder: how many kernels, on which GPU. */
export function kernelPickTitle(response: KernelsResponse): string {
  const n = response.kernels.length;
  return `${n} kernel${n === 1 ? '' : 's'}, costliest first, estimated on ${response.device}: pick one to go to it`;
}
