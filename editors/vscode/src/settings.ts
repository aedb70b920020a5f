// VS Code configuration (`tosaLsp.*`) -> the JSON the server accepts in
// initializationOptions and workspace/didChangeConfiguration. Pure: the
// configuration comes in as a getter so tests can use a plain object.
import { DiscoveryEnv, expandVariables } from './discovery';

export type ConfigGetter = (key: string) => unknown;

export interface ServerSettings {
  hints: { inferredShapes: boolean; runtimeChecks: boolean };
  info: { refinable: boolean; runtimeChecks: boolean; dynamicToStatic: boolean };
  extraBroadcastableOps: string[];
  compile: { outputDir?: string; overwrite?: boolean; timeoutSeconds?: number; memoryLimitMB?: number };
}

export const STAGES = ['linalg', 'loops', 'llvm'] as const;
export const MODES = ['fast', 'upstream', 'safe', 'versioned'] as const;
export type Stage = typeof STAGES[number];
export type Mode = typeof MODES[number];

function bool(get: ConfigGetter, key: string, dflt: boolean): boolean {
  const v = get(key);
  return typeof v === 'boolean' ? v : dflt;
}

function positiveInt(get: ConfigGetter, key: string): number | undefined {
  const v = get(key);
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;
}

/** Keys under `tosaLsp.` (the getter is for the `tosaLsp` section). */
export function toServerSettings(get: ConfigGetter,
                                 env?: Pick<DiscoveryEnv, 'workspaceFolder' | 'userHome'>): ServerSettings {
  const ops = get('extraBroadcastableOps');
  const out: ServerSettings = {
    hints: {
      inferredShapes: bool(get, 'hints.inferredShapes', true),
      runtimeChecks: bool(get, 'hints.runtimeChecks', true),
    },
    info: {
      refinable: bool(get, 'info.refinable', true),
      runtimeChecks: bool(get, 'info.runtimeChecks', true),
      dynamicToStatic: bool(get, 'info.dynamicToStatic', true),
    },
    extraBroadcastableOps: Array.isArray(ops)
      ? [...new Set(ops.filter((o): o is string => typeof o === 'string')
                       .map(o => o.trim().replace(/^"(.*)"$/, '$1'))
                       .filter(o => o.length > 0))]
      : [],
    compile: {},
  };
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
  return out;
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
