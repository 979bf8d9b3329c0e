import { type ArgumentMetadata, StandardSchemaValidationPipe } from '@nestjs/common';
import { issuesToFieldIssues, ValidationProblem } from './problem.js';
import { RequestContext } from './request-context.js';

/**
 * The global pipe: zod schemas on @Body/@Query/@Param, failures as a 400 problem listing every field. A body that
 * passed is kept in the request's context: the audit log records the request as validated (secrets redacted), never
 * the raw bytes a client sent (audit.interceptor.ts).
 */
class RecordingValidationPipe extends StandardSchemaValidationPipe {
  override async transform<T = unknown>(value: T, metadata: ArgumentMetadata): Promise<T> {
    const result = await super.transform(value, metadata);
    const context = RequestContext.current();
    // Only a body a schema checked: an unchecked one is exactly the raw input the audit must not keep.
    if (metadata.type === 'body' && metadata.schema !== undefined && context) {
      context.validatedBody = result;
    }
    return result;
  }
}

export function createValidationPipe(): StandardSchemaValidationPipe {
  return new RecordingValidationPipe({
    exceptionFactory: (issues) => new ValidationProblem(issuesToFieldIssues(issues)),
  });
}
