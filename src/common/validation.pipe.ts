import { StandardSchemaValidationPipe } from '@nestjs/common';
import { issuesToFieldIssues, ValidationProblem } from './problem.js';

/** The global pipe: zod schemas on @Body/@Query/@Param, failures as a 400 problem listing every field. */
export function createValidationPipe(): StandardSchemaValidationPipe {
  return new StandardSchemaValidationPipe({
    exceptionFactory: (issues) => new ValidationProblem(issuesToFieldIssues(issues)),
  });
}
