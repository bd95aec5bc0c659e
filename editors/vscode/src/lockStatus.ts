// The save lock in the status bar, and the commands that move it. The holder comes from
// `shadowtab/lockChanged` notifications (sent to every editor when it changes) and from
// `shadowtab.lock.status` when the client starts.

import * as vscode from 'vscode';
import { ExecuteCommandRequest, type LanguageClient } from 'vscode-languageclient/node';
import { LockState, parseLockState, SERVER_COMMANDS, TakeMode } from './protocol';

interface TakeChoice extends vscode.QuickPickItem {
  mode: TakeMode;
}

const TAKE_CHOICES: TakeChoice[] = [
  { label: 'Commit', description: "write the model's shadow edits to disk", mode: 'commit' },
  { label: 'Discard', description: "drop the model's shadow edits", mode: 'discard' },
  { label: 'Keep', description: 'keep them pending as a reviewable change set', mode: 'keep' },
];

export class LockStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor(private readonly client: LanguageClient) {
    this.item = vscode.window.createStatusBarItem('shadowtab.lock', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'shadowtab save lock';
    this.item.command = 'shadowtab.lock.toggle';
    this.showUnknown();
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }

  /** Called with the params of every `shadowtab/lockChanged` notification. */
  onLockChanged(params: unknown): void {
    const state = parseLockState(params);
    if (state) {
      this.show(state);
    }
  }

  async refresh(): Promise<void> {
    this.show(parseLockState(await this.runServerCommand(SERVER_COMMANDS.lockStatus, [])));
  }

  async toggle(): Promise<void> {
    this.show(parseLockState(await this.runServerCommand(SERVER_COMMANDS.lockToggle, [])));
  }

  /** Takes the lock back for the user, asking what to do with the model's pending edits. */
  async take(mode?: TakeMode): Promise<void> {
    const chosen = mode ?? (await this.pickTakeMode());
    if (chosen === undefined) {
      return;
    }
    const result = await this.runServerCommand(SERVER_COMMANDS.lockTake, [{ mode: chosen }]);
    this.show(parseLockState(result));
  }

  private async pickTakeMode(): Promise<TakeMode | undefined> {
    const picked = await vscode.window.showQuickPick(TAKE_CHOICES, {
      title: 'shadowtab: take the save lock back',
      placeHolder: "What should happen to the model's edits in the shadow workspace?",
    });
    return picked?.mode;
  }

  private async runServerCommand(command: string, args: unknown[]): Promise<unknown> {
    try {
      return await this.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      void vscode.window.showErrorMessage(`shadowtab: ${command} failed: ${message}`);
      return undefined;
    }
  }

  private show(state: LockState | undefined): void {
    if (!state) {
      return;
    }
    const pending = state.pending ? ' (pending edits)' : '';
    this.item.text = state.holder === 'model' ? `$(robot) model${pending}` : `$(person) user${pending}`;
    this.item.tooltip = `shadowtab save lock: held by ${state.holder}${
      state.root ? ` for ${state.root}` : ''
    }${pending}. Click to toggle.`;
    this.item.backgroundColor =
      state.holder === 'model' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  private showUnknown(): void {
    this.item.text = '$(lock) shadowtab';
    this.item.tooltip = 'shadowtab save lock: waiting for the server';
  }
}
