import type { FieldOutcome } from './config-document.js';
import type { RestoreRow, VersionRow } from './config-backups.repository.js';

/** A stored version's own fields as the API and the archive (src/config-backups/config-archive.service.ts) name them. */
export function versionFields(v: VersionRow) {
  return {
    version: v.seq,
    hash: v.hash,
    format_version: v.formatVersion,
    firmware_version: v.firmwareVersion,
    source: v.source,
    captured_at: v.capturedAt.toISOString(),
  };
}

export function toVersionDto(v: VersionRow, withDocument = false) {
  return {
    id: v.id,
    board_id: v.boardId,
    board_name: v.boardName,
    ...versionFields(v),
    last_seen_at: v.lastSeenAt.toISOString(),
    ...(withDocument ? { document: v.document } : {}),
  };
}

export function toRestoreDto(r: RestoreRow) {
  return {
    id: r.id,
    board_id: r.boardId,
    version_id: r.versionId,
    source_board_id: r.sourceBoardId,
    fields: r.fields,
    status: r.status,
    report: r.report ?? null,
    fields_outcome: (r.outcome as FieldOutcome[] | null) ?? null,
    error: r.error,
    pre_backup_version_id: r.preBackupVersionId,
    created_at: r.createdAt.toISOString(),
    finished_at: r.finishedAt?.toISOString() ?? null,
  };
}
