import { AUDIT_MAX_DETAIL_BYTES, auditDetail, redact } from './audit.service.js';
import { roleAllows } from './roles.js';

describe('audit redaction', () => {
  it('never keeps a secret-looking value, however deep', () => {
    const detail = {
      body: {
        name: 'b1',
        credentials: { username: 'root', password: 'turing' },
        nested: [{ api_token: 'tpf_x', keep: 1 }],
        secretKey: 'k',
      },
    };
    expect(redact(detail)).toEqual({
      body: {
        name: 'b1',
        credentials: '[redacted]',
        nested: [{ api_token: '[redacted]', keep: 1 }],
        secretKey: '[redacted]',
      },
    });
  });
});

describe('roles', () => {
  it('orders viewer < operator < admin', () => {
    expect(roleAllows('admin', 'operator')).toBe(true);
    expect(roleAllows('operator', 'operator')).toBe(true);
    expect(roleAllows('operator', 'admin')).toBe(false);
    expect(roleAllows('viewer', 'operator')).toBe(false);
  });
});

describe('audit detail bounds', () => {
  it('keeps nothing below the depth limit, so a secret hidden deep is not stored raw', () => {
    let deep: Record<string, unknown> = { password: 'hunter2', note: 'n' };
    for (let i = 0; i < 20; i++) {
      deep = { level: deep };
    }
    const stored = JSON.stringify(redact({ body: deep }));
    expect(stored).not.toContain('hunter2');
    expect(stored).toContain('nested too deep');
  });

  it('caps long strings, long arrays and the whole detail', () => {
    const stored = redact({ s: 'x'.repeat(5000), a: Array.from({ length: 150 }, (_, i) => i) }) as {
      s: string;
      a: unknown[];
    };
    expect(stored.s.length).toBeLessThan(1100);
    expect(stored.a).toHaveLength(101);
    const big = auditDetail({
      body: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, 'v'.repeat(900)])),
    });
    expect(JSON.stringify(big).length).toBeLessThan(AUDIT_MAX_DETAIL_BYTES);
    expect(big.truncated).toMatch(/larger than 16384/);
  });
});
