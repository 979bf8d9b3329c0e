import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';

import { BoardError, type FlashOptions, type NodeId } from '../backend.js';
import { digestOf } from '../image-digest.js';
import { RECLAIM_EVERY_BYTES, reclaimTransferBuffers } from '../reclaim.js';
import type { BoardModel } from './board-model.js';
import type { RootFs } from './root-fs.js';

/** A node's eMMC as the controller sees it once the module booted into USB mass-storage mode. */
export interface NodeDisk {
  /** Board path of the block device (`/dev/sda`). */
  device: string;
  /** Its size in bytes (sysfs counts 512-byte sectors whatever the device's block size). */
  bytes: number;
}

/**
 * The USB port a node's module enumerates on. v2.5: a GL850 hub on the BMC's EHCI1, node N on hub port N (`1-1.N`),
 * so several nodes can be in USB boot at once and each is told apart by its port, never by "the first match" (the
 * fork's wrong-node flash). v2.4: one bus behind the mux, which connects only the selected node (`1-1`).
 */
export function nodeUsbPort(model: BoardModel, node: NodeId): string {
  return model.legacy ? '1-1' : `1-1.${node}`;
}

/** The RPi boot ROM (`0a5c:2711`, a CM4 waiting for rpiboot) on that port. */
export async function bootRomWaiting(fs: RootFs, port: string): Promise<boolean> {
  const vendor = await fs.trimmed(`/sys/bus/usb/devices/${port}/idVendor`);
  const product = await fs.trimmed(`/sys/bus/usb/devices/${port}/idProduct`);
  return vendor === '0a5c' && product === '2711';
}

/**
 * The SCSI disk whose sysfs device path runs through the node's USB port, once it reports a size (a card reader
 * without media, or a disk still starting up, reports 0). `/sys/block/<name>` links to
 * `../devices/platform/…/usb1/1-1/1-1.2/1-1.2:1.0/host0/…/block/sda`.
 */
export async function findNodeDisk(fs: RootFs, port: string): Promise<NodeDisk | null> {
  for (const name of (await fs.names('/sys/block')).sort()) {
    if (!/^sd[a-z]+$/.test(name)) {
      continue;
    }
    const target = await fs.linkTarget(`/sys/block/${name}`);
    if (!target?.includes(`/${port}/`)) {
      continue;
    }
    const sectors = await fs.int(`/sys/block/${name}/size`);
    if (sectors !== null && sectors > 0) {
      return { device: `/dev/${name}`, bytes: sectors * 512 };
    }
  }
  return null;
}

/**
 * Write an image into a node's block device as it streams in: each chunk is written where it belongs and dropped
 * (never the whole image in memory: the controller has 128 MB), then fsync, then, unless told not to, the bytes are
 * read back (after `dropCaches`, so the eMMC is read and not the page cache) and their SHA-256 compared with what
 * was written. The device is opened O_RDWR without O_CREAT: a device that went away is an error, never a new file.
 */
export async function writeNodeDisk(
  devicePath: string,
  source: AsyncIterable<Buffer>,
  options: FlashOptions,
  dropCaches: () => Promise<void>,
): Promise<void> {
  const file = await open(devicePath, 'r+');
  const written = createHash('sha256');
  let position = 0;
  try {
    for await (const chunk of source) {
      options.signal.throwIfAborted();
      written.update(chunk);
      let done = 0;
      while (done < chunk.length) {
        const { bytesWritten } = await file.write(chunk, done, chunk.length - done, position + done);
        done += bytesWritten;
      }
      position += chunk.length;
      options.onProgress(position);
      if (position % RECLAIM_EVERY_BYTES < chunk.length) {
        reclaimTransferBuffers();
      }
    }
    options.signal.throwIfAborted();
    await file.sync();
  } finally {
    await file.close();
  }
  if (options.verify) {
    await dropCaches();
    const expected = written.digest('hex');
    const calculated = await digestOf(devicePath, options.signal, position);
    if (calculated !== expected) {
      throw new BoardError(500, `crc error. expected ${expected}, calculated ${calculated}`);
    }
  }
}
