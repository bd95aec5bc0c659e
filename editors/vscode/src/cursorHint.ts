// Tells the server where the cursor comes to rest when the user moves it
// (`shadowtab/cursorMoved`): the server prefills the model's prompt there, so the first
// keystrokes at a new place find it warm instead of waiting for it.

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { CURSOR_MOVED_METHOD } from './protocol';

export interface CursorHintSettings {
  enabled: boolean;
  debounceMs: number;
}

/** Moves made with the mouse or the keyboard (not by an edit or a command). */
const USER_MOVES = new Set([
  vscode.TextEditorSelectionChangeKind.Mouse,
  vscode.TextEditorSelectionChangeKind.Keyboard,
]);

export class CursorHints implements vscode.Disposable {
  private readonly subscriptions: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly clientOf: () => LanguageClient | undefined,
    private readonly selector: vscode.DocumentSelector,
    private readonly settings: () => CursorHintSettings,
  ) {
    this.subscriptions.push(
      vscode.window.onDidChangeTextEditorSelection((event) => this.onSelection(event)),
    );
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.subscriptions.forEach((subscription) => subscription.dispose());
  }

  private onSelection(event: vscode.TextEditorSelectionChangeEvent): void {
    const { enabled, debounceMs } = this.settings();
    if (
      !enabled ||
      event.kind === undefined ||
      !USER_MOVES.has(event.kind) ||
      !vscode.languages.match(this.selector, event.textEditor.document)
    ) {
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.send(event.textEditor), debounceMs);
  }

  private send(editor: vscode.TextEditor): void {
    const client = this.clientOf();
    if (!client || editor !== vscode.window.activeTextEditor) {
      return;
    }
    const { line, character } = editor.selection.active;
    void client.sendNotification(CURSOR_MOVED_METHOD, {
      textDocument: { uri: client.code2ProtocolConverter.asUri(editor.document.uri) },
      position: { line, character },
    });
  }
}
