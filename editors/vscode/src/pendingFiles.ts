// The pending files picker (*shadowtab: Pending Files…*): the files the model or an agent
// edited, deleted or renamed in the shadow workspace and not yet on disk, of which the user
// commits or discards some, the save lock left with whoever holds it. It asks the server
// for `shadowtab.shadow.pending`, then sends `shadowtab.shadow.commit` or `.discard` with
// the picked files; a rename is one entry (the server takes its old file along).

import * as vscode from 'vscode';
import { ExecuteCommandRequest, type LanguageClient } from 'vscode-languageclient/node';
import {
  type PendingChange,
  parsePendingChanges,
  parseTakeSomeResult,
  SERVER_COMMANDS,
  type TakeSomeResult,
} from './protocol';

/** Registered in extension.ts (by its literal id, which the manifest test reads). */
export const PENDING_FILES_COMMAND = 'shadowtab.pendingFiles';

type Action = 'commit' | 'discard';

interface FileItem extends vscode.QuickPickItem {
  uri: string;
}

interface ActionItem extends vscode.QuickPickItem {
  action: Action;
}

const ACTIONS: ActionItem[] = [
  { label: 'Commit', description: 'write them to disk', action: 'commit' },
  {
    label: 'Discard',
    description: "drop the model's edits, deletes and renames of them",
    action: 'discard',
  },
];

export class PendingFilesPicker {
  constructor(
    private readonly client: () => LanguageClient | undefined,
    /** Called after a commit or discard (the lock's pending marker may have changed). */
    private readonly changed: () => void,
  ) {}

  /** The whole dialog: list, pick files, pick Commit or Discard, send, show the result. */
  async run(): Promise<void> {
    const client = this.client();
    if (!client) {
      void vscode.window.showWarningMessage('shadowtab: the language server is not running.');
      return;
    }
    const changes = await this.request(client, SERVER_COMMANDS.shadowPending, {}, 'pending');
    if (changes === undefined) {
      return;
    }
    const items = fileItems(parsePendingChanges(changes));
    if (items.length === 0) {
      void vscode.window.showInformationMessage(
        'shadowtab: nothing is pending in the shadow workspace.',
      );
      return;
    }
    const picked = await vscode.window.showQuickPick(items, {
      canPickMany: true,
      title: 'shadowtab: pending files (edited, deleted or renamed in the shadow, not on disk)',
      placeHolder: 'Check the files to commit or discard, then press Enter',
    });
    if (!picked || picked.length === 0) {
      return;
    }
    const count = picked.length === 1 ? picked[0].label : `${picked.length} files`;
    const action = await vscode.window.showQuickPick(ACTIONS, {
      title: `shadowtab: ${count}`,
      placeHolder: 'Commit them to disk or discard them? The save lock stays as it is.',
    });
    if (!action) {
      return;
    }
    const command =
      action.action === 'commit' ? SERVER_COMMANDS.shadowCommit : SERVER_COMMANDS.shadowDiscard;
    const files = picked.map((item) => item.uri);
    const result = await this.request(client, command, { files }, action.action);
    if (result !== undefined) {
      showResult(action.action, parseTakeSomeResult(result));
      this.changed();
    }
  }

  /** One server command; a refusal (not pending, no workspace) is shown and gives undefined. */
  private async request(
    client: LanguageClient,
    command: string,
    options: Record<string, unknown>,
    what: string,
  ): Promise<unknown> {
    try {
      const params = { command, arguments: [options] };
      const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, params);
      return result ?? {};
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      void vscode.window.showErrorMessage(`shadowtab: ${what} failed: ${message}`);
      return undefined;
    }
  }
}

/** One item per change; a rename's old file is left out when its new file is listed. */
function fileItems(changes: PendingChange[]): FileItem[] {
  const listed = new Set(changes.map((change) => change.uri));
  return changes
    .filter((change) => !(change.renamedTo !== undefined && listed.has(change.renamedTo)))
    .map((change) => ({
      label: relative(change.uri),
      description: describe(change),
      uri: change.uri,
    }));
}

function describe(change: PendingChange): string {
  switch (change.change) {
    case 'renamed':
      return change.from ? `renamed from ${relative(change.from)}` : 'renamed';
    case 'deleted':
      return change.renamedTo ? `deleted (renamed to ${relative(change.renamedTo)})` : 'deleted';
    case 'created':
      return 'new file';
    default:
      return 'edited';
  }
}

function relative(uri: string): string {
  return vscode.workspace.asRelativePath(vscode.Uri.parse(uri), false);
}

function names(uris: string[]): string {
  return uris.map(relative).join(', ');
}

/** What was done, as a notification; conflicts (those files stay pending) as an error. */
function showResult(action: Action, result: TakeSomeResult): void {
  const done: string[] = [];
  if (result.written.length > 0) done.push(`wrote ${names(result.written)}`);
  if (result.removed.length > 0) done.push(`removed ${names(result.removed)}`);
  if (result.discarded.length > 0) done.push(`discarded ${names(result.discarded)}`);
  if (result.kept.length > 0) done.push(`kept your own edits in ${names(result.kept)}`);
  const pending = result.pending.length;
  const left = pending === 0 ? 'nothing is pending now' : `${pending} still pending`;
  const what = `shadowtab: ${action}: ${done.length > 0 ? done.join('; ') : 'nothing done'}`;
  if (result.conflicts.length === 0) {
    void vscode.window.showInformationMessage(`${what} (${left}).`);
    return;
  }
  const conflicts = result.conflicts
    .map((conflict) => `${relative(conflict.uri)}: ${conflict.error}`)
    .join('; ');
  void vscode.window.showErrorMessage(
    `${what}. Conflict, left pending: ${conflicts} (${left}).`,
  );
}
