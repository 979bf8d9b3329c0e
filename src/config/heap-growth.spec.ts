import { describe, expect, it } from '@jest/globals';
import { HEAP_GROWING_PERCENT, setHeapGrowth } from './heap-growth.js';

describe('setHeapGrowth', () => {
  it("sets the role's heap growth when the operator did not", () => {
    expect(setHeapGrowth('worker', [], '')).toBe(HEAP_GROWING_PERCENT.worker);
    expect(setHeapGrowth('api', ['--enable-source-maps'], '--max-old-space-size=512')).toBe(HEAP_GROWING_PERCENT.api);
  });

  it("leaves the operator's value, given as a node option or in NODE_OPTIONS, in either spelling", () => {
    expect(setHeapGrowth('worker', ['--heap-growing-percent=200'], '')).toBeNull();
    expect(setHeapGrowth('api', [], '--enable-source-maps --heap_growing_percent=10')).toBeNull();
  });
});
