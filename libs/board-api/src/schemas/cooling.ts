import { z } from 'zod';
import { named } from './registry.js';

/** Element of GET /cooling (a different record from Cooler). */
export const ZCoolingDeviceSchema = named(
  'CoolingDevice',
  z.object({
    device: z.string().describe('`system fan` for the pwm-fan, else `cooling_deviceN`'),
    speed: z.number().int().nonnegative().describe('Current step (0 when unreadable)'),
    max_speed: z.number().int().nonnegative().describe('Highest step (0 when unreadable)'),
    zone: z.string().nullable().describe('Thermal zone whose governor drives the device, or null'),
    overridden: z.boolean().describe('True when the zone governor is paused (a written step holds)'),
  }),
);
export type TCoolingDevice = z.infer<typeof ZCoolingDeviceSchema>;
export const ZCoolingDeviceListSchema = z.array(ZCoolingDeviceSchema).describe('Cooling devices in readdir order');

export const ZTripSchema = named(
  'Trip',
  z.object({
    index: z.number().int().nonnegative().describe('Trip point index'),
    kind: z.string().nullable().describe('`active`, `passive`, `hot`, `critical` as the kernel spells it'),
    temperature_c: z.number().nullable().describe('Trip temperature in °C'),
  }),
);
export type TTrip = z.infer<typeof ZTripSchema>;

export const ZThermalSensorSchema = named(
  'ThermalSensor',
  z.object({
    name: z.string().describe('Zone type (e.g. `bmc-thermal`), else the directory name'),
    temperature_c: z.number().nullable().describe('Temperature in °C, one decimal'),
    present: z.boolean().describe('Whether a temperature was read'),
    trips: z.array(ZTripSchema).describe('Trip points, in index order'),
  }),
);
export type TThermalSensor = z.infer<typeof ZThermalSensorSchema>;

export const ZCoolerSchema = named(
  'Cooler',
  z.object({
    name: z.string().describe('Device type (e.g. `pwm-fan`), else the directory name'),
    cur_state: z.number().int().nonnegative().nullable().describe('Current step'),
    max_state: z.number().int().nonnegative().nullable().describe('Highest step'),
    present: z.boolean().describe('Both states were read'),
    levels: z
      .array(z.number().int().nonnegative())
      .nullable()
      .describe('Device-tree cooling-levels (PWM duty per step), when unambiguous'),
    max_level: z.number().int().nonnegative().nullable().describe('Last entry of levels'),
  }),
);
export type TCooler = z.infer<typeof ZCoolerSchema>;

/** GET /thermal: two empty lists on a board with nothing to report. */
export const ZThermalSchema = named(
  'Thermal',
  z.object({
    sensors: z.array(ZThermalSensorSchema).describe('Thermal zones ordered by N'),
    cooling: z.array(ZCoolerSchema).describe('Cooling devices ordered by N'),
  }),
);
export type TThermal = z.infer<typeof ZThermalSchema>;
