import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiSchema, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/route-auth';
import { Health, HealthService } from './health.service';
import { PACKAGE_VERSION } from './package-version';

@ApiSchema({ name: 'ServerVersion' })
export class ServerVersionWire {
  @ApiProperty() version: string;
  @ApiProperty() Version: string;
}

@ApiTags('miscellaneous')
@Controller()
export class ServerController {
  constructor(private readonly healthService: HealthService) {}

  /** Both keys (D2): Forgejo clients read `version`, the spec names `Version`. */
  @Get('version')
  @Public()
  @ApiOkResponse({ type: ServerVersionWire })
  version(): ServerVersionWire {
    return { version: PACKAGE_VERSION, Version: PACKAGE_VERSION };
  }

  /**
   * Served outside /api/v1 (see main.ts), within two seconds whatever the database does: 200 while the database
   * answers and DATA_DIR has room, 503 (with which of them failed) when not.
   */
  @Get('api/healthz')
  @Public()
  @HttpCode(200)
  @ApiOkResponse({ description: 'the service, its database and its storage answer' })
  @ApiServiceUnavailableResponse({ description: 'the database does not answer, or the storage is full' })
  async health(@Res({ passthrough: true }) response: Response): Promise<Health> {
    const health = await this.healthService.check();
    if (health.status === 'fail') {
      response.status(503);
      response.setHeader('Retry-After', '5');
    }
    return health;
  }
}
