// The rollout shapes, as the fleet's OpenAPI document describes them (libs/fleet-api).
import type { Schemas } from './client';

export type Rollout = Schemas['FirmwareRollout'];
export type RolloutWave = Schemas['FirmwareRolloutWave'];
export type RolloutInstall = Schemas['FirmwareInstall'];
export type RolloutDetail = Schemas['FirmwareRolloutDetail'];
export type RolloutPreview = Schemas['FirmwareRolloutPlan'];
