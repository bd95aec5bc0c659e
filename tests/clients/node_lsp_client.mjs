// A real LSP client built on the library VS Code's client uses
// (vscode-languageserver-protocol / vscode-jsonrpc from editors/vscode/node_modules),
// driving `shadowtab lsp` over stdio. It prints one JSON line per check
// ({"check", "ok", "detail"}) and exits 0 only when every check passed.
//
// usage: node node_lsp_client.mjs '<json config>'
//   config: {nodeModules, command: [exe, ...args], file, scenario: "features" | "peer",
//            waitTimeoutMs, extensionOut?}
// With extensionOut (editors/vscode compiled by tsc), the extension's own parsers read
// the server's real replies and notifications too.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const config = JSON.parse(process.argv[2]);
const require = createRequire(join(config.nodeModules, '..', 'package.json'));
const lsp = require('vscode-languageserver-protocol/node');

const WAIT_MS = config.waitTimeoutMs ?? 20000;
const extension = config.extensionOut ? require(join(config.extensionOut, 'protocol.js')) : null;
const SERVER_COMMANDS = [
  'shadowtab.lock.status',
  'shadowtab.lock.take',
  'shadowtab.lock.release',
  'shadowtab.lock.toggle',
  'shadowtab.shadow.applyEdit',
  'shadowtab.shadow.diff',
];

let failures = 0;
function report(check, ok, detail = null) {
  if (!ok) failures += 1;
  process.stdout.write(JSON.stringify({ check, ok: Boolean(ok), detail }) + '\n');
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `predicate` until it returns a truthy value or WAIT_MS passes. */
async function waitFor(predicate, timeoutMs = WAIT_MS) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = predicate();
    if (value) return value;
    await sleep(25);
  }
  return predicate();
}

/** The server process and a protocol connection on its stdio, with what it sent us. */
function startServer() {
  const [exe, ...args] = config.command;
  const child = spawn(exe, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const connection = lsp.createProtocolConnection(
    new lsp.StreamMessageReader(child.stdout),
    new lsp.StreamMessageWriter(child.stdin),
  );
  const seen = { diagnostics: new Map(), lockChanged: [], showMessage: [], progress: 0 };
  connection.onNotification(lsp.PublishDiagnosticsNotification.type, (params) => {
    seen.diagnostics.set(params.uri, params.diagnostics);
  });
  connection.onNotification('shadowtab/lockChanged', (params) => seen.lockChanged.push(params));
  connection.onNotification('window/showMessage', (params) => seen.showMessage.push(params));
  connection.onNotification('window/logMessage', () => {});
  connection.onNotification('$/progress', () => (seen.progress += 1));
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('client/registerCapability', () => null);
  connection.onRequest('workspace/configuration', (params) => params.items.map(() => null));
  connection.onError(() => {});
  connection.listen();
  const server = { child, connection, seen, stderr: () => stderr, exitExpected: false };
  server.exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  // A server that dies mid-test would leave requests pending forever: fail loudly instead.
  void server.exited.then((exit) => {
    if (!server.exitExpected) {
      report('the server stays up', false, { exit, stderr: stderr.slice(-4000) });
      process.exit(1);
    }
  });
  return server;
}

const CLIENT_CAPABILITIES = {
  general: { positionEncodings: ['utf-16'] },
  window: { workDoneProgress: true, showMessage: {} },
  workspace: { executeCommand: { dynamicRegistration: false }, workspaceFolders: true },
  textDocument: {
    synchronization: { dynamicRegistration: false, didSave: true },
    publishDiagnostics: { relatedInformation: false, versionSupport: true },
    inlineCompletion: { dynamicRegistration: false },
  },
};

async function initialize(server, rootPath) {
  const rootUri = pathToFileURL(rootPath).href;
  const result = await server.connection.sendRequest(lsp.InitializeRequest.type, {
    processId: process.pid,
    clientInfo: { name: 'shadowtab-node-test', version: '1' },
    rootUri,
    workspaceFolders: [{ uri: rootUri, name: 'project' }],
    capabilities: CLIENT_CAPABILITIES,
  });
  await server.connection.sendNotification(lsp.InitializedNotification.type, {});
  return result.capabilities;
}

function checkCapabilities(caps) {
  report(
    'advertises inlineCompletionProvider',
    Boolean(caps.inlineCompletionProvider),
    caps.inlineCompletionProvider,
  );
  const sync =
    typeof caps.textDocumentSync === 'object'
      ? caps.textDocumentSync.change
      : caps.textDocumentSync;
  report(
    'incremental text sync',
    sync === lsp.TextDocumentSyncKind.Incremental,
    caps.textDocumentSync,
  );
  const commands = caps.executeCommandProvider?.commands ?? [];
  const missing = SERVER_COMMANDS.filter((name) => !commands.includes(name));
  report('advertises the shadowtab commands', missing.length === 0, { missing, commands });
}

function codesOf(diagnostics) {
  return (diagnostics ?? []).map((d) => String(d.code ?? ''));
}

async function waitForDiagnostic(server, uri, predicate) {
  return waitFor(() => {
    const diagnostics = server.seen.diagnostics.get(uri);
    return diagnostics !== undefined && predicate(diagnostics) ? diagnostics : null;
  });
}

async function request(server, method, params) {
  try {
    return { result: await server.connection.sendRequest(method, params) };
  } catch (error) {
    return { error: { code: error.code, message: error.message } };
  }
}

async function command(server, name, args = []) {
  return request(server, lsp.ExecuteCommandRequest.method, { command: name, arguments: args });
}

function holderOf(value) {
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) return holderOf(value[0]);
  if (value.holder === 'user' || value.holder === 'model') return value.holder;
  for (const key of ['lock', 'state', 'status']) {
    const nested = holderOf(value[key]);
    if (nested) return nested;
  }
  return holderOf(value.workspaces);
}

