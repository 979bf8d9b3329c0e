import { BoardError } from '../backend/backend.js';
import type { Handler } from './context.js';

export const getNetwork: Handler = async ({ backend }) => backend.network();

/** Parameters are ignored (clients send `cmd=reset`). */
export const postNetworkReset: Handler = async ({ backend }) => {
  await backend.resetNetwork();
  return undefined;
};

export const getNtp: Handler = async ({ backend }) => backend.getNtp();

const MAX_SERVERS = 8;

/** Facts §4 POST /ntp: comma-separated, trimmed, empty items dropped (so `servers=` restores the image default). */
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

export const postNtp: Handler = async ({ params, backend }) => {
  await backend.setNtp(parseNtpServers(params['servers']));
  return undefined;
};
