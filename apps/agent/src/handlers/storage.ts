import type { Handler } from './context.js';

export const getSdcard: Handler = async ({ backend }) => [await backend.sdcard()];

/** `path` (optional) names a sub-directory of the card; confinement and its refusals are the backend's job. */
export const getSdcardFiles: Handler = async ({ params, backend }) => backend.sdcardFiles(params['path'] ?? '');

/** Both backends format (the daemon answered 501: formatting was never implemented there). */
export const postSdcardFormat: Handler = async ({ backend }) => {
  await backend.formatSdcard();
  return undefined;
};
