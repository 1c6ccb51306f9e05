// An `hlo-lsp/kernels` response for the unit tests (kernels.test.ts, extension.test.ts).
import { KernelsResponse } from '../src/kernels';

export const range = (line: number, from: number, to: number) => ({ start: { line, character: from }, end: { line, character: to } });

/** The shape the server answers on tests/data/samples/xla/...kernel_reuse.hlo (abridged). */
export const RESPONSE: KernelsResponse = {
  device: 'a6000',
  kernels: [
    {
      name: 'fusion.2',
      computation: 'main',
      kind: 'loop fusion',
      exec_time_us: 12.3,
      summary: '≈ 12.30 µs · memory-bound · reads 3.1 MB (1 uncoalesced) (a6000)',
      range: range(36, 2, 10),
    },
    {
      name: 'custom-call',
      computation: 'main',
      kind: 'custom-call',
      exec_time_us: 1534.5,
      summary: '≈ 1.53 ms · compute-bound (a6000)',
      range: range(35, 2, 13),
    },
    {
      name: 'main',
      computation: 'main',
      kind: 'kernel',
      exec_time_us: 0.004,
      summary: '≈ 4.00 ns (a6000)',
      range: range(34, 6, 10),
    },
  ],
};
