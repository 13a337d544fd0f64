import { Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { RateLimit } from '../http/rate-limits';
import { parseKeyId } from '../keys/key-owners';
import { CreateKeyOption } from '../keys/ssh/create-key.option';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { toDeployKeyWire } from './deploy-key.mapper';
import { DeployKeyWire } from './deploy-key.wire';
import { DeployKeysService } from './deploy-keys.service';
import { SiteUrls } from '../common/site-urls';

@ApiTags('repository')
@Controller()
export class DeployKeysController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly keys: DeployKeysService,
  ) {}

  @Get('repos/:owner/:repo/keys')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @ApiOperation({ operationId: 'repoListKeys', summary: "List a repository's keys" })
  @ApiQuery({ name: 'key_id', required: false, type: Number, description: 'the key_id to search for' })
  @ApiQuery({ name: 'fingerprint', required: false, type: String, description: 'fingerprint of the key' })
  @ApiPaging()
  @ApiOkResponse({ type: [DeployKeyWire], description: 'DeployKeyList' })
  @ApiErrors(404)
  async list(
    @TargetRepository() target: RepositoryTarget,
    @Paging() page: PageQuery,
    @Query('key_id') keyId?: unknown,
    @Query('fingerprint') fingerprint?: unknown,
  ): Promise<PagedList<DeployKeyWire>> {
    const found = await this.keys.list(target, page, { materialId: positiveInteger(keyId), fingerprint: queryString(fingerprint) });
    return pagedList(found, page, (key) => toDeployKeyWire(key, target.viewer, this.siteUrls, true));
  }

  @Post('repos/:owner/:repo/keys')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @RateLimit('keyUpload')
  @ApiOperation({ operationId: 'repoCreateKey', summary: 'Add a key to a repository' })
  @ApiCreatedResponse({ type: DeployKeyWire, description: 'DeployKey' })
  @ApiErrors(404, 422)
  async create(@TargetRepository() target: RepositoryTarget, @Body() option: CreateKeyOption): Promise<DeployKeyWire> {
    return toDeployKeyWire(await this.keys.create(target, option), target.viewer, this.siteUrls, false);
  }

  @Get('repos/:owner/:repo/keys/:id')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @ApiOperation({ operationId: 'repoGetKey', summary: "Get a repository's key by id" })
  @ApiOkResponse({ type: DeployKeyWire, description: 'DeployKey' })
  @ApiErrors(404)
  async get(@TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<DeployKeyWire> {
    return toDeployKeyWire(await this.keys.get(target, parseKeyId(id)), target.viewer, this.siteUrls, true);
  }

  @Delete('repos/:owner/:repo/keys/:id')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @HttpCode(204)
  @ApiOperation({ operationId: 'repoDeleteKey', summary: 'Delete a key from a repository' })
  @ApiEmpty()
  @ApiErrors(403, 404)
  async delete(@TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<void> {
    await this.keys.delete(target, parseKeyId(id));
  }
}

/** A repeated query key gives an array: the first value counts, as in Forgejo; an empty one is absent. */
function queryString(value: unknown): string | undefined {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}

/** `key_id`: a positive integer filters; 0, absent or unreadable means no filter, as Forgejo's FormInt64. */
function positiveInteger(value: unknown): number | undefined {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  if (typeof first !== 'string' || !/^\d{1,16}$/.test(first)) return undefined;
  const parsed = Number(first);
  return Number.isSafeInteger(parsed) && parsed > 0 ? parsed : undefined;
}
