import type { Handler } from './context.js';

export const getSdcard: Handler = async ({ backend }) => [await backend.sdcard()];

/** `path` (optional) names a sub-directory of the card; confinement and its refusals are the backend's job. */
export const getSdcardFiles: Handler = async ({ params, backend }) => backend.sdcardFiles(params['path'] ?? '');

/** The backend refuses (501 on the real daemon: formatting was never implemented). */
export const postSdcardFormat: Handler = async ({ backend }) => {
  await backend.formatSdcard();
  return undefined;
};
