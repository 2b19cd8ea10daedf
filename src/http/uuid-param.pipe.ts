import { Injectable, PipeTransform } from '@nestjs/common';
import { ApiError } from 'src/common/api-error';
import { isUuid } from 'src/common/uuid';

export const invalidId = (): ApiError => ApiError.validation('id', 'must be a UUID');

/** Path ids: a malformed one is 400, and ids are compared lower-case. */
@Injectable()
export class UuidParamPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!isUuid(value)) throw invalidId();
    return value.toLowerCase();
  }
}
