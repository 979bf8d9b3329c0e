import type { BoardWithReading, ListedBoard, ShownBoard } from './boards.repository.js';
import type { TBoard, TBoardListItem } from './boards.dto.js';

// Rows carry Dates, or text a list had PostgreSQL format as `toISOString` would (BoardsRepository.list), which is
// passed on as it is; other text (a driver that hands back its own format) is read and written again.
const isIso = (d: string): boolean => d.length === 24 && d[10] === 'T' && d[23] === 'Z';
const iso = (d: Date | string | null | undefined): string | null =>
  d ? (d instanceof Date ? d.toISOString() : isIso(d) ? d : new Date(d).toISOString()) : null;

/** Board row → API shape. Credentials are described (kind, user, key id), never returned. */
export function toBoardDto(b: ShownBoard, credentialUser: string | null = null): TBoard {
  return shape(b, credentialUser, b.capabilities ?? null);
}

/**
 * A list's row → list item: without the credentials' user name (a list does not unseal every board's credentials),
 * and without capabilities when the row was read without them (JSON leaves out a field whose value is undefined).
 */
export function toBoardListItem(b: ListedBoard): TBoardListItem {
  return shape(b, null, b.capabilities);
}

function shape<C>(b: ListedBoard, credentialUser: string | null, capabilities: C) {
  return {
    id: b.id,
    name: b.name,
    base_url: b.baseUrl,
    labels: (b.labels ?? {}) as Record<string, string>,
    rack: b.rack,
    slot: b.slot,
    notes: b.notes,
    credentials: b.credentialKind
      ? { kind: b.credentialKind, username: credentialUser, key_id: b.credentialKeyId }
      : null,
    tls_fingerprint: b.tlsFingerprint,
    poll_interval_seconds: b.pollIntervalSeconds,
    dialect: b.dialect,
    model: b.model,
    serial: b.serial,
    daemon_version: b.daemonVersion,
    firmware_version: b.firmwareVersion,
    capabilities,
    state: b.state,
    state_since: iso(b.stateSince)!,
    state_reason: b.stateReason,
    consecutive_failures: b.consecutiveFailures,
    last_polled_at: iso(b.lastPolledAt),
    last_success_at: iso(b.lastSuccessAt),
    next_poll_at: iso(b.nextPollAt)!, // every board has a schedule (BoardsRepository.createMany)
    banned_until: iso(b.bannedUntil),
    decommissioned_at: iso(b.decommissionedAt),
    created_at: iso(b.createdAt)!,
    updated_at: iso(b.updatedAt)!,
  };
}

export function toBoardDetailDto(b: BoardWithReading, credentialUser: string | null) {
  const r = b.reading;
  return {
    ...toBoardDto(b, credentialUser),
    latest: {
      health: r?.health ?? null,
      health_at: iso(r?.healthAt),
      thermal: r?.thermal ?? null,
      thermal_at: iso(r?.thermalAt),
      cooling: r?.cooling ?? null,
      cooling_at: iso(r?.coolingAt),
      sdcard: r?.sdcard ?? null,
      sdcard_at: iso(r?.sdcardAt),
      firmware_check: r?.firmwareCheck ?? null,
      firmware_at: iso(r?.firmwareAt),
      slots: r?.slots ?? null,
      slots_at: iso(r?.slotsAt),
      about: r?.about ?? null,
      about_at: iso(r?.aboutAt),
    },
  };
}
