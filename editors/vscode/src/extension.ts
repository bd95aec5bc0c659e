// The shadowtab VS Code extension: launches `shadowtab lsp` (the stdio pump into the
// per-user daemon) as a language server. Ghost text comes from the server's
// textDocument/inlineCompletion, which vscode-languageclient 10 registers by itself; this
// file adds the save lock in the status bar and next-edit suggestions.

import * as vscode from 'vscode';
import {
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import { LockStatusBar } from './lockStatus';
import { NextEditController, NextEditSettings } from './nextEdit';
import { LOCK_CHANGED_METHOD } from './protocol';

let client: LanguageClient | undefined;

function settings(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('shadowtab');
}

function serverOptions(): ServerOptions {
  const command = settings().get<string>('command', 'shadowtab');
  const args = settings().get<string[]>('args', ['lsp']);
  return { command, args, transport: TransportKind.stdio };
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

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const selector = documentSelector();
  const lock = new LockStatusBar();
  const clientOptions: LanguageClientOptions = {
    documentSelector: selector,
    // shadowtab.lock.* are the server's commands, registered by the client: add their UI.
    middleware: { executeCommand: (command, args, next) => lock.execute(command, args, next) },
  };
  client = new LanguageClient('shadowtab', 'shadowtab', serverOptions(), clientOptions);
  const activeClient = client;
  const nextEdit = new NextEditController(activeClient, selector, nextEditSettings);
  context.subscriptions.push(
    lock,
    nextEdit,
    activeClient.onNotification(LOCK_CHANGED_METHOD, (params: unknown) =>
      lock.onLockChanged(params),
    ),
    vscode.commands.registerCommand('shadowtab.nextEdit.accept', () => nextEdit.accept()),
    vscode.commands.registerCommand('shadowtab.nextEdit.dismiss', () => nextEdit.dismiss()),
    vscode.commands.registerCommand('shadowtab.restart', () => activeClient.restart()),
    // Also after a restart (the daemon went away): no lockChanged tells a new session.
    activeClient.onDidChangeState((event) => {
      if (event.newState === State.Running) {
        void lock.refresh(activeClient);
      }
    }),
  );
  try {
    await activeClient.start();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    void vscode.window.showErrorMessage(
      `shadowtab: could not start \`${serverOptionsText()}\` (${message}). ` +
        'Is shadowtab installed? Set `shadowtab.command` to its full path.',
    );
  }
}

function serverOptionsText(): string {
  return [
    settings().get<string>('command', 'shadowtab'),
    ...settings().get<string[]>('args', ['lsp']),
  ].join(' ');
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
