import { Controller, Delete, Get, HttpCode, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedWires, PageQuery, Paging } from '../common/paging';
import { PackageFileWire, PackageWire } from './package.wire';
import { PACKAGE_TYPES, PackagesService } from './packages.service';

/** `/packages/{owner}…`: the API views of an owner's packages (Forgejo's API v1). */
@ApiTags('package')
@Controller()
export class PackagesController {
  constructor(private readonly packages: PackagesService) {}

  @Get('packages/:owner')
  @Public('package')
  @ApiOperation({ operationId: 'listPackages', summary: 'Gets all packages of an owner' })
  @ApiPaging()
  @ApiQuery({ name: 'type', required: false, enum: PACKAGE_TYPES, description: 'package type filter' })
  @ApiQuery({ name: 'q', required: false, type: String, description: 'name filter' })
  @ApiOkResponse({ type: [PackageWire], description: 'PackageList' })
  @ApiErrors(404)
  async list(
    @Caller() caller: AuthContext,
    @Param('owner') owner: string,
    @Query('type') type: unknown,
    @Query('q') q: unknown,
    @Paging() page: PageQuery,
  ): Promise<PagedList<PackageWire>> {
    const search = { type: typeof type === 'string' && type !== '' ? type : undefined, query: typeof q === 'string' && q !== '' ? q : undefined };
    return pagedWires(await this.packages.list(caller, owner, search, page), page);
  }

  @Get('packages/:owner/:type/:name/:version')
  @Public('package')
  @ApiOperation({ operationId: 'getPackage', summary: 'Gets a package' })
  @ApiOkResponse({ type: PackageWire })
  @ApiErrors(404)
  get(
    @Caller() caller: AuthContext,
    @Param('owner') owner: string,
    @Param('type') type: string,
    @Param('name') name: string,
    @Param('version') version: string,
  ): Promise<PackageWire> {
    return this.packages.get(caller, owner, type, name, version);
  }

  @Delete('packages/:owner/:type/:name/:version')
  @Public('package')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deletePackage', summary: 'Delete a package' })
  @ApiEmpty()
  @ApiErrors(404)
  async delete(
    @Caller() caller: AuthContext,
    @Param('owner') owner: string,
    @Param('type') type: string,
    @Param('name') name: string,
    @Param('version') version: string,
  ): Promise<void> {
    await this.packages.deleteVersion(caller, owner, type, name, version);
  }

  @Get('packages/:owner/:type/:name/:version/files')
  @Public('package')
  @ApiOperation({ operationId: 'listPackageFiles', summary: 'Gets all files of a package' })
  @ApiOkResponse({ type: [PackageFileWire], description: 'PackageFileList' })
  @ApiErrors(404)
  files(
    @Caller() caller: AuthContext,
    @Param('owner') owner: string,
    @Param('type') type: string,
    @Param('name') name: string,
    @Param('version') version: string,
  ): Promise<PackageFileWire[]> {
    return this.packages.files(caller, owner, type, name, version);
  }
}
