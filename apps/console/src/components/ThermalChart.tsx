import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  sensor: string;
  points: { at: string; mean: number }[];
  /** Dashed lines: where the thermal_warning and thermal_critical rules fire for this sensor. */
  lines: { label: string; value: number }[];
}

const COLOURS = ['#2563eb', '#d97706', '#059669', '#7c3aed', '#db2777', '#0891b2'];

/**
 * Temperature per sensor over time (uPlot: small, fast), °C on the axis, each sensor's alert thresholds drawn as
 * dashed lines of its colour. Drag across the plot to zoom; double-click to zoom out.
 */
export function ThermalChart({ series, height = 260 }: { series: Series[]; height?: number }) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!el.current || series.length === 0) {
      return;
    }
    const times = [...new Set(series.flatMap((s) => s.points.map((p) => Date.parse(p.at) / 1000)))].sort(
      (a, b) => a - b,
    );
    const index = new Map(times.map((t, i) => [t, i]));
    const data: (number | null)[][] = [times];
    const opts: uPlot.Options = {
      width: el.current.clientWidth || 800,
      height,
      scales: { x: { time: true } },
      axes: [{}, { label: '°C', values: (_u, ticks) => ticks.map((t) => `${t} °C`) }],
      series: [{}],
    };
    series.forEach((s, k) => {
      const colour = COLOURS[k % COLOURS.length]!;
      const values: (number | null)[] = new Array<number | null>(times.length).fill(null);
      for (const p of s.points) {
        values[index.get(Date.parse(p.at) / 1000)!] = p.mean;
      }
      data.push(values);
      opts.series.push({ label: s.sensor, stroke: colour, width: 2, spanGaps: true });
      for (const line of s.lines) {
        data.push(new Array<number>(times.length).fill(line.value));
        opts.series.push({
          label: `${s.sensor} ${line.label}`,
          stroke: colour,
          dash: [6, 4],
          width: 1,
          points: { show: false },
        });
      }
    });
    const plot = new uPlot(opts, data as uPlot.AlignedData, el.current);
    const resize = () => plot.setSize({ width: el.current?.clientWidth ?? 800, height });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [series, height]);
  return <div ref={el} className="chart" />;
}
