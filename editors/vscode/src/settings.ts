// VS Code configuration (`tosaLsp.*`) -> the JSON the server accepts in
// initializationOptions and workspace/didChangeConfiguration. Pure: the
// configuration comes in as a getter so tests can use a plain object.
import { DiscoveryEnv, expandVariables } from './discovery';

/** A getter that answers only what the user set (undefined otherwise):
 *  the server owns the defaults, and a value the user never set must not
 *  override the project's `.tosa-lsp.json`. */
export type ConfigGetter = (key: string) => unknown;

/** Only the keys the user set; the server fills in the rest (its defaults,
 *  then the project file, then these). */
export interface ServerSettings {
  hints?: { inferredShapes?: boolean; runtimeChecks?: boolean };
  info?: { publish?: boolean; refinable?: boolean; runtimeChecks?: boolean; dynamicToStatic?: boolean };
  shapeChecks?: boolean;
  /** MLIR's tosa-validate: on/off, or `check --validate` items. */
  validate?: boolean | string;
  extraBroadcastableOps?: string[];
  compile: { outputDir?: string; overwrite?: boolean; timeoutSeconds?: number; memoryLimitMB?: number; threads?: number };
}

export const STAGES = ['linalg', 'vector', 'loops', 'llvm'] as const;
export const MODES = ['fast', 'upstream', 'safe', 'versioned'] as const;
export type Stage = typeof STAGES[number];
export type Mode = typeof MODES[number];

function positiveInt(get: ConfigGetter, key: string, min = 1): number | undefined {
  const v = get(key);
  return typeof v === 'number' && Number.isInteger(v) && v >= min ? v : undefined;
}

/** The booleans of `keys` under `prefix.` the user set, or undefined. */
function bools<K extends string>(get: ConfigGetter, prefix: string,
                                 keys: readonly K[]): Partial<Record<K, boolean>> | undefined {
  const out: Partial<Record<K, boolean>> = {};
  let any = false;
  for (const k of keys) {
    const v = get(`${prefix}.${k}`);
    if (typeof v === 'boolean') {
      out[k] = v;
      any = true;
    }
  }
  return any ? out : undefined;
}

/** Keys under `tosaLsp.` (the getter is for the `tosaLsp` section). */
export function toServerSettings(get: ConfigGetter,
                                 env?: Pick<DiscoveryEnv, 'workspaceFolder' | 'userHome'>): ServerSettings {
  const out: ServerSettings = { compile: {} };
  const hints = bools(get, 'hints', ['inferredShapes', 'runtimeChecks'] as const);
  if (hints)
    out.hints = hints;
  const info = bools(get, 'info', ['publish', 'refinable', 'runtimeChecks', 'dynamicToStatic'] as const);
  if (info)
    out.info = info;
  const shapeChecks = get('shapeChecks');
  if (typeof shapeChecks === 'boolean')
    out.shapeChecks = shapeChecks;
  const validate = get('validate');
  if (typeof validate === 'boolean' || typeof validate === 'string')
    out.validate = validate;
  const ops = get('extraBroadcastableOps');
  if (Array.isArray(ops))
    out.extraBroadcastableOps =
      [...new Set(ops.filter((o): o is string => typeof o === 'string')
                     .map(o => o.trim().replace(/^"(.*)"$/, '$1'))
                     .filter(o => o.length > 0))];
  const dir = get('compile.outputDir');
  if (typeof dir === 'string' && dir.trim() !== '')
    out.compile.outputDir = env ? expandVariables(dir, env) : dir.trim();
  // Only sent when on: the server's default is never to replace a file.
  if (get('compile.overwrite') === true)
    out.compile.overwrite = true;
  const t = positiveInt(get, 'compile.timeoutSeconds');
  if (t !== undefined)
    out.compile.timeoutSeconds = t;
  const m = positiveInt(get, 'compile.memoryLimitMB');
  if (m !== undefined)
    out.compile.memoryLimitMB = m;
  const n = positiveInt(get, 'compile.threads', 0); // 0: the machine's
  if (n !== undefined)
    out.compile.threads = n;
  return out;
}

/** What the user set for `key` (folder, then workspace, then user
 *  settings), never the default from package.json. */
export interface Inspectable {
  inspect(key: string): { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown } | undefined;
}
export function userSetGetter(c: Inspectable): ConfigGetter {
  return k => {
    const i = c.inspect(k);
    return i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
  };
}

/** The didChangeConfiguration payload: nested under "tosaLsp". */
export function didChangeConfigurationParams(s: ServerSettings): { settings: { tosaLsp: ServerSettings } } {
  return { settings: { tosaLsp: s } };
}

export function loweringStage(get: ConfigGetter): Stage {
  const v = get('lowering.stage');
  return (STAGES as readonly unknown[]).includes(v) ? v as Stage : 'linalg';
}

export function loweringMode(get: ConfigGetter): Mode {
  const v = get('lowering.mode');
  return (MODES as readonly unknown[]).includes(v) ? v as Mode : 'fast';
}

/** Settings whose change needs a server restart rather than a notification. */
export const RESTART_KEYS = ['tosaLsp.serverPath', 'tosaLsp.serverArgs'];

/**
 * What a configuration change needs: a new server for the executable or its
 * arguments (a running server cannot switch), else the settings sent to it.
 */
export function configChangeAction(affects: (section: string) => boolean): 'restart' | 'notify' | 'none' {
  if (!affects('tosaLsp'))
    return 'none';
  return RESTART_KEYS.some(k => affects(k)) ? 'restart' : 'notify';
}

/** A getter over a flat object of dotted keys (for tests and defaults). */
export function objectGetter(o: Record<string, unknown>): ConfigGetter {
  return key => o[key];
}
