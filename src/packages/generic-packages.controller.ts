import { Controller, createParamDecorator, Delete, ExecutionContext, Get, HttpCode, Param, Put, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public } from '../auth/route-auth';
import { sendBlob } from '../blobs/blob-download';
import { BlobStorage } from '../blobs/blob-storage';
import { PackageErrorsFilter } from './package-errors.filter';
import { GENERIC, GenericFileRef, PackagesService } from './packages.service';
import { OutsideApi } from '../http/outside-api';
import { IncomingUpload, Upload } from '../http/upload-body';

/** The four path parameters that name one file of a generic package version. */
const GenericFile = createParamDecorator((_data: unknown, context: ExecutionContext): GenericFileRef => {
  const params = context.switchToHttp().getRequest<Request>().params as Record<string, string>;
  return { owner: params.owner, name: params.name, version: params.version, filename: params.filename };
});

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
    private readonly blobs: BlobStorage,
  ) {}

  @Put('api/packages/:owner/generic/:name/:version/:filename')
  @OutsideApi()
  @Public('package')
  @HttpCode(201)
  async upload(@Caller() caller: AuthContext, @GenericFile() file: GenericFileRef, @Upload() upload: IncomingUpload): Promise<void> {
    await this.packages.upload(caller, file, upload);
  }

  @Get('api/packages/:owner/generic/:name/:version/:filename')
  @OutsideApi()
  @Public('package')
  async download(@Caller() caller: AuthContext, @GenericFile() file: GenericFileRef, @Req() request: Request, @Res() response: Response): Promise<void> {
    await sendBlob(this.blobs, request, response, await this.packages.download(caller, file));
  }

  @Delete('api/packages/:owner/generic/:name/:version/:filename')
  @OutsideApi()
  @Public('package')
  @HttpCode(204)
  async deleteFile(@Caller() caller: AuthContext, @GenericFile() file: GenericFileRef): Promise<void> {
    await this.packages.deleteFile(caller, file);
  }

  @Delete('api/packages/:owner/generic/:name/:version')
  @OutsideApi()
  @Public('package')
  @HttpCode(204)
  async deleteVersion(
    @Caller() caller: AuthContext,
    @Param('owner') owner: string,
    @Param('name') name: string,
    @Param('version') version: string,
  ): Promise<void> {
    await this.packages.deleteVersion(caller, owner, GENERIC, name, version);
  }
}
