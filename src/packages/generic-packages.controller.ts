import { Controller, Delete, Get, HttpCode, Param, Put, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public } from '../auth/route-auth';
import { sendBlob } from '../blobs/blob-download';
import { BlobStore } from '../blobs/blob-store';
import { PackageErrorsFilter } from './package-errors.filter';
import { GENERIC, PackagesService } from './packages.service';

/**
 * The generic package registry at `{ROOT_URL}api/packages/{owner}/generic/…` (outside /api/v1, as Forgejo):
 * token or Basic auth (a token as the password works), scopes `read:package` / `write:package`. Sign-in is
 * checked by the service, after the owner is known, so that an anonymous caller is challenged (401).
 */
@ApiExcludeController()
@UseFilters(PackageErrorsFilter)
@Controller()
export class GenericPackagesController {
  constructor(
    private readonly packages: PackagesService,
    private readonly blobs: BlobStore,
  ) {}

  @Put('api/packages/:owner/generic/:name/:version/:filename')
  @Public('package')
  @HttpCode(201)
  async upload(
    @Caller() caller: AuthContext,
    @Param('owner') owner: string,
    @Param('name') name: string,
    @Param('version') version: string,
    @Param('filename') filename: string,
    @Req() request: Request,
  ): Promise<void> {
    await this.packages.upload(caller, { owner, name, version, filename }, request);
  }

  @Get('api/packages/:owner/generic/:name/:version/:filename')
  @Public('package')
  async download(
    @Caller() caller: AuthContext,
    @Param('owner') owner: string,
    @Param('name') name: string,
    @Param('version') version: string,
    @Param('filename') filename: string,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    await sendBlob(this.blobs, request, response, await this.packages.download(caller, { owner, name, version, filename }));
  }

  @Delete('api/packages/:owner/generic/:name/:version/:filename')
  @Public('package')
  @HttpCode(204)
  async deleteFile(
    @Caller() caller: AuthContext,
    @Param('owner') owner: string,
    @Param('name') name: string,
    @Param('version') version: string,
    @Param('filename') filename: string,
  ): Promise<void> {
    await this.packages.deleteFile(caller, { owner, name, version, filename });
  }

  @Delete('api/packages/:owner/generic/:name/:version')
  @Public('package')
  @HttpCode(204)
  async deleteVersion(@Caller() caller: AuthContext, @Param('owner') owner: string, @Param('name') name: string, @Param('version') version: string): Promise<void> {
    await this.packages.deleteVersion(caller, owner, GENERIC, name, version);
  }
}
