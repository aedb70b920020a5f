// Finding the tosa-lsp executable. Pure (no `vscode` import): everything the
// search needs from the outside world comes in through DiscoveryEnv, so the
// unit tests run under plain Node.
import * as path from 'path';

export interface DiscoveryEnv {
  /** First workspace folder (file system path), if any. */
  workspaceFolder?: string;
  /** The user's home directory. */
  userHome: string;
  /** The PATH environment variable. */
  pathEnv: string;
  /** Directory the extension is installed in. */
  extensionPath: string;
  platform: NodeJS.Platform;
  /** True when `p` is an executable regular file. */
  isExecutable(p: string): boolean;
  /** Names in a directory ([] when it cannot be read). */
  listDir(dir: string): string[];
}

export type ServerSource = 'setting' | 'path' | 'bundled';

export type DiscoveryResult =
  | { ok: true; path: string; source: ServerSource }
  | { ok: false; message: string; tried: string[] };

export const SERVER_NAME = 'tosa-lsp';

/**
 * Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`.
 * An unknown `${workspaceFolder}` (no folder open) is left as is so that the
 * caller reports a path that visibly cannot exist.
 */
export function expandVariables(value: string, env: Pick<DiscoveryEnv, 'workspaceFolder' | 'userHome'>,
                                environ: Record<string, string | undefined> = {}): string {
  let s = value.trim();
  if (s === '~' || s.startsWith('~/') || s.startsWith('~\\'))
    s = env.userHome + s.slice(1);
  return s.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g,
    (whole, name: string, envName?: string) => {
      if (name === 'workspaceFolder')
        return env.workspaceFolder ?? whole;
      if (name === 'userHome')
        return env.userHome;
      return environ[envName!] ?? '';
    });
}

function executableNames(base: string, platform: NodeJS.Platform): string[] {
  return platform === 'win32' ? [base + '.exe', base + '.cmd', base] : [base];
}

/** `tosa-lsp-22`, `tosa-lsp-1.2` (numeric suffixes only), newest first. */
export function versionedNames(names: string[], platform: NodeJS.Platform): string[] {
  const re = platform === 'win32' ? /^tosa-lsp-(\d+(?:\.\d+)*)(?:\.exe)?$/i : /^tosa-lsp-(\d+(?:\.\d+)*)$/;
  const found: { name: string; version: number[] }[] = [];
  for (const n of names) {
    const m = re.exec(n);
    if (m)
      found.push({ name: n, version: m[1].split('.').map(Number) });
  }
  found.sort((a, b) => {
    for (let i = 0; i < Math.max(a.version.length, b.version.length); ++i) {
      const d = (b.version[i] ?? -1) - (a.version[i] ?? -1);
      if (d !== 0)
        return d;
    }
    return a.name < b.name ? -1 : 1;
  });
  return found.map(f => f.name);
}

/** Directories of PATH, in order, without empty entries. */
export function pathDirs(pathEnv: string, platform: NodeJS.Platform): string[] {
  return pathEnv.split(platform === 'win32' ? ';' : ':').filter(d => d.length > 0);
}

/**
 * The search order:
 *  1. the `tosaLsp.serverPath` setting (`~`, `${userHome}`, `${env:X}`
 *     expanded; machine scope). When set, it is authoritative: a wrong
 *     setting is an error, not a silent fall-back to another binary. It must
 *     be absolute or a bare name on PATH: `${workspaceFolder}` and relative
 *     paths would let an opened repository choose what the editor executes;
 *  2. `tosa-lsp` on PATH, then the newest `tosa-lsp-<version>` on PATH;
 *  3. `server/tosa-lsp` inside the extension.
 */
export function findServer(setting: string | undefined, env: DiscoveryEnv,
                           environ: Record<string, string | undefined> = {}): DiscoveryResult {
  const pathApi = env.platform === 'win32' ? path.win32 : path.posix;
  const tried: string[] = [];
  if (setting && setting.trim() !== '') {
    // No workspaceFolder: `${workspaceFolder}` stays literal and is refused.
    const p = expandVariables(setting, { userHome: env.userHome }, environ);
    const bare = !p.includes('/') && !p.includes(pathApi.sep);
    if (!pathApi.isAbsolute(p) && !bare)
      return {
        ok: false, tried,
        message: `tosaLsp.serverPath is set to "${setting}": it must be an absolute path or a ` +
          'name on PATH (${workspaceFolder} and relative paths are not expanded, so that ' +
          'a workspace cannot choose the executable).',
      };
    const candidates: string[] = [];
    if (!bare)
      candidates.push(p, ...(env.platform === 'win32' && !/\.(exe|cmd)$/i.test(p) ? [p + '.exe'] : []));
    // A bare name: look it up on PATH.
    if (candidates.length === 0)
      for (const dir of pathDirs(env.pathEnv, env.platform))
        candidates.push(...executableNames(pathApi.join(dir, p), env.platform));
    for (const c of candidates) {
      tried.push(c);
      if (env.isExecutable(c))
        return { ok: true, path: c, source: 'setting' };
    }
    return {
      ok: false, tried,
      message: `tosaLsp.serverPath is set to "${setting}", but ${p} is not an executable file.`,
    };
  }
  const dirs = pathDirs(env.pathEnv, env.platform);
  for (const dir of dirs)
    for (const c of executableNames(pathApi.join(dir, SERVER_NAME), env.platform)) {
      tried.push(c);
      if (env.isExecutable(c))
        return { ok: true, path: c, source: 'path' };
    }
  for (const dir of dirs)
    for (const name of versionedNames(env.listDir(dir), env.platform)) {
      const c = pathApi.join(dir, name);
      tried.push(c);
      if (env.isExecutable(c))
        return { ok: true, path: c, source: 'path' };
    }
  for (const c of executableNames(pathApi.join(env.extensionPath, 'server', SERVER_NAME), env.platform)) {
    tried.push(c);
    if (env.isExecutable(c))
      return { ok: true, path: c, source: 'bundled' };
  }
  return {
    ok: false, tried,
    message: 'Cannot find the tosa-lsp server: set tosaLsp.serverPath, put tosa-lsp on PATH, ' +
      'or place it in the extension\'s server/ folder. ' + INSTALL_HINT,
  };
}

/** How to get the server onto PATH (issue 45: a bad install says what to install). */
export const INSTALL_HINT = 'Install it: sudo apt install ./tosa-lsp_0.1.0_amd64.deb (cpack -G DEB in the ' +
  'build directory), or cmake --install build; then it is on PATH.';

/** A DiscoveryEnv on the real file system (still no `vscode` import). */
export function nodeEnv(extensionPath: string, workspaceFolder?: string): DiscoveryEnv {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const fs: typeof import('fs') = require('fs');
  const os: typeof import('os') = require('os');
  return {
    workspaceFolder,
    userHome: os.homedir(),
    pathEnv: process.env.PATH ?? process.env.Path ?? '',
    extensionPath,
    platform: process.platform,
    isExecutable(p: string): boolean {
      try {
        if (!fs.statSync(p).isFile())
          return false;
        if (process.platform !== 'win32')
          fs.accessSync(p, fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    },
    listDir(dir: string): string[] {
      try {
        return fs.readdirSync(dir);
      } catch {
        return [];
      }
    },
  };
}
