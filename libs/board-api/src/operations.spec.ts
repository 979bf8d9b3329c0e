import { z } from 'zod';
import {
  allowedMethods,
  AUTHENTICATE_PATH,
  findByLegacy,
  findByPath,
  isExtension,
  legacyNodeInfo,
  OPENAPI_PATH,
  operationList,
  operations,
  operationSchemas,
  type OperationId,
  type OperationRow,
} from './operations.js';
import { routeList, routes } from './routes.js';

const IDS_FROM_TEAM_NOTES =
  `postNodeToMsd getNodes getPower postPower postReset getUsb postUsb postUsbBoot postUsbBootClear
getAbout getConfig postConfig getHealth getHostname postHostname getInfo postReboot postReload
getAccess putAccessClientCa deleteAccessClientCa postAccessPassword
getFirmwareAvailable getFirmwareCheck postFirmwareInstall getFirmwareSlots getFirmwareSources postFirmwareSources
getSdcard getSdcardFiles postSdcardFormat getNetwork postNetworkReset getNtp postNtp getCooling postCooling getThermal`
    .split(/\s+/)
    .sort();

/** What BMC-UI, tpi and the python client call besides the 38 (issue 20). */
const DAEMON_EXTENSIONS = `getUsbNode1 postUsbNode1 getUart postUart getOther getBackup postFlash getFlash
postFirmwareUpload getFirmwareUpload postUpload getUploadCancel`
  .split(/\s+/)
  .sort();

/** operationId = method + camel-cased path. */
function expectedId(method: string, path: string): string {
  const words = path
    .split(/[/-]/)
    .filter((w) => w !== '' && !w.startsWith('{'))
    .map((w) => w[0]!.toUpperCase() + w.slice(1));
  return method.toLowerCase() + words.join('');
}

