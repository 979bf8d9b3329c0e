import { Injectable } from '@nestjs/common';
import type {
  FirmwareSourcesDocument,
  FirmwareSourcesPush,
  FirmwareSourcesPushResult,
} from '../generated/prisma/client.js';
import { PrismaService } from '../prisma/prisma.service.js';

/** The board a push reaches: a job (`null`), or a refusal decided when the push was planned. */
export interface PlannedPushResult {
  boardId: string;
  skipped: string | null;
}

/** The fleet's firmware sources document (one row, id 1) and its pushes with one result per board. */
@Injectable()
export class FirmwareSourcesRepository {
  constructor(private readonly prisma: PrismaService) {}

  findDocument(): Promise<FirmwareSourcesDocument | null> {
    return this.prisma.firmwareSourcesDocument.findUnique({ where: { id: 1 } });
  }

  /** Writes the document; each write after the first bumps its revision. */
  async saveDocument(document: object, updatedBy: string): Promise<void> {
    await this.prisma.firmwareSourcesDocument.upsert({
      where: { id: 1 },
      create: { id: 1, document, updatedBy },
      update: { document, updatedBy, revision: { increment: 1 } },
    });
  }

  /** A push of one revision with its per-board results: pending, or skipped (finished) with the reason. */
  createPush(
    push: { revision: number; document: object; selector: string; actor: string },
    boards: PlannedPushResult[],
  ): Promise<FirmwareSourcesPush> {
    return this.prisma.firmwareSourcesPush.create({
      data: {
        ...push,
        results: {
          create: boards.map((b) =>
            b.skipped
              ? { boardId: b.boardId, status: 'skipped', error: b.skipped, finishedAt: new Date() }
              : { boardId: b.boardId },
          ),
        },
      },
    });
  }

  findPush(id: string): Promise<(FirmwareSourcesPush & { results: FirmwareSourcesPushResult[] }) | null> {
    return this.prisma.firmwareSourcesPush.findUnique({ where: { id }, include: { results: true } });
  }

  findResult(key: {
    pushId: string;
    boardId: string;
  }): Promise<(FirmwareSourcesPushResult & { push: FirmwareSourcesPush }) | null> {
    return this.prisma.firmwareSourcesPushResult.findUnique({
      where: { pushId_boardId: key },
      include: { push: true },
    });
  }

  async finishResult(key: { pushId: string; boardId: string }, status: string, error: string | null): Promise<void> {
    await this.prisma.firmwareSourcesPushResult.update({
      where: { pushId_boardId: key },
      data: { status, error, finishedAt: new Date() },
    });
  }
}
