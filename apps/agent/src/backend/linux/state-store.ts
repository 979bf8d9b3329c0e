import { z } from 'zod';
import { writeFileAtomic } from '../atomic-file.js';
import type { RootFs } from './root-fs.js';

/** Where the agent keeps what bmcd keeps in `bmcd.bin`; JSON instead of bincode (nothing else reads it). */
export const STATE_FILE = '/var/lib/bmcd/agent-state.json';

const nodeTuple = <T extends z.ZodType>(item: T) => z.tuple([item, item, item, item]);

const ZUsbConfigSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('UsbA'), node: z.number().int().min(1).max(4) }),
  z.object({ kind: z.literal('Bmc'), node: z.number().int().min(1).max(4) }),
  z.object({
    kind: z.literal('Node'),
    node: z.number().int().min(1).max(4),
    route: z.enum(['Bmc', 'AlternativePort']),
  }),
  z.object({
    kind: z.literal('Flashing'),
    node: z.number().int().min(1).max(4),
    route: z.enum(['Bmc', 'AlternativePort']),
  }),
]);
export type UsbConfig = z.infer<typeof ZUsbConfigSchema>;

const ZNodeInfoSchema = z.object({
  name: z.string().nullable(),
  module_name: z.string().nullable(),
  uart_baud: z.number().int().nonnegative().nullable(),
});

const ZStateSchema = z.object({
  version: z.literal(1),
  /** bit n = node n+1, as bmcd's `activated_nodes`. */
  power_mask: z.number().int().min(0).max(15),
  /** Unix seconds when the node went 0→1; null while off. */
  power_on_time: nodeTuple(z.number().int().nullable()),
  usb: ZUsbConfigSchema,
  node_info: nodeTuple(ZNodeInfoSchema),
  /** Cooling steps set without `mode`, replayed at start (bmcd keeps at most 10 devices). */
  cooling: z.record(z.string(), z.number().int().nonnegative()),
});
export type PersistedState = z.infer<typeof ZStateSchema>;

export function defaultState(): PersistedState {
  const emptyInfo = () => ({ name: null, module_name: null, uart_baud: null });
  return {
    version: 1,
    power_mask: 0,
    power_on_time: [null, null, null, null],
    usb: { kind: 'UsbA', node: 1 },
    node_info: [emptyInfo(), emptyInfo(), emptyInfo(), emptyInfo()],
    cooling: {},
  };
}

export const MAX_COOLING_ENTRIES = 10;

/**
 * Load and save the persisted state. A missing file is a fresh board (defaults); a corrupt one is reported as
 * unreadable (so `/power` can say `Unknown` until something is known) and replaced on the next save, as bmcd ignores
 * an unknown file.
 */
export class StateStore {
  constructor(private readonly fs: RootFs) {}

  async load(): Promise<{ state: PersistedState; readable: boolean }> {
    const text = await this.fs.text(STATE_FILE);
    if (text === null) {
      const missing = !(await this.fs.exists(STATE_FILE));
      return { state: defaultState(), readable: missing };
    }
    try {
      const parsed = ZStateSchema.safeParse(JSON.parse(text));
      return parsed.success ? { state: parsed.data, readable: true } : { state: defaultState(), readable: false };
    } catch {
      return { state: defaultState(), readable: false };
    }
  }

  /** temp + fsync + rename (writeFileAtomic), so a power cut leaves the old or the new file, never half of one. */
  async save(state: PersistedState): Promise<void> {
    await this.fs.mkdirp('/var/lib/bmcd');
    await writeFileAtomic(this.fs.path(STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  }
}
