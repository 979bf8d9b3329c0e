import { BoardError } from '../backend/backend.js';
import type { Handler } from './context.js';
import { parseUnsigned, requireParam } from './params.js';

export const getCooling: Handler = async ({ backend }) => backend.getCooling();

/**
 * `device`, `speed` and the optional `mode` (`manual` holds the step by pausing the zone's governor, `auto` hands
 * the fan back and ignores `speed`). Unknown devices and steps above max_speed are refused by the backend (400).
 */
export const postCooling: Handler = async ({ params, backend }) => {
  const device = requireParam(params, 'device');
  const mode = params['mode'];
  if (mode !== undefined && mode !== 'manual' && mode !== 'auto') {
    throw new BoardError(400, `\`mode\` is \`${mode}\`; expected \`auto\` or \`manual\``);
  }
  let speed: number | undefined;
  if (mode !== 'auto') {
    const raw = requireParam(params, 'speed');
    speed = parseUnsigned(raw);
    if (speed === undefined) {
      throw new BoardError(400, '`speed` parameter is not a number');
    }
  }
  await backend.setCooling(device, speed, mode);
  return undefined;
};

export const getThermal: Handler = async ({ backend }) => backend.thermal();
