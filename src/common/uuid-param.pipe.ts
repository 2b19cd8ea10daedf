import { Injectable, PipeTransform } from '@nestjs/common';
import { ApiError } from 'src/common/api-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** Path ids: a malformed one is 400, and ids are compared lower-case. */
@Injectable()
export class UuidParamPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!isUuid(value)) throw ApiError.validation('id', 'must be a UUID');
    return value.toLowerCase();
  }
}
