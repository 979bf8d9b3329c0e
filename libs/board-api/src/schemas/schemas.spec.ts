import {
  ZAboutForkSchema,
  ZAboutSchema,
  ZAboutUpstreamSchema,
  ZAccessStateSchema,
  ZCatalogSchema,
  ZConfigExportSchema,
  ZCoolingDeviceListSchema,
  ZFirmwareSlotsSchema,
  ZHealthSchema,
  ZHostnameSchema,
  ZImportReportSchema,
  ZLegacyEnvelopeSchema,
  ZLegacyNodeInfoBodySchema,
  ZNetworkSchema,
  ZNodeInfoListSchema,
  ZNodePowerListSchema,
  ZNtpSchema,
  ZProblemSchema,
  ZSdCardEntryListSchema,
  ZSdCardListSchema,
  ZSourcesSchema,
  ZThermalSchema,
  ZUpdateCheckSchema,
  ZUsbStateListSchema,
  legacyEnvelope,
} from './index.js';

/** Reference board values (a real board's readings). */
const referenceThermal = {
  sensors: [
    {
      name: 'bmc-thermal',
      temperature_c: 47.3,
      present: true,
      trips: [
        { index: 0, kind: 'active', temperature_c: 20 },
        { index: 1, kind: 'active', temperature_c: 45 },
        { index: 2, kind: 'active', temperature_c: 60 },
        { index: 3, kind: 'active', temperature_c: 70 },
        { index: 4, kind: 'hot', temperature_c: 95 },
      ],
    },
  ],
  cooling: [
    {
      name: 'pwm-fan',
      cur_state: 2,
      max_state: 6,
      present: true,
      levels: [0, 16, 32, 64, 102, 170, 254],
      max_level: 254,
    },
  ],
};

const referenceClock = {
  rtc: [{ device: 'rtc0', name: 'sun6i-rtc' }],
  synchronised: true,
  source: 'time.cloudflare.com',
  stratum: 3,
  offset_seconds: -3.077e-6,
  measured_by: 'chronyc tracking',
};

const referenceHealth = {
  clock: referenceClock,
  load: { present: true, one_minute: 0.12, five_minutes: 0.08, fifteen_minutes: 0.02 },
  memory: {
    present: true,
    total_bytes: 1_031_479_296,
    free_bytes: 700_000_000,
    available_bytes: 850_000_000,
    self_resident_bytes: 9_000_000,
    self_threads: 5,
  },
  nand: {
    present: true,
    total_eraseblocks: 2040,
    available_eraseblocks: 5,
    bad_eraseblocks: 0,
    reserved_eraseblocks: 40,
    eraseblock_size_bytes: 126_976,
    available_bytes: 5 * 126_976,
  },
  uptime_seconds: 86_400.5,
};

const about = {
  api: '1.1',
  board_model: 'Turing Pi 2',
  board_revision: '2.5.2',
  board_serial: null,
  build_version: '2.36.3',
  buildroot: 'Buildroot 2024.05.1',
  buildtime: '2026-09-12 10:00:00-00:00',
  hostname: 'turingpi',
  kernel: '6.1.33',
  version: 'v2.30.0',
};

