import { redact } from './audit.service.js';
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