/** Runs a lock command and waits for the lockChanged notification naming `holder`. */
async function moveLock(server, name, args, holder) {
  const before = server.seen.lockChanged.length;
  const reply = await command(server, name, args);
  report(`${name} ${JSON.stringify(args)} answers`, !reply.error, reply);
  const event = await waitFor(() =>
    server.seen.lockChanged.slice(before).find((params) => holderOf(params) === holder),
  );
  report(
    `${name} sends lockChanged(${holder})`,
    Boolean(event),
    server.seen.lockChanged.slice(before),
  );
  if (extension) {
    const parsed = [extension.parseLockState(reply.result), extension.parseLockState(event)];
    const ok = parsed.every((state) => state?.holder === holder);
    report(`extension parses ${name} and its lockChanged`, ok, parsed);
  }
  return event;
}

async function openSample(server) {
  const uri = pathToFileURL(config.file).href;
  const text = readFileSync(config.file, 'utf8');
  await server.connection.sendNotification(lsp.DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: 'python', version: 1, text },
  });
  server.version = 1;
  return uri;
}

async function change(server, uri, range, text) {
  server.version += 1;
  await server.connection.sendNotification(lsp.DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: server.version },
    contentChanges: [{ range, text }],
  });
}

function range(startLine, startChar, endLine, endChar) {
  return {
    start: { line: startLine, character: startChar },
    end: { line: endLine, character: endChar },
  };
}

async function checkDiagnostics(server, uri) {
  const first = await waitForDiagnostic(server, uri, (d) => codesOf(d).includes('F401'));
  report(
    'diagnostics: ruff F401 for `import os`',
    first?.some((d) => d.code === 'F401' && d.range.start.line === 0),
    first,
  );
  await change(server, uri, range(0, 0, 1, 0), '');
  const cleared = await waitForDiagnostic(server, uri, (d) => !codesOf(d).includes('F401'));
  report('diagnostics follow an incremental delete', Boolean(cleared), cleared);
  await change(server, uri, range(0, 0, 0, 0), 'import sys\n');
  const again = await waitForDiagnostic(server, uri, (d) =>
    d.some((x) => x.code === 'F401' && /sys/.test(x.message)),
  );
  report(
    'diagnostics follow an incremental insert',
    Boolean(again),
    again ?? server.seen.diagnostics.get(uri),
  );
}

