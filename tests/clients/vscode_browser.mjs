// The shadowtab VS Code extension inside a real VS Code (code-server), driven as a user
// would through headless Chromium (playwright-core, with the system's Chromium; nothing
// downloads a browser). What it checks, it reads from the page: ghost text and the
// next-edit decoration in Monaco's DOM, the status bar, notifications; and the file on disk.
// It prints one JSON line per check ({"check", "ok", "detail"}), saves a screenshot per
// step into outDir, and exits 0 only when every check passed.
//
// usage: node vscode_browser.mjs '<json config>'
//   config: {playwright, chromium, url, workspace, file, outDir, settingsFile,
//            servers: {missing, fixed, real}: {command, args}, waitMs}
//   or, for the pending files picker: {scenario: 'pending', playwright, chromium, url,
//            workspace, outDir, readyFile, agentDoneFile, pending: {edited, renamedFrom,
//            renamedTo, deleted, renamedText, editedDiskText}}

import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const config = JSON.parse(process.argv[2]);
const require = createRequire(join(config.playwright, 'package.json'));
const { chromium } = require(config.playwright);

const WAIT_MS = config.waitMs ?? 30000;
const BROWSER_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let failures = 0;
let shots = 0;
function report(check, ok, detail = null) {
  if (!ok) failures += 1;
  const line = JSON.stringify({ check, ok: Boolean(ok), detail }) + '\n';
  process.stdout.write(line);
  appendFileSync(join(config.outDir, 'checks.jsonl'), line); // readable while it runs
  return ok;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls an async predicate until it returns a truthy value or the time is up. */
async function waitFor(predicate, timeoutMs = WAIT_MS) {
  const deadline = Date.now() + timeoutMs;
  let value;
  while (Date.now() < deadline) {
    value = await predicate().catch(() => undefined);
    if (value) return value;
    await sleep(100);
  }
  return predicate().catch(() => undefined);
}

async function screenshot(page, name) {
  shots += 1;
  const path = join(config.outDir, `${String(shots).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path });
  return path;
}

function diskText() {
  return readFileSync(config.file, 'utf8');
}

function serverSettings(name) {
  const server = config.servers[name];
  return { 'shadowtab.command': server.command, 'shadowtab.args': server.args };
}

/** Before VS Code starts: the user's settings.json on disk, merged with `values`. */
function writeSettingsFile(values) {
  const current = JSON.parse(readFileSync(config.settingsFile, 'utf8'));
  writeFileSync(config.settingsFile, JSON.stringify({ ...current, ...values }, null, 2));
}

/**
 * While VS Code runs: as a user does it, in the workspace's .vscode/settings.json opened in
 * the editor, saved with Ctrl+S. (The user settings.json opens in a modal editor in this
 * VS Code, which is harder to close from a script.)
 */
async function editSettings(page, values) {
  const file = config.workspaceSettingsFile;
  const current = JSON.parse(readFileSync(file, 'utf8'));
  await openFile(page, '.vscode/settings.json', '{');
  await page.keyboard.press('Control+A');
  // One line: Monaco would indent each inserted newline once more.
  await page.keyboard.insertText(JSON.stringify({ ...current, ...values }));
  // What the JSON editor auto-closed after the cursor is not ours.
  await page.keyboard.press('Control+Shift+End');
  await page.keyboard.press('Delete');
  const saved = await waitFor(async () => {
    const onDisk = JSON.parse(readFileSync(file, 'utf8'));
    const done = Object.entries(values).every(
      ([key, value]) => JSON.stringify(onDisk[key]) === JSON.stringify(value),
    );
    if (done) return true;
    await page.keyboard.press('Control+S'); // again, when a loaded machine lost it
    await sleep(500);
    return null;
  });
  report(`settings.json edited and saved in VS Code (${Object.keys(values).join(', ')})`, saved, {
    disk: readFileSync(file, 'utf8'),
  });
  // Under load a late keystroke can leave the tab dirty again: save until it is clean.
  await waitFor(async () => {
    if (!(await page.$('.tab.active.dirty'))) return true;
    await page.keyboard.press('Control+S');
    await sleep(300);
    return null;
  }, 10000);
  await page.keyboard.press('Control+W');
  // What is on disk is what counts (checked above): a "save changes?" prompt is answered.
  const dontSave = await waitFor(
    () => page.$('.monaco-dialog-box button:has-text("Don\'t Save")'),
    1500,
  );
  if (dontSave) await dontSave.click();
}

// What the page shows --------------------------------------------------------------------

/** The editor's visible lines, top to bottom, as a user reads them (ghost text included). */
async function editorLines(page) {
  return page.$$eval('.monaco-editor .view-lines .view-line', (lines) =>
    lines
      .map((line) => ({ top: parseFloat(line.style.top || '0'), text: line.textContent ?? '' }))
      .sort((a, b) => a.top - b.top)
      .map((line) => line.text.replace(/\u00a0/g, ' ')),
  );
}

async function ghostText(page) {
  return page.$$eval('.monaco-editor .ghost-text-decoration, .monaco-editor .ghost-text', (els) =>
    els.map((el) => el.textContent ?? '').join(''),
  );
}

/** The next-edit decoration: text drawn struck through, and the new text after it. */
async function nextEditDecoration(page) {
  return page.$$eval('.monaco-editor .view-lines span', (spans) => {
    const struck = [];
    const after = [];
    for (const span of spans) {
      const style = getComputedStyle(span);
      if (style.textDecorationLine.includes('line-through') && span.textContent) {
        struck.push(span.textContent);
      }
      const content = getComputedStyle(span, '::after').content;
      if (content && content !== 'none' && content !== 'normal') after.push(content);
      if (span.className.includes('TextEditorDecorationType') && span.textContent) {
        after.push(span.textContent);
      }
    }
    return { struck, after };
  });
}

async function statusBarLock(page) {
  return page.$$eval('#workbench\\.parts\\.statusbar .statusbar-item', (items) => {
    const item = items.find((el) => el.id.endsWith('shadowtab.lock'));
    return item ? { text: item.innerText.trim(), label: item.getAttribute('aria-label') } : null;
  });
}

async function statusBarText(page) {
  return page.$eval('#workbench\\.parts\\.statusbar', (el) => el.innerText);
}

async function notifications(page) {
  return page.$$eval('.notification-toast, .notifications-list-container .monaco-list-row', (els) =>
    els.map((el) => (el.textContent ?? '').trim()),
  );
}

// What the user does ---------------------------------------------------------------------

async function runCommand(page, title) {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type(title, { delay: 10 });
  await waitFor(async () =>
    (await page.$$eval('.quick-input-list .monaco-list-row', (rows) =>
      rows.map((row) => row.textContent ?? ''),
    )).some((text) => text.includes(title)),
  );
  await page.keyboard.press('Enter');
}

/** Quick Open (Ctrl+P) `name`; waits until its editor shows `expect`, and focuses it. */
async function openFile(page, name, expect) {
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type(name, { delay: 10 });
  // The row of this file, once the list is filtered (not a recently opened one before it).
  const base = name.split('/').pop();
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: base }).first();
  await row.waitFor({ state: 'visible' });
  await row.click();
  const editor = page.locator('.monaco-editor .view-lines', { hasText: expect }).first();
  await editor.waitFor({ state: 'visible' });
  await editor.click();
}

/** Double-clicks the first occurrence of `word` on the visible line that contains `near`. */
async function selectWord(page, near, word) {
  const box = await page.evaluate(
    ({ near, word }) => {
      for (const line of document.querySelectorAll('.monaco-editor .view-lines .view-line')) {
        const text = line.textContent ?? '';
        if (!text.replace(/\u00a0/g, ' ').includes(near)) continue;
        const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const at = node.textContent.indexOf(word);
          if (at >= 0) {
            const range = document.createRange();
            range.setStart(node, at);
            range.setEnd(node, at + word.length);
            const rect = range.getBoundingClientRect();
            return { x: rect.x + rect.width / 2, y: rect.y + rect.height / 2 };
          }
        }
      }
      return null;
    },
    { near, word },
  );
  if (!box) return false;
  await page.mouse.dblclick(box.x, box.y);
  return true;
}

// The steps ------------------------------------------------------------------------------

async function missingCommand(page) {
  // The settings name a command that does not exist: the user is told so, by name.
  const shown = await waitFor(async () =>
    (await notifications(page)).find((text) => text.includes('not found on PATH')),
  );
  report('a missing `shadowtab` is reported by name, with what to do', shown, {
    notifications: await notifications(page),
  });
  await screenshot(page, 'missing-command');
  await page.keyboard.press('Escape');
}

async function lockInStatusBar(page) {
  const shown = await waitFor(async () => {
    const item = await statusBarLock(page);
    return item && item.text.includes('user') ? item : null;
  });
  report('after fixing shadowtab.command the client starts; the status bar shows user', shown, {
    item: await statusBarLock(page),
  });
  await screenshot(page, 'status-bar-user');
}

/** The lines the stand-in server appended to its warm log ("line:character"). */
function warmedAt() {
  return existsSync(config.warmLog)
    ? readFileSync(config.warmLog, 'utf8').split('\n').filter(Boolean)
    : [];
}

async function cursorStep(page) {
  await page.keyboard.press('Control+Home');
  for (let i = 0; i < 3; i += 1) await page.keyboard.press('ArrowDown');
  const warmed = await waitFor(async () => (warmedAt().includes('3:0') ? warmedAt() : null));
  report('moving the cursor with the keyboard warms the prompt where it rests', warmed, {
    warmed: warmedAt(),
  });
}

async function ghostTextStep(page) {
  await page.keyboard.press('Control+End');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Enter');
  // Start the line at column 0 (Enter kept the function body's indentation).
  await page.keyboard.press('Shift+Home');
  await page.keyboard.press('Backspace');
  await page.keyboard.type("message = greet('world')", { delay: 40 });
  const ghost = await waitFor(async () => {
    const text = await ghostText(page);
    return text.includes('.title()') ? text : null;
  });
  report('typing a half-finished line shows ghost text (DOM)', ghost, {
    ghost: await ghostText(page),
    lines: await editorLines(page),
  });
  await screenshot(page, 'ghost-text');
  // VS Code's own cycling: it asks again (explicitly), which adds the stand-in's second choice.
  await page.keyboard.press('Alt+BracketRight');
  const next = await waitFor(async () => {
    const text = await ghostText(page);
    return text.includes('.upper()') && !text.includes('.title()') ? text : null;
  });
  report('Alt+] shows the next ghost text choice', next, { ghost: await ghostText(page) });
  await screenshot(page, 'ghost-text-next-choice');
  await page.keyboard.press('Alt+BracketLeft');
  const back = await waitFor(async () => {
    const text = await ghostText(page);
    return text.includes('.title()') && !text.includes('.upper()') ? text : null;
  });
  report('Alt+[ goes back to the first', back, { ghost: await ghostText(page) });
  await page.keyboard.press('Tab');
  const accepted = await waitFor(async () => {
    const lines = await editorLines(page);
    const gone = !(await ghostText(page)).includes('.title()');
    return gone && lines.some((line) => line === "message = greet('world').title()") ? lines : null;
  });
  report('Tab accepts it: the buffer holds the completed line', accepted, {
    lines: await editorLines(page),
    ghost: await ghostText(page),
  });
  await screenshot(page, 'ghost-text-accepted');
}

async function nextEditStep(page) {
  const selected = await selectWord(page, 'def greet(', 'name');
  report('the parameter `name` can be selected', selected, null);
  await page.keyboard.type('who', { delay: 40 });
  const shown = await waitFor(async () => {
    const decoration = await nextEditDecoration(page);
    const struck = decoration.struck.includes('name');
    const offered = decoration.after.some((text) => text.includes('who'));
    return struck && offered ? decoration : null;
  });
  const lines = await editorLines(page);
  report('the rename shows a next edit at the next occurrence (struck `name`, `who` beside)', shown, {
    decoration: await nextEditDecoration(page),
    lines,
  });
  await screenshot(page, 'next-edit-shown');
  // The stand-in's second choice, `str(who)`: the extension's Alt+] shows it, Alt+[ goes back.
  await page.keyboard.press('Alt+BracketRight');
  const second = await waitFor(async () => {
    const decoration = await nextEditDecoration(page);
    const after = decoration.after.join(' ');
    return after.includes('str(who)') && after.includes('2/2') ? decoration : null;
  });
  report('Alt+] shows the next suggested edit, with its place (2/2)', second, {
    decoration: await nextEditDecoration(page),
  });
  await screenshot(page, 'next-edit-next-choice');
  await page.keyboard.press('Alt+BracketLeft');
  const first = await waitFor(async () => {
    const after = (await nextEditDecoration(page)).after.join(' ');
    return !after.includes('str(who)') && after.includes('1/2') ? after : null;
  });
  report('Alt+[ goes back to the first edit', first, {
    decoration: await nextEditDecoration(page),
  });
  await page.keyboard.press('Tab');
  const accepted = await waitFor(async () => {
    const now = await editorLines(page);
    return now.some((line) => line.includes("return 'hello ' + who")) ? now : null;
  });
  const decoration = await nextEditDecoration(page);
  report('Tab accepts the next edit: the buffer has the rename at both places', accepted, {
    lines: await editorLines(page),
    decoration,
  });
  await screenshot(page, 'next-edit-accepted');
}

async function lockStep(page, modelEditKey, modelLine) {
  const before = diskText();
  await runCommand(page, 'shadowtab: Toggle the save lock');
  const model = await waitFor(async () => {
    const item = await statusBarLock(page);
    return item && item.text.includes('model') ? item : null;
  });
  report('Toggle the save lock: the status bar shows the model holds it', model, {
    item: await statusBarLock(page),
  });
  await screenshot(page, 'lock-model');

  // A model edit (shadowtab.shadow.applyEdit with a WorkspaceEdit, bound to a key in the
  // user's keybindings.json, as an agent integration would call it).
  await page.click('.monaco-editor .view-lines');
  await page.keyboard.press(modelEditKey);
  const shown = await waitFor(async () => {
    const lines = await editorLines(page);
    return lines[0] === modelLine ? lines : null;
  });
  report('a model edit reaches the buffer (workspace/applyEdit from the server)', shown, {
    lines: await editorLines(page),
  });
  await sleep(1000); // time for a wrong write to happen
  const disk = diskText();
  report('while the model holds the lock, the model edit is not on disk', disk === before, {
    disk,
  });
  await screenshot(page, 'model-edit-in-shadow');

  const buffer = (await editorLines(page)).join('\n');
  await runCommand(page, 'shadowtab: Take the save lock back');
  // The extension's own pick (not the command palette still closing): commit / discard / keep.
  const picker = await waitFor(async () =>
    (await page.$$eval('.quick-input-widget', (widgets) =>
      widgets.some((w) => w.checkVisibility() && (w.textContent ?? '').includes('Discard')),
    )) || null,
  );
  report('Take the save lock back asks: Commit, Discard or Keep', picker, null);
  await page.keyboard.type('Commit', { delay: 20 });
  await screenshot(page, 'take-back-commit-pick');
  await page.keyboard.press('Enter');
  const user = await waitFor(async () => {
    const item = await statusBarLock(page);
    return item && item.text.includes('user') ? item : null;
  });
  report('Take the lock back (Commit): the status bar shows user again', user, {
    item: await statusBarLock(page),
  });
  const committed = await waitFor(async () => (diskText().startsWith(modelLine) ? true : null));
  const after = diskText();
  report(
    'Commit wrote the buffer to disk: the model edit and the accepted suggestions',
    committed && after.replace(/\n$/, '') === buffer.replace(/\n$/, ''),
    { disk: after, buffer },
  );
  await screenshot(page, 'committed');
}

async function modelLoadingStep(page) {
  // The real `shadowtab lsp --standalone` with the packaged model: its loading progress.
  await editSettings(page, serverSettings('real'));
  const seen = await waitFor(async () => {
    const text = await statusBarText(page);
    return text.includes('loading model') ? text : null;
  }, 60000);
  if (seen) await screenshot(page, 'model-loading');
  report('the real server: model loading progress shows in the status bar', seen, {
    status: await statusBarText(page),
  });
  const ready = await waitFor(async () => {
    const item = await statusBarLock(page);
    const text = await statusBarText(page);
    return item && item.text.includes('user') && !text.includes('loading model') ? item : null;
  }, 120000);
  report('the real server answers: lock status in the status bar', ready, {
    status: await statusBarText(page),
  });
  await screenshot(page, 'real-server-ready');
}

// The pending files picker (config.scenario === 'pending') -------------------------------
// A coding agent (the Python test, through the daemon) edits sample.py, renames old.py to
// new.py and deletes gone.py in the shadow; the user commits or discards some of them.

/** The rows of the visible quick pick: their text and whether each is checked. */
async function quickPickRows(page) {
  return page.$$eval('.quick-input-widget', (widgets) => {
    const widget = widgets.find((w) => w.checkVisibility());
    if (!widget) return [];
    return [...widget.querySelectorAll('.quick-input-list .monaco-list-row')].map((row) => {
      const box = row.querySelector('.quick-input-list-checkbox, input[type="checkbox"]');
      const checked =
        row.getAttribute('aria-checked') === 'true' ||
        box?.getAttribute('aria-checked') === 'true' ||
        box?.checked === true ||
        box?.classList.contains('checked') === true;
      return { text: (row.textContent ?? '').replace(/\u00a0/g, ' ').trim(), checked };
    });
  });
}

/** The visible quick pick's whole text (title, placeholder, rows). */
async function quickPickText(page) {
  return page.$$eval('.quick-input-widget', (widgets) =>
    widgets
      .filter((w) => w.checkVisibility())
      .map((w) => `${w.textContent ?? ''} ${w.querySelector('input')?.placeholder ?? ''}`)
      .join(' '),
  );
}

/** Waits for the pending files picker; returns its rows once every name in `names` shows. */
async function pendingPicker(page, names) {
  return waitFor(async () => {
    if (!(await quickPickText(page)).includes('pending files')) return null;
    const rows = await quickPickRows(page);
    return names.every((name) => rows.some((row) => row.text.startsWith(name))) ? rows : null;
  });
}

/** Checks the row of `name` in a many-pick quick pick (its checkbox, as a user clicks it). */
async function checkRow(page, name) {
  const row = page
    .locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: name })
    .first();
  const box = row.locator('.quick-input-list-checkbox, input[type="checkbox"]').first();
  if ((await box.count()) > 0) await box.click();
  else await row.click();
  return waitFor(async () =>
    (await quickPickRows(page)).find((r) => r.text.startsWith(name) && r.checked),
  );
}

/** Second step of the picker: Commit or Discard, then the notification that says what. */
async function chooseAction(page, label, expect) {
  const asked = await waitFor(async () => {
    const text = await quickPickText(page);
    return text.includes('Commit') && text.includes('Discard') && !text.includes('pending files')
      ? text
      : null;
  });
  await page.keyboard.type(label, { delay: 20 });
  await page.keyboard.press('Enter');
  const told = await waitFor(async () =>
    (await notifications(page)).find((text) => expect.every((part) => text.includes(part))),
  );
  return { asked, told };
}

function fileState(name) {
  const path = join(config.workspace, name);
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}

async function clearNotifications(page) {
  await runCommand(page, 'Notifications: Clear All Notifications');
  await sleep(300);
}

async function pendingScenario(page) {
  const files = config.pending;
  const ready = await waitFor(async () => {
    const item = await statusBarLock(page);
    return item && item.text.includes('user') ? item : null;
  }, 90000);
  report('pending: the client starts on the daemon; the status bar shows user', ready, {
    item: await statusBarLock(page),
  });
  writeFileSync(config.readyFile, '1'); // the agent may start
  const agentDone = await waitFor(async () => existsSync(config.agentDoneFile) || null, 120000);
  const model = await waitFor(async () => {
    const item = await statusBarLock(page);
    return item && item.text.includes('model') ? item : null;
  });
  report('pending: the agent edited, renamed and deleted; the model holds the lock', agentDone && model, {
    item: await statusBarLock(page),
  });

  // 1. From the command palette: commit the rename alone.
  await runCommand(page, 'shadowtab: Pending Files');
  const rows = await pendingPicker(page, [files.edited, files.renamedTo, files.deleted]);
  const shown = (name, what) => rows?.some((row) => row.text.startsWith(name) && row.text.includes(what));
  report(
    'the picker lists each pending file with what changed (edited, renamed from, deleted)',
    rows &&
      shown(files.edited, 'edited') &&
      shown(files.renamedTo, `renamed from ${files.renamedFrom}`) &&
      shown(files.deleted, 'deleted') &&
      rows.length === 3,
    { rows: await quickPickRows(page) },
  );
  await screenshot(page, 'pending-files-picker');
  const checked = await checkRow(page, files.renamedTo);
  report('a file can be checked in the picker', checked, { rows: await quickPickRows(page) });
  await screenshot(page, 'pending-files-checked');
  await page.keyboard.press('Enter');
  const commit = await chooseAction(page, 'Commit', ['commit', `wrote ${files.renamedTo}`]);
  report('then it asks Commit or Discard', commit.asked, null);
  const renamed = await waitFor(async () => (fileState(files.renamedTo) !== null ? true : null));
  report(
    'Commit wrote the rename alone: new file on disk, old one gone, the rest untouched',
    renamed &&
      fileState(files.renamedFrom) === null &&
      fileState(files.renamedTo) === files.renamedText &&
      fileState(files.deleted) !== null &&
      fileState(files.edited) === files.editedDiskText,
    {
      disk: Object.fromEntries(
        [files.edited, files.renamedFrom, files.renamedTo, files.deleted].map((n) => [
          n,
          fileState(n),
        ]),
      ),
    },
  );
  report("the commit's result is shown: what was written", commit.told, {
    notifications: await notifications(page),
  });
  await screenshot(page, 'pending-files-committed');
  await clearNotifications(page);

  // 2. From the lock's menu (Take the save lock back -> Choose files…): discard the delete.
  await runCommand(page, 'shadowtab: Take the save lock back');
  const menu = await waitFor(async () => {
    const text = await quickPickText(page);
    return text.includes('Choose files') && text.includes('Keep') ? text : null;
  });
  report("the lock's menu offers Choose files…", menu, null);
  await page.keyboard.type('Choose files', { delay: 20 });
  await page.keyboard.press('Enter');
  const left = await pendingPicker(page, [files.edited, files.deleted]);
  report(
    'Choose files… opens the picker: what is still pending, the committed rename gone',
    left && left.length === 2,
    { rows: await quickPickRows(page) },
  );
  await checkRow(page, files.deleted);
  await page.keyboard.press('Enter');
  const discard = await chooseAction(page, 'Discard', ['discard', `discarded ${files.deleted}`]);
  await sleep(500);
  report(
    'Discard brings the deleted file back: it stays on disk, the edit stays pending',
    discard.told && fileState(files.deleted) !== null && fileState(files.edited) === files.editedDiskText,
    { notifications: await notifications(page) },
  );
  const still = await statusBarLock(page);
  report('the lock is left as it was: the model holds it', still?.text.includes('model'), {
    item: still,
  });
  await screenshot(page, 'pending-files-discarded');
  await clearNotifications(page);

  // 3. A conflict: the file changed on disk under its pending edit; the commit refuses it.
  const outside = `${files.editedDiskText}# changed on disk by someone else\n`;
  writeFileSync(join(config.workspace, files.edited), outside);
  await sleep(1500); // the daemon's watcher sees it
  await runCommand(page, 'shadowtab: Pending Files');
  const last = await pendingPicker(page, [files.edited]);
  await checkRow(page, files.edited);
  await page.keyboard.press('Enter');
  const conflict = await chooseAction(page, 'Commit', ['Conflict', files.edited, 'changed on disk']);
  report(
    'a conflict is shown as an error, and the file on disk is left as it is',
    last && conflict.told && fileState(files.edited) === outside,
    { notifications: await notifications(page), disk: fileState(files.edited) },
  );
  await screenshot(page, 'pending-files-conflict');
}

async function main() {
  const browser = await chromium.launch({
    executablePath: config.chromium,
    headless: true,
    args: BROWSER_FLAGS,
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(WAIT_MS);
  const consoleErrors = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && message.text().includes('shadowtab')) {
      consoleErrors.push(message.text().slice(0, 500));
    }
  });
  try {
    if (config.scenario === 'pending') {
      await page.goto(`${config.url}/?folder=${encodeURIComponent(config.workspace)}`);
      await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
      await openFile(page, 'sample.py', 'import os');
      await pendingScenario(page);
    } else {
      writeSettingsFile(serverSettings('missing'));
      await page.goto(`${config.url}/?folder=${encodeURIComponent(config.workspace)}`);
      await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
      await openFile(page, 'sample.py', 'import os');
      report('code-server opens the workspace and the Python file', true, null);
      await missingCommand(page);
      await editSettings(page, serverSettings('fixed'));
      await openFile(page, 'sample.py', 'import os');
      await lockInStatusBar(page);
      await cursorStep(page);
      await ghostTextStep(page);
      await nextEditStep(page);
      await lockStep(page, config.modelEditKey, config.modelLine);
      if (config.servers.real) await modelLoadingStep(page);
    }
  } catch (error) {
    report('the scenario ran to the end', false, String(error?.stack ?? error));
    await screenshot(page, 'error').catch(() => {});
  } finally {
    report('the page logged no unexpected shadowtab error', true, { consoleErrors });
    await browser.close();
  }
  process.exit(failures === 0 ? 0 : 1);
}

await main();
