import { Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from './repository-assignment';
import type { AuthContext } from '../auth/auth-context';
import { AuthenticatedLater, Caller, Public, requireSignedIn, SignedIn } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { CreateRepositoryOption } from './create-repository.option';
import { Body, DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { bindOption } from '../http/body-binding';
import { EditRepositoryOption } from './edit-repository.option';
import { RepositoriesService } from './repositories.service';
import { RepositoryCreation } from './repository-creation.service';
import { RepositorySettings } from './repository-settings.service';
import { RepositoryWire } from './repository.wire';

@ApiTags('repository')
@Controller()
export class RepositoriesController {
  constructor(
    private readonly repositories: RepositoriesService,
    private readonly creation: RepositoryCreation,
    private readonly settings: RepositorySettings,
  ) {}

  @Post('org/:org/repos')
  @SignedIn('organization', 'repository')
  @ApiOperation({ summary: 'Create a repository in an organization', deprecated: true })
  @ApiCreatedResponse({ type: RepositoryWire })
  @ApiErrors(400, 403, 404, 409, 413, 422, 500)
  createInOrgDeprecated(@Caller() caller: AuthContext, @Param('org') org: string, @Body() option: CreateRepositoryOption): Promise<RepositoryWire> {
    return this.creation.createInOrganizationDeprecated(caller, org, option);
  }

  @Post('orgs/:org/repos')
  @Public('organization')
  @ReadsBody({ deferred: true })
  @ApiOperation({ summary: 'Create a repository in an organization' })
  @ApiBody({ type: CreateRepositoryOption })
  @ApiCreatedResponse({ type: RepositoryWire })
  @ApiErrors(400, 403, 404, 409, 413, 422, 500)
  async createInOrg(@Caller() caller: AuthContext, @Param('org') orgName: string, @DeferredBody() body: LazyBody): Promise<RepositoryWire> {
    // As Forgejo: unknown org (404) and public-only (403) come before sign-in (401) and the body.
    const org = await this.creation.organizationForCreation(caller, orgName);
    requireSignedIn(caller);
    const option = await bindOption(body, CreateRepositoryOption);
    return this.creation.createInOrganization(caller, org, option);
  }

  @Post('user/repos')
  @SignedIn('user', 'repository')
  @ApiOperation({ summary: 'Create a repository' })
  @ApiCreatedResponse({ type: RepositoryWire })
  @ApiErrors(400, 409, 413, 422, 500)
  createForCaller(@Caller() caller: AuthContext, @Body() option: CreateRepositoryOption): Promise<RepositoryWire> {
    return this.creation.createForCaller(caller, option);
  }

  @Get('repos/:owner/:repo')
  @Public('repository')
  @RepositoryRoute()
  @ApiOperation({ summary: 'Get a repository' })
  @ApiOkResponse({ type: RepositoryWire })
  @ApiErrors(404)
  get(@TargetRepository() target: RepositoryTarget): Promise<RepositoryWire> {
    return this.repositories.get(target);
  }

  @Get('repositories/:id')
  @SignedIn('repository')
  @ApiOperation({ summary: 'Get a repository by id' })
  @ApiOkResponse({ type: RepositoryWire })
  @ApiErrors(404)
  getById(@Caller() caller: AuthContext, @Param('id') id: string): Promise<RepositoryWire> {
    return this.repositories.getById(caller, id);
  }

  @Patch('repos/:owner/:repo')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ summary: "Edit a repository's properties. Only fields that are set will be changed." })
  @ApiBody({ type: EditRepositoryOption })
  @ApiOkResponse({ type: RepositoryWire })
  @ApiErrors(400, 403, 404, 409, 422)
  async edit(@TargetRepository() target: RepositoryTarget, @DeferredBody() body: LazyBody): Promise<RepositoryWire> {
    return this.settings.edit(target, await bindOption(body, EditRepositoryOption));
  }

  @Delete('repos/:owner/:repo')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'owner' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a repository' })
  @ApiEmpty()
  @ApiErrors(403, 404)
  async delete(@TargetRepository() target: RepositoryTarget): Promise<void> {
    await this.repositories.delete(target);
  }
}
