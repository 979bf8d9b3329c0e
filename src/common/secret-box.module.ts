import { Module } from '@nestjs/common';
import { SecretBoxService } from './secret-box.service.js';

/** Encryption at rest of board credentials and receiver secrets (boards and alerts use it). */
@Module({ providers: [SecretBoxService], exports: [SecretBoxService] })
export class SecretBoxModule {}
