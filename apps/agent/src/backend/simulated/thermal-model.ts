/**
 * The controller's thermal zone `bmc-thermal` and its fan, computed lazily from elapsed time: no timers, so a rack
 * of 10,000 simulated boards costs nothing while nobody asks. Whoever reads or changes an input calls `advance`
 * first; the model then replays the governor's polls since the last call (capped, see MAX_CATCH_UP_MS).
 *
 * Physics: first-order approach to an equilibrium temperature. Heat comes from the controller itself, each powered
 * node (they share the board and the airflow) and the controller's load; the fan divides the rise above ambient.
 * Governor: kernel step_wise over the four active trips, one fan step per poll, with a little hysteresis on the way
 * down. Constants are chosen so an idle v2.5 board sits near 48 °C on step 2 and four busy nodes push it to step 4
 * near 62 °C (the "why is my fan on step 4" question of the fork's changelog).
 */

export interface Trip {
  index: number;
  name: string;
  kind: 'active' | 'hot';
  temperatureC: number;
}

export const TRIPS: readonly Trip[] = [
  { index: 0, name: 'fan_min', kind: 'active', temperatureC: 20 },
  { index: 1, name: 'fan_low', kind: 'active', temperatureC: 45 },
  { index: 2, name: 'fan_mid', kind: 'active', temperatureC: 60 },
  { index: 3, name: 'fan_high', kind: 'active', temperatureC: 70 },
  { index: 4, name: 'hot', kind: 'hot', temperatureC: 95 },
];
/** Hottest active trip: a held fan is released above it. */
export const HOTTEST_ACTIVE_TRIP_C = 70;
/** Device-tree cooling-levels of the pwm-fan (PWM duty per step). */
export const FAN_LEVELS: readonly number[] = [0, 16, 32, 64, 102, 170, 254];
export const FAN_MAX_STEP = FAN_LEVELS.length - 1;

export const AMBIENT_C = 25;
const TIME_CONSTANT_S = 40;
/** Fan step the governor aims for by number of active trips crossed (the fan is bound once per active trip). */
const STEP_FOR_TRIPS_CROSSED = [0, 1, 2, 4, 6];
const HYSTERESIS_C = 2;
const CONTROLLER_RISE_C = 28;
const NODE_RISE_C = 6.5;
const LOAD_RISE_C = 3;
const FAN_EFFECT_PER_STEP = 0.12;
const MAX_TEMPERATURE_C = 125;
export const GOVERNOR_POLL_MS = 2000;
/** The fork's hold-release check period. */
export const RELEASE_CHECK_MS = 15000;
/** After this long without an observer everything has settled (15 time constants); older history is skipped. */
const MAX_CATCH_UP_MS = 600_000;

export interface ThermalInputs {
  /** Nodes whose enable line is on right now. */
  nodesOn: number;
  /** Controller 1-minute load. */
  load: number;
}

export class ThermalModel {
  private tempC: number;
  private atMs: number;
  /** The device's cur_state. */
  private step: number;
  /** The governor's own target (step_wise instance target); a bare write to cur_state does not change it. */
  private governorStep: number;
  private paused = false;
  private nextPollMs: number;
  private nextReleaseCheckMs: number;
  private runawayRatePerMin = 0;
  private runawayStartMs = 0;

  constructor(
    nowMs: number,
    inputs: ThermalInputs,
    /** v2.4 boards have no software-controlled fan. */
    readonly hasFan: boolean,
  ) {
    // Start settled: the controller has been running; find the step the governor would have settled on.
    let step = 0;
    if (hasFan) {
      while (step < FAN_MAX_STEP && targetStep(equilibrium(inputs, step), step) > step) {
        step++;
      }
    }
    this.step = step;
    this.governorStep = step;
    this.tempC = equilibrium(inputs, step);
    this.atMs = nowMs;
    this.nextPollMs = nowMs + GOVERNOR_POLL_MS;
    this.nextReleaseCheckMs = nowMs + RELEASE_CHECK_MS;
  }

