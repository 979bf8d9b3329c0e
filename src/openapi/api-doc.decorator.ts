import { SetMetadata } from '@nestjs/common';
import type { z } from 'zod';

export const API_DOC = 'tpfleet:api-doc';

export interface ApiDocOptions {
  summary: string;
  description?: string;
  tags?: string[];
  /** Schema of the success body (JSON). */
  response?: z.ZodType;
  /** Success status (default 200, or 201/202/204 when the handler says so). */
  status?: number;
  /** The success body is text (e.g. Prometheus exposition, HTML). */
  responseText?: boolean;
  /** Its media type when not text/plain (e.g. text/event-stream). */
  textType?: string;
  /** The request body is raw bytes of this media type (e.g. application/octet-stream), described so. */
  binaryBody?: {
    mediaType: string;
    description: string;
    /** The setting that bounds the body's length (documented as `x-max-bytes-setting`; refused with 413 above it). */
    maxBytesSetting: string;
  };
  /** Not an API operation (the console's pages and files): left out of the document. */
  hidden?: boolean;
}

/**
 * Documents a route for /api/openapi.json. Request schemas are not repeated here: the OpenAPI builder reads them
 * from the `@Body({ schema })`, `@Query({ schema })` and `@Param({ schema })` decorators that validate them.
 */
export const ApiDoc = (options: ApiDocOptions) => SetMetadata(API_DOC, options);
