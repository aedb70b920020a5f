// What the extension shows: notification texts, picker entries, the status
// bar, log levels. Pure (no `vscode` import) so the unit tests run under
// plain Node; extension.ts only hands the results to the VS Code API.

/** Longest reason or progress step put in a notification. */
const MAX_NOTE = 160;

function clip(s: string, max = MAX_NOTE): string {
  return s.length <= max ? s : s.slice(0, max - 1) + '…';
}

/**
 * Why a compile failed, for the notification. The server answers
 * "compilation failed\nfile:2:8: error: ...": the headline says nothing, so
 * the first line naming an error is the reason.
 */
export function compileFailureReason(message: string): string {
  const lines = message.split('\n').map(l => l.trim()).filter(l => l.length > 0);
  const reason = lines.find(l => /\berror\b/i.test(l) && !/^compilation failed$/i.test(l))
    ?? lines.find(l => !/^compilation failed$/i.test(l))
    ?? lines[0] ?? 'unknown error';
  return clip(reason);
}

/**
 * A progress step without its details: "lowering: builtin.module(<600
 * characters of passes>)" becomes "lowering"; short steps stay as they are.
 */
export function progressStep(message: string): string {
  const m = message.trim();
  if (m.length <= 60)
    return m;
  const colon = m.indexOf(': ');
  return colon > 0 ? m.slice(0, colon) : clip(m, 60);
}

/** The server splits files like `mlir-opt --split-input-file`. */
export function hasSections(text: string): boolean {
  return /^\/\/ -----/m.test(text);
}

export interface ScopeItem { label: string; description?: string; fn?: string }

/**
 * What "TOSA: Compile" offers. A file with `// -----` sections cannot be
 * compiled as a whole (the server asks for a function), so only the
 * function at the cursor is offered there.
 */
export function compileScopes(fn: string | undefined, fileName: string, sections: boolean): ScopeItem[] {
  const items: ScopeItem[] = [];
  if (fn)
    items.push({ label: `@${fn}`, description: 'the function at the cursor', fn });
  if (!sections)
    items.push({ label: 'All public functions', description: fileName });
  return items;
}

export interface PickEntry { label: string; description?: string; detail?: string }

/** Picker entries in their usual order, and the one to focus: the current. */
export function pickEntries(items: readonly string[], current: string,
                            describe: Record<string, string>): { entries: PickEntry[]; active: PickEntry | undefined } {
  const entries = items.map(i => ({ label: i, description: i === current ? '(current)' : undefined, detail: describe[i] }));
  return { entries, active: entries.find(e => e.label === current) };
}

export type ServerState = 'starting' | 'running' | 'stopped' | 'error';

/** The status-bar item (like clangd's): a click shows the output. */
export function statusItem(state: ServerState, detail?: string): { text: string; tooltip: string; error: boolean } {
  switch (state) {
    case 'starting':
      return { text: '$(sync~spin) tosa-lsp', tooltip: 'tosa-lsp: starting', error: false };
    case 'running':
      return { text: '$(check) tosa-lsp', tooltip: `tosa-lsp: ready${detail ? ` (${detail})` : ''}`, error: false };
    case 'stopped':
      return { text: '$(circle-slash) tosa-lsp', tooltip: 'tosa-lsp: stopped (TOSA: Restart Server)', error: false };
    case 'error':
      return { text: '$(error) tosa-lsp', tooltip: `tosa-lsp: ${detail ?? 'not running'} — click for the output`, error: true };
  }
}

export type LogLevel = 'error' | 'info';

/**
 * A line of the server's stderr: LLVM's LSP logger writes
 * `E[12:00:00.000] message` (I[ for info, D[ for debug). Only E[ is an
 * error; debug lines (from --verbose) are shown as info, since the channel
 * hides debug by default and --verbose means "show me". Lines without a
 * prefix continue the previous one (multi-line messages) and keep its level.
 */
export function parseLogLine(line: string, previous: LogLevel = 'info'): { level: LogLevel; text: string } {
  const m = /^([EIDV])\[\d\d:\d\d:\d\d(?:\.\d+)?\] ?(.*)$/.exec(line);
  if (!m)
    return { level: previous, text: line };
  return { level: m[1] === 'E' ? 'error' : 'info', text: m[2] };
}

/**
 * Where "Open Setting" goes for a machine-scoped setting: in a remote
 * window (code-server, SSH, containers) machine settings are only read from
 * the Remote settings, which the plain settings command does not open.
 */
export function openSettingCommand(remoteName: string | undefined, key: string): { command: string; args: unknown } {
  return remoteName
    ? { command: 'workbench.action.openRemoteSettings', args: { query: key } }
    : { command: 'workbench.action.openGlobalSettings', args: { query: key } };
}

/** Libraries the server links, and the Debian package that has each. */
const LIBRARY_PACKAGES: [RegExp, string][] = [
  [/^libMLIR\.so\.22/, 'libmlir-22'],
  [/^libmlir_.*\.so\.22/, 'libmlir-22'],
  [/^libLLVM(\.so\.22|-22\.so)/, 'libllvm22'],
  [/^libmimalloc\.so\.2/, 'libmimalloc2.0'],
  [/^libstdc\+\+\.so\.6/, 'libstdc++6'],
];

/**
 * What to install when the server exits before it starts because the
 * dynamic loader misses a library (its stderr: "error while loading shared
 * libraries: libMLIR.so.22.1: cannot open shared object file"), or
 * undefined when the stderr shows no such failure.
 */
export function missingLibraryHint(stderr: string): string | undefined {
  if (/GLIBCXX_[0-9.]+' not found/.test(stderr))
    return 'tosa-lsp cannot start: its C++ runtime is too old (install a newer libstdc++6: sudo apt-get install libstdc++6)';
  const m = /error while loading shared libraries: (\S+?):? cannot open shared object file/.exec(stderr);
  if (!m)
    return undefined;
  const lib = m[1];
  const pkg = LIBRARY_PACKAGES.find(([re]) => re.test(lib))?.[1];
  return pkg
    ? `tosa-lsp cannot start: ${lib} is missing (install Debian's ${pkg}: sudo apt-get install ${pkg})`
    : `tosa-lsp cannot start: ${lib} is missing (find its package: apt-file search ${lib})`;
}
