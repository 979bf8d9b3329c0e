/**
 * A tiny Prometheus text-format writer (exposition format 0.0.4), so the agent needs no client library on a 128 MB
 * controller. The daemon's rules: HELP and TYPE per family, a blank line after each family, families without
 * samples omitted, absent readings never written as 0, whole numbers without a decimal point.
 */
export type Labels = Record<string, string>;
export interface Sample {
  labels?: Labels;
  value: number | null | undefined;
}

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export class PrometheusText {
  private readonly parts: string[] = [];

  family(name: string, type: 'gauge' | 'counter', help: string, samples: readonly Sample[]): this {
    const lines: string[] = [];
    for (const sample of samples) {
      if (sample.value === null || sample.value === undefined || Number.isNaN(sample.value)) {
        continue;
      }
      lines.push(`${name}${formatLabels(sample.labels)} ${formatValue(sample.value)}`);
    }
    if (lines.length === 0) {
      return this;
    }
    this.parts.push(
      `# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${name} ${type}\n${lines.join('\n')}\n\n`,
    );
    return this;
  }

  /** One unlabelled sample. */
  single(name: string, type: 'gauge' | 'counter', help: string, value: number | null | undefined): this {
    return this.family(name, type, help, [{ value }]);
  }

  toString(): string {
    return this.parts.join('');
  }
}

function formatLabels(labels: Labels | undefined): string {
  if (!labels) {
    return '';
  }
  const entries = Object.entries(labels);
  if (entries.length === 0) {
    return '';
  }
  return `{${entries.map(([key, value]) => `${key}="${escapeLabel(value)}"`).join(',')}}`;
}

export function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function formatValue(value: number): string {
  if (value === Infinity) {
    return '+Inf';
  }
  if (value === -Infinity) {
    return '-Inf';
  }
  return String(value);
}
