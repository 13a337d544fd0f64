import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { LanguagesService } from './languages.service';

@ApiTags('repository')
@Controller()
export class LanguagesController {
  constructor(private readonly languages: LanguagesService) {}

  @Get('repos/:owner/:repo/languages')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ summary: 'Get languages and number of bytes of code written' })
  @ApiOkResponse({ schema: { type: 'object', additionalProperties: { type: 'integer', format: 'int64' } }, description: 'LanguageStatistics' })
  @ApiErrors(404)
  get(@TargetRepository() target: RepositoryTarget): Promise<Record<string, number>> {
    return this.languages.languages(target);
  }
}