  /** Bring the model to `nowMs`, assuming `inputs` held since the last call. */
  advance(nowMs: number, inputs: ThermalInputs): void {
    if (nowMs <= this.atMs) {
      return;
    }
    if (nowMs - this.atMs > MAX_CATCH_UP_MS) {
      const skipTo = nowMs - MAX_CATCH_UP_MS;
      this.integrate(skipTo, inputs);
      this.nextPollMs = Math.max(this.nextPollMs, skipTo + GOVERNOR_POLL_MS);
      this.nextReleaseCheckMs = Math.max(this.nextReleaseCheckMs, skipTo + RELEASE_CHECK_MS);
    }
    while (this.nextPollMs <= nowMs) {
      const t = this.nextPollMs;
      this.integrate(t, inputs);
      this.poll(t);
      this.nextPollMs += GOVERNOR_POLL_MS;
    }
    this.integrate(nowMs, inputs);
  }

  temperature(nowMs: number): number {
    return Math.min(MAX_TEMPERATURE_C, this.tempC + this.runawayExtra(nowMs));
  }

  /** Reported temperature, rounded to one decimal as the daemon does (millidegrees ÷ 1000). */
  reportedTemperature(nowMs: number): number {
    return Math.round(this.temperature(nowMs) * 10) / 10;
  }

  fanStep(): number {
    return this.step;
  }
  isPaused(): boolean {
    return this.paused;
  }

  /** Write cur_state; the running governor overrules it at its next poll. */
  writeStep(step: number): void {
    this.step = step;
  }
  /** `mode=manual`: pause the governor, then write the step. */
  hold(step: number): void {
    this.paused = true;
    this.step = step;
  }
  /** `mode=auto`, or a daemon start: resume the governor. */
  resume(): void {
    this.paused = false;
  }

  /** Fault: temperature climbs at `ratePerMinute` °C/min whatever the fan does (blocked airflow, failed fan). */
  injectRunaway(nowMs: number, ratePerMinute: number): void {
    this.tempC += this.runawayExtra(nowMs);
    this.runawayRatePerMin = ratePerMinute;
    this.runawayStartMs = nowMs;
  }
  clearRunaway(nowMs: number): void {
    // The heat already built up stays and decays through the normal model.
    this.tempC = this.temperature(nowMs);
    this.runawayRatePerMin = 0;
  }

  private runawayExtra(nowMs: number): number {
    return this.runawayRatePerMin === 0
      ? 0
      : (this.runawayRatePerMin * Math.max(0, nowMs - this.runawayStartMs)) / 60_000;
  }

  private integrate(toMs: number, inputs: ThermalInputs): void {
    const dtS = (toMs - this.atMs) / 1000;
    if (dtS <= 0) {
      return;
    }
    const eq = equilibrium(inputs, this.hasFan ? this.step : 0);
    this.tempC = eq + (this.tempC - eq) * Math.exp(-dtS / TIME_CONSTANT_S);
    this.atMs = toMs;
  }

  private poll(t: number): void {
    if (!this.hasFan) {
      return;
    }
    const temp = this.temperature(t);
    // The release check runs on its own 15 s period whether or not anything is held.
    const releaseCheck = t >= this.nextReleaseCheckMs;
    if (releaseCheck) {
      this.nextReleaseCheckMs = t + RELEASE_CHECK_MS;
    }
    if (this.paused && releaseCheck && temp > HOTTEST_ACTIVE_TRIP_C) {
      this.paused = false;
    }
    if (this.paused) {
      return;
    }
    const target = targetStep(temp, this.governorStep);
    this.governorStep += Math.sign(target - this.governorStep);
    this.step = this.governorStep;
  }
}

function equilibrium(inputs: ThermalInputs, step: number): number {
  const rise = CONTROLLER_RISE_C + NODE_RISE_C * inputs.nodesOn + LOAD_RISE_C * inputs.load;
  return AMBIENT_C + rise / (1 + FAN_EFFECT_PER_STEP * step);
}

function targetStep(tempC: number, current: number): number {
  const crossed = (t: number) => TRIPS.filter((trip) => trip.kind === 'active' && t >= trip.temperatureC).length;
  const up = STEP_FOR_TRIPS_CROSSED[crossed(tempC)] ?? FAN_MAX_STEP;
  if (up > current) {
    return up;
  }
  const down = STEP_FOR_TRIPS_CROSSED[crossed(tempC + HYSTERESIS_C)] ?? FAN_MAX_STEP;
  return down < current ? down : current;
}
