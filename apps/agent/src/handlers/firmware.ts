import { withServices } from './context.js';
import { flagParam, requireParam } from './params.js';

export const getFirmwareAvailable = withServices(async ({ services, params }) =>
  services.firmware.catalogue.get({ refresh: flagParam(params, 'refresh') }),
);

export const getFirmwareCheck = withServices(async ({ services }) => services.firmware.updateCheck.get());

export const postFirmwareInstall = withServices(async ({ services, params }) => {
  const source = requireParam(params, 'source');
  const version = requireParam(params, 'version');
  return services.firmware.installer.install({
    source,
    version,
    force: flagParam(params, 'force'),
    allowDowngrade: flagParam(params, 'allow_downgrade'),
  });
});

export const getFirmwareSlots = withServices(async ({ services }) => services.firmware.slots.slots());

export const getFirmwareSources = withServices(async ({ services }) => services.firmware.sources.read());

export const postFirmwareSources = withServices(async ({ services, params }) =>
  services.firmware.sources.replaceFromText(params['sources']),
);
