import { parseNtpServers } from '../validators/board-settings.js';
import type { Handler } from './context.js';

export const getNetwork: Handler = async ({ backend }) => backend.network();

/** Parameters are ignored (clients send `cmd=reset`). */
export const postNetworkReset: Handler = async ({ backend }) => {
  await backend.resetNetwork();
  return undefined;
};

export const getNtp: Handler = async ({ backend }) => backend.getNtp();

export const postNtp: Handler = async ({ params, backend }) => {
  await backend.setNtp(parseNtpServers(params['servers']));
  return undefined;
};