/** A flood of keystrokes (one didChange each, no waiting): none is lost or reordered. */
async function checkFlood(server, uri) {
  const line = 4; // `    return 'hello ' + name`
  const end = "return 'hello ' + name".length + 4;
  const typed = 'abcdefghij'.repeat(30);
  for (let i = 0; i < typed.length; i += 1) {
    await change(server, uri, range(line, end + i, line, end + i), typed[i]);
  }
  const name = `name${typed}`;
  const undefinedName = await waitForDiagnostic(server, uri, (d) =>
    d.some((x) => x.code === 'F821' && x.message.includes(name)),
  );
  report(
    '300 didChange in a row: all applied, in order',
    Boolean(undefinedName),
    server.seen.diagnostics.get(uri),
  );
  await change(server, uri, range(line, end, line, end + typed.length), '');
  const back = await waitForDiagnostic(server, uri, (d) => !d.some((x) => x.code === 'F821'));
  report('the flood undone in one change', Boolean(back), back);
}

async function checkPredictions(server, uri) {
  const position = { line: 4, character: 4 };
  const inline = await request(server, lsp.InlineCompletionRequest.method, {
    textDocument: { uri },
    position,
    context: { triggerKind: lsp.InlineCompletionTriggerKind.Invoked },
  });
  const items = Array.isArray(inline.result) ? inline.result : inline.result?.items;
  report(
    'textDocument/inlineCompletion answers with items',
    !inline.error && Array.isArray(items),
    inline,
  );
  const params = { textDocument: { uri, version: server.version }, position };
  for (const method of ['shadowtab/nextEdit', 'textDocument/copilotInlineEdit']) {
    const reply = await request(server, method, params);
    report(
      `${method} answers {edits: [...]}`,
      !reply.error && Array.isArray(reply.result?.edits),
      reply,
    );
    if (extension && !reply.error) {
      const parsed = extension.parseNextEditResult(reply.result);
      report(
        `extension parses the ${method} result`,
        parsed.length === reply.result.edits.length,
        parsed,
      );
    }
  }
}

async function checkLock(server) {
  const status = await command(server, 'shadowtab.lock.status');
  report(
    'lock.status: the user holds the lock at first',
    holderOf(status.result) === 'user',
    status,
  );
  await moveLock(server, 'shadowtab.lock.release', [], 'model');
  const held = await command(server, 'shadowtab.lock.status');
  report('lock.status: the model holds it after release', holderOf(held.result) === 'model', held);
  await moveLock(server, 'shadowtab.lock.take', [{ mode: 'discard' }], 'user');
  await moveLock(server, 'shadowtab.lock.toggle', [], 'model');
  await moveLock(server, 'shadowtab.lock.take', [{ mode: 'keep' }], 'user');
  const diff = await command(server, 'shadowtab.shadow.diff');
  report('shadow.diff answers', !diff.error, diff);
}

async function checkBadInput(server, uri) {
  const unknown = await request(server, 'shadowtab/noSuchMethod', {});
  report(
    'unknown method: MethodNotFound',
    unknown.error?.code === lsp.ErrorCodes.MethodNotFound,
    unknown,
  );
  const wrong = await request(server, 'shadowtab/nextEdit', {
    textDocument: { uri, version: server.version },
    position: 'here',
  });
  report(
    'wrong param types: InvalidParams',
    wrong.error?.code === lsp.ErrorCodes.InvalidParams,
    wrong,
  );
  const far = await request(server, 'shadowtab/nextEdit', {
    textDocument: { uri, version: server.version },
    position: { line: 9999, character: 9999 },
  });
  report(
    'position out of range: an answer, not a crash',
    far.result !== undefined || far.error !== undefined,
    far,
  );
  const unopened = await request(server, 'shadowtab/nextEdit', {
    textDocument: { uri: uri.replace('sample.py', 'never_opened.py'), version: 1 },
    position: { line: 0, character: 0 },
  });
  report(
    'document never opened: an answer, not a crash',
    unopened.result !== undefined || unopened.error !== undefined,
    unopened,
  );
  const alive = await command(server, 'shadowtab.lock.status');
  report('the server still answers after bad input', !alive.error, alive);
}

