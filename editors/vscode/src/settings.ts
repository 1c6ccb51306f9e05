// The extension's settings and the object the server receives. The same object is sent as
// `initializationOptions` and as `workspace/didChangeConfiguration` `settings`, so the
// server parses one shape (documented in editors/README.md).

export type InlayHintMode = 'off' | 'short' | 'full';
export type DivSpelling = 'floordiv' | 'slash';
export type CoalescingSeverity = 'information' | 'warning';
export type FormatStyle = 'auto' | 'long' | 'short';
/** A preset name, or custom device numbers over a `base` preset (passed through). */
export type CoalescingDevice = 'a6000' | 'a100' | 'h100' | 'b200' | Record<string, unknown>;

/** What the server understands. Field names are the wire names. */
export interface ServerSettings {
  inlayHints: { mode: InlayHintMode };
  divSpelling: DivSpelling;
  utilizationBudget: number;
  physicalLayout: boolean;
  /** `device` is left out when the user did not set it (see `serverSettings`). */
  coalescing: { device?: CoalescingDevice; severity: CoalescingSeverity };
  /** The form formatting writes (`hlo.format.style`). */
  format: { style: FormatStyle };
  /** `hlo.profile`, expanded; left out when the user did not set it (`''`: cleared). */
  profile?: string;
}

/** The slice of `vscode.WorkspaceConfiguration` this module needs (so tests can fake it). */
export interface ConfigurationLike {
  get<T>(section: string): T | undefined;
  /** Where a value comes from; without it every setting counts as set. */
  inspect?<T>(section: string):
    | { globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T; [k: string]: unknown }
    | undefined;
}

/** Whether the user set `section` anywhere (user, workspace or folder settings). */
function isSet(config: ConfigurationLike, section: string): boolean {
  if (!config.inspect) return true;
  const i = config.inspect<unknown>(section);
  return !!i && [i.globalValue, i.workspaceValue, i.workspaceFolderValue].some((v) => v !== undefined);
}

export const DEFAULTS: ServerSettings = {
  inlayHints: { mode: 'short' },
  divSpelling: 'floordiv',
  utilizationBudget: 1,
  physicalLayout: false,
  coalescing: { device: 'a6000', severity: 'information' },
  format: { style: 'auto' },
};

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

/**
 * Reads the `hlo.*` settings into the server's shape (`expand`: what `hlo.profile`'s
 * `${workspaceFolder}` and `~` become). `coalescing.device` is sent only when
 * the user set it: the server models a GPU (a6000) by default anyway, and estimates the
 * kernels of a CPU dump (code lenses, the hover's Cost line) only on a GPU the user chose. Values of the wrong type (hand-edited
 * settings.json) fall back to the defaults instead of reaching the server.
 */
export function serverSettings(config: ConfigurationLike, expand: (raw: string) => string = (raw) => raw): ServerSettings {
  const budget = config.get<unknown>('utilization.budget');
  const physical = config.get<unknown>('maps.physicalLayout');
  const device = config.get<unknown>('coalescing.device');
  const settings: ServerSettings = {
    inlayHints: { mode: oneOf(config.get('inlayHints.mode'), ['off', 'short', 'full'] as const, DEFAULTS.inlayHints.mode) },
    divSpelling: oneOf(config.get('maps.divSpelling'), ['floordiv', 'slash'] as const, DEFAULTS.divSpelling),
    utilizationBudget: typeof budget === 'number' && Number.isFinite(budget) && budget > 0 ? budget : DEFAULTS.utilizationBudget,
    physicalLayout: typeof physical === 'boolean' ? physical : DEFAULTS.physicalLayout,
    coalescing: {
      device:
        device !== null && typeof device === 'object' && !Array.isArray(device)
          ? (device as Record<string, unknown>)
          : oneOf(device, ['a6000', 'a100', 'h100', 'b200'] as const, 'a6000'),
      severity: oneOf(config.get('coalescing.severity'), ['information', 'warning'] as const, DEFAULTS.coalescing.severity),
    },
    format: { style: oneOf(config.get('format.style'), ['auto', 'long', 'short'] as const, DEFAULTS.format.style) },
  };
  if (!isSet(config, 'coalescing.device')) delete settings.coalescing.device;
  const profile = config.get<unknown>('profile');
  if (typeof profile === 'string' && profile.trim() !== '' && isSet(config, 'profile')) settings.profile = expand(profile);
  return settings;
}

/** `hlo.server.extraArgs`, keeping only strings. */
export function extraArgs(config: ConfigurationLike): string[] {
  const args = config.get<unknown>('server.extraArgs');
  return Array.isArray(args) ? args.filter((a): a is string => typeof a === 'string') : [];
}

/** Settings whose change needs a new server process rather than a notification. */
export const RESTART_SETTINGS = ['hlo.server.path', 'hlo.server.extraArgs'];
