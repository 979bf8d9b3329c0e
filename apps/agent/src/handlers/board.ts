import { validateHostname } from '../validators/board-settings.js';
import type { Handler } from './context.js';
import { flagParam, requireParam } from './params.js';

export const getAbout: Handler = async ({ backend }) => backend.about();

export const getHealth: Handler = async ({ backend }) => backend.health();

export const getHostname: Handler = async ({ backend }) => backend.getHostname();

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
