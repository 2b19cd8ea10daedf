import type { Provider } from '@nestjs/common';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { CursorCodec } from 'src/common/cursor';

export const CURSOR_CODEC = Symbol('CURSOR_CODEC');

export const cursorCodecProvider: Provider = {
  provide: CURSOR_CODEC,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig) => new CursorCodec(config.secretEncryptionKeys),
};