async function shutdown(server) {
  const reply = await request(server, lsp.ShutdownRequest.method, undefined);
  report('shutdown answers', !reply.error, reply);
  server.exitExpected = true;
  await server.connection.sendNotification(lsp.ExitNotification.type);
  const exit = await Promise.race([server.exited, sleep(WAIT_MS).then(() => null)]);
  report('the server process exits after exit', exit !== null && exit.code === 0, {
    exit,
    stderr: server.stderr(),
  });
}

async function featuresScenario() {
  const server = startServer();
  const root = join(config.file, '..');
  checkCapabilities(await initialize(server, root));
  const uri = await openSample(server);
  await checkDiagnostics(server, uri);
  await checkFlood(server, uri);
  await checkPredictions(server, uri);
  await checkLock(server);
  await checkBadInput(server, uri);
  await server.connection.sendNotification(lsp.DidCloseTextDocumentNotification.type, {
    textDocument: { uri },
  });
  await shutdown(server);
}

/** Against a server whose predictor suggests "hello" -> "goodbye" and ghost text ".title()"
 * (fixed_predictor_lsp.py): the results in LSP coordinates, as the extension reads them. */
async function suggestionsScenario() {
  const server = startServer();
  await initialize(server, join(config.file, '..'));
  const uri = await openSample(server);
  const reply = await request(server, 'shadowtab/nextEdit', {
    textDocument: { uri, version: 1 },
    position: { line: 4, character: 4 },
  });
  const edit = reply.result?.edits?.[0];
  const where = edit?.range;
  report(
    'nextEdit: the predicted edit in UTF-16 line/character',
    edit?.text === 'goodbye' &&
      where.start.line === 4 &&
      where.start.character === 12 &&
      where.end.line === 4 &&
      where.end.character === 17 &&
      edit.textDocument.uri === uri &&
      edit.textDocument.version === 1,
    reply,
  );
  if (extension) {
    const parsed = extension.parseNextEditResult(reply.result);
    report('extension reads the edit', parsed.length === 1 && parsed[0].text === 'goodbye', parsed);
  }
  if (edit?.command) {
    const accepted = await command(server, edit.command.command, edit.command.arguments);
    report("the edit's command runs on the server", !accepted.error, accepted);
  }
  const inline = await request(server, lsp.InlineCompletionRequest.method, {
    textDocument: { uri },
    position: { line: 4, character: 28 },
    context: { triggerKind: lsp.InlineCompletionTriggerKind.Automatic },
  });
  const items = Array.isArray(inline.result) ? inline.result : inline.result?.items;
  report(
    'inlineCompletion: the ghost text at the cursor',
    items?.[0]?.insertText === '.title()',
    inline,
  );
  await shutdown(server);
}

/** The second editor of the two-client test: hands the lock to the model, waits until
 * the other editor (Neovim) takes it back, then dies without shutdown (a killed editor). */
async function peerScenario() {
  const server = startServer();
  await initialize(server, join(config.file, '..'));
  const uri = await openSample(server);
  const diagnostics = await waitForDiagnostic(server, uri, (d) => codesOf(d).includes('F401'));
  report('peer: diagnostics through the shared daemon', Boolean(diagnostics), diagnostics);
  await moveLock(server, 'shadowtab.lock.release', [], 'model');
  const released = server.seen.lockChanged.length;
  const takenBack = await waitFor(
    () => server.seen.lockChanged.slice(released).find((params) => holderOf(params) === 'user'),
    config.peerWaitMs ?? 60000,
  );
  report(
    'peer: sees the lock change made by the other editor',
    Boolean(takenBack),
    server.seen.lockChanged,
  );
  server.exitExpected = true;
  server.child.kill('SIGKILL');
  await server.exited;
}

try {
  const scenarios = {
    features: featuresScenario,
    peer: peerScenario,
    suggestions: suggestionsScenario,
  };
  await scenarios[config.scenario]();
} catch (error) {
  report('no exception', false, String(error?.stack ?? error));
}
process.exit(failures === 0 ? 0 : 1);
