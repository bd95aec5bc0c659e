// The shadowtab VS Code extension: launches `shadowtab lsp` (the stdio pump into the
// per-user daemon) as a language server. Ghost text comes from the server's
// textDocument/inlineCompletion, which vscode-languageclient 10 registers by itself; this
// file adds the save lock in the status bar, the pending files picker and next-edit
// suggestions.

import { type ChildProcess, spawn } from 'node:child_process';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import {
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { CursorHints, type CursorHintSettings } from './cursorHint';
import { LockStatusBar } from './lockStatus';
import { NextEditController, NextEditSettings } from './nextEdit';
import { PendingFilesPicker } from './pendingFiles';
import { LOCK_CHANGED_METHOD } from './protocol';

let client: LanguageClient | undefined;

function settings(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('shadowtab');
}

/** Settings whose change needs the server started again (with the new command line). */
const SERVER_SETTINGS = ['shadowtab.command', 'shadowtab.args'];

let serverProcess: ChildProcess | undefined;

/**
 * Starts `<command> <args>` with the settings as they are now (so a restart picks up a
 * changed `shadowtab.command`), on plain stdio: vscode-languageclient's stdio transport
 * would append `--stdio`, which `shadowtab lsp` does not take. A command that cannot be
 * started is reported by name, with what to do about it.
 */
const serverOptions: ServerOptions = () =>
  new Promise<ChildProcess>((resolve, reject) => {
    const command = expandHome(settings().get<string>('command', 'shadowtab'));
    const args = settings().get<string[]>('args', ['lsp']);
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const child = spawn(command, args, { cwd, stdio: 'pipe', env: process.env });
    child.once('spawn', () => {
      serverProcess = child;
      resolve(child);
    });
    child.once('error', (error: NodeJS.ErrnoException) => reject(startError(command, error)));
  });

/** `~/x` as the shell would read it: spawn() takes the path literally. */
function expandHome(command: string): string {
  return command === '~' || command.startsWith('~/') ? join(homedir(), command.slice(1)) : command;
}

function startError(command: string, error: NodeJS.ErrnoException): Error {
  if (error.code === 'ENOENT' && isAbsolute(command)) {
    // A recorded path whose environment was moved or removed.
    return new Error(
      `\`${command}\` does not exist. Run \`shadowtab editor install vscode\` in the ` +
        'environment shadowtab is installed in (it records the full path in ' +
        '`shadowtab.command`), or set `shadowtab.command` yourself.',
    );
  }
  if (error.code === 'ENOENT') {
    // VS Code started from the desktop does not see a virtual environment's PATH.
    return new Error(
      `\`${command}\` was not found on PATH. Install shadowtab and run ` +
        '`shadowtab editor install vscode` in its environment (it records the full path in ' +
        '`shadowtab.command`), or set `shadowtab.command` yourself.',
    );
  }
  if (error.code === 'EACCES') {
    return new Error(`\`${command}\` is not executable: check \`shadowtab.command\`.`);
  }
  return new Error(`\`${command}\` could not be started: ${error.message}`);
}

function documentSelector(): { scheme: string; language: string }[] {
  const languages = settings().get<string[]>('languages', ['python']);
  return languages.map((language) => ({ scheme: 'file', language }));
}

function nextEditSettings(): NextEditSettings {
  return {
    enabled: settings().get<boolean>('nextEdit.enabled', true),
    debounceMs: settings().get<number>('nextEdit.debounceMs', 150),
  };
}

function cursorHintSettings(): CursorHintSettings {
  return {
    enabled: settings().get<boolean>('warmAtCursor.enabled', true),
    debounceMs: settings().get<number>('warmAtCursor.debounceMs', 150),
  };
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const selector = documentSelector();
  const lock = new LockStatusBar();
  const clientOptions: LanguageClientOptions = {
    documentSelector: selector,
    // shadowtab.lock.* are the server's commands, registered by the client: add their UI.
    middleware: { executeCommand: (command, args, next) => lock.execute(command, args, next) },
  };
  const host = new ClientHost(clientOptions, lock);
  const nextEdit = new NextEditController(() => host.running(), selector, nextEditSettings);
  const cursorHints = new CursorHints(() => host.running(), selector, cursorHintSettings);
  const pendingFiles = new PendingFilesPicker(
    () => host.running(),
    () => host.refreshLock(),
  );
  context.subscriptions.push(
    lock,
    nextEdit,
    cursorHints,
    host,
    vscode.commands.registerCommand('shadowtab.nextEdit.accept', () => nextEdit.accept()),
    vscode.commands.registerCommand('shadowtab.nextEdit.dismiss', () => nextEdit.dismiss()),
    vscode.commands.registerCommand('shadowtab.nextEdit.next', () => nextEdit.cycle(1)),
    vscode.commands.registerCommand('shadowtab.nextEdit.previous', () => nextEdit.cycle(-1)),
    vscode.commands.registerCommand('shadowtab.restart', () => host.startOrRestart()),
    vscode.commands.registerCommand('shadowtab.pendingFiles', () => pendingFiles.run()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (SERVER_SETTINGS.some((name) => event.affectsConfiguration(name))) {
        void host.startOrRestart();
      } else if (event.affectsConfiguration('shadowtab.languages')) {
        void askToReload();
      }
    }),
  );
  // Not awaited: activation ends while a start error is still on screen.
  void host.startOrRestart();
}

