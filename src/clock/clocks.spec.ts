import { describe, expect, it } from '@jest/globals';
import { Global, Injectable, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { Interval, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { APP_CONFIG, ConfigService, type AppConfig, type Role } from '../config/config.service.js';
import { ClockModule } from './clock.module.js';
import { Clocks } from './clocks.js';

@Injectable()
class FixedClock {
  @Interval('fixed', 60_000)
  async tick(): Promise<void> {}
}

@Injectable()
class ConfiguredClock implements OnApplicationBootstrap {
  constructor(private readonly clocks: Clocks) {}
  onApplicationBootstrap(): void {
    this.clocks.every('configured', 60_000, async () => {});
  }
}

async function boot(role: Role) {
  @Global()
  @Module({
    providers: [{ provide: APP_CONFIG, useValue: { role } as AppConfig }, ConfigService],
    exports: [ConfigService],
  })
  class TestConfigModule {}
  const moduleRef = await Test.createTestingModule({
    imports: [TestConfigModule, ClockModule],
    providers: [FixedClock, ConfiguredClock],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('clocks: one role rule', () => {
  it.each(['worker', 'all'] as const)('role %s runs the decorated and the configured clocks', async (role) => {
    const app = await boot(role);
    const registry = app.get(SchedulerRegistry);
    expect(registry.getIntervals().sort()).toEqual(['configured', 'fixed']);
    await app.close();
    expect(registry.getIntervals()).toEqual([]);
  });

  it('role api runs no clock', async () => {
    const app = await boot('api');
    expect(app.get(SchedulerRegistry).getIntervals()).toEqual([]);
    await app.close();
  });

  it('a process housekeeping clock (everyRole) runs in the api role too, and stops with the others', async () => {
    const app = await boot('api');
    const registry = app.get(SchedulerRegistry);
    app.get(Clocks).every('housekeeping', 60_000, async () => {}, { everyRole: true });
    expect(registry.getIntervals()).toEqual(['housekeeping']);
    await app.close();
    expect(registry.getIntervals()).toEqual([]);
  });

  it('every() replaces a clock of the same name and keeps ticking after a failed tick', async () => {
    const app = await boot('all');
    try {
      let ticks = 0;
      app.get(Clocks).every('configured', 5, async () => {
        ticks += 1;
        throw new Error('tick failed');
      });
      expect(app.get(SchedulerRegistry).getIntervals().sort()).toEqual(['configured', 'fixed']);
      // A second tick after a failed first one (however long a loaded machine takes to run them).
      while (ticks < 2) {
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      await app.close();
    }
  });

  it('a stop waits for the ticks already running, configured and tracked ones (they still use the queues)', async () => {
    const app = await boot('all');
    const clocks = app.get(Clocks);
    const finished: string[] = [];
    let started = 0;
    const slowTick = (name: string) => async () => {
      started += 1;
      await new Promise((r) => setTimeout(r, 300));
      finished.push(name);
    };
    clocks.every('configured', 5, slowTick('configured'));
    void clocks.track(slowTick('tracked'));
    while (started < 2) {
      await new Promise((r) => setTimeout(r, 5));
    }
    await app.close();
    expect(finished).toEqual(expect.arrayContaining(['configured', 'tracked']));
  });
});
