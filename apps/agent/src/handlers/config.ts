import { exportConfig, importConfig } from '../configdoc/config-document.js';
import { withServices } from './context.js';

export const getConfig = withServices(async ({ backend, services }) =>
  exportConfig({ backend, sources: services.firmware.sources }),
);

export const postConfig = withServices(async ({ backend, services, params }) =>
  importConfig({ backend, sources: services.firmware.sources }, params['config']),
);
