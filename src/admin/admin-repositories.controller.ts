import { Controller, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, SiteAdmin } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiErrors } from '../common/openapi';
import { CreateRepositoryOption } from '../repos/create-repository.option';
import { RepositoryCreation } from '../repos/repository-creation.service';
import { RepositoryWire } from '../repos/repository.wire';

@ApiTags('admin')
@Controller()
export class AdminRepositoriesController {
  constructor(private readonly creation: RepositoryCreation) {}

  @Post('admin/users/:username/repos')
  @SiteAdmin()
  @ApiOperation({ summary: 'Create a repository on behalf of a user' })
  @ApiCreatedResponse({ type: RepositoryWire })
  @ApiErrors(400, 404, 409, 413, 422)
  create(@Caller() caller: AuthContext, @Param('username') username: string, @Body() option: CreateRepositoryOption): Promise<RepositoryWire> {
    return this.creation.createForOwnerByAdmin(caller, username, option);
  }
}