describe('operation table', () => {
  it('has exactly the 38 operations of the team notes plus the marked daemon extensions, keyed by their own id', () => {
    const seed = operationList.filter((op) => !isExtension(op));
    expect(seed).toHaveLength(38);
    expect(seed.map((op) => op.id).sort()).toEqual(IDS_FROM_TEAM_NOTES);
    expect(
      operationList
        .filter(isExtension)
        .map((op) => op.id)
        .sort(),
    ).toEqual(DAEMON_EXTENSIONS);
    for (const [key, op] of Object.entries(operations)) {
      expect(op.id).toBe(key);
      expect(op.id).toBe(expectedId(op.method, op.path));
    }
  });

  it('is the schema-free route table with schemas attached: every route has schemas and every schema a route', () => {
    expect(Object.keys(operationSchemas).sort()).toEqual(Object.keys(routes).sort());
    expect(operationList.map((op) => op.id)).toEqual(routeList.map((route) => route.id));
    for (const route of routeList) {
      const { request, response, ...routing } = operations[route.id];
      expect(routing).toEqual(route);
      expect(request).toBe(operationSchemas[route.id].request);
      expect(response).toBe(operationSchemas[route.id].response);
    }
    for (const route of routeList) {
      expect(Object.keys(route)).not.toContain('request');
      expect(Object.keys(route)).not.toContain('response');
    }
  });

  it('keeps the routes module free of run-time imports (the agent routes from it without loading zod)', async () => {
    const { readFile } = await import('node:fs/promises');
    const source = await readFile(new URL('./routes.ts', import.meta.url), 'utf8');
    const imports = [...source.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)].map((m) => m[0]);
    expect(imports.length).toBeGreaterThan(0);
    for (const statement of imports) {
      expect(statement).toMatch(/^(?:import|export) type /);
    }
  });

  it('has unique (method, path) pairs and unique legacy spellings', () => {
    const routes = operationList.map((op) => `${op.method} ${op.path}`);
    expect(new Set(routes).size).toBe(38 + DAEMON_EXTENSIONS.length);
    const legacy = operationList.flatMap((op) => (op.legacy ? [`${op.legacy.opt}/${op.legacy.type}`] : []));
    expect(legacy).toHaveLength(34 + 9);
    expect(new Set(legacy).size).toBe(34 + 9);
  });

  it('spells the legacy pairs the daemon uses', () => {
    expect(findByLegacy('get', 'sdcard_files')?.id).toBe('getSdcardFiles');
    expect(findByLegacy('set', 'sdcard')?.id).toBe('postSdcardFormat');
    expect(findByLegacy('get', 'update_check')?.id).toBe('getFirmwareCheck');
    expect(findByLegacy('set', 'clear_usb_boot')?.id).toBe('postUsbBootClear');
    expect(findByLegacy('get', 'node_info')?.id).toBe('getNodes');
    expect(findByLegacy('set', 'network')?.id).toBe('postNetworkReset');
    expect(findByLegacy('get', 'reboot')).toBeUndefined();
    // Upload, cancel and backup are the daemon's own paths, never in the legacy dispatcher.
    for (const op of operationList) {
      expect(op.legacy === null).toBe(op.tag === 'access' || op.daemonPath === true);
    }
    expect((findByLegacy('get', 'uart') as OperationRow | undefined)?.legacyAnswer).toBe('uart');
    expect((findByLegacy('set', 'flash') as OperationRow | undefined)?.legacyAnswer).toBe('bare');
    expect((findByLegacy('get', 'firmware') as OperationRow | undefined)?.legacyAnswer).toBe('bare');
    expect(findByLegacy('get', 'other')?.id).toBe('getOther');
    expect(findByPath('POST', '/api/bmc/upload/123')?.id).toBe('postUpload');
    expect(findByPath('GET', '/api/bmc/upload/123/cancel')?.id).toBe('getUploadCancel');
  });

  it('finds operations by path, with or without the /api/bmc prefix', () => {
    expect(findByPath('POST', '/api/bmc/usb-boot/clear')?.id).toBe('postUsbBootClear');
    expect(findByPath('get', '/firmware/slots')?.id).toBe('getFirmwareSlots');
    expect(findByPath('GET', '/api/bmc/sdcard/files?path=images')?.id).toBe('getSdcardFiles');
    expect(findByPath('DELETE', '/api/bmc/power')).toBeUndefined();
    expect(allowedMethods('/api/bmc/power').sort()).toEqual(['GET', 'POST']);
    expect(allowedMethods('/access/client-ca').sort()).toEqual(['DELETE', 'PUT']);
    expect(allowedMethods('/nope')).toEqual([]);
  });

  it('answers 204 exactly where there is no response schema, 202 for the client-ca pair', () => {
    const statuses = Object.fromEntries(
      operationList.map((op) => [op.id, op.successStatus ?? (op.response ? 200 : 204)]),
    ) as Record<OperationId, number>;
    expect(statuses.putAccessClientCa).toBe(202);
    expect(statuses.deleteAccessClientCa).toBe(202);
    expect(statuses.postAccessPassword).toBe(204);
    expect(statuses.postConfig).toBe(200);
    expect(statuses.postFirmwareInstall).toBe(200);
    expect(statuses.postFirmwareSources).toBe(200);
    expect(statuses.postPower).toBe(204);
    expect(statuses.postUpload).toBe(200); // the daemon's empty 200
    for (const op of operationList.filter((o) => o.method === 'GET' && o.id !== 'getUploadCancel')) {
      expect(op.response !== null || op.download === true).toBe(true);
    }
  });

  it('describes the wire parameters as optional strings', () => {
    const keys = (id: OperationId) => Object.keys((operations[id].request as z.ZodObject).shape).sort();
    expect(keys('postPower')).toEqual(['node1', 'node2', 'node3', 'node4']);
    expect(keys('postUsb')).toEqual(['mode', 'node']);
    expect(keys('postCooling')).toEqual(['device', 'mode', 'speed']);
    expect(keys('postFirmwareInstall')).toEqual(['allow_downgrade', 'force', 'source', 'version']);
    expect(keys('getFirmwareAvailable')).toEqual(['refresh']);
    expect(keys('postReboot')).toEqual(['fel']);
    expect(keys('getSdcardFiles')).toEqual(['path']);
    for (const op of operationList.filter((o) => o.body !== 'json')) {
      expect(op.request.safeParse({}).success).toBe(true);
      for (const field of Object.values((op.request as z.ZodObject).shape)) {
        expect((field as z.ZodType).safeParse(undefined).success).toBe(true);
        expect((field as z.ZodType).safeParse('1').success).toBe(true);
        expect((field as z.ZodType).safeParse(1).success).toBe(false);
      }
    }
    expect(operations.putAccessClientCa.request.safeParse({}).success).toBe(false);
    expect(
      operations.postAccessPassword.request.safeParse({ username: 'root', current_password: 'a', new_password: 'b' })
        .success,
    ).toBe(true);
  });

  it('marks the two document operations and the release each operation arrived in', () => {
    expect(operationList.filter((op) => op.body === 'document').map((op) => [op.id, op.documentKey])).toEqual([
      ['postConfig', 'config'],
      ['postFirmwareSources', 'sources'],
    ]);
    expect(operations.getSdcardFiles.since).toBe('2.34.0');
    expect(operationList.filter((op) => op.since === '2.36.0').map((op) => op.tag)).toEqual(Array(4).fill('access'));
    expect(operationList.filter((op) => op.since === '2.26.0')).toHaveLength(33);
  });

  it('exports the routes outside the table', () => {
    expect(AUTHENTICATE_PATH).toBe('/authenticate');
    expect(OPENAPI_PATH).toBe('/openapi.json');
    expect(legacyNodeInfo.legacy).toEqual({ opt: 'set', type: 'node_info' });
    expect(legacyNodeInfo.body.safeParse({ Node2: { name: 'beta' } }).success).toBe(true);
  });
});
