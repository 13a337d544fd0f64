import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public } from '../auth/route-auth';
import { BlobStorage } from '../blobs/blob-storage';
import { sendBlob } from '../blobs/blob-download';
import { AttachmentTarget, ReleaseAttachmentsService } from './release-attachments.service';
import { OutsideApi } from '../http/outside-api';

/**
 * Attachment downloads outside the API, at ROOT_URL (as Forgejo's web routes): `attachments/{uuid}` and
 * `{owner}/{repo}/releases/download/{tag}/{name}`, under the repository's read rules.
 */
@ApiExcludeController()
@Controller()
export class ReleaseDownloadsController {
  constructor(
    private readonly attachments: ReleaseAttachmentsService,
    private readonly blobs: BlobStorage,
  ) {}

  @Get('attachments/:uuid')
  @OutsideApi()
  @Public('repository')
  async byUuid(@Caller() caller: AuthContext, @Param('uuid') uuid: string, @Req() request: Request, @Res() response: Response): Promise<void> {
    await this.send(request, response, await this.attachments.downloadByUuid(caller, uuid));
  }

  @Get(':owner/:repo/releases/download/:tag/:name')
  @OutsideApi()
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.releases' })
  async byName(
    @TargetRepository() target: RepositoryTarget,
    @Param('tag') tag: string,
    @Param('name') name: string,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    await this.send(request, response, await this.attachments.downloadByName(target, tag, name));
  }

  private async send(request: Request, response: Response, target: AttachmentTarget): Promise<void> {
    if ('redirect' in target) {
      // The answer names where it leads, for whoever reads it rather than following it, and is never cached.
      response
        .status(302)
        .set({
          Location: target.redirect,
          'Cache-Control': 'no-store',
          'Referrer-Policy': 'no-referrer',
          'Content-Type': 'text/plain; charset=utf-8',
          'X-Content-Type-Options': 'nosniff',
        })
        .send(`This release asset is not stored here; it is an external link to: ${target.redirect}\n`);
      return;
    }
    await sendBlob(this.blobs, request, response, target.file);
  }
}
