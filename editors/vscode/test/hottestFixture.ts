// `hlo-lsp/hottest` and `hlo-lsp.loadProfile` answers for the unit tests (shapes of the
// server's answers on tests/data/profiles/, abridged).
import { HottestResponse, LoadProfileResponse } from '../src/hottest';
import { range } from './kernelsFixture';

export const HOTTEST: HottestResponse = {
  profile: { file: '/ws/fori/profile/plugins/profile/2026_11_28_07_58_37/vm.xplane.pb', format: 'xplane', run: '2026_11_28_07_58_37' },
  message: null,
  modules: [
    {
      module: 'jit_fori_cumulative(6)',
      executions: 5,
      step_us: 7.67,
      measured: 6,
      never_ran: 1,
      unmatched: 0,
      instructions: [
        {
          name: 'while.1',
          computation: 'main.7',
          measured_us: 6.57,
          percent: 85.7,
          cumulative_percent: 85.7,
          count: 1,
          self_us: 1.49,
          estimate_us: null,
          ratio: null,
          range: range(40, 2, 9),
        },
        {
          name: 'add_fusion',
          computation: 'region_0.5',
          measured_us: 0.402,
          percent: 5.24,
          cumulative_percent: 85.7,
          count: 5,
          self_us: 0.402,
          estimate_us: 0.0365,
          ratio: 11.01,
          range: range(12, 2, 12),
        },
      ],
    },
  ],
};

export const LOADED: LoadProfileResponse = {
  file: '/ws/attention/profile/plugins/profile/2026_11_28_07_58_36/vm.trace.json.gz',
  format: 'trace.json.gz',
  run: '2026_11_28_07_58_36',
  note: null,
  measured_on: 'host threads',
  documents: [{ uri: 'file:///ws/attention/module_0006.jit_attention.cpu_after_optimizations.txt', modules: [{ module: 'jit_attention', executions: 5, step_us: 30.98, instructions: 6 }] }],
};
