import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiSchema, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/route-auth';
import { Health, HealthService } from './health.service';
import { SERVER_VERSION } from './package-version';
import { Readiness } from './readiness';
import { OutsideApi } from '../http/outside-api';

@ApiSchema({ name: 'ServerVersion' })
export class ServerVersionWire {
  @ApiProperty() version: string;
  @ApiProperty() Version: string;
}

@ApiTags('miscellaneous')
@Controller()
export class ServerController {
  constructor(
    private readonly healthService: HealthService,
    private readonly readiness: Readiness,
  ) {}

  /**
   * Both keys: Forgejo clients read `version`, the spec names `Version`. The Forgejo release whose API Anvil
   * answers, with Anvil's own version in the build part (package-version.ts).
   */
  @Get('version')
  @Public()
  @ApiOkResponse({ type: ServerVersionWire })
  version(): ServerVersionWire {
    return { version: SERVER_VERSION, Version: SERVER_VERSION };
  }

  /**
   * Served outside /api/v1 (see main.ts), within two seconds whatever the database does: 200 while the database
   * answers and DATA_DIR has room, 503 (with which of them failed) when not.
   */
  @Get('api/healthz')
  @OutsideApi()
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

  /**
   * For a gateway's health check (outside /api/v1): 503 from the moment shutdown begins (SIGTERM), while the
   * instance still serves what reaches it, so the gateway drains it before its listener closes; 503 as well
   * while its database does not answer; 200 otherwise.
   */
  @Get('api/healthz/ready')
  @OutsideApi()
  @Public()
  @HttpCode(200)
  @ApiOkResponse({ description: 'the instance takes new requests' })
  @ApiServiceUnavailableResponse({ description: 'the instance is shutting down, or its database does not answer' })
  async ready(@Res({ passthrough: true }) response: Response): Promise<Health | { status: string; database: string }> {
    if (this.readiness.draining) {
      response.status(503);
      return { status: 'draining', database: 'unchecked' };
    }
    return this.health(response);
  }
}
