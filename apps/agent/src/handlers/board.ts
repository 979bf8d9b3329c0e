import { BoardError } from '../backend/backend.js';
import type { Handler } from './context.js';
import { flagParam, requireParam } from './params.js';

export const getAbout: Handler = async ({ backend }) => backend.about();

export const getHealth: Handler = async ({ backend }) => backend.health();

export const getHostname: Handler = async ({ backend }) => backend.getHostname();

/** Rules 1–5 of facts §4 POST /hostname, in the daemon's order and wording. */
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

export const postHostname: Handler = async ({ params, backend }) => {
  const name = requireParam(params, 'name');
  validateHostname(name);
  await backend.setHostname(name);
  return undefined;
};

export const getInfo: Handler = async ({ backend }) => backend.info();

export const postReboot: Handler = async ({ params, backend }) => {
  await backend.reboot({ fel: flagParam(params, 'fel') });
  return undefined;
};

export const postReload: Handler = async ({ backend }) => {
  await backend.reload();
  return undefined;
};
