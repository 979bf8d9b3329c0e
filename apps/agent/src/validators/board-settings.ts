// The board settings a request and a configuration document both carry, checked one way: the POST /hostname and
// POST /ntp handlers (src/handlers/) and the configuration import (src/configdoc/) refuse the same values with the
// same words.
import { BoardError } from '../backend/backend.js';

/** The daemon's POST /hostname rules, in its order and wording: one DNS label of letters, digits and hyphens. */
export function validateHostname(name: string): void {
  const quoted = JSON.stringify(name);
  if (name === '') {
    throw new BoardError(400, 'a hostname cannot be empty');
  }
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > 63) {
    throw new BoardError(400, `${quoted} is ${bytes} characters; a hostname label is at most 63`);
  }
  if (!/^[A-Za-z0-9-]+$/.test(name)) {
    throw new BoardError(
      400,
      `${quoted} is not a hostname; it may contain letters, digits and hyphens, and no dots — this is one label, not a fully-qualified name`,
    );
  }
  if (name.startsWith('-') || name.endsWith('-')) {
    throw new BoardError(400, `${quoted} starts or ends with a hyphen`);
  }
}

const MAX_SERVERS = 8;

/** POST /ntp's list: comma-separated, trimmed, empty items dropped (so `servers=` restores the image default). */
export function parseNtpServers(raw: string | undefined): string[] {
  if (raw === undefined) {
    throw new BoardError(400, 'Missing `servers` parameter: a comma-separated list, or empty for the image default');
  }
  const servers = raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (servers.length > MAX_SERVERS) {
    throw new BoardError(400, `${servers.length} time servers given; at most ${MAX_SERVERS} are useful`);
  }
  for (const server of servers) {
    const quoted = JSON.stringify(server);
    if (server.length > 253) {
      throw new BoardError(400, `${quoted} is longer than a hostname can be`);
    }
    if (!/^[A-Za-z0-9._:-]+$/.test(server)) {
      throw new BoardError(
        400,
        `${quoted} is not a hostname or an address; it may contain letters, digits, dots, hyphens, underscores and colons`,
      );
    }
  }
  return servers;
}