/**
 * The language client, made anew when it has to start again after a failed start (a
 * vscode-languageclient client whose start failed cannot be started again).
 */
class ClientHost implements vscode.Disposable {
  private current: LanguageClient | undefined;
  private subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly options: LanguageClientOptions,
    private readonly lock: LockStatusBar,
  ) {}

  /** The client when it is running (requests to any other would fail). */
  running(): LanguageClient | undefined {
    return this.current?.isRunning() ? this.current : undefined;
  }

  /** Starts the client, or restarts it when it runs; a failure is shown, never thrown. */
  async startOrRestart(): Promise<void> {
    try {
      if (this.current?.isRunning()) {
        await this.current.restart();
      } else {
        await this.replace().start();
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      void this.showStartError(message);
    }
  }

  /** Asks the server again who holds the lock and whether anything is pending. */
  refreshLock(): void {
    const running = this.running();
    if (running) {
      void this.lock.refresh(running);
    }
  }

  dispose(): void {
    this.subscriptions.forEach((subscription) => subscription.dispose());
    this.subscriptions = [];
  }

  private replace(): LanguageClient {
    const old = this.current;
    this.dispose();
    if (old && old.state !== State.Stopped) {
      void old.dispose().catch(() => undefined);
    }
    const fresh = new LanguageClient('shadowtab', 'shadowtab', serverOptions, this.options);
    this.current = fresh;
    client = fresh;
    this.subscriptions.push(
      fresh.onNotification(LOCK_CHANGED_METHOD, (params: unknown) =>
        this.lock.onLockChanged(params),
      ),
      // Also after a restart (the daemon went away): no lockChanged tells a new session.
      fresh.onDidChangeState((event) => {
        if (event.newState === State.Running) {
          void this.lock.refresh(fresh);
        }
      }),
    );
    return fresh;
  }

  private async showStartError(message: string): Promise<void> {
    const openSettings = 'Open Settings';
    const showOutput = 'Show Output';
    const picked = await vscode.window.showErrorMessage(
      `shadowtab: the language server did not start: ${message}`,
      openSettings,
      showOutput,
    );
    if (picked === openSettings) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'shadowtab.command');
    } else if (picked === showOutput) {
      this.current?.outputChannel.show();
    }
  }
}

async function askToReload(): Promise<void> {
  const reload = 'Reload Window';
  const picked = await vscode.window.showInformationMessage(
    'shadowtab: the languages take effect after a reload.',
    reload,
  );
  if (picked === reload) {
    await vscode.commands.executeCommand('workbench.action.reloadWindow');
  }
}

export async function deactivate(): Promise<void> {
  try {
    if (client?.isRunning()) {
      await client.stop();
    }
  } finally {
    client = undefined;
    serverProcess?.kill(); // no-op when it already exited after `exit`
    serverProcess = undefined;
  }
}
