import { describe, expect, it } from '@jest/globals';
import { BatchWriter } from './batch-writer.js';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('BatchWriter', () => {
  it('writes results ready together in one group, without waiting for the last one', async () => {
    const groups: number[][] = [];
    const writer = new BatchWriter<number>(async (rows) => {
      groups.push(rows);
    }, 20);
    writer.add(1);
    writer.add(2);
    await tick(60);
    expect(groups).toEqual([[1, 2]]); // written while the batch's slow board is still out
    writer.add(3);
    await writer.close();
    expect(groups).toEqual([[1, 2], [3]]);
  });

  it('keeps writing after a failed write and reports the failure at close', async () => {
    const groups: number[][] = [];
    const writer = new BatchWriter<number>(async (rows) => {
      if (rows.includes(1)) {
        throw new Error('database gone');
      }
      groups.push(rows);
    }, 1);
    writer.add(1);
    await writer.flush();
    writer.add(2);
    await expect(writer.close()).rejects.toThrow('database gone');
    expect(groups).toEqual([[2]]);
  });
});
