// Next-edit suggestions: after the user stops typing, ask the server for `shadowtab/nextEdit`,
// show the first edit as a diff decoration (old text struck through, new text beside it),
// cycle through the others (Alt+] / Alt+[), and apply the one shown on Tab. A newer
// keystroke cancels the request in flight ($/cancelRequest).

import * as vscode from 'vscode';
import { ExecuteCommandRequest, type LanguageClient } from 'vscode-languageclient/node';
import {
  DID_SHOW_INLINE_EDIT_METHOD,
  NEXT_EDIT_METHOD,
  NextEdit,
  NextEditParams,
  parseNextEditResult,
} from './protocol';

const VISIBLE_CONTEXT_KEY = 'shadowtab.nextEditVisible';
const MAX_INLINE_PREVIEW = 80;

interface ShownEdit {
  client: LanguageClient;
  editor: vscode.TextEditor;
  version: number;
  range: vscode.Range;
  edit: NextEdit;
  edits: NextEdit[]; // the answer's edits of this document; `edit` is edits[index]
  index: number;
}

export interface NextEditSettings {
  enabled: boolean;
  debounceMs: number;
}

export class NextEditController implements vscode.Disposable {
  private readonly removed = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
    textDecoration: 'line-through',
  });
  // "(2/3)" after the new text when the answer holds several edits (made before `inserted`:
  // of two decorations at one place, VS Code draws the one made later nearer the text)
  private readonly place = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0 0 0.5em' },
  });
  private readonly inserted = vscode.window.createTextEditorDecorationType({
    after: {
      backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'),
      margin: '0 0 0 0.5em',
    },
  });
  private readonly subscriptions: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight: vscode.CancellationTokenSource | undefined;
  private shown: ShownEdit | undefined;

  constructor(
    private readonly clientOf: () => LanguageClient | undefined,
    private readonly selector: vscode.DocumentSelector,
    private readonly settings: () => NextEditSettings,
  ) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeTextDocument((event) => this.onDocumentChanged(event)),
      vscode.window.onDidChangeActiveTextEditor(() => this.dismiss()),
    );
  }

  dispose(): void {
    this.cancelPending();
    this.dismiss();
    this.removed.dispose();
    this.inserted.dispose();
    this.place.dispose();
    this.subscriptions.forEach((subscription) => subscription.dispose());
  }

  /** Applies the shown edit if the document is still the version it was computed for. */
  async accept(): Promise<void> {
    const shown = this.shown;
    this.dismiss();
    if (!shown || shown.editor.document.version !== shown.version) {
      return;
    }
    const applied = await shown.editor.edit((builder) =>
      builder.replace(shown.range, shown.edit.text),
    );
    if (applied && shown.edit.command) {
      await this.runEditCommand(shown.client, shown.edit.command);
    }
  }

  /** Shows the next edit of the answer (`delta` 1; -1: the previous one), wrapping around,
   * if the document is still the version it was computed for. */
  cycle(delta: number): void {
    const shown = this.shown;
    if (!shown || shown.editor.document.version !== shown.version) {
      return;
    }
    const count = shown.edits.length;
    const index = (((shown.index + delta) % count) + count) % count;
    this.show(shown.client, shown.editor, shown.version, shown.edits, index);
  }

  dismiss(): void {
    if (this.shown) {
      this.shown.editor.setDecorations(this.removed, []);
      this.shown.editor.setDecorations(this.inserted, []);
      this.shown.editor.setDecorations(this.place, []);
      this.shown = undefined;
    }
    void vscode.commands.executeCommand('setContext', VISIBLE_CONTEXT_KEY, false);
  }

  private onDocumentChanged(event: vscode.TextDocumentChangeEvent): void {
    if (
      event.contentChanges.length === 0 ||
      !vscode.languages.match(this.selector, event.document)
    ) {
      return;
    }
    this.dismiss();
    this.cancelPending();
    const { enabled, debounceMs } = this.settings();
    if (enabled) {
      this.timer = setTimeout(() => void this.requestFor(event.document), debounceMs);
    }
  }

  private cancelPending(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.inFlight?.cancel();
    this.inFlight = undefined;
  }

  private async requestFor(document: vscode.TextDocument): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const client = this.clientOf();
    if (!editor || editor.document !== document || !client) {
      return;
    }
    const version = document.version;
    const tokenSource = new vscode.CancellationTokenSource();
    this.inFlight = tokenSource;
    const params: NextEditParams = {
      textDocument: { uri: client.code2ProtocolConverter.asUri(document.uri), version },
      position: client.code2ProtocolConverter.asPosition(editor.selection.active),
    };
    let result: unknown;
    try {
      result = await client.sendRequest(NEXT_EDIT_METHOD, params, tokenSource.token);
    } catch {
      return; // cancelled by a newer keystroke, or the server declined: nothing to show
    } finally {
      tokenSource.dispose();
      if (this.inFlight === tokenSource) {
        this.inFlight = undefined;
      }
    }
    if (!tokenSource.token.isCancellationRequested && document.version === version) {
      const edits = parseNextEditResult(result).filter(
        (candidate) =>
          candidate.textDocument.uri === params.textDocument.uri &&
          (candidate.textDocument.version ?? version) === version,
      );
      if (edits.length > 0) {
        this.show(client, editor, version, edits, 0);
      }
    }
  }

  private show(
    client: LanguageClient,
    editor: vscode.TextEditor,
    version: number,
    edits: NextEdit[],
    index: number,
  ): void {
    const edit = edits[index];
    const range = client.protocol2CodeConverter.asRange(edit.range);
    const place = edits.length > 1 ? `${index + 1}/${edits.length}` : '';
    const hover = new vscode.MarkdownString();
    const keys = place ? `${place}, Alt+] for the next; ` : '';
    hover.appendMarkdown(`**shadowtab next edit** (${keys}Tab to accept, Esc to dismiss)\n\n`);
    hover.appendCodeblock(diffPreview(editor.document.getText(range), edit.text), 'diff');
    editor.setDecorations(this.removed, range.isEmpty ? [] : [{ range, hoverMessage: hover }]);
    const end = new vscode.Range(range.end, range.end);
    const after = { contentText: inlinePreview(edit.text) };
    editor.setDecorations(this.inserted, [
      { range: end, hoverMessage: hover, renderOptions: { after } },
    ]);
    const counter = { contentText: `(${place})` };
    editor.setDecorations(
      this.place,
      place ? [{ range: end, renderOptions: { after: counter } }] : [],
    );
    this.shown = { client, editor, version, range, edit, edits, index };
    void vscode.commands.executeCommand('setContext', VISIBLE_CONTEXT_KEY, true);
    if (edit.command) {
      // Copilot's acceptance telemetry, which shadowtab counts too.
      void client.sendNotification(DID_SHOW_INLINE_EDIT_METHOD, {
        item: { command: edit.command },
      });
    }
  }

  /** Runs the command an edit carries: on the server when it offers it, else in VS Code. */
  private async runEditCommand(
    client: LanguageClient,
    command: { command: string; arguments?: unknown[] },
  ): Promise<void> {
    const serverCommands =
      client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
    try {
      if (serverCommands.includes(command.command)) {
        await client.sendRequest(ExecuteCommandRequest.type, {
          command: command.command,
          arguments: command.arguments,
        });
      } else {
        await vscode.commands.executeCommand(command.command, ...(command.arguments ?? []));
      }
    } catch {
      // The edit is applied either way; the command is bookkeeping (acceptance counts).
    }
  }
}

/** One line of the new text for the `after` decoration; the hover shows all of it. */
function inlinePreview(text: string): string {
  const lines = text.split('\n');
  const first =
    lines[0].length > MAX_INLINE_PREVIEW ? `${lines[0].slice(0, MAX_INLINE_PREVIEW)}…` : lines[0];
  const more = lines.length > 1 ? `  ⏎ +${lines.length - 1} line(s)` : '';
  return `${first || '⏎'}${more}`;
}

function diffPreview(oldText: string, newText: string): string {
  const removed = oldText.length > 0 ? oldText.split('\n').map((line) => `- ${line}`) : [];
  const added = newText.length > 0 ? newText.split('\n').map((line) => `+ ${line}`) : [];
  return [...removed, ...added].join('\n');
}
