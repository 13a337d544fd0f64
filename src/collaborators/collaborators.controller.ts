import { Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { accessModeName } from '../access/access-mode';
import { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { toUserWire } from '../users/user.mapper';
import { UserWire } from '../users/user.wire';
import { AddCollaboratorOption, RepoCollaboratorPermissionWire } from './collaborator.wire';
import { CollaboratorsService } from './collaborators.service';
import { SiteUrls } from '../common/site-urls';

@ApiTags('repository')
@Controller()
export class CollaboratorsController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly collaborators: CollaboratorsService,
  ) {}

  @Get('repos/:owner/:repo/collaborators')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'signed-in' })
  @ApiPaging()
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  async list(@TargetRepository() target: RepositoryTarget, @Paging() page: PageQuery): Promise<PagedList<UserWire>> {
    return pagedList(await this.collaborators.list(target, page), page, (user) => toUserWire(user, target.viewer, this.siteUrls));
  }

  @Get('repos/:owner/:repo/collaborators/:collaborator')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'signed-in' })
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(422)
  async check(@TargetRepository() target: RepositoryTarget, @Param('collaborator') collaborator: string): Promise<void> {
    await this.collaborators.assertCollaborator(target, collaborator);
  }

  @Put('repos/:owner/:repo/collaborators/:collaborator')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(403, 422)
  async put(@TargetRepository() target: RepositoryTarget, @Param('collaborator') collaborator: string, @Body() option: AddCollaboratorOption): Promise<void> {
    await this.collaborators.put(target, collaborator, option);
  }

  @Delete('repos/:owner/:repo/collaborators/:collaborator')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(403, 422)
  async remove(@TargetRepository() target: RepositoryTarget, @Param('collaborator') collaborator: string): Promise<void> {
    await this.collaborators.remove(target, collaborator);
  }

  @Get('repos/:owner/:repo/collaborators/:collaborator/permission')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'signed-in' })
  @ApiOkResponse({ type: RepoCollaboratorPermissionWire })
  @ApiErrors(401, 403)
  async permission(@TargetRepository() target: RepositoryTarget, @Param('collaborator') collaborator: string): Promise<RepoCollaboratorPermissionWire> {
    const { mode, user } = await this.collaborators.permissionOf(target, collaborator);
    return { permission: accessModeName(mode), role_name: accessModeName(mode), user: toUserWire(user, target.viewer, this.siteUrls) };
  }
}
