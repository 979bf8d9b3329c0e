import type { TFirmwareSlots } from '@tpfleet/board-api';
import { type BoardBackend, NODE_IDS } from '../backend/backend.js';
import { writeFirmwareFamilies } from './firmware-metrics.js';
import { PrometheusText } from './prometheus.js';

/** Where the firmware families come from: the board's slots driver (absent: those families are left out). */
export interface FirmwareSlotsSource {
  slots(): Promise<TFirmwareSlots>;
}

/**
 * The `bmcd_*` families for the readings the backend offers. No instance or hostname label: renaming a
 * board moves no series. A reading that fails is left out (its families vanish) instead of failing the scrape.
 */
export async function renderBoardMetrics(backend: BoardBackend, firmware?: FirmwareSlotsSource): Promise<string> {
  const [about, thermal, cooling, network, power, nodes, armed, health, usb, slots] = await Promise.all([
    settle(backend.about()),
    settle(backend.thermal()),
    settle(backend.getCooling()),
    settle(backend.network()),
    settle(backend.getPower()),
    settle(backend.getNodes()),
    settle(backend.usbBootArmed()),
    settle(backend.health()),
    settle(backend.getUsb()),
    firmware ? settle(firmware.slots()) : undefined,
  ]);
  const out = new PrometheusText();

  if (about) {
    out.family('bmcd_build_info', 'gauge', 'Daemon version', [{ labels: { version: about.daemon_version }, value: 1 }]);
  }

  if (thermal) {
    out.family(
      'bmcd_temperature_celsius',
      'gauge',
      'Temperature of each thermal zone in degrees Celsius',
      thermal.sensors.map((s) => ({ labels: { sensor: s.name }, value: s.temperature_c })),
    );
  }

  if (cooling) {
    const devices = [...cooling].sort((a, b) => a.device.localeCompare(b.device));
    const by = (pick: (d: (typeof devices)[number]) => number) =>
      devices.map((d) => ({ labels: { device: d.device }, value: pick(d) }));
    out.family(
      'bmcd_cooling_state',
      'gauge',
      'Current step of each cooling device',
      by((d) => d.speed),
    );
    out.family(
      'bmcd_cooling_state_max',
      'gauge',
      'Highest step of each cooling device',
      by((d) => d.max_speed),
    );
    out.family(
      'bmcd_cooling_overridden',
      'gauge',
      "1 when the device's governor is paused and a written step holds",
      by((d) => (d.overridden ? 1 : 0)),
    );
  }

  if (network) {
    const ports = network.ports;
    const per = (pick: (p: (typeof ports)[number]) => number | null | undefined) =>
      ports.map((p) => ({ labels: { port: p.name, kind: p.kind }, value: pick(p) }));
    out.family(
      'bmcd_switch_port_present',
      'gauge',
      'Whether the switch port interface exists',
      per((p) => (p.present ? 1 : 0)),
    );
    out.family(
      'bmcd_switch_port_link',
      'gauge',
      'Whether the switch port has carrier',
      per((p) => bool(p.link)),
    );
    out.family(
      'bmcd_switch_port_speed_bits_per_second',
      'gauge',
      'Negotiated link speed',
      per((p) => (p.speed_mbps == null ? null : p.speed_mbps * 1e6)),
    );
    out.family(
      'bmcd_switch_port_rx_bytes_total',
      'counter',
      'Bytes received',
      per((p) => p.rx_bytes),
    );
    out.family(
      'bmcd_switch_port_tx_bytes_total',
      'counter',
      'Bytes sent',
      per((p) => p.tx_bytes),
    );
    out.family(
      'bmcd_switch_port_rx_errors_total',
      'counter',
      'Receive errors',
      per((p) => p.rx_errors),
    );
    out.family(
      'bmcd_switch_port_tx_errors_total',
      'counter',
      'Transmit errors',
      per((p) => p.tx_errors),
    );
  }

  if (power) {
    out.family(
      'bmcd_node_power_state',
      'gauge',
      'Persisted power state of each node (1 on)',
      NODE_IDS.map((n) => {
        const value = power[`node${n}`];
        return { labels: { node: `node${n}` }, value: value === 'Unknown' ? null : Number(value) };
      }),
    );
  }
  if (nodes) {
    out.family(
      'bmcd_node_power_on_seconds',
      'gauge',
      'Seconds since the daemon powered the node on',
      nodes.map((info, i) => ({ labels: { node: `node${i + 1}` }, value: info.power_on_time })),
    );
  }
  if (armed) {
    out.family(
      'bmcd_node_usb_boot_armed',
      'gauge',
      'Whether the persisted USB configuration holds the node in USB boot',
      NODE_IDS.map((n) => ({ labels: { node: `node${n}` }, value: armed[n] ? 1 : 0 })),
    );
  }

  if (health) {
    const { load, memory, nand, clock } = health;
    out.single('bmcd_uptime_seconds', 'gauge', 'Seconds since the management controller booted', health.uptime_seconds);
    out.single('bmcd_load1', 'gauge', '1-minute load average', load.one_minute);
    out.single('bmcd_load5', 'gauge', '5-minute load average', load.five_minutes);
    out.single('bmcd_load15', 'gauge', '15-minute load average', load.fifteen_minutes);
    out.single('bmcd_memory_total_bytes', 'gauge', 'Total memory', memory.total_bytes);
    out.single('bmcd_memory_free_bytes', 'gauge', 'Free memory', memory.free_bytes);
    out.single('bmcd_memory_available_bytes', 'gauge', 'Available memory', memory.available_bytes);
    out.single('bmcd_process_resident_bytes', 'gauge', 'Resident memory of the daemon', memory.self_resident_bytes);
    out.single('bmcd_process_threads', 'gauge', 'Threads of the daemon', memory.self_threads);
    out.family('bmcd_nand_eraseblocks', 'gauge', 'NAND erase blocks by state', [
      { labels: { state: 'total' }, value: nand.total_eraseblocks },
      { labels: { state: 'available' }, value: nand.available_eraseblocks },
      { labels: { state: 'bad' }, value: nand.bad_eraseblocks },
      { labels: { state: 'reserved' }, value: nand.reserved_eraseblocks },
    ]);
    out.single('bmcd_nand_eraseblock_size_bytes', 'gauge', 'Size of one NAND erase block', nand.eraseblock_size_bytes);
    out.single('bmcd_nand_available_bytes', 'gauge', 'Available NAND bytes', nand.available_bytes);
    out.single('bmcd_rtc_present', 'gauge', 'Whether a real-time clock exists', clock.rtc.length > 0 ? 1 : 0);
    out.family(
      'bmcd_rtc_info',
      'gauge',
      'Real-time clock devices',
      clock.rtc.map((rtc) => ({ labels: { device: rtc.device, name: rtc.name ?? '' }, value: 1 })),
    );
    out.single('bmcd_clock_synchronised', 'gauge', 'Whether the clock is synchronised', bool(clock.synchronised));
    out.single('bmcd_clock_stratum', 'gauge', 'NTP stratum', clock.stratum);
    out.single('bmcd_clock_offset_seconds', 'gauge', 'System clock minus true time', clock.offset_seconds);
  }
  if (usb) {
    // Label spellings are not confirmed for the daemon: node as the API reports it (`Node 2`).
    out.family('bmcd_usb_config', 'gauge', 'The USB routing in effect', [
      { labels: { node: usb.node, mode: usb.mode, route: usb.route, bus_type: usb.bus_type }, value: 1 },
    ]);
  }
  if (slots) {
    writeFirmwareFamilies(out, slots);
  }
  return out.toString();
}

function bool(value: boolean | null | undefined): number | null {
  return value === null || value === undefined ? null : value ? 1 : 0;
}

async function settle<T>(promise: Promise<T>): Promise<T | undefined> {
  try {
    return await promise;
  } catch {
    return undefined;
  }
}
