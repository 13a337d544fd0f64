import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AuthContext } from '../auth/auth-context';
import { Caller, SignedIn } from '../auth/route-auth';
import { DecodedBody } from '../http/body-decoding';
import { ReadsBody } from '../http/body-guard';
import { ApiErrors } from '../common/openapi';
import type { AppConfig } from '../config/config';
import { MarkdownOption, readMarkdownOption } from './markdown.option';
import { MarkdownService } from './markdown.service';
import { RateLimit } from '../http/rate-limits';

const HTML = 'text/html; charset=utf-8';

/** Room for the largest document MARKDOWN_MAX_SIZE allows (JSON-escaped), so that its own 413 can answer. */
function markdownBodyLimit(config: Pick<AppConfig, 'maxBodyBytes' | 'markdown'>): number {
  return Math.max(config.maxBodyBytes, config.markdown.maxBytes * 2 + 1024);
}

/**
 * The fragment is sanitised; the policy is the second line should it ever be opened as a page: no script,
 * no plugin, no form, nothing loaded but images, and a sandbox.
 */
export const MARKDOWN_CSP = "default-src 'none'; img-src http: https: data:; style-src 'unsafe-inline'; sandbox";

function sendsHtml(response: Response): void {
  response.type(HTML);
  response.setHeader('Content-Security-Policy', MARKDOWN_CSP);
}

@ApiTags('miscellaneous')
@Controller()
export class MarkdownController {
  constructor(private readonly markdown: MarkdownService) {}

  /** The body is read here, not bound with @Body(): its keys match case-insensitively (docs/api-conventions.md). */
  @Post('markdown')
  @SignedIn()
  @RateLimit('markdown')
  @ReadsBody({ limit: markdownBodyLimit })
  @HttpCode(200)
  @ApiConsumes('application/json')
  @ApiBody({ type: MarkdownOption })
  @ApiProduces('text/html')
  @ApiOkResponse({ description: 'MarkdownRender is a rendered markdown document', schema: { type: 'string' } })
  @ApiErrors(400, 413, 422, 500)
  async render(@Caller() caller: AuthContext, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<string> {
    const option = readMarkdownOption(request.body as DecodedBody);
    const html = await this.markdown.render(caller, option);
    sendsHtml(response);
    return html;
  }

  /** Any content type: the raw body is the document. */
  @Post('markdown/raw')
  @SignedIn()
  @RateLimit('markdown')
  @ReadsBody({ limit: markdownBodyLimit })
  @HttpCode(200)
  @ApiConsumes('text/plain')
  @ApiBody({ description: 'Request body to render', schema: { type: 'string' } })
  @ApiProduces('text/html')
  @ApiOkResponse({ description: 'MarkdownRender is a rendered markdown document', schema: { type: 'string' } })
  @ApiErrors(413, 500)
  async renderRaw(@Caller() caller: AuthContext, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<string> {
    const html = await this.markdown.renderRaw(caller, request.rawBody ?? Buffer.alloc(0));
    sendsHtml(response);
    return html;
  }
}
