import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jobId } from './job-id.js';

describe('jobId', () => {
  it('builds ids BullMQ accepts: no `:` and never an integer, whatever the parts', () => {
    const id = jobId('compact-thermal', 300000, 5_869_000);
    expect(id).toBe('compact-thermal.300000.5869000');
    for (const part of ['a:b', 'x:y:z', '12', 'req:1.2']) {
      const built = jobId('config-backup', part);
      expect(built).not.toContain(':');
      expect(`${parseInt(built, 10)}`).not.toBe(built);
    }
  });

  it('keeps distinct parts distinct (a part’s own `.` or `:` cannot fake a boundary)', () => {
    expect(jobId('k', 'a.b', 'c')).not.toBe(jobId('k', 'a', 'b.c'));
    expect(jobId('k', 'a:b')).not.toBe(jobId('k', 'a.b'));
  });

  it('refuses a kind that could make an invalid or ambiguous id', () => {
    expect(() => jobId('compact:thermal')).toThrow(/kind/);
    expect(() => jobId('123')).toThrow(/kind/);
  });

  // The audit: every custom id in the app goes through jobId (a hand-built `x:${id}` is how the compaction job
  // failed on Redis for every tick).
  it('is the only way the app names a job', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory() && entry.name !== 'generated') {
          walk(path);
        } else if (entry.isFile() && path.endsWith('.ts') && !path.endsWith('.spec.ts')) {
          readFileSync(path, 'utf8')
            .split('\n')
            .forEach((line, i) => {
              if (/jobId:\s*[`'"]|\.(remove|getJob)\(\s*[`'"]/.test(line)) {
                offenders.push(`${path}:${i + 1}: ${line.trim()}`);
              }
            });
        }
      }
    };
    walk(join(process.cwd(), 'src'));
    expect(offenders).toEqual([]);
  });
});
