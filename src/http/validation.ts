import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError, ErrorDetail } from 'src/common/api-error';
import { findUnsafeInput } from 'src/http/unsafe-input';

function collect(errors: ValidationError[], parent: string, out: ErrorDetail[]): void {
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    for (const [rule, message] of Object.entries(error.constraints ?? {})) {
      const issue =
        rule === 'whitelistValidation'
          ? 'is not allowed'
          : message.startsWith(`${error.property} `)
            ? message.slice(error.property.length + 1)
            : message;
      out.push({ field, issue });
    }
    if (error.children?.length) collect(error.children, field, out);
  }
}

/** Turns class-validator failures into the contract's 400 body. */
export function validationError(errors: ValidationError[]): ApiError {
  const details: ErrorDetail[] = [];
  collect(errors, '', details);
  if (details.length === 0) return new ApiError('validation_failed', 'Request is invalid');
  const first = details[0];
  return new ApiError('validation_failed', `${first.field} ${first.issue}`, details);
}

/** The DTO checks, preceded by the checks no DTO decorator can express (see findUnsafeInput). */
class ContractValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' || metadata.type === 'query' || metadata.type === 'param') {
      const problem = findUnsafeInput(value, metadata.type === 'param' ? (metadata.data ?? '') : '');
      if (problem) throw new ApiError('validation_failed', `${problem.field} ${problem.issue}`, [problem]);
    }
    return super.transform(value, metadata);
  }
}

export function createValidationPipe(): ValidationPipe {
  return new ContractValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: validationError,
  });
}
