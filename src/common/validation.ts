import { ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError, ErrorDetail } from 'src/common/api-error';

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

export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: validationError,
  });
}
