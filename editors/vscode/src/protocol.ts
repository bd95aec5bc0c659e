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
  shadowPending: 'shadowtab.shadow.pending',
  shadowCommit: 'shadowtab.shadow.commit',
  shadowDiscard: 'shadowtab.shadow.discard',
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

/**
 * One pending file of the shadow workspace (`shadowtab.shadow.pending`'s `changes`): what
 * the model or an agent did to it that is not on disk yet. A rename is two entries: the
 * new file (`renamed`, `from` the old one) and the old file (`deleted`, `renamedTo`).
 */
export interface PendingChange {
  uri: string;
  change: 'edited' | 'created' | 'deleted' | 'renamed';
  from?: string;
  renamedTo?: string;
}

const PENDING_KINDS: ReadonlySet<string> = new Set(['edited', 'created', 'deleted', 'renamed']);

/**
 * Reads the pending files out of `shadowtab.shadow.pending`'s result. A server that only
 * lists `files` (URIs) gives each one as `edited`.
 */
export function parsePendingChanges(value: unknown): PendingChange[] {
  if (!isRecord(value)) {
    return [];
  }
  if (Array.isArray(value.changes)) {
    return value.changes.filter(isRecord).flatMap((entry) => {
      if (typeof entry.uri !== 'string') {
        return [];
      }
      const kind = typeof entry.change === 'string' && PENDING_KINDS.has(entry.change);
      return [
        {
          uri: entry.uri,
          change: kind ? (entry.change as PendingChange['change']) : 'edited',
          from: typeof entry.from === 'string' ? entry.from : undefined,
          renamedTo: typeof entry.renamed_to === 'string' ? entry.renamed_to : undefined,
        },
      ];
    });
  }
  const files = Array.isArray(value.files) ? value.files : [];
  return files
    .filter((uri): uri is string => typeof uri === 'string')
    .map((uri) => ({ uri, change: 'edited' as const }));
}

/** What `shadowtab.shadow.commit` / `discard` did (a TakeResult), as far as it is shown. */
export interface TakeSomeResult {
  written: string[];
  removed: string[];
  discarded: string[];
  kept: string[];
  pending: string[];
  conflicts: { uri: string; error: string }[];
}

export function parseTakeSomeResult(value: unknown): TakeSomeResult {
  const record = isRecord(value) ? value : {};
  const uris = (key: string): string[] => {
    const list = record[key];
    return Array.isArray(list) ? list.filter((uri): uri is string => typeof uri === 'string') : [];
  };
  const conflicts = Array.isArray(record.conflicts) ? record.conflicts.filter(isRecord) : [];
  return {
    written: uris('written'),
    removed: uris('removed'),
    discarded: uris('discarded'),
    kept: uris('kept'),
    pending: uris('pending'),
    conflicts: conflicts.map((conflict) => ({
      uri: String(conflict.uri ?? ''),
      error: String(conflict.error ?? 'conflict'),
    })),
  };
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
