// The shadowtab-specific parts of the protocol: method names, command ids and the shapes
// the server sends. Everything here is plain LSP JSON (UTF-16 positions), so it needs no
// conversion beyond what vscode-languageclient does for standard types.

import type { Command, Position, Range } from 'vscode-languageclient/node';

export const NEXT_EDIT_METHOD = 'shadowtab/nextEdit';
export const LOCK_CHANGED_METHOD = 'shadowtab/lockChanged';
export const DID_SHOW_INLINE_EDIT_METHOD = 'textDocument/didShowInlineEdit';
export const CURSOR_MOVED_METHOD = 'shadowtab/cursorMoved';

export const SERVER_COMMANDS = {
  lockStatus: 'shadowtab.lock.status',
  lockTake: 'shadowtab.lock.take',
  lockRelease: 'shadowtab.lock.release',
  lockToggle: 'shadowtab.lock.toggle',
  shadowDiff: 'shadowtab.shadow.diff',
} as const;

export type TakeMode = 'commit' | 'discard' | 'keep';
export type LockHolder = 'user' | 'model';

/** Params of `shadowtab/nextEdit`: the same shape as Copilot's `textDocument/copilotInlineEdit`. */
export interface NextEditParams {
  textDocument: { uri: string; version: number };
  position: Position;
}

/** One suggested edit: replace `range` of the document at `textDocument.version` by `text`. */
export interface NextEdit {
  range: Range;
  text: string;
  textDocument: { uri: string; version: number };
  command?: Command | null;
}

export interface NextEditResult {
  edits: NextEdit[];
}

/** Who holds the save lock of one workspace root, and whether model edits are pending. */
export interface LockState {
  holder: LockHolder;
  root?: string;
  pending?: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads a lock state out of a lockChanged notification or a lock command's result. The
 * server nests it differently in different replies ({holder}, {lock: {holder}}, a list of
 * roots), so this accepts each of those and returns undefined for anything else.
 */
export function parseLockState(value: unknown): LockState | undefined {
  if (Array.isArray(value)) {
    return value.length > 0 ? parseLockState(value[0]) : undefined;
  }
  if (!isRecord(value)) {
    return undefined;
  }
  for (const key of ['lock', 'state', 'status']) {
    if (isRecord(value[key])) {
      return parseLockState({
        ...value,
        ...(value[key] as Record<string, unknown>),
        [key]: undefined,
      });
    }
  }
  if (Array.isArray(value.workspaces)) {
    return parseLockState(value.workspaces);
  }
  const holder = value.holder;
  if (holder !== 'user' && holder !== 'model') {
    return undefined;
  }
  const root = typeof value.root === 'string' ? value.root : undefined;
  const pending = pendingFlag(value);
  return { holder, root, pending };
}

function pendingFlag(value: Record<string, unknown>): boolean | undefined {
  const pending = value.pending ?? value.has_pending ?? value.hasPending;
  if (typeof pending === 'boolean') {
    return pending;
  }
  if (typeof pending === 'number') {
    return pending > 0;
  }
  if (Array.isArray(pending)) {
    return pending.length > 0;
  }
  return undefined;
}

/** Reads the edits out of a `shadowtab/nextEdit` result, dropping malformed entries. */
export function parseNextEditResult(value: unknown): NextEdit[] {
  if (!isRecord(value) || !Array.isArray(value.edits)) {
    return [];
  }
  return value.edits.filter(isNextEdit);
}

function isNextEdit(value: unknown): value is NextEdit {
  return (
    isRecord(value) &&
    typeof value.text === 'string' &&
    isRecord(value.range) &&
    isRecord(value.textDocument) &&
    typeof value.textDocument.uri === 'string'
  );
}
