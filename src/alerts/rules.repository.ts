import { Injectable } from '@nestjs/common';
import { Prisma, type AlertRule } from '../generated/prisma/client.js';
import { PrismaService } from '../prisma/prisma.service.js';

/** Row types other files may name; the client itself stays here. */
export type { AlertRule } from '../generated/prisma/client.js';

export type RuleRow = AlertRule;
export type RuleData = Omit<AlertRule, 'id' | 'createdAt' | 'updatedAt'>;

export class RuleConflictError extends Error {}

@Injectable()
export class RulesRepository {
  constructor(private readonly prisma: PrismaService) {}

  enabled(): Promise<AlertRule[]> {
    return this.prisma.alertRule.findMany({ where: { enabled: true }, orderBy: { name: 'asc' } });
  }

  all(): Promise<AlertRule[]> {
    return this.prisma.alertRule.findMany({ orderBy: { name: 'asc' } });
  }

  find(id: string): Promise<AlertRule | null> {
    return this.prisma.alertRule.findUnique({ where: { id } });
  }

  async create(data: RuleData): Promise<AlertRule> {
    try {
      return await this.prisma.alertRule.create({ data });
    } catch (err) {
      throw conflict(err);
    }
  }

  /** Inserts the rules whose names do not exist yet (the shipped defaults; never overwrites an edited one). */
  async ensure(rules: RuleData[]): Promise<number> {
    const { count } = await this.prisma.alertRule.createMany({ data: rules, skipDuplicates: true });
    return count;
  }

  async update(id: string, data: Partial<RuleData>): Promise<AlertRule | null> {
    try {
      return await this.prisma.alertRule.update({ where: { id }, data });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2025') {
        return null;
      }
      throw conflict(err);
    }
  }

  async delete(id: string): Promise<boolean> {
    const { count } = await this.prisma.alertRule.deleteMany({ where: { id } });
    return count === 1;
  }
}

function conflict(err: unknown): unknown {
  if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
    return new RuleConflictError('a rule with this name exists');
  }
  return err;
}
