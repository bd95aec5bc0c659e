// The save lock in the status bar, and what the lock commands do on the client side.
//
// The server advertises shadowtab.lock.* as executeCommand commands, so vscode-languageclient
// registers them as VS Code commands itself (registering them here too would clash). This
// class hooks in through the client's executeCommand middleware: it asks commit / discard /
// keep before a bare `take` (or *Choose files…*: the pending files picker, the lock left as
// it is), and shows each result in the status bar. The holder also comes
// from `shadowtab/lockChanged` notifications (sent to every editor when it changes) and from
// `shadowtab.lock.status` when the client (re)starts.

import * as vscode from 'vscode';
import { ExecuteCommandRequest, type LanguageClient } from 'vscode-languageclient/node';
import { PENDING_FILES_COMMAND } from './pendingFiles';
import { LockState, parseLockState, SERVER_COMMANDS, TakeMode } from './protocol';

interface TakeChoice extends vscode.QuickPickItem {
  mode: TakeMode | 'choose';
}

const TAKE_CHOICES: TakeChoice[] = [
  { label: 'Commit', description: "write the model's shadow edits to disk", mode: 'commit' },
  { label: 'Discard', description: "drop the model's shadow edits", mode: 'discard' },
  { label: 'Keep', description: 'keep them pending as a reviewable change set', mode: 'keep' },
  {
    label: 'Choose files…',
    description: 'commit or discard some of them; the lock stays as it is',
    mode: 'choose',
  },
];

const LOCK_COMMANDS: ReadonlySet<string> = new Set([
  SERVER_COMMANDS.lockStatus,
  SERVER_COMMANDS.lockTake,
  SERVER_COMMANDS.lockRelease,
  SERVER_COMMANDS.lockToggle,
]);

type ExecuteNext = (command: string, args: unknown[]) => vscode.ProviderResult<unknown>;

export class LockStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem(
      'shadowtab.lock',
      vscode.StatusBarAlignment.Right,
      100,
    );
    this.item.name = 'shadowtab save lock';
    this.item.command = SERVER_COMMANDS.lockToggle;
    this.item.text = '$(lock) shadowtab';
    this.item.tooltip = 'shadowtab save lock: waiting for the server';
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }

  /** Called with the params of every `shadowtab/lockChanged` notification. */
  onLockChanged(params: unknown): void {
    this.show(parseLockState(params));
  }

  /** Asks the server who holds the lock (after start and restart). */
  async refresh(client: LanguageClient): Promise<void> {
    try {
      const params = { command: SERVER_COMMANDS.lockStatus, arguments: [] };
      this.show(parseLockState(await client.sendRequest(ExecuteCommandRequest.type, params)));
    } catch {
      // No workspace root known to the server yet: the first lockChanged will tell.
    }
  }

  /** executeCommand middleware: runs every server command, adding the lock's UI. */
  async execute(command: string, args: unknown[], next: ExecuteNext): Promise<unknown> {
    if (!LOCK_COMMANDS.has(command)) {
      return next(command, args);
    }
    if (command === SERVER_COMMANDS.lockTake && args.length === 0) {
      const mode = await this.pickTakeMode();
      if (mode === undefined) {
        return undefined;
      }
      if (mode === 'choose') {
        await vscode.commands.executeCommand(PENDING_FILES_COMMAND);
        return undefined;
      }
      args = [{ mode }];
    }
    try {
      const result = await next(command, args);
      this.show(parseLockState(result));
      return result;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      void vscode.window.showErrorMessage(`shadowtab: ${command} failed: ${message}`);
      return undefined;
    }
  }

  private async pickTakeMode(): Promise<TakeChoice['mode'] | undefined> {
    const picked = await vscode.window.showQuickPick(TAKE_CHOICES, {
      title: 'shadowtab: take the save lock back',
      placeHolder: "What should happen to the model's edits in the shadow workspace?",
    });
    return picked?.mode;
  }

  private show(state: LockState | undefined): void {
    if (!state) {
      return;
    }
    // pending: the shadow workspace differs from the disk (unsaved or model edits).
    const marker = state.pending ? ' $(circle-filled)' : '';
    this.item.text =
      state.holder === 'model' ? `$(robot) model${marker}` : `$(person) user${marker}`;
    const where = state.root ? ` for ${state.root}` : '';
    const pending = state.pending ? '; the shadow workspace has changes not on disk' : '';
    this.item.tooltip = `shadowtab save lock: held by ${state.holder}${where}${pending}. Click to toggle.`;
    this.item.backgroundColor =
      state.holder === 'model'
        ? new vscode.ThemeColor('statusBarItem.warningBackground')
        : undefined;
  }
}
