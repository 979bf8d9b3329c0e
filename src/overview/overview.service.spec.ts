import { describe, expect, it } from '@jest/globals';
import { hottestSensor } from './overview.service.js';

const trip = (index: number, kind: string, temperature_c: number | null) => ({ index, kind, temperature_c });

describe('hottestSensor', () => {
  it('picks the hottest present sensor, with the trips the default thermal rules alert on', () => {
    const thermal = {
      sensors: [
        {
          name: 'cpu',
          temperature_c: 51.5,
          present: true,
          trips: [trip(0, 'active', 20), trip(1, 'active', 70), trip(2, 'hot', 95)],
        },
        { name: 'gpu', temperature_c: 48, present: true, trips: [] },
        { name: 'gone', temperature_c: null, present: false, trips: [] },
      ],
      cooling: [],
    };
    expect(hottestSensor(thermal)).toEqual({ sensor: 'cpu', temperature_c: 51.5, warning_c: 70, critical_c: 95 });
  });

  it('has nothing to say about a board never polled, a reading without temperatures, or a malformed one', () => {
    expect(hottestSensor(null)).toBeNull();
    expect(hottestSensor({ sensors: [], cooling: [] })).toBeNull();
    expect(hottestSensor({ sensors: 'hot' })).toBeNull();
    const noTrips = { sensors: [{ name: 'x', temperature_c: 40, present: true, trips: [] }], cooling: [] };
    expect(hottestSensor(noTrips)).toEqual({ sensor: 'x', temperature_c: 40, warning_c: null, critical_c: null });
  });
});