describe('board records', () => {
  it('accepts the reference thermal and cooling values', () => {
    expect(ZThermalSchema.parse(referenceThermal)).toEqual(referenceThermal);
    expect(ZThermalSchema.parse({ sensors: [], cooling: [] })).toEqual({ sensors: [], cooling: [] });
    const cooling = [{ device: 'system fan', speed: 2, max_speed: 6, zone: 'thermal_zone0', overridden: false }];
    expect(ZCoolingDeviceListSchema.parse(cooling)).toEqual(cooling);
  });

  it('keeps nullable fields required: a Cooler without levels must say null', () => {
    const { levels: _levels, ...cooler } = referenceThermal.cooling[0]!;
    expect(ZThermalSchema.safeParse({ sensors: [], cooling: [cooler] }).success).toBe(false);
    expect(ZThermalSchema.safeParse({ sensors: [], cooling: [{ ...cooler, levels: null }] }).success).toBe(true);
  });

  it('accepts a health record with the reference NAND and an offset in exponent form', () => {
    expect(ZHealthSchema.parse(referenceHealth).clock.offset_seconds).toBeCloseTo(-3.077e-6);
    const unknown = {
      ...referenceHealth,
      clock: { rtc: [], synchronised: null, source: null, stratum: null, offset_seconds: null, measured_by: null },
      uptime_seconds: null,
    };
    expect(ZHealthSchema.safeParse(unknown).success).toBe(true);
  });

  it('tells the agent About (daemon_version) from the fork About (bmcd_version)', () => {
    expect(ZAboutSchema.safeParse({ ...about, daemon_version: '2.36.3' }).success).toBe(true);
    expect(ZAboutSchema.safeParse({ ...about, bmcd_version: '2.36.3' }).success).toBe(false);
    expect(ZAboutForkSchema.safeParse({ ...about, bmcd_version: '2.36.3' }).success).toBe(true);
    // board_serial may be absent (upstream-era records) or a string
    const { board_serial: _s, ...noSerial } = about;
    expect(ZAboutSchema.safeParse({ ...noSerial, daemon_version: '1' }).success).toBe(true);
    expect(
      ZAboutUpstreamSchema.safeParse({ api: '1.1', version: 'v2.1.0', bmcd_version: '2.3.7', buildtime: 'x' }).success,
    ).toBe(true);
  });

  it('accepts nodes, power, usb and sdcard only in their array-of-N form', () => {
    const node = { name: null, module_name: null, power_on_time: null, uart_baud: null };
    expect(ZNodeInfoListSchema.safeParse([node, node, node, node]).success).toBe(true);
    expect(ZNodeInfoListSchema.safeParse([node, node, node]).success).toBe(false);
    expect(ZNodeInfoListSchema.safeParse([{}, {}, {}, {}]).success).toBe(false);
    expect(ZNodePowerListSchema.safeParse([{ node1: '1', node2: '0', node3: '0', node4: 'Unknown' }]).success).toBe(
      true,
    );
    expect(ZNodePowerListSchema.safeParse([{ node1: 1, node2: '0', node3: '0', node4: '1' }]).success).toBe(false);
    expect(
      ZUsbStateListSchema.safeParse([{ mode: 'Flash', route: 'Bmc', node: 'Node 3', bus_type: 'Usb hub' }]).success,
    ).toBe(true);
    expect(
      ZUsbStateListSchema.safeParse([{ mode: 'Flash', route: 'Node', node: 'Node 3', bus_type: 'Usb hub' }]).success,
    ).toBe(false);
    expect(
      ZUsbStateListSchema.safeParse([{ mode: 'Host', route: 'Bmc', node: 'Node 0', bus_type: 'Usb hub' }]).success,
    ).toBe(false);
    expect(ZSdCardListSchema.safeParse([{ total: 100, free: 40, use: 60 }]).success).toBe(true);
    expect(ZSdCardListSchema.safeParse([{ total: 100, free: 40, used: 60 }]).success).toBe(false);
  });

  it('accepts an UpdateCheck where one channel failed, and requires the null keys', () => {
    const stable = {
      channel: 'stable',
      repo: 'excavador-turing/BMC-Firmware',
      running: 'v2.30.0',
      target: 'v2.30.0',
      update_available: false,
    };
    const check = { checked_at: '2026-09-12T10:00:00Z', stable, edge: null, error: 'edge: rate limited' };
    expect(ZUpdateCheckSchema.parse(check)).toEqual(check);
    const { edge: _e, ...missingEdge } = check;
    expect(ZUpdateCheckSchema.safeParse(missingEdge).success).toBe(false);
    expect(ZUpdateCheckSchema.safeParse({ ...check, stable: { ...stable, update_available: undefined } }).success).toBe(
      false,
    );
  });

  it('accepts firmware slots with promotion_history omitted, and refuses it as null', () => {
    const slots = {
      present: true,
      running: { volume: 'rootfs', volume_id: 1, size_bytes: 46_981_120, version: 'v2.30.0' },
      rollback: { volume: 'rootfs_prev', volume_id: 2, size_bytes: 46_981_120, version: null },
      update_staged: false,
      nextboot: null,
      last_promotion: null,
      staged: null,
    };
    expect(ZFirmwareSlotsSchema.safeParse(slots).success).toBe(true);
    expect(ZFirmwareSlotsSchema.safeParse({ ...slots, promotion_history: null }).success).toBe(false);
    expect(
      ZFirmwareSlotsSchema.safeParse({
        ...slots,
        update_staged: true,
        nextboot: 'ubi0:rootfs_new',
        last_promotion: { timestamp: 'Mon Sep  7 19:30:22 UTC 2026', message: 'bmcd answered after 9s' },
        staged: { version: 'v2.31.0', sha256: null, staged_at: null, source: 'tpi-selfupdate', file: null },
        promotion_history: { attempts: 15, promoted: 14, rolled_back: 1 },
      }).success,
    ).toBe(true);
    const { nextboot: _n, ...missing } = slots;
    expect(ZFirmwareSlotsSchema.safeParse(missing).success).toBe(false);
  });

  it('treats "omitted when false" as a literal true: refreshing and prerelease', () => {
    const catalog = {
      checked_at: '2026-09-12T10:00:00Z',
      running: 'v2.30.0',
      age_seconds: 12,
      sources: [
        {
          id: 'fork',
          kind: 'github',
          label: 'excavador-turing (this fork)',
          location: 'excavador-turing/BMC-Firmware',
          candidates: [
            { version: 'v2.31.0-rc1', relation: 'newer', prerelease: true, trust: 'verified' },
            { version: 'v2.30.0', relation: 'current', trust: 'verified' },
          ],
        },
        {
          id: 'local',
          kind: 'local',
          label: 'SD card',
          location: '/mnt/sdcard/firmware',
          candidates: [
            {
              version: 'v2.29.0',
              relation: 'older',
              trust: 'unverified',
              file: '/mnt/sdcard/firmware/x.tpu',
              size_bytes: 3,
            },
          ],
        },
        {
          id: 'turingpi',
          kind: 'github',
          label: 'Turing Pi',
          location: 'turing-machines/BMC-Firmware',
          candidates: [],
          error: 'offline',
        },
      ],
    };
    expect(ZCatalogSchema.safeParse(catalog).success).toBe(true);
    expect(ZCatalogSchema.safeParse({ ...catalog, refreshing: true }).success).toBe(true);
    expect(ZCatalogSchema.safeParse({ ...catalog, refreshing: false }).success).toBe(false);
    const withFalsePre = structuredClone(catalog);
    (withFalsePre.sources[0]!.candidates[1] as Record<string, unknown>).prerelease = false;
    expect(ZCatalogSchema.safeParse(withFalsePre).success).toBe(false);
  });

  it('accepts the default sources document and refuses an unknown kind', () => {
    const sources = {
      sources: [
        {
          id: 'fork',
          kind: 'github',
          label: 'excavador-turing (this fork)',
          location: 'excavador-turing/BMC-Firmware',
          enabled: true,
        },
        { id: 'local', kind: 'local', label: 'SD card', location: '/mnt/sdcard/firmware', enabled: true },
        {
          id: 'turingpi-http',
          kind: 'http',
          label: 'Turing Pi (firmware.turingpi.com)',
          location: 'https://firmware.turingpi.com/turing-pi2',
          enabled: true,
        },
      ],
    };
    expect(ZSourcesSchema.safeParse(sources).success).toBe(true);
    expect(ZSourcesSchema.safeParse({ sources: [{ ...sources.sources[0], kind: 'ftp' }] }).success).toBe(false);
    expect(ZSourcesSchema.safeParse({ sources: [{ ...sources.sources[0], enabled: undefined }] }).success).toBe(false);
  });

  it('accepts a config export with omitted parts, and ignores the retired secrets keys', () => {
    const minimal = { format_version: 1, exported_at: '2026-09-12T10:00:00Z', exported_from: {} };
    expect(ZConfigExportSchema.safeParse(minimal).success).toBe(true);
    expect(ZConfigExportSchema.safeParse({ ...minimal, ntp_servers: null }).success).toBe(false);
    const full = {
      ...minimal,
      exported_from: { hostname: 'tp1', firmware: 'v2.30.0' },
      hostname: 'tp1',
      ntp_servers: ['pool.ntp.org'],
      firmware_sources: { sources: [{ id: 'fork', kind: 'github', label: 'f', location: 'a/b' }] },
      nodes: [{ id: 1, name: 'alpha' }, { id: 2 }, { id: 3 }, { id: 4, uart_baud: 115200 }],
      contains_secrets: false,
    };
    expect(ZConfigExportSchema.parse(full)).not.toHaveProperty('contains_secrets');
    expect(ZConfigExportSchema.safeParse({ ...full, nodes: [{ id: 0 }] }).success).toBe(false);
    const { exported_from: _f, ...noOrigin } = minimal;
    expect(ZConfigExportSchema.safeParse(noOrigin).success).toBe(false);
    expect(ZImportReportSchema.safeParse({ applied: ['hostname tp1'], skipped: [], failed: [] }).success).toBe(true);
  });

  it('accepts hostname, ntp, network, sdcard entries and access state', () => {
    expect(ZHostnameSchema.safeParse({ hostname: 'tp1', on_next_boot: null }).success).toBe(true);
    expect(ZHostnameSchema.safeParse({ hostname: 'tp1' }).success).toBe(false);
    expect(ZNtpSchema.safeParse({ servers: [], configurable: true, clock: referenceClock }).success).toBe(true);
    const absent = {
      name: 'ge1',
      kind: 'uplink',
      present: false,
      link: null,
      operstate: null,
      speed_mbps: null,
      duplex: null,
      rx_bytes: null,
      tx_bytes: null,
      rx_errors: null,
      tx_errors: null,
    };
    expect(ZNetworkSchema.safeParse({ ports: [absent] }).success).toBe(true);
    expect(ZNetworkSchema.safeParse({ ports: [{ ...absent, kind: 'trunk' }] }).success).toBe(false);
    const entries = [
      {
        path: 'images',
        name: 'images',
        directory: true,
        size: 0,
        modified: 1_757_000_000,
        flashable: false,
        reason: 'a directory',
      },
      { path: 'ubuntu.img.xz', name: 'ubuntu.img.xz', directory: false, size: 2e9, modified: null, flashable: true },
    ];
    expect(ZSdCardEntryListSchema.safeParse(entries).success).toBe(true);
    expect(ZSdCardEntryListSchema.safeParse([{ ...entries[1], reason: null }]).success).toBe(false);
    const access = {
      actor: { name: 'root', scheme: 'token' },
      local_account: 'root',
      client_ca: null,
      identity_header: { name: 'x-forwarded-email', source: 'default' },
      client_ca_pinned_in_config: false,
    };
    expect(ZAccessStateSchema.safeParse(access).success).toBe(true);
    expect(ZAccessStateSchema.safeParse({ ...access, actor: { name: 'x', scheme: 'kerberos' } }).success).toBe(false);
  });

  it('reads problems, legacy envelopes and the legacy node_info body', () => {
    expect(
      ZProblemSchema.safeParse({ type: 'about:blank', title: 'Not Implemented', status: 501, detail: 'x' }).success,
    ).toBe(true);
    expect(ZProblemSchema.safeParse({ title: 'Bad Request' }).success).toBe(false);
    expect(ZLegacyEnvelopeSchema.safeParse({ response: [{ result: 'ok' }] }).success).toBe(true);
    expect(
      legacyEnvelope(ZSdCardListSchema).safeParse({ response: [{ result: [{ total: 1, free: 1, use: 0 }] }] }).success,
    ).toBe(true);
    expect(ZLegacyNodeInfoBodySchema.safeParse({ Node1: { name: 'a' }, Node4: { uart_baud: 115200 } }).success).toBe(
      true,
    );
    expect(ZLegacyNodeInfoBodySchema.safeParse({ Node1: { uart_baud: 'fast' } }).success).toBe(false);
  });
});
