import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { LanguagesService } from './languages.service';

@ApiTags('repository')
@Controller()
export class LanguagesController {
  constructor(private readonly languages: LanguagesService) {}

  @Get('repos/:owner/:repo/languages')
  @Public('repository')
  @ApiOperation({ summary: 'Get languages and number of bytes of code written' })
  @ApiOkResponse({ schema: { type: 'object', additionalProperties: { type: 'integer', format: 'int64' } }, description: 'LanguageStatistics' })
  @ApiErrors(404)
  get(@Caller() caller: AuthContext, @Param('owner') owner: string, @Param('repo') repo: string): Promise<Record<string, number>> {
    return this.languages.languages(caller, owner, repo);
  }
}
